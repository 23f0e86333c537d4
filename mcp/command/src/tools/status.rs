//! browser_status (docs/tools.md#browser_status--status): what the session knows, without launching.
//!
//! Owns the status result: the before-launch shape (`ready:false`, browser
//! fields null) until a browser runs, then what the engine reports.

use serde_json::json;

use super::schema::{tool_args, Arg, Capability, Cli, Hints, Runs, ToolDecl};
use super::ToolContext;
use crate::error::{ToolError, ToolOutput};
use crate::session::ToolSession;

pub(super) const STATUS: ToolDecl = ToolDecl {
    name: "browser_status",
    title: "Status",
    verb: "status",
    description: "Report browser, mode, URL, tab count and artifact directory; never launches.",
    hints: Hints::L,
    observes: false,
    cli: Cli::new("status", &[]),
    args: StatusArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

tool_args! {
    /// The arguments of browser_status, in schema order.
    pub struct StatusArgs {
    }
}

pub(super) async fn status(
    ctx: &mut ToolContext<'_>,
    _args: StatusArgs,
) -> Result<ToolOutput, ToolError> {
    // First: a browser that went away is dropped (and, on an endpoint, reported as lost).
    let page = ctx.session.current_page();
    let mut status = status_json(ctx.session);
    // The replacement is said here; the next call's observation need not repeat it.
    ctx.session.take_replaced_notice();
    if let Some(live) = &ctx.session.browser.live {
        let product = &live.browser.version().product;
        let (name, version) = product.split_once('/').unwrap_or((product.as_str(), ""));
        status["ready"] = json!(true);
        status["browser"] = json!(name);
        status["browserVersion"] = json!(if version.is_empty() {
            None
        } else {
            Some(version)
        });
        status["browserPid"] = json!(live.browser.pid());
        status["pageCount"] = json!(live.tabs.len());
        status["activeUrl"] = json!(page.map(|page| page.url()));
    }
    Ok(ToolOutput::new(status))
}

/// The status before launch.
pub(super) fn status_json(session: &ToolSession) -> serde_json::Value {
    let mut status = json!({
        "ready": false,
        "browser": null,
        "browserVersion": null,
        "browserPid": null,
        "mode": session.config.mode(),
        "serverPid": session.server_pid,
        "activeUrl": null,
        "pageCount": 0,
        "viewport": { "width": 1280, "height": 800 },
        "headless": !session.config.headed,
        "artifactsDir": session.artifacts.dir().display().to_string(),
        // Events the engine could not decode (a protocol that renamed a field it reads).
        "decodeFailures": chromate::cdp::decode_failures(),
    });
    // A --cdp-endpoint browser that went away (a pool ended the session) and was replaced.
    let (count, last) = session.replacements();
    if count > 0 {
        status["browserReplaced"] = json!({ "count": count, "lastReason": last });
    }
    // One that went away and is not replaced yet: the next call that needs it connects again.
    if let Some(reason) = session.lost_endpoint_browser() {
        status["browserLost"] = json!(reason);
    }
    status
}
