//! Helpers shared by the test modules: launching a browser and proving it is gone, opening
//! pages, and locating and reading elements with panics that name the selector.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chromate::{Browser, LaunchOptions, Locator, Page, WaitUntil};
use chromate_tests::FixtureServer;

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

/// `target/<profile>/chromate`, found from this test binary (`target/<profile>/deps/e2e-…`).
/// Build it first with `cargo build -p chromate-mcp` (`.ci/test.sh` does). A binary older than
/// any source it is built from fails the test at once: the suite never tests yesterday's
/// binary.
pub(crate) fn chromate_binary() -> PathBuf {
    static CHECKED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CHECKED.get_or_init(find_fresh_binary).clone()
}

fn find_fresh_binary() -> PathBuf {
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
    let built = std::fs::metadata(&binary)
        .and_then(|meta| meta.modified())
        .unwrap_or_else(|err| panic!("{}: {err}", binary.display()));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut newer = Vec::new();
    for dir in ["mcp/src", "engine/src", "engine/build.rs", "cdp-gen/src"] {
        newest_sources(&root.join(dir), built, &mut newer);
    }
    assert!(
        newer.is_empty(),
        "the chromate binary at {} is older than its sources ({}); rebuild it with \
         `cargo build -p chromate-mcp`",
        binary.display(),
        newer.join(", ")
    );
    binary
}

/// Adds to `newer` every file under `path` modified after `built`, but unit-test files, which
/// the binary is not built from (`cargo build` would not rebuild it for them).
fn newest_sources(path: &Path, built: std::time::SystemTime, newer: &mut Vec<String>) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    let name = path.file_name().and_then(|name| name.to_str());
    if matches!(name, Some("tests" | "tests.rs" | "docs.rs")) {
        return;
    }
    if meta.is_file() {
        if meta.modified().is_ok_and(|modified| modified > built) {
            newer.push(path.display().to_string());
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        newest_sources(&entry.path(), built, newer);
    }
}

/// A fixture server on 127.0.0.1 that outlives the test's async runtime (the binary tests
/// drive it from plain threads).
pub(crate) fn fixtures() -> FixtureServer {
    FixtureServer::start_detached()
        .unwrap_or_else(|err| panic!("cannot start the fixture server: {err}"))
}

/// A port on 127.0.0.1 nothing listens on.
pub(crate) fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("local address").port()
}

/// The ref (`e7`) of the first snapshot, observation or diff line containing `needle`.
pub(crate) fn ref_of(text: &str, needle: &str) -> String {
    let Some(line) = text.lines().find(|line| line.contains(needle)) else {
        panic!("no line with {needle:?} in:\n{text}");
    };
    let line = line.trim_start().trim_start_matches(['+', '-', ' ']);
    match line.split_once(':') {
        Some((element_ref, _)) => element_ref.trim().to_owned(),
        None => panic!("no ref on {line:?}"),
    }
}
