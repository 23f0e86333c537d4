//! Request interception and saved state on real Chromium: mocks that fulfil (with CORS and
//! preflights), block rules, requests from a cross-origin iframe, the origin policy on
//! navigations, sub-requests and redirect hops, the `file:` block (navigations, redirects,
//! frames), and cookies plus storage carried from one browser into a fresh one.

use std::time::Duration;

use chromate::journal::{LogData, LogFilter};
use chromate::{
    intercept::{
        BlockedBy, InterceptAction, InterceptRule, Interception, MockResponse, OriginPattern,
        OriginPolicy, PortMatch,
    },
    Browser, Error, Page, WaitUntil,
};
use chromate_tests::{FixtureServer, Response};
use serde_json::{json, Value};

use crate::util::{close_and_check, launch, new_page_at, NAV};

/// How long a page-side wait may take.
const WAIT: Duration = Duration::from_secs(10);

fn json_mock(id: &str, pattern: &str, body: &str) -> InterceptRule {
    InterceptRule::new(
        id,
        pattern,
        InterceptAction::Fulfil(MockResponse {
            status: 200,
            body: body.into(),
            content_type: "application/json".into(),
        }),
    )
}

/// The journal's network outcome rows for URLs containing `needle`: `(status or failure,
/// mocked, blockedBy)`.
fn outcomes(browser: &Browser, needle: &str) -> Vec<(String, bool, Option<String>)> {
    let filter = LogFilter {
        contains: Some(needle.to_owned()),
        ..LogFilter::default()
    };
    browser
        .journal()
        .list(&filter, 0, 100)
        .entries
        .into_iter()
        .filter_map(|entry| match entry.data {
            LogData::Response { status, mocked, .. } => Some((status.to_string(), mocked, None)),
            LogData::RequestFailed {
                failure,
                blocked_by,
                ..
            } => Some((failure, false, blocked_by)),
            _ => None,
        })
        .collect()
}

/// Asserts that the one request journalled under `needle` failed with
/// `net::ERR_BLOCKED_BY_CLIENT`, blocked by `by` (which the journal writes as `by_name`), and
/// that interception reports `url` as blocked by `by` under `rule_id`.
#[track_caller]
fn assert_blocked_by_client(
    browser: &Browser,
    needle: &str,
    url: &str,
    (by, by_name): (BlockedBy, &str),
    rule_id: Option<&str>,
) {
    assert_eq!(
        outcomes(browser, needle),
        vec![(
            "net::ERR_BLOCKED_BY_CLIENT".to_owned(),
            false,
            Some(by_name.to_owned())
        )],
        "{needle}"
    );
    assert_eq!(
        browser.interception_for_url(url),
        Some(Interception::Blocked {
            by,
            rule_id: rule_id.map(String::from)
        }),
        "{url}"
    );
}

/// Evaluates `expression` (which may return a promise), failing the test after [`WAIT`].
async fn eval(page: &Page, expression: &str) -> Value {
    match tokio::time::timeout(WAIT, page.evaluate(expression)).await {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => panic!("evaluating {expression}: {err}"),
        Err(_) => panic!("evaluating {expression}: no answer within {WAIT:?}"),
    }
}

/// Clicks `#fetch-<name>` on network.html and waits (in the page, on its own promise) until
/// `window.results[name]` is set; returns it.
async fn fetch_result(page: &Page, name: &str) -> Value {
    let script = format!(
        "new Promise(resolve => {{ document.getElementById('fetch-{name}').click(); \
         const check = () => window.results['{name}'] ? resolve(window.results['{name}']) : requestAnimationFrame(check); \
         check(); }})"
    );
    eval(page, &script).await
}

#[tokio::test]
async fn a_mock_fulfils_a_fetch_and_the_server_never_sees_it() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    browser
        .set_intercept_rules(vec![json_mock("m1", "*/api/user", r#"{"name":"ann"}"#)])
        .await
        .expect("rules");
    let page = new_page_at(&browser, &server.url("network.html")).await;
    let api = fetch_result(&page, "api").await;
    assert_eq!(api["status"], 200, "{api}");
    assert_eq!(api["body"], r#"{"name":"ann"}"#);
    assert_eq!(server.request_count("/api/user"), 0);
    let same = fetch_result(&page, "same").await;
    assert_eq!(same["status"], 200, "unmatched requests continue: {same}");
    assert_eq!(
        browser.interception_for_url(&server.url("api/user")),
        Some(Interception::Mocked {
            rule_id: "m1".into(),
            status: 200
        })
    );
    assert_eq!(
        outcomes(&browser, "/api/user"),
        vec![("200".to_owned(), true, None)],
        "journalled as mocked"
    );
    // Rules can go at any time; with none left the server answers again (404).
    browser
        .set_intercept_rules(Vec::new())
        .await
        .expect("clear");
    eval(&page, "delete window.results.api").await;
    let api = fetch_result(&page, "api").await;
    assert_eq!(api["status"], 404, "{api}");
    assert_eq!(server.request_count("/api/user"), 1);
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_cross_origin_mock_echoes_the_origin_and_answers_the_preflight() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let pattern = format!("{}/api/*", server.localhost_origin());
    browser
        .set_intercept_rules(vec![json_mock("m1", &pattern, r#"{"ok":true}"#)])
        .await
        .expect("rules");
    let page = new_page_at(&browser, &server.url("network.html")).await;
    let url = server.localhost_url("api/thing");
    let script = format!(
        "fetch('{url}', {{method: 'PUT', credentials: 'include', headers: {{'X-Token': '1', 'Content-Type': 'application/json'}}, body: '{{}}'}})\
         .then(r => r.text().then(body => ({{status: r.status, body}})), e => ({{error: String(e)}}))"
    );
    let answer = eval(&page, &script).await;
    assert_eq!(answer, json!({"status": 200, "body": r#"{"ok":true}"#}));
    assert_eq!(server.request_count("/api/thing"), 0);
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_block_rule_fails_the_request_with_blocked_by_client() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = new_page_at(&browser, &server.url("network.html")).await;
    // Added after the page loaded: interception switches on for the open tab.
    browser
        .set_intercept_rules(vec![InterceptRule::new(
            "m2",
            "*/status/*",
            InterceptAction::Block,
        )])
        .await
        .expect("rules");
    let status = fetch_result(&page, "status").await;
    assert!(status["error"].is_string(), "{status}");
    assert_eq!(server.request_count("/status/503"), 0);
    assert_blocked_by_client(
        &browser,
        "/status/503",
        &server.url("status/503"),
        (BlockedBy::Mock, "mock"),
        Some("m2"),
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_mock_answers_a_request_from_a_cross_origin_iframe() {
    let server = FixtureServer::start().await.expect("server");
    server.route("xo-fetch.html", |_| {
        Response::html(
            "<!doctype html><title>xo</title><script>fetch('/api/frame').then(r => r.text())\
             .then(body => parent.postMessage({body, origin: location.origin}, '*'), \
             e => parent.postMessage({error: String(e)}, '*'));</script>",
        )
    });
    let child = server.localhost_url("xo-fetch.html");
    server.route("xo-parent.html", move |_| {
        Response::html(format!(
            "<!doctype html><title>parent</title><script>window.addEventListener('message', \
             e => {{ window.fromFrame = e.data; }});</script><iframe src=\"{child}\"></iframe>"
        ))
    });
    let browser = launch().await;
    browser
        .set_intercept_rules(vec![json_mock("m1", "*/api/frame", r#"{"frame":1}"#)])
        .await
        .expect("rules");
    let page = new_page_at(&browser, &server.url("xo-parent.html")).await;
    let message = eval(
        &page,
        "new Promise(resolve => { const check = () => window.fromFrame ? resolve(window.fromFrame) : requestAnimationFrame(check); check(); })",
    )
    .await;
    assert_eq!(
        message,
        json!({"body": r#"{"frame":1}"#, "origin": server.localhost_origin()})
    );
    assert_eq!(server.request_count("/api/frame"), 0);
    close_and_check(browser).await;
}

fn localhost_any() -> OriginPattern {
    OriginPattern {
        scheme: "http".into(),
        host: "localhost".into(),
        port: PortMatch::Any,
    }
}

#[tokio::test]
async fn blocked_origins_fail_a_navigation_and_a_sub_request() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    browser
        .set_origin_policy(OriginPolicy {
            allowed: None,
            blocked: vec![localhost_any()],
        })
        .await
        .expect("policy");
    let page = browser.new_page("about:blank").await.expect("page");
    let blocked = server.localhost_url("nav.html");
    match page.goto(&blocked, WaitUntil::Load, NAV).await {
        Err(Error::NavigationFailed { net_error, .. }) => {
            assert_eq!(net_error, "net::ERR_BLOCKED_BY_CLIENT")
        }
        other => panic!("expected a blocked navigation, got {other:?}"),
    }
    assert_eq!(server.request_count("/nav.html"), 0);
    let url = format!(
        "{}?other={}",
        server.url("network.html"),
        server.localhost_origin()
    );
    page.goto(&url, WaitUntil::Load, NAV)
        .await
        .expect("allowed");
    let other = fetch_result(&page, "other").await;
    assert!(other["error"].is_string(), "{other}");
    assert_eq!(server.request_count("/echo"), 0);
    assert_blocked_by_client(
        &browser,
        "from=cross",
        &server.localhost_url("echo?from=cross"),
        (BlockedBy::OriginPolicy, "origin-policy"),
        None,
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn an_allow_list_blocks_a_redirect_hop_to_another_origin() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    browser
        .set_origin_policy(OriginPolicy {
            allowed: Some(vec![OriginPattern {
                scheme: "http".into(),
                host: "127.0.0.1".into(),
                port: PortMatch::Exact(server.port()),
            }]),
            blocked: Vec::new(),
        })
        .await
        .expect("policy");
    let target = server.localhost_url("nav.html");
    let redirect = server.url(&format!("redirect?to={target}"));
    let res = page.goto(&redirect, WaitUntil::Load, NAV).await;
    assert!(
        matches!(&res, Err(Error::NavigationFailed { net_error, .. }) if net_error == "net::ERR_BLOCKED_BY_CLIENT"),
        "{res:?}"
    );
    assert_eq!(server.request_count("/redirect"), 1);
    assert_eq!(server.request_count("/nav.html"), 0);
    // data: and about: are never blocked.
    page.goto("data:text/html,<title>ok</title>", WaitUntil::Load, NAV)
        .await
        .expect("data: loads");
    close_and_check(browser).await;
}

async fn log_in(browser: &Browser, server: &FixtureServer, user: &str) -> Page {
    let page = new_page_at(browser, &server.url("storage.html")).await;
    let script = format!(
        "new Promise(resolve => {{ document.getElementById('username').value = '{user}'; \
         document.getElementById('login-button').click(); \
         const check = () => document.getElementById('status').textContent.startsWith('Logged in') ? resolve(true) : requestAnimationFrame(check); \
         check(); }})"
    );
    eval(&page, &script).await;
    page
}

#[tokio::test]
async fn state_saved_on_one_page_logs_in_a_fresh_browser() {
    let server = FixtureServer::start().await.expect("server");
    let first = launch().await;
    let page = log_in(&first, &server, "ann").await;
    let cookies = first.cookies().await.expect("cookies");
    assert!(
        cookies.iter().any(|c| c.name == "user" && c.value == "ann"),
        "{cookies:?}"
    );
    let storage = page.storage().await.expect("storage");
    assert_eq!(storage.origin.as_deref(), Some(server.origin().as_str()));
    assert_eq!(storage.local.get("user").map(String::as_str), Some("ann"));
    assert_eq!(
        storage.session.get("sessionUser").map(String::as_str),
        Some("ann")
    );
    close_and_check(first).await;

    let second = launch().await;
    second.set_cookies(&cookies).await.expect("set cookies");
    let page = second.new_page("about:blank").await.expect("page");
    let at_once = page.seed_storage(&storage).await.expect("seed");
    assert!(!at_once, "about:blank is not the saved origin");
    page.goto(&server.url("storage.html"), WaitUntil::Load, NAV)
        .await
        .expect("goto");
    // The page's own script rendered what it found on load: the seed came first.
    let found = eval(
        &page,
        "[document.getElementById('found-cookie').textContent, document.getElementById('found-local').textContent, document.getElementById('found-session').textContent, document.getElementById('welcome').textContent]",
    )
    .await;
    assert_eq!(found, json!(["ann", "ann", "ann", "Welcome back, ann"]));
    // Already at the origin: seeding applies at once.
    let mut other = storage.clone();
    other.local.insert("user".into(), "bob".into());
    assert!(page.seed_storage(&other).await.expect("seed now"));
    assert_eq!(
        eval(&page, "localStorage.getItem('user')").await,
        json!("bob")
    );
    second.clear_cookies().await.expect("clear");
    assert!(second.cookies().await.expect("cookies").is_empty());
    close_and_check(second).await;
}

/// Storage keys named like an object's members (`__proto__`, `constructor`) are saved and
/// seeded as keys of their own, both into the next document and into the current one.
#[tokio::test]
async fn storage_keys_named_like_object_members_survive_a_save_and_a_seed() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = new_page_at(&browser, &server.url("storage.html")).await;
    eval(
        &page,
        "localStorage.setItem('__proto__', 'p'); localStorage.setItem('constructor', 'c'); sessionStorage.setItem('__proto__', 's'); true",
    )
    .await;
    let storage = page.storage().await.expect("storage");
    assert_eq!(
        storage.local.get("__proto__").map(String::as_str),
        Some("p")
    );
    assert_eq!(
        storage.local.get("constructor").map(String::as_str),
        Some("c")
    );
    assert_eq!(
        storage.session.get("__proto__").map(String::as_str),
        Some("s")
    );
    let read_back = "[localStorage.getItem('__proto__'), localStorage.getItem('constructor'), sessionStorage.getItem('__proto__')]";
    // Into the next document of the origin (the new-document script).
    eval(&page, "localStorage.clear(); sessionStorage.clear(); true").await;
    page.goto("about:blank", WaitUntil::Load, NAV)
        .await
        .expect("blank");
    assert!(!page.seed_storage(&storage).await.expect("seed"));
    page.goto(&server.url("storage.html"), WaitUntil::Load, NAV)
        .await
        .expect("goto");
    assert_eq!(eval(&page, read_back).await, json!(["p", "c", "s"]));
    // Into the current document (the call in chromate's world).
    eval(&page, "localStorage.clear(); sessionStorage.clear(); true").await;
    assert!(page.seed_storage(&storage).await.expect("seed now"));
    assert_eq!(eval(&page, read_back).await, json!(["p", "c", "s"]));
    close_and_check(browser).await;
}

/// The TLS fixture (`tests/support/tls.rs`) on real Chromium: a browser given the leaf's SPKI
/// pin loads the HTTPS fixture page; one without it refuses the certificate and the page never
/// gets past the handshake.
#[tokio::test]
async fn chromium_trusts_the_tls_fixture_by_its_spki_pin_only() {
    let cert = chromate_tests::tls::TlsCert::generate().expect("certificate");
    let server =
        FixtureServer::start_detached_tls_serving(chromate_tests::server::pages_dir(), &cert)
            .expect("https server");
    server.route("/secure", |_| {
        Response::html("<!doctype html><title>over tls</title><p>secure</p>")
    });
    let url = server.url("/secure");
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    let pinned = Browser::launch(chromate::LaunchOptions::default().arg(cert.chromium_arg()))
        .await
        .expect("launch");
    let page = pinned.new_page("about:blank").await.expect("page");
    page.goto(&url, WaitUntil::Load, NAV)
        .await
        .expect("navigate over https");
    let title = page.evaluate("document.title").await.expect("title");
    assert_eq!(title, json!("over tls"));
    let scheme = page.evaluate("location.protocol").await.expect("protocol");
    assert_eq!(scheme, json!("https:"));
    assert_eq!(server.request_count("/secure"), 1);
    close_and_check(pinned).await;

    let unpinned = launch().await;
    let page = unpinned.new_page("about:blank").await.expect("page");
    let err = page
        .goto(&url, WaitUntil::Load, NAV)
        .await
        .expect_err("an unknown certificate must be refused");
    assert!(
        format!("{err}").contains("ERR_CERT"),
        "a certificate error, not {err}"
    );
    assert_eq!(server.request_count("/secure"), 1, "no request got through");
    close_and_check(unpinned).await;
}

/// `networkidle` on a page whose fetch body is never read: Chromium sends no
/// `Network.loadingFinished` for that fetch, so the engine ends it once the body its
/// `Content-Length` announced has arrived, and the page reaches network idle. (Before, it
/// stayed "in flight" forever and every such wait ran to its timeout.)
#[tokio::test]
async fn networkidle_comes_although_a_fetch_body_is_never_read() {
    let server = FixtureServer::start().await.expect("server");
    server.route("/unread.html", |_| {
        Response::html(
            "<!doctype html><title>unread</title>\
             <script>fetch('/data').then((r) => { document.title = 'status ' + r.status; });</script>",
        )
    });
    server.route("/data", |_| Response::text("x".repeat(4096)));
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    page.goto(&server.url("unread.html"), WaitUntil::Load, NAV)
        .await
        .expect("navigate");
    page.wait_for_load_state(WaitUntil::NetworkIdle, WAIT)
        .await
        .expect("network idle although the fetch's body is never read");
    assert_eq!(server.request_count("/data"), 1);
    close_and_check(browser).await;
}

/// A directory with `top.html` (framing `inner.html`, whose text is `marker`) and `inner.html`.
fn file_pages(marker: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("inner.html"), format!("<p>{marker}</p>")).expect("inner");
    std::fs::write(
        dir.path().join("top.html"),
        "<title>top</title><iframe id=f src=\"inner.html\"></iframe>",
    )
    .expect("top");
    dir
}

/// Waits (one animation frame at a time, in the page) until `page` has a child frame at `url`,
/// or [`WAIT`] passes: whether it has.
async fn has_child_frame(page: &Page, url: &str) -> bool {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let found = page
            .frames()
            .iter()
            .any(|frame| frame.parent_id.is_some() && frame.url == url);
        if found || std::time::Instant::now() > deadline {
            return found;
        }
        eval(
            page,
            "new Promise(resolve => requestAnimationFrame(() => resolve(1)))",
        )
        .await;
    }
}

/// Waits (as [`has_child_frame`]) until interception decided on `url`; what it did.
async fn decision_on(browser: &Browser, page: &Page, url: &str) -> Option<Interception> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let decided = browser.interception_for_url(url);
        if decided.is_some() || std::time::Instant::now() > deadline {
            return decided;
        }
        eval(
            page,
            "new Promise(resolve => requestAnimationFrame(() => resolve(1)))",
        )
        .await;
    }
}

#[tokio::test]
async fn file_urls_blocked_fail_navigations_frames_and_redirects_to_file() {
    let marker = "seal-file-marker-7f3a";
    let dir = file_pages(marker);
    let top = format!("file://{}", dir.path().join("top.html").display());
    let inner = format!("file://{}", dir.path().join("inner.html").display());
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    assert!(!browser.file_urls_blocked(), "file: is open by default");
    let page = browser.new_page("about:blank").await.expect("page");
    // Open by default: the page and its frame load.
    page.goto(&top, WaitUntil::Load, NAV)
        .await
        .expect("file: loads");
    assert!(has_child_frame(&page, &inner).await, "{:?}", page.frames());

    browser.set_file_urls_blocked(true).await.expect("block");
    assert!(browser.file_urls_blocked());
    // A network page is not paused for it: it loads and fetches as before.
    page.goto(&server.url("nav.html"), WaitUntil::Load, NAV)
        .await
        .expect("http loads");
    let res = page.goto(&top, WaitUntil::Load, NAV).await;
    assert!(
        matches!(&res, Err(Error::NavigationFailed { net_error, .. }) if net_error == "net::ERR_BLOCKED_BY_CLIENT"),
        "{res:?}"
    );
    assert_eq!(
        browser.interception_for_url(&top),
        Some(Interception::Blocked {
            by: BlockedBy::FileAccess,
            rule_id: None
        })
    );
    // A redirect from a loopback page to a file fails, and nothing of the file shows.
    let redirect = server.url(&format!("redirect?to={inner}"));
    let res = page.goto(&redirect, WaitUntil::Load, NAV).await;
    assert!(
        matches!(&res, Err(Error::NavigationFailed { .. })),
        "{res:?}"
    );
    assert_eq!(server.request_count("/redirect"), 1);
    let text = eval(&page, "document.documentElement?.innerText ?? ''").await;
    assert!(!text.to_string().contains(marker), "{text}");

    // Lifted: the page loads again; then a page already showing a file cannot frame another.
    browser.set_file_urls_blocked(false).await.expect("lift");
    page.goto(&top, WaitUntil::Load, NAV)
        .await
        .expect("file: loads again");
    browser.set_file_urls_blocked(true).await.expect("block");
    // The frame's `load` fires for the error page that replaces a refused document too.
    let frame_url = format!("{inner}?again");
    eval(
        &page,
        &format!(
            "new Promise(resolve => {{ const f = document.getElementById('f'); \
             f.addEventListener('load', () => resolve(1), {{ once: true }}); f.src = {}; }})",
            json!(frame_url)
        ),
    )
    .await;
    assert_eq!(
        decision_on(&browser, &page, &frame_url).await,
        Some(Interception::Blocked {
            by: BlockedBy::FileAccess,
            rule_id: None
        })
    );
    assert!(
        !page.frames().iter().any(|frame| frame.url == frame_url),
        "{:?}",
        page.frames()
    );
    close_and_check(browser).await;
}
