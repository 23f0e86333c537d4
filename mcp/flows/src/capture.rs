//! One capture: the options of `chromate capture` and of a flow's capture steps (declared once,
//! checked by the tools' own validator), the file name rule, loading the page with retries,
//! and the PNG or PDF written into the output directory with its metadata.
//!
//! Owns: [`CAPTURE`] (the declaration the command line, flow files and MCP read), the
//! cross-option rules, [`capture`] (viewport, navigation under `wait_until` with the retry
//! schedule of `retry.rs`, masks and frozen animations, element, full page or PDF, the file
//! replaced atomically) and [`CaptureRecord`] (what a sidecar and a result say about it).
//! Does not own choosing the output directory (`output.rs`), running flows (`mod.rs`) or the
//! pixels themselves (the engine's `Page::screenshot` and `Page::pdf`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use chromate_command::call::{cancelled_error, Cancel};
use chromate_command::error::{from_engine, hint_for, ToolError, ToolErrorCode};
use chromate_command::session::ToolSession;
use chromate_command::tools::schema::{
    arg_enum, Arg, Capability, Cli, Hints, IntDefault, Kind, Pattern, Runs, Slot, ToolDecl,
};

/// The default viewport of a capture (and of a flow without `viewport`).
pub const DEFAULT_VIEWPORT: (u32, u32) = (1280, 720);
/// The default mask colour.
pub const DEFAULT_MASK_COLOR: &str = "#FF00FF";
/// Longest capture name: with `.png`/`.json` it stays far below a file name's 255 bytes.
pub const MAX_NAME_LEN: u32 = 128;

/// `^[A-Za-z0-9._-]+$`, and neither `.` nor `..`: a name is one file name in the output
/// directory, never a path out of it.
pub static NAME_PATTERN: Pattern = Pattern {
    source: "^[A-Za-z0-9._-]+$",
    matches: name_is_valid,
};

/// Whether `name` is a capture (or flow) name: [`NAME_PATTERN`].
pub fn name_is_valid(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// `url` of a capture.
pub const URL: Arg = Arg::string(
    "url",
    "http(s), file or data URL (in a flow: optional, else the current page)",
)
.max_len(2048);
/// `name`: the file name without extension.
pub const NAME: Arg = Arg::string("name", "File name without extension: A-Z a-z 0-9 . _ -")
    .min_len(1)
    .max_len(MAX_NAME_LEN)
    .pattern(&NAME_PATTERN)
    .required();
/// `selector`: one element's box.
pub const SELECTOR: Arg = Arg::string("selector", "Capture only this element's box").min_len(1);
const FULL_PAGE: Arg = Arg::boolean("full_page", "The whole document, not just the viewport");
/// `output_dir`.
pub const OUTPUT_DIR: Arg = Arg::string(
    "output_dir",
    "Directory for the file (default: a private per-user directory in the temp dir)",
)
.min_len(1)
.max_len(4096);
arg_enum! {
    /// A capture's `wait_until`.
    pub enum CaptureWaitUntil {
        Load = "load",
        DomContentLoaded = "domcontentloaded",
        NetworkIdle = "networkidle",
        Commit = "commit",
    }
}

arg_enum! {
    /// A capture's `animations`.
    pub enum Animations {
        Disabled = "disabled",
        Allow = "allow",
    }
}

arg_enum! {
    /// A capture's `format`.
    pub enum Format {
        Png = "png",
        Pdf = "pdf",
    }
}

arg_enum! {
    /// A PDF capture's `paper`.
    pub enum Paper {
        Letter = "letter",
        Legal = "legal",
        Tabloid = "tabloid",
        A3 = "a3",
        A4 = "a4",
        A5 = "a5",
    }
}

/// `wait_until`.
pub const WAIT_UNTIL: Arg = Arg::one_of(
    "wait_until",
    "Load state to wait for",
    CaptureWaitUntil::VALUES,
)
.default_str("load");
/// `timeout_ms` of a capture (=30000).
pub const TIMEOUT_MS: Arg = Arg::int(
    "timeout_ms",
    "ms for the load and the element",
    0,
    chromate_command::config::MAX_TIMEOUT_MS as i64,
)
.default_int(IntDefault::Value(30_000));
/// `viewport_width`.
pub const VIEWPORT_WIDTH: Arg = Arg::int("viewport_width", "CSS px (default 1280)", 1, 16_384);
/// `viewport_height`.
pub const VIEWPORT_HEIGHT: Arg = Arg::int("viewport_height", "CSS px (default 720)", 1, 16_384);
/// `animations`.
pub const ANIMATIONS: Arg = Arg::one_of(
    "animations",
    "disabled freezes CSS animations, transitions and the caret",
    Animations::VALUES,
)
.default_str("disabled");
/// `mask`.
pub const MASK: Arg = Arg::kind(
    "mask",
    "Cover this selector's matches with a solid box (none matching: no-op)",
    Kind::StrList {
        min_items: 0,
        max_items: 64,
        item_min_len: 1,
        item_max_len: 2048,
    },
);
/// `mask_color`.
pub const MASK_COLOR: Arg = Arg::string(
    "mask_color",
    "CSS colour of the mask boxes (default #FF00FF)",
)
.min_len(1)
.max_len(64);
const FORMAT: Arg =
    Arg::one_of("format", "png, or pdf of the full document", Format::VALUES).default_str("png");
const PAPER: Arg = Arg::one_of("paper", "PDF paper size", Paper::VALUES).default_str("letter");
const MARGIN_IN: Arg =
    Arg::num("margin_in", "PDF margin on every side, inches", 0.0, 4.0).default_num(0.4);
const LANDSCAPE: Arg = Arg::boolean("landscape", "PDF in landscape");

/// The options of one capture. The command line reads its flags from here (`--full-page`,
/// `--wait-until`, repeated `--mask`), a flow's capture step its keys, MCP its arguments.
pub const CAPTURE: ToolDecl = ToolDecl {
    name: "capture_url",
    title: "Capture",
    verb: "capture",
    description: "Load a page in headless Chromium and save a deterministic PNG (or PDF) of it.",
    hints: Hints::S,
    observes: false,
    cli: Cli::new("capture", &[Slot::arg("url")]),
    args: &[
        URL,
        NAME,
        SELECTOR,
        FULL_PAGE,
        OUTPUT_DIR,
        WAIT_UNTIL,
        TIMEOUT_MS,
        VIEWPORT_WIDTH,
        VIEWPORT_HEIGHT,
        ANIMATIONS,
        MASK,
        MASK_COLOR,
        FORMAT,
        PAPER,
        MARGIN_IN,
        LANDSCAPE,
    ],
    capability: Capability::Flows,
    runs: Runs::Detached(crate::capture_call),
    spill: None,
    negative: None,
};

/// A validated capture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureArgs {
    pub url: Option<String>,
    pub name: String,
    pub selector: Option<String>,
    #[serde(default)]
    pub full_page: bool,
    pub output_dir: Option<String>,
    pub wait_until: CaptureWaitUntil,
    pub timeout_ms: u64,
    pub viewport_width: Option<u32>,
    pub viewport_height: Option<u32>,
    pub animations: Animations,
    #[serde(default)]
    pub mask: Vec<String>,
    pub mask_color: Option<String>,
    pub format: Format,
    pub paper: Paper,
    pub margin_in: f64,
    #[serde(default)]
    pub landscape: bool,
}

impl CaptureArgs {
    /// Types a map [`CAPTURE`]'s validator produced and applies the cross-option rules.
    pub fn from_validated(arguments: Map<String, Value>) -> Result<CaptureArgs, ToolError> {
        let args: CaptureArgs =
            serde_json::from_value(Value::Object(arguments)).map_err(|err| {
                ToolError::new(
                    ToolErrorCode::DriverError,
                    format!("capture: internal error: arguments did not decode: {err}"),
                )
                .with_hint("report this chromate bug; nothing was captured")
            })?;
        args.check()?;
        Ok(args)
    }

    fn check(&self) -> Result<(), ToolError> {
        if self.full_page && self.selector.is_some() {
            return Err(ToolError::invalid_argument(
                "capture: full_page cannot be combined with selector",
                "full_page",
                "drop full_page to capture the element, or drop selector",
            ));
        }
        if self.format == Format::Pdf && (self.selector.is_some() || self.full_page) {
            return Err(ToolError::invalid_argument(
                "capture: a pdf is always the full document; selector and full_page are for png",
                if self.full_page {
                    "full_page"
                } else {
                    "selector"
                },
                "drop selector and full_page, or capture a png",
            ));
        }
        if self.viewport_width.is_some() != self.viewport_height.is_some() {
            return Err(ToolError::invalid_argument(
                "capture: viewport_width and viewport_height go together",
                if self.viewport_width.is_some() {
                    "viewport_height"
                } else {
                    "viewport_width"
                },
                "give both, e.g. 1280 and 720",
            ));
        }
        if let Some(url) = &self.url {
            if !chromate_command::tools::url_is_navigable(url) {
                return Err(ToolError::invalid_argument(
                    format!(
                        "capture: {url:?} is not an absolute http, https, file or data URL, or about:blank"
                    ),
                    "url",
                    chromate_command::tools::url_hint(url),
                ));
            }
        }
        Ok(())
    }

    /// The element selector and the masks, parsed once where they enter, before anything
    /// runs: a malformed selector is INVALID_ARGUMENT as for every element tool, a malformed
    /// mask INVALID_ARGUMENT `mask` saying it cannot be masked (as when the page rejects one).
    fn selectors(
        &self,
    ) -> Result<(Option<chromate::Selector>, Vec<chromate::Selector>), chromate::Error> {
        let selector = self
            .selector
            .as_deref()
            .map(chromate::Selector::parse)
            .transpose()?;
        let mask = self
            .mask
            .iter()
            .map(|text| {
                chromate::Selector::parse(text).map_err(|err| {
                    chromate::Error::invalid_argument_of(
                        "mask",
                        format!("{}: cannot mask {text}: {err}", CAPTURE.verb),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((selector, mask))
    }

    /// The viewport this capture asks for, if it names one.
    pub fn viewport(&self) -> Option<(u32, u32)> {
        Some((self.viewport_width?, self.viewport_height?))
    }

    /// `png` or `pdf`.
    pub fn extension(&self) -> &'static str {
        self.format.as_str()
    }

    pub(crate) fn wait_until(&self) -> chromate::WaitUntil {
        match self.wait_until {
            CaptureWaitUntil::Commit => chromate::WaitUntil::Commit,
            CaptureWaitUntil::DomContentLoaded => chromate::WaitUntil::DomContentLoaded,
            CaptureWaitUntil::NetworkIdle => chromate::WaitUntil::NetworkIdle,
            CaptureWaitUntil::Load => chromate::WaitUntil::Load,
        }
    }

    /// Paper width and height in inches, landscape applied by the browser.
    fn paper_inches(&self) -> (f64, f64) {
        match self.paper {
            Paper::Legal => (8.5, 14.0),
            Paper::Tabloid => (11.0, 17.0),
            Paper::A3 => (11.69, 16.54),
            Paper::A4 => (8.27, 11.69),
            Paper::A5 => (5.83, 8.27),
            Paper::Letter => (8.5, 11.0),
        }
    }
}

/// What a capture produced: the result of `chromate capture` and a flow's sidecar.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureRecord {
    pub name: String,
    pub path: PathBuf,
    pub format: &'static str,
    /// The page's URL when it was captured.
    pub url: String,
    pub viewport: (u32, u32),
    pub selector: Option<String>,
    pub full_page: bool,
    /// ISO-8601 UTC.
    pub time: String,
    /// Pixels (PNG only).
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub bytes: u64,
    pub sha256: String,
    pub masked: Vec<String>,
    /// Page errors and console errors journalled while the capture ran.
    pub console_errors: Vec<Value>,
    /// Navigations tried (1 unless a retry was needed; 0 without a URL).
    pub attempts: u32,
}

impl CaptureRecord {
    /// The record as JSON: the sidecar `<name>.json` and the result of `chromate capture`.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "path": self.path.display().to_string(),
            "format": self.format,
            "url": self.url,
            "viewport": { "width": self.viewport.0, "height": self.viewport.1 },
            "selector": self.selector,
            "full_page": self.full_page,
            "time": self.time,
            "size": { "width": self.width, "height": self.height, "bytes": self.bytes },
            "sha256": self.sha256,
            "masked": self.masked,
            "console_errors": self.console_errors,
            "attempts": self.attempts,
        })
    }
}

/// Captures into `dir` (which exists) on the session's active page: sets the viewport the
/// capture names, loads `url` (retried on a timeout or a `net::ERR_*`), then writes
/// `<dir>/<name>.png|pdf`, replacing a file of that name atomically.
pub fn capture<'a>(
    session: &'a mut ToolSession,
    args: &'a CaptureArgs,
    dir: &'a Path,
    cancel: &'a Cancel,
) -> chromate_command::Boxed<'a, Result<CaptureRecord, ToolError>> {
    Box::pin(capture_unboxed(session, args, dir, cancel))
}

async fn capture_unboxed(
    session: &mut ToolSession,
    args: &CaptureArgs,
    dir: &Path,
    cancel: &Cancel,
) -> Result<CaptureRecord, ToolError> {
    let verb = CAPTURE.verb;
    let (selector, mask) = args.selectors().map_err(|err| from_engine(verb, &err))?;
    let log_cursor = session.journal.log.cursor();
    let page = session.active_page(verb).await?;
    if let Some((width, height)) = args.viewport() {
        set_viewport(session, &page, width, height).await?;
    }
    let timeout = Duration::from_millis(args.timeout_ms);
    let mut attempts = 0;
    if let Some(url) = &args.url {
        attempts =
            super::retry::navigate(session, &page, url, args.wait_until(), timeout, cancel).await?;
    }
    let freeze = args.animations != Animations::Allow;
    let mask_color = args
        .mask_color
        .clone()
        .unwrap_or_else(|| DEFAULT_MASK_COLOR.to_owned());
    let (data, width, height) = if args.format == Format::Pdf {
        let (paper_width, paper_height) = args.paper_inches();
        let options = chromate::capture::PdfOptions {
            mask,
            mask_color,
            freeze_animations: freeze,
            paper_width_in: paper_width,
            paper_height_in: paper_height,
            margin_in: args.margin_in,
            landscape: args.landscape,
            timeout,
        };
        let pdf = run_engine(session, &page, verb, cancel, page.pdf(options)).await?;
        (pdf, None, None)
    } else {
        let target = match (selector, args.full_page) {
            (Some(selector), _) => chromate::capture::ScreenshotTarget::Element(selector),
            (None, true) => chromate::capture::ScreenshotTarget::FullPage,
            (None, false) => chromate::capture::ScreenshotTarget::Viewport,
        };
        let options = chromate::capture::ScreenshotOptions {
            target,
            mask,
            mask_color,
            freeze_animations: freeze,
            viewport: None,
            timeout,
        };
        let shot = run_engine(session, &page, verb, cancel, page.screenshot(options)).await?;
        (shot.png, Some(shot.width), Some(shot.height))
    };
    let file_name = format!("{}.{}", args.name, args.extension());
    let path = dir.join(&file_name);
    super::output::replace_file(dir, &file_name, &data).map_err(|err| {
        ToolError::new(
            ToolErrorCode::DriverError,
            format!("capture: cannot write {}: {err}", path.display()),
        )
        .with_hint("check that the output directory is writable (--output-dir)")
        .with_detail(json!({ "reason": "io" }))
    })?;
    let viewport = match args.viewport() {
        Some(viewport) => viewport,
        None => current_viewport(session, &page).await,
    };
    Ok(CaptureRecord {
        name: args.name.clone(),
        path,
        format: args.extension(),
        url: page.url(),
        viewport,
        selector: args.selector.clone(),
        full_page: args.full_page,
        time: chromate_command::trace::iso_now(),
        width,
        height,
        bytes: data.len() as u64,
        sha256: super::output::sha256_hex(&data),
        masked: args.mask.clone(),
        console_errors: console_errors_since(session, log_cursor),
        attempts,
    })
}

/// Error entries (page errors, console errors) journalled after `cursor`, as JSON.
pub fn console_errors_since(session: &ToolSession, cursor: u64) -> Vec<Value> {
    session
        .journal
        .log
        .list(&chromate::journal::LogFilter::errors(), cursor, 100)
        .entries
        .iter()
        .map(|entry| {
            json!({
                "seq": entry.seq,
                "kind": entry.kind().as_str(),
                "text": entry.text(),
                "url": entry.url(),
            })
        })
        .collect()
}

/// Sets the page's viewport (CSS px, scale 1) for what follows, with scrollbars hidden: a
/// capture shows the page, and a full-page capture is exactly the viewport wide.
pub fn set_viewport<'a>(
    session: &'a mut ToolSession,
    page: &'a chromate::Page,
    width: u32,
    height: u32,
) -> chromate_command::Boxed<'a, Result<(), ToolError>> {
    Box::pin(set_viewport_unboxed(session, page, width, height))
}

async fn set_viewport_unboxed(
    session: &mut ToolSession,
    page: &chromate::Page,
    width: u32,
    height: u32,
) -> Result<(), ToolError> {
    use chromate::cdp::emulation;
    let metrics = emulation::SetDeviceMetricsOverrideParams::new(
        i64::from(width),
        i64::from(height),
        1.0,
        false,
    );
    let scrollbars = emulation::SetScrollbarsHiddenParams::new(true);
    let cdp = page.session();
    let sent = page
        .within(session.agent_timeout(), async {
            cdp.send(&metrics).await?;
            cdp.send(&scrollbars).await
        })
        .await;
    match sent {
        Ok(_) => Ok(()),
        Err(err) => Err(session.engine_error("capture", &err)),
    }
}

/// The viewport as the page reports it (its layout viewport), `(0, 0)` if it does not answer.
async fn current_viewport(session: &ToolSession, page: &chromate::Page) -> (u32, u32) {
    let metrics = page
        .within(
            session.agent_timeout(),
            page.session()
                .send(&chromate::cdp::page::GetLayoutMetricsParams::default()),
        )
        .await;
    match metrics {
        Ok(metrics) => (
            u32::try_from(metrics.css_layout_viewport.client_width).unwrap_or(0),
            u32::try_from(metrics.css_layout_viewport.client_height).unwrap_or(0),
        ),
        Err(_) => (0, 0),
    }
}

async fn run_engine<T>(
    session: &mut ToolSession,
    page: &chromate::Page,
    verb: &str,
    cancel: &Cancel,
    future: impl std::future::Future<Output = chromate::Result<T>>,
) -> Result<T, ToolError> {
    match cancel.run(future).await {
        None => Err(cancelled_error(verb)),
        Some(Ok(value)) => Ok(value),
        Some(Err(err)) => {
            let mut error = session.element_error(verb, page, &err).await;
            if error.code == ToolErrorCode::InvalidArgument && error.hint.is_none() {
                error = error.with_hint(hint_for(ToolErrorCode::InvalidArgument));
            }
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_file_name_of_the_allowed_characters() {
        for good in ["home", "after-fill", "v1.2_final", "A", "..x", "x.."] {
            assert!(name_is_valid(good), "{good:?}");
        }
        let long = "a".repeat(MAX_NAME_LEN as usize + 1);
        for bad in [
            "", ".", "..", "../x", "/abs", "a/b", "a\0b", "a b", "é", "a\\b",
        ] {
            assert!(!name_is_valid(bad), "{bad:?}");
        }
        let too_long = super::super::capture_args(
            &serde_json::from_value(json!({ "name": long, "url": "about:blank" })).unwrap(),
        );
        assert!(too_long.is_err());
    }

    #[test]
    fn cross_option_rules_name_the_option() {
        let refused = |arguments: Value| {
            let map = serde_json::from_value(arguments).unwrap();
            super::super::capture_args(&map).unwrap_err()
        };
        let error = refused(json!({ "name": "x", "format": "pdf", "selector": "#a" }));
        assert_eq!(error.detail.unwrap()["argument"], "selector");
        let error = refused(json!({ "name": "x", "viewport_width": 800 }));
        assert_eq!(error.detail.unwrap()["argument"], "viewport_height");
        let error = refused(json!({ "name": "x", "colour": "red" }));
        assert!(error.message.contains("colour"), "{}", error.message);
    }

    #[test]
    fn selectors_and_masks_are_parsed_once_and_a_malformed_mask_names_mask() {
        let args = |arguments: Value| {
            let map = serde_json::from_value(arguments).unwrap();
            super::super::capture_args(&map).unwrap()
        };
        let (selector, mask) =
            args(json!({ "name": "x", "selector": "#a", "mask": ["#clock", "e7"] }))
                .selectors()
                .unwrap();
        assert_eq!(selector.unwrap().canonical(), "css=#a");
        let mask: Vec<&str> = mask.iter().map(chromate::Selector::canonical).collect();
        assert_eq!(mask, ["css=#clock", "ref=e7"]);
        let error = args(json!({ "name": "x", "mask": ["#ok", "ref=seven"] }))
            .selectors()
            .unwrap_err();
        let error = from_engine("capture", &error);
        assert_eq!(error.code, ToolErrorCode::InvalidArgument);
        assert_eq!(error.detail.as_ref().unwrap()["argument"], "mask");
        assert!(
            error
                .message
                .starts_with("capture: cannot mask ref=seven: invalid selector"),
            "{}",
            error.message
        );
        let error = args(json!({ "name": "x", "selector": "role=[" }))
            .selectors()
            .unwrap_err();
        assert_eq!(error.code(), chromate::ErrorCode::InvalidArgument);
    }
}
