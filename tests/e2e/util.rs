//! Helpers shared by the test modules: launching a browser and proving it is gone.

use std::time::{Duration, Instant};

use chromate::{Browser, LaunchOptions};

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
