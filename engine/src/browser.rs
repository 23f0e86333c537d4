//! `Browser`: a launched or connected browser, its targets and its pages.
//!
//! Owns the connection, the process (when chromate started it), and target tracking:
//! browser-wide auto-attach with `flatten: true` and `waitForDebuggerOnStart`, so every page —
//! tabs chromate opens, popups, `target=_blank` links — is paused until its set-up commands
//! (sent in parallel) are written, then resumed without waiting for their answers (a tab
//! opened without an opener answers them only once it runs). Frames in other processes (OOPIFs) attach to their
//! page's session and are set up the same way. Dropping the last `Browser` handle ends the
//! process it launched; [`Browser::close`] does it gracefully and waits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::sync::watch;

use crate::cdp::{
    browser as cdp_browser, decode_event, emulation, log, network, page as cdp_page, runtime,
    target,
};
use crate::error::{Error, Result};
use crate::launch::{self, BrowserProcess, LaunchOptions};
use crate::page::{Page, Shared};
use crate::session::Session;
use crate::transport::{connect_websocket, lock, redact_userinfo, Connection, Wire};

/// The oldest protocol version chromate speaks.
const MIN_PROTOCOL: (u32, u32) = (1, 3);

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
    refs: Arc<crate::snapshot::refs::RefTable>,
    /// The logs journal every page of this browser writes to.
    journal: crate::capture::Journal,
    /// Mocks, block rules and the origin policy, applied on every page and frame session.
    intercept: Arc<crate::intercept::Interceptor>,
    /// Where downloads go and the downloads in flight (`downloads.rs`).
    downloads: Arc<crate::downloads::Downloads>,
    /// The browser contexts chromate created (`context.rs`), by id: their pages journal there
    /// and are not the browser's [`Browser::pages`].
    contexts: Mutex<HashMap<String, crate::context::ContextState>>,
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
        Self::launch_with_journal(options, crate::capture::Journal::new()).await
    }

    /// [`Browser::launch`], capturing into `journal` (an MCP session keeps one journal across
    /// browsers, so `seq` never restarts).
    pub async fn launch_with_journal(
        options: LaunchOptions,
        journal: crate::capture::Journal,
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
                let _ = tokio::time::timeout(Duration::from_secs(1), process.wait_exit()).await;
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
        Self::connect_with_journal(endpoint, crate::capture::Journal::new()).await
    }

    /// [`Browser::connect`], capturing into `journal`.
    pub async fn connect_with_journal(
        endpoint: &str,
        journal: crate::capture::Journal,
    ) -> Result<Self> {
        Self::connect_with(endpoint, &crate::ConnectOptions::default(), journal).await
    }

    /// [`Browser::connect_with_journal`] with [`crate::ConnectOptions`]: a `wss://` endpoint's
    /// private CA, an `Authorization` header.
    pub async fn connect_with(
        endpoint: &str,
        options: &crate::ConnectOptions,
        journal: crate::capture::Journal,
    ) -> Result<Self> {
        let (socket, _) = connect_websocket(endpoint, options).await?;
        let conn = Connection::start(Wire::WebSocket(Box::new(socket)));
        let session = Session::new(conn.clone(), None);
        let version = session
            .send_with_timeout(
                &cdp_browser::GetVersionParams::default(),
                Duration::from_secs(30),
            )
            .await
            .map_err(|err| Error::ConnectFailed {
                endpoint: redact_userinfo(endpoint),
                reason: err.to_string(),
            })?;
        Self::start(conn, session, None, version, Some((1280, 800)), journal).await
    }

    async fn start(
        conn: Connection,
        session: Session,
        process: Option<BrowserProcess>,
        version: cdp_browser::GetVersionReturns,
        viewport: Option<(u32, u32)>,
        journal: crate::capture::Journal,
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
        });
        let weak = Arc::downgrade(&inner);
        conn.set_handler(
            None,
            Arc::new(move |method: &str, params: &RawValue| {
                on_browser_event(&weak, method, params)
            }),
        );
        // When the process exits, fail everything pending at once instead of waiting on EOF.
        if let Some(process) = &inner.process {
            let exit = process.exited_watch();
            let conn = conn.clone();
            crate::spawn(async move {
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
            let _ = browser
                .wait_for_page(&target_id, Duration::from_secs(10))
                .await;
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
    pub(crate) fn contexts(&self) -> &Mutex<HashMap<String, crate::context::ContextState>> {
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
    pub(crate) fn ref_table(&self) -> &crate::snapshot::refs::RefTable {
        &self.inner.refs
    }

    /// The logs journal of every page of this browser (console, errors, network).
    pub fn journal(&self) -> &crate::capture::Journal {
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
    pub fn raw_events(&self) -> crate::RawEventStream {
        crate::RawEventStream::all(&self.inner.conn)
    }

    /// Whether the connection is gone.
    pub fn is_closed(&self) -> bool {
        self.inner.conn.is_closed()
    }

    /// Every tracked target.
    pub fn targets(&self) -> Vec<TargetInfo> {
        lock(&self.inner.targets).values().cloned().collect()
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
            .wait_for_page(&created.target_id.0, Duration::from_secs(30))
            .await?;
        if url != "about:blank" {
            page.goto(url, crate::WaitUntil::Load, Duration::from_secs(30))
                .await?;
        }
        Ok(page)
    }

    /// Waits until the page with `target_id` is attached and set up.
    pub async fn wait_for_page(&self, target_id: &str, timeout: Duration) -> Result<Page> {
        let mut changed = self.inner.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(page) = lock(&self.inner.pages)
                .iter()
                .find(|p| p.target_id() == target_id)
            {
                return Ok(page.clone());
            }
            if self.inner.conn.is_closed() {
                return Err(Error::ConnectionClosed {
                    reason: self.inner.conn.closed().await,
                });
            }
            match tokio::time::timeout_at(deadline, changed.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(Error::PageClosed),
                Err(_) => {
                    return Err(Error::Timeout {
                        what: format!("page {target_id} to attach"),
                        timeout,
                    })
                }
            }
        }
    }

    /// Waits until a page other than `known` appears (a popup or a new tab), up to `timeout`.
    pub async fn wait_for_new_page(&self, known: &[Page], timeout: Duration) -> Result<Page> {
        let mut changed = self.inner.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let found = self
                .pages()
                .into_iter()
                .find(|p| !known.iter().any(|k| k.target_id() == p.target_id()));
            if let Some(page) = found {
                return Ok(page);
            }
            match tokio::time::timeout_at(deadline, changed.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(Error::PageClosed),
                Err(_) => {
                    return Err(Error::Timeout {
                        what: "a new page to open".into(),
                        timeout,
                    })
                }
            }
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
                let graceful = self.inner.session.send_with_timeout(
                    &cdp_browser::CloseParams::default(),
                    Duration::from_secs(2),
                );
                let _ = graceful.await;
                if tokio::time::timeout(Duration::from_secs(2), process.wait_exit())
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

/// The browser session's state handler (runs on the reader task; must not block).
fn on_browser_event(weak: &Weak<Inner>, method: &str, params: &RawValue) {
    let Some(inner) = weak.upgrade() else { return };
    match method {
        "Target.targetCreated" | "Target.targetInfoChanged" => {
            // Both events carry just `targetInfo`.
            if let Some(event) = decode_event::<target::EventTargetInfoChanged>(params) {
                let info = TargetInfo::from(event.target_info);
                lock(&inner.targets).insert(info.id.clone(), info);
                inner.changed.send_modify(|v| *v += 1);
            }
        }
        "Target.targetDestroyed" | "Target.targetCrashed" => {
            // Both events carry `targetId`; only it is needed here.
            if let Some(event) = decode_event::<target::EventTargetDestroyed>(params) {
                let target_id = event.target_id.0;
                lock(&inner.targets).remove(&target_id);
                let reason = if method == "Target.targetCrashed" {
                    "the page crashed"
                } else {
                    "the page was closed"
                };
                for page in lock(&inner.pages)
                    .iter()
                    .filter(|pg| pg.target_id() == target_id)
                {
                    page.shared.mark_closed(reason);
                }
                lock(&inner.pages).retain(|pg| pg.target_id() != target_id);
                inner.changed.send_modify(|v| *v += 1);
            }
        }
        "Target.attachedToTarget" => {
            let Some(event) = decode_event::<target::EventAttachedToTarget>(params) else {
                return;
            };
            attach_target(&inner, weak, event.session_id.as_str(), &event.target_info);
        }
        "Browser.downloadWillBegin" | "Browser.downloadProgress" => {
            let origin_of = |frame_id: &str| download_origin(&inner, frame_id);
            inner
                .downloads
                .handle_event(&inner.session, method, params, origin_of);
        }
        "Target.detachedFromTarget" => {
            if let Some(event) = decode_event::<target::EventDetachedFromTarget>(params) {
                let session_id = event.session_id.as_str();
                inner.conn.remove_handler(session_id);
                for page in lock(&inner.pages)
                    .iter()
                    .filter(|pg| pg.session().id() == Some(session_id))
                {
                    page.shared.mark_closed("the page was detached");
                }
            }
        }
        _ => {}
    }
}

/// The tab `frame_id` belongs to (a main frame's id is its tab's target id), its context and
/// journal: a tab not found yet is taken as the browser's own (its downloads are never saved
/// in a context's directory).
fn download_origin(inner: &Inner, frame_id: &str) -> crate::downloads::DownloadOrigin {
    let (page, context) = lock(&inner.pages)
        .iter()
        .find(|page| page.frames().iter().any(|frame| frame.id == frame_id))
        .map_or_else(
            || (frame_id.to_owned(), None),
            |page| (page.target_id().to_owned(), page.context.clone()),
        );
    let journal = context
        .as_deref()
        .and_then(|id| {
            lock(&inner.contexts)
                .get(id)
                .map(|state| state.journal.clone())
        })
        .unwrap_or_else(|| inner.journal.clone());
    crate::downloads::DownloadOrigin {
        page,
        context: context.map(|id| id.to_string()),
        journal,
    }
}

/// A target attached to the browser session, or a page (popup) attached to a page's session:
/// pages get their state handler at once (before their first event can arrive), are set up in
/// parallel, resumed, then listed; anything else is resumed and left alone.
fn attach_target(
    inner: &Arc<Inner>,
    weak: &Weak<Inner>,
    session_id: &str,
    target_info: &target::TargetInfo,
) {
    let session = Session::new(inner.conn.clone(), Some(session_id));
    if target_info.r#type != "page" {
        // Not ours to drive (service workers, shared workers...): let it run.
        crate::spawn(async move {
            let _ = session
                .send(&runtime::RunIfWaitingForDebuggerParams::default())
                .await;
        });
        return;
    }
    if lock(&inner.pages)
        .iter()
        .any(|p| p.target_id() == target_info.target_id.as_str())
    {
        return;
    }
    let shared = Shared::new();
    // A page of a context chromate made journals there, with that context's viewport.
    let own_context = target_info.browser_context_id.as_ref().and_then(|id| {
        let contexts = lock(&inner.contexts);
        contexts
            .get(id.as_str())
            .map(|state| (Arc::<str>::from(id.as_str()), state.clone()))
    });
    let page = Page {
        session: session.clone(),
        target_id: Arc::from(target_info.target_id.as_str()),
        shared: shared.clone(),
        refs: Arc::clone(&inner.refs),
        context: own_context.as_ref().map(|(id, _)| Arc::clone(id)),
    };
    let journal = own_context
        .as_ref()
        .map_or_else(|| inner.journal.clone(), |(_, state)| state.journal.clone());
    // Installed before this handler returns, so none of the page's events is missed.
    let capture = Capture {
        journal,
        page: Arc::clone(&page.target_id),
        context: page.context.clone(),
    };
    install_page_handler(&inner.conn, &session, &shared, weak, capture);
    let viewport = own_context
        .as_ref()
        .and_then(|(_, state)| state.viewport)
        .or(inner.viewport);
    let weak = weak.clone();
    let intercept = Arc::clone(&inner.intercept);
    crate::spawn(async move {
        // Interception is on (when rules exist) before the page runs its first request.
        let _ = intercept
            .attach(page.session(), page.context.as_deref())
            .await;
        if set_up_page(&page, viewport).await.is_ok() {
            if let Some(inner) = weak.upgrade() {
                let mut pages = lock(&inner.pages);
                // A popup may attach through both the browser and its opener: list it once.
                if !pages.iter().any(|p| p.target_id() == page.target_id()) {
                    pages.push(page);
                }
                drop(pages);
                inner.changed.send_modify(|v| *v += 1);
            }
        }
    });
}

/// Where a page's console and network go: its journal, under its tab's target id; and the
/// chromate-made browser context it belongs to, if any.
#[derive(Clone)]
struct Capture {
    journal: crate::capture::Journal,
    page: Arc<str>,
    context: Option<Arc<str>>,
}

/// Routes the page session's events into its state, and sets up frames that attach to it.
fn install_page_handler(
    conn: &Connection,
    session: &Session,
    shared: &Arc<Shared>,
    browser: &Weak<Inner>,
    capture: Capture,
) {
    let browser = browser.clone();
    let handler_shared = Arc::clone(shared);
    let handler_conn = conn.clone();
    let intercept = browser.upgrade().map(|inner| Arc::clone(&inner.intercept));
    let handler_session = session.clone();
    conn.set_handler(
        session.id().map(str::to_string),
        Arc::new(move |method: &str, params: &RawValue| {
            if method == "Target.attachedToTarget" {
                on_child_attached(&handler_conn, &handler_shared, &browser, &capture, params);
            }
            handler_shared.handle_event(None, method, params);
            capture.journal.handle_event(&capture.page, method, params);
            if let Some(intercept) = &intercept {
                intercept.on_event(&handler_session, &capture.journal, method, params);
            }
        }),
    );
}

/// An out-of-process iframe (or a worker) attached to a page: route its events into the page's
/// state under its own session, set it up, and resume it.
fn on_child_attached(
    conn: &Connection,
    shared: &Arc<Shared>,
    browser: &Weak<Inner>,
    capture: &Capture,
    params: &RawValue,
) {
    let Some(p) = decode_event::<target::EventAttachedToTarget>(params) else {
        return;
    };
    if p.target_info.r#type == "page" {
        // A popup can attach through its opener's session; it is a page like any other.
        if let Some(inner) = browser.upgrade() {
            attach_target(&inner, browser, p.session_id.as_str(), &p.target_info);
        }
        return;
    }
    let session = Session::new(conn.clone(), Some(p.session_id.as_str()));
    let intercept = browser.upgrade().map(|inner| Arc::clone(&inner.intercept));
    let is_frame = p.target_info.r#type == "iframe";
    if is_frame {
        let child_shared = Arc::clone(shared);
        let child_id: Arc<str> = Arc::from(p.session_id.as_str());
        let (journal, page_id) = (capture.journal.clone(), Arc::clone(&capture.page));
        let child_intercept = intercept.clone();
        let child_session = session.clone();
        conn.set_handler(
            Some(p.session_id.0.clone()),
            Arc::new(move |method: &str, params: &RawValue| {
                child_shared.handle_event(Some(&child_id), method, params);
                // An out-of-process frame's console and network belong to its tab.
                journal.handle_event(&page_id, method, params);
                if let Some(intercept) = &child_intercept {
                    intercept.on_event(&child_session, &journal, method, params);
                }
            }),
        );
    }
    let is_worker = p.target_info.r#type == "worker";
    if is_worker {
        // A dedicated worker's console, errors and fetches belong to its tab's journal.
        let (journal, page_id) = (capture.journal.clone(), Arc::clone(&capture.page));
        conn.set_handler(
            Some(p.session_id.0.clone()),
            Arc::new(move |method: &str, params: &RawValue| {
                journal.handle_event(&page_id, method, params)
            }),
        );
    }
    let context = capture.context.clone();
    crate::spawn(async move {
        if is_frame {
            if let Some(intercept) = &intercept {
                let _ = intercept.attach(&session, context.as_deref()).await;
            }
            let _ = set_up_frame_session(&session).await;
        }
        if is_worker {
            // Workers without a Network domain still report their console.
            let _ = tokio::join!(
                session.send(&runtime::EnableParams::default()),
                session.send(&network::EnableParams::default()),
            );
        }
        let _ = session
            .send(&runtime::RunIfWaitingForDebuggerParams::default())
            .await;
    });
}

/// Set-up of a page session: domains, lifecycle events, chromate's world on every new
/// document, auto-attach for frames, viewport; all in parallel, then resume.
async fn set_up_page(page: &Page, viewport: Option<(u32, u32)>) -> Result<()> {
    let session = page.session();
    let script = cdp_page::AddScriptToEvaluateOnNewDocumentParams::new(crate::js::install_source())
        .world_name(crate::page::WORLD_NAME)
        .run_immediately(true);
    let auto_attach = target::SetAutoAttachParams::new(true, true).flatten(true);
    let page_enable = session.send(&cdp_page::EnableParams::default());
    let lifecycle = session.send(&cdp_page::SetLifecycleEventsEnabledParams::new(true));
    let runtime_enable = session.send(&runtime::EnableParams::default());
    let network_enable = session.send(&network::EnableParams::default());
    let log_enable = session.send(&log::EnableParams::default());
    let world = session.send(&script);
    let attach = session.send(&auto_attach);
    let metrics = async {
        match viewport {
            Some((width, height)) => session
                .send(&emulation::SetDeviceMetricsOverrideParams::new(
                    i64::from(width),
                    i64::from(height),
                    1.0,
                    false,
                ))
                .await
                .map(|_| ()),
            None => Ok(()),
        }
    };
    let tree = session.send(&cdp_page::GetFrameTreeParams::default());
    // The resume is written right after the set-up commands, without waiting for their
    // answers: a tab opened without an opener (`noopener`, which every `target=_blank` link
    // implies) has no renderer until it runs, so its Page and Runtime commands are answered
    // only once it has resumed. The session delivers commands in order, so the set-up is in
    // before the target runs, as it is for every other page. Resumed whatever happens: a
    // target left waiting for its debugger would hang forever (a popup stuck on about:blank).
    let resume = session.send(&runtime::RunIfWaitingForDebuggerParams::default());
    let (
        page_enable,
        lifecycle,
        runtime_enable,
        network_enable,
        log_enable,
        world,
        attach,
        metrics,
        tree,
        resumed,
    ) = tokio::join!(
        page_enable,
        lifecycle,
        runtime_enable,
        network_enable,
        log_enable,
        world,
        attach,
        metrics,
        tree,
        resume
    );
    if let Ok(tree) = &tree {
        seed_frames(page, &tree.frame_tree);
    }
    page_enable?;
    lifecycle?;
    runtime_enable?;
    network_enable?;
    log_enable?;
    world?;
    attach?;
    metrics?;
    resumed?;
    Ok(())
}

/// Records frames that existed before the page was attached (`Page.getFrameTree`) and that no
/// event has reported since.
fn seed_frames(page: &Page, tree: &cdp_page::FrameTree) {
    // The answer is applied after the reader task has already applied any event that followed
    // it (a popup's first navigation commits quickly): never overwrite what events reported.
    if !page.shared.has_navigated(&tree.frame.id.0) {
        let mut frame = tree.frame.clone();
        // The seed records the URL without its fragment, as it always has; the frame's next
        // `Page.frameNavigated` or `navigatedWithinDocument` brings the full URL.
        frame.url_fragment = None;
        page.shared.frame_navigated(None, frame, false);
    }
    for child in tree.child_frames.iter().flatten() {
        seed_frames(page, child);
    }
}

/// Set-up of an out-of-process frame's session.
async fn set_up_frame_session(session: &Session) -> Result<()> {
    let script = cdp_page::AddScriptToEvaluateOnNewDocumentParams::new(crate::js::install_source())
        .world_name(crate::page::WORLD_NAME)
        .run_immediately(true);
    let (a, b, c, d, e) = tokio::join!(
        session.send(&cdp_page::EnableParams::default()),
        session.send(&cdp_page::SetLifecycleEventsEnabledParams::new(true)),
        session.send(&runtime::EnableParams::default()),
        session.send(&script),
        session.send(&network::EnableParams::default()),
    );
    a?;
    b?;
    c?;
    d?;
    e?;
    Ok(())
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
