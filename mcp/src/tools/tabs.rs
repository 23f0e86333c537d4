//! browser_page (§4.3, §11.3): tabs — declaration, arguments, rules, and
//! `list` before a browser has run (an empty list, never a launch).
//!
//! Does not open, select or close tabs yet: those answer UNSUPPORTED until
//! the engine is wired.

use serde::Deserialize;
use serde_json::json;

use super::schema::{Arg, Hints, ToolDecl};
use super::{ToolContext, NAV_TIMEOUT};
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

pub(crate) const PAGE: ToolDecl = ToolDecl {
    name: "browser_page",
    title: "Tabs",
    verb: "page",
    description: "List, open, select or close tabs; ids p1, p2… and indexes in opening order.",
    hints: Hints::D,
    observes: false,
    args: &[
        Arg::one_of("action", "Tab action", &["list", "open", "select", "close"]).required(),
        Arg::string("target", "Tab index or id (select, close)")
            .min_len(1)
            .max_len(128),
        Arg::string("url", "URL to open (open)").max_len(2048),
        NAV_TIMEOUT,
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Some fields are read once the engine is wired.
pub(crate) struct PageArgs {
    pub(crate) action: String,
    pub(crate) target: Option<String>,
    pub(crate) url: Option<String>,
    pub(crate) timeout_ms: u64,
}

pub(crate) fn check_page(args: &PageArgs, _session: &Session) -> Result<(), ToolError> {
    if args.action == "select" && args.target.is_none() {
        return Err(ToolError::invalid_argument(
            "page select: missing \"target\"",
            "target",
            "pass target= a tab index or id from browser_page list",
        ));
    }
    if let Some(url) = &args.url {
        if args.action != "open" {
            return Err(ToolError::invalid_argument(
                format!("page {}: url is only for action \"open\"", args.action),
                "url",
                "drop url, or use action=open",
            ));
        }
        if !super::navigation::url_is_navigable(url) {
            return Err(ToolError::invalid_argument(
                format!("page open: {url:?} is not an absolute http, https, file or data URL, or about:blank"),
                "url",
                format!("add the scheme, e.g. https://{}", url.trim()),
            ));
        }
    }
    Ok(())
}

pub(crate) async fn page(
    _ctx: &mut ToolContext<'_>,
    args: PageArgs,
) -> Result<ToolOutput, ToolError> {
    match args.action.as_str() {
        // Never launches: with no browser there are no tabs.
        "list" => Ok(ToolOutput::new(
            json!({ "pages": [], "count": 0, "active": null }),
        )),
        action => Err(ToolError::not_in_this_build(
            &format!("page {action}"),
            PAGE.name,
        )),
    }
}
