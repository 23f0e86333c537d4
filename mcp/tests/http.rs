//! End-to-end tests of `chromate mcp --http` (docs/mcp.md, "Streamable HTTP"): the real binary,
//! real headless Chromium, a fixture origin on 127.0.0.1, and HTTP spoken by the small client
//! below (one request per connection, `Connection: close`, the answer read to its end, chunked
//! bodies decoded; SSE answers are parsed into their `data:` messages).
//!
//! Every read has a deadline; every browser is checked gone by PID (or by profile directory)
//! when its server ends; contexts are checked through the browser's own
//! `Target.getBrowserContexts`.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use chromate_tests::mcp_client::scrubbed_command;
use chromate_tests::procs::{chrome_processes_with_profile_under, is_alive};
use chromate_tests::tls::TlsCert;
use chromate_tests::{ExternalChromium, FixtureServer, Response};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const DEADLINE: Duration = Duration::from_secs(60);

/// A running `chromate mcp --http`, ended (SIGTERM, then waited for) when dropped.
struct HttpServer {
    child: Child,
    port: u16,
    /// The token the server generated and printed (none with `--no-auth` or `--auth-token`).
    token: Option<String>,
    /// Every line the server wrote on stderr so far.
    stderr: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    _tmp: tempfile::TempDir,
    tmp_path: std::path::PathBuf,
}

impl HttpServer {
    fn start(args: &[&str]) -> HttpServer {
        HttpServer::start_with(args, &[], |_| {})
    }

    /// [`HttpServer::start`] with more environment, each value a path relative to the
    /// server's temp directory, and the command adjusted last (environment, limits).
    fn start_with(
        args: &[&str],
        envs: &[(&str, &str)],
        adjust: impl FnOnce(&mut std::process::Command),
    ) -> HttpServer {
        let tmp = tempfile::tempdir().unwrap();
        let tmp_path = tmp.path().to_owned();
        let runtime = tmp.path().join("runtime");
        let mut command = scrubbed_command(env!("CARGO_BIN_EXE_chromate"), &["CHROMATE_BROWSER"]);
        command
            .arg("mcp")
            .args(args)
            .envs(
                envs.iter()
                    .map(|(name, value)| (*name, tmp.path().join(value))),
            )
            .env("TMPDIR", tmp.path())
            .env("CHROMATE_RUNTIME_DIR", &runtime)
            .env("CHROMATE_MCP_ARTIFACTS_DIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        adjust(&mut command);
        let mut child = command.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = lines.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                kept.lock().unwrap().push(line.clone());
                let port = ["http://127.0.0.1:", "http://0.0.0.0:"]
                    .iter()
                    .find_map(|prefix| line.split(prefix).nth(1))
                    .and_then(|rest| rest.split('/').next())
                    .and_then(|port| port.parse::<u16>().ok());
                if let Some(port) = port {
                    let _ = tx.send(Ok(port));
                } else if let Some(rest) = line.split("auth token (generated").nth(1) {
                    let token = rest.split("): ").nth(1).and_then(|t| t.split(' ').next());
                    let _ = tx.send(Err(token.map(str::to_owned)));
                }
            }
        });
        let generates = !args
            .iter()
            .any(|arg| ["--no-auth", "--auth-token"].contains(arg));
        let (mut port, mut token) = (None, None);
        while port.is_none() || (generates && token.is_none()) {
            match rx.recv_timeout(Duration::from_secs(20)) {
                Ok(Ok(found)) => port = Some(found),
                Ok(Err(found)) => token = Some(found.expect("a token line without a token")),
                Err(err) => panic!(
                    "the server printed no address (or no token): {err}; stderr: {:?}",
                    lines.lock().unwrap()
                ),
            }
        }
        HttpServer {
            child,
            port: port.unwrap(),
            token,
            stderr: lines,
            _tmp: tmp,
            tmp_path,
        }
    }

    /// The server's stderr so far, one string.
    fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Waits (10 s at most) until the server's stderr contains `needle`.
    fn wait_for_stderr(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.stderr_text().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "no {needle:?} on stderr: {}",
                self.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then the exit status; panics if it takes longer than 10 s.
    fn stop(&mut self) -> std::process::ExitStatus {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) on the PID of our own child, which has not been reaped yet.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body);
        if self.headers.get("content-type").map(String::as_str) == Some("text/event-stream") {
            // The last `data:` message is the response.
            let last = text
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .next_back()
                .unwrap_or_else(|| panic!("no data in the stream: {text}"));
            return serde_json::from_str(last).unwrap();
        }
        serde_json::from_str(&text).unwrap_or_else(|err| panic!("not JSON ({err}): {text}"))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// Sends one request to 127.0.0.1:`port` and reads the whole answer.
async fn http(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.unwrap();
        parse_answer(&raw)
    };
    tokio::time::timeout(DEADLINE, exchange)
        .await
        .expect("the HTTP exchange timed out")
}

fn parse_answer(raw: &[u8]) -> Answer {
    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .expect("no end of headers");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .expect("no status");
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        let mut decoded = Vec::new();
        let mut rest = &body[..];
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16)
                .unwrap();
            rest = &rest[line_end + 2..];
            if size == 0 {
                break;
            }
            decoded.extend_from_slice(&rest[..size]);
            rest = &rest[size + 2..];
        }
        body = decoded;
    }
    Answer {
        status,
        headers,
        body,
    }
}

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const JSON: (&str, &str) = ("Content-Type", "application/json");

/// A legacy-era (2025-11-25) client session.
struct Client {
    port: u16,
    session: String,
    next: u64,
    extra: Vec<(String, String)>,
}

impl Client {
    async fn connect(port: u16) -> Client {
        Client::connect_with(port, &[]).await
    }

    async fn connect_with(port: u16, extra: &[(&str, &str)]) -> Client {
        let extra: Vec<(String, String)> = extra
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        let mut headers: Vec<(&str, &str)> = vec![ACCEPT, JSON];
        headers.extend(extra.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"http-test","version":"1"}}});
        let answer = http(port, "POST", &headers, &init.to_string()).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(answer.json()["result"]["protocolVersion"], "2025-11-25");
        let session = answer
            .header("mcp-session-id")
            .expect("initialize answered without MCP-Session-Id")
            .to_owned();
        let client = Client {
            port,
            session,
            next: 1,
            extra,
        };
        let notified = client
            .post(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
        assert_eq!(notified.status, 202);
        client
    }

    async fn post(&self, message: &Value) -> Answer {
        let mut headers: Vec<(&str, &str)> = vec![
            ACCEPT,
            JSON,
            ("MCP-Session-Id", &self.session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        headers.extend(self.extra.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        http(self.port, "POST", &headers, &message.to_string()).await
    }

    /// A tool call's result (the JSON-RPC `result`).
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.next += 1;
        let message = json!({"jsonrpc":"2.0","id":self.next,"method":"tools/call",
            "params":{"name":tool,"arguments":arguments}});
        let answer = self.post(&message).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        let response = answer.json();
        assert_eq!(response["id"], json!(self.next), "{response}");
        response["result"].clone()
    }

    /// The text blocks of a successful call, joined.
    async fn call_text(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await;
        assert_ne!(result["isError"], json!(true), "{tool}: {result}");
        result["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    async fn delete(&self) -> Answer {
        http(
            self.port,
            "DELETE",
            &[("MCP-Session-Id", &self.session)],
            "",
        )
        .await
    }
}

/// The fixture origin's login and who-am-I pages: `/login?user=N` sets the cookie `user=N`;
/// `/whoami` shows the cookies it was sent.
fn cookie_fixture() -> FixtureServer {
    let fixture = FixtureServer::start_detached().unwrap();
    fixture.route("/login", |request| {
        let user = request.query_param("user").unwrap_or_default();
        Response::html(format!("<h1>logged in as {user}</h1>"))
            .header("Set-Cookie", format!("user={user}; Path=/"))
    });
    fixture.route("/whoami", |request| {
        let cookie = request.header("cookie").unwrap_or("none").to_owned();
        Response::html(format!("<h1>cookie [{cookie}]</h1>"))
    });
    fixture
}

/// Chromium processes whose profile is under the server's temp directory.
fn browsers_of(server: &HttpServer) -> Vec<u32> {
    chrome_processes_with_profile_under(&server.tmp_path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_sessions_each_see_only_their_own_cookie() {
    let fixture = cookie_fixture();
    let mut server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let port = server.port;
    let mut tasks = Vec::new();
    for user in 0..20 {
        let login = fixture.url(&format!("/login?user=u{user}"));
        let whoami = fixture.url("/whoami");
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(port).await;
            let text = client
                .call_text("browser_navigate", json!({ "url": login }))
                .await;
            assert!(text.contains(&format!("logged in as u{user}")), "{text}");
            let text = client
                .call_text("browser_navigate", json!({ "url": whoami }))
                .await;
            (user, text, client)
        }));
    }
    let mut clients = Vec::new();
    for task in tasks {
        let (user, text, client) = task.await.unwrap();
        // Exactly its own cookie: no other session's `user=` reached this context.
        assert!(
            text.contains(&format!("cookie [user=u{user}]")),
            "session {user}: {text}"
        );
        clients.push(client);
    }
    // One shared browser for all twenty.
    let browsers = browsers_of(&server);
    assert!(
        !browsers.is_empty(),
        "no browser under the server's profile directory"
    );
    // DELETE ends one session: its id is then unknown (404).
    let first = clients.remove(0);
    assert_eq!(first.delete().await.status, 204);
    let after = first
        .post(&json!({"jsonrpc":"2.0","id":99,"method":"tools/list"}))
        .await;
    assert_eq!(after.status, 404, "{after:?}");
    // The others go on.
    let text = clients[0]
        .call_text("browser_navigate", json!({ "url": fixture.url("/whoami") }))
        .await;
    assert!(text.contains("cookie [user=u1]"), "{text}");
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while browsers.iter().any(|&pid| is_alive(pid)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let alive: Vec<u32> = browsers.into_iter().filter(|&pid| is_alive(pid)).collect();
    assert!(
        alive.is_empty(),
        "browser processes left after shutdown: {alive:?}"
    );
    assert!(browsers_of(&server).is_empty());
}

/// The ref of the line with `needle` in an observation (`e12: link "…"` → `e12`).
fn ref_on_line(text: &str, needle: &str) -> String {
    let line = text
        .lines()
        .find(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"));
    let line = line.trim_start().trim_start_matches(['+', '-', ' ']);
    line.split_once(':')
        .map(|(element_ref, _)| element_ref.trim().to_owned())
        .unwrap_or_else(|| panic!("no ref on {line:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_session_saves_and_sees_only_its_own_downloads() {
    let fixture = FixtureServer::start_detached().unwrap();
    // The same file name in both sessions, a different size each: a session that saw the
    // other's download would report `shared.csv (2)` or the other size.
    fixture.route("/get", |request| {
        let bytes = request.query_param("bytes").unwrap_or_default();
        Response::html(format!(
            "<!doctype html><title>get</title>\
             <a href=\"/attachment?name=shared.csv&amp;bytes={bytes}\">Get the file</a>"
        ))
    });
    let mut server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let port = server.port;
    let mut tasks = Vec::new();
    for (n, bytes) in [(0, 1111_u64), (1, 2222)] {
        let page = fixture.url(&format!("/get?bytes={bytes}"));
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(port).await;
            let text = client
                .call_text("browser_navigate", json!({ "url": page }))
                .await;
            let link = ref_on_line(&text, "Get the file");
            let clicked = client
                .call_text("browser_click", json!({ "selector": link }))
                .await;
            let status = client.call("browser_status", json!({})).await;
            let status: Value =
                serde_json::from_str(status["content"][0]["text"].as_str().unwrap_or_default())
                    .unwrap_or_else(|err| panic!("browser_status: {err}: {status}"));
            let dir = std::path::PathBuf::from(status["artifactsDir"].as_str().unwrap());
            let logs = client
                .call("browser_logs", json!({ "kind": "download" }))
                .await;
            let logs: Value =
                serde_json::from_str(logs["content"][0]["text"].as_str().unwrap_or_default())
                    .unwrap_or_else(|err| panic!("browser_logs: {err}: {logs}"));
            (n, bytes, clicked, dir, logs, client)
        }));
    }
    let mut seen = Vec::new();
    for task in tasks {
        let (n, bytes, clicked, dir, logs, client) = task.await.unwrap();
        // The click's observation reports this session's download, and only it.
        assert!(
            clicked.contains(&format!("download: shared.csv ({bytes} bytes) completed")),
            "session {n}: {clicked}"
        );
        assert_eq!(
            clicked.matches("download:").count(),
            1,
            "session {n}: {clicked}"
        );
        // Saved in this session's own directory, under the unnumbered name.
        let saved = dir.join("downloads").join("shared.csv");
        let content =
            std::fs::read(&saved).unwrap_or_else(|err| panic!("{}: {err}", saved.display()));
        assert_eq!(content.len() as u64, bytes, "session {n}");
        let files: Vec<String> = std::fs::read_dir(dir.join("downloads"))
            .unwrap()
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name != ".incoming")
            .collect();
        assert_eq!(files, vec!["shared.csv".to_owned()], "session {n}");
        // Its journal has its one download.
        let entries = logs["entries"].as_array().cloned().unwrap_or_default();
        assert_eq!(entries.len(), 1, "session {n}: {logs}");
        assert_eq!(entries[0]["bytes"], json!(bytes), "session {n}: {logs}");
        assert_eq!(
            entries[0]["path"],
            json!(saved.display().to_string()),
            "session {n}: {logs}"
        );
        seen.push((dir, client));
    }
    assert_ne!(seen[0].0, seen[1].0, "two sessions, one directory");
    let status = server.stop();
    assert!(status.success(), "{status:?}");
}

/// A 2025-11-25 call, cancelled with `notifications/cancelled`: the POST that carried it ends
/// at once with no response in it (an SSE stream that closes; a JSON answer of 202 with no
/// body), and the session's next call runs (the cancelled one stopped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_ends_its_post_without_a_response() {
    let mut server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let mut client = Client::connect(server.port).await;
    for (n, accept) in [
        (1, "application/json, text/event-stream"),
        (2, "application/json"),
    ] {
        let id = format!("wait-{n}");
        let call = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"browser_logs","arguments":{"action":"wait","timeout_ms":60000}}});
        let (port, session) = (server.port, client.session.clone());
        let started = Instant::now();
        let mut post = tokio::spawn(async move {
            http(
                port,
                "POST",
                &[
                    ("Accept", accept),
                    JSON,
                    ("MCP-Session-Id", &session),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
                &call.to_string(),
            )
            .await
        });
        // The call may not have reached the server yet when a cancel arrives (it is then
        // unknown and ignored): cancel again until the POST ends, at most 40 times.
        let cancel = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId":id,"reason":"the user moved on"}});
        let mut answer = None;
        for _ in 0..40 {
            assert_eq!(client.post(&cancel).await.status, 202);
            if let Ok(joined) = tokio::time::timeout(Duration::from_millis(500), &mut post).await {
                answer = Some(joined.unwrap());
                break;
            }
        }
        let answer =
            answer.unwrap_or_else(|| panic!("{accept}: the cancelled call's POST stayed open"));
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "{accept}: it ended only with the wait's own timeout"
        );
        let body = String::from_utf8_lossy(&answer.body).to_string();
        assert!(
            !body.contains("\"result\"") && !body.contains("\"error\""),
            "{accept}: a cancelled call is not answered: {body}"
        );
        if n == 1 {
            assert_eq!(answer.status, 200, "{answer:?}");
            assert_eq!(answer.header("content-type"), Some("text/event-stream"));
        } else {
            assert_eq!(answer.status, 202, "{answer:?}");
            assert!(answer.body.is_empty(), "{answer:?}");
        }
        // The session goes on: its next call is not queued behind the cancelled one.
        let status = client.call_text("browser_status", json!({})).await;
        assert!(status.contains("\"ready\""), "{status}");
    }
    let status = server.stop();
    assert!(status.success(), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_tokens_and_the_non_loopback_bind() {
    // A non-loopback address without a token is refused before anything listens.
    let refused = scrubbed_command(env!("CARGO_BIN_EXE_chromate"), &[])
        .args(["mcp", "--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("without --auth-token"), "{stderr}");

    let server = HttpServer::start(&[
        "--http",
        "0.0.0.0:0",
        "--auth-token",
        "s3cret-token",
        "--allowed-hosts",
        "app.example",
        "--caps",
        "audit",
    ]);
    let port = server.port;
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    let bearer = ("Authorization", "Bearer s3cret-token");
    // No token, a wrong one, the wrong scheme: 401, and no session is made.
    for headers in [
        vec![ACCEPT, JSON],
        vec![ACCEPT, JSON, ("Authorization", "Bearer s3cret-tokem")],
        vec![ACCEPT, JSON, ("Authorization", "Bearer s3cret")],
        vec![ACCEPT, JSON, ("Authorization", "Basic s3cret-token")],
    ] {
        let answer = http(port, "POST", &headers, &init).await;
        assert_eq!(answer.status, 401, "{headers:?}: {answer:?}");
        assert_eq!(answer.header("www-authenticate"), Some("Bearer"));
        assert!(answer.header("mcp-session-id").is_none());
    }
    // A foreign Origin: 403 even with the token; an allowed host and loopback pass.
    let foreign = http(
        port,
        "POST",
        &[ACCEPT, JSON, bearer, ("Origin", "https://evil.example")],
        &init,
    )
    .await;
    assert_eq!(foreign.status, 403, "{foreign:?}");
    assert_eq!(foreign.json()["error"]["code"], json!(-32600));
    for origin in ["https://app.example", "http://localhost:5173"] {
        let answer = http(
            port,
            "POST",
            &[ACCEPT, JSON, bearer, ("Origin", origin)],
            &init,
        )
        .await;
        assert_eq!(answer.status, 200, "{origin}: {answer:?}");
    }
    // With the token: a session, whose requests need their id.
    let mut client = Client::connect_with(port, &[bearer]).await;
    let tools = client
        .post(&json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}))
        .await;
    assert_eq!(tools.status, 200);
    assert!(tools.json()["result"]["tools"].as_array().unwrap().len() >= 20);
    let text = client.call_text("browser_status", json!({})).await;
    assert!(text.contains("\"ready\""), "{text}");
    // A server other machines reach never audits its own network, whatever the caller asks:
    // a loopback target is refused at the entry page (the fixture sees no request).
    let fixture = cookie_fixture();
    let audit = client
        .call(
            "qa_audit_url",
            json!({"url": fixture.url("/whoami"), "block_private_network": false}),
        )
        .await;
    assert_eq!(audit["isError"], json!(true), "{audit}");
    assert_eq!(
        audit["structuredContent"]["error"]["code"],
        json!("SSRF_BLOCKED"),
        "{audit}"
    );
    assert!(fixture.requests().is_empty(), "{:?}", fixture.requests());
    let missing = http(
        port,
        "POST",
        &[ACCEPT, JSON, bearer],
        &json!({"jsonrpc":"2.0","id":6,"method":"tools/list"}).to_string(),
    )
    .await;
    assert_eq!(missing.status, 400, "{missing:?}");
    // GET (no standalone stream) and an unknown path.
    assert_eq!(http(port, "GET", &[bearer], "").await.status, 405);
    // A body over the frame limit: 413.
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}",
        "a".repeat(1_100_000)
    );
    let too_large = http(port, "POST", &[ACCEPT, JSON, bearer], &big).await;
    assert_eq!(too_large.status, 413);
    drop(client);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_token_generates_one_keeps_it_private_and_init_prints_it() {
    let mut server = HttpServer::start(&["--http", "127.0.0.1:0"]);
    let port = server.port;
    let token = server.token.clone().expect("no token printed");
    assert_eq!(token.len(), 64, "{token}");
    let stderr = server.stderr_text();
    assert_eq!(
        stderr.matches(&token).count(),
        1,
        "the token is printed once: {stderr}"
    );
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    // No token, a wrong one: 401, no session.
    let missing = http(port, "POST", &[ACCEPT, JSON], &init).await;
    assert_eq!(missing.status, 401, "{missing:?}");
    assert!(missing.header("mcp-session-id").is_none());
    let wrong = format!("Bearer {}", &token[..63]);
    let answer = http(
        port,
        "POST",
        &[ACCEPT, JSON, ("Authorization", &wrong)],
        &init,
    )
    .await;
    assert_eq!(answer.status, 401, "{answer:?}");
    // The right one gets a session.
    let bearer = format!("Bearer {token}");
    let mut client = Client::connect_with(port, &[("Authorization", &bearer)]).await;
    let text = client.call_text("browser_status", json!({})).await;
    assert!(text.contains("\"ready\""), "{text}");
    // The token file: 0600, in the runtime directory, named by the port.
    let runtime = server.tmp_path.join("runtime");
    let file = runtime.join(format!("mcp-http-{port}.json"));
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    }
    // `chromate init --mcp` prints the URL and the header for this user's running server.
    let printed = scrubbed_command(env!("CARGO_BIN_EXE_chromate"), &[])
        .args(["init", "--mcp", "--agent", "claude"])
        .env("CHROMATE_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    assert!(printed.status.success(), "{printed:?}");
    let stdout = String::from_utf8_lossy(&printed.stdout);
    let url = format!("http://127.0.0.1:{port}/mcp");
    assert!(
        stdout.contains(&format!(
            "claude mcp add --transport http chromate {url} --header \"Authorization: Bearer {token}\""
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("\"Authorization\": \"Bearer {token}\"")),
        "{stdout}"
    );
    drop(client);
    assert!(server.stop().success());
    assert!(!file.exists(), "the token file outlived its server");
    let printed = scrubbed_command(env!("CARGO_BIN_EXE_chromate"), &[])
        .args(["init", "--mcp", "--agent", "claude"])
        .env("CHROMATE_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&printed.stdout).contains("Streamable HTTP"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_server_refuses_a_host_that_is_not_loopback() {
    let server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let port = server.port;
    server.wait_for_stderr("--no-auth: any local process");
    let list = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    // What a DNS-rebinding page sends: its own name, no Origin of ours is needed to matter.
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: rebind.example:{port}\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{list}",
            list.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.unwrap();
        parse_answer(&raw)
    };
    let refused = tokio::time::timeout(DEADLINE, exchange).await.unwrap();
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(refused.header("mcp-session-id").is_none());
    let body = refused.json();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Host \"rebind.example"),
        "{body}"
    );
    // The loopback name passes (the helper sends Host: 127.0.0.1:<port>).
    let answer = http(port, "POST", &[ACCEPT, JSON], &list).await;
    assert_eq!(answer.status, 200, "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_03_26_session_takes_batches_and_later_revisions_refuse_them() {
    let server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let port = server.port;
    server.wait_for_stderr("--no-auth: any local process");
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let answer = http(port, "POST", &[ACCEPT, JSON], &init.to_string()).await;
    assert_eq!(answer.json()["result"]["protocolVersion"], "2025-03-26");
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    let headers = [ACCEPT, JSON, ("MCP-Session-Id", session.as_str())];
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":"two","method":"tools/list"},
        {"jsonrpc":"2.0","id":3,"method":7},
    ]);
    let answer = http(port, "POST", &headers, &batch.to_string()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let response = answer.json();
    let items = response.as_array().unwrap_or_else(|| panic!("{response}"));
    assert_eq!(items.len(), 3, "{response}");
    let by_id = |id: Value| items.iter().find(|item| item["id"] == id).unwrap().clone();
    assert_eq!(by_id(json!(1))["result"], json!({}));
    assert_eq!(
        by_id(json!("two"))["result"]["tools"]
            .as_array()
            .map(Vec::len),
        Some(28)
    );
    assert_eq!(by_id(json!(3))["error"]["code"], json!(-32600));
    // Only notifications: accepted, no body. An empty batch: an invalid request.
    let notes = json!([{"jsonrpc":"2.0","method":"notifications/initialized"}]);
    let answer = http(port, "POST", &headers, &notes.to_string()).await;
    assert_eq!(answer.status, 202, "{answer:?}");
    let answer = http(port, "POST", &headers, "[]").await;
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(answer.json()["error"]["code"], json!(-32600));
    // A 2025-11-25 session refuses a batch whole, as before.
    let client = Client::connect(port).await;
    let answer = client
        .post(&json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]))
        .await;
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(
        answer.json()["error"]["message"],
        json!("invalid request: batch arrays are not supported")
    );
}

/// Opens `count` connections to the server; all but every third send half a request head (the
/// others send nothing). Returns them open.
async fn half_open_connections(port: u16, count: usize) -> Vec<tokio::net::TcpStream> {
    let mut streams = Vec::new();
    for n in 0..count {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        if n % 3 != 0 {
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-")
                .await
                .unwrap();
        }
        streams.push(stream);
    }
    streams
}

/// What each connection read until the server closed it; fails if one stays open `within`.
async fn read_until_closed(streams: Vec<tokio::net::TcpStream>, within: Duration) -> Vec<String> {
    let reads = streams.into_iter().map(|mut stream| async move {
        let mut raw = Vec::new();
        // A reset is a close too.
        let _ = stream.read_to_end(&mut raw).await;
        String::from_utf8_lossy(&raw).into_owned()
    });
    tokio::time::timeout(within, futures::future::join_all(reads))
        .await
        .expect("a connection that never sent its headers was still open")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_never_send_their_headers_are_closed_and_the_cap_answers_503() {
    let server = HttpServer::start_with(&["--http", "127.0.0.1:0", "--no-auth"], &[], |command| {
        command
            .env("CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS", "500")
            .env("CHROMATE_MCP_HTTP_MAX_CONNECTIONS", "40");
    });
    let port = server.port;
    let streams = half_open_connections(port, 60).await;
    let outcomes = read_until_closed(streams, Duration::from_secs(30)).await;
    // Connections still sending their headers are never refused: the oldest are evicted to
    // make room for newer ones, the rest closed after the header timeout, all without a word.
    assert!(
        outcomes.iter().all(String::is_empty),
        "an answer to a half-open connection: {outcomes:?}"
    );
    // Established connections (headers complete, the body never sent) fill the cap: one more
    // is answered 503 at once.
    let mut established = Vec::new();
    for _ in 0..40 {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        stream
            .write_all(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\
                  Expect: 100-continue\r\n\r\n",
            )
            .await
            .unwrap();
        // The server asks for the body once it handles the request: the headers are complete.
        let mut continued = Vec::new();
        while !continued.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8; 1];
            assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "{continued:?}");
            continued.push(byte[0]);
        }
        assert!(continued.starts_with(b"HTTP/1.1 100"), "{continued:?}");
        established.push(stream);
    }
    let over = read_until_closed(half_open_connections(port, 1).await, DEADLINE).await;
    assert!(
        over[0].starts_with("HTTP/1.1 503") && over[0].contains("Retry-After: 1"),
        "{over:?}"
    );
    drop(established);
    // The server still answers a client that sends its request.
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    let answer = loop {
        // The 40 dropped connections close on the server's side as it notices.
        let answer = http(port, "POST", &[ACCEPT, JSON], &init).await;
        if answer.status != 503 {
            break answer;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(answer.status, 200, "{answer:?}");
    let lines = server.stderr.lock().unwrap().len();
    assert!(lines <= 4, "stderr: {}", server.stderr_text());
}

/// A request turned away before its token is checked (a foreign Host, no token) does not keep
/// its connection: the server closes it after the answer, though the client asked for none of
/// that (docs/mcp.md#streamable-http, "Connections").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_the_token_or_with_a_foreign_host_is_answered_and_closed() {
    let server = HttpServer::start_with(
        &["--http", "127.0.0.1:0", "--auth-token", "close-test-token"],
        &[],
        |command| {
            command.env("CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS", "600000");
        },
    );
    for host in ["evil.example", "127.0.0.1"] {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
            .await
            .unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Content-Length: 2\r\n\r\n{{}}"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        tokio::time::timeout(DEADLINE, stream.read_to_end(&mut raw))
            .await
            .expect("the connection stayed open after the answer")
            .unwrap();
        let answer = parse_answer(&raw);
        assert!([401, 403].contains(&answer.status), "{answer:?}");
        assert_eq!(answer.header("connection"), Some("close"), "{answer:?}");
    }
}

/// A flood of connections that never finish their headers, more than the cap, held open: an
/// authorized client is still served, and the oldest of the flood were closed to make room
/// (docs/mcp.md#streamable-http, "Connections").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_half_open_connections_does_not_lock_out_an_authorized_client() {
    use std::io::{Read, Write};
    let server = HttpServer::start_with(
        &["--http", "127.0.0.1:0", "--auth-token", "flood-test-token"],
        &[],
        |command| {
            command
                // Long enough that no flood connection is closed by the timeout meanwhile.
                .env("CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS", "600000")
                .env("CHROMATE_MCP_HTTP_MAX_CONNECTIONS", "40");
        },
    );
    let port = server.port;
    let mut flood = Vec::new();
    for _ in 0..60 {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(b"POST /mcp HTT").unwrap();
        flood.push(stream);
    }
    // The server accepts in order: by the time it accepts this client, it has taken all 60.
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    let bearer = ("Authorization", "Bearer flood-test-token");
    let answer = http(port, "POST", &[ACCEPT, JSON, bearer], &init).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.header("mcp-session-id").is_some(), "{answer:?}");
    // The oldest of the flood was evicted, closed without an answer.
    let mut oldest = flood.remove(0);
    oldest.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut raw = Vec::new();
    let _ = oldest.read_to_end(&mut raw);
    assert!(raw.is_empty(), "{}", String::from_utf8_lossy(&raw));
    drop(oldest);
    for stream in flood {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_descriptors_the_server_pauses_accepts_logs_one_line_and_recovers() {
    let server = HttpServer::start_with(&["--http", "127.0.0.1:0", "--no-auth"], &[], |command| {
        use std::os::unix::process::CommandExt;
        command
            .env("CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS", "1000")
            // Above the descriptor limit below, so accept itself fails.
            .env("CHROMATE_MCP_HTTP_MAX_CONNECTIONS", "10000");
        #[allow(unsafe_code)]
        // SAFETY: setrlimit is async-signal-safe; the closure touches only its own stack.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 64,
                    rlim_max: 64,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    let port = server.port;
    let streams = half_open_connections(port, 120).await;
    // The kernel queues what the server cannot accept; the server runs out of descriptors.
    server.wait_for_stderr("accept failed");
    // As header timeouts free descriptors, the queued connections are accepted and closed too.
    let outcomes = read_until_closed(streams, Duration::from_secs(45)).await;
    assert_eq!(outcomes.len(), 120);
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    let answer = http(port, "POST", &[ACCEPT, JSON], &init).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let stderr = server.stderr_text();
    let failures = stderr.matches("accept failed").count();
    assert!(
        (1..=2).contains(&failures),
        "{failures} lines about failed accepts: {}",
        stderr.chars().take(2000).collect::<String>()
    );
    assert!(stderr.contains("Too many open files"), "{stderr}");
}

/// One 2026-07-28 `tools/call` sent with `token`: the text of its result.
async fn modern_call(port: u16, token: &str, tool: &str, arguments: Value) -> String {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let bearer = format!("Bearer {token}");
    let answer = http(
        port,
        "POST",
        &[
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
            ("Authorization", &bearer),
        ],
        &body,
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let result = answer.json()["result"].clone();
    assert_ne!(result["isError"], json!(true), "{tool}: {result}");
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_clients_with_different_tokens_get_browser_contexts_of_their_own() {
    let fixture = cookie_fixture();
    let mut server = HttpServer::start(&[
        "--http",
        "127.0.0.1:0",
        "--auth-token",
        "token-of-alice",
        "--auth-token",
        "token-of-bob",
    ]);
    let port = server.port;
    modern_call(
        port,
        "token-of-alice",
        "browser_navigate",
        json!({"url": fixture.url("/login?user=alice")}),
    )
    .await;
    let bob = modern_call(
        port,
        "token-of-bob",
        "browser_navigate",
        json!({"url": fixture.url("/whoami")}),
    )
    .await;
    assert!(
        bob.contains("cookie [none]"),
        "bob saw alice's cookie: {bob}"
    );
    let alice = modern_call(
        port,
        "token-of-alice",
        "browser_navigate",
        json!({"url": fixture.url("/whoami")}),
    )
    .await;
    assert!(alice.contains("cookie [user=alice]"), "{alice}");
    assert!(server.stop().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stateless_revision_checks_its_headers() {
    let server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let port = server.port;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let list =
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":meta}}).to_string();
    let good = http(
        port,
        "POST",
        &[
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
        &list,
    )
    .await;
    assert_eq!(good.status, 200, "{good:?}");
    assert_eq!(good.json()["result"]["resultType"], "complete");
    assert!(
        good.header("mcp-session-id").is_none(),
        "a stateless answer minted a session"
    );
    for (headers, why) in [
        (
            vec![ACCEPT, JSON, ("Mcp-Method", "tools/list")],
            "missing version",
        ),
        (
            vec![ACCEPT, JSON, ("MCP-Protocol-Version", "2026-07-28")],
            "missing method",
        ),
        (
            vec![
                ACCEPT,
                JSON,
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
            ],
            "method mismatch",
        ),
    ] {
        let answer = http(port, "POST", &headers, &list).await;
        assert_eq!(answer.status, 400, "{why}: {answer:?}");
        assert_eq!(answer.json()["error"]["code"], json!(-32020), "{why}");
    }
    // Under a 2026-07-28 header, a malformed body is 400: missing or partial `_meta`, or
    // capabilities missing, -32602; another version in the body, -32020.
    let modern_headers = [
        ACCEPT,
        JSON,
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    for (params, code, why) in [
        (json!({}), -32602, "no _meta"),
        (
            json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
            -32602,
            "no version in _meta",
        ),
        (
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            -32602,
            "no capabilities in _meta",
        ),
        (
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25",
                "io.modelcontextprotocol/clientCapabilities": {}}}),
            -32020,
            "another version in the body",
        ),
    ] {
        let body = json!({"jsonrpc":"2.0","id":9,"method":"tools/list","params":params});
        let answer = http(port, "POST", &modern_headers, &body.to_string()).await;
        assert_eq!(answer.status, 400, "{why}: {answer:?}");
        assert_eq!(
            answer.json()["error"]["code"],
            json!(code),
            "{why}: {answer:?}"
        );
        assert_eq!(answer.json()["id"], json!(9), "{why}");
    }
    // tools/call needs Mcp-Name, Base64 sentinel accepted.
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"browser_status","arguments":{},"_meta":meta}})
    .to_string();
    let headers = |name: &'static str| {
        vec![
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", name),
        ]
    };
    let wrong = http(port, "POST", &headers("browser_click"), &call).await;
    assert_eq!(wrong.status, 400);
    assert_eq!(wrong.json()["error"]["code"], json!(-32020));
    let encoded = http(
        port,
        "POST",
        &headers("=?base64?YnJvd3Nlcl9zdGF0dXM=?="),
        &call,
    )
    .await;
    assert_eq!(encoded.status, 200, "{encoded:?}");
    let response = encoded.json();
    assert_eq!(response["id"], json!(2));
    assert_eq!(response["result"]["resultType"], "complete");
    // A method the revision does not have: 404 with -32601.
    let ping = json!({"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":meta}}).to_string();
    let answer = http(
        port,
        "POST",
        &[
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "ping"),
        ],
        &ping,
    )
    .await;
    assert_eq!(answer.status, 404, "{answer:?}");
    assert_eq!(answer.json()["error"]["code"], json!(-32601));
}

/// The contexts the browser itself knows of.
async fn browser_contexts(browser: &chromate::Browser) -> Vec<String> {
    let answer = browser
        .session()
        .send_raw("Target.getBrowserContexts", json!({}))
        .await
        .unwrap();
    answer["browserContextIds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The page targets of the browser: `(targetId, browserContextId, url)`.
async fn page_targets(browser: &chromate::Browser) -> Vec<(String, String, String)> {
    let answer = browser
        .session()
        .send_raw("Target.getTargets", json!({}))
        .await
        .unwrap();
    answer["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|info| info["type"] == "page")
        .map(|info| {
            (
                info["targetId"].as_str().unwrap_or_default().to_owned(),
                info["browserContextId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                info["url"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

async fn poll_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pool_browser_sessions_crash_apart_and_expire() {
    let fixture = cookie_fixture();
    let external = ExternalChromium::start().unwrap();
    let endpoint = format!("http://127.0.0.1:{}", external.port());
    // The test's own view of the browser, to ask it which contexts and pages exist.
    let observer = chromate::Browser::connect(&endpoint).await.unwrap();
    let before = page_targets(&observer).await;
    assert!(
        !before.is_empty(),
        "the external browser has no tab of its own"
    );
    let mut server = HttpServer::start(&[
        "--http",
        "127.0.0.1:0",
        "--cdp-endpoint",
        &endpoint,
        "--session-idle-timeout",
        "6",
        "--no-auth",
    ]);
    let port = server.port;
    let mut alice = Client::connect(port).await;
    let mut bob = Client::connect(port).await;
    alice
        .call_text(
            "browser_navigate",
            json!({ "url": fixture.url("/login?user=alice") }),
        )
        .await;
    bob.call_text(
        "browser_navigate",
        json!({ "url": fixture.url("/login?user=bob") }),
    )
    .await;
    let contexts = browser_contexts(&observer).await;
    assert_eq!(contexts.len(), 2, "one context per session: {contexts:?}");

    // Crash alice's renderer from outside.
    let targets = page_targets(&observer).await;
    let (alice_target, alice_context, _) = targets
        .iter()
        .find(|(_, _, url)| url.contains("user=alice"))
        .cloned()
        .expect("alice's page");
    let alice_page = observer
        .pages()
        .into_iter()
        .find(|page| page.target_id() == alice_target);
    let alice_page = match alice_page {
        Some(page) => page,
        None => observer
            .wait_for_page(&alice_target, Duration::from_secs(10))
            .await
            .unwrap(),
    };
    // A crashed renderer never answers Page.crash; its crash is what the test wants.
    let crash = alice_page.session().send_raw("Page.crash", json!({}));
    let _ = tokio::time::timeout(Duration::from_secs(1), crash).await;
    // Bob is untouched: his page still answers, with his own cookie.
    let text = bob
        .call_text("browser_navigate", json!({ "url": fixture.url("/whoami") }))
        .await;
    assert!(text.contains("cookie [user=bob]"), "{text}");
    // Alice gets an answer (a tool error or a recovered tab), not a hang, and her session and
    // context are still hers.
    let answer = alice
        .call("browser_navigate", json!({ "url": fixture.url("/whoami") }))
        .await;
    assert!(answer["content"].is_array(), "{answer}");
    assert!(browser_contexts(&observer).await.contains(&alice_context));

    // Idle for the timeout: both sessions end and their contexts go, in the browser itself.
    poll_until("the expired sessions' contexts are disposed of", || async {
        browser_contexts(&observer).await.is_empty()
    })
    .await;
    let gone = alice
        .post(&json!({"jsonrpc":"2.0","id":50,"method":"tools/list"}))
        .await;
    assert_eq!(gone.status, 404, "{gone:?}");

    // A new session after expiry works, and shutdown disposes of its context; the pool's own
    // tab (chromate did not open it) stays.
    let mut carol = Client::connect(port).await;
    carol
        .call_text("browser_navigate", json!({ "url": fixture.url("/whoami") }))
        .await;
    assert_eq!(browser_contexts(&observer).await.len(), 1);
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    assert!(browser_contexts(&observer).await.is_empty());
    let after = page_targets(&observer).await;
    for (target, _, _) in &before {
        assert!(
            after.iter().any(|(id, _, _)| id == target),
            "chromate closed a tab it did not open: {target}"
        );
    }
    assert!(
        external.is_alive(),
        "the pool browser must outlive chromate"
    );
    assert!(Path::new(&server.tmp_path).exists());
}

/// The observation and result text of a stdio tools/call response.
fn stdio_text(response: &Value) -> String {
    assert_ne!(response["result"]["isError"], json!(true), "{response}");
    response["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {response}"))
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isolated_stdio_servers_share_a_browser_but_not_cookies() {
    let fixture = cookie_fixture();
    let external = ExternalChromium::start().unwrap();
    let endpoint = format!("http://127.0.0.1:{}", external.port());
    let observer = chromate::Browser::connect(&endpoint).await.unwrap();
    let pool = endpoint.clone();
    let start = move |label: &str| {
        chromate_tests::McpCommand::new(env!("CARGO_BIN_EXE_chromate"))
            .label(label)
            .args(&["--isolated", "--cdp-endpoint", &pool])
            .deadline(DEADLINE)
            .spawn()
    };
    let (login_a, login_b, whoami) = (
        fixture.url("/login?user=ann"),
        fixture.url("/login?user=ben"),
        fixture.url("/whoami"),
    );
    let work = tokio::task::spawn_blocking(move || {
        let mut ann = start("isolated-ann");
        let mut ben = start("isolated-ben");
        for server in [&mut ann, &mut ben] {
            server.request(
                "initialize",
                json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}),
            );
        }
        stdio_text(&ann.call("browser_navigate", json!({ "url": login_a })));
        stdio_text(&ben.call("browser_navigate", json!({ "url": login_b })));
        let ann_sees = stdio_text(&ann.call("browser_navigate", json!({ "url": whoami })));
        let ben_sees = stdio_text(&ben.call("browser_navigate", json!({ "url": whoami })));
        (ann, ben, ann_sees, ben_sees)
    });
    let (mut ann, mut ben, ann_sees, ben_sees) = work.await.unwrap();
    assert!(ann_sees.contains("cookie [user=ann]"), "{ann_sees}");
    assert!(ben_sees.contains("cookie [user=ben]"), "{ben_sees}");
    assert_eq!(browser_contexts(&observer).await.len(), 2);
    let ended = tokio::task::spawn_blocking(move || {
        ann.close_stdin();
        ben.close_stdin();
        (
            ann.wait_exit(Duration::from_secs(10)),
            ben.wait_exit(Duration::from_secs(10)),
        )
    });
    let (a, b) = ended.await.unwrap();
    assert!(a.success() && b.success(), "{a:?} {b:?}");
    assert!(browser_contexts(&observer).await.is_empty());
    assert!(external.is_alive());
}

/// Without the `tls` feature a `wss://` endpoint is refused clearly, before any handshake.
#[cfg(not(feature = "tls"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wss_without_the_tls_feature_says_so() {
    let trusted = TlsCert::generate().unwrap();
    let proxy = tls_proxy(&trusted, 9).await;
    let endpoint = format!(
        "wss://127.0.0.1:{}/devtools/browser/x?token=pool-token",
        proxy.port
    );
    let response = tokio::task::spawn_blocking(move || {
        let mut server = chromate_tests::McpCommand::new(env!("CARGO_BIN_EXE_chromate"))
            .label("no-tls")
            .args(&["--cdp-endpoint", &endpoint])
            .deadline(DEADLINE)
            .spawn();
        server.request(
            "initialize",
            json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}),
        );
        server.call("browser_navigate", json!({ "url": "about:blank" }))
    })
    .await
    .unwrap();
    let error = &response["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "BROWSER_UNAVAILABLE", "{response}");
    assert!(error.to_string().contains("no TLS"), "{response}");
    assert!(!error.to_string().contains("pool-token"), "{response}");
}

/// A TLS front of a real Chromium's debugging port, as a browser pool has: on 127.0.0.1, with
/// `ca`'s certificate; it lets a websocket through only with `?token=pool-token` in its URL and
/// `Authorization: Bearer pool-secret`, and forwards it without the query.
// Read by the wss test, which needs the `tls` feature.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
struct TlsProxy {
    port: u16,
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn tls_proxy(cert: &TlsCert, upstream: u16) -> TlsProxy {
    use std::sync::Arc;
    let acceptor = cert.acceptor().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let task = chromate_tests::tls::serve(listener, acceptor, move |mut tls| {
        let log = log.clone();
        async move {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 16384 {
                if tls.read_exact(&mut byte).await.is_err() {
                    return;
                }
                head.push(byte[0]);
            }
            let text = String::from_utf8_lossy(&head).to_string();
            let request_line = text.lines().next().unwrap_or_default().to_owned();
            let authorized = text
                .lines()
                .any(|line| line.eq_ignore_ascii_case("authorization: bearer pool-secret"));
            log.lock().unwrap().push(request_line.clone());
            if !request_line.contains("?token=pool-token") || !authorized {
                let _ = tls
                    .write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n")
                    .await;
                return;
            }
            let without_query = {
                let mut parts = request_line.split(' ');
                let method = parts.next().unwrap_or_default();
                let target = parts.next().unwrap_or_default();
                let version = parts.next().unwrap_or_default();
                format!(
                    "{method} {} {version}",
                    target.split('?').next().unwrap_or_default()
                )
            };
            let forwarded = text.replacen(&request_line, &without_query, 1);
            let Ok(mut upstream) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
            else {
                return;
            };
            if upstream.write_all(forwarded.as_bytes()).await.is_err() {
                return;
            }
            let _ = tokio::io::copy_bidirectional(&mut tls, &mut upstream).await;
        }
    });
    TlsProxy { port, seen, task }
}

/// The browser's websocket path (`/devtools/browser/<id>`).
// Read by the wss test, which needs the `tls` feature.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
fn browser_ws_path(external: &ExternalChromium) -> String {
    let version = external.get("/json/version").unwrap();
    let body = version.split("\r\n\r\n").last().unwrap_or(&version);
    let value: Value = serde_json::from_str(body.trim()).unwrap();
    let url = value["webSocketDebuggerUrl"].as_str().unwrap().to_owned();
    let path = url.splitn(4, '/').nth(3).unwrap().to_owned();
    format!("/{path}")
}

#[cfg(feature = "tls")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wss_through_a_tls_pool_front_with_a_private_ca() {
    let fixture = cookie_fixture();
    let external = ExternalChromium::start().unwrap();
    let trusted = TlsCert::generate().unwrap();
    let untrusted = TlsCert::generate().unwrap();
    let proxy = tls_proxy(&trusted, external.port()).await;
    let rogue = tls_proxy(&untrusted, external.port()).await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &trusted.ca_pem).unwrap();
    let ca = ca_file.to_string_lossy().to_string();
    let path = browser_ws_path(&external);
    let url = fixture.url("/whoami");
    let good = format!("wss://127.0.0.1:{}{path}?token=pool-token", proxy.port);
    let wrong_token = format!("wss://127.0.0.1:{}{path}?token=guess", proxy.port);
    let bad_cert = format!("wss://127.0.0.1:{}{path}?token=pool-token", rogue.port);
    // The test's own view of the pool browser, kept for the whole test: a client that goes
    // while auto-attached would leave new tabs waiting for it.
    let observer = chromate::Browser::connect(&format!("http://127.0.0.1:{}", external.port()))
        .await
        .unwrap();
    let before = page_targets(&observer).await;
    let run = move |endpoint: String, extra: Vec<&'static str>| {
        let ca = ca.clone();
        let url = url.clone();
        move || {
            let mut args = vec!["--cdp-endpoint", endpoint.as_str(), "--cdp-ca", ca.as_str()];
            args.extend(extra);
            let mut server = chromate_tests::McpCommand::new(env!("CARGO_BIN_EXE_chromate"))
                .label("wss")
                .args(&args)
                .deadline(DEADLINE)
                .spawn();
            server.request(
                "initialize",
                json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}),
            );
            let response = server.call("browser_navigate", json!({ "url": url }));
            server.close_stdin();
            let status = server.wait_exit(Duration::from_secs(10));
            assert!(status.success(), "{status:?}");
            response
        }
    };
    let bearer = vec!["--cdp-authorization", "Bearer pool-secret"];
    // Trusted CA, the query's token and the header: the page loads through the TLS front.
    let ok = tokio::task::spawn_blocking(run(good.clone(), bearer.clone()))
        .await
        .unwrap();
    let text = stdio_text(&ok);
    assert!(text.contains("cookie [none]"), "{text}");
    assert!(
        proxy
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|line| line.contains("?token=pool-token")),
        "the query did not reach the pool: {:?}",
        proxy.seen.lock().unwrap()
    );
    // A certificate from a CA nobody trusts: BROWSER_UNAVAILABLE naming the certificate.
    let failed = tokio::task::spawn_blocking(run(bad_cert, bearer.clone()))
        .await
        .unwrap();
    let error = &failed["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "BROWSER_UNAVAILABLE", "{failed}");
    let message = error.to_string();
    assert!(message.contains("TLS handshake failed"), "{message}");
    assert!(message.to_lowercase().contains("certificate"), "{message}");
    assert!(
        !message.contains("pool-token"),
        "the token leaked into the error: {message}"
    );
    // The pool refuses a wrong token, and a missing header: BROWSER_UNAVAILABLE with the 401.
    for (endpoint, extra) in [(wrong_token, bearer.clone()), (good, vec![])] {
        let refused = tokio::task::spawn_blocking(run(endpoint, extra))
            .await
            .unwrap();
        let error = &refused["result"]["structuredContent"]["error"];
        assert_eq!(error["code"], "BROWSER_UNAVAILABLE", "{refused}");
        assert!(error.to_string().contains("401"), "{refused}");
    }
    // chromate closed only the tab it opened: the pool browser's own tabs are all there.
    let after = page_targets(&observer).await;
    for (target, _, _) in &before {
        assert!(
            after.iter().any(|(id, _, _)| id == target),
            "closed a tab it did not open"
        );
    }
    assert_eq!(
        after.len(),
        before.len(),
        "chromate left its own tab open: {after:?}"
    );
}

/// The shared browser's main process: the Chromium whose parent is the server.
fn main_browser_of(server: &HttpServer) -> Option<u32> {
    let server_pid = server.child.id();
    browsers_of(server).into_iter().find(|&pid| {
        chromate_tests::procs::ProcessInfo::read(pid).is_some_and(|info| info.ppid == server_pid)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_shared_browser_crash_fails_pending_calls_and_the_next_call_relaunches() {
    let fixture = cookie_fixture();
    fixture.route("/slow", |_| {
        Response::html("<h1>slow</h1>").body_after(Duration::from_secs(25))
    });
    let mut server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let port = server.port;
    let mut clients = Vec::new();
    for _ in 0..3 {
        let mut client = Client::connect(port).await;
        client
            .call_text("browser_navigate", json!({ "url": fixture.url("/whoami") }))
            .await;
        clients.push(client);
    }
    let first = main_browser_of(&server).expect("the shared browser");
    // A call in flight when the browser dies.
    let mut waiting = clients.remove(0);
    let slow = fixture.url("/slow");
    let pending = tokio::spawn(async move {
        let result = waiting
            .call("browser_navigate", json!({ "url": slow }))
            .await;
        (result, waiting)
    });
    poll_until("the slow page is requested", || {
        let count = fixture.request_count("/slow");
        async move { count > 0 }
    })
    .await;
    chromate_tests::procs::kill(first);
    let (result, waiting) = pending.await.unwrap();
    assert_eq!(result["isError"], json!(true), "{result}");
    clients.insert(0, waiting);
    // Every session's next call works, on a new browser.
    for client in &mut clients {
        let text = client
            .call_text("browser_navigate", json!({ "url": fixture.url("/whoami") }))
            .await;
        assert!(text.contains("cookie [none]"), "{text}");
    }
    let second = main_browser_of(&server).expect("a relaunched browser");
    assert_ne!(first, second);
    assert!(!is_alive(first));
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    poll_until("the relaunched browser is gone", || async move {
        !is_alive(second)
    })
    .await;
}

/// The structured error of a failed call.
fn error_of(result: &Value) -> Value {
    assert_eq!(result["isError"], json!(true), "{result}");
    result["structuredContent"]["error"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_navigation_is_refused_by_default_over_http_and_allowed_with_the_flag() {
    let fixture = FixtureServer::start_detached().unwrap();
    let mut server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let mut client = Client::connect(server.port).await;
    // The artifacts root itself, and a plain file: neither is shown.
    let root = format!("file://{}/", server.tmp_path.display());
    for url in ["file:///etc/hostname", root.as_str()] {
        let error = error_of(&client.call("browser_navigate", json!({ "url": url })).await);
        assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
        assert_eq!(error["detail"]["reason"], json!("file-access"), "{error}");
        assert!(
            error["hint"]
                .as_str()
                .unwrap_or_default()
                .contains("--allow-unrestricted-file-access"),
            "{error}"
        );
    }
    let opened = client
        .call(
            "browser_page",
            json!({ "action": "open", "url": "file:///etc/hostname" }),
        )
        .await;
    assert_eq!(error_of(&opened)["detail"]["reason"], json!("file-access"));
    // The shared browser refuses file: under the session's own page too (a redirect from the
    // network is refused by Chromium itself).
    let redirect = fixture.url("redirect?to=file:///etc/hostname");
    let error = error_of(
        &client
            .call("browser_navigate", json!({ "url": redirect }))
            .await,
    );
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"), "{error}");
    assert!(server.stop().success());

    let mut server = HttpServer::start(&[
        "--http",
        "127.0.0.1:0",
        "--allow-unrestricted-file-access",
        "--no-auth",
    ]);
    let mut client = Client::connect(server.port).await;
    let text = client
        .call_text("browser_navigate", json!({ "url": "file:///etc/hostname" }))
        .await;
    assert!(text.contains("\"url\":\"file:///etc/hostname\""), "{text}");
    assert!(server.stop().success());
}

/// The JSON of a successful call's first text block.
async fn call_json(client: &mut Client, tool: &str, arguments: Value) -> Value {
    let result = client.call(tool, arguments).await;
    assert_ne!(result["isError"], json!(true), "{tool}: {result}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap_or_default())
        .unwrap_or_else(|err| panic!("{tool}: {err}: {result}"))
}

/// The JSON-RPC answer to `method` in `client`'s session.
async fn rpc(client: &mut Client, method: &str, params: Value) -> Value {
    client.next += 1;
    let message = json!({"jsonrpc":"2.0","id":client.next,"method":method,"params":params});
    let answer = client.post(&message).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traces_and_saved_states_are_each_sessions_own() {
    let fixture = cookie_fixture();
    let mut server = HttpServer::start_with(
        &["--http", "127.0.0.1:0", "--no-auth"],
        &[
            ("CHROMATE_TRACE_DIR", "traces"),
            ("CHROMATE_STATE_DIR", "state"),
        ],
        |_| {},
    );
    let mut a = Client::connect(server.port).await;
    let mut b = Client::connect(server.port).await;
    // A logs in, saves the login, and records a trace.
    call_json(
        &mut a,
        "browser_trace",
        json!({ "action": "start", "name": "t1" }),
    )
    .await;
    a.call_text(
        "browser_navigate",
        json!({ "url": fixture.url("/login?user=ann") }),
    )
    .await;
    let saved = call_json(
        &mut a,
        "browser_state",
        json!({ "action": "save", "name": "login" }),
    )
    .await;
    let stopped = call_json(&mut a, "browser_trace", json!({ "action": "stop" })).await;
    let trace = stopped["trace"].as_str().unwrap().to_owned();
    let traces_root = server.tmp_path.join("traces");
    assert!(Path::new(&trace).starts_with(&traces_root), "{stopped}");
    assert!(Path::new(&trace).is_file(), "{stopped}");
    assert!(
        Path::new(saved["path"].as_str().unwrap()).starts_with(server.tmp_path.join("state")),
        "{saved}"
    );

    // B sees neither: its list is empty, the name does not exist for it, and the trace is not
    // one of its resources.
    let listed = call_json(&mut b, "browser_state", json!({ "action": "list" })).await;
    assert_eq!(listed["states"], json!([]), "{listed}");
    let refused = b
        .call(
            "browser_state",
            json!({ "action": "load", "name": "login" }),
        )
        .await;
    let error = error_of(&refused);
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
    assert_eq!(error["detail"]["available"], json!([]), "{error}");
    let resources = rpc(&mut b, "resources/list", json!({})).await;
    assert!(!resources.to_string().contains("t1"), "{resources}");
    let uri = format!("file://{trace}");
    let read = rpc(&mut b, "resources/read", json!({ "uri": uri })).await;
    assert!(read["error"].is_object(), "B read A's trace: {read}");
    // B's own trace of the same name is its own.
    let started = call_json(
        &mut b,
        "browser_trace",
        json!({ "action": "start", "name": "t1" }),
    )
    .await;
    assert_ne!(started["outDir"], stopped["outDir"], "{started} {stopped}");
    call_json(&mut b, "browser_trace", json!({ "action": "stop" })).await;

    // A still has its own, and reads its trace.
    let listed = call_json(&mut a, "browser_state", json!({ "action": "list" })).await;
    assert_eq!(listed["states"], json!(["login"]), "{listed}");
    let read = rpc(&mut a, "resources/read", json!({ "uri": uri })).await;
    assert!(read["result"]["contents"].is_array(), "{read}");
    assert!(server.stop().success());
}

/// The session directory `browser_status` names.
async fn session_dir(client: &mut Client) -> std::path::PathBuf {
    let status = call_json(client, "browser_status", json!({})).await;
    std::path::PathBuf::from(status["artifactsDir"].as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_session_leaves_its_directory_only_when_it_holds_files_the_client_was_given() {
    let fixture = cookie_fixture();
    let mut server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let page = fixture.url("/whoami");
    // A browses only: its directory (made for downloads at launch) goes with DELETE.
    let mut a = Client::connect(server.port).await;
    a.call_text("browser_navigate", json!({ "url": page }))
        .await;
    let a_dir = session_dir(&mut a).await;
    assert!(a_dir.join("downloads").is_dir(), "{}", a_dir.display());
    assert_eq!(a.delete().await.status, 204);
    assert!(!a_dir.exists(), "{} stayed", a_dir.display());
    // B records a trace, whose files it is given: its directory stays.
    let mut b = Client::connect(server.port).await;
    call_json(
        &mut b,
        "browser_trace",
        json!({ "action": "start", "name": "kept" }),
    )
    .await;
    b.call_text("browser_navigate", json!({ "url": page }))
        .await;
    let stopped = call_json(&mut b, "browser_trace", json!({ "action": "stop" })).await;
    let b_dir = session_dir(&mut b).await;
    assert_eq!(b.delete().await.status, 204);
    let trace = Path::new(stopped["trace"].as_str().unwrap());
    assert!(trace.starts_with(&b_dir) && trace.is_file(), "{stopped}");
    // C browses only and is ended by the server's shutdown: its directory goes too.
    let mut c = Client::connect(server.port).await;
    c.call_text("browser_navigate", json!({ "url": page }))
        .await;
    let c_dir = session_dir(&mut c).await;
    assert!(c_dir.is_dir(), "{}", c_dir.display());
    assert!(server.stop().success());
    assert!(!c_dir.exists(), "{} stayed", c_dir.display());
    assert!(trace.is_file(), "{stopped}");
}

/// With `--cdp-endpoint` on a pool (Browserless), each HTTP session is a pool session of its
/// own: two clients hold two of the pool's browsers, and one that ends frees its browser.
#[tokio::test(flavor = "multi_thread")]
async fn each_session_on_a_pool_holds_a_pool_session_of_its_own() {
    use chromate_tests::pool::{Browserless, PoolLimits};
    let fixture = cookie_fixture();
    let pool = Browserless::start(PoolLimits {
        concurrent: 3,
        queued: 0,
        timeout_ms: 120_000,
    })
    .unwrap();
    let endpoint = pool.ws_url();
    let mut server = HttpServer::start(&[
        "--http",
        "127.0.0.1:0",
        "--cdp-endpoint",
        &endpoint,
        "--no-auth",
    ]);
    let port = server.port;
    let mut alice = Client::connect(port).await;
    let mut bob = Client::connect(port).await;
    for (client, user) in [(&mut alice, "alice"), (&mut bob, "bob")] {
        let text = client
            .call_text(
                "browser_navigate",
                json!({ "url": fixture.url(&format!("/login?user={user}")) }),
            )
            .await;
        assert!(
            text.contains(&format!("logged in as {user}")),
            "{user}: {text}"
        );
    }
    assert_eq!(pool.browser_pids().len(), 2, "one pool browser per session");
    let text = bob
        .call_text("browser_navigate", json!({ "url": fixture.url("/whoami") }))
        .await;
    assert!(text.contains("cookie [user=bob]"), "{text}");
    // Alice ends her session: her pool browser goes, Bob's stays.
    let ended = alice.delete().await;
    assert!(ended.status < 300, "{ended:?}");
    poll_until("alice's pool browser ends", || async {
        pool.browser_pids().len() == 1
    })
    .await;
    let text = bob
        .call_text("browser_navigate", json!({ "url": fixture.url("/whoami") }))
        .await;
    assert!(text.contains("cookie [user=bob]"), "{text}");
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    poll_until("the pool runs no browser once chromate is gone", || async {
        pool.browser_pids().is_empty()
    })
    .await;
}

/// `--caps webmcp` over Streamable HTTP (docs/mcp.md#webmcp): two sessions, each a real
/// client (the Python SDK, `tests/clients/webmcp_http.py`, which listens on its session's GET
/// stream), see only their own page's `webmcp_<name>` tools and get
/// `notifications/tools/list_changed` only for their own page's changes. The GET stream is
/// the session's: without a session id, 400; with the cap off, 405 as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webmcp_page_tools_and_their_changes_are_each_sessions_own() {
    let fixture = FixtureServer::start_detached().unwrap();
    let mut server = HttpServer::start(&["--http", "127.0.0.1:0", "--caps", "webmcp"]);
    let port = server.port;
    let token = server.token.clone().unwrap();
    let endpoint = format!("http://127.0.0.1:{port}/mcp");
    let base = fixture.url("");
    let run = tokio::task::spawn_blocking(move || {
        chromate_tests::python::run_client(
            "webmcp_http.py",
            &[
                ("ENDPOINT", endpoint),
                ("TOKEN", token),
                ("FIXTURE_BASE", base),
            ],
        )
    })
    .await
    .unwrap();
    run.assert_passed("python webmcp http", 10);
    let bearer = format!("Bearer {}", server.token.clone().unwrap());
    let listen = [
        ("Accept", "text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    assert_eq!(http(port, "GET", &listen, "").await.status, 400);
    let browsers = browsers_of(&server);
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while browsers.iter().any(|&pid| is_alive(pid)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(browsers.iter().all(|&pid| !is_alive(pid)), "{browsers:?}");

    // Without the cap a session has nothing to send on its own: its GET is 405.
    let server = HttpServer::start(&["--http", "127.0.0.1:0", "--no-auth"]);
    let client = Client::connect(server.port).await;
    let answer = http(
        server.port,
        "GET",
        &[
            ("Accept", "text/event-stream"),
            ("MCP-Session-Id", &client.session),
        ],
        "",
    )
    .await;
    assert_eq!(answer.status, 405, "{answer:?}");
}
