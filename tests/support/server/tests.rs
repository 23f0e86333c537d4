//! Unit tests for the fixture server, driven by plain tokio TCP clients.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::*;

/// A parsed response as a raw client sees it.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header_name, _)| header_name.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(header_name, _)| header_name.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
            .collect()
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("body is json")
    }
}

/// Sends raw bytes, reads until the server closes, parses the one response.
async fn send_raw(server: &FixtureServer, request: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port()))
        .await
        .expect("connect");
    stream.write_all(request).await.expect("write");
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.expect("read");
    parse_reply(&bytes)
}

fn parse_reply(bytes: &[u8]) -> Reply {
    let head_end = find_subslice(bytes, b"\r\n\r\n").expect("complete head");
    let head = std::str::from_utf8(&bytes[..head_end]).expect("utf-8 head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("status line");
    let status = status_line
        .split(' ')
        .nth(1)
        .expect("status")
        .parse()
        .expect("numeric");
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(':').expect("header");
            (name.to_string(), value.trim().to_string())
        })
        .collect();
    Reply {
        status,
        headers,
        body: bytes[head_end + 4..].to_vec(),
    }
}

async fn get(server: &FixtureServer, target: &str) -> Reply {
    let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    send_raw(server, request.as_bytes()).await
}

/// Polls every 20 ms until `condition` holds or `timeout` passes.
async fn eventually(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn urls_use_the_ephemeral_port() {
    let server = FixtureServer::start().await.unwrap();
    let port = server.port();
    assert_ne!(port, 0);
    assert_eq!(server.origin(), format!("http://127.0.0.1:{port}"));
    assert_eq!(
        server.url("login.html"),
        format!("http://127.0.0.1:{port}/login.html")
    );
    assert_eq!(
        server.url("/a/b.html"),
        format!("http://127.0.0.1:{port}/a/b.html")
    );
    assert_eq!(
        server.localhost_url("x.html"),
        format!("http://localhost:{port}/x.html")
    );
    let second = FixtureServer::start().await.unwrap();
    assert_ne!(second.origin(), server.origin());
}

#[tokio::test]
async fn serves_fixture_pages_with_content_types() {
    let server = FixtureServer::start().await.unwrap();
    let reply = get(&server, "/nav.html").await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("Content-Type"),
        Some("text/html; charset=utf-8")
    );
    let expected = std::fs::read(pages_dir().join("nav.html")).unwrap();
    assert_eq!(reply.body, expected);
    assert_eq!(
        reply.header("Content-Length"),
        Some(expected.len().to_string().as_str())
    );
    for (name, expected_type) in [
        ("a.html", "text/html; charset=utf-8"),
        ("a.js", "text/javascript; charset=utf-8"),
        ("a.css", "text/css; charset=utf-8"),
        ("a.png", "image/png"),
        ("a.json", "application/json"),
        ("a.txt", "text/plain; charset=utf-8"),
        ("a.bin", "application/octet-stream"),
    ] {
        assert_eq!(content_type(Path::new(name)), expected_type, "{name}");
    }
}

#[tokio::test]
async fn serves_other_file_types_from_another_root() {
    let dir = std::env::temp_dir().join(format!("chromate-fixture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data.json"), b"{\"a\":1}").unwrap();
    std::fs::write(dir.join("app.js"), b"1").unwrap();
    let server = FixtureServer::start_serving(&dir).await.unwrap();
    let json = get(&server, "/data.json").await;
    assert_eq!(json.header("Content-Type"), Some("application/json"));
    assert_eq!(json.json(), serde_json::json!({"a": 1}));
    let script = get(&server, "/app.js").await;
    assert_eq!(
        script.header("Content-Type"),
        Some("text/javascript; charset=utf-8")
    );
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn head_sends_headers_without_body() {
    let server = FixtureServer::start().await.unwrap();
    let reply = send_raw(
        &server,
        b"HEAD /nav.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(reply.status, 200);
    let expected = std::fs::metadata(pages_dir().join("nav.html"))
        .unwrap()
        .len();
    assert_eq!(
        reply.header("Content-Length"),
        Some(expected.to_string().as_str())
    );
    assert!(reply.body.is_empty());
}

#[tokio::test]
async fn missing_files_and_directories_are_404() {
    let server = FixtureServer::start().await.unwrap();
    assert_eq!(get(&server, "/no-such-page.html").await.status, 404);
    assert_eq!(get(&server, "/no-such-dir/").await.status, 404);
    assert_eq!(
        get(&server, "/").await.status,
        404,
        "no index.html, no listing"
    );
}

#[tokio::test]
async fn directory_traversal_is_rejected() {
    let server = FixtureServer::start().await.unwrap();
    for target in [
        "/../Cargo.toml",
        "/../../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/%2E%2E%2FCargo.toml",
        "/..%2fCargo.toml",
        "/x/../../Cargo.toml",
        "/..\\Cargo.toml",
        "/./nav.html",
    ] {
        let reply = get(&server, target).await;
        assert_eq!(reply.status, 403, "{target}");
    }
    // Extra slashes stay inside the root: these look for `<root>/etc/passwd`.
    for target in ["//etc/passwd", "/%2Fetc%2Fpasswd"] {
        let reply = get(&server, target).await;
        assert_eq!(reply.status, 404, "{target}");
        assert!(!reply.text().contains("root:"), "{target}");
    }
}

#[tokio::test]
async fn malformed_requests_get_400() {
    let server = FixtureServer::start().await.unwrap();
    for request in [
        &b"garbage\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"GET /nav.html\r\n\r\n",
        b"GET /nav.html HTTP/9.9\r\n\r\n",
        b"GET nav.html HTTP/1.1\r\n\r\n",
        b"GET /nav.html HTTP/1.1 extra\r\n\r\n",
        b"G(T /nav.html HTTP/1.1\r\n\r\n",
        b"GET /nav.html HTTP/1.1\r\nno colon here\r\n\r\n",
        b"GET /nav.html HTTP/1.1\r\nBad Name: x\r\n\r\n",
        b"GET /\xff\xfe HTTP/1.1\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"GET /%zz HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /status/abc HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /status/99 HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /delay/x/nav.html HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /delay/999999999/nav.html HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /redirect HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /set-cookie HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /set-cookie?a=b;c HTTP/1.1\r\nConnection: close\r\n\r\n",
    ] {
        let reply = send_raw(&server, request).await;
        assert_eq!(reply.status, 400, "{}", String::from_utf8_lossy(request));
    }
    let oversized = format!(
        "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
        "a".repeat(MAX_HEAD_BYTES + 10)
    );
    assert_eq!(send_raw(&server, oversized.as_bytes()).await.status, 431);
}

#[tokio::test]
async fn half_sent_request_does_not_disturb_the_server() {
    let server = FixtureServer::start().await.unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port()))
        .await
        .unwrap();
    stream.write_all(b"GET /nav.html HTT").await.unwrap();
    drop(stream);
    assert_eq!(get(&server, "/nav.html").await.status, 200);
}

#[tokio::test]
async fn status_endpoint_answers_with_that_status() {
    let server = FixtureServer::start().await.unwrap();
    for code in [200, 404, 418, 500, 503] {
        let reply = get(&server, &format!("/status/{code}")).await;
        assert_eq!(reply.status, code);
        assert_eq!(reply.text(), format!("status {code}\n"));
    }
    let no_content = get(&server, "/status/204").await;
    assert_eq!(no_content.status, 204);
    assert!(no_content.body.is_empty());
}

#[tokio::test]
async fn delay_serves_the_rest_of_the_path_after_the_delay() {
    let server = FixtureServer::start().await.unwrap();
    let started = Instant::now();
    let reply = get(&server, "/delay/150/nav.html").await;
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.body,
        std::fs::read(pages_dir().join("nav.html")).unwrap()
    );
    let nested = get(&server, "/delay/0/status/503").await;
    assert_eq!(nested.status, 503);
    assert_eq!(get(&server, "/delay/5").await.status, 400);
}

#[tokio::test]
async fn redirect_sends_302_to_the_decoded_target() {
    let server = FixtureServer::start().await.unwrap();
    let reply = get(
        &server,
        "/redirect?to=http%3A%2F%2F127.0.0.1%3A1%2Fa%3Fb%3Dc",
    )
    .await;
    assert_eq!(reply.status, 302);
    assert_eq!(reply.header("Location"), Some("http://127.0.0.1:1/a?b=c"));
    let header_injection = get(&server, "/redirect?to=%2Fa%0D%0ASet-Cookie%3A%20x%3D1").await;
    assert_eq!(header_injection.status, 400);
}

#[tokio::test]
async fn slow_body_sends_headers_first() {
    let server = FixtureServer::start().await.unwrap();
    // The body: whole, and after the headers.
    let reply = get(&server, "/slow-body/0").await;
    assert_eq!(reply.status, 200);
    assert!(reply.text().contains("slow body done"));
    // The headers at once: within a fraction of a body delay long enough for a loaded machine,
    // with nothing of the body yet. The test does not wait for the body.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port()))
        .await
        .unwrap();
    stream
        .write_all(b"GET /slow-body/20000 HTTP/1.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let mut head = Vec::new();
    let end = loop {
        if let Some(at) = find_subslice(&head, b"\r\n\r\n") {
            break at + 4;
        }
        let mut chunk = [0u8; 1024];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed before headers");
        head.extend_from_slice(&chunk[..n]);
    };
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "headers came late: {:?}",
        started.elapsed()
    );
    assert!(head[end..].is_empty(), "the body came with the headers");
    assert!(String::from_utf8_lossy(&head).starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn echo_returns_method_path_headers_and_body() {
    let server = FixtureServer::start().await.unwrap();
    let reply = send_raw(
        &server,
        b"POST /echo?x=1 HTTP/1.1\r\nHost: h\r\nCookie: a=1\r\nOrigin: http://localhost:9\r\n\
          Content-Length: 5\r\nConnection: close\r\n\r\nhello",
    )
    .await;
    assert_eq!(reply.status, 200);
    let json = reply.json();
    assert_eq!(json["method"], "POST");
    assert_eq!(json["path"], "/echo");
    assert_eq!(json["query"], "x=1");
    assert_eq!(json["target"], "/echo?x=1");
    assert_eq!(json["headers"]["cookie"], "a=1");
    assert_eq!(json["headers"]["origin"], "http://localhost:9");
    assert_eq!(json["body"], "hello");
    assert_eq!(
        reply.header("Access-Control-Allow-Origin"),
        Some("http://localhost:9")
    );
    assert_eq!(
        reply.header("Access-Control-Allow-Credentials"),
        Some("true")
    );
    let preflight = send_raw(
        &server,
        b"OPTIONS /echo HTTP/1.1\r\nOrigin: http://a\r\nAccess-Control-Request-Method: PUT\r\n\
          Connection: close\r\n\r\n",
    )
    .await;
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.header("Access-Control-Allow-Methods"),
        Some("PUT")
    );
}

#[tokio::test]
async fn set_cookie_sets_each_pair() {
    let server = FixtureServer::start().await.unwrap();
    let reply = get(&server, "/set-cookie?user=ann&role=admin%20x").await;
    assert_eq!(reply.status, 400, "space is not cookie-safe");
    let reply = get(&server, "/set-cookie?user=ann&role=admin").await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.headers_named("Set-Cookie"),
        ["user=ann; Path=/", "role=admin; Path=/"]
    );
    assert_eq!(
        reply.json(),
        serde_json::json!({"set": {"user": "ann", "role": "admin"}})
    );
}

#[tokio::test]
async fn dynamic_routes_take_precedence() {
    let server = FixtureServer::start().await.unwrap();
    server.route("/x", |request| {
        Response::text(format!(
            "hi {}",
            request.query_param("name").unwrap_or_default()
        ))
    });
    server.route("nav.html", |_| Response::html("overridden").status(201));
    let reply = get(&server, "/x?name=bo%20b").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.text(), "hi bo b");
    assert_eq!(get(&server, "/nav.html").await.status, 201);
    assert_eq!(get(&server, "/delay/10/x").await.text(), "hi ");
}

#[tokio::test]
async fn static_files_reject_other_methods() {
    let server = FixtureServer::start().await.unwrap();
    let reply = send_raw(
        &server,
        b"POST /nav.html HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(reply.status, 405);
}

#[tokio::test]
async fn requests_are_logged_by_path() {
    let server = FixtureServer::start().await.unwrap();
    get(&server, "/nav.html?a=1").await;
    get(&server, "/missing.html").await;
    get(&server, "/nav.html").await;
    send_raw(&server, b"nonsense\r\n\r\n").await;
    assert_eq!(
        server.requests(),
        ["/nav.html", "/missing.html", "/nav.html"]
    );
    assert_eq!(server.request_count("nav.html"), 2);
    assert_eq!(server.request_count("/missing.html"), 1);
    server.clear_requests();
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn keep_alive_serves_several_requests_on_one_connection() {
    let server = FixtureServer::start().await.unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port()))
        .await
        .unwrap();
    // Two pipelined requests, the second closing the connection.
    stream
        .write_all(
            b"GET /status/201 HTTP/1.1\r\nHost: x\r\n\r\n\
              GET /status/202 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await
        .unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 201 "), "{text}");
    assert!(text.contains("Connection: keep-alive"), "{text}");
    assert!(text.contains("HTTP/1.1 202 "), "{text}");
}

#[tokio::test]
async fn hang_does_not_block_other_requests() {
    let server = FixtureServer::start().await.unwrap();
    let mut hanging = TcpStream::connect(("127.0.0.1", server.port()))
        .await
        .unwrap();
    hanging
        .write_all(b"GET /hang HTTP/1.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    assert!(eventually(Duration::from_secs(5), || server.request_count("hang") == 1).await);
    assert_eq!(get(&server, "/nav.html").await.status, 200);
    let mut scratch = [0u8; 16];
    let answered =
        tokio::time::timeout(Duration::from_millis(100), hanging.read(&mut scratch)).await;
    assert!(answered.is_err(), "hang answered: {answered:?}");
}

#[tokio::test]
async fn hang_task_ends_when_the_client_goes() {
    let server = FixtureServer::start().await.unwrap();
    let mut hanging = TcpStream::connect(("127.0.0.1", server.port()))
        .await
        .unwrap();
    hanging
        .write_all(b"GET /hang HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    assert!(eventually(Duration::from_secs(5), || server.request_count("hang") == 1).await);
    assert_eq!(server.shared.live_connections.load(Ordering::SeqCst), 1);
    drop(hanging);
    let shared = server.shared.clone();
    assert!(
        eventually(Duration::from_secs(5), || shared
            .live_connections
            .load(Ordering::SeqCst)
            == 0)
        .await
    );
}

#[tokio::test]
async fn dropping_the_server_ends_all_its_tasks() {
    let server = FixtureServer::start().await.unwrap();
    let port = server.port();
    let shared = server.shared.clone();
    let mut hanging = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    hanging
        .write_all(b"GET /hang HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let mut idle = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || shared
            .live_connections
            .load(Ordering::SeqCst)
            == 2)
        .await
    );
    drop(server);
    assert!(
        eventually(Duration::from_secs(5), || shared
            .live_connections
            .load(Ordering::SeqCst)
            == 0)
        .await,
        "connection tasks still running"
    );
    let mut scratch = [0u8; 16];
    assert_eq!(
        hanging.read(&mut scratch).await.unwrap_or(0),
        0,
        "hang socket not closed"
    );
    assert_eq!(
        idle.read(&mut scratch).await.unwrap_or(0),
        0,
        "idle socket not closed"
    );
    assert!(
        TcpStream::connect(("127.0.0.1", port)).await.is_err(),
        "port still open"
    );
    // The accept task's Arc is gone too: only this test's clone remains.
    assert!(eventually(Duration::from_secs(5), || Arc::strong_count(&shared) == 1).await);
}

#[test]
fn detached_server_runs_without_a_runtime_and_stops_on_drop() {
    let server = FixtureServer::start_detached().unwrap();
    let port = server.port();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        assert_eq!(get(&server, "/nav.html").await.status, 200);
    });
    let shared = server.shared.clone();
    drop(server);
    runtime.block_on(async {
        assert!(eventually(Duration::from_secs(5), || Arc::strong_count(&shared) == 1).await);
        assert!(
            TcpStream::connect(("127.0.0.1", port)).await.is_err(),
            "port still open"
        );
    });
}

#[tokio::test]
async fn localhost_reaches_the_same_server() {
    let server = FixtureServer::start().await.unwrap();
    let mut stream = TcpStream::connect(("localhost", server.port()))
        .await
        .unwrap();
    stream
        .write_all(b"GET /status/207 HTTP/1.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.unwrap();
    assert_eq!(parse_reply(&bytes).status, 207);
}

#[test]
fn query_params_decode() {
    let pairs = query_pairs("a=1&b=x+y&c=%41%42&d&&e=").unwrap();
    assert_eq!(
        pairs,
        [("a", "1"), ("b", "x y"), ("c", "AB"), ("d", ""), ("e", "")]
            .map(|(key, value)| (key.to_string(), value.to_string()))
    );
    assert!(query_pairs("a=%g1").is_err());
    assert!(query_pairs("a=%ff").is_err(), "not utf-8");
}
