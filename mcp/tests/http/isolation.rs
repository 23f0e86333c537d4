//! HTTP tests: one session never reaches another's cookies, downloads, traces, saved states or
//! session directory, `file:` navigation is refused unless allowed, and isolated stdio servers
//! share a browser but not its cookies.

use super::*;

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

/// A session is its token's (docs/mcp.md#streamable-http): with two `--auth-token`s, a request
/// with the other token that names the session's id is answered as for an unknown session
/// (404), on POST, GET and DELETE alike, and the session goes on serving its own token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answers_only_the_token_that_opened_it() {
    let mut server = HttpServer::start(&[
        "--http",
        "127.0.0.1:0",
        "--auth-token",
        "token-of-agent-a",
        "--auth-token",
        "token-of-agent-b",
    ]);
    let port = server.port;
    let mut a = Client::connect_with(port, &[("Authorization", "Bearer token-of-agent-a")]).await;
    let ping = json!({"jsonrpc":"2.0","id":7,"method":"ping"}).to_string();
    let as_b = |session: &str| {
        vec![
            ACCEPT,
            JSON,
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Authorization", "Bearer token-of-agent-b"),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .chain([("MCP-Session-Id".to_owned(), session.to_owned())])
        .collect::<Vec<_>>()
    };
    let b_headers = as_b(&a.session);
    let b_headers: Vec<(&str, &str)> = b_headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let posted = http(port, "POST", &b_headers, &ping).await;
    assert_eq!(posted.status, 404, "{posted:?}");
    let listened = http(port, "GET", &b_headers, "").await;
    assert_eq!(listened.status, 404, "{listened:?}");
    let deleted = http(port, "DELETE", &b_headers, "").await;
    assert_eq!(deleted.status, 404, "{deleted:?}");
    // Still A's, and alive: B's DELETE ended nothing.
    let text = a.call_text("browser_status", json!({})).await;
    assert!(text.contains("serverPid"), "{text}");
    let status = server.stop();
    assert!(status.success(), "{status:?}");
}
