//! The page probes of an audit: the Web Vitals recorder installed before a page loads, one
//! inspection of the loaded page (vitals, links, broken images, mixed content, horizontal
//! overflow, the controls' layout checks) and HEAD-then-GET checks of link targets from inside
//! the page, so they carry its cookies and go through its interception (origin policy,
//! private-network guard). The scripts are `js/vitals.js` and `js/audit.js`.
//!
//! Owns the typed answers and their decoding. Does not rank, judge or report anything: what is
//! a finding and how bad it is belongs to the caller (the command layer's audit).

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::cdp::page as cdp_page;
use crate::error::{Error, Result};
use crate::page::{Page, WORLD_NAME};

/// A box in document coordinates (CSS px).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ProbeRect {
    /// Left edge.
    pub x: i64,
    /// Top edge.
    pub y: i64,
    /// Width.
    pub width: i64,
    /// Height.
    pub height: i64,
}

/// A resource and the bytes it took on the wire.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ResourceSize {
    /// Its URL.
    pub url: String,
    /// `transferSize` (0 for cross-origin resources without `Timing-Allow-Origin`).
    pub bytes: u64,
}

/// What the vitals recorder and the resource timeline saw.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Vitals {
    /// Whether the recorder was installed before the page loaded (else only the timeline's
    /// figures are known).
    pub recorded: bool,
    /// Largest contentful paint, ms after navigation start.
    pub lcp: Option<f64>,
    /// A durable selector of the LCP element.
    pub lcp_selector: Option<String>,
    /// Cumulative layout shift (the largest session window).
    pub cls: f64,
    /// A durable selector of the element that moved most in that window.
    pub cls_selector: Option<String>,
    /// Total blocking time: the sum over long tasks of their time past 50 ms.
    pub tbt: f64,
    /// How many long tasks (over 50 ms) ran.
    pub long_tasks: u64,
    /// The longest task, ms.
    pub longest_task: f64,
    /// First contentful paint, ms.
    pub fcp: Option<f64>,
    /// Requests: the document and every resource in the timeline.
    pub requests: u64,
    /// Bytes transferred by them.
    pub bytes: u64,
    /// The three largest resources.
    pub largest: Vec<ResourceSize>,
    /// Whether the page was hidden at some time (a hidden page paints and shifts nothing).
    pub hidden: bool,
}

/// A link on the page.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct PageLink {
    /// Its absolute URL without fragment.
    pub url: String,
    /// Its origin.
    pub origin: String,
    /// Its text (80 characters at most).
    pub text: String,
    /// A durable selector of the first link to it.
    pub selector: String,
}

/// An element that points at a resource.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ResourceElement {
    /// The resource's URL.
    pub url: String,
    /// A durable selector of the element.
    pub selector: String,
}

/// The page's horizontal overflow.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Overflow {
    /// The viewport's width.
    pub viewport: f64,
    /// The document's scroll width.
    pub width: f64,
    /// The element that reaches furthest past the viewport, when the page overflows.
    pub element: Option<OverflowElement>,
}

/// The element that makes a page overflow.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct OverflowElement {
    /// A durable selector.
    pub selector: String,
    /// Its box.
    pub rect: ProbeRect,
}

/// A control with a layout problem.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ControlIssue {
    /// `covered`, `off-screen`, `zero-size`, `nameless` or `small-target`. `covered` and
    /// `off-screen` hold once the control is scrolled into view in the document and every
    /// scroll container around it (`docs/cli.md#covered-and-off-screen`).
    pub kind: String,
    /// A durable selector of the control.
    pub selector: String,
    /// Its tag.
    pub tag: String,
    /// Its role, if any.
    pub role: Option<String>,
    /// Its accessible name (80 characters at most).
    pub name: String,
    /// Its box before the probe scrolled anything, in document coordinates.
    pub rect: ProbeRect,
    /// `small-target`: `WxH`.
    pub size: Option<String>,
    /// `covered`: a durable selector of what is on top.
    pub covered_by: Option<String>,
}

/// One inspection of a loaded page.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct PageInspection {
    /// The document's URL.
    pub url: String,
    /// Its origin.
    pub origin: String,
    /// Web Vitals and transfer figures.
    pub vitals: Vitals,
    /// Its links (http and https, 500 at most, each URL once).
    pub links: Vec<PageLink>,
    /// Images that completed without a picture (failed or undecodable).
    pub images: Vec<ResourceElement>,
    /// Subresources asked for over http by an https page.
    pub mixed: Vec<ResourceElement>,
    /// Horizontal overflow.
    pub overflow: Overflow,
    /// Controls that are covered, off-screen, zero-size, nameless or too small.
    pub controls: Vec<ControlIssue>,
}

/// The first method of an opaque link check ([`Page::check_links_opaque`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkMethod {
    /// `HEAD` (GET only if it fails).
    Head,
    /// `GET` at once: the retry of a HEAD the server refused.
    Get,
}

/// How one link target answered.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LinkStatus {
    /// The URL checked.
    pub url: String,
    /// `HEAD`, or `GET` when HEAD failed or was refused.
    pub method: String,
    /// The final HTTP status (after redirects).
    pub status: Option<u16>,
    /// Its `Content-Type`.
    pub content_type: String,
    /// The URL after redirects.
    pub final_url: Option<String>,
    /// Why it failed (`timeout`, the browser's message), when it did.
    pub error: Option<String>,
    /// An answer came but the page may not read it ([`Page::check_links_opaque`]): `status`
    /// and `content_type` are unknown here (the network log has the status).
    #[serde(default)]
    pub opaque: bool,
}

impl Page {
    /// Installs the Web Vitals recorder for every document this page loads from now on (call
    /// it before navigating).
    pub async fn record_vitals(&self) -> Result<()> {
        let script = cdp_page::AddScriptToEvaluateOnNewDocumentParams::new(crate::js::VITALS)
            .world_name(WORLD_NAME);
        self.session().send(&script).await?;
        Ok(())
    }

    /// Inspects the loaded page for an audit; controls smaller than `min_target` CSS px in
    /// either direction are `small-target`.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let seen = page.inspect_for_audit(24).await?;
    /// println!("LCP {:?} ms, {} links", seen.vitals.lcp, seen.links.len());
    /// # Ok(()) }
    /// ```
    pub async fn inspect_for_audit(&self, min_target: u32) -> Result<PageInspection> {
        let answer = self
            .call_isolated_declaration(
                None,
                "audit.inspect",
                crate::js::audit_call(),
                &[json!({ "op": "inspect", "minTarget": min_target })],
            )
            .await?;
        decode(answer, "audit.inspect")
    }

    /// Checks each of `urls` from inside the page: HEAD, then GET when HEAD fails or is
    /// refused; each attempt bounded by `timeout`.
    pub async fn check_links(&self, urls: &[String], timeout: Duration) -> Result<Vec<LinkStatus>> {
        if urls.is_empty() {
            return Ok(Vec::new());
        }
        self.check_links_with(urls, timeout, json!({})).await
    }

    /// [`Page::check_links`] for links to other origins than the page's: fetched `no-cors`,
    /// without credentials, one at a time, starting with `first` (`HEAD`, or `GET` to retry a
    /// refused HEAD). The page may not read their answers ([`LinkStatus::opaque`]); their
    /// statuses are in the network log (`LogData::Response`). A network failure still retries
    /// with GET and is reported as for [`Page::check_links`].
    pub async fn check_links_opaque(
        &self,
        urls: &[String],
        first: LinkMethod,
        timeout: Duration,
    ) -> Result<Vec<LinkStatus>> {
        let first = match first {
            LinkMethod::Head => "HEAD",
            LinkMethod::Get => "GET",
        };
        self.check_links_with(urls, timeout, json!({ "opaque": true, "first": first }))
            .await
    }

    async fn check_links_with(
        &self,
        urls: &[String],
        timeout: Duration,
        options: Value,
    ) -> Result<Vec<LinkStatus>> {
        if urls.is_empty() {
            return Ok(Vec::new());
        }
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let mut call = json!({ "op": "checkLinks", "urls": urls, "timeoutMs": timeout_ms });
        if let (Some(call), Value::Object(options)) = (call.as_object_mut(), options) {
            call.extend(options);
        }
        let answer = self
            .call_isolated_declaration(None, "audit.checkLinks", crate::js::audit_call(), &[call])
            .await?;
        #[derive(Deserialize)]
        struct Answer {
            results: Vec<LinkStatus>,
        }
        decode::<Answer>(answer, "audit.checkLinks").map(|answer| answer.results)
    }
}

/// A sitemap read by [`Page::read_sitemap`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct Sitemap {
    /// `urlset` (pages) or `sitemapindex` (more sitemaps).
    pub kind: String,
    /// Every `<loc>`, in document order.
    pub locs: Vec<String>,
}

impl Page {
    /// Fetches and parses the sitemap at `url` from inside the page (which must be of its
    /// origin): a `<urlset>` or a `<sitemapindex>`, at most `max_bytes` long, within `timeout`.
    /// An answer ≥ 400, a body that is not a sitemap, or one too long is an error saying so.
    pub async fn read_sitemap(
        &self,
        url: &str,
        timeout: Duration,
        max_bytes: usize,
    ) -> Result<Sitemap> {
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let call =
            json!({ "op": "sitemap", "url": url, "timeoutMs": timeout_ms, "maxBytes": max_bytes });
        let answer = self
            .call_isolated_declaration(None, "audit.sitemap", crate::js::audit_call(), &[call])
            .await?;
        decode(answer, "audit.sitemap")
    }
}

fn decode<T: serde::de::DeserializeOwned>(answer: Value, method: &str) -> Result<T> {
    if let Some(error) = answer.get("error").and_then(Value::as_str) {
        return Err(Error::StateInvalid {
            message: format!("{method}: {error}"),
        });
    }
    serde_json::from_value(answer).map_err(|source| Error::Decode {
        method: method.to_owned(),
        source,
    })
}
