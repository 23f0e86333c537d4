//! HTTP tests: the protocol revisions over HTTP: cancellation, 2025-03-26 batches, and the
//! stateless 2026-07-28 requests with their headers and per-token browser contexts.

use super::*;

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
    success_text(tool, &answer.json()["result"])
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
