//! HTTP tests: the browser the sessions share: browser contexts through a pool, crash and
//! expiry, `wss://` to a TLS pool front, a crash of the shared browser, a pool session each.

use super::*;

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
