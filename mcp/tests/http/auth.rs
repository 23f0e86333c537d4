//! HTTP tests: who may talk to the server: the Origin check, the bearer token (given, generated
//! and kept private, or none), the non-loopback bind and the `Host` check.

use super::*;

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
