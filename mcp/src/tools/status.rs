//! browser_status (§4.3): what the session knows, without launching.
//!
//! Owns the status result. With no engine in this build there is never a
//! browser, so it always reports the before-launch shape (`ready:false`,
//! browser fields null); the engine wiring fills the browser fields.

use serde::Deserialize;
use serde_json::json;

use super::schema::{Hints, ToolDecl};
use super::ToolContext;
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

pub(crate) const STATUS: ToolDecl = ToolDecl {
    name: "browser_status",
    title: "Status",
    verb: "status",
    description: "Report browser, mode, URL, tab count and artifact directory; never launches.",
    hints: Hints::L,
    observes: false,
    args: &[],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusArgs {}

pub(crate) fn check_status(_args: &StatusArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) async fn status(
    ctx: &mut ToolContext<'_>,
    _args: StatusArgs,
) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::new(status_json(ctx.session)))
}

/// The status before launch.
pub(crate) fn status_json(session: &Session) -> serde_json::Value {
    json!({
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
    })
}
