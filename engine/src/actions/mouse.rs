//! Mouse verbs: at an element (NO_MATCH at the first check, visible only,
//! scrolled into view, the action point) or at viewport coordinates.

use crate::error::Result;
use crate::input::{Input, MouseButton};
use crate::page::Page;
use crate::wait::Deadline;

use super::{states, Aim, Locator};

/// Where a mouse action happens.
async fn point_of(locator: &Locator) -> Result<(f64, f64)> {
    let deadline = Deadline::new(locator.timeout);
    let target = locator
        .wait_actionable("mouse", states::VISIBLE, Aim::Pointer, deadline)
        .await?;
    Ok((target.point.x, target.point.y))
}

impl Locator {
    /// Moves the pointer to the element's action point; returns it.
    pub async fn mouse_move(&self) -> Result<(f64, f64)> {
        self.bounded(async {
            let (x, y) = point_of(self).await?;
            Input::new(&self.page).mouse_move(x, y).await?;
            Ok((x, y))
        })
        .await
    }

    /// Clicks `button` at the element's action point (no actionability beyond visible).
    pub async fn mouse_click(&self, button: MouseButton) -> Result<(f64, f64)> {
        self.bounded(async {
            let (x, y) = point_of(self).await?;
            Input::new(&self.page).click_at(x, y, button, 1).await?;
            Ok((x, y))
        })
        .await
    }

    /// Presses `button` at the element's action point.
    pub async fn mouse_down(&self, button: MouseButton) -> Result<(f64, f64)> {
        self.bounded(async {
            let (x, y) = point_of(self).await?;
            let input = Input::new(&self.page);
            input.mouse_move(x, y).await?;
            input.mouse_down(x, y, button, 1).await?;
            Ok((x, y))
        })
        .await
    }

    /// Releases `button` at the element's action point.
    pub async fn mouse_up(&self, button: MouseButton) -> Result<(f64, f64)> {
        self.bounded(async {
            let (x, y) = point_of(self).await?;
            let input = Input::new(&self.page);
            input.mouse_move(x, y).await?;
            input.mouse_up(x, y, button, 1).await?;
            Ok((x, y))
        })
        .await
    }

    /// Turns the wheel by `(delta_x, delta_y)` over the element.
    pub async fn mouse_wheel(&self, delta_x: f64, delta_y: f64) -> Result<(f64, f64)> {
        self.bounded(async {
            let (x, y) = point_of(self).await?;
            Input::new(&self.page).wheel(x, y, delta_x, delta_y).await?;
            Ok((x, y))
        })
        .await
    }
}

impl Page {
    /// The pointer position in viewport CSS px (0, 0 until the first mouse action).
    pub fn mouse_position(&self) -> (f64, f64) {
        Input::new(self).pointer()
    }

    /// Moves the pointer to `(x, y)`.
    pub async fn mouse_move(&self, x: f64, y: f64) -> Result<()> {
        Input::new(self).mouse_move(x, y).await
    }

    /// Clicks `button` at `(x, y)`.
    pub async fn mouse_click(&self, x: f64, y: f64, button: MouseButton) -> Result<()> {
        Input::new(self).click_at(x, y, button, 1).await
    }

    /// Presses `button` at `(x, y)`.
    pub async fn mouse_down(&self, x: f64, y: f64, button: MouseButton) -> Result<()> {
        Input::new(self).mouse_down(x, y, button, 1).await
    }

    /// Releases `button` at `(x, y)`.
    pub async fn mouse_up(&self, x: f64, y: f64, button: MouseButton) -> Result<()> {
        Input::new(self).mouse_up(x, y, button, 1).await
    }

    /// Turns the wheel by `(delta_x, delta_y)` at `(x, y)`.
    pub async fn mouse_wheel(&self, x: f64, y: f64, delta_x: f64, delta_y: f64) -> Result<()> {
        Input::new(self).wheel(x, y, delta_x, delta_y).await
    }
}
