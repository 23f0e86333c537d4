//! Durable selector proposals for one element (docs/tools.md#browser_locators--durable-selectors), from the page's `locators.suggest`.
//!
//! Resolves without waiting and never writes to the page or proposes a ref. This module only
//! types the page's answer and maps its failures to engine errors; the ranking lives in
//! `js/locators.js`.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::refs;
use crate::snapshot::scope_ref;
use crate::{Page, Selector};

/// How a proposed selector fares on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CandidateStatus {
    /// Exactly one match: the target.
    Unique,
    /// The target and others match.
    Ambiguous,
    /// The target does not match.
    Missing,
}

/// One proposed selector.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct LocatorCandidate {
    /// The selector (`role=button[name="Save"]`, `testid=save`, `#save`…).
    pub selector: String,
    /// Its engine: `role`, `label`, `testid`, `placeholder`, `alt`, `text`, `id`, `name`.
    pub kind: String,
    /// How it fares.
    pub status: CandidateStatus,
    /// How many elements it matches.
    pub matches: u64,
}

/// The element the proposals are for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct LocatorTarget {
    /// Lower-case tag.
    pub tag: String,
    /// Its role, if any.
    pub role: Option<String>,
    /// Its accessible name, if any.
    pub name: Option<String>,
    /// The selector that found it, in canonical form.
    pub canonical: String,
}

/// Proposals for the first element a selector matches (docs/tools.md#browser_locators--durable-selectors).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct LocatorSuggestions {
    /// The element.
    pub target: LocatorTarget,
    /// Candidates in the contract's order, at most `limit` + 2.
    pub candidates: Vec<LocatorCandidate>,
    /// The first unique candidate.
    pub best: Option<String>,
    /// Why role and text came last, or a hint to add a `data-testid`.
    pub note: Option<String>,
}

impl Page {
    /// Proposes durable selectors for the first element `selector` matches, checking up to 8
    /// and stopping after `limit` unique ones. Zero matches is [`Error::NoMatch`]; a malformed
    /// selector is [`Error::InvalidArgument`]. Parses, then [`Page::locators_for`].
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let found = page.locators("#submit", 3).await?;
    /// println!("{:?}", found.best);
    /// # Ok(()) }
    /// ```
    pub async fn locators(&self, selector: &str, limit: usize) -> Result<LocatorSuggestions> {
        self.locators_for(&Selector::parse(selector)?, limit).await
    }

    /// [`Page::locators`] for a selector the caller already parsed.
    pub async fn locators_for(
        &self,
        selector: &Selector,
        limit: usize,
    ) -> Result<LocatorSuggestions> {
        let (frame_id, arg) = match scope_ref(self, selector)? {
            Some(element_ref) => {
                let target = crate::page::resolve::resolve_ref(self, element_ref)?;
                (
                    Some(target.frame_id),
                    json!({"ref": target.number, "limit": limit.max(1)}),
                )
            }
            None => (
                None,
                json!({"selector": selector.as_typed(), "limit": limit.max(1)}),
            ),
        };
        let answer = self
            .call_isolated(frame_id.as_deref(), "locators.suggest", &arg)
            .await?;
        decode(answer, selector.as_typed())
    }
}

fn decode(answer: Value, selector: &str) -> Result<LocatorSuggestions> {
    use crate::actions::Status;
    let text = |key: &str| answer.get(key).and_then(Value::as_str).unwrap_or("");
    match crate::actions::status("locators.suggest", &answer)? {
        Status::Ok => serde_json::from_value(answer).map_err(|source| Error::Decode {
            method: "locators.suggest".into(),
            source,
        }),
        Status::NoMatch => Err(Error::NoMatch {
            verb: "locators".into(),
            selector: match text("canonical") {
                "" => selector.to_string(),
                canonical => canonical.to_string(),
            },
        }),
        Status::StaleRef => {
            let element_ref = answer
                .get("ref")
                .and_then(Value::as_u64)
                .and_then(crate::snapshot::ElementRef::new);
            match element_ref {
                Some(element_ref) => Err(refs::stale_from_status(
                    "locators.suggest",
                    element_ref,
                    answer.get("reason"),
                )),
                None => Err(Error::StateInvalid {
                    message: format!("locators: {selector} is a stale ref"),
                }),
            }
        }
        Status::InvalidSelector => Err(Error::invalid_selector("locators", selector, &answer)),
        // A status of the actionability helpers that `locators.suggest` never gives.
        _ => Err(Error::UnknownStatus {
            method: "locators.suggest".into(),
            status: text("status").to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{decode, CandidateStatus};

    #[test]
    fn locator_answers_decode_and_failures_map_to_errors() {
        let ok = decode(
            json!({"status": "ok", "target": {"tag": "button", "role": "button", "name": "Save", "canonical": "css=#save"},
                   "candidates": [{"selector": "role=button[name=\"Save\"]", "kind": "role", "status": "unique", "matches": 1}],
                   "best": "role=button[name=\"Save\"]"}),
            "#save",
        )
        .expect("decodes");
        assert_eq!(ok.candidates[0].status, CandidateStatus::Unique);
        assert_eq!(ok.best.as_deref(), Some("role=button[name=\"Save\"]"));
        let stale = decode(
            json!({"status": "stale-ref", "ref": 4, "reason": "detached"}),
            "ref=e4",
        );
        assert_eq!(
            stale.map(|_| ()).map_err(|e| e.to_string()),
            Err("ref=e4 is stale: the element was removed from the document".to_string())
        );
    }
}
