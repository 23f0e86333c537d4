//! browser_screenshot (§4.3): declaration, arguments and the
//! `full_page`-with-`selector` rule.
//!
//! Does not capture yet: the handler answers UNSUPPORTED until the engine is
//! wired. Files go to the session directory through `artifacts.rs`.

use serde::Deserialize;

use super::schema::{Arg, Hints, ToolDecl};
use super::{ToolContext, SELECTOR_OPT, TIMEOUT};
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

pub(crate) const SCREENSHOT: ToolDecl = ToolDecl {
    name: "browser_screenshot",
    title: "Screenshot",
    verb: "screenshot",
    description: "Save a PNG of the viewport, full page or one element to the session directory.",
    hints: Hints::S,
    observes: false,
    args: &[
        SELECTOR_OPT,
        Arg::boolean("full_page", "Whole document (not with selector)"),
        TIMEOUT,
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct ScreenshotArgs {
    pub(crate) selector: Option<String>,
    #[serde(default)]
    pub(crate) full_page: bool,
    pub(crate) timeout_ms: u64,
}

pub(crate) fn check_screenshot(args: &ScreenshotArgs, _session: &Session) -> Result<(), ToolError> {
    if args.full_page && args.selector.is_some() {
        return Err(ToolError::invalid_argument(
            "screenshot: full_page cannot be combined with selector",
            "full_page",
            "drop full_page to capture the element, or drop selector",
        ));
    }
    Ok(())
}

unwired! {
    screenshot(ScreenshotArgs) => SCREENSHOT;
}
