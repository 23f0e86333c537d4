//! `fill`, `fill_and_submit` and `clear` (docs/tools.md#browser_fill--fill-field, docs/tools.md#browser_element--element-action `clear`): element
//! action + editable; focus, select all, delete, then type per character (a value of more than
//! 1,024 characters is inserted in one go, as a paste). Date, time, colour and range inputs are
//! set through the JS helper instead.

use serde_json::json;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::input::{keys, Input};
use crate::wait::Deadline;

use super::{states, status, Aim, Locator, Status};

impl Locator {
    /// Replaces the field's content with `value`, typed as key events (docs/tools.md#browser_fill--fill-field); a
    /// value longer than 1,024 characters is inserted as one text input instead.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// page.locator("label=Email")?.fill("ann@example.com").await?;
    /// # Ok(()) }
    /// ```
    pub async fn fill(&self, value: &str) -> Result<()> {
        self.bounded(async { self.fill_inner("fill", value).await })
            .await
    }

    /// Fills, then presses Enter on the same element under the Enter fence (docs/mcp.md#navigation-waits). Returns
    /// whether a navigation was seen.
    pub async fn fill_and_submit(&self, value: &str) -> Result<bool> {
        self.bounded(async {
            self.fill_inner("fill", value).await?;
            let enter = keys::parse_chord("fill", "Enter")?;
            let before = self.page.nav_mark();
            let pressed_at = Instant::now();
            Input::new(&self.page).press_chord(&enter).await?;
            crate::page::enter_fence(&self.page, &before, pressed_at).await
        })
        .await
    }

    async fn fill_inner(&self, verb: &str, value: &str) -> Result<()> {
        let deadline = Deadline::new(self.timeout);
        let prepared = self.wait_fillable(verb, deadline).await?;
        if prepared.mode.as_deref() == Some("set") {
            let answer = self
                .call_with_value("actionability.setValue", json!(value))
                .await?;
            let status = status("actionability.setValue", &answer)?;
            return match status {
                Status::Ok => Ok(()),
                Status::Rejected => Err(Error::invalid_argument_of(
                    "value",
                    format!(
                        "{verb}: {} rejected the value {value:?}",
                        self.selector.canonical()
                    ),
                )),
                _ => self
                    .target_status(verb, status, &answer)
                    .and(Err(Error::StateInvalid {
                        message: format!(
                            "{verb}: {} cannot take a value",
                            self.selector.canonical()
                        ),
                    })),
            };
        }
        let input = Input::new(&self.page);
        if prepared.empty == Some(true) {
            input.type_text(value, false).await
        } else {
            input.delete_then_type(value).await
        }
    }

    /// Empties an editable field, firing `input` and `change` (`clear`).
    pub async fn clear(&self) -> Result<()> {
        self.bounded(async {
            let deadline = Deadline::new(self.timeout);
            self.wait_actionable("clear", states::FILL, Aim::Focus, deadline)
                .await?;
            let answer = self.call("actionability.clear", json!({})).await?;
            let status = status("actionability.clear", &answer)?;
            match status {
                Status::Ok => Ok(()),
                Status::NotEditable => Err(self.not_editable("clear").await),
                _ => self.target_status("clear", status, &answer),
            }
        })
        .await
    }
}
