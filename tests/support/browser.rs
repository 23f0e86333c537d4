//! A browser of the test's own: launched with chromate's defaults, and closed with proof by
//! PID that its process and every descendant are gone. Shared by the engine's end-to-end tests
//! and the MCP crate's (which read the reports the binary writes in a real browser).

use std::time::{Duration, Instant};

use chromate::{Browser, LaunchOptions, Page};

/// A generous timeout for navigations in tests.
pub const NAV: Duration = Duration::from_secs(15);

/// Launches a headless browser with chromate's defaults; panics (the test's setup failed) if
/// it cannot.
pub async fn launch() -> Browser {
    match Browser::launch(LaunchOptions::default()).await {
        Ok(browser) => browser,
        Err(err) => panic!("launching chromium failed: {err}"),
    }
}

/// Closes `browser` and asserts that its process and every descendant are gone.
pub async fn close_and_check(browser: Browser) {
    let Some(pid) = browser.pid() else {
        panic!("a launched browser has a pid");
    };
    let mut pids = crate::procs::descendants(pid);
    pids.push(pid);
    browser.close().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    if let Err(alive) = crate::procs::wait_until_gone(&pids, deadline).await {
        panic!("browser processes still alive after close: {alive:?}");
    }
}

/// A new tab opened directly on `url`.
pub async fn new_page_at(browser: &Browser, url: &str) -> Page {
    browser
        .new_page(url)
        .await
        .unwrap_or_else(|e| panic!("page at {url}: {e}"))
}
