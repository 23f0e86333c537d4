//! `check` / `uncheck` (browser_element): read the state, click (unobscured) only if it
//! differs, read again; still wrong → EXPECT_MISMATCH.

use serde_json::{json, Value};

use crate::error::{Error, Result};

use super::{status, Locator, Status};

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
            if !want && state.1 == "radio" {
                return Err(Error::invalid_argument_of("selector", format!("{verb}: {} is a radio button, which cannot be unchecked; check another option instead", self.selector.canonical())));
            }
            if state.0 == Value::Bool(want) {
                return Ok(());
            }
            self.click_with(verb, &super::ClickOptions::default())
                .await?;
            let after = self.read_checked(verb).await?;
            if after.0 != Value::Bool(want) {
                let actual = match &after.0 {
                    Value::Bool(true) => "checked".to_string(),
                    Value::Bool(false) => "unchecked".to_string(),
                    other => other.as_str().unwrap_or("unknown").to_string(),
                };
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

    /// `(checked, kind)`: `checked` is `true`, `false` or `"mixed"`.
    async fn read_checked(&self, verb: &str) -> Result<(Value, String)> {
        let answer = self.call("actionability.checkState", json!({})).await?;
        let status = status("actionability.checkState", &answer)?;
        match status {
            Status::Ok => Ok((
                answer.get("checked").cloned().unwrap_or(Value::Null),
                answer
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            )),
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
