//! The browser and its tabs: launching it (or a context of it) lazily, the `p<N>` ids, the active
//! tab, a tab replaced after it stopped answering or crashed.

use super::*;

/// The browser's part of a session: the browser (or a context of a shared one), its tabs and
/// their ids, and what happened to them that the next call must say.
#[derive(Debug, Default)]
pub struct SessionBrowser {
    /// The browser, once launched (and again after a loss).
    pub live: Option<Live>,
    /// Set for an isolated session: its browser is a context in this shared browser.
    pub shared: Option<crate::shared::SharedBrowser>,
    /// The `p<N>` ids, shared with the session's forks (`tabs.rs`).
    pub(super) tab_ids: std::sync::Arc<std::sync::Mutex<tabs::TabIds>>,
    /// The first ref number a relaunched browser may mint (docs/mcp.md#refs: never reused).
    pub(super) next_ref: Option<chromate::snapshot::ElementRef>,
    /// The target of a tab whose renderer could not be freed from a script that does not
    /// yield; the server replaces it once the failed call is answered.
    pub(super) stuck_tab: Option<String>,
    /// The active tab whose renderer crashed, not reported yet: the next call that fails (a
    /// call on the tab fails at once) reports it and replaces the tab.
    pub(super) crashed_tab: Option<CrashedTab>,
    /// A `--cdp-endpoint` browser that went away between calls (a pool that ended the
    /// session), replaced by a new one and not said yet: the next call says it.
    pub(super) replaced_unsaid: Option<String>,
    /// Set when [`SessionBrowser::shared`] is this session's own connection to a `--cdp-endpoint`
    /// (an HTTP session on a pool: one pool session each), closed when the session ends.
    pub owns_connection: bool,
    /// Why the endpoint's browser went away, between dropping it and starting the next.
    pub(super) lost_endpoint_browser: Option<String>,
    /// How many times the endpoint's browser was replaced, and why the last time
    /// (browser_status `browserReplaced`).
    pub(super) replacements: (u64, Option<String>),
}

/// A tab chromate controls or lists, with its session-wide id.
#[derive(Debug, Clone)]
pub struct Tab {
    /// `p<N>`, never reused.
    pub id: String,
    pub page: chromate::Page,
}

/// The active tab, once its renderer crashed, until the failed call that reports it replaces
/// it with a new tab.
#[derive(Debug, Clone)]
pub struct CrashedTab {
    /// Its `p<N>`.
    pub id: String,
    /// The URL it showed.
    pub url: String,
    pub page: chromate::Page,
}

/// The running browser and its tabs, in opening order.
pub struct Live {
    pub browser: chromate::Browser,
    pub tabs: Vec<Tab>,
    /// The active tab's id.
    pub active: Option<String>,
    /// Target ids of the tabs chromate opened itself (closed at exit in
    /// `--cdp-endpoint` mode, where the others belong to the user).
    pub own_targets: Vec<String>,
    /// An isolated session's browser context in the shared browser: its tabs, cookies,
    /// storage, cache and mocks are its own; `None` when the session has the browser to itself.
    pub context: Option<chromate::BrowserContext>,
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

    pub fn active_tab(&self) -> Option<&Tab> {
        let active = self.active.as_deref()?;
        self.tabs.iter().find(|tab| tab.id == active)
    }

    /// The session's open pages: its context's, or the browser's.
    pub fn pages(&self) -> Vec<chromate::Page> {
        match &self.context {
            Some(context) => context.pages(),
            None => self.browser.pages(),
        }
    }

    /// Opens a tab on about:blank in the session's context (or the browser) and records it as
    /// chromate's own.
    pub fn open_tab<'a>(&'a mut self) -> crate::Boxed<'a, chromate::Result<chromate::Page>> {
        Box::pin(self.open_tab_unboxed())
    }

    async fn open_tab_unboxed(&mut self) -> chromate::Result<chromate::Page> {
        let page = match &self.context {
            Some(context) => context.new_tab().await?,
            None => self.browser.new_page("about:blank").await?,
        };
        self.own_targets.push(page.target_id().to_owned());
        Ok(page)
    }

    /// The session's cookies (its context's, or the browser's default context's).
    pub async fn cookies(&self) -> chromate::Result<Vec<chromate::storage::Cookie>> {
        match &self.context {
            Some(context) => context.cookies().await,
            None => self.browser.cookies().await,
        }
    }

    /// Replaces the session's cookies with `cookies`.
    pub async fn replace_cookies(
        &self,
        cookies: &[chromate::storage::Cookie],
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
    pub async fn set_intercept_rules(
        &self,
        rules: Vec<chromate::intercept::InterceptRule>,
    ) -> chromate::Result<()> {
        match &self.context {
            Some(context) => context.set_intercept_rules(rules).await,
            None => self.browser.set_intercept_rules(rules).await,
        }
    }
}

/// DRIVER_ERROR `tab-crashed`: the tab `crashed` showed is gone with its renderer; `replaced_by`
/// is the tab opened in its place.
pub(super) fn crash_error(
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

impl ToolSession {
    /// The browser's process id, when chromate launched the running browser.
    pub fn browser_pid(&self) -> Option<u32> {
        self.browser
            .live
            .as_ref()
            .and_then(|live| live.browser.pid())
    }

    /// Whether a browser runs now (a lost one does not count).
    pub fn browser_running(&self) -> bool {
        self.browser
            .live
            .as_ref()
            .is_some_and(|live| !live.browser.is_closed())
    }

    /// Whether ref number `number` was issued by an earlier browser of this
    /// session (one that was lost or closed): refs are never reused, so it
    /// is stale, never unknown (docs/mcp.md#refs).
    pub fn issued_by_earlier_browser(&self, number: u64) -> bool {
        self.browser
            .next_ref
            .is_some_and(|next| number > 0 && number < next.number())
    }

    /// Forgets a browser that went away (browser loss, docs/mcp.md#run): tabs, dialogs
    /// and baseline are gone; ref numbering continues on the next launch.
    pub(super) fn drop_lost_browser(&mut self) {
        if let Some(live) = &self.browser.live {
            if live.browser.is_closed() {
                if self.config.cdp_endpoint.is_some() {
                    let reason = live.browser.closed_reason();
                    self.browser.lost_endpoint_browser = Some(reason);
                }
                self.browser.next_ref = Some(live.browser.next_ref());
                self.browser.live = None;
                self.shown.baseline = None;
                self.browser.crashed_tab = None;
                self.shown.tab_baselines.clear();
                self.shown.tab_observed.clear();
            }
        }
    }

    /// Brings the tab list up to date with the browser: new pages (popups,
    /// `target=_blank`) get the next id, closed ones go; if the active tab
    /// went, the lowest-index remaining one becomes active and the baseline
    /// is cleared. An active tab whose renderer crashed is kept as [`CrashedTab`] for the next
    /// failed call to report, and no other tab becomes active meanwhile. A session forked for a
    /// call on one tab (`tabs.rs`) only drops closed tabs: its tab going leaves it none.
    pub fn sync_tabs(&mut self) {
        let forked = self.fork.is_some();
        let Some(live) = self.browser.live.as_mut() else {
            return;
        };
        if let Some(tab) = live.active_tab().filter(|tab| tab.page.is_crashed()) {
            self.browser.crashed_tab = Some(CrashedTab {
                id: tab.id.clone(),
                url: tab.page.url(),
                page: tab.page.clone(),
            });
            live.active = None;
            self.shown.baseline = None;
        }
        live.tabs.retain(|tab| !tab.page.is_closed());
        let pages = if forked { Vec::new() } else { live.pages() };
        for page in pages {
            if !live
                .tabs
                .iter()
                .any(|tab| tab.page.target_id() == page.target_id())
            {
                let id = crate::sync::lock(&self.browser.tab_ids).name(page.target_id());
                self.journal
                    .page_ids
                    .insert(page.target_id().to_owned(), id.clone());
                live.tabs.push(Tab { id, page });
            }
        }
        let active_alive = live
            .active
            .as_deref()
            .is_some_and(|id| live.tabs.iter().any(|tab| tab.id == id));
        if !active_alive && self.browser.crashed_tab.is_none() {
            live.active = match forked {
                true => None,
                false => live.tabs.first().map(|tab| tab.id.clone()),
            };
            self.shown.baseline = None;
        }
    }

    /// Makes the tab of `target` the active one (after re-reading the tabs) and drops the
    /// baseline: the next observation starts from a full snapshot.
    fn activate_target(&mut self, target: &str) {
        self.sync_tabs();
        // A tab chosen now (a new one, one selected) is where the next calls go: a crash of the
        // one before is no longer what they fail on.
        self.browser.crashed_tab = None;
        if let Some(live) = self.browser.live.as_mut() {
            live.active = live
                .tabs
                .iter()
                .find(|tab| tab.page.target_id() == target)
                .map(|tab| tab.id.clone());
            // Its baseline of calls that named it is not the active tab's.
            if let Some(id) = &live.active {
                self.shown.tab_baselines.remove(id);
            }
        }
        self.shown.baseline = None;
    }

    /// Launches or connects (docs/mcp.md#run), without opening a tab.
    fn start_browser<'a>(&'a mut self, verb: &'a str) -> crate::Boxed<'a, Result<(), ToolError>> {
        Box::pin(self.start_browser_unboxed(verb))
    }

    async fn start_browser_unboxed(&mut self, verb: &str) -> Result<(), ToolError> {
        // A call on a tab never starts a browser: its tab went with the one it ran in.
        if let Some(error) = self.forked_tab_gone(verb) {
            return Err(error);
        }
        if let Some(shared) = self.browser.shared.clone() {
            return self.start_context(verb, &shared).await;
        }
        let journal = self.journal.log.clone();
        let browser = match &self.config.cdp_endpoint {
            Some(endpoint) => {
                let options = self.connect_options();
                chromate::Browser::connect_with(endpoint, &options, journal).await
            }
            None => {
                let options = self.config.launch_options();
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
        if let Some(next) = self.browser.next_ref {
            browser.continue_refs_from(next);
        }
        // `--caps webmcp` (docs/mcp.md#webmcp): every page's tools, from its set-up on.
        if self.config.caps_webmcp {
            browser.enable_webmcp().await;
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
        self.browser.live = Some(live);
        self.activate_target(&target);
        self.note_replacement();
        Ok(())
    }

    /// `--cdp-endpoint`'s options for this connect: `--cdp-timeout`, cut to what is left of
    /// the call's own timeout (at least 500 ms, so a call that queued still gets an answer).
    pub(crate) fn connect_options(&self) -> chromate::ConnectOptions {
        let mut options = self.config.cdp_options.clone();
        if let Some(deadline) = self.call_deadline {
            let left = deadline
                .saturating_duration_since(std::time::Instant::now())
                .max(Duration::from_millis(500));
            options.connect_timeout = options.connect_timeout.min(left);
        }
        options
    }

    /// A new browser in place of an endpoint's browser that went away: the call that started
    /// it says so, and browser_status counts it.
    fn note_replacement(&mut self) {
        if let Some(reason) = self.browser.lost_endpoint_browser.take() {
            let notice = format!(
                "browser replaced: the --cdp-endpoint browser went away since the last call ({reason}; a pool ends a session after its timeout); this call runs in a new browser: the tabs, refs and the page of before are gone"
            );
            self.browser.replacements.0 += 1;
            self.browser.replacements.1 = Some(reason);
            self.browser.replaced_unsaid = Some(notice);
        }
    }

    /// Where this session's downloads go (docs/mcp.md#downloads): `<session dir>/downloads/`, within the
    /// quota. The session directory and `downloads/` are made here, privately (exclusive,
    /// 0700, ours), before the browser is told about them: the engine would otherwise create
    /// missing parents itself, following whatever was planted at their names.
    fn download_options(&mut self) -> std::io::Result<chromate::capture::DownloadOptions> {
        let downloads_dir = self.artifacts.downloads_dir();
        self.artifacts.ensure_dir()?;
        crate::private_fs::ensure_dir(&downloads_dir)?;
        Ok(chromate::capture::DownloadOptions::new(downloads_dir)
            .limit(self.artifacts.download_limit()))
    }

    /// An isolated session's start: a browser context of its own in the shared browser
    /// (launched by the first session that needs it), journalling into the session's journal,
    /// with the session's mocks, and one tab.
    async fn start_context(
        &mut self,
        verb: &str,
        shared: &crate::shared::SharedBrowser,
    ) -> Result<(), ToolError> {
        let browser = shared
            .get(&self.config, &self.connect_options())
            .await
            .map_err(|err| from_engine(verb, &err))?;
        let context = browser
            .new_context_with_journal(
                chromate::ContextOptions::default(),
                self.journal.log.clone(),
            )
            .await
            .map_err(|err| from_engine(verb, &err))?;
        if let Some(next) = self.browser.next_ref {
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
        self.browser.live = Some(live);
        self.activate_target(&target);
        self.note_replacement();
        Ok(())
    }

    /// The running browser, launching it first if needed (lazy launch, docs/mcp.md#run;
    /// a lost browser is relaunched).
    pub async fn ensure_browser(&mut self, verb: &str) -> Result<&mut Live, ToolError> {
        self.drop_lost_browser();
        if self.browser.live.is_none() {
            self.start_browser(verb).await?;
        }
        self.sync_tabs();
        self.browser.live.as_mut().ok_or_else(|| {
            ToolError::new(ToolErrorCode::DriverError, format!("{verb}: no browser"))
        })
    }

    /// The active tab's page, launching the browser and opening a tab if
    /// needed. Does not check for dialogs (browser_dialog and
    /// browser_snapshot report them).
    pub fn active_page_any<'a>(
        &'a mut self,
        verb: &'a str,
    ) -> crate::Boxed<'a, Result<chromate::Page, ToolError>> {
        Box::pin(self.active_page_any_unboxed(verb))
    }

    async fn active_page_any_unboxed(&mut self, verb: &str) -> Result<chromate::Page, ToolError> {
        if let Some(tab) = self.ensure_browser(verb).await?.active_tab() {
            return Ok(tab.page.clone());
        }
        if let Some(crashed) = &self.browser.crashed_tab {
            // Reported (and the tab replaced) by `report_crashed_tab` once the call fails.
            return Err(crash_error(verb, crashed, None));
        }
        if let Some(error) = self.forked_tab_gone(verb) {
            return Err(error);
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
    pub async fn active_page(&mut self, verb: &str) -> Result<chromate::Page, ToolError> {
        let page = self.active_page_any(verb).await?;
        if let Some(dialog) = page.dialog() {
            let refusal = Refusal::DialogOpen {
                dialog,
                resolving: None,
            };
            return Err(self.refuse(verb, Some(&page), refusal).await);
        }
        Ok(page)
    }

    /// The active page without launching: `None` before launch or after a loss.
    pub fn current_page(&mut self) -> Option<chromate::Page> {
        self.drop_lost_browser();
        self.sync_tabs();
        self.browser
            .live
            .as_ref()
            .and_then(Live::active_tab)
            .map(|tab| tab.page.clone())
    }

    /// Marks `page` as stuck: the server replaces it once the failed call is answered.
    pub fn mark_stuck(&mut self, page: &chromate::Page) {
        self.browser.stuck_tab = Some(page.target_id().to_owned());
    }

    /// Replaces the tab a failed call found stuck (its renderer answered nothing, not even
    /// `Runtime.terminateExecution`): a new tab on about:blank becomes the active one and the
    /// stuck one is closed, which ends its renderer. Refs of the old tab go stale.
    pub async fn replace_stuck_tab(&mut self) {
        let Some(target) = self.browser.stuck_tab.take() else {
            return;
        };
        let Some(live) = self.browser.live.as_mut() else {
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
    pub async fn report_crashed_tab(
        &mut self,
        verb: &str,
        outcome: &mut Result<crate::error::ToolOutput, ToolError>,
    ) {
        self.sync_tabs();
        if outcome.is_ok() {
            return;
        }
        let Some(crashed) = self.browser.crashed_tab.take() else {
            return;
        };
        let Some(live) = self.browser.live.as_mut() else {
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
            // A call on a tab: the new tab gets its id now, which the session keeps.
            Some(page) if self.fork.is_some() => self.adopt_replacement(page),
            Some(page) => {
                let target = page.target_id().to_owned();
                self.activate_target(&target);
                self.browser
                    .live
                    .as_ref()
                    .and_then(Live::active_tab)
                    .map(|tab| tab.id.clone())
            }
            None => None,
        };
        *outcome = Err(crash_error(verb, &crashed, replaced.as_deref()));
    }
}
