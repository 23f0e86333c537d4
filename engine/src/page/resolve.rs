//! Resolving a snapshot ref on a page (docs/mcp.md#refs): what the browser-wide table (`refs.rs`) can say
//! without the page (`unknown-ref`, `document-changed`), then what the page's own `refs.js`
//! table answers (`detached`, `ambiguous`); a bare `eN` selector checked against the table; the
//! refs a walk minted recorded in the documents their frames show. The table itself knows
//! nothing of pages, so `page` and `refs` do not depend on each other.

use serde_json::Value;

use super::Page;
use crate::error::{Error, Result, StaleReason};
use crate::refs::{stale, ElementRef, Issued, RefRecord, RefStatus, RefTarget};

/// Resolves `element_ref` on `page` without touching the page (docs/mcp.md#refs: `unknown-ref`, `document-changed`): which frame
/// to ask, or `StaleRef` with `unknown-ref` (never issued) or `document-changed` (issued in
/// another tab, or its frame has since navigated, reloaded or gone). The element may still be
/// detached; [`check_ref`] asks the page.
pub(crate) fn resolve_ref(page: &Page, element_ref: ElementRef) -> Result<RefTarget> {
    let issued = match page.refs.lookup(element_ref.number()) {
        None => return Err(stale(element_ref, StaleReason::UnknownRef)),
        Some(RefRecord::Retired) => return Err(stale(element_ref, StaleReason::DocumentChanged)),
        Some(RefRecord::Live(issued)) => issued,
    };
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

/// Asks the page whether `target`'s element is still there (docs/mcp.md#refs: `detached`, `ambiguous`): `Ok` or
/// `StaleRef` with `detached`, `ambiguous`, or `document-changed` when the frame's world no
/// longer knows the number (its document was replaced after [`resolve_ref`] looked).
pub(crate) async fn check_ref(
    page: &Page,
    element_ref: ElementRef,
    target: &RefTarget,
) -> Result<()> {
    let answer = page
        .call_isolated(
            Some(&target.frame_id),
            "refs.status",
            &Value::from(target.number),
        )
        .await?;
    match RefStatus::decode("refs.status", answer)?.stale_reason() {
        None => Ok(()),
        Some(reason) => Err(stale(element_ref, reason)),
    }
}

/// [`resolve_ref`] then [`check_ref`]: the frame of a live ref, or the `StaleRef` of docs/mcp.md#refs.
pub(crate) async fn resolve_live_ref(page: &Page, element_ref: ElementRef) -> Result<RefTarget> {
    let target = resolve_ref(page, element_ref)?;
    check_ref(page, element_ref, &target).await?;
    Ok(target)
}

/// For a bare `eN` selector (docs/mcp.md#refs): the ref if this browser issued it, else `BareRef` before
/// any browser work.
pub(crate) fn bare_ref(page: &Page, text: &str) -> Result<ElementRef> {
    match ElementRef::parse(text.trim()) {
        Some(element_ref) if page.refs.has_issued(element_ref.number()) => Ok(element_ref),
        _ => Err(Error::BareRef {
            element_ref: text.trim().to_string(),
        }),
    }
}

impl Page {
    /// Records refs a walk of this page minted, each in the document its frame shows now, and
    /// retires the page's refs of documents it no longer shows.
    pub(crate) fn record_refs(&self, minted: impl IntoIterator<Item = (u64, String)>) {
        let minted: Vec<(u64, Issued)> = minted
            .into_iter()
            .map(|(number, frame_id)| {
                let loader_id = self.frame_loader_id(&frame_id);
                (
                    number,
                    Issued {
                        target_id: self.target_id.clone(),
                        frame_id,
                        loader_id,
                    },
                )
            })
            .collect();
        let shows = |doc: &Issued| {
            doc.loader_id.is_some() && self.frame_loader_id(&doc.frame_id) == doc.loader_id
        };
        self.refs.record(&self.target_id, minted, &shows);
    }

    /// The target id of the page whose snapshot issued `element_ref`, while the document it
    /// was issued in may still show; `None` for a ref never issued or whose document is gone.
    /// A front end that routes calls by tab names the tab a ref belongs to with it.
    pub fn ref_target(&self, element_ref: ElementRef) -> Option<String> {
        match self.refs.lookup(element_ref.number())? {
            RefRecord::Live(issued) => Some(issued.target_id.to_string()),
            RefRecord::Retired => None,
        }
    }

    /// Whether this page's browser issued `element_ref` (in this page or another).
    pub fn has_issued_ref(&self, element_ref: ElementRef) -> bool {
        self.refs.has_issued(element_ref.number())
    }
}
