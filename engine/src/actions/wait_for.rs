//! Waits and assertions on an element (element states, visible and
//! text): no first-check NO_MATCH; element states re-check every 25 ms, expectations every
//! 100 ms, until one deadline.

use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{Error, Result, UnmetState};
use crate::wait::{Deadline, Poller, EXPECT_EVERY, POLL_EVERY};

use super::{states, status, Locator, Status};

/// An element state to wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementState {
    /// At least one match.
    Attached,
    /// No match.
    Detached,
    /// A visible match.
    Visible,
    /// No visible match (zero matches pass).
    Hidden,
    /// A visible, enabled match.
    Enabled,
}

impl ElementState {
    /// The contract's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ElementState::Attached => "attached",
            ElementState::Detached => "detached",
            ElementState::Visible => "visible",
            ElementState::Hidden => "hidden",
            ElementState::Enabled => "enabled",
        }
    }
}

/// How `expect_text` compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextMatch {
    /// The trimmed rendered text equals this.
    Exact(String),
    /// The trimmed rendered text contains this.
    Contains(String),
}

impl crate::Page {
    /// Waits until the page's URL matches `want`, re-checking every 100 ms; at the
    /// deadline, `Err` with the URL last seen.
    pub async fn expect_url(
        &self,
        want: &TextMatch,
        timeout: Duration,
    ) -> std::result::Result<(), String> {
        let mut poller = Poller::new(Deadline::new(timeout), EXPECT_EVERY);
        let mut url = self.url();
        while poller.next().await {
            url = self.url();
            let pass = match want {
                TextMatch::Exact(e) => url == *e,
                TextMatch::Contains(c) => url.contains(c.as_str()),
            };
            if pass {
                return Ok(());
            }
        }
        Err(url)
    }
}

impl Locator {
    /// Waits until the element reaches `state`. Timeouts: `visible` is NO_MATCH
    /// if nothing ever matched, else TIMEOUT_WAITING_VISIBLE; `attached` is NO_MATCH; `hidden`,
    /// `detached` and `enabled` are TIMEOUT_WAITING_STATE.
    pub async fn wait_for(&self, state: ElementState) -> Result<()> {
        self.bounded(async {
            let verb = "wait";
            let deadline = Deadline::new(self.timeout);
            let mut poller = Poller::new(deadline, POLL_EVERY);
            let mut ever_matched = false;
            let mut answered = false;
            let mut matched = 0usize;
            // `attached` and `visible` never time out as TIMEOUT_WAITING_STATE (below).
            let mut last_state = match state {
                ElementState::Detached => UnmetState::Detached,
                ElementState::Hidden => UnmetState::Hidden,
                ElementState::Enabled => UnmetState::Enabled,
                ElementState::Attached | ElementState::Visible => UnmetState::Visible,
            };
            while poller.next().await {
                let (probe, check_states) = match state {
                    ElementState::Attached | ElementState::Detached => {
                        ("actionability.exists", None)
                    }
                    ElementState::Visible | ElementState::Hidden => {
                        ("actionability.check", Some(states::VISIBLE))
                    }
                    ElementState::Enabled => ("actionability.check", Some(states::ENABLED)),
                };
                let extra = match check_states {
                    Some(s) => json!({"states": s}),
                    None => json!({}),
                };
                let answer = match self.call(probe, extra).await {
                    // A page that never answered a check was not seen to lack the element:
                    // its own timeout says so (and the page is probed, its script stopped).
                    Err(err @ Error::NoAnswer { .. }) if !answered => return Err(err),
                    Err(Error::NoAnswer { .. }) => break,
                    other => other?,
                };
                answered = true;
                // Off-screen is still visible (docs/mcp.md#actionability: viewport position is irrelevant).
                let st = match status(probe, &answer)? {
                    Status::OutsideViewport | Status::Unstable => Status::Ok,
                    other => other,
                };
                if !matches!(
                    st,
                    Status::Ok | Status::NoMatch | Status::NotVisible | Status::NotEnabled
                ) {
                    self.target_status(verb, st, &answer)?;
                }
                let count = answer
                    .get("count")
                    .or_else(|| answer.get("matched"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0) as usize;
                let any = match state {
                    ElementState::Attached | ElementState::Detached => count > 0,
                    _ => st != Status::NoMatch,
                };
                ever_matched |= any;
                matched = if any { count.max(1) } else { 0 };
                let done = match state {
                    ElementState::Attached => any,
                    ElementState::Detached => !any,
                    ElementState::Visible => st == Status::Ok,
                    ElementState::Hidden => st == Status::NoMatch || st == Status::NotVisible,
                    ElementState::Enabled => st == Status::Ok,
                };
                if done {
                    return Ok(());
                }
                if state == ElementState::Enabled && st == Status::NotVisible {
                    last_state = UnmetState::Visible;
                } else if state == ElementState::Enabled {
                    last_state = UnmetState::Enabled;
                }
            }
            let selector = self.selector.canonical().to_string();
            let timeout = deadline.timeout();
            Err(match state {
                ElementState::Attached => self.no_match(verb),
                ElementState::Visible if !ever_matched => self.no_match(verb),
                ElementState::Visible => Error::TimeoutWaitingVisible {
                    verb: verb.into(),
                    selector,
                    timeout,
                    matched: Some(matched),
                },
                _ => Error::TimeoutWaitingState {
                    verb: verb.into(),
                    selector,
                    timeout,
                    state: last_state,
                    obscured_by: None,
                },
            })
        })
        .await
    }

    /// Asserts the element becomes visible, re-checking every 100 ms (an expectation).
    /// Failure is EXPECT_MISMATCH with `actual` `"no match"` or `"hidden"`.
    pub async fn expect_visible(&self) -> Result<()> {
        self.bounded(async {
            let deadline = Deadline::new(self.timeout);
            let mut poller = Poller::new(deadline, EXPECT_EVERY);
            let mut actual = "no match";
            while poller.next().await {
                let answer = self
                    .call("actionability.check", json!({"states": states::VISIBLE}))
                    .await?;
                let status = status("actionability.check", &answer)?;
                match status {
                    Status::Ok | Status::OutsideViewport | Status::Unstable => return Ok(()),
                    Status::NoMatch => actual = "no match",
                    Status::NotVisible => actual = "hidden",
                    _ => self.target_status("expect", status, &answer)?,
                }
            }
            Err(Error::ExpectMismatch {
                message: format!(
                    "expect: expected {} to be visible, but it was {} after {}ms",
                    self.selector.as_typed(),
                    if actual == "hidden" {
                        "hidden"
                    } else {
                        "not found"
                    },
                    deadline.timeout().as_millis()
                ),
                expected: "visible".into(),
                actual: Some(actual.into()),
            })
        })
        .await
    }

    /// Asserts the first match's trimmed rendered text matches, re-checking every 100 ms
    /// (an expectation). Failure is EXPECT_MISMATCH carrying expected and actual
    /// (`actual` is `null` when nothing matched).
    pub async fn expect_text(&self, want: &TextMatch) -> Result<()> {
        self.bounded(async {
            let deadline = Deadline::new(self.timeout);
            let mut poller = Poller::new(deadline, EXPECT_EVERY);
            let mut actual: Option<String> = None;
            while poller.next().await {
                let answer = self
                    .call("actionability.read", json!({"field": "text"}))
                    .await?;
                let status = status("actionability.read", &answer)?;
                match status {
                    Status::Ok => {
                        let text = answer
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        let pass = match want {
                            TextMatch::Exact(e) => text == *e,
                            TextMatch::Contains(c) => text.contains(c.as_str()),
                        };
                        if pass {
                            return Ok(());
                        }
                        actual = Some(text);
                    }
                    Status::NoMatch => actual = None,
                    _ => self.target_status("expect", status, &answer)?,
                }
            }
            let (relation, expected) = match want {
                TextMatch::Exact(e) => ("to have text", e.clone()),
                TextMatch::Contains(c) => ("to contain text", c.clone()),
            };
            let shown = actual
                .as_ref()
                .map_or("no match".to_string(), |a| format!("{a:?}"));
            Err(Error::ExpectMismatch {
                message: format!(
                    "expect: expected {} {relation} {expected:?}, but got {shown} after {}ms",
                    self.selector.as_typed(),
                    deadline.timeout().as_millis()
                ),
                expected,
                actual,
            })
        })
        .await
    }
}
