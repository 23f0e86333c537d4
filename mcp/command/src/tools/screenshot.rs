//! browser_screenshot (docs/tools.md#browser_screenshot--screenshot): declaration, arguments, the
//! `full_page`-with-`selector` rule, and the handler.
//!
//! Captures through `Page::screenshot` and writes `NNNN-screenshot.png` to
//! the session directory through `artifacts.rs` (over quota → STATE_INVALID,
//! nothing left behind). Does not choose file names or paths itself.

use std::time::Duration;

use serde_json::json;

use super::schema::{tool_args, Arg, Capability, Cli, Hints, Runs, Slot, ToolDecl};
use super::{ToolContext, SELECTOR_OPT, TIMEOUT};
use crate::artifacts::WriteError;
use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::session::ToolSession;

pub(super) const SCREENSHOT: ToolDecl = ToolDecl {
    name: "browser_screenshot",
    title: "Screenshot",
    verb: "screenshot",
    description: "Save a PNG of the viewport, full page or one element to the session directory.",
    hints: Hints::S,
    observes: false,
    cli: Cli::new("screenshot", &[Slot::arg("selector")]),
    args: ScreenshotArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

tool_args! {
    /// The arguments of browser_screenshot, in schema order.
    pub struct ScreenshotArgs {
        selector: Option<String> = SELECTOR_OPT,
        #[serde(default)]
        full_page: bool = Arg::boolean("full_page", "Whole document (not with selector)"),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

pub(super) fn check_screenshot(
    args: &ScreenshotArgs,
    _session: &ToolSession,
) -> Result<(), ToolError> {
    if args.full_page && args.selector.is_some() {
        return Err(ToolError::invalid_argument(
            "screenshot: full_page cannot be combined with selector",
            "full_page",
            "drop full_page to capture the element, or drop selector",
        ));
    }
    Ok(())
}

pub(super) async fn screenshot(
    ctx: &mut ToolContext<'_>,
    args: ScreenshotArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = SCREENSHOT.verb;
    let target = match (&args.selector, args.full_page) {
        (Some(selector), _) => {
            let (_, locator) = super::locate(ctx, verb, selector, args.timeout_ms).await?;
            chromate::capture::ScreenshotTarget::Element(locator.selector().clone())
        }
        (None, true) => chromate::capture::ScreenshotTarget::FullPage,
        (None, false) => chromate::capture::ScreenshotTarget::Viewport,
    };
    if !ctx.session.browser_running() {
        ctx.progress.set_phase(ctx.session.start_phase());
    }
    let page = ctx.session.active_page(verb).await?;
    let options = chromate::capture::ScreenshotOptions {
        target,
        timeout: Duration::from_millis(args.timeout_ms),
        ..chromate::capture::ScreenshotOptions::default()
    };
    let shot = super::engine(ctx, verb, &page, page.screenshot(options)).await?;
    let bytes = shot.png.len();
    let path = match ctx.session.artifacts.write("screenshot.png", &shot.png) {
        Ok(path) => path,
        Err(WriteError::Quota) => {
            return Err(ToolError::new(
                ToolErrorCode::StateInvalid,
                "screenshot: the session directory's artifact quota is reached",
            )
            .with_hint("start a new session for more screenshots; files already saved stay")
            .with_detail(json!({ "reason": "quota" })))
        }
        Err(WriteError::Io(reason)) => {
            return Err(ToolError::new(
                ToolErrorCode::DriverError,
                format!("screenshot: cannot write the file: {reason}"),
            )
            .with_hint("check that the artifacts directory is writable (--artifacts-dir)")
            .with_detail(json!({ "reason": "io" })))
        }
    };
    Ok(ToolOutput::new(json!({
        "ok": true,
        "path": path.display().to_string(),
        "bytes": bytes,
        "width": shot.width,
        "height": shot.height,
    }))
    .with_link(path))
}
