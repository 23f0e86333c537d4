//! The tool backend: state one MCP session holds across tool calls.
//!
//! Owns: the configuration, the artifact store, the mock table, the log
//! journal's cursor, the trace state, the browser (launched lazily by the
//! first call that needs a page, docs/mcp.md#run), the tabs and their `p<N>` ids
//! (docs/tools.md#browser_page--tabs), the snapshot baseline (docs/mcp.md#refs), the downloads directory handed to
//! every browser and the `download:` lines of observations (docs/mcp.md#downloads), and the
//! two hooks the server calls
//! around tools: [`ToolSession::observe`] after a successful observation-bearing
//! call (docs/mcp.md#observations) and [`ToolSession::shutdown`] at exit (docs/mcp.md#run).
//!
//! Does not own the browser's internals (the engine) or tool semantics
//! (`tools/`). The log journal itself is the engine's (`chromate::Journal`);
//! the session keeps one and hands it to every browser it launches, so `seq`
//! never restarts and entries survive a relaunch (docs/mcp.md#run, docs/mcp.md#logs).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::config::Config;
use crate::dispatch::artifacts::ArtifactStore;
use crate::dispatch::call::Cancel;
use crate::dispatch::error::{from_engine, Observation, ToolError, ToolErrorCode};
use crate::dispatch::mocks::MockTable;

/// A tab chromate controls or lists, with its session-wide id.
#[derive(Debug, Clone)]
pub(crate) struct Tab {
    /// `p<N>`, never reused.
    pub(crate) id: String,
    pub(crate) page: chromate::Page,
}

/// The active tab, once its renderer crashed, until the failed call that reports it replaces
/// it with a new tab.
#[derive(Debug, Clone)]
pub(crate) struct CrashedTab {
    /// Its `p<N>`.
    pub(crate) id: String,
    /// The URL it showed.
    pub(crate) url: String,
    pub(crate) page: chromate::Page,
}

/// The running browser and its tabs, in opening order.
pub(crate) struct Live {
    pub(crate) browser: chromate::Browser,
    pub(crate) tabs: Vec<Tab>,
    /// The active tab's id.
    pub(crate) active: Option<String>,
    /// Target ids of the tabs chromate opened itself (closed at exit in
    /// `--cdp-endpoint` mode, where the others belong to the user).
    pub(crate) own_targets: Vec<String>,
    /// An isolated session's browser context in the shared browser: its tabs, cookies,
    /// storage, cache and mocks are its own; `None` when the session has the browser to itself.
    pub(crate) context: Option<chromate::BrowserContext>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("tabs", &self.tabs)
            .field("active", &self.active)
            .finish_non_exhaustive()
    }
}

impl Live {
    /// A running browser (or, with `context`, an isolated session's context in the shared
    /// one) with no tab listed yet.
    fn new(browser: chromate::Browser, context: Option<chromate::BrowserContext>) -> Live {
        Live {
            browser,
            tabs: Vec::new(),
            active: None,
            own_targets: Vec::new(),
            context,
        }
    }

    pub(crate) fn active_tab(&self) -> Option<&Tab> {
        let active = self.active.as_deref()?;
        self.tabs.iter().find(|tab| tab.id == active)
    }

    /// The session's open pages: its context's, or the browser's.
    pub(crate) fn pages(&self) -> Vec<chromate::Page> {
        match &self.context {
            Some(context) => context.pages(),
            None => self.browser.pages(),
        }
    }

    /// Opens a tab on about:blank in the session's context (or the browser) and records it as
    /// chromate's own.
    pub(crate) async fn open_tab(&mut self) -> chromate::Result<chromate::Page> {
        let page = match &self.context {
            Some(context) => context.new_tab().await?,
            None => self.browser.new_page("about:blank").await?,
        };
        self.own_targets.push(page.target_id().to_owned());
        Ok(page)
    }

    /// The session's cookies (its context's, or the browser's default context's).
    pub(crate) async fn cookies(&self) -> chromate::Result<Vec<chromate::Cookie>> {
        match &self.context {
            Some(context) => context.cookies().await,
            None => self.browser.cookies().await,
        }
    }

    /// Replaces the session's cookies with `cookies`.
    pub(crate) async fn replace_cookies(
        &self,
        cookies: &[chromate::Cookie],
    ) -> chromate::Result<()> {
        match &self.context {
            Some(context) => {
                context.clear_cookies().await?;
                context.set_cookies(cookies).await
            }
            None => {
                self.browser.clear_cookies().await?;
                self.browser.set_cookies(cookies).await
            }
        }
    }

    /// Replaces the session's interception rules (mocks): its context's only, when isolated.
    pub(crate) async fn set_intercept_rules(
        &self,
        rules: Vec<chromate::InterceptRule>,
    ) -> chromate::Result<()> {
        match &self.context {
            Some(context) => context.set_intercept_rules(rules).await,
            None => self.browser.set_intercept_rules(rules).await,
        }
    }
}

/// The log journal as the MCP layer sees it (docs/mcp.md#logs): the engine's journal,
/// shared by every browser of the session, and the tripwire's cursor (docs/mcp.md#observations).
#[derive(Debug, Default)]
pub(crate) struct SessionJournal {
    /// The entries; capture belongs to the engine.
    pub(crate) log: chromate::Journal,
    /// The journal cursor at the previous observation (0 at first).
    pub(crate) observed: u64,
    /// The journal cursor up to which observations reported downloads (docs/mcp.md#downloads).
    pub(crate) downloads_observed: u64,
    /// The tripwire of the latest observation (browser_batch reports it).
    pub(crate) last_tripwire: Option<Tripwire>,
    /// `p<N>` of every tab ever listed, by target id (entries of closed tabs
    /// keep their id).
    pub(crate) page_ids: std::collections::HashMap<String, String>,
    /// The runtime-errors channel's own record of what it drained (qa_get_runtime_errors,
    /// `chromate errors`): the `seq` of every entry it returned and cleared, those still
    /// buffered. No other reader moves it.
    pub(crate) errors_drained: std::collections::BTreeSet<u64>,
}

impl SessionJournal {
    /// False until a browser has run.
    pub(crate) fn capturing(&self) -> bool {
        self.log.capturing()
    }

    /// An entry's tab as `p<N>` (the target id if the tab was never listed).
    pub(crate) fn page_id(&self, target_id: &str) -> String {
        self.page_ids
            .get(target_id)
            .cloned()
            .unwrap_or_else(|| target_id.to_owned())
    }
}

/// The observation tripwire (docs/mcp.md#observations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tripwire {
    /// Error entries with `seq > cursor` still buffered.
    pub(crate) errors: u64,
    /// The cursor at the previous observation.
    pub(crate) cursor: u64,
    /// Error entries with `seq > cursor` that were evicted.
    pub(crate) evicted: u64,
}

impl Tripwire {
    /// `errors: <n> (logCursor <c>)`, or the lower-bound variant.
    pub(crate) fn line(&self) -> String {
        if self.evicted > 0 {
            format!(
                "errors: {} (logCursor {}; {} evicted, so this is a lower bound)",
                self.errors, self.cursor, self.evicted
            )
        } else {
            format!("errors: {} (logCursor {})", self.errors, self.cursor)
        }
    }
}

/// An active trace recording (docs/mcp.md#traces), owned by `trace.rs`.
pub(crate) use crate::dispatch::trace::TraceRecording;

/// Server-held state for one session.
#[derive(Debug)]
pub(crate) struct ToolSession {
    pub(crate) config: Config,
    pub(crate) server_pid: u32,
    pub(crate) artifacts: ArtifactStore,
    pub(crate) mocks: MockTable,
    pub(crate) journal: SessionJournal,
    pub(crate) trace: Option<TraceRecording>,
    /// The browser, once launched (and again after a loss).
    pub(crate) live: Option<Live>,
    /// Set for an isolated session: its browser is a context in this shared browser.
    pub(crate) shared: Option<crate::dispatch::shared::SharedBrowser>,
    /// The MCP client's roots as directories (empty unless it declares roots); shared with the
    /// front end, which updates them whenever the client's answer arrives.
    pub(crate) client_roots: std::sync::Arc<std::sync::Mutex<Vec<PathBuf>>>,
    /// The working directory of the CLI command whose call runs now (absolute); `None` for
    /// MCP, where it is the server's own.
    pub(crate) call_dir: Option<PathBuf>,
    /// Set for an HTTP session: its traces under `CHROMATE_TRACE_DIR` and its saved states
    /// live in a directory of this name inside those roots, so another session can neither
    /// list, read nor load them (docs/mcp.md#streamable-http). `None`: the roots themselves.
    pub(crate) namespace: Option<String>,
    /// The next `p<N>` number.
    next_tab: u64,
    /// The baseline of docs/mcp.md#refs: the latest full snapshot shown.
    pub(crate) baseline: Option<chromate::Snapshot>,
    /// How many snapshots this session took (`revision`, docs/mcp.md#snapshots).
    pub(crate) revision: u64,
    /// The first ref number a relaunched browser may mint (docs/mcp.md#refs: never reused).
    next_ref: Option<chromate::ElementRef>,
    /// The target of a tab whose renderer could not be freed from a script that does not
    /// yield; the server replaces it once the failed call is answered.
    stuck_tab: Option<String>,
    /// The active tab whose renderer crashed, not reported yet: the next call that fails (a
    /// call on the tab fails at once) reports it and replaces the tab.
    crashed_tab: Option<CrashedTab>,
    /// A capture's or a flow's session: [`ToolSession::shutdown`] kills the browser (after
    /// the downloads in flight end) instead of closing it gracefully.
    pub(crate) one_shot: bool,
}

impl ToolSession {
    pub(crate) fn new(config: Config) -> ToolSession {
        let server_pid = std::process::id();
        let artifacts = ArtifactStore::new(
            &config.artifacts_root,
            server_pid,
            SystemTime::now(),
            &crate::private_fs::random_suffix(),
            config.limits,
        );
        ToolSession {
            config,
            server_pid,
            artifacts,
            mocks: MockTable::default(),
            journal: SessionJournal::default(),
            trace: None,
            live: None,
            shared: None,
            client_roots: std::sync::Arc::default(),
            call_dir: None,
            namespace: None,
            next_tab: 1,
            baseline: None,
            revision: 0,
            next_ref: None,
            stuck_tab: None,
            crashed_tab: None,
            one_shot: false,
        }
    }

    /// A session whose directory (spills, downloads) is exactly `dir`, not one named under the
    /// artifacts root: a capture's or a flow's, inside its output directory ([`Self::one_shot`]).
    pub(crate) fn with_artifacts_dir(config: Config, dir: PathBuf) -> ToolSession {
        let limits = config.limits;
        let mut session = ToolSession::new(config);
        session.artifacts = ArtifactStore::at(dir, limits);
        session.one_shot = true;
        session
    }

    /// The directories the MCP client declared as its roots (`roots/list`), where uploads may
    /// read besides the working directory; kept current by the MCP front end.
    pub(crate) fn upload_roots(&self) -> Vec<PathBuf> {
        crate::sync::lock(&self.client_roots).clone()
    }

    /// The browser's process id, when chromate launched the running browser.
    pub(crate) fn browser_pid(&self) -> Option<u32> {
        self.live.as_ref().and_then(|live| live.browser.pid())
    }

    /// Whether a browser runs now (a lost one does not count).
    pub(crate) fn browser_running(&self) -> bool {
        self.live
            .as_ref()
            .is_some_and(|live| !live.browser.is_closed())
    }

    /// Whether ref number `number` was issued by an earlier browser of this
    /// session (one that was lost or closed): refs are never reused, so it
    /// is stale, never unknown (docs/mcp.md#refs).
    pub(crate) fn issued_by_earlier_browser(&self, number: u64) -> bool {
        self.next_ref
            .is_some_and(|next| number > 0 && number < next.number())
    }

    /// Forgets a browser that went away (browser loss, docs/mcp.md#run): tabs, dialogs
    /// and baseline are gone; ref numbering continues on the next launch.
    fn drop_lost_browser(&mut self) {
        if let Some(live) = &self.live {
            if live.browser.is_closed() {
                self.next_ref = Some(live.browser.next_ref());
                self.live = None;
                self.baseline = None;
                self.crashed_tab = None;
            }
        }
    }

    /// Brings the tab list up to date with the browser: new pages (popups,
    /// `target=_blank`) get the next id, closed ones go; if the active tab
    /// went, the lowest-index remaining one becomes active and the baseline
    /// is cleared. An active tab whose renderer crashed is kept as [`CrashedTab`] for the next
    /// failed call to report, and no other tab becomes active meanwhile.
    pub(crate) fn sync_tabs(&mut self) {
        let Some(live) = self.live.as_mut() else {
            return;
        };
        if let Some(tab) = live.active_tab().filter(|tab| tab.page.is_crashed()) {
            self.crashed_tab = Some(CrashedTab {
                id: tab.id.clone(),
                url: tab.page.url(),
                page: tab.page.clone(),
            });
            live.active = None;
            self.baseline = None;
        }
        live.tabs.retain(|tab| !tab.page.is_closed());
        for page in live.pages() {
            if !live
                .tabs
                .iter()
                .any(|tab| tab.page.target_id() == page.target_id())
            {
                let id = format!("p{}", self.next_tab);
                self.journal
                    .page_ids
                    .insert(page.target_id().to_owned(), id.clone());
                live.tabs.push(Tab { id, page });
                self.next_tab += 1;
            }
        }
        let active_alive = live
            .active
            .as_deref()
            .is_some_and(|id| live.tabs.iter().any(|tab| tab.id == id));
        if !active_alive && self.crashed_tab.is_none() {
            live.active = live.tabs.first().map(|tab| tab.id.clone());
            self.baseline = None;
        }
    }

    /// Makes the tab of `target` the active one (after re-reading the tabs) and drops the
    /// baseline: the next observation starts from a full snapshot.
    fn activate_target(&mut self, target: &str) {
        self.sync_tabs();
        // A tab chosen now (a new one, one selected) is where the next calls go: a crash of the
        // one before is no longer what they fail on.
        self.crashed_tab = None;
        if let Some(live) = self.live.as_mut() {
            live.active = live
                .tabs
                .iter()
                .find(|tab| tab.page.target_id() == target)
                .map(|tab| tab.id.clone());
        }
        self.baseline = None;
    }

    /// Launches or connects (docs/mcp.md#run), without opening a tab.
    async fn start_browser(&mut self, verb: &str) -> Result<(), ToolError> {
        if let Some(shared) = self.shared.clone() {
            return self.start_context(verb, &shared).await;
        }
        let journal = self.journal.log.clone();
        let browser = match &self.config.cdp_endpoint {
            Some(endpoint) => {
                chromate::Browser::connect_with(endpoint, &self.config.cdp_options, journal).await
            }
            None => {
                let options = chromate::LaunchOptions {
                    executable: self.config.browser.clone(),
                    headed: self.config.headed,
                    ..chromate::LaunchOptions::default()
                };
                chromate::Browser::launch_with_journal(options, journal).await
            }
        };
        let browser = browser.map_err(|err| from_engine(verb, &err))?;
        // Downloads go to the session directory, within the quota (docs/mcp.md#downloads). A browser that
        // refuses the directory (`--cdp-endpoint`) still reports them, journalled as not
        // saved with its answer as the reason, so the launch goes on.
        match self.download_options() {
            Ok(downloads) => {
                if let Err(err) = browser.enable_downloads(downloads).await {
                    eprintln!("chromate: downloads will not be saved: {err}");
                }
            }
            Err(err) => eprintln!("chromate: downloads will not be saved: {err}"),
        }
        // Mocks and the origin policy are in before the first tab loads (docs/mcp.md#origin-policy).
        self.mocks
            .install(&browser, &self.config)
            .await
            .map_err(|err| from_engine(verb, &err))?;
        if let Some(next) = self.next_ref {
            browser.continue_refs_from(next);
        }
        let mut live = Live::new(browser, None);
        let first = if self.config.cdp_endpoint.is_some() {
            None
        } else {
            // The launched browser's initial tab, once it is attached.
            live.browser
                .wait_for_new_page(&[], Duration::from_secs(5))
                .await
                .ok()
        };
        let first = match first {
            Some(page) => page,
            None => live
                .open_tab()
                .await
                .map_err(|err| from_engine(verb, &err))?,
        };
        let target = first.target_id().to_owned();
        self.live = Some(live);
        self.activate_target(&target);
        Ok(())
    }

    /// Where this session's downloads go (docs/mcp.md#downloads): `<session dir>/downloads/`, within the
    /// quota. The session directory and `downloads/` are made here, privately (exclusive,
    /// 0700, ours), before the browser is told about them: the engine would otherwise create
    /// missing parents itself, following whatever was planted at their names.
    fn download_options(&mut self) -> std::io::Result<chromate::DownloadOptions> {
        let downloads_dir = self.artifacts.downloads_dir();
        self.artifacts.ensure_dir()?;
        crate::private_fs::ensure_dir(&downloads_dir)?;
        Ok(chromate::DownloadOptions::new(downloads_dir).limit(self.artifacts.download_limit()))
    }

    /// An isolated session's start: a browser context of its own in the shared browser
    /// (launched by the first session that needs it), journalling into the session's journal,
    /// with the session's mocks, and one tab.
    async fn start_context(
        &mut self,
        verb: &str,
        shared: &crate::dispatch::shared::SharedBrowser,
    ) -> Result<(), ToolError> {
        let browser = shared
            .get(&self.config)
            .await
            .map_err(|err| from_engine(verb, &err))?;
        let context = browser
            .new_context_with_journal(
                chromate::ContextOptions::default(),
                self.journal.log.clone(),
            )
            .await
            .map_err(|err| from_engine(verb, &err))?;
        if let Some(next) = self.next_ref {
            browser.continue_refs_from(next);
        }
        // The context's downloads go to this session's directory and journal only.
        match self.download_options() {
            Ok(downloads) => {
                if let Err(err) = context.enable_downloads(downloads).await {
                    eprintln!("chromate: downloads will not be saved: {err}");
                }
            }
            Err(err) => eprintln!("chromate: downloads will not be saved: {err}"),
        }
        let mut live = Live::new(browser, Some(context));
        let started = async {
            live.set_intercept_rules(self.mocks.engine_rules()).await?;
            live.open_tab().await
        };
        let first = match started.await {
            Ok(page) => page,
            Err(err) => {
                if let Some(context) = live.context.take() {
                    let _ = context.dispose().await;
                }
                return Err(from_engine(verb, &err));
            }
        };
        let target = first.target_id().to_owned();
        self.live = Some(live);
        self.activate_target(&target);
        Ok(())
    }

    /// The running browser, launching it first if needed (lazy launch, docs/mcp.md#run;
    /// a lost browser is relaunched).
    pub(crate) async fn ensure_browser(&mut self, verb: &str) -> Result<&mut Live, ToolError> {
        self.drop_lost_browser();
        if self.live.is_none() {
            self.start_browser(verb).await?;
        }
        self.sync_tabs();
        self.live.as_mut().ok_or_else(|| {
            ToolError::new(ToolErrorCode::DriverError, format!("{verb}: no browser"))
        })
    }

    /// The active tab's page, launching the browser and opening a tab if
    /// needed. Does not check for dialogs (browser_dialog and
    /// browser_snapshot report them).
    pub(crate) async fn active_page_any(
        &mut self,
        verb: &str,
    ) -> Result<chromate::Page, ToolError> {
        if let Some(tab) = self.ensure_browser(verb).await?.active_tab() {
            return Ok(tab.page.clone());
        }
        if let Some(crashed) = &self.crashed_tab {
            // Reported (and the tab replaced) by `report_crashed_tab` once the call fails.
            return Err(crash_error(verb, crashed, None));
        }
        let live = self.ensure_browser(verb).await?;
        let page = live
            .open_tab()
            .await
            .map_err(|err| from_engine(verb, &err))?;
        let target = page.target_id().to_owned();
        self.activate_target(&target);
        Ok(page)
    }

    /// The active tab's page for a tool that touches it: STATE_INVALID while
    /// a dialog is open (docs/error-codes.md).
    pub(crate) async fn active_page(&mut self, verb: &str) -> Result<chromate::Page, ToolError> {
        let page = self.active_page_any(verb).await?;
        if let Some(dialog) = page.dialog() {
            return Err(self.dialog_blocks(verb, &page, &dialog));
        }
        Ok(page)
    }

    /// The active page without launching: `None` before launch or after a loss.
    pub(crate) fn current_page(&mut self) -> Option<chromate::Page> {
        self.drop_lost_browser();
        self.sync_tabs();
        self.live
            .as_ref()
            .and_then(Live::active_tab)
            .map(|tab| tab.page.clone())
    }

    /// An engine error as a tool error; a lost browser becomes DRIVER_ERROR
    /// `reason:"browser-closed"` and is forgotten, so the next call relaunches.
    pub(crate) fn engine_error(&mut self, verb: &str, err: &chromate::Error) -> ToolError {
        let lost = self
            .live
            .as_ref()
            .is_some_and(|live| live.browser.is_closed());
        let mut error = from_engine(verb, err);
        // A dialog the page keeps reopening: the hint names the way out of the tab.
        if let chromate::Error::DialogOpen { .. } = err {
            let active = self.live.as_ref().and_then(Live::active_tab);
            if let Some(trap) = active.and_then(|tab| self.dialog_trap(&tab.page)) {
                let reopens = active.map_or(0, |tab| tab.page.dialog_reopens());
                error = error
                    .with_hint(trap)
                    .with_detail_key("reopened", json!(reopens));
            }
        }
        if let Some(chromate::Recovery::RendererStuck { .. }) = err.recovery() {
            self.stuck_tab = self
                .live
                .as_ref()
                .and_then(Live::active_tab)
                .map(|tab| tab.page.target_id().to_owned());
        }
        if let (chromate::Error::NavigationFailed { url, net_error }, Some(live)) =
            (err, &self.live)
        {
            if let Some(by) = self.mocks.blocked_by(&live.browser, url, net_error) {
                let hint = match by {
                    "file-access" => crate::dispatch::tools::FILE_URL_HINT,
                    "origin-policy" => "the URL's origin is outside --allowed-origins or inside --blocked-origins; navigate elsewhere or restart with other origin lists",
                    _ => "a browser_mock block rule matches this URL; browser_mock action=list shows it, action=remove lifts it",
                };
                error = error
                    .with_detail_key("blockedBy", json!(by))
                    .with_hint(hint);
            }
        }
        if lost && error.code == ToolErrorCode::DriverError {
            error = ToolError::new(
                ToolErrorCode::DriverError,
                format!("{verb}: the browser closed during the call"),
            )
            .with_hint("the next call relaunches the browser; refs and tabs from before are gone")
            .with_detail(json!({ "reason": "browser-closed" }));
        }
        self.drop_lost_browser();
        error
    }

    /// The way out of a tab whose page reopens its dialog as soon as it is answered (the second
    /// time in a row or more within a second), if `page` is such a tab: answering again will not
    /// free it, a new tab and closing this one will.
    pub(crate) fn dialog_trap(&self, page: &chromate::Page) -> Option<String> {
        let reopens = page.dialog_reopens();
        if reopens < 2 {
            return None;
        }
        let id = self
            .live
            .as_ref()?
            .tabs
            .iter()
            .find(|tab| tab.page.target_id() == page.target_id())?
            .id
            .clone();
        Some(format!(
            "the page reopened its dialog as soon as it was answered ({reopens} times in a row), so answering will not free this tab: leave it with browser_page action=open, then browser_page action=close target={id}"
        ))
    }

    /// The observation of a tab whose dialog is open: the dialog, and the way out when the page
    /// keeps reopening it.
    pub(crate) fn dialog_notice(&self, page: &chromate::Page, dialog: &chromate::Dialog) -> String {
        let mut notice = format!(
            "dialog open: {}\n(snapshot skipped — accept or dismiss it first)",
            dialog.message
        );
        if let Some(trap) = self.dialog_trap(page) {
            notice.push_str(&format!("\n({trap})"));
        }
        notice
    }

    /// STATE_INVALID `a dialog is open` for a call on `page`: the way out as its hint when the
    /// page keeps reopening the dialog.
    pub(crate) fn dialog_blocks(
        &self,
        verb: &str,
        page: &chromate::Page,
        dialog: &chromate::Dialog,
    ) -> ToolError {
        let error = dialog_blocks(verb, dialog);
        match self.dialog_trap(page) {
            Some(trap) => error
                .with_hint(trap)
                .with_detail_key("reopened", json!(page.dialog_reopens())),
            None => error,
        }
    }

    /// Marks `page` as stuck: the server replaces it once the failed call is answered.
    pub(crate) fn mark_stuck(&mut self, page: &chromate::Page) {
        self.stuck_tab = Some(page.target_id().to_owned());
    }

    /// Replaces the tab a failed call found stuck (its renderer answered nothing, not even
    /// `Runtime.terminateExecution`): a new tab on about:blank becomes the active one and the
    /// stuck one is closed, which ends its renderer. Refs of the old tab go stale.
    pub(crate) async fn replace_stuck_tab(&mut self) {
        let Some(target) = self.stuck_tab.take() else {
            return;
        };
        let Some(live) = self.live.as_mut() else {
            return;
        };
        let Some(stuck) = live
            .tabs
            .iter()
            .find(|tab| tab.page.target_id() == target)
            .map(|tab| tab.page.clone())
        else {
            return;
        };
        let Ok(page) = live.open_tab().await else {
            return;
        };
        let close = live.browser.close_page(&stuck);
        // The browser ends a renderer that does not unload; never wait long for it here.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), close).await;
        let target = page.target_id().to_owned();
        self.activate_target(&target);
    }

    /// After a call: if the active tab's renderer crashed and the call failed, the error becomes
    /// the crash's (DRIVER_ERROR `tab-crashed`, naming the tab, its URL and what was lost), and a
    /// new tab on about:blank takes its place as the active one. The browser is not relaunched:
    /// other tabs, cookies and storage are kept. A call that succeeded leaves the report to the
    /// next call (which fails at once when it needs the tab).
    pub(crate) async fn report_crashed_tab(
        &mut self,
        verb: &str,
        outcome: &mut Result<crate::dispatch::error::ToolOutput, ToolError>,
    ) {
        self.sync_tabs();
        if outcome.is_ok() {
            return;
        }
        let Some(crashed) = self.crashed_tab.take() else {
            return;
        };
        let Some(live) = self.live.as_mut() else {
            return;
        };
        // The crashed target stays in the browser (a "sad tab") until it is closed.
        let close = live.browser.close_page(&crashed.page);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), close).await;
        // A tab opened while the browser is still clearing up the dead renderer can land in
        // it and never attach: each try is bounded, and a failed one is tried again.
        let mut opened = None;
        for _ in 0..CRASH_REPLACEMENT_TRIES {
            if let Ok(Ok(page)) =
                tokio::time::timeout(CRASH_REPLACEMENT_OPEN, live.open_tab()).await
            {
                if !page.is_closed() {
                    opened = Some(page);
                    break;
                }
            }
        }
        let replaced = match opened {
            Some(page) => {
                let target = page.target_id().to_owned();
                self.activate_target(&target);
                self.live
                    .as_ref()
                    .and_then(Live::active_tab)
                    .map(|tab| tab.id.clone())
            }
            None => None,
        };
        *outcome = Err(crash_error(verb, &crashed, replaced.as_deref()));
    }

    /// The agent default timeout (`CHROMATE_AGENT_TIMEOUT`): the bound of the round trips of
    /// tools that never wait (snapshot, find, exists, read, a11y) and of observations.
    pub(crate) fn agent_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.config.agent_timeout_ms)
    }

    /// Takes a full snapshot of `page`, counting the revision.
    pub(crate) async fn take_snapshot(
        &mut self,
        page: &chromate::Page,
        options: chromate::SnapshotOptions,
    ) -> Result<chromate::Snapshot, chromate::Error> {
        // A snapshot never waits, but its round trips are bounded by the agent timeout: a page
        // that does not answer fails TIMEOUT (and is stopped) instead of at the 30 s bound.
        let bound = self.agent_timeout();
        self.take_snapshot_within(page, options, bound).await
    }

    /// [`ToolSession::take_snapshot`] with its round trips bounded by `bound`.
    async fn take_snapshot_within(
        &mut self,
        page: &chromate::Page,
        options: chromate::SnapshotOptions,
        bound: std::time::Duration,
    ) -> Result<chromate::Snapshot, chromate::Error> {
        let snapshot = page.within(bound, page.snapshot(options)).await?;
        self.revision += 1;
        Ok(snapshot)
    }

    /// Handles a failed element call (docs/mcp.md#refs): a STALE_REF on a ref
    /// selector gets a recovery snapshot that becomes the baseline.
    pub(crate) async fn element_error(
        &mut self,
        verb: &str,
        page: &chromate::Page,
        err: &chromate::Error,
    ) -> ToolError {
        let mut error = self.engine_error(verb, err);
        // The page's ref table forgets a ref when its document is replaced;
        // a ref this session did issue is then `document-changed` (docs/mcp.md#refs),
        // not `unknown-ref`.
        if let chromate::Error::StaleRef {
            element_ref,
            reason: chromate::StaleReason::UnknownRef,
        } = err
        {
            let issued = chromate::ElementRef::parse(element_ref)
                .is_some_and(|element_ref| page.has_issued_ref(element_ref));
            if issued {
                let reason = chromate::StaleReason::DocumentChanged;
                error.message = format!("{verb}: ref={element_ref} is stale: {}", reason.explain());
                error = error.with_detail_key("reason", json!(reason.as_str()));
            }
        }
        if error.code == ToolErrorCode::StaleRef {
            error = self.attach_recovery(page, error).await;
        }
        error
    }

    /// Attaches a recovery snapshot (docs/mcp.md#refs) to a STALE_REF error, when the
    /// browser runs without a dialog.
    pub(crate) async fn attach_recovery(
        &mut self,
        page: &chromate::Page,
        error: ToolError,
    ) -> ToolError {
        let reason = error
            .detail
            .as_ref()
            .and_then(|detail| detail.get("reason"))
            .and_then(|reason| reason.as_str())
            .unwrap_or("");
        if reason == "unknown-ref" || page.is_closed() || page.dialog().is_some() {
            return error;
        }
        match self
            .take_snapshot(page, chromate::SnapshotOptions::default())
            .await
        {
            Ok(snapshot) => {
                let mut error = error;
                error.recovery_snapshot = Some(snapshot.render());
                error.hint = Some(
                    "pick a current ref from recoverySnapshot; the failed call was not retried"
                        .to_owned(),
                );
                self.baseline = Some(snapshot);
                error
            }
            Err(_) => error,
        }
    }

    /// NOT_EDITABLE (docs/error-codes.md): fill/clear on a ref whose baseline line is a `(container)`
    /// fails at once, pointing at the first editable field inside it (or a
    /// button or link that may reveal one).
    pub(crate) fn container_not_editable(
        &self,
        verb: &str,
        selector: &chromate::Selector,
    ) -> Option<ToolError> {
        let number = selector.element_ref()?;
        let lines = &self.baseline.as_ref()?.lines;
        let position = lines
            .iter()
            .position(|line| line.element_ref.map(chromate::ElementRef::number) == Some(number))?;
        let container = &lines[position];
        if !container.container {
            return None;
        }
        let inside: Vec<&chromate::Line> = lines[position + 1..]
            .iter()
            .take_while(|line| line.depth > container.depth)
            .collect();
        let named = |line: &chromate::Line| {
            let element_ref = line.element_ref.map(|r| r.to_string()).unwrap_or_default();
            (element_ref, line.name.clone().unwrap_or_default())
        };
        let field = inside.iter().find(|line| {
            matches!(
                line.role.as_str(),
                "textbox" | "searchbox" | "combobox" | "spinbutton"
            )
        });
        let reveal = inside
            .iter()
            .find(|line| matches!(line.role.as_str(), "button" | "link"));
        let (hint, alternative) = match (field, reveal) {
            (Some(line), _) => {
                let (element_ref, name) = named(line);
                (
                    format!("fill ref={element_ref} ({name:?})"),
                    Some(element_ref),
                )
            }
            (None, Some(line)) => {
                let (element_ref, name) = named(line);
                (
                    format!("click ref={element_ref} ({name:?}) to reveal an editable field"),
                    Some(element_ref),
                )
            }
            (None, None) => (
                "choose an editable field inside this container from a fresh snapshot".to_owned(),
                None,
            ),
        };
        let mut detail = json!({ "target": format!("ref=e{number}"), "role": container.role });
        if let Some(alternative) = alternative {
            detail["alternative"] = json!(alternative);
        }
        Some(
            ToolError::new(
                ToolErrorCode::NotEditable,
                format!(
                    "{verb}: ref=e{number} is a {} container, not an editable field",
                    container.role
                ),
            )
            .with_hint(hint)
            .with_detail(detail),
        )
    }

    /// docs/mcp.md#refs: a ref selector with no baseline is STALE_REF `no-snapshot`, whether or
    /// not the session issued it (row 3 comes after); a ref it issued gets a recovery
    /// snapshot (docs/mcp.md#refs), whose refs work on the next call.
    pub(crate) async fn check_ref_baseline(
        &mut self,
        verb: &str,
        page: &chromate::Page,
        ref_number: Option<u64>,
    ) -> Result<(), ToolError> {
        let Some(number) = ref_number else {
            return Ok(());
        };
        if self.baseline.is_some() {
            return Ok(());
        }
        let error = no_snapshot(verb, number);
        let issued = chromate::ElementRef::new(number)
            .is_some_and(|element_ref| page.has_issued_ref(element_ref))
            || self.issued_by_earlier_browser(number);
        if !issued {
            return Err(error);
        }
        Err(self.attach_recovery(page, error).await)
    }

    /// `CHROMATE_TRACE_DIR` (in it, the session's [`ToolSession::namespace`] directory), else
    /// `<session dir>/traces` (docs/mcp.md#traces).
    pub(crate) fn trace_root(&self) -> PathBuf {
        match &self.config.trace_dir {
            Some(dir) => {
                let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
                match &self.namespace {
                    Some(namespace) => dir.join(namespace),
                    None => dir,
                }
            }
            None => self.artifacts.dir().join("traces"),
        }
    }

    /// Makes [`ToolSession::trace_root`] exist and returns it. `<session dir>/traces` is chromate's
    /// own: the session directory is created first (exclusively), then `traces/` in it, 0700,
    /// reused only if it is a real directory of ours. A `CHROMATE_TRACE_DIR` is the user's: its
    /// missing parts are created, nothing about it is changed.
    pub(crate) fn ensure_trace_root(&mut self) -> std::io::Result<PathBuf> {
        let root = self.trace_root();
        if let (Some(dir), Some(_)) = (&self.config.trace_dir, &self.namespace) {
            // The user's directory as it is; the session's own in it, private.
            std::fs::create_dir_all(dir)?;
            crate::private_fs::ensure_dir(&root)?;
        } else if self.config.trace_dir.is_some() {
            std::fs::create_dir_all(&root)?;
        } else {
            self.artifacts.ensure_dir()?;
            crate::private_fs::ensure_dir(&root)?;
        }
        Ok(root)
    }

    /// `CHROMATE_STATE_DIR`, else `./.chromate/state` (docs/mcp.md#saved-state), made absolute; in it, the
    /// session's [`ToolSession::namespace`] directory when it has one.
    pub(crate) fn state_root(&self) -> PathBuf {
        let root = self.working_dir().join(&self.config.state_dir);
        match &self.namespace {
            Some(namespace) => root.join(namespace),
            None => root,
        }
    }

    /// Where relative paths of the running call are measured from, and the directory uploads
    /// may read under: the directory the CLI command ran in (set per call by the session
    /// daemon), else this process's working directory.
    pub(crate) fn working_dir(&self) -> PathBuf {
        match &self.call_dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        }
    }

    /// The observation hook (docs/mcp.md#observations): called by the server after a successful
    /// call of an observation-bearing tool that did not attach its own.
    /// Returns `None` when there is nothing to observe (no browser).
    ///
    /// Settle: the snapshot's own round trip through the renderer orders the
    /// events the action caused; the engine offers no animation-frame wait.
    /// The tripwire comes last (docs/mcp.md#observations).
    pub(crate) async fn observe(&mut self, cancel: &Cancel) -> Option<Observation> {
        let bound = self.agent_timeout();
        self.observe_within(cancel, bound).await
    }

    /// [`ToolSession::observe`] with the snapshot's round trips bounded by `bound` (what is
    /// left of the call's own timeout) instead of the agent timeout.
    pub(crate) async fn observe_within(
        &mut self,
        cancel: &Cancel,
        bound: std::time::Duration,
    ) -> Option<Observation> {
        if cancel.is_cancelled() {
            return None;
        }
        let page = self.current_page()?;
        if let Some(dialog) = page.dialog() {
            return Some(self.observation(self.dialog_notice(&page, &dialog)).await);
        }
        let body = match self
            .take_snapshot_within(&page, chromate::SnapshotOptions::default(), bound)
            .await
        {
            Ok(snapshot) => {
                let body = chromate::diff(self.baseline.as_ref(), &snapshot).render();
                self.baseline = Some(snapshot);
                body
            }
            Err(err) => {
                self.baseline = None;
                if let Some(dialog) = page.dialog() {
                    self.dialog_notice(&page, &dialog)
                } else {
                    format!("post-action snapshot unavailable: {err}")
                }
            }
        };
        Some(self.observation(body).await)
    }

    /// An observation of `body`: the downloads that ended since the previous observation, then
    /// the tripwire (docs/mcp.md#observations, docs/mcp.md#downloads).
    async fn observation(&mut self, body: String) -> Observation {
        // A download that began during the call (an attachment navigation the click waited
        // for) is usually done by now: wait a little for it, so this call reports it. A longer
        // one, or one that begins later (a `download` link's request is still on its way),
        // is reported by the first observation after it ends.
        match self
            .live
            .as_ref()
            .map(|live| (&live.browser, &live.context))
        {
            Some((_, Some(context))) => {
                context.wait_for_downloads(DOWNLOAD_SETTLE).await;
            }
            Some((browser, None)) => {
                browser.wait_for_downloads(DOWNLOAD_SETTLE).await;
            }
            None => {}
        }
        let (downloads, links) = self.ended_downloads();
        Observation {
            body,
            downloads,
            links,
            tripwire: self.tripwire(),
        }
    }

    /// The `download:` lines and saved files of the downloads journalled since the previous
    /// observation; saved ones are counted against the quota (docs/mcp.md#session-directory).
    fn ended_downloads(&mut self) -> (Vec<String>, Vec<PathBuf>) {
        let log = &self.journal.log;
        let now = log.cursor();
        let entries = log.downloads_since(self.journal.downloads_observed);
        self.journal.downloads_observed = now;
        let mut lines = Vec::new();
        let mut links = Vec::new();
        for entry in entries.iter().filter(|entry| entry.seq <= now) {
            let chromate::LogData::Download {
                name,
                state,
                bytes,
                path,
                reason,
                ..
            } = &entry.data
            else {
                continue;
            };
            lines.push(download_line(name, *state, *bytes, reason.as_deref()));
            if let Some(path) = path {
                self.artifacts.count_download(bytes.unwrap_or(0));
                links.push(path.clone());
            }
        }
        (lines, links)
    }

    /// The tripwire (docs/mcp.md#observations): error entries since the previous
    /// observation, exactly what `browser_logs kind=error since=<c>` lists;
    /// the stored cursor then moves to the current one. Always present: the
    /// journal captures in every browser this session starts.
    pub(crate) fn tripwire(&mut self) -> Option<String> {
        Some(self.evaluate_tripwire()?.line())
    }

    /// [`ToolSession::tripwire`] as numbers (browser_batch's `logs`).
    pub(crate) fn evaluate_tripwire(&mut self) -> Option<Tripwire> {
        let cursor = self.journal.observed;
        let now = self.journal.log.cursor();
        let (errors, evicted) = self.journal.log.errors_since(cursor);
        let tripwire = Tripwire {
            errors,
            cursor,
            evicted,
        };
        self.journal.observed = now;
        self.journal.last_tripwire = Some(tripwire);
        Some(tripwire)
    }

    /// browser_batch `observe:page` (docs/tools.md#browser_batch--batch): the page's identity instead of a
    /// diff — `{url, title, documentId, revision, documentChange}` — while
    /// the baseline still advances. `None` when there is no page.
    pub(crate) async fn observe_page(
        &mut self,
        cancel: &Cancel,
    ) -> Option<(serde_json::Value, Observation)> {
        if cancel.is_cancelled() {
            return None;
        }
        let page = self.current_page()?;
        if let Some(dialog) = page.dialog() {
            let summary = json!({
                "url": page.url(),
                "title": null,
                "documentId": page.document_id(),
                "revision": self.revision,
                "documentChange": "unknown",
            });
            let body = self.dialog_notice(&page, &dialog);
            return Some((summary, self.observation(body).await));
        }
        let snapshot = match self
            .take_snapshot(&page, chromate::SnapshotOptions::default())
            .await
        {
            Ok(snapshot) => snapshot,
            Err(err) => {
                self.baseline = None;
                let summary = json!({
                    "url": page.url(),
                    "title": null,
                    "documentId": page.document_id(),
                    "revision": self.revision,
                    "documentChange": "unknown",
                });
                let body = format!("post-action snapshot unavailable: {err}");
                return Some((summary, self.observation(body).await));
            }
        };
        let change = match &self.baseline {
            None => "unknown",
            Some(baseline) if baseline.document_id == snapshot.document_id => "same",
            Some(_) => "changed",
        };
        let summary = json!({
            "url": snapshot.url,
            "title": snapshot.title,
            "documentId": snapshot.document_id,
            "revision": self.revision,
            "documentChange": change,
        });
        let body = snapshot.header();
        self.baseline = Some(snapshot);
        Some((summary, self.observation(body).await))
    }

    /// The shutdown hook (docs/mcp.md#run): end any trace, close the browser (kill after
    /// 2 s; a one-shot session's at once), delete the profile. The server bounds the whole
    /// shutdown to 5 s.
    pub(crate) async fn shutdown(&mut self) {
        // A recording ends with `trace-end` reason shutdown, without zip (docs/mcp.md#traces).
        if let Some(mut recording) = self.trace.take() {
            if let Err(err) = recording.end("shutdown") {
                eprintln!("chromate: trace not ended cleanly: {err}");
            }
        }
        let Some(live) = self.live.take() else {
            return;
        };
        self.next_ref = Some(live.browser.next_ref());
        if let Some(context) = live.context {
            // An isolated session's tabs, cookies and storage go with its context; the shared
            // browser runs on for the other sessions.
            let _ = tokio::time::timeout(Duration::from_secs(5), context.dispose()).await;
            return;
        }
        if self.config.cdp_endpoint.is_some() {
            // Only chromate's own tabs close; the user's browser keeps running.
            for tab in &live.tabs {
                if live
                    .own_targets
                    .iter()
                    .any(|target| target == tab.page.target_id())
                {
                    let _ = live.browser.close_page(&tab.page).await;
                }
            }
        }
        let Live { browser, tabs, .. } = live;
        drop(tabs);
        if self.one_shot {
            // A download still in flight gets an observation's grace before the kill (docs/mcp.md#downloads).
            browser.wait_for_downloads(DOWNLOAD_SETTLE).await;
            browser.kill().await;
        } else {
            browser.close().await;
        }
    }
}

/// How long one try at opening the tab that replaces a crashed one may take, and how many tries
/// are made.
const CRASH_REPLACEMENT_OPEN: Duration = Duration::from_secs(5);
const CRASH_REPLACEMENT_TRIES: usize = 3;

/// How long an observation waits for downloads in flight to end (docs/mcp.md#downloads).
const DOWNLOAD_SETTLE: Duration = Duration::from_secs(2);

/// `download: <name> (<bytes> bytes) <state>`; `download: <name> not saved: <reason>` when the
/// browser finished it but it could not be saved here, or it could not be saved at all.
pub(crate) fn download_line(
    name: &str,
    state: chromate::DownloadState,
    bytes: Option<u64>,
    reason: Option<&str>,
) -> String {
    match (state, reason) {
        (chromate::DownloadState::Failed, Some(reason)) => {
            format!("download: {name} not saved: {reason}")
        }
        _ => match bytes {
            Some(bytes) => format!("download: {name} ({bytes} bytes) {}", state.as_str()),
            None => format!("download: {name} {}", state.as_str()),
        },
    }
}

/// DRIVER_ERROR `tab-crashed`: the tab `crashed` showed is gone with its renderer; `replaced_by`
/// is the tab opened in its place.
pub(crate) fn crash_error(
    verb: &str,
    crashed: &CrashedTab,
    replaced_by: Option<&str>,
) -> ToolError {
    let CrashedTab { id, url, .. } = crashed;
    let hint = match replaced_by {
        Some(new_id) => format!(
            "chromate opened a new tab {new_id} in its place, on about:blank; the browser was not relaunched (other tabs and cookies are kept): navigate again"
        ),
        None => "open a new tab with browser_page action=open; the browser was not relaunched (other tabs and cookies are kept)".to_owned(),
    };
    let mut detail = json!({ "reason": "tab-crashed", "tab": id, "url": url });
    if let Some(new_id) = replaced_by {
        detail["newTab"] = json!(new_id);
    }
    ToolError::new(
        ToolErrorCode::DriverError,
        format!(
            "{verb}: the tab {id} crashed (its renderer process is gone) on {url}; its page, refs and unsaved form input are lost"
        ),
    )
    .with_hint(hint)
    .with_detail(detail)
}

/// STATE_INVALID `a dialog is open: <message>` (docs/error-codes.md).
/// STALE_REF `no-snapshot` for `ref=e<number>` (docs/mcp.md#refs).
pub(crate) fn no_snapshot(verb: &str, number: u64) -> ToolError {
    ToolError::new(
        ToolErrorCode::StaleRef,
        format!(
            "{verb}: ref=e{number} is stale: no snapshot since the session started or the baseline was reset"
        ),
    )
    .with_hint("take a fresh snapshot and use the new ref; refs are never reassigned")
    .with_detail(json!({ "ref": format!("e{number}"), "reason": "no-snapshot" }))
}

pub(crate) fn dialog_blocks(verb: &str, dialog: &chromate::Dialog) -> ToolError {
    ToolError::new(
        ToolErrorCode::StateInvalid,
        format!("{verb}: a dialog is open: {}", dialog.message),
    )
    .with_hint("answer it with browser_dialog accept or dismiss (browser_dialog inspect shows it)")
    .with_detail(json!({ "reason": "dialog-open", "dialog": { "type": dialog.kind, "message": dialog.message } }))
}

#[cfg(test)]
mod tests;
