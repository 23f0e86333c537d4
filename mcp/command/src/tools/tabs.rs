//! browser_page (docs/tools.md#browser_page--tabs): tabs — declaration, arguments, rules and
//! the four actions. `list` never launches (before a browser has run it is
//! an empty list); the tab ids themselves live in the session.

use std::time::Duration;

use serde_json::json;

use super::schema::{arg_enum, tool_args, Arg, Capability, Cli, Hints, Runs, Slot, ToolDecl};
use super::{cancelled_error, ToolCall, ToolContext, NAV_TIMEOUT};
use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::session::{Tab, ToolSession};

pub(super) const PAGE: ToolDecl = ToolDecl {
    name: "browser_page",
    title: "Tabs",
    verb: "page",
    description: "List, open, select or close tabs; ids p1, p2… and indexes in opening order.",
    hints: Hints::D,
    observes: false,
    cli: Cli::new(
        "page",
        &[
            Slot::arg("action"),
            Slot::arg("url").when("action", "open"),
            Slot::arg("target"),
        ],
    ),
    args: PageArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

arg_enum! {
    /// browser_page `action`.
    pub enum TabAction {
        List = "list",
        Open = "open",
        Select = "select",
        Close = "close",
    }
}

tool_args! {
    /// The arguments of browser_page, in schema order.
    pub struct PageArgs {
        action: TabAction = Arg::one_of("action", "Tab action", TabAction::VALUES).required(),
        target: Option<String> = Arg::string("target", "Tab index or id (select, close)")
            .min_len(1)
            .max_len(128),
        url: Option<String> = Arg::string("url", "URL to open (open)").max_len(2048),
        timeout_ms: u64 = NAV_TIMEOUT,
    }
}

pub(super) fn check_page(args: &PageArgs, session: &ToolSession) -> Result<(), ToolError> {
    if args.action == TabAction::Select && args.target.is_none() {
        return Err(ToolError::invalid_argument(
            "page select: missing \"target\"",
            "target",
            "pass target= a tab index or id from browser_page list",
        ));
    }
    if let Some(url) = &args.url {
        if args.action != TabAction::Open {
            return Err(ToolError::invalid_argument(
                format!(
                    "page {}: url is only for action \"open\"",
                    args.action.as_str()
                ),
                "url",
                "drop url, or use action=open",
            ));
        }
        if !super::navigation::url_is_navigable(url) {
            return Err(ToolError::invalid_argument(
                format!("page open: {url:?} is not an absolute http, https, file or data URL, or about:blank"),
                "url",
                super::navigation::url_hint(url),
            ));
        }
        super::navigation::refuse_file_url(OPEN_VERB, url, session)?;
    }
    Ok(())
}

pub(super) async fn page(
    ctx: &mut ToolContext<'_>,
    args: PageArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = format!("page {}", args.action.as_str());
    match args.action {
        TabAction::List => Ok(ToolOutput::new(list(ctx.session).await)),
        TabAction::Open => {
            let url = args.url.clone().unwrap_or_else(|| "about:blank".to_owned());
            let opened = open_blank(ctx, &args, &verb).await?;
            if url == "about:blank" {
                return Ok(opened.output());
            }
            let loaded = load(&opened, &url, args.timeout_ms, &ctx.cancel).await?;
            loaded_or_closed(ctx, opened, loaded, &url, args.timeout_ms).await
        }
        TabAction::Select => {
            ctx.session.ensure_browser(&verb).await?;
            let tab = find_tab(ctx.session, args.target.as_deref().unwrap_or(""), &verb)?;
            let id = activate(ctx.session, tab.page.target_id());
            ctx.session.shown.baseline = None;
            Ok(ToolOutput::new(
                json!({ "ok": true, "action": "select", "id": id, "url": tab.page.url() }),
            ))
        }
        TabAction::Close => {
            let live = ctx.session.ensure_browser(&verb).await?;
            let tab = match args.target.as_deref() {
                Some(target) => find_tab(ctx.session, target, &verb)?,
                None => match live.active_tab() {
                    Some(tab) => tab.clone(),
                    None => return Err(no_page(&verb, "", 0)),
                },
            };
            let remaining = ctx
                .session
                .browser
                .live
                .as_ref()
                .map_or(0, |live| live.tabs.len().saturating_sub(1));
            if remaining == 0 {
                // Closing the last tab closes the browser (docs/tools.md#browser_page--tabs).
                ctx.session.shutdown().await;
                ctx.session.shown.baseline = None;
            } else {
                let browser = ctx
                    .session
                    .browser
                    .live
                    .as_ref()
                    .map(|live| live.browser.clone());
                if let Some(browser) = browser {
                    if let Err(err) = browser.close_page(&tab.page).await {
                        return Err(ctx.session.engine_error(&verb, &err));
                    }
                }
                ctx.session.sync_tabs();
                ctx.session.shown.baseline = None;
            }
            Ok(ToolOutput::new(
                json!({ "ok": true, "action": "close", "id": tab.id, "remaining": remaining }),
            ))
        }
    }
}

/// How long `list` waits for a tab to tell its title before it shows the browser's last known
/// one.
const TITLE_READ: Duration = Duration::from_millis(250);

/// `{pages:[{index, id, url, title, active}], count, active}`; never launches.
/// Titles come from the page itself (target infos lag behind), else, for a tab blocked by a
/// dialog or not answering within [`TITLE_READ`], from the target info.
async fn list(session: &mut ToolSession) -> serde_json::Value {
    session.current_page();
    let Some(live) = &session.browser.live else {
        return json!({ "pages": [], "count": 0, "active": null });
    };
    let targets = live.browser.targets();
    // Titles are read from the pages at once, each bounded: a tab whose script does not yield
    // (or that shows a dialog) keeps the browser's last known title and holds nobody up.
    let reads = live.tabs.iter().map(|tab| async {
        if tab.page.dialog().is_some() {
            return None;
        }
        match tokio::time::timeout(TITLE_READ, tab.page.title()).await {
            Ok(Ok(title)) => Some(title),
            _ => None,
        }
    });
    let titles = futures::future::join_all(reads).await;
    let mut pages = Vec::with_capacity(live.tabs.len());
    for (index, (tab, title)) in live.tabs.iter().zip(titles).enumerate() {
        let title = title.unwrap_or_else(|| {
            targets
                .iter()
                .find(|target| target.id == tab.page.target_id())
                .map_or(String::new(), |info| info.title.clone())
        });
        pages.push(json!({
            "index": index,
            "id": tab.id,
            "url": tab.page.url(),
            "title": title,
            "active": live.active.as_deref() == Some(tab.id.as_str()),
        }));
    }
    json!({ "count": pages.len(), "pages": pages, "active": live.active })
}

/// How browser_page `open` names itself in its errors.
const OPEN_VERB: &str = "page open";

/// A tab browser_page `open` has opened on about:blank and made active, before its URL loads.
struct Opened {
    page: chromate::Page,
    browser: chromate::Browser,
    id: Option<String>,
    /// The target of the tab that was active before, made active again if the URL fails.
    previous: Option<String>,
}

impl Opened {
    fn output(&self) -> ToolOutput {
        ToolOutput::new(
            json!({ "ok": true, "action": "open", "id": self.id, "url": self.page.url() }),
        )
    }
}

/// browser_page `open`'s first part: a tab on about:blank, made active.
async fn open_blank(
    ctx: &mut ToolContext<'_>,
    args: &PageArgs,
    verb: &str,
) -> Result<Opened, ToolError> {
    let live = ctx.session.ensure_browser(verb).await?;
    let browser = live.browser.clone();
    let previous = live.active_tab().map(|tab| tab.page.target_id().to_owned());
    // Bounded by the call's timeout_ms: a browser that does not answer (stopped) fails the
    // call in time instead of at the 30 s command timeout.
    let bound = Duration::from_millis(args.timeout_ms);
    let page = match chromate::wait::bounded(bound, live.open_tab()).await {
        Ok(page) => page,
        Err(err) => return Err(ctx.session.engine_error(verb, &err)),
    };
    ctx.session.sync_tabs();
    let id = activate(ctx.session, page.target_id());
    ctx.session.shown.baseline = None;
    Ok(Opened {
        page,
        browser,
        id,
        previous,
    })
}

/// browser_page `open`'s middle part: `url` loading in the opened tab, within `timeout_ms`;
/// a cancelled call is its error (the tab stays open).
async fn load(
    opened: &Opened,
    url: &str,
    timeout_ms: u64,
    cancel: &crate::call::Cancel,
) -> Result<chromate::Result<()>, ToolError> {
    let timeout = Duration::from_millis(timeout_ms);
    let loaded = cancel
        .run(opened.page.goto(url, chromate::WaitUntil::Load, timeout))
        .await
        .ok_or_else(|| cancelled_error(OPEN_VERB))?;
    Ok(loaded.map(drop))
}

/// browser_page `open`'s last part, once its URL has loaded or failed: the answer, or the
/// load's error after the tab is closed again and the tab that was active is again (a tab
/// that could not open its URL is not left behind).
async fn loaded_or_closed(
    ctx: &mut ToolContext<'_>,
    opened: Opened,
    loaded: chromate::Result<()>,
    url: &str,
    timeout_ms: u64,
) -> Result<ToolOutput, ToolError> {
    let verb = OPEN_VERB;
    let Err(err) = loaded else {
        return Ok(opened.output());
    };
    let error = super::navigation::navigation_error(ctx, verb, &err, url, timeout_ms);
    if let Some(previous) = opened.previous {
        // The error above is what the caller needs; a failed close changes nothing they can
        // act on.
        let _ = opened.browser.close_page(&opened.page).await;
        ctx.session.sync_tabs();
        activate(ctx.session, &previous);
    }
    Err(error)
}

/// browser_page `open` with a URL on a session other calls share (`call`, checked): the tab is
/// opened and made active with the session locked, its URL loads with the session free (calls
/// on other tabs fork and merge meanwhile), and the answer is made with it locked again
/// (docs/mcp.md#tabs-for-parallel-agents). `deadline` bounds connecting to a browser endpoint,
/// as the call's own timeout does for any call.
pub(crate) async fn open_then_load(
    session: &tokio::sync::Mutex<ToolSession>,
    call: ToolCall,
    deadline: std::time::Instant,
    cancel: &crate::call::Cancel,
    progress: &crate::call::Progress,
) -> Result<ToolOutput, ToolError> {
    let verb = OPEN_VERB;
    let (ToolCall::Page(args), Some(url)) = (&call, call_url(&call)) else {
        return Err(ToolError::new(
            ToolErrorCode::DriverError,
            "internal error: not a browser_page open with a url",
        ));
    };
    let mut guard = session.lock().await;
    guard.call_deadline = Some(deadline);
    let mut ctx = ToolContext {
        session: &mut guard,
        cancel: cancel.clone(),
        progress: progress.clone(),
    };
    let opened = open_blank(&mut ctx, args, verb).await;
    guard.call_deadline = None;
    let opened = opened?;
    drop(guard);
    progress.set_phase(format!("waiting for {url} to load"));
    let loaded = load(&opened, &url, args.timeout_ms, cancel).await?;
    let mut guard = session.lock().await;
    let mut ctx = ToolContext {
        session: &mut guard,
        cancel: cancel.clone(),
        progress: progress.clone(),
    };
    loaded_or_closed(&mut ctx, opened, loaded, &url, args.timeout_ms).await
}

/// The URL a browser_page `open` loads after opening its tab, if it is not about:blank.
fn call_url(call: &ToolCall) -> Option<String> {
    match call {
        ToolCall::Page(args) if args.action == TabAction::Open => {
            args.url.clone().filter(|url| url != "about:blank")
        }
        _ => None,
    }
}

/// Makes the tab with `target_id` active; returns its id.
fn activate(session: &mut ToolSession, target_id: &str) -> Option<String> {
    let live = session.browser.live.as_mut()?;
    let id = live
        .tabs
        .iter()
        .find(|tab| tab.page.target_id() == target_id)
        .map(|tab| tab.id.clone());
    if id.is_some() {
        live.active.clone_from(&id);
    }
    id
}

/// A tab by index digits or id; NO_MATCH if there is none.
fn find_tab(session: &ToolSession, target: &str, verb: &str) -> Result<Tab, ToolError> {
    let tabs = session
        .browser
        .live
        .as_ref()
        .map_or(&[][..], |live| &live.tabs[..]);
    let found = if target.bytes().all(|byte| byte.is_ascii_digit()) && !target.is_empty() {
        target
            .parse::<usize>()
            .ok()
            .and_then(|index| tabs.get(index))
    } else {
        tabs.iter().find(|tab| tab.id == target)
    };
    found
        .cloned()
        .ok_or_else(|| no_page(verb, target, tabs.len()))
}

fn no_page(verb: &str, target: &str, open: usize) -> ToolError {
    let what = if target.bytes().all(|byte| byte.is_ascii_digit()) && !target.is_empty() {
        format!("at index {target}")
    } else {
        format!("with id {target:?}")
    };
    ToolError::new(
        ToolErrorCode::NoMatch,
        format!("{verb}: no page {what} ({open} open)"),
    )
    .with_hint("list the tabs with browser_page list")
    .with_detail(json!({ "selector": target, "query": target }))
}
