//! Helpers shared by the test modules: launching a browser and proving it is gone, opening
//! pages, and locating and reading elements with panics that name the selector.

use std::time::{Duration, Instant};

use chromate::{Browser, LaunchOptions, Locator, Page, WaitUntil};
use chromate_tests::FixtureServer;

/// `target/<profile>/chromate`, found from this test binary (`target/<profile>/deps/e2e-…`);
/// build it first with `cargo build -p chromate-mcp`.
pub(crate) fn chromate_binary() -> std::path::PathBuf {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => panic!("cannot locate the test binary: {err}"),
    };
    let Some(profile_dir) = exe.parent().and_then(|deps| deps.parent()) else {
        panic!("unexpected test binary location {}", exe.display());
    };
    let binary = profile_dir.join("chromate");
    assert!(
        binary.is_file(),
        "the chromate binary is missing at {}; build it first with `cargo build -p chromate-mcp`",
        binary.display()
    );
    binary
}

/// Launches a headless browser with chromate's defaults.
pub(crate) async fn launch() -> Browser {
    match Browser::launch(LaunchOptions::default()).await {
        Ok(browser) => browser,
        Err(err) => panic!("launching chromium failed: {err}"),
    }
}

/// Closes `browser` and asserts that its process and every descendant are gone.
pub(crate) async fn close_and_check(browser: Browser) {
    let pid = browser.pid().expect("a launched browser has a pid");
    let mut pids = chromate_tests::procs::descendants(pid);
    pids.push(pid);
    browser.close().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    if let Err(alive) = chromate_tests::procs::wait_until_gone(&pids, deadline).await {
        panic!("browser processes still alive after close: {alive:?}");
    }
}

/// A generous timeout for navigations in tests.
pub(crate) const NAV: Duration = Duration::from_secs(15);

/// A new tab on about:blank that then navigates to the fixture `path` and waits for its load.
pub(crate) async fn open(browser: &Browser, server: &FixtureServer, path: &str) -> Page {
    let page = browser.new_page("about:blank").await.expect("page");
    page.goto(&server.url(path), WaitUntil::Load, NAV)
        .await
        .expect("navigate");
    page
}

/// A new tab opened directly on `url`.
pub(crate) async fn new_page_at(browser: &Browser, url: &str) -> Page {
    browser
        .new_page(url)
        .await
        .unwrap_or_else(|e| panic!("page at {url}: {e}"))
}

/// The locator for `selector`, which the test wrote and expects to parse.
pub(crate) fn locate(page: &Page, selector: &str) -> Locator {
    page.locator(selector)
        .unwrap_or_else(|e| panic!("selector {selector}: {e}"))
}

/// The `value` property of the first match of `selector`.
pub(crate) async fn value_of(page: &Page, selector: &str) -> Option<String> {
    locate(page, selector)
        .value()
        .await
        .unwrap_or_else(|e| panic!("value of {selector}: {e}"))
        .text
}
