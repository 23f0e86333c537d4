//! Browsers for tests. A browser of the test's own ([`launch`], [`close_and_check`]): launched
//! with chromate's defaults, and closed with proof by PID that its process and every
//! descendant are gone. Or a [`Fixture`]: a fresh browser context of the one browser a test
//! binary shares ([`shared`]), closed at the binary's exit with the same proof and a
//! [`LeakGuard`](crate::LeakGuard). Used by the engine's end-to-end tests and the MCP crate's
//! (which read the reports the binary writes in a real browser).
//!
//! Sharing saves a launch per test; it suits only tests that own nothing browser-wide: refs
//! are numbered per browser, the journal and the pid are the browser's, and only one window
//! has the focus.

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

/// The browser every test of a test binary may share (one launch instead of one per test),
/// in a fresh browser context per test ([`Browser::new_context`]: cookies, storage, tabs and
/// logs of its own).
///
/// Launched on first use on a thread of its own whose runtime drives the connection for the
/// rest of the process (a test's runtime ends with the test). When the test binary exits (an
/// `atexit` hook, which runs whether the tests passed or not), the browser is closed and its
/// process and every descendant proved gone by PID, and a [`LeakGuard`](crate::LeakGuard)
/// taken before the launch must find no Chromium process of this binary still alive: a test
/// that left one behind fails the run (exit status 101, the processes listed on stderr).
pub fn shared() -> Browser {
    static SHARED: std::sync::OnceLock<Browser> = std::sync::OnceLock::new();
    SHARED.get_or_init(start_shared).clone()
}

/// Asks the shared browser's thread to close it, with the answer (what is still alive).
static CLOSE: std::sync::Mutex<Option<std::sync::mpsc::Sender<std::sync::mpsc::Sender<String>>>> =
    std::sync::Mutex::new(None);

fn start_shared() -> Browser {
    let guard = crate::LeakGuard::new();
    let (launched, browser) = std::sync::mpsc::channel();
    let (close, close_requests) = std::sync::mpsc::channel::<std::sync::mpsc::Sender<String>>();
    let spawned = std::thread::Builder::new()
        .name("shared-browser".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(err) => panic!("the shared browser's runtime: {err}"),
            };
            let browser = runtime.block_on(launch());
            let _ = launched.send(browser.clone());
            // Parked until the exit hook asks; then closed, with the proof by PID.
            let Ok(answer) = close_requests.recv() else {
                return;
            };
            let pid = browser.pid();
            let mut pids = pid.map(crate::procs::descendants).unwrap_or_default();
            pids.extend(pid);
            runtime.block_on(browser.close());
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut alive = match crate::procs::wait_until_gone_blocking(&pids, deadline) {
                Ok(()) => String::new(),
                Err(alive) => {
                    format!("the shared browser's processes {alive:?} outlived its close\n")
                }
            };
            if let Err(leaked) = runtime.block_on(guard.wait_for_no_leaks(Duration::from_secs(10)))
            {
                alive.push_str(&crate::procs::describe(&leaked));
            }
            let _ = answer.send(alive);
        });
    if let Err(err) = spawned {
        panic!("cannot start the shared browser's thread: {err}");
    }
    let Ok(browser) = browser.recv() else {
        panic!("the shared browser did not launch");
    };
    *CLOSE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(close);
    #[allow(unsafe_code)]
    // SAFETY: `atexit` only records the function pointer; `close_shared` is an `extern "C"`
    // function that does not unwind (it catches nothing and calls no panicking code).
    let registered = unsafe { libc::atexit(close_shared) };
    assert_eq!(
        registered, 0,
        "cannot register the shared browser's exit hook"
    );
    browser
}

/// The exit hook: closes the shared browser and fails the run if anything of it, or any other
/// Chromium this binary started, is still alive.
extern "C" fn close_shared() {
    let close = CLOSE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    let Some(close) = close else {
        return;
    };
    let (answer, alive) = std::sync::mpsc::channel();
    let report = if close.send(answer).is_ok() {
        alive
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| "the shared browser did not close within 30 s\n".to_owned())
    } else {
        "the shared browser's thread is gone\n".to_owned()
    };
    if !report.is_empty() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "leaked browser processes:\n{report}");
        #[allow(unsafe_code)]
        // SAFETY: `_exit` ends the process at once; nothing after it runs.
        unsafe {
            libc::_exit(101)
        };
    }
}

/// A browser context of [`shared`] for one test, with the fixture server it reads pages from.
///
/// [`Fixture::finish`] disposes of the context and checks that every tab of it is gone from
/// the browser. A test that needs a browser of its own (its pid, its journal, its refs, its
/// focus, its lifecycle) launches one with [`launch`] instead.
pub struct Fixture {
    /// The fixture server on 127.0.0.1, the test's own.
    pub server: crate::FixtureServer,
    /// The test's browser context.
    pub context: chromate::BrowserContext,
}

impl Fixture {
    /// A fresh fixture server and browser context; panics (the setup failed) if either fails.
    pub async fn start() -> Self {
        let server = match crate::FixtureServer::start().await {
            Ok(server) => server,
            Err(err) => panic!("cannot start the fixture server: {err}"),
        };
        let context = match shared()
            .new_context(chromate::ContextOptions::default())
            .await
        {
            Ok(context) => context,
            Err(err) => panic!("cannot create a browser context: {err}"),
        };
        Self { server, context }
    }

    /// A new tab of the context on the fixture `path`, loaded.
    pub async fn open(&self, path: &str) -> Page {
        self.new_page(&self.server.url(path)).await
    }

    /// A new tab of the context on `url`, loaded.
    pub async fn new_page(&self, url: &str) -> Page {
        match self.context.new_page(url).await {
            Ok(page) => page,
            Err(err) => panic!("page at {url}: {err}"),
        }
    }

    /// Disposes of the context and asserts that none of its tabs is left in the browser.
    pub async fn finish(self) {
        let browser = shared();
        let tabs: Vec<String> = self
            .context
            .pages()
            .iter()
            .map(|page| page.target_id().to_owned())
            .collect();
        if let Err(err) = self.context.dispose().await {
            panic!("disposing of the test's browser context: {err}");
        }
        // The browser's own list, asked after the dispose was answered.
        let targets = match browser
            .session()
            .send_raw("Target.getTargets", serde_json::json!({}))
            .await
        {
            Ok(targets) => targets,
            Err(err) => panic!("Target.getTargets: {err}"),
        };
        let left: Vec<&str> = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|target| target["targetId"].as_str())
            .filter(|id| tabs.iter().any(|tab| tab == id))
            .collect();
        assert!(left.is_empty(), "tabs of the test's context left: {left:?}");
    }
}
