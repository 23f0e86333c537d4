//! `Browser`: a launched or connected browser, its targets and its pages — the handle.
//!
//! Owns the connection, the process (when chromate started it), and the list of targets and
//! set-up pages that `attach.rs` keeps: browser-wide auto-attach with `flatten: true` and
//! `waitForDebuggerOnStart`, so every page — tabs chromate opens, popups, `target=_blank`
//! links — is set up before it runs. Dropping the last `Browser` handle ends the process it
//! launched; [`Browser::close`] does it gracefully and waits.

mod attach;
mod downloads;
mod network;
mod router;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::sync::watch;

use crate::cdp::{browser as cdp_browser, target};
use crate::error::{Error, Result};
use crate::launch::{self, BrowserProcess};
use crate::page::Page;
use crate::refs::ElementRef;
use crate::rt::lock;
use crate::session::Session;
use crate::transport::{connect_websocket, redact_userinfo, Connection, Wire};
use crate::wait::changes::{self, Check, Waited};

pub use crate::launch::{find_browser, LaunchOptions};
pub use crate::transport::{ConnectOptions, DEFAULT_CONNECT_TIMEOUT};

/// The oldest protocol version chromate speaks.
const MIN_PROTOCOL: (u32, u32) = (1, 3);

/// How long a tab chromate opened has to attach and finish its set-up.
pub(crate) const ATTACH_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a tab chromate opened at a URL has to fire `load` there.
pub(crate) const NEW_PAGE_LOAD: Duration = Duration::from_secs(30);
/// How long each tab that already exists at launch or connect is awaited before it returns.
const EXISTING_PAGE_WAIT: Duration = Duration::from_secs(10);
/// How long a browser that failed to start has to report its exit status.
const EXIT_STATUS_GRACE: Duration = Duration::from_secs(1);
/// How long `Browser.close` and then the exit get before the process is killed.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Facts about a target (tab, frame, worker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfo {
    /// Target id.
    pub id: String,
    /// `page`, `iframe`, `worker`, `service_worker`, `browser`, ...
    pub kind: String,
    /// Current URL.
    pub url: String,
    /// Current title.
    pub title: String,
    /// The target that opened this one (popups).
    pub opener_id: Option<String>,
}

/// A browser. Cheap to clone; the last clone dropped ends a browser chromate launched.
#[derive(Clone)]
pub struct Browser {
    inner: Arc<Inner>,
}

struct Inner {
    conn: Connection,
    session: Session,
    process: Option<BrowserProcess>,
    version: BrowserVersion,
    viewport: Option<(u32, u32)>,
    targets: Mutex<HashMap<String, TargetInfo>>,
    /// Pages that finished set-up, in attach order.
    pages: Mutex<Vec<Page>>,
    changed: watch::Sender<u64>,
    /// The ref table every page of this browser shares.
    refs: Arc<crate::refs::RefTable>,
    /// The logs journal every page of this browser writes to.
    journal: crate::journal::Journal,
    /// Mocks, block rules and the origin policy, applied on every page and frame session.
    intercept: Arc<crate::intercept::Interceptor>,
    /// Where downloads go and the downloads in flight (`downloads.rs`).
    downloads: Arc<crate::downloads::Downloads>,
    /// The browser contexts chromate created (`context.rs`), by id: their pages journal there
    /// and are not the browser's [`Browser::pages`].
    contexts: Mutex<HashMap<String, ContextState>>,
    /// Set by [`Browser::enable_webmcp`]: every page attached since gets the `WebMCP` domain
    /// in its set-up, before it runs.
    webmcp: std::sync::atomic::AtomicBool,
}

/// What the browser's page set-up needs to know about a context chromate made
/// (`context.rs` fills it in). Here, not in `context.rs`, because `context.rs` sits above the
/// browser: a context is made from a browser, and the browser only keeps this record of it.
#[derive(Debug, Clone)]
pub(crate) struct ContextState {
    pub(crate) journal: crate::journal::Journal,
    pub(crate) viewport: Option<(u32, u32)>,
}

/// What `Browser.getVersion` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserVersion {
    /// `Chrome/156.0.8078.108`.
    pub product: String,
    /// `1.3`.
    pub protocol: String,
    /// The browser's user agent.
    pub user_agent: String,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Kill first so the connection's reader sees EOF and ends its task.
        if let Some(process) = &self.process {
            process.kill();
        }
        self.conn.close("the browser handle was dropped");
    }
}

impl Browser {
    /// Launches a browser with `options`.
    ///
    /// ```no_run
    /// # async fn demo() -> chromate::Result<()> {
    /// let browser = chromate::Browser::launch(chromate::LaunchOptions::default()).await?;
    /// let page = browser.new_page("about:blank").await?;
    /// println!("{}", page.title().await?);
    /// browser.close().await;
    /// # Ok(()) }
    /// ```
    pub async fn launch(options: LaunchOptions) -> Result<Self> {
        Self::launch_with_journal(options, crate::journal::Journal::new()).await
    }

    /// [`Browser::launch`], capturing into `journal` (a command-layer session keeps one journal across
    /// browsers, so `seq` never restarts).
    pub fn launch_with_journal(
        options: LaunchOptions,
        journal: crate::journal::Journal,
    ) -> crate::rt::Boxed<'static, Result<Self>> {
        Box::pin(Self::launch_with_journal_unboxed(options, journal))
    }

    async fn launch_with_journal_unboxed(
        options: LaunchOptions,
        journal: crate::journal::Journal,
    ) -> Result<Self> {
        launch::remove_stale_profiles();
        let executable = launch::find_browser(options.executable.as_deref())?;
        let profile = launch::new_profile()?;
        let args = launch::browser_args(&options, profile.path());
        let spawned = BrowserProcess::spawn(&executable, args, profile)?;
        let conn = Connection::start(Wire::Pipe(spawned.pipes));
        let process = spawned.process;
        let session = Session::new(conn.clone(), None);
        let version = tokio::select! {
            version = session.send_with_timeout(&cdp_browser::GetVersionParams::default(), options.startup_timeout) => version,
            status = process.wait_exit() => {
                return Err(Error::LaunchFailed {
                    reason: format!("the browser exited before it was ready ({status})"),
                    stderr_tail: process.stderr_tail(),
                })
            }
        };
        let version = match version {
            Ok(version) => version,
            Err(err) => {
                // The pipe may break before the exit is reaped; give the status a moment.
                let _ = tokio::time::timeout(EXIT_STATUS_GRACE, process.wait_exit()).await;
                let reason = match process.try_exit_status() {
                    Some(status) => format!("the browser exited before it was ready ({status})"),
                    None => format!("the browser did not answer: {err}"),
                };
                let stderr_tail = process.stderr_tail();
                drop(process);
                return Err(Error::LaunchFailed {
                    reason,
                    stderr_tail,
                });
            }
        };
        Self::start(
            conn,
            session,
            Some(process),
            version,
            options.viewport,
            journal,
        )
        .await
    }

    /// Connects to a running browser: a `ws://…/devtools/browser/…` URL or `http://host:port`.
    /// Closing or dropping the handle then leaves that browser running.
    pub async fn connect(endpoint: &str) -> Result<Self> {
        Self::connect_with_journal(endpoint, crate::journal::Journal::new()).await
    }

    /// [`Browser::connect`], capturing into `journal`.
    pub async fn connect_with_journal(
        endpoint: &str,
        journal: crate::journal::Journal,
    ) -> Result<Self> {
        Self::connect_with(endpoint, &crate::ConnectOptions::default(), journal).await
    }

    /// [`Browser::connect_with_journal`] with [`crate::ConnectOptions`]: a `wss://` endpoint's
    /// private CA, an `Authorization` header.
    pub fn connect_with<'a>(
        endpoint: &'a str,
        options: &'a crate::ConnectOptions,
        journal: crate::journal::Journal,
    ) -> crate::rt::Boxed<'a, Result<Self>> {
        Box::pin(Self::connect_with_unboxed(endpoint, options, journal))
    }

    async fn connect_with_unboxed(
        endpoint: &str,
        options: &crate::ConnectOptions,
        journal: crate::journal::Journal,
    ) -> Result<Self> {
        // A pool that queues the connection holds the handshake: the whole connect is bounded,
        // so a full pool is an error the caller can act on, not a call that hangs.
        let started = std::time::Instant::now();
        let budget = options.connect_timeout;
        let failed = |reason: String| Error::ConnectFailed {
            endpoint: redact_userinfo(endpoint),
            reason,
        };
        let no_browser = || {
            failed(format!(
                "no browser within {} ms (a browser pool queues connections while all its browsers are busy)",
                budget.as_millis()
            ))
        };
        let (socket, _) =
            match tokio::time::timeout(budget, connect_websocket(endpoint, options)).await {
                Ok(connected) => connected?,
                Err(_) => return Err(no_browser()),
            };
        let conn = Connection::start(Wire::WebSocket(Box::new(socket)));
        let session = Session::new(conn.clone(), None);
        let left = budget.saturating_sub(started.elapsed());
        let version = session
            .send_with_timeout(
                &cdp_browser::GetVersionParams::default(),
                options.startup_timeout.min(left),
            )
            .await;
        let version = match version {
            Ok(version) => version,
            Err(err) => {
                // Given up on: the socket closes now, not when the pool gives up on it.
                conn.close("the browser did not answer Browser.getVersion");
                return Err(match err {
                    Error::CommandTimeout { .. } if left < options.startup_timeout => no_browser(),
                    err => failed(err.to_string()),
                });
            }
        };
        let browser = Self::start(
            conn.clone(),
            session,
            None,
            version,
            options.viewport,
            journal,
        )
        .await;
        if browser.is_err() {
            conn.close("chromate could not set the browser up");
        }
        browser
    }

    fn start(
        conn: Connection,
        session: Session,
        process: Option<BrowserProcess>,
        version: cdp_browser::GetVersionReturns,
        viewport: Option<(u32, u32)>,
        journal: crate::journal::Journal,
    ) -> crate::rt::Boxed<'static, Result<Self>> {
        Box::pin(Self::start_unboxed(
            conn, session, process, version, viewport, journal,
        ))
    }

    async fn start_unboxed(
        conn: Connection,
        session: Session,
        process: Option<BrowserProcess>,
        version: cdp_browser::GetVersionReturns,
        viewport: Option<(u32, u32)>,
        journal: crate::journal::Journal,
    ) -> Result<Self> {
        check_protocol(&version.protocol_version)?;
        journal.mark_capturing();
        let inner = Arc::new(Inner {
            conn: conn.clone(),
            session: session.clone(),
            process,
            version: BrowserVersion {
                product: version.product,
                protocol: version.protocol_version,
                user_agent: version.user_agent,
            },
            viewport,
            targets: Mutex::new(HashMap::new()),
            pages: Mutex::new(Vec::new()),
            changed: watch::channel(0).0,
            refs: Arc::default(),
            intercept: Arc::default(),
            downloads: Arc::default(),
            contexts: Mutex::new(HashMap::new()),
            journal,
            webmcp: std::sync::atomic::AtomicBool::new(false),
        });
        let weak = Arc::downgrade(&inner);
        conn.set_handler(
            None,
            Arc::new(move |method: &str, params: &RawValue| {
                attach::on_browser_event(&weak, method, params)
            }),
        );
        // When the process exits, fail everything pending at once instead of waiting on EOF.
        if let Some(process) = &inner.process {
            let exit = process.exited_watch();
            let conn = conn.clone();
            crate::rt::spawn(async move {
                let status = BrowserProcess::wait_on(exit).await;
                conn.close(&format!("the browser process exited ({status})"));
            });
        }
        let discover = session.send(&target::SetDiscoverTargetsParams::new(true));
        let attach = session.send(&target::SetAutoAttachParams::new(true, true).flatten(true));
        let (discover, attach) = tokio::join!(discover, attach);
        discover?;
        attach?;
        let browser = Browser { inner };
        // The tabs that already exist (a launched browser's first tab) are listed before
        // `launch` or `connect` returns, so `pages()` never misses one that is merely slow.
        let existing: Vec<String> = browser
            .targets()
            .into_iter()
            .filter(|t| t.kind == "page")
            .map(|t| t.id)
            .collect();
        for target_id in existing {
            let _ = browser.wait_for_page(&target_id, EXISTING_PAGE_WAIT).await;
        }
        Ok(browser)
    }

    /// The browser's request interceptor (`intercept/`).
    pub(crate) fn interceptor(&self) -> &crate::intercept::Interceptor {
        &self.inner.intercept
    }

    /// The downloads of this browser (`downloads.rs`).
    pub(crate) fn downloads(&self) -> &Arc<crate::downloads::Downloads> {
        &self.inner.downloads
    }

    /// The browser contexts chromate created, by id (`context.rs`).
    pub(crate) fn contexts(&self) -> &Mutex<HashMap<String, ContextState>> {
        &self.inner.contexts
    }

    /// Every set-up page, whatever its browser context.
    pub(crate) fn all_pages(&self) -> Vec<Page> {
        lock(&self.inner.pages)
            .iter()
            .filter(|p| !p.is_closed())
            .cloned()
            .collect()
    }

    /// The ref table shared by every page of this browser.
    pub(crate) fn ref_table(&self) -> &crate::refs::RefTable {
        &self.inner.refs
    }

    /// The logs journal of every page of this browser (console, errors, network).
    pub fn journal(&self) -> &crate::journal::Journal {
        &self.inner.journal
    }

    /// What the browser reports about itself.
    pub fn version(&self) -> &BrowserVersion {
        &self.inner.version
    }

    /// The browser's process id, when chromate launched it.
    pub fn pid(&self) -> Option<u32> {
        self.inner.process.as_ref().map(BrowserProcess::pid)
    }

    /// The browser-level CDP session.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// Every event of every session of the connection, undecoded.
    pub fn raw_events(&self) -> crate::session::RawEventStream {
        crate::session::RawEventStream::all(&self.inner.conn)
    }

    /// Whether the connection is gone.
    pub fn is_closed(&self) -> bool {
        self.inner.conn.is_closed()
    }

    /// Why the connection went away (`the browser closed the websocket`); `connection lost`
    /// while it is open.
    pub fn closed_reason(&self) -> String {
        self.inner.conn.closed_reason()
    }

    /// Every tracked target.
    pub fn targets(&self) -> Vec<TargetInfo> {
        lock(&self.inner.targets).values().cloned().collect()
    }

    /// Turns the `WebMCP` domain on for every page, those open now and those that attach later
    /// (and their out-of-process frames), so that [`Page::webmcp_tools`] is kept current
    /// (docs/mcp.md#webmcp). For a browser launched with `--enable-features=WebMCP`: Chromium
    /// 156 reports, to a `WebMCP.enable` sent after a document registered its tools, those of
    /// the main frame only, so a page must have it from its set-up on to see its frames' tools.
    pub async fn enable_webmcp(&self) {
        self.inner
            .webmcp
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let pages: Vec<Page> = lock(&self.inner.pages).clone();
        for page in pages {
            let _ = page.webmcp_enable().await;
        }
    }

    /// Open pages (tabs and popups) that finished set-up, in attach order. Pages of a
    /// [`crate::BrowserContext`] chromate made are its own, not listed here.
    pub fn pages(&self) -> Vec<Page> {
        lock(&self.inner.pages)
            .iter()
            .filter(|p| !p.is_closed() && p.context.is_none())
            .cloned()
            .collect()
    }

    /// Opens a tab, waits until it is set up, and navigates it to `url` (waiting for `load`).
    pub async fn new_page(&self, url: &str) -> Result<Page> {
        let created = self
            .inner
            .session
            .send(&target::CreateTargetParams::new("about:blank"))
            .await?;
        let page = self
            .wait_for_page(&created.target_id.0, ATTACH_TIMEOUT)
            .await?;
        if url != "about:blank" {
            page.goto(url, crate::WaitUntil::Load, NEW_PAGE_LOAD)
                .await?;
        }
        Ok(page)
    }

    /// Waits until the page with `target_id` is attached and set up.
    pub fn wait_for_page<'a>(
        &'a self,
        target_id: &'a str,
        timeout: Duration,
    ) -> crate::rt::Boxed<'a, Result<Page>> {
        Box::pin(self.wait_for_page_unboxed(target_id, timeout))
    }

    async fn wait_for_page_unboxed(&self, target_id: &str, timeout: Duration) -> Result<Page> {
        let mut changed = self.inner.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        // `Done(None)`: the connection closed (its reason is read after the check).
        let waited = changes::until(&mut changed, deadline, || {
            if let Some(page) = lock(&self.inner.pages)
                .iter()
                .find(|p| p.target_id() == target_id)
            {
                return Check::Done(Some(page.clone()));
            }
            if self.inner.conn.is_closed() {
                return Check::Done(None);
            }
            Check::Pending
        })
        .await;
        match waited {
            Waited::Done(Some(page)) => Ok(page),
            Waited::Done(None) => Err(Error::ConnectionClosed {
                reason: self.inner.conn.closed().await,
            }),
            Waited::Gone => Err(Error::PageClosed),
            Waited::TimedOut => Err(Error::Timeout {
                what: format!("page {target_id} to attach"),
                timeout,
            }),
        }
    }

    /// Waits until a page other than `known` appears (a popup or a new tab), up to `timeout`.
    pub async fn wait_for_new_page(&self, known: &[Page], timeout: Duration) -> Result<Page> {
        let mut changed = self.inner.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        let waited = changes::until(&mut changed, deadline, || {
            let found = self
                .pages()
                .into_iter()
                .find(|p| !known.iter().any(|k| k.target_id() == p.target_id()));
            match found {
                Some(page) => Check::Done(page),
                None => Check::Pending,
            }
        })
        .await;
        match waited {
            Waited::Done(page) => Ok(page),
            Waited::Gone => Err(Error::PageClosed),
            Waited::TimedOut => Err(Error::Timeout {
                what: "a new page to open".into(),
                timeout,
            }),
        }
    }

    /// Closes a tab.
    pub async fn close_page(&self, page: &Page) -> Result<()> {
        let params = target::CloseTargetParams::new(target::TargetID(page.target_id().to_string()));
        self.inner.session.send(&params).await?;
        page.shared.mark_closed("the page was closed");
        Ok(())
    }

    /// Closes the browser: `Browser.close`, then a kill if it has not exited within 2 s; waits
    /// until the process is reaped and its profile removed. A connected (not launched) browser
    /// is left running; only chromate's connection closes.
    pub async fn close(self) {
        match &self.inner.process {
            Some(process) => {
                let graceful = self
                    .inner
                    .session
                    .send_with_timeout(&cdp_browser::CloseParams::default(), CLOSE_GRACE);
                let _ = graceful.await;
                if tokio::time::timeout(CLOSE_GRACE, process.wait_exit())
                    .await
                    .is_err()
                {
                    process.kill();
                }
                process.wait_exit().await;
            }
            None => self.inner.conn.close("chromate closed the connection"),
        }
    }

    /// Ends the browser at once, for a caller whose work is done: a launched browser's process
    /// group is killed (no graceful `Browser.close`, which costs Chromium 70 to 400 ms of
    /// shutting down a profile that is deleted anyway), then this waits until it is reaped and
    /// its profile removed. A connected browser is left running, as [`Browser::close`] does.
    pub async fn kill(self) {
        match &self.inner.process {
            Some(process) => {
                process.kill();
                process.wait_exit().await;
            }
            None => self.inner.conn.close("chromate closed the connection"),
        }
    }
}

fn check_protocol(found: &str) -> Result<()> {
    let mut parts = found.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if version < MIN_PROTOCOL {
        return Err(Error::ProtocolTooOld {
            found: found.to_string(),
            needed: format!("{}.{}", MIN_PROTOCOL.0, MIN_PROTOCOL.1),
        });
    }
    Ok(())
}

impl From<target::TargetInfo> for TargetInfo {
    fn from(info: target::TargetInfo) -> Self {
        TargetInfo {
            id: info.target_id.0,
            kind: info.r#type,
            url: info.url,
            title: info.title,
            opener_id: info.opener_id.map(|id| id.0),
        }
    }
}

/// The refs this browser's snapshots issued (docs/mcp.md#refs).
impl Browser {
    /// Whether this browser issued `element_ref` in any snapshot of any of its pages (docs/mcp.md#refs).
    pub fn has_issued_ref(&self, element_ref: ElementRef) -> bool {
        self.ref_table().has_issued(element_ref.number())
    }

    /// The ref the next snapshot will mint first; every ref below it has been used.
    pub fn next_ref(&self) -> ElementRef {
        ElementRef(self.ref_table().next())
    }

    /// Continues numbering after refs an earlier browser issued (a relaunch within one
    /// session), so that no number is reused: the next mint is at least `next`.
    pub fn continue_refs_from(&self, next: ElementRef) {
        self.ref_table().advance_to(next.number());
    }
}

#[cfg(test)]
mod tests {
    use super::check_protocol;

    #[test]
    fn protocol_versions_older_than_1_3_are_refused_clearly() {
        assert!(check_protocol("1.3").is_ok());
        assert!(check_protocol("2.0").is_ok());
        let err = check_protocol("1.2").expect_err("too old");
        assert_eq!(
            err.to_string(),
            "browser protocol version 1.2 is too old; chromate needs 1.3 or newer"
        );
        assert!(check_protocol("garbage").is_err());
    }
}
