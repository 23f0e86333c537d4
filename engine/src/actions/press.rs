//! Keyboard verbs: `press` (a key or chord, docs/mcp.md#keys), `key_down`/`key_up`, `type_text` and
//! `focus`. With a locator the element is waited for (visible + enabled) and focused, never
//! clicked; Enter runs under the Enter navigation fence (docs/mcp.md#navigation-waits).

use serde_json::json;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::input::{keys, Input};
use crate::page::Page;
use crate::selector;
use crate::wait::Deadline;

use super::{states, status, Aim, Locator, Status};

impl Locator {
    /// Focuses the element (no click), caret after its text.
    pub async fn focus(&self) -> Result<()> {
        self.bounded(async {
            let deadline = Deadline::new(self.timeout);
            self.wait_actionable("focus", states::KEYBOARD, Aim::Focus, deadline)
                .await?;
            let answer = self.call("actionability.focusEnd", json!({})).await?;
            let status = status("actionability.focusEnd", &answer)?;
            match status {
                Status::Ok => Ok(()),
                _ => self
                    .target_status("focus", status, &answer)
                    .and(Err(Error::StateInvalid {
                        message: format!(
                            "focus: {} changed before it could be focused",
                            self.selector.canonical()
                        ),
                    })),
            }
        })
        .await
    }

    /// Focuses the element, then presses `key` (a key or chord such as `Control+A`). Returns
    /// whether an Enter press saw a navigation.
    pub async fn press(&self, key: &str) -> Result<bool> {
        self.bounded(async {
            let chord = keys::parse_chord("press", key)?;
            self.focus_for("press").await?;
            press_chord(&self.page, &chord).await
        })
        .await
    }

    /// Focuses the element, then holds `key` down (one key, no chord).
    pub async fn key_down(&self, key: &str) -> Result<()> {
        self.bounded(async {
            let key = single_key("key", key)?;
            self.focus_for("key").await?;
            Input::new(&self.page).key_down(&key).await
        })
        .await
    }

    /// Focuses the element, then releases `key`.
    pub async fn key_up(&self, key: &str) -> Result<()> {
        self.bounded(async {
            let key = single_key("key", key)?;
            self.focus_for("key").await?;
            Input::new(&self.page).key_up(&key).await
        })
        .await
    }

    async fn focus_for(&self, verb: &str) -> Result<()> {
        let deadline = Deadline::new(self.timeout);
        self.wait_actionable(verb, states::KEYBOARD, Aim::Focus, deadline)
            .await?;
        // Plain focus(): an element that already has focus keeps its selection (so that
        // `Control+A` then `Backspace` on the same field deletes everything).
        let (frame_id, arg) = selector::js_target(&self.page, &self.selector)?;
        let object = self
            .page
            .call_isolated_object(frame_id.as_deref(), "actionability.element", &arg)
            .await?;
        let Some((session, object_id)) = object else {
            return Err(self.no_match(verb));
        };
        session
            .send(&crate::cdp::dom::FocusParams::default().object_id(object_id))
            .await?;
        Ok(())
    }
}

fn single_key(verb: &str, text: &str) -> Result<keys::Key> {
    let chord = keys::parse_chord(verb, text)?;
    if !chord.modifiers.is_empty() {
        return Err(Error::invalid_argument_of(
            "key",
            format!("{verb}: {text:?} is a chord; down and up take one key"),
        ));
    }
    Ok(chord.key)
}

pub(super) async fn press_chord(page: &Page, chord: &keys::KeyChord) -> Result<bool> {
    let before = page.nav_mark();
    let pressed_at = Instant::now();
    Input::new(page).press_chord(chord).await?;
    if chord.is_enter() {
        return crate::page::enter_fence(page, &before, pressed_at).await;
    }
    Ok(false)
}

impl Page {
    /// Presses `key` (a key or chord, docs/mcp.md#keys) in whatever has focus. Enter runs under the Enter navigation fence (docs/mcp.md#observations)
    /// fence; returns whether it saw a navigation.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// page.press("Control+A").await?;
    /// # Ok(()) }
    /// ```
    pub async fn press(&self, key: &str) -> Result<bool> {
        let chord = keys::parse_chord("press", key)?;
        press_chord(self, &chord).await
    }

    /// Holds `key` down; a modifier applies to all later keyboard and mouse input until
    /// [`Page::key_up`]. A printable key also types its character.
    pub async fn key_down(&self, key: &str) -> Result<()> {
        let key = single_key("key", key)?;
        Input::new(self).key_down(&key).await
    }

    /// Releases `key`.
    pub async fn key_up(&self, key: &str) -> Result<()> {
        let key = single_key("key", key)?;
        Input::new(self).key_up(&key).await
    }

    /// Types `text` into the focused element without clearing it; `\n` presses Enter, and the
    /// Enter fence runs once at the end if there was one. Returns the number of code points.
    pub async fn type_text(&self, text: &str) -> Result<usize> {
        let before = self.nav_mark();
        let started = Instant::now();
        Input::new(self).type_text(text, true).await?;
        if text.contains('\n') {
            crate::page::enter_fence(self, &before, started).await?;
        }
        Ok(text.chars().count())
    }
}
