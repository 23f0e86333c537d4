//! The engine core on real Chromium: launch and lifecycle, transport, navigation, evaluation,
//! frames, popups and dialogs.

use std::time::{Duration, Instant};

use chromate::cdp::{page as cdp_page, runtime};
use chromate::{snapshot::SnapshotOptions, Browser, Error, ErrorCode, LaunchOptions, WaitUntil};
use chromate_tests::{procs, FixtureServer};

use crate::util::{close_and_check, launch, new_page_at, NAV};

/// How long a failure that should come at once may take on a loaded 2-core machine: a
/// sixth of the 30 s command timeout a missed failure would run into.
const AT_ONCE: Duration = Duration::from_secs(5);

/// The profile directory of the browser `pid` (its `--user-data-dir`).
fn profile_of(pid: u32) -> String {
    procs::ProcessInfo::read(pid)
        .and_then(|info| {
            info.cmdline
                .iter()
                .find_map(|a| a.strip_prefix("--user-data-dir=").map(String::from))
        })
        .expect("the browser runs with --user-data-dir")
}

#[tokio::test]
async fn launch_then_close_leaves_no_process_and_no_profile() {
    let browser = launch().await;
    let pid = browser.pid().expect("pid");
    let profile = profile_of(pid);
    assert!(std::path::Path::new(&profile).is_dir());
    assert!(
        browser.version().product.contains("Chrome"),
        "{:?}",
        browser.version()
    );
    close_and_check(browser).await;
    assert!(
        !std::path::Path::new(&profile).exists(),
        "profile dir {profile} was not removed"
    );
    assert!(!procs::is_zombie(pid), "the browser was not reaped");
}

#[tokio::test]
async fn kill_ends_every_process_at_once_and_removes_the_profile() {
    let browser = launch().await;
    let page = new_page_at(&browser, "about:blank").await;
    let pid = browser.pid().expect("pid");
    let profile = profile_of(pid);
    let mut pids = procs::descendants(pid);
    assert!(!pids.is_empty(), "a browser with a tab has child processes");
    pids.push(pid);
    // Returns once the browser is reaped and its profile gone.
    browser.kill().await;
    assert!(
        !std::path::Path::new(&profile).exists(),
        "profile dir {profile} was not removed"
    );
    assert!(!procs::is_zombie(pid), "the browser was not reaped");
    let deadline = Instant::now() + Duration::from_secs(5);
    if let Err(alive) = procs::wait_until_gone(&pids, deadline).await {
        panic!("browser processes still alive after kill: {alive:?}");
    }
    assert!(
        page.is_closed() || page.title().await.is_err(),
        "the page went with it"
    );
}

/// The browser's renderers that draw Chrome's own toolbar (`--top-chrome-webui`).
fn toolbar_renderers(browser: &Browser) -> Vec<u32> {
    let pid = browser.pid().expect("pid");
    procs::descendants(pid)
        .into_iter()
        .filter(|&child| {
            // A renderer rewrites its title: the whole command line can be one argument.
            procs::ProcessInfo::read(child).is_some_and(|info| {
                info.cmdline
                    .iter()
                    .flat_map(|arg| arg.split(' '))
                    .any(|arg| arg == "--top-chrome-webui")
            })
        })
        .collect()
}

#[tokio::test]
async fn the_headless_browser_runs_no_renderer_for_chromes_toolbar() {
    let server = FixtureServer::start().await.expect("server");
    // The control: with the WebUI toolbar features left on (a later --disable-features wins),
    // the toolbar renderer appears while a page loads.
    let control = Browser::launch(LaunchOptions::default().arg("--disable-features=Translate"))
        .await
        .expect("launch");
    let _page = new_page_at(&control, &server.url("nav.html")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while toolbar_renderers(&control).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the control never started a toolbar renderer: the check below proves nothing"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    close_and_check(control).await;

    let browser = launch().await;
    let page = new_page_at(&browser, &server.url("nav.html")).await;
    page.wait_for_load_state(WaitUntil::Load, NAV)
        .await
        .expect("load");
    assert_eq!(toolbar_renderers(&browser), Vec::<u32>::new());
    close_and_check(browser).await;
}

#[tokio::test]
async fn dropping_the_browser_ends_its_process() {
    let browser = launch().await;
    let pid = browser.pid().expect("pid");
    let mut pids = procs::descendants(pid);
    pids.push(pid);
    drop(browser);
    let deadline = Instant::now() + Duration::from_secs(5);
    assert_eq!(procs::wait_until_gone(&pids, deadline).await, Ok(()));
}

#[tokio::test]
async fn owner_killed_with_sigkill_leaves_no_browser_behind() {
    let mut owner = std::process::Command::new(env!("CARGO_BIN_EXE_owner-probe"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn owner-probe");
    let stdout = owner.stdout.take().expect("stdout");
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).map(|_| line)
    });
    let line = tokio::time::timeout(Duration::from_secs(30), line)
        .await
        .expect("owner reports")
        .expect("join")
        .expect("read");
    let browser_pid: u32 = line
        .trim()
        .strip_prefix("pid ")
        .and_then(|p| p.parse().ok())
        .expect("pid line");
    let mut pids = procs::descendants(browser_pid);
    pids.push(browser_pid);
    assert!(procs::is_alive(browser_pid));
    owner.kill().expect("SIGKILL the owner");
    owner.wait().expect("reap the owner");
    let deadline = Instant::now() + Duration::from_secs(5);
    assert_eq!(
        procs::wait_until_gone(&pids, deadline).await,
        Ok(()),
        "browser outlived its killed owner"
    );
}

#[tokio::test]
async fn a_missing_browser_lists_what_was_tried() {
    let err = Browser::launch(LaunchOptions::default().executable("/nonexistent/chromium"))
        .await
        .err()
        .expect("must fail");
    assert_eq!(err.code(), ErrorCode::BrowserUnavailable);
    assert!(err.to_string().contains("/nonexistent/chromium"), "{err}");
    assert!(
        err.to_string().contains("apt-get install chromium"),
        "{err}"
    );
}

#[tokio::test]
async fn a_browser_that_exits_at_once_reports_its_exit_status() {
    let err = Browser::launch(LaunchOptions::default().executable("/bin/false"))
        .await
        .err()
        .expect("must fail");
    assert!(matches!(err, Error::LaunchFailed { .. }), "{err:?}");
    assert!(err.to_string().contains("exit status: 1"), "{err}");
}

#[tokio::test]
async fn a_thousand_pipelined_commands_are_all_answered() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let session = page.session().clone();
    let calls = (0..1000).map(|i| {
        session.send(&runtime::EvaluateParams::new(format!("{i} * 2")).return_by_value(true))
    });
    let answers = futures::future::join_all(calls).await;
    for (i, answer) in answers.into_iter().enumerate() {
        let value = answer.expect("answered").result.value;
        assert_eq!(value, Some(serde_json::json!(i * 2)));
    }
    close_and_check(browser).await;
}

#[tokio::test]
async fn typed_event_streams_deliver_the_page_load() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let mut loads = page.session().events::<cdp_page::EventLoadEventFired>();
    page.goto(&server.url("nav.html"), WaitUntil::Commit, NAV)
        .await
        .expect("navigate");
    let event = tokio::time::timeout(NAV, loads.recv())
        .await
        .expect("a load event")
        .expect("open")
        .expect("decodes");
    assert!(event.timestamp.0 > 0.0);
    close_and_check(browser).await;
}

#[tokio::test]
async fn every_navigation_wait_is_reached_on_a_fast_page() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    for wait in [
        WaitUntil::Commit,
        WaitUntil::DomContentLoaded,
        WaitUntil::Load,
        WaitUntil::NetworkIdle,
    ] {
        let nav = page
            .goto(&server.url("nav.html"), wait, NAV)
            .await
            .unwrap_or_else(|e| panic!("{wait:?}: {e}"));
        assert_eq!(nav.status, Some(200), "{wait:?}");
        assert!(nav.url.ends_with("/nav.html"), "{wait:?}: {}", nav.url);
    }
    assert_eq!(page.title().await.expect("title"), "Nav one");
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_slow_page_times_out_naming_the_state_it_waited_for() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let started = Instant::now();
    let err = page
        .goto(
            &server.url("slow-body/3000"),
            WaitUntil::Load,
            Duration::from_millis(500),
        )
        .await
        .expect_err("must time out");
    assert_eq!(err.code(), ErrorCode::TimeoutWaitingLoad, "{err}");
    assert!(err.to_string().contains("waiting for load"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the timeout was not honoured"
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn error_statuses_load_and_report_their_status() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let nav = page
        .goto(&server.url("status/404"), WaitUntil::Load, NAV)
        .await
        .expect("a 404 still loads");
    assert_eq!(nav.status, Some(404));
    close_and_check(browser).await;
}

#[tokio::test]
async fn navigating_to_a_closed_port_fails_fast_with_the_net_error() {
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let started = Instant::now();
    let err = page
        .goto(
            &format!("http://127.0.0.1:{closed_port}/"),
            WaitUntil::Load,
            NAV,
        )
        .await
        .expect_err("must fail");
    assert_eq!(err.code(), ErrorCode::NavigationFailed);
    assert!(
        err.to_string().contains("net::ERR_CONNECTION_REFUSED"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    close_and_check(browser).await;
}

#[tokio::test]
async fn evaluate_returns_json_and_reports_throws_and_unserialisable_values() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    assert_eq!(
        page.evaluate("({a: [1, 'x'], b: null})")
            .await
            .expect("value"),
        serde_json::json!({"a": [1, "x"], "b": null})
    );
    assert_eq!(
        page.evaluate("Promise.resolve(7)").await.expect("awaited"),
        serde_json::json!(7)
    );
    assert_eq!(
        page.evaluate("undefined").await.expect("undefined"),
        serde_json::Value::Null
    );
    let thrown = page.evaluate("null.x").await.expect_err("throws");
    assert_eq!(thrown.code(), ErrorCode::EvalThrew);
    assert!(thrown.to_string().contains("TypeError"), "{thrown}");
    for (expr, kind) in [
        ("() => 1", "function"),
        ("Symbol('s')", "symbol"),
        ("10n", "bigint"),
        ("document.body", "node"),
        ("window", "window"),
    ] {
        match page.evaluate(expr).await {
            Err(Error::EvalBadArg { returned_type }) => assert_eq!(returned_type, kind, "{expr}"),
            other => panic!("{expr}: expected EvalBadArg, got {other:?}"),
        }
    }
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_12_evaluate_converts_as_json_stringify_does() {
    use serde_json::json;
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let epoch = "1970-01-01T00:00:00.000Z";
    for (expr, want) in [
        ("new Date(0)", json!(epoch)),
        (
            "({when: new Date(0), list: [new Date(0)]})",
            json!({"when": epoch, "list": [epoch]}),
        ),
        ("new Date(NaN)", json!(null)),
        (
            "new URL('http://127.0.0.1/a?b=1')",
            json!("http://127.0.0.1/a?b=1"),
        ),
        ("({toJSON() { return {x: 1}; }})", json!({"x": 1})),
        ("({toJSON() { return undefined; }})", json!(null)),
        (
            "({a: {toJSON(key) { return 'key ' + key; }}})",
            json!({"a": "key a"}),
        ),
        ("new Map([[1, 2]])", json!({})),
        (
            "[1, undefined, () => 1, Symbol('s')]",
            json!([1, null, null, null]),
        ),
        ("({a: undefined, f() {}, n: NaN})", json!({"n": null})),
        ("-0", json!(0)),
        ("[-0, Infinity]", json!([0, null])),
        ("Promise.resolve(new Date(0))", json!(epoch)),
    ] {
        let got = page
            .evaluate(expr)
            .await
            .unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(got, want, "{expr}");
    }
    for (expr, kind) in [
        (
            "(() => { const a = {}; a.self = a; return a; })()",
            "circular",
        ),
        ("({n: 10n})", "bigint"),
    ] {
        match page.evaluate(expr).await {
            Err(Error::EvalBadArg { returned_type }) => assert_eq!(returned_type, kind, "{expr}"),
            other => panic!("{expr}: expected EvalBadArg, got {other:?}"),
        }
    }
    let thrown = page
        .evaluate("({toJSON() { throw new RangeError('no json here'); }})")
        .await
        .expect_err("toJSON throws");
    assert_eq!(thrown.code(), ErrorCode::EvalThrew);
    assert!(thrown.to_string().contains("no json here"), "{thrown}");
    close_and_check(browser).await;
}

#[tokio::test]
async fn same_and_cross_origin_iframes_appear_as_frames() {
    let server = FixtureServer::start().await.expect("server");
    let other = FixtureServer::start().await.expect("second server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let cross = other.localhost_url("nav2.html");
    let url = format!("{}?xo={}", server.url("iframe.html"), cross);
    page.goto(&url, WaitUntil::Load, NAV)
        .await
        .expect("navigate");
    let deadline = Instant::now() + NAV;
    loop {
        let frames = page.frames();
        let has_cross = frames
            .iter()
            .any(|f| f.url.starts_with(&other.localhost_origin()));
        let n_children = frames.iter().filter(|f| f.parent_id.is_some()).count();
        if has_cross && n_children >= 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "frames never appeared: {frames:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    close_and_check(browser).await;
}

#[tokio::test]
async fn popups_show_up_as_pages() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = new_page_at(&browser, &server.url("nav.html")).await;
    let known = browser.pages();
    // With a user gesture, as a click gives: headless Chromium may block script-only popups.
    let open =
        runtime::EvaluateParams::new(format!("window.open({:?}); 1", server.url("nav2.html")))
            .user_gesture(true);
    page.session().send(&open).await.expect("open");
    let popup = browser.wait_for_new_page(&known, NAV).await.expect("popup");
    // A popup starts on about:blank and then navigates: wait for its own document.
    let deadline = Instant::now() + NAV;
    while !popup.url().ends_with("/nav2.html") {
        assert!(
            Instant::now() < deadline,
            "the popup never reached nav2.html: {} (frames {:?}; targets {:?}; session {:?}; pages {:?})",
            popup.url(),
            popup.frames(),
            browser.targets(),
            popup.session().id(),
            browser.pages().iter().map(|p| (p.target_id().to_string(), p.session().id().map(str::to_string))).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    popup
        .wait_for_load_state(WaitUntil::Load, NAV)
        .await
        .expect("popup loads");
    assert!(browser
        .targets()
        .iter()
        .any(|t| t.opener_id.as_deref() == Some(page.target_id())));
    close_and_check(browser).await;
}

#[tokio::test]
async fn dialogs_are_noticed_and_answered_and_block_evaluation_clearly() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let err = page
        .evaluate("prompt('your name?', 'ann')")
        .await
        .expect_err("blocked by the dialog");
    assert!(
        matches!(&err, Error::DialogOpen { message } if message == "your name?"),
        "{err:?}"
    );
    assert_eq!(err.code(), ErrorCode::StateInvalid);
    let dialog = page.dialog().expect("dialog open");
    assert_eq!(
        (dialog.kind.as_str(), dialog.default_prompt.as_deref()),
        ("prompt", Some("ann"))
    );
    page.accept_dialog(Some("bob")).await.expect("accept");
    assert!(page.dialog().is_none());
    page.evaluate("window.answer = confirm('sure?') ; 1")
        .await
        .expect_err("confirm blocks");
    page.dismiss_dialog().await.expect("dismiss");
    assert_eq!(
        page.evaluate("window.answer").await.expect("value"),
        serde_json::json!(false)
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn killing_the_browser_fails_pending_commands_at_once() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let pid = browser.pid().expect("pid");
    let pending = tokio::spawn({
        let page = page.clone();
        async move { page.evaluate("new Promise(() => {})").await }
    });
    // The promise is in flight once the browser has answered a later command.
    page.evaluate("1").await.expect("still serving");
    let killed_at = Instant::now();
    procs::kill(pid);
    // At once: well within a quarter of the 30 s command timeout it would otherwise run into.
    let outcome = tokio::time::timeout(AT_ONCE, pending)
        .await
        .expect("failed at once")
        .expect("join");
    let err = outcome.expect_err("the pending command fails");
    assert_eq!(err.code(), ErrorCode::DriverError, "{err}");
    assert!(killed_at.elapsed() < AT_ONCE);
    drop(browser);
    assert_eq!(
        procs::wait_until_gone(&[pid], Instant::now() + Duration::from_secs(5)).await,
        Ok(())
    );
}

#[tokio::test]
async fn connecting_over_websocket_drives_a_browser_chromate_did_not_start() {
    let external =
        chromate_tests::ExternalChromium::start().expect("start chromium with a debugging port");
    let browser = Browser::connect(&format!("http://127.0.0.1:{}", external.port()))
        .await
        .expect("connect");
    let page = browser.new_page("about:blank").await.expect("page");
    assert_eq!(
        page.evaluate("6 * 7").await.expect("eval"),
        serde_json::json!(42)
    );
    browser.close().await;
    assert!(
        external.is_alive(),
        "closing a connection must not end a browser chromate did not start"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_is_a_load_timeout() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let err = page
        .goto(
            &server.url("hang"),
            WaitUntil::Load,
            Duration::from_millis(700),
        )
        .await
        .expect_err("never answers");
    assert_eq!(err.code(), ErrorCode::TimeoutWaitingLoad, "{err}");
    close_and_check(browser).await;
}

#[tokio::test]
async fn dedicated_workers_are_tracked_as_targets() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    page.evaluate(
        "window.w = new Worker(URL.createObjectURL(new Blob(['setInterval(() => {}, 1000)'], {type: 'text/javascript'}))); 1",
    )
    .await
    .expect("start a worker");
    let deadline = Instant::now() + NAV;
    while !browser.targets().iter().any(|t| t.kind == "worker") {
        assert!(
            Instant::now() < deadline,
            "no worker target: {:?}",
            browser.targets()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The worker was resumed after attaching: it answers messages.
    let echoed = page
        .evaluate(
            "new Promise(r => { const w = new Worker(URL.createObjectURL(new Blob(['onmessage = e => postMessage(e.data * 2)']))); w.onmessage = e => r(e.data); w.postMessage(21) })",
        )
        .await
        .expect("worker answers");
    assert_eq!(echoed, serde_json::json!(42));
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_crashed_page_is_reported_and_fails_calls_clearly() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    // Page.crash never answers (the renderer dies first): send it and do not wait.
    tokio::spawn(page.session().send(&cdp_page::CrashParams::default()));
    let deadline = Instant::now() + NAV;
    while !page.is_closed() {
        assert!(Instant::now() < deadline, "the crash was never reported");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    let err = page
        .evaluate("1")
        .await
        .expect_err("a crashed page cannot evaluate");
    assert!(
        started.elapsed() < AT_ONCE,
        "the failure took {:?}",
        started.elapsed()
    );
    assert_eq!(err.code(), ErrorCode::DriverError, "{err}");
    // The browser itself is still usable.
    let other = browser
        .new_page("about:blank")
        .await
        .expect("a new page after the crash");
    assert_eq!(
        other.evaluate("2").await.expect("eval"),
        serde_json::json!(2)
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn back_forward_and_reload_reach_the_right_documents() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = new_page_at(&browser, &server.url("nav.html")).await;
    page.evaluate("window.__left = 1")
        .await
        .expect("mark the page we leave");
    page.goto(&server.url("nav2.html"), WaitUntil::Load, NAV)
        .await
        .expect("second page");
    let back = page
        .back(WaitUntil::Load, NAV)
        .await
        .expect("back")
        .expect("an entry");
    assert!(back.url.ends_with("/nav.html"), "{}", back.url);
    assert!(page.url().ends_with("/nav.html"));
    // Back loads the page again; it does not bring back the document that was left (chromate
    // launches without the back/forward cache).
    assert_eq!(
        page.evaluate("window.__left").await.expect("eval"),
        serde_json::Value::Null
    );
    let forward = page
        .forward(WaitUntil::Load, NAV)
        .await
        .expect("forward")
        .expect("an entry");
    assert!(forward.url.ends_with("/nav2.html"), "{}", forward.url);
    assert!(page
        .forward(WaitUntil::Load, NAV)
        .await
        .expect("forward")
        .is_none());
    let before = page.document_id();
    page.evaluate("window.__reloadMarker = 1")
        .await
        .expect("mark the document");
    let reloaded = page.reload(WaitUntil::Load, NAV).await.expect("reload");
    assert_ne!(reloaded.loader_id, before, "a reload is a new document");
    assert_eq!(
        page.evaluate("window.__reloadMarker").await.expect("eval"),
        serde_json::Value::Null
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn protocol_errors_are_typed_with_method_code_and_message() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let err = page
        .session()
        .send_raw("Page.noSuchMethod", serde_json::json!({}))
        .await
        .expect_err("unknown method");
    match &err {
        Error::Protocol {
            method,
            code,
            message,
        } => {
            assert_eq!(method, "Page.noSuchMethod");
            assert_eq!(*code, -32601);
            assert!(message.contains("wasn't found"), "{message}");
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    assert_eq!(err.code(), ErrorCode::Unsupported);
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_subscriber_that_falls_behind_is_told_how_many_events_it_lost() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let mut events = page.session().raw_events();
    // More console events than the queue holds, while nobody reads.
    page.evaluate(&format!(
        "for (let i = 0; i < {}; i++) console.log(i); 1",
        chromate::session::EVENT_QUEUE + 500
    ))
    .await
    .expect("log");
    page.evaluate("1").await.expect("ordering round trip");
    let first = tokio::time::timeout(NAV, events.recv())
        .await
        .expect("an item")
        .expect("stream open");
    match first {
        Err(n_lost) => assert!(n_lost >= 500, "lost only {n_lost}"),
        Ok(message) => panic!("expected a lag report, got {}", message.method),
    }
    // The connection itself kept serving.
    assert_eq!(
        page.evaluate("3").await.expect("eval"),
        serde_json::json!(3)
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_12_networkidle_waits_for_a_fetch_started_after_load() {
    let server = FixtureServer::start().await.expect("server");
    server.route("late-fetch.html", |_| {
        chromate_tests::Response::html(
            "<!doctype html><title>Late fetch</title><p id=\"state\">idle</p><script>\
             window.fetchDoneAt = null;\
             window.startFetch = function (path) {\
               fetch(path).then(r => r.text()).then(() => { window.fetchDoneAt = performance.now(); });\
               return true;\
             };</script>",
        )
    });
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    page.goto(&server.url("late-fetch.html"), WaitUntil::NetworkIdle, NAV)
        .await
        .expect("navigate until the network is idle");
    // Chrome's own networkIdle has fired for this document; a fetch started now must still
    // hold the wait until it ends and the network has been quiet for 500 ms.
    assert_eq!(
        page.evaluate("window.startFetch('/delay/1500/echo')")
            .await
            .expect("start the fetch"),
        serde_json::json!(true)
    );
    let started = Instant::now();
    page.wait_for_load_state(WaitUntil::NetworkIdle, NAV)
        .await
        .expect("networkidle");
    let waited = started.elapsed();
    let quiet_ms = page
        .evaluate("window.fetchDoneAt === null ? -1 : performance.now() - window.fetchDoneAt")
        .await
        .expect("read the page");
    let quiet_ms = quiet_ms.as_f64().unwrap_or(-1.0);
    assert!(
        quiet_ms >= 400.0,
        "networkidle answered {waited:?} after the fetch started, {quiet_ms} ms after it ended"
    );
    // A request that never ends keeps the network busy until the deadline.
    page.evaluate("window.startFetch('/hang')")
        .await
        .expect("start a hanging fetch");
    let err = page
        .wait_for_load_state(WaitUntil::NetworkIdle, Duration::from_millis(1200))
        .await
        .expect_err("never idle");
    assert!(
        matches!(&err, Error::TimeoutWaitingLoad { state, .. } if state == "networkidle"),
        "{err:?}"
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_12_a_target_blank_link_opens_a_listed_page() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = new_page_at(&browser, &server.url("popup.html")).await;
    let known = browser.pages();
    page.locator("#blank-link")
        .expect("selector")
        .click()
        .await
        .expect("click the link");
    let opened = browser.wait_for_new_page(&known, NAV).await;
    let opened = opened.unwrap_or_else(|e| {
        panic!(
            "the target=_blank tab is not a page: {e} (targets {:?})",
            browser.targets()
        )
    });
    let deadline = Instant::now() + NAV;
    while !opened.url().ends_with("/nav.html") {
        assert!(
            Instant::now() < deadline,
            "never reached nav.html: {}",
            opened.url()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Set up like any page: lifecycle events arrive and chromate's world runs in it.
    opened
        .wait_for_load_state(WaitUntil::Load, NAV)
        .await
        .expect("the new tab loads");
    let heading = opened
        .locator("h1")
        .expect("selector")
        .text()
        .await
        .expect("read the heading");
    assert!(heading.text.is_some_and(|t| !t.is_empty()));
    assert!(
        opened.target_id() != page.target_id() && browser.pages().len() == known.len() + 1,
        "{:?}",
        browser.targets()
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn the_quiet_period_after_load_waits_for_results_a_script_fetches_after_load() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    page.goto(&server.url("late-results.html"), WaitUntil::Load, NAV)
        .await
        .expect("navigate");
    let full = SnapshotOptions {
        max_lines: 5000,
        ..SnapshotOptions::default()
    };
    let at_load = page
        .snapshot(full.clone())
        .await
        .expect("snapshot")
        .render();
    assert!(!at_load.contains("Result 1\""), "{at_load}");
    let settled = page
        .wait_for_settled(chromate::page::SETTLE_WINDOW, chromate::page::SETTLE_CAP)
        .await
        .expect("settle");
    assert!(settled.quiet, "{settled:?}");
    let rendered = page
        .snapshot(full.clone())
        .await
        .expect("snapshot")
        .render();
    assert!(
        rendered.contains("link \"Result 75\"") && rendered.contains("In Names (75)"),
        "{rendered}"
    );
    // Content added by timers and an animation frame the page set during load, with no
    // request at all, is there once the wait ends.
    let rendered = settled_view(&page, &server.url("late-timer.html"), &full).await;
    for text in ["Early result", "Timer result", "Frame result"] {
        assert!(rendered.contains(text), "{text}: {rendered}");
    }
    // Only the network at work after `load` (a 500 and a refused connection): the page is
    // asked rather than waited out, and what the responses' handler wrote is there.
    let rendered = settled_view(&page, &server.url("console.html"), &full).await;
    assert!(rendered.contains("status 500, failed"), "{rendered}");
    // A page with nothing pending at `load` costs one check; so does a clock whose text
    // changes every 10 ms (only elements added or removed count, and intervals are not work).
    for quiet_page in ["bench-50.html", "login.html", "clock.html"] {
        page.goto(&server.url(quiet_page), WaitUntil::Load, NAV)
            .await
            .expect("navigate");
        let settled = page
            .wait_for_settled(chromate::page::SETTLE_WINDOW, chromate::page::SETTLE_CAP)
            .await
            .expect("settle");
        assert!(
            settled.quiet && settled.checks == 1,
            "{quiet_page}: {settled:?}"
        );
        // The watch starts once the document is parsed: the parser's insertions are not
        // counted (watching them would slow the page's load).
        assert_eq!(settled.mutations, 0, "{quiet_page}: {settled:?}");
    }
    // A page that keeps adding elements is left at the cap, not waited for longer.
    page.goto(&server.url("late-timer.html?poll=1"), WaitUntil::Load, NAV)
        .await
        .expect("navigate");
    let settled = page
        .wait_for_settled(chromate::page::SETTLE_WINDOW, chromate::page::SETTLE_CAP)
        .await
        .expect("settle");
    assert!(!settled.quiet, "{settled:?}");
    close_and_check(browser).await;
}

/// Reads, in the page, how many things `js/pending.js` counts beyond `base` at each step of a
/// request's life: right after the call, in the page's handler of its answer, and once a few
/// tasks have run after that (`drained`: back to `base`).
const ANSWER_STEPS: &str = r#"(async () => {
  const read = () => window[Symbol.for("chromate.pending")]().pending;
  const drain = async () => {
    const channel = new MessageChannel();
    for (let turn = 0; turn < 200 && read() > 0; turn++) {
      await new Promise((resolve) => { channel.port1.onmessage = resolve; channel.port2.postMessage(null); });
    }
    return read();
  };
  const base = await drain();
  const steps = { base };
  const call = fetch("/delay/100/echo?step=1");
  steps.fetchCalled = read();
  const response = await call;
  steps.inFetchHandler = read();
  const body = response.json();
  steps.bodyCalled = read();
  await body;
  steps.inBodyHandler = read();
  steps.fetchDrained = await drain();
  steps.refused = await fetch("http://127.0.0.1:1/closed-port").then(() => "answered", (error) => error.name);
  steps.refusedDrained = await drain();
  steps.xhr = await new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open("GET", "/delay/100/echo?step=2");
    request.onload = () => resolve({ inHandler: read(), status: request.status });
    request.send();
    steps.xhrSent = read();
  });
  steps.xhrDrained = await drain();
  return steps;
})()"#;

#[tokio::test]
async fn an_answer_counts_as_pending_until_the_pages_handlers_of_it_have_run() {
    // The network's end, read from CDP events, can reach chromate before the page's handler of
    // the response has run (CI saw a settle end between a search's two batches of results):
    // what the page asked for counts as pending work until its handlers ran.
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser
        .new_page(&server.url("login.html"))
        .await
        .expect("page");
    let steps = page.evaluate(ANSWER_STEPS).await.expect("steps");
    let base = steps["base"].as_u64().expect("base");
    let expected = serde_json::json!({
        "base": base,
        "fetchCalled": base + 1,
        "inFetchHandler": base + 1,
        "bodyCalled": base + 2,
        "fetchDrained": base,
        "refused": "TypeError",
        "refusedDrained": base,
        "xhrSent": base + 1,
        "xhr": { "inHandler": base + 1, "status": 200 },
        "xhrDrained": base,
    });
    let mut seen = steps.clone();
    // The body's handler runs once the fetch's own count may or may not have ended (the two
    // are separate tasks): at least the body's read is still counted there.
    let in_body = seen
        .as_object_mut()
        .and_then(|steps| steps.remove("inBodyHandler"))
        .and_then(|value| value.as_u64());
    assert!(
        in_body.is_some_and(|count| count > base),
        "the body's handler runs while its read is counted: {steps}"
    );
    assert_eq!(seen, expected, "{steps}");
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_quiet_page_right_after_a_busy_one_settles_in_one_check() {
    // Right after console.html (a 500, a refused fetch, a missing image, logs, errors), a quiet
    // page still costs one check, round after round: nothing of the page it replaced counts as
    // its work.
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    for round in 0..5 {
        page.goto(&server.url("console.html"), WaitUntil::Load, NAV)
            .await
            .expect("navigate");
        page.goto(&server.url("bench-50.html"), WaitUntil::Load, NAV)
            .await
            .expect("navigate");
        let settled = page
            .wait_for_settled(chromate::page::SETTLE_WINDOW, chromate::page::SETTLE_CAP)
            .await
            .expect("settle");
        assert!(
            settled.quiet && settled.checks == 1,
            "round {round}: {settled:?}"
        );
    }
    close_and_check(browser).await;
}

/// Navigates to `url`, waits until the page settles (asserting it came to rest before the cap)
/// and renders the snapshot taken then.
async fn settled_view(page: &chromate::Page, url: &str, options: &SnapshotOptions) -> String {
    page.goto(url, WaitUntil::Load, NAV)
        .await
        .expect("navigate");
    let settled = page
        .wait_for_settled(chromate::page::SETTLE_WINDOW, chromate::page::SETTLE_CAP)
        .await
        .expect("settle");
    assert!(settled.quiet, "{url}: {settled:?}");
    page.snapshot(options.clone())
        .await
        .expect("snapshot")
        .render()
}

/// Every path under `dir` (not following symlinks), relative to it.
fn tree(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            found.push(
                path.strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn a_killed_browser_leaves_nothing_in_the_temp_dir_and_no_crash_dumps_outside_its_profile() {
    let temp = tempfile::tempdir().expect("temp");
    let home = tempfile::tempdir().expect("home");
    let mut owner = std::process::Command::new(env!("CARGO_BIN_EXE_owner-probe"))
        .arg("kill")
        .env("TMPDIR", temp.path())
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("BREAKPAD_DUMP_LOCATION")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn owner-probe");
    let owner_pid = owner.id();
    let stdout = owner.stdout.take().expect("stdout");
    let lines = tokio::task::spawn_blocking(move || {
        let lines: Vec<String> = std::io::BufRead::lines(std::io::BufReader::new(stdout))
            .map_while(Result::ok)
            .collect();
        (lines, owner.wait())
    });
    let Ok(joined) = tokio::time::timeout(Duration::from_secs(30), lines).await else {
        procs::kill(owner_pid);
        panic!("owner-probe did not finish within 30 s");
    };
    let (lines, status) = joined.expect("join");
    assert!(status.expect("reap").success(), "{lines:?}");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("killed"),
        "{lines:?}"
    );
    let browser_pid: u32 = lines[0]
        .strip_prefix("pid ")
        .and_then(|p| p.parse().ok())
        .expect("pid line");
    assert!(!procs::is_alive(browser_pid));
    // No profile, no `org.chromium.Chromium.*` singleton directory: nothing at all.
    assert_eq!(tree(temp.path()), Vec::<String>::new());
    // No `~/.config/chromium/Crash Reports` (Crashpad's database) in the home directory.
    let home_tree = tree(home.path());
    assert!(
        !home_tree
            .iter()
            .any(|path| path.contains("Crash Reports") || path.contains("chromium")),
        "{home_tree:?}"
    );
}
