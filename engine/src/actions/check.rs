//! `check` / `uncheck`: read the state, click (unobscured) only if it
//! differs, read again; still wrong → EXPECT_MISMATCH.

use serde::Deserialize;
use serde_json::json;

use crate::error::{Error, Result};

use super::{status, Locator, Status};

/// The `{status: "ok"}` answer of `actionability.checkState`: `kind` is the input's type or the
/// element's role (only `radio` matters here), `checked` is `true`, `false` or `"mixed"`; any
/// other `checked` fails to decode instead of reading as a state.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(super) struct CheckState {
    #[serde(default)]
    pub(super) kind: String,
    pub(super) checked: Checked,
}

/// A `checked` as `checkState` writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub(super) enum Checked {
    /// `true` or `false`.
    Flag(bool),
    /// `"mixed"` (an indeterminate checkbox, `aria-checked="mixed"`).
    Mixed(MixedWord),
}

/// The one word `checked` takes besides a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum MixedWord {
    Mixed,
}

impl Checked {
    /// How messages name the state.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Checked::Flag(true) => "checked",
            Checked::Flag(false) => "unchecked",
            Checked::Mixed(MixedWord::Mixed) => "mixed",
        }
    }
}

impl Locator {
    /// Checks a checkbox, radio, switch-like role, or the input of a `<label>`.
    pub async fn check(&self) -> Result<()> {
        self.set_checked("check", true).await
    }

    /// Unchecks a checkbox or switch-like role (a radio cannot be unchecked).
    pub async fn uncheck(&self) -> Result<()> {
        self.set_checked("uncheck", false).await
    }

    async fn set_checked(&self, verb: &str, want: bool) -> Result<()> {
        self.bounded(async {
            // The first state read doubles as the NO_MATCH first check.
            let state = self.read_checked(verb).await?;
            if !want && state.kind == "radio" {
                return Err(Error::invalid_argument_of("selector", format!("{verb}: {} is a radio button, which cannot be unchecked; check another option instead", self.selector.canonical())));
            }
            if state.checked == Checked::Flag(want) {
                return Ok(());
            }
            self.click_as(verb, &super::ClickOptions::default())
                .await?;
            let after = self.read_checked(verb).await?;
            if after.checked != Checked::Flag(want) {
                let actual = after.checked.as_str().to_owned();
                let expected = if want { "checked" } else { "unchecked" };
                return Err(Error::ExpectMismatch {
                    message: format!(
                        "{verb}: expected {} to be {expected}, but it is {actual} after the click",
                        self.selector.canonical()
                    ),
                    expected: expected.into(),
                    actual: Some(actual),
                });
            }
            Ok(())
        })
        .await
    }

    /// The element's [`CheckState`].
    async fn read_checked(&self, verb: &str) -> Result<CheckState> {
        let answer = self.call("actionability.checkState", json!({})).await?;
        let status = status("actionability.checkState", &answer)?;
        match status {
            Status::Ok => serde_json::from_value(answer).map_err(|source| Error::Decode {
                method: "actionability.checkState".into(),
                source,
            }),
            Status::NotCheckable => Err(Error::invalid_argument_of(
                "selector",
                format!(
                    "{verb}: {} is not a checkbox, radio, switch or their label",
                    self.selector.canonical()
                ),
            )),
            _ => {
                self.target_status(verb, status, &answer)?;
                Err(self.no_match(verb))
            }
        }
    }
}
