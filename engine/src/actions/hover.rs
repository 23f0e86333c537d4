//! `hover`: NO_MATCH at the first check, then visible + unobscured only (a disabled control is
//! hovered too); the pointer moves to the action point.

use crate::error::Result;
use crate::input::Input;
use crate::wait::Deadline;

use super::{states, Aim, Locator};

impl Locator {
    /// Moves the pointer over the element once it is visible and unobscured.
    pub async fn hover(&self) -> Result<()> {
        self.bounded(async {
            let deadline = Deadline::new(self.timeout);
            let target = self
                .wait_actionable("hover", states::HOVER, Aim::Pointer, deadline)
                .await?;
            Input::new(&self.page)
                .mouse_move(target.point.x, target.point.y)
                .await
        })
        .await
    }
}
