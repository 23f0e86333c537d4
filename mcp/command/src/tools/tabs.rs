//! browser_page (docs/tools.md#browser_page--tabs): tabs — declaration, arguments, rules and
//! the four actions. `list` never launches (before a browser has run it is
//! an empty list); the tab ids themselves live in the session.

use std::time::Duration;

use serde_json::json;

use super::schema::{arg_enum, tool_args, Arg, Capability, Cli, Hints, Runs, Slot, ToolDecl};
use super::{cancelled_error, ToolContext, NAV_TIMEOUT};
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
        super::navigation::refuse_file_url("page open", url, session)?;
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
            let url = args.url.as_deref().unwrap_or("about:blank");
            let live = ctx.session.ensure_browser(&verb).await?;
            let browser = live.browser.clone();
            let previous = live.active_tab().map(|tab| tab.page.target_id().to_owned());
            // Bounded by the call's timeout_ms: a browser that does not answer (stopped)
            // fails the call in time instead of at the 30 s command timeout.
            let bound = Duration::from_millis(args.timeout_ms);
            let page = match chromate::wait::bounded(bound, live.open_tab()).await {
                Ok(page) => page,
                Err(err) => return Err(ctx.session.engine_error(&verb, &err)),
            };
            ctx.session.sync_tabs();
            let id = activate(ctx.session, page.target_id());
            ctx.session.shown.baseline = None;
            if url != "about:blank" {
                let timeout = Duration::from_millis(args.timeout_ms);
                let loaded = ctx
                    .cancel
                    .run(page.goto(url, chromate::WaitUntil::Load, timeout))
                    .await
                    .ok_or_else(|| cancelled_error(&verb))?;
                if let Err(err) = loaded {
                    let error =
                        super::navigation::navigation_error(ctx, &verb, &err, url, args.timeout_ms);
                    // A tab that could not open its URL is not left behind: it closes, and
                    // the tab that was active is again.
                    if let Some(previous) = previous {
                        // The error above is what the caller needs; a failed close changes
                        // nothing they can act on.
                        let _ = browser.close_page(&page).await;
                        ctx.session.sync_tabs();
                        activate(ctx.session, &previous);
                    }
                    return Err(error);
                }
            }
            Ok(ToolOutput::new(
                json!({ "ok": true, "action": "open", "id": id, "url": page.url() }),
            ))
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
