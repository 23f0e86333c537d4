//! PDFs: the whole document printed through `Page.printToPDF`, with the paper size, margins and
//! orientation given, and the same masks and frozen animations as a screenshot (the page JS
//! of `js/screenshot.js`, undone right after).
//!
//! This module does not write files or name them: callers do.

use std::time::Duration;

use crate::cdp::page as cdp_page;
use crate::error::{Error, Result};
use crate::wait::{Deadline, DEFAULT_TIMEOUT};
use crate::Page;

/// How to print a PDF.
///
/// ```
/// let options = chromate::capture::PdfOptions {
///     paper_width_in: 8.27,
///     paper_height_in: 11.69,
///     mask: vec![chromate::Selector::parse("#clock")?],
///     ..Default::default()
/// };
/// assert_eq!(options.margin_in, 0.4);
/// # Ok::<(), chromate::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PdfOptions {
    /// Selectors whose matches are covered with a solid box of `mask_color`.
    pub mask: Vec<crate::Selector>,
    /// A CSS colour for the mask boxes.
    pub mask_color: String,
    /// Finish finite animations and transitions, cancel infinite ones, hide the caret.
    pub freeze_animations: bool,
    /// Paper width in inches (8.5, US letter, by default).
    pub paper_width_in: f64,
    /// Paper height in inches (11 by default).
    pub paper_height_in: f64,
    /// The margin on every side, in inches.
    pub margin_in: f64,
    /// Landscape instead of portrait.
    pub landscape: bool,
    /// The bound of every command the print sends.
    pub timeout: Duration,
}

impl Default for PdfOptions {
    fn default() -> Self {
        Self {
            mask: Vec::new(),
            mask_color: "#ff00ff".into(),
            freeze_animations: false,
            paper_width_in: 8.5,
            paper_height_in: 11.0,
            margin_in: 0.4,
            landscape: false,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl Page {
    /// Prints the whole document as a PDF (backgrounds included) and returns the file's bytes.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let pdf = page.pdf(chromate::capture::PdfOptions::default()).await?;
    /// assert!(pdf.starts_with(b"%PDF-"));
    /// # Ok(()) }
    /// ```
    ///
    /// Every command it sends is bounded by `options.timeout` ([`Page::within`]).
    pub async fn pdf(&self, options: PdfOptions) -> Result<Vec<u8>> {
        let deadline = Deadline::new(options.timeout);
        self.under(deadline, self.pdf_now(options)).await
    }

    async fn pdf_now(&self, options: PdfOptions) -> Result<Vec<u8>> {
        let prepared = self
            .prepare_capture(
                "pdf",
                &options.mask,
                &options.mask_color,
                options.freeze_animations,
            )
            .await?;
        let params = cdp_page::PrintToPDFParams::default()
            .print_background(true)
            .landscape(options.landscape)
            .paper_width(options.paper_width_in)
            .paper_height(options.paper_height_in)
            .margin_top(options.margin_in)
            .margin_bottom(options.margin_in)
            .margin_left(options.margin_in)
            .margin_right(options.margin_in);
        let answer = self.unless_dialog(self.session.send(&params)).await;
        if prepared {
            self.restore_capture().await;
        }
        let data = answer?.data;
        let pdf = data
            .as_str()
            .and_then(crate::screenshot::decode_base64)
            .ok_or_else(|| Error::StateInvalid {
                message: "pdf: the browser sent data that is not base64".into(),
            })?;
        if !pdf.starts_with(b"%PDF-") {
            return Err(Error::StateInvalid {
                message: "pdf: the browser sent a file that is not a pdf".into(),
            });
        }
        Ok(pdf)
    }
}
