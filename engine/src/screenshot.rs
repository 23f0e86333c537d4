//! Screenshots: PNG captures of the viewport, the whole document, or one element's box.
//!
//! A capture can mask elements (painted as solid boxes of their border boxes at paint time,
//! whatever they hold then; docs/cli.md#chromate-capture) and freeze what moves
//! (finite animations and transitions finished, infinite ones cancelled, the caret hidden), so
//! two captures of an unchanged page are byte-identical; the page JS for that is
//! `js/screenshot.js`, undone right after the capture. An element capture waits for the element
//! to be visible and clips to its box in document coordinates without scrolling.
//!
//! This module does not write files, name them or count quotas: callers (the command layer) do.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::cdp::{emulation, page as cdp_page};
use crate::error::{Error, Result};
use crate::selector::{self, Selector};
use crate::wait::{Deadline, Poller, DEFAULT_TIMEOUT, POLL_EVERY};
use crate::Page;

/// What a screenshot shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ScreenshotTarget {
    /// The visible viewport.
    #[default]
    Viewport,
    /// The whole document, beyond the viewport.
    FullPage,
    /// The box of the first visible element matching this selector (docs/mcp.md#selectors), parsed by the
    /// caller, once.
    Element(Selector),
}

/// How to take a screenshot.
///
/// ```
/// let options = chromate::capture::ScreenshotOptions {
///     target: chromate::capture::ScreenshotTarget::FullPage,
///     mask: vec![chromate::Selector::parse("css=.clock")?],
///     freeze_animations: true,
///     ..Default::default()
/// };
/// assert_eq!(options.mask_color, "#ff00ff");
/// # Ok::<(), chromate::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenshotOptions {
    /// Viewport, full page or element.
    pub target: ScreenshotTarget,
    /// Selectors whose matches are covered with a solid box of `mask_color`.
    pub mask: Vec<Selector>,
    /// A CSS colour for the mask boxes.
    pub mask_color: String,
    /// Finish finite animations and transitions, cancel infinite ones, hide the caret.
    pub freeze_animations: bool,
    /// The viewport size (CSS px) for this capture only; the previous size is restored after.
    pub viewport: Option<(u32, u32)>,
    /// How long an element capture waits for its element to be visible.
    pub timeout: Duration,
}

impl Default for ScreenshotOptions {
    fn default() -> Self {
        Self {
            target: ScreenshotTarget::Viewport,
            mask: Vec::new(),
            mask_color: "#ff00ff".into(),
            freeze_animations: false,
            viewport: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// A captured PNG.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Screenshot {
    /// The PNG file's bytes.
    pub png: Vec<u8>,
    /// Width in pixels (from the PNG header).
    pub width: u32,
    /// Height in pixels (from the PNG header).
    pub height: u32,
}

/// The answer of `screenshot.rect` (`engine/src/js/screenshot.js`), one variant per `status`
/// the script writes (a unit test reads them from the script).
#[derive(Debug, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
enum RectAnswer {
    /// The first visible match's box in document coordinates.
    Ok(Rect),
    /// Matches exist, none is visible.
    NotVisible {
        #[serde(default)]
        matched: usize,
    },
    /// Nothing matches.
    NoMatch,
    /// The ref no longer resolves (`ref`, `reason`: read from the raw answer).
    StaleRef,
    /// The browser rejected the selector (`reason`, `browserMessage`: from the raw answer).
    InvalidSelector,
}

#[derive(Debug, Deserialize)]
struct Rect {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    #[serde(default)]
    matched: usize,
}

/// The answer of `screenshot.prepare`: `{ok: true, masked}` or `{ok: false, error, selector,
/// reason}` for a mask selector the page could not resolve.
#[derive(Debug, Deserialize)]
struct Prepared {
    ok: bool,
    #[serde(default)]
    selector: String,
    #[serde(default)]
    reason: String,
}

impl Page {
    /// Captures a PNG of the viewport, the whole document or one element (see
    /// [`ScreenshotOptions`]).
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let shot = page.screenshot(chromate::capture::ScreenshotOptions::default()).await?;
    /// assert_eq!((shot.width, shot.height), (1280, 800));
    /// # Ok(()) }
    /// ```
    ///
    /// Every command it sends is bounded by `options.timeout` ([`Page::within`]).
    pub async fn screenshot(&self, options: ScreenshotOptions) -> Result<Screenshot> {
        let deadline = Deadline::new(options.timeout);
        self.under(deadline, self.screenshot_now(options)).await
    }

    async fn screenshot_now(&self, options: ScreenshotOptions) -> Result<Screenshot> {
        let restore_viewport = match options.viewport {
            Some((width, height)) => {
                let metrics = self
                    .session
                    .send(&cdp_page::GetLayoutMetricsParams::default())
                    .await?;
                let before = (
                    metrics.css_layout_viewport.client_width,
                    metrics.css_layout_viewport.client_height,
                );
                self.session
                    .send(&emulation::SetDeviceMetricsOverrideParams::new(
                        i64::from(width),
                        i64::from(height),
                        1.0,
                        false,
                    ))
                    .await?;
                Some(before)
            }
            None => None,
        };
        let res = self.capture(&options).await;
        if let Some((width, height)) = restore_viewport {
            let restored = self
                .session
                .send(&emulation::SetDeviceMetricsOverrideParams::new(
                    width, height, 1.0, false,
                ))
                .await;
            if res.is_ok() {
                restored?;
            }
        }
        res
    }

    async fn capture(&self, options: &ScreenshotOptions) -> Result<Screenshot> {
        let clip = match &options.target {
            ScreenshotTarget::Viewport => None,
            ScreenshotTarget::FullPage => {
                let size = self
                    .call_isolated(None, "screenshot.documentSize", &Value::Null)
                    .await?;
                let width = size.get("width").and_then(Value::as_f64).unwrap_or(0.0);
                let height = size.get("height").and_then(Value::as_f64).unwrap_or(0.0);
                Some(cdp_page::Viewport::new(
                    0.0,
                    0.0,
                    width.max(1.0),
                    height.max(1.0),
                    1.0,
                ))
            }
            ScreenshotTarget::Element(selector) => {
                let rect = self.wait_for_box(selector, options.timeout).await?;
                Some(cdp_page::Viewport::new(
                    rect.x,
                    rect.y,
                    rect.width,
                    rect.height,
                    1.0,
                ))
            }
        };
        let prepared = self
            .prepare_capture(
                "screenshot",
                &options.mask,
                &options.mask_color,
                options.freeze_animations,
            )
            .await?;
        let mut params = cdp_page::CaptureScreenshotParams::default();
        if let Some(clip) = clip {
            params = params.clip(clip).capture_beyond_viewport(true);
        }
        let answer = self.unless_dialog(self.session.send(&params)).await;
        if prepared {
            self.restore_capture().await;
        }
        let data = answer?.data;
        let png = data
            .as_str()
            .and_then(decode_base64)
            .ok_or_else(|| Error::StateInvalid {
                message: "screenshot: the browser sent image data that is not base64".into(),
            })?;
        let (width, height) = png_size(&png).ok_or_else(|| Error::StateInvalid {
            message: "screenshot: the browser sent an image that is not a png".into(),
        })?;
        Ok(Screenshot { png, width, height })
    }

    /// Masks `mask`'s matches in `color` (style rules that hold for whatever the element holds
    /// when painted) and (with `freeze`) stops what moves, for one capture, until
    /// [`Page::restore_capture`]; `Ok(false)` when there was nothing to do. A malformed mask selector is
    /// INVALID_ARGUMENT (the page is restored first); one matching nothing masks nothing.
    pub(crate) async fn prepare_capture(
        &self,
        verb: &str,
        mask: &[Selector],
        color: &str,
        freeze: bool,
    ) -> Result<bool> {
        if mask.is_empty() && !freeze {
            return Ok(false);
        }
        let answer = self
            .call_isolated(
                None,
                "screenshot.prepare",
                &json!({
                    "mask": mask.iter().map(Selector::as_typed).collect::<Vec<_>>(),
                    "color": color,
                    "freeze": freeze,
                }),
            )
            .await?;
        let prepared: Prepared =
            serde_json::from_value(answer).map_err(|source| Error::Decode {
                method: "screenshot.prepare".into(),
                source,
            })?;
        if !prepared.ok {
            self.restore_capture().await;
            return Err(Error::invalid_argument_of(
                "mask",
                format!(
                    "{verb}: cannot mask {}: {}",
                    prepared.selector, prepared.reason
                ),
            ));
        }
        Ok(true)
    }

    /// Undoes [`Page::prepare_capture`] (best effort: a page that went away has nothing to undo).
    pub(crate) async fn restore_capture(&self) {
        let _ = self
            .call_isolated(None, "screenshot.restore", &Value::Null)
            .await;
    }

    /// Polls `screenshot.rect` until the element is visible: NO_MATCH at the first check,
    /// TIMEOUT_WAITING_VISIBLE at the deadline.
    async fn wait_for_box(&self, parsed: &Selector, timeout: Duration) -> Result<Rect> {
        let verb = "screenshot";
        let deadline = Deadline::new(timeout);
        let mut poller = Poller::new(deadline, POLL_EVERY);
        let mut first = true;
        let mut matched = 0;
        while poller.next().await {
            let (frame_id, target) = selector::js_target(self, parsed)?;
            let answer = self
                .call_isolated(frame_id.as_deref(), "screenshot.rect", &target)
                .await?;
            let rect: RectAnswer =
                serde_json::from_value(answer.clone()).map_err(|source| Error::Decode {
                    method: "screenshot.rect".into(),
                    source,
                })?;
            match rect {
                RectAnswer::Ok(rect) if rect.width > 0.0 && rect.height > 0.0 => return Ok(rect),
                RectAnswer::Ok(Rect { matched: n, .. }) | RectAnswer::NotVisible { matched: n } => {
                    matched = n.max(1);
                }
                RectAnswer::NoMatch if first => {
                    return Err(Error::NoMatch {
                        verb: verb.into(),
                        selector: parsed.canonical().into(),
                    })
                }
                RectAnswer::NoMatch => matched = 0,
                RectAnswer::StaleRef => return Err(crate::actions::stale(&answer)),
                RectAnswer::InvalidSelector => {
                    return Err(Error::invalid_selector(verb, parsed.canonical(), &answer))
                }
            }
            first = false;
        }
        Err(Error::TimeoutWaitingVisible {
            verb: verb.into(),
            selector: parsed.canonical().into(),
            timeout: deadline.timeout(),
            matched: Some(matched),
        })
    }
}

/// Width and height from a PNG's IHDR chunk.
pub(crate) fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if png.len() < 24 || &png[..8] != SIGNATURE || &png[12..16] != b"IHDR" {
        return None;
    }
    let width = u32::from_be_bytes(png[16..20].try_into().ok()?);
    let height = u32::from_be_bytes(png[20..24].try_into().ok()?);
    Some((width, height))
}

/// Standard base64 (with or without padding, line breaks ignored); `None` on any other
/// character.
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine as _;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    if text.contains(['\n', '\r']) {
        let joined: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
        return LENIENT.decode(joined).ok();
    }
    LENIENT.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One recorded answer of `screenshot.rect` per shape the script writes.
    fn recorded_rect_answers() -> Vec<Value> {
        vec![
            json!({"status": "ok", "x": 8.0, "y": 16.5, "width": 120.0, "height": 40.0, "matched": 1}),
            json!({"status": "not-visible", "matched": 2}),
            json!({"status": "no-match"}),
            json!({"status": "stale-ref", "ref": 3, "reason": "detached"}),
            json!({"status": "invalid-selector", "reason": "bad css", "browserMessage": "'[' is not valid"}),
        ]
    }

    #[test]
    fn every_rect_status_the_script_writes_decodes() {
        let recorded = recorded_rect_answers();
        let mut statuses: Vec<String> = recorded
            .iter()
            .filter_map(|answer| answer["status"].as_str().map(str::to_owned))
            .collect();
        statuses.sort();
        assert_eq!(
            statuses,
            crate::js::literals_after(crate::js::SCREENSHOT, "status: \""),
            "screenshot.js writes a status with no recorded answer here (or the reverse)"
        );
        for answer in recorded {
            let decoded = serde_json::from_value::<RectAnswer>(answer.clone());
            assert!(decoded.is_ok(), "{answer} does not decode: {decoded:?}");
        }
        let Ok(RectAnswer::Ok(rect)) = serde_json::from_value(recorded_rect_answers()[0].clone())
        else {
            panic!("the ok answer is not RectAnswer::Ok");
        };
        assert_eq!(
            (rect.x, rect.y, rect.width, rect.height),
            (8.0, 16.5, 120.0, 40.0)
        );
    }

    #[test]
    fn a_rect_status_the_rust_side_does_not_know_fails_to_decode() {
        let typo =
            serde_json::from_value::<RectAnswer>(json!({"status": "not-visibel", "matched": 1}));
        let message = typo.expect_err("a typo must not decode").to_string();
        assert!(message.contains("not-visibel"), "{message}");
        let none = serde_json::from_value::<RectAnswer>(json!({"matched": 1}));
        assert!(none.is_err(), "an answer without a status must not decode");
    }

    #[test]
    fn prepare_answers_decode_both_ways() {
        let done: Prepared =
            serde_json::from_value(json!({"ok": true, "masked": 2})).expect("the ok answer");
        assert!(done.ok);
        let failed: Prepared = serde_json::from_value(json!({
            "ok": false, "error": "invalid selector", "selector": "css=[", "reason": "bad css"
        }))
        .expect("the failure answer");
        assert!(!failed.ok);
        assert_eq!(
            (failed.selector.as_str(), failed.reason.as_str()),
            ("css=[", "bad css")
        );
        assert!(serde_json::from_value::<Prepared>(json!({"masked": 2})).is_err());
    }

    #[test]
    fn base64_decodes_padded_and_unpadded_text() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(
            decode_base64("aGk/+w==").as_deref(),
            Some(&[104, 105, 63, 251][..])
        );
        assert_eq!(decode_base64("a b"), None);
    }

    #[test]
    fn png_size_reads_the_ihdr_chunk() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&1280u32.to_be_bytes());
        png.extend_from_slice(&800u32.to_be_bytes());
        assert_eq!(png_size(&png), Some((1280, 800)));
        assert_eq!(png_size(b"GIF89a"), None);
    }
}
