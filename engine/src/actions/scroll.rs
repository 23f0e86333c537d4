//! `scroll_into_view`: the element to the viewport centre.

use serde_json::json;

use crate::error::{Error, Result};
use crate::wait::Deadline;

use super::{states, status, Aim, Locator, Status};

impl Locator {
    /// Scrolls the element to the viewport centre once it is visible.
    pub async fn scroll_into_view(&self) -> Result<()> {
        self.bounded(async {
            let deadline = Deadline::new(self.timeout);
            self.wait_actionable("scroll", states::VISIBLE, Aim::Focus, deadline)
                .await?;
            let answer = self.call("actionability.scrollToCenter", json!({})).await?;
            let status = status("actionability.scrollToCenter", &answer)?;
            match status {
                Status::Ok => Ok(()),
                _ => self
                    .target_status("scroll", status, &answer)
                    .and(Err(Error::StateInvalid {
                        message: format!(
                            "scroll: {} changed before it could be scrolled",
                            self.selector.canonical()
                        ),
                    })),
            }
        })
        .await
    }
}
