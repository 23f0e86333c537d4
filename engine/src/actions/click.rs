//! `click`, double click, other buttons and modifiers: element action + unobscured, press and
//! release at the action point, then the click navigation wait (docs/mcp.md#navigation-waits).

use crate::error::Result;
use crate::input::{keys, Input, Modifier, MouseButton};
use crate::wait::{Deadline, NAVIGATION_TIMEOUT};

use super::{states, Aim, Locator};

/// How to click.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClickOptions {
    /// The button (left by default).
    pub button: MouseButton,
    /// 1 = click, 2 = double click.
    pub count: u8,
    /// Modifier keys held during the click, in order (`[Shift]`, `[Control, Alt]`).
    pub modifiers: Vec<Modifier>,
}

impl Default for ClickOptions {
    fn default() -> Self {
        Self {
            button: MouseButton::Left,
            count: 1,
            modifiers: Vec::new(),
        }
    }
}

impl Locator {
    /// Clicks the element once it is visible, enabled and unobscured; awaits a navigation the
    /// click started (docs/mcp.md#observations).
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// page.locator("text=Sign in")?.click().await?;
    /// # Ok(()) }
    /// ```
    pub async fn click(&self) -> Result<()> {
        self.click_as("click", &ClickOptions::default()).await
    }

    /// Double-clicks the element (click counts 1 and 2).
    pub async fn dblclick(&self) -> Result<()> {
        let options = ClickOptions {
            count: 2,
            ..ClickOptions::default()
        };
        self.click_as("dblclick", &options).await
    }

    /// Clicks with another button, count or held modifiers; errors name the action `click`, or
    /// `dblclick` for a count of 2.
    pub async fn click_with(&self, options: &ClickOptions) -> Result<()> {
        let verb = if options.count == 2 {
            "dblclick"
        } else {
            "click"
        };
        self.click_as(verb, options).await
    }

    /// [`Locator::click_with`], with `verb` naming the action in errors (`check` clicks too).
    pub(crate) async fn click_as(&self, verb: &str, options: &ClickOptions) -> Result<()> {
        self.bounded(async {
            let modifiers: Vec<_> = options.modifiers.iter().map(|m| m.key()).collect();
            let deadline = Deadline::new(self.timeout);
            let plain = options.button == MouseButton::Left
                && options.count <= 1
                && options.modifiers.is_empty();
            let target = if plain {
                self.wait_clickable(verb, deadline).await?
            } else {
                self.wait_actionable(verb, states::CLICK, Aim::Pointer, deadline)
                    .await?
            };
            if let Some(key) = &target.keyboard {
                return self.activate_by_keyboard(verb, key).await;
            }
            let input = Input::new(&self.page);
            let before = self.page.nav_mark();
            for key in &modifiers {
                input.key_down(key).await?;
            }
            let clicked = input
                .click_at(
                    target.point.x,
                    target.point.y,
                    options.button,
                    i64::from(options.count.max(1)),
                )
                .await;
            for key in modifiers.iter().rev() {
                input.key_up(key).await?;
            }
            // The input events are answered once the page has handled them: a handler that
            // never returns is a timeout of the click, not of an actionability check.
            clicked.map_err(|err| match err {
                crate::Error::NoAnswer { timeout, .. } => crate::Error::Timeout {
                    what: format!(
                        "the page to handle the {verb} on {}",
                        self.selector.canonical()
                    ),
                    timeout,
                },
                other => other,
            })?;
            // An ordering round trip to the renderer: navigation requests the click caused are
            // reported before its answer. A dialog or a navigation may interrupt it; either is
            // seen by the wait below.
            let _ = self
                .page
                .call_isolated(None, "dom.normalize", &serde_json::Value::Null)
                .await;
            crate::page::wait_for_click_navigation(&self.page, &before, NAVIGATION_TIMEOUT).await?;
            Ok(())
        })
        .await
    }

    /// A click on a zero-size control with nothing showing (a skip link of size 0, a
    /// visually hidden checkbox): what a keyboard user does, focus then `key` (Enter, or Space
    /// for a checkbox, radio or switch); Enter under the Enter navigation fence.
    async fn activate_by_keyboard(&self, verb: &str, key: &str) -> Result<()> {
        let answer = self
            .call("actionability.focusEnd", serde_json::json!({}))
            .await?;
        let focused = answer.get("focused").and_then(serde_json::Value::as_bool);
        if focused != Some(true) {
            return Err(crate::Error::StateInvalid {
                message: format!(
                    "{verb}: {} has no size and did not take focus, so neither a pointer nor a keyboard can reach it",
                    self.selector.canonical()
                ),
            });
        }
        let chord = keys::parse_chord(verb, key)?;
        super::press::press_chord(&self.page, &chord).await?;
        Ok(())
    }
}
