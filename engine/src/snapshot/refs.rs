//! The ref table (§6): one session-wide counter shared by every page of a [`Browser`], and for
//! each issued ref the page, frame and document it was issued in.
//!
//! The elements themselves live only in the page: each isolated world keeps its own
//! `refs.js` table (number → element). This module owns the numbers and decides what it can
//! without the page (`unknown-ref`, `document-changed`); the page answers the rest (`detached`,
//! `ambiguous`) through [`check_ref`]. It does not parse selectors, and it does not know about
//! baselines (`no-snapshot` is the MCP layer's concept).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::error::{Error, Result, StaleReason};
use crate::transport::lock;
use crate::{Browser, Page};

/// A snapshot ref: a session-wide element number, printed as `e12`.
///
/// ```
/// let element_ref = chromate::ElementRef::parse("e12").unwrap();
/// assert_eq!(element_ref.to_string(), "e12");
/// assert_eq!(element_ref.number(), 12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ElementRef(u64);

impl ElementRef {
    /// The ref numbered `number` (refs start at 1); `None` for 0.
    pub fn new(number: u64) -> Option<Self> {
        (number > 0).then_some(ElementRef(number))
    }

    /// The number after the `e`.
    pub fn number(self) -> u64 {
        self.0
    }

    /// Parses `e<N>` or `E<N>` (N ≥ 1, no leading zero, no spaces); anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let digits = text.strip_prefix(['e', 'E'])?;
        if digits.is_empty()
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        digits.parse().ok().map(ElementRef)
    }
}

impl std::fmt::Display for ElementRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "e{}", self.0)
    }
}

/// Where an issued ref was minted: the page (target id), the frame whose isolated world holds
/// its element, and that frame's document (loader id) at the time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issued {
    pub(crate) target_id: Arc<str>,
    pub(crate) frame_id: String,
    pub(crate) loader_id: Option<String>,
}

#[derive(Debug)]
struct RefState {
    /// The next number to mint.
    next: u64,
    issued: HashMap<u64, Issued>,
}

/// The browser-wide ref table. Each [`Page`] holds an `Arc` of its browser's table.
#[derive(Debug)]
pub(crate) struct RefTable {
    state: Mutex<RefState>,
    /// Held for a whole snapshot walk: the page mints numbers from `next` on, so two walks at
    /// once (two tabs) would mint the same numbers.
    pub(crate) minting: tokio::sync::Mutex<()>,
}

impl Default for RefTable {
    fn default() -> Self {
        Self {
            state: Mutex::new(RefState {
                next: 1,
                issued: HashMap::new(),
            }),
            minting: tokio::sync::Mutex::new(()),
        }
    }
}

impl RefTable {
    /// The next number a walk may mint.
    pub(crate) fn next(&self) -> u64 {
        lock(&self.state).next
    }

    /// Moves the counter to at least `next` (never back), so no number is minted twice.
    pub(crate) fn advance_to(&self, next: u64) {
        let mut state = lock(&self.state);
        state.next = state.next.max(next);
    }

    /// Records a ref minted by a walk; the first record of a number wins.
    pub(crate) fn record(&self, number: u64, issued: Issued) {
        lock(&self.state).issued.entry(number).or_insert(issued);
    }

    pub(crate) fn issued(&self, number: u64) -> Option<Issued> {
        lock(&self.state).issued.get(&number).cloned()
    }

    pub(crate) fn has_issued(&self, number: u64) -> bool {
        lock(&self.state).issued.contains_key(&number)
    }
}

/// Where to find a ref's element: ask `refs.lookup(number)` in the isolated world of
/// `frame_id` (a same-origin iframe's elements live in the table of the frame that walked them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefTarget {
    /// The frame whose isolated world holds the element (pass to `Page::call_isolated`).
    pub(crate) frame_id: String,
    /// The number to pass to `refs.lookup` / `refs.status` or as `ref=e<number>`.
    pub(crate) number: u64,
}

fn stale(element_ref: ElementRef, reason: StaleReason) -> Error {
    Error::StaleRef {
        element_ref: element_ref.to_string(),
        reason,
    }
}

/// Resolves `element_ref` on `page` without touching the page (§6.3 rows 3 and 4): which frame
/// to ask, or `StaleRef` with `unknown-ref` (never issued) or `document-changed` (issued in
/// another tab, or its frame has since navigated, reloaded or gone). The element may still be
/// detached; [`check_ref`] asks the page.
pub(crate) fn resolve_ref(page: &Page, element_ref: ElementRef) -> Result<RefTarget> {
    let issued = page
        .refs
        .issued(element_ref.number())
        .ok_or_else(|| stale(element_ref, StaleReason::UnknownRef))?;
    if *issued.target_id != *page.target_id {
        return Err(stale(element_ref, StaleReason::DocumentChanged));
    }
    match page.frame_loader_id(&issued.frame_id) {
        Some(loader_id) if Some(&loader_id) == issued.loader_id.as_ref() => Ok(RefTarget {
            frame_id: issued.frame_id,
            number: element_ref.number(),
        }),
        _ => Err(stale(element_ref, StaleReason::DocumentChanged)),
    }
}

/// Asks the page whether `target`'s element is still there (§6.3 rows 5 and 6): `Ok` or
/// `StaleRef` with `detached`, `ambiguous`, or `document-changed` when the frame's world no
/// longer knows the number (its document was replaced after [`resolve_ref`] looked).
pub(crate) async fn check_ref(
    page: &Page,
    element_ref: ElementRef,
    target: &RefTarget,
) -> Result<()> {
    let status = page
        .call_isolated(
            Some(&target.frame_id),
            "refs.status",
            &Value::from(target.number),
        )
        .await?;
    match status.as_str() {
        Some("ok") => Ok(()),
        Some(other) => Err(stale_from_status(element_ref, other)),
        None => Err(Error::StateInvalid {
            message: format!("refs.status returned an unexpected value for {element_ref}"),
        }),
    }
}

/// The `StaleRef` for a non-`ok` status of the page's `refs.lookup`/`refs.status` (also the
/// `reason` of a `{status: "stale-ref"}` from `actionability`/`locators`): `detached`,
/// `ambiguous`, and `unknown` (the frame's world was replaced, so its document changed).
pub(crate) fn stale_from_status(element_ref: ElementRef, status: &str) -> Error {
    let reason = match status {
        "ambiguous" => StaleReason::Ambiguous,
        "unknown" => StaleReason::DocumentChanged,
        _ => StaleReason::Detached,
    };
    stale(element_ref, reason)
}

/// [`resolve_ref`] then [`check_ref`]: the frame of a live ref, or the §6.3 `StaleRef`.
pub(crate) async fn resolve_live_ref(page: &Page, element_ref: ElementRef) -> Result<RefTarget> {
    let target = resolve_ref(page, element_ref)?;
    check_ref(page, element_ref, &target).await?;
    Ok(target)
}

/// For a bare `eN` selector (§6.2): the ref if this browser issued it, else `BareRef` before
/// any browser work.
pub(crate) fn bare_ref(page: &Page, text: &str) -> Result<ElementRef> {
    match ElementRef::parse(text.trim()) {
        Some(element_ref) if page.refs.has_issued(element_ref.number()) => Ok(element_ref),
        _ => Err(Error::BareRef {
            element_ref: text.trim().to_string(),
        }),
    }
}

impl Browser {
    /// Whether this browser issued `element_ref` in any snapshot of any of its pages (§6.2).
    pub fn has_issued_ref(&self, element_ref: ElementRef) -> bool {
        self.ref_table().has_issued(element_ref.number())
    }

    /// The ref the next snapshot will mint first; every ref below it has been used.
    pub fn next_ref(&self) -> ElementRef {
        ElementRef(self.ref_table().next())
    }

    /// Continues numbering after refs an earlier browser issued (a relaunch within one
    /// session), so that no number is reused: the next mint is at least `next`.
    pub fn continue_refs_from(&self, next: ElementRef) {
        self.ref_table().advance_to(next.number());
    }
}

impl Page {
    /// Whether this page's browser issued `element_ref` (in this page or another).
    pub fn has_issued_ref(&self, element_ref: ElementRef) -> bool {
        self.refs.has_issued(element_ref.number())
    }
}
