//! Element actions (docs/mcp.md#actionability): a [`Locator`] names an element by selector, and every verb is
//! resolve → actionability → act under one deadline. One verb per file; this file holds the
//! shared loop (`Locator::wait_actionable`) that polls the one-round-trip JS
//! `actionability.check` on the retry schedule (docs/mcp.md#actionability) and turns its last failure into the timeout's
//! reason.
//!
//! Actions do not render results, take snapshots or observe the page afterwards: the
//! command layer does that with what these functions return.

mod check;
mod click;
mod fill;
mod hover;
mod mouse;
mod press;
mod read;
mod scroll;
mod select;
mod upload;
mod wait_for;

#[cfg(test)]
mod tests;

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{Error, Result, StaleReason, UnmetState};
use crate::page::Page;
use crate::selector::{self, Selector};
use crate::wait::{Deadline, Poller, DEFAULT_TIMEOUT, POLL_EVERY};

pub use crate::input::{Key, KeyChord, Modifier, MouseButton};
pub use click::ClickOptions;
pub use read::{BrowserAccessibility, FindOptions, FindResult, FoundElement, ReadText};
pub use select::SelectedOption;
pub use wait_for::{ElementState, TextMatch};

/// An element named by a selector on a page, with the timeout its actions use.
///
/// ```no_run
/// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
/// use std::time::Duration;
/// page.locator("role=button[name=\"Save\"]")?.click().await?;
/// page.locator("#email")?.timeout(Duration::from_secs(2)).fill("ann@example.com").await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Locator {
    page: Page,
    selector: Selector,
    timeout: Duration,
    /// Whether an action waits for a selector that matches nothing yet (else NO_MATCH at the
    /// first check).
    wait_for_match: bool,
}

impl Page {
    /// A locator for `selector` (docs/mcp.md#selectors), parsed and validated once; a malformed selector is
    /// [`Error::InvalidArgument`] naming it. Actions wait up to 5 s unless
    /// [`Locator::timeout`] says otherwise. Parses, then [`Page::locator_for`].
    pub fn locator(&self, selector: &str) -> Result<Locator> {
        Ok(self.locator_for(Selector::parse(selector)?))
    }

    /// A locator for a selector the caller already parsed (and may have inspected: its ref,
    /// whether it is bare), so it is not parsed again.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let selector = chromate::Selector::parse("#save")?;
    /// page.locator_for(selector).click().await?;
    /// # Ok(()) }
    /// ```
    pub fn locator_for(&self, selector: Selector) -> Locator {
        Locator {
            page: self.clone(),
            selector,
            timeout: DEFAULT_TIMEOUT,
            wait_for_match: false,
        }
    }
}

/// The `actionability.check` answer once the element is actionable.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Actionable {
    /// The action point in top-viewport CSS px.
    pub(crate) point: Point,
    /// After [`Locator::wait_fillable`]: `type` (focused, content selected) or `set` (a date,
    /// time, colour or range input).
    pub(crate) mode: Option<String>,
    /// After [`Locator::wait_clickable`]: a zero-size control with nothing showing, activated
    /// from the keyboard with this key once focused (`Enter` or `Space`).
    #[serde(default)]
    pub(crate) keyboard: Option<String>,
    /// After [`Locator::wait_fillable`]: whether the field was already empty.
    pub(crate) empty: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct Point {
    pub(crate) x: f64,
    pub(crate) y: f64,
}

/// What the last check said, for the timeout message.
#[derive(Debug, Clone)]
enum LastReason {
    /// No check got an answer (the page's script did not yield).
    NoAnswer,
    /// Nothing matched, waited for ([`Locator::wait_for_match`]): NO_MATCH at the deadline.
    NoMatch,
    NotVisible(usize),
    State(UnmetState, Option<String>),
}

/// The states a verb waits for, in the order they are checked. `reachable` is `visible`, or a
/// text field a person types into although it is transparent or tiny (a code editor's hidden
/// textarea, which snapshots list: `docs/mcp.md#snapshots`); the verbs that act on an element
/// take it, the waits and reads that ask whether something is visible do not.
pub(crate) mod states {
    pub(crate) const CLICK: &[&str] = &["reachable", "enabled", "unobscured"];
    pub(crate) const HOVER: &[&str] = &["reachable", "unobscured"];
    pub(crate) const FILL: &[&str] = &["reachable", "enabled", "editable"];
    pub(crate) const KEYBOARD: &[&str] = &["reachable", "enabled"];
    pub(crate) const ENABLED: &[&str] = &["visible", "enabled"];
    pub(crate) const VISIBLE: &[&str] = &["visible"];
}

/// How an action reaches its element: a pointer action also needs it to hold still.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aim {
    /// At a point on the element (click, hover, mouse): it must hold still.
    Pointer,
    /// Through focus or a script (keys, fill, select, scroll).
    Focus,
}

impl Locator {
    /// The same locator with another timeout for its actions (`Duration::ZERO` = one check).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The same locator, whose actions wait up to their timeout for a selector that matches
    /// nothing yet, as for an element not yet visible, instead of failing NO_MATCH at the first
    /// check. A script wants this (its element may not be there yet, as in Playwright); an
    /// agent, which sees the page and may have mistyped, wants the fast failure, the default.
    pub fn wait_for_match(mut self) -> Self {
        self.wait_for_match = true;
        self
    }

    /// Whether a first check that matches nothing fails at once (NO_MATCH).
    pub(crate) fn fails_fast(&self, first: bool) -> bool {
        first && !self.wait_for_match
    }

    /// The parsed selector.
    pub fn selector(&self) -> &Selector {
        &self.selector
    }

    /// The page this locator acts on.
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// Runs one verb under a deadline of the locator's timeout ([`Page::within`]): every
    /// command it sends is bounded by it, and a page whose script does not yield is freed when
    /// the verb gives up.
    pub(crate) async fn bounded<T>(
        &self,
        verb: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        self.page.under(Deadline::new(self.timeout), verb).await
    }

    /// Calls a JS `actionability` function with the target merged into `extra`.
    pub(crate) async fn call(&self, function: &str, extra: Value) -> Result<Value> {
        let (frame_id, mut arg) = selector::js_target(&self.page, &self.selector)?;
        if let (Some(arg), Value::Object(extra)) = (arg.as_object_mut(), extra) {
            arg.extend(extra);
        }
        self.page
            .call_isolated(frame_id.as_deref(), function, &arg)
            .await
    }

    /// Calls a JS `actionability` function as `function(target, value)`.
    pub(crate) async fn call_with_value(&self, function: &str, value: Value) -> Result<Value> {
        let (frame_id, arg) = selector::js_target(&self.page, &self.selector)?;
        self.page
            .call_isolated_with(frame_id.as_deref(), function, &[arg, value])
            .await
    }

    /// Turns the target failures every JS helper shares (stale ref, invalid selector, no match)
    /// into errors; other statuses pass.
    pub(crate) fn target_status(&self, verb: &str, status: Status, answer: &Value) -> Result<()> {
        match status {
            Status::StaleRef => Err(stale(answer)),
            Status::InvalidSelector => Err(self.invalid(verb, answer)),
            Status::NoMatch => Err(self.no_match(verb)),
            Status::Ok
            | Status::NotVisible
            | Status::NotEnabled
            | Status::NotEditable
            | Status::Obscured
            | Status::Unstable
            | Status::OutsideViewport
            | Status::NoValue
            | Status::BadField
            | Status::NotFileInput
            | Status::NotCheckable
            | Status::NotSelect
            | Status::NoOption
            | Status::DisabledOption
            | Status::Rejected
            | Status::NotSettable => Ok(()),
        }
    }

    pub(crate) fn no_match(&self, verb: &str) -> Error {
        Error::NoMatch {
            verb: verb.into(),
            selector: self.selector.canonical().into(),
        }
    }

    fn invalid(&self, verb: &str, answer: &Value) -> Error {
        Error::invalid_selector(verb, self.selector.canonical(), answer)
    }

    /// Polls `actionability.check` until the element is in every state of `states` (docs/mcp.md#actionability), or
    /// fails: NO_MATCH at the first check (unless [`Locator::wait_for_match`]), NOT_EDITABLE at once for a non-fillable target,
    /// else the timeout naming what it waited for and the last reason.
    pub(crate) async fn wait_actionable(
        &self,
        verb: &str,
        states: &[&str],
        aim: Aim,
        deadline: Deadline,
    ) -> Result<Actionable> {
        self.poll_actionable(verb, states, aim == Aim::Pointer, None, false, deadline)
            .await
    }

    /// [`Locator::wait_actionable`] for a plain click: a zero-size control a person reaches
    /// with nothing showing inside it is actionable too, and the answer's `keyboard` says so
    /// (docs/mcp.md#actionability).
    pub(crate) async fn wait_clickable(
        &self,
        verb: &str,
        deadline: Deadline,
    ) -> Result<Actionable> {
        self.poll_actionable(verb, states::CLICK, true, None, true, deadline)
            .await
    }

    /// [`Locator::wait_actionable`] for fill: once the element is visible, enabled and editable,
    /// the same round trip focuses it and selects its content (or says it takes a set value),
    /// so nothing can change between the check and the preparation.
    pub(crate) async fn wait_fillable(&self, verb: &str, deadline: Deadline) -> Result<Actionable> {
        self.poll_actionable(verb, states::FILL, false, Some("fill"), false, deadline)
            .await
    }

    async fn poll_actionable(
        &self,
        verb: &str,
        states: &[&str],
        pointer: bool,
        prepare: Option<&str>,
        keyboard: bool,
        deadline: Deadline,
    ) -> Result<Actionable> {
        let (frame_id, mut arg) = selector::js_target(&self.page, &self.selector)?;
        if let Some(arg) = arg.as_object_mut() {
            arg.insert("states".into(), json!(states));
            // Every action scrolls its element into view (so the action point exists); only
            // pointer actions also need it to hold still.
            arg.insert("scroll".into(), json!(true));
            arg.insert("stable".into(), json!(pointer));
            if let Some(prepare) = prepare {
                arg.insert("prepare".into(), json!(prepare));
            }
            if keyboard {
                arg.insert("keyboard".into(), json!(true));
            }
        }
        let mut poller = Poller::new(deadline, POLL_EVERY);
        let mut last = LastReason::NoAnswer;
        while poller.next().await {
            let first = poller.is_first();
            let call = self
                .page
                .call_isolated(frame_id.as_deref(), "actionability.check", &arg);
            // The first check always completes, even with a zero timeout ("0 = one check");
            // later ones stop at the deadline.
            let answer = if first {
                call.await
            } else {
                match tokio::time::timeout_at(deadline.at(), call).await {
                    Ok(answer) => answer,
                    Err(_) => break,
                }
            };
            // A page that does not answer by the deadline times out like one that never became
            // actionable, naming the last state seen (the call frees a stuck page afterwards).
            let answer = match answer {
                Err(Error::NoAnswer { .. }) => break,
                other => other?,
            };
            let status = status("actionability.check", &answer)?;
            match status {
                Status::Ok => {
                    return serde_json::from_value(answer).map_err(|source| Error::Decode {
                        method: "actionability.check".into(),
                        source,
                    })
                }
                Status::NoMatch if self.fails_fast(first) => return Err(self.no_match(verb)),
                Status::NoMatch if self.wait_for_match => last = LastReason::NoMatch,
                Status::NoMatch => last = LastReason::NotVisible(0),
                Status::NotVisible => last = LastReason::NotVisible(matched(&answer)),
                Status::NotEnabled => last = LastReason::State(UnmetState::Enabled, None),
                Status::NotEditable => {
                    if answer.get("fillable").and_then(Value::as_bool) == Some(false) {
                        return Err(self.not_editable(verb).await);
                    }
                    last = LastReason::State(UnmetState::Editable, None);
                }
                Status::Obscured => {
                    let by = answer.get("obscuredBy").and_then(Value::as_str);
                    last = LastReason::State(UnmetState::Unobscured, by.map(String::from));
                }
                Status::Unstable => last = LastReason::State(UnmetState::Stable, None),
                Status::OutsideViewport => last = LastReason::State(UnmetState::InViewport, None),
                _ => self.target_status(verb, status, &answer)?,
            }
        }
        Err(self.timed_out(verb, deadline.timeout(), last))
    }

    fn timed_out(&self, verb: &str, timeout: Duration, last: LastReason) -> Error {
        let selector = self.selector.canonical().to_string();
        match last {
            LastReason::NoMatch => self.no_match(verb),
            LastReason::NoAnswer => Error::TimeoutWaitingVisible {
                verb: verb.into(),
                selector,
                timeout,
                matched: None,
            },
            LastReason::NotVisible(matched) => Error::TimeoutWaitingVisible {
                verb: verb.into(),
                selector,
                timeout,
                matched: Some(matched),
            },
            LastReason::State(state, obscured_by) => Error::TimeoutWaitingState {
                verb: verb.into(),
                selector,
                timeout,
                state,
                obscured_by,
            },
        }
    }

    /// NOT_EDITABLE for this target, naming its tag when it can be read.
    pub(crate) async fn not_editable(&self, verb: &str) -> Error {
        let role = self
            .call("actionability.find", json!({}))
            .await
            .ok()
            .and_then(|v| {
                v.pointer("/matches/0/tag")
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .unwrap_or_else(|| "element".into());
        Error::NotEditable {
            verb: verb.into(),
            target: self.selector.canonical().into(),
            role,
        }
    }
}

/// The `status` every `actionability` answer carries, one variant per string the page script
/// (`engine/src/js/actionability.js`) writes. A status the script gives that is not here is
/// [`Error::UnknownStatus`], never a default: a unit test checks the two lists agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Status {
    /// The call did what it was asked.
    Ok,
    /// Nothing matches the selector.
    NoMatch,
    /// The browser rejected the selector (`reason`, `browserMessage`).
    InvalidSelector,
    /// A ref no longer resolves (`ref`, `reason`).
    StaleRef,
    /// Matches exist but none is visible (`matched`).
    NotVisible,
    /// The element is disabled.
    NotEnabled,
    /// The element cannot take text (`fillable`).
    NotEditable,
    /// Another element takes the pointer at the action point (`obscuredBy`).
    Obscured,
    /// The element is still moving.
    Unstable,
    /// The element has no part inside the viewport.
    OutsideViewport,
    /// `read` of `value` on an element that has none (`tag`).
    NoValue,
    /// `read` of a field the script does not know.
    BadField,
    /// `fileInputInfo` on something that is not a file input or its label.
    NotFileInput,
    /// `checkState` on something that is not checkable.
    NotCheckable,
    /// `selectOption` on something that is not a `<select>`.
    NotSelect,
    /// `selectOption` found no such option (`options`, `count`).
    NoOption,
    /// `selectOption` found the option disabled.
    DisabledOption,
    /// `setValue`: the input did not take the value.
    Rejected,
    /// `setValue` on an input that takes typed text.
    NotSettable,
}

/// The [`Status`] of the answer of page function `method`; an absent or unknown one is
/// [`Error::UnknownStatus`] naming it.
pub(crate) fn status(method: &str, answer: &Value) -> Result<Status> {
    let text = answer.get("status").and_then(Value::as_str).unwrap_or("");
    serde_json::from_value(Value::String(text.to_owned())).map_err(|_| Error::UnknownStatus {
        method: method.into(),
        status: text.into(),
    })
}

fn matched(answer: &Value) -> usize {
    answer
        .get("matched")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0)
}

/// The `reason` of a `stale-ref` answer: the status `refs.lookup` (`engine/src/js/refs.js`)
/// gave the ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "kebab-case")]
pub(crate) enum StaleRefReason {
    /// Collected or disconnected.
    Detached,
    /// Now in another document.
    Ambiguous,
    /// Never minted in this world.
    Unknown,
}

/// STALE_REF from a JS `stale-ref` answer. A `reason` the ref table does not give (or none)
/// is the ref being unknown, as it always was.
pub(crate) fn stale(answer: &Value) -> Error {
    let reason = answer
        .get("reason")
        .cloned()
        .and_then(|reason| serde_json::from_value::<StaleRefReason>(reason).ok());
    let reason = match reason {
        Some(StaleRefReason::Detached) => StaleReason::Detached,
        Some(StaleRefReason::Ambiguous) => StaleReason::Ambiguous,
        Some(StaleRefReason::Unknown) | None => StaleReason::UnknownRef,
    };
    let n = answer.get("ref").and_then(Value::as_u64).unwrap_or(0);
    Error::StaleRef {
        element_ref: format!("e{n}"),
        reason,
    }
}
