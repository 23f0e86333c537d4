//! browser_navigate (§4.3): its declaration, arguments, URL rule and handler.
//!
//! Owns the URL-shape cross-argument rule. Does not load anything yet: the
//! handler is wired to the engine later and answers UNSUPPORTED meanwhile.

use serde::Deserialize;

use super::schema::{Arg, Hints, ToolDecl};
use super::{ToolContext, NAV_TIMEOUT};
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

pub(crate) const NAVIGATE: ToolDecl = ToolDecl {
    name: "browser_navigate",
    title: "Navigate",
    verb: "navigate",
    description: "Load a URL in the active tab and wait for its load event.",
    hints: Hints::A,
    observes: true,
    args: &[
        Arg::string("url", "Absolute http(s), file or data URL, or about:blank")
            .max_len(2048)
            .required(),
        NAV_TIMEOUT,
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct NavigateArgs {
    pub(crate) url: String,
    pub(crate) timeout_ms: u64,
}

pub(crate) fn check_navigate(args: &NavigateArgs, _session: &Session) -> Result<(), ToolError> {
    if url_is_navigable(&args.url) {
        return Ok(());
    }
    Err(ToolError::invalid_argument(
        format!(
            "navigate: {:?} is not an absolute http, https, file or data URL, or about:blank",
            args.url
        ),
        "url",
        format!("add the scheme, e.g. https://{}", args.url.trim()),
    ))
}

/// Absolute `http`, `https`, `file`, `data` URLs and `about:blank` (§4.3).
pub(crate) fn url_is_navigable(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let has_host = |rest: &str| {
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        !host.is_empty() && !host.contains(char::is_whitespace)
    };
    if let Some(rest) = lower.strip_prefix("http://") {
        return has_host(rest);
    }
    if let Some(rest) = lower.strip_prefix("https://") {
        return has_host(rest);
    }
    lower.starts_with("file://") || lower.starts_with("data:") || lower == "about:blank"
}

pub(crate) async fn navigate(
    _ctx: &mut ToolContext<'_>,
    _args: NavigateArgs,
) -> Result<ToolOutput, ToolError> {
    Err(ToolError::not_in_this_build(NAVIGATE.verb, NAVIGATE.name))
}
