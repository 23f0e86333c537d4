//! Trusted input through the CDP `Input` domain: the key table and chord parser (docs/mcp.md#keys)
//! ([`keys`]), the keyboard (modifiers held across calls, per-character typing) and the mouse
//! (pointer position, buttons).
//!
//! This module sends events only. It does not find elements or wait for them (`actions/`), nor
//! decide where to click (`actionability.check` gives the action point).

pub(crate) mod keys;

use crate::cdp::input::{
    DispatchKeyEventParams, DispatchKeyEventParamsType as KeyType, DispatchMouseEventParams,
    DispatchMouseEventParamsType as MouseType, InsertTextParams, MouseButton as CdpButton,
};
use crate::error::Result;
use crate::page::Page;
use crate::rt::lock;

/// Above this many characters, a text is inserted in one go rather than typed key by key (a
/// paste, as Playwright's `fill` does for every value): 1,024 characters are about 2,000 key
/// events, which the browser works through in a fraction of a second.
pub(crate) const LONG_TEXT: usize = 1024;

pub use keys::{Key, KeyChord, Modifier};

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MouseButton {
    /// The primary button.
    #[default]
    Left,
    /// The wheel button.
    Middle,
    /// The context-menu button.
    Right,
}

impl MouseButton {
    fn cdp(self) -> CdpButton {
        match self {
            MouseButton::Left => CdpButton::Left,
            MouseButton::Middle => CdpButton::Middle,
            MouseButton::Right => CdpButton::Right,
        }
    }

    /// The `buttons` bit of this button (Left=1, Right=2, Middle=4).
    fn bit(self) -> i64 {
        match self {
            MouseButton::Left => 1,
            MouseButton::Right => 2,
            MouseButton::Middle => 4,
        }
    }

    /// The contract's name (`left`).
    pub fn as_str(self) -> &'static str {
        match self {
            MouseButton::Left => "left",
            MouseButton::Middle => "middle",
            MouseButton::Right => "right",
        }
    }
}

/// Sends keyboard and mouse events to a page.
pub(crate) struct Input<'a> {
    page: &'a Page,
}

impl<'a> Input<'a> {
    pub(crate) fn new(page: &'a Page) -> Self {
        Self { page }
    }

    fn held(&self) -> i64 {
        lock(&self.page.shared.input).modifiers
    }

    /// The pointer position.
    pub(crate) fn pointer(&self) -> (f64, f64) {
        let state = lock(&self.page.shared.input);
        (state.x, state.y)
    }

    /// Sends the key-down of `key` with `modifiers` (plus those held); a key with text types it
    /// unless Control, Alt or Meta is down.
    async fn send_down(&self, key: &Key, modifiers: i64) -> Result<()> {
        let params = self.down_params(key, modifiers);
        self.page
            .unless_dialog(self.page.session.send(&params))
            .await?;
        Ok(())
    }

    /// The key-down event of `key` with `modifiers` plus those held.
    fn down_params(&self, key: &Key, modifiers: i64) -> DispatchKeyEventParams {
        let modifiers = modifiers | self.held();
        let text = key.text_with(modifiers);
        let kind = if text.is_some() {
            KeyType::KeyDown
        } else {
            KeyType::RawKeyDown
        };
        let mut params = DispatchKeyEventParams::new(kind)
            .key(key.key_with(modifiers))
            .code(key.code.clone())
            .windows_virtual_key_code(key.key_code)
            .native_virtual_key_code(key.key_code)
            .modifiers(modifiers)
            .location(key.location);
        if let Some(text) = text {
            params = params.text(text.clone()).unmodified_text(text);
        }
        if key.is_keypad() {
            params = params.is_keypad(true);
        }
        // Control+A / Meta+A select all on every platform (docs/mcp.md#keys): ask the editor directly.
        if key.code == "KeyA" && modifiers & (keys::CONTROL | keys::META) != 0 {
            params = params.commands(vec!["selectAll".into()]);
        }
        params
    }

    async fn send_up(&self, key: &Key, modifiers: i64) -> Result<()> {
        let params = self.up_params(key, modifiers);
        self.page
            .unless_dialog(self.page.session.send(&params))
            .await?;
        Ok(())
    }

    /// The key-up event of `key` with `modifiers` plus those held.
    fn up_params(&self, key: &Key, modifiers: i64) -> DispatchKeyEventParams {
        let modifiers = modifiers | self.held();
        DispatchKeyEventParams::new(KeyType::KeyUp)
            .key(key.key_with(modifiers))
            .code(key.code.clone())
            .windows_virtual_key_code(key.key_code)
            .native_virtual_key_code(key.key_code)
            .modifiers(modifiers)
            .location(key.location)
    }

    /// Presses a chord: modifiers down in order, the key pressed with them held, modifiers up
    /// in reverse.
    pub(crate) async fn press_chord(&self, chord: &KeyChord) -> Result<()> {
        let mut modifiers = 0;
        for modifier in &chord.modifiers {
            self.send_down(modifier, modifiers).await?;
            modifiers |= modifier.modifier_bit();
        }
        let key_modifiers = modifiers | chord.key_modifiers();
        self.send_down(&chord.key, key_modifiers).await?;
        self.send_up(&chord.key, key_modifiers).await?;
        for modifier in chord.modifiers.iter().rev() {
            modifiers &= !modifier.modifier_bit();
            self.send_up(modifier, modifiers).await?;
        }
        Ok(())
    }

    /// Holds `key` down; a modifier then applies to all later input until [`Input::key_up`].
    pub(crate) async fn key_down(&self, key: &Key) -> Result<()> {
        self.send_down(key, 0).await?;
        lock(&self.page.shared.input).modifiers |= key.modifier_bit();
        Ok(())
    }

    /// Releases `key`.
    pub(crate) async fn key_up(&self, key: &Key) -> Result<()> {
        lock(&self.page.shared.input).modifiers &= !key.modifier_bit();
        self.send_up(key, 0).await
    }

    /// Types `text` character by character: characters with a key go in as keydown,
    /// keypress/input, keyup; the others as text input. With `newline_is_enter`, `\n` presses
    /// Enter; otherwise it is inserted as text (fill never submits). A text longer than
    /// [`LONG_TEXT`] characters goes in as one text input, as a paste does (see there).
    pub(crate) async fn type_text(&self, text: &str, newline_is_enter: bool) -> Result<()> {
        self.keys_then_text(&[], text, newline_is_enter).await
    }

    /// Presses Delete, then types `text` as [`Input::type_text`] does (`\n` as text): fill's
    /// replacement of the content it selected, written in one go.
    pub(crate) async fn delete_then_type(&self, text: &str) -> Result<()> {
        let delete = keys::parse_key("fill", "Delete")?;
        self.keys_then_text(&[delete], text, false).await
    }

    /// Presses each of `keys` (no modifiers beyond those held), then types `text`.
    async fn keys_then_text(&self, keys: &[Key], text: &str, newline_is_enter: bool) -> Result<()> {
        let long = text.chars().nth(LONG_TEXT).is_some();
        if long && !(newline_is_enter && text.contains('\n')) {
            return self.keys_then_insert(keys, text).await;
        }
        // Every event is written at once and answered in order: the browser queues input per
        // session, so the page sees exactly the per-character sequence, without a round trip
        // between characters.
        let session = &self.page.session;
        let mut sends = Vec::with_capacity(keys.len() * 2 + text.len() * 2);
        for key in keys {
            sends.push(futures::future::Either::Left(
                session.send(&self.down_params(key, 0)),
            ));
            sends.push(futures::future::Either::Left(
                session.send(&self.up_params(key, 0)),
            ));
        }
        for ch in text.chars() {
            let key = match ch {
                '\n' if newline_is_enter => keys::named("Enter"),
                '\n' | '\r' => None,
                _ => Key::for_char(ch),
            };
            match key {
                Some(key) => {
                    let shift = if key.needs_shift { keys::SHIFT } else { 0 };
                    sends.push(futures::future::Either::Left(
                        session.send(&self.down_params(&key, shift)),
                    ));
                    sends.push(futures::future::Either::Left(
                        session.send(&self.up_params(&key, shift)),
                    ));
                }
                None => {
                    let mut buf = [0u8; 4];
                    let params = InsertTextParams::new(ch.encode_utf8(&mut buf).to_string());
                    sends.push(futures::future::Either::Right(session.send(&params)));
                }
            }
        }
        let all = async {
            // Both kinds answer `EmptyReturns`; the first failure is the result.
            for answer in futures::future::join_all(sends).await {
                answer?;
            }
            Ok(())
        };
        self.page.unless_dialog(all).await
    }

    /// Presses each of `keys`, then inserts `text` with one `Input.insertText` (one
    /// `beforeinput`/`input` pair, no key events): a long value typed key by key would cost the
    /// page tens of thousands of events and take seconds.
    async fn keys_then_insert(&self, keys: &[Key], text: &str) -> Result<()> {
        let session = &self.page.session;
        let mut sends = Vec::with_capacity(keys.len() * 2);
        for key in keys {
            sends.push(session.send(&self.down_params(key, 0)));
            sends.push(session.send(&self.up_params(key, 0)));
        }
        let insert = InsertTextParams::new(text.to_string());
        let all = async {
            for answer in futures::future::join_all(sends).await {
                answer?;
            }
            session.send(&insert).await?;
            Ok(())
        };
        self.page.unless_dialog(all).await
    }

    async fn mouse(
        &self,
        kind: MouseType,
        x: f64,
        y: f64,
        button: Option<MouseButton>,
        clicks: i64,
    ) -> Result<()> {
        let params = self.mouse_params(kind, x, y, button, clicks);
        self.page
            .unless_dialog(self.page.session.send(&params))
            .await?;
        Ok(())
    }

    /// The mouse event `kind` at `(x, y)`; moves the pointer and updates the held buttons.
    fn mouse_params(
        &self,
        kind: MouseType,
        x: f64,
        y: f64,
        button: Option<MouseButton>,
        clicks: i64,
    ) -> DispatchMouseEventParams {
        let (modifiers, buttons) = {
            let mut state = lock(&self.page.shared.input);
            state.x = x;
            state.y = y;
            match (&kind, button) {
                (MouseType::MousePressed, Some(b)) => state.buttons |= b.bit(),
                (MouseType::MouseReleased, Some(b)) => state.buttons &= !b.bit(),
                _ => {}
            }
            (state.modifiers, state.buttons)
        };
        let mut params = DispatchMouseEventParams::new(kind, x, y)
            .modifiers(modifiers)
            .buttons(buttons);
        if let Some(button) = button {
            params = params.button(button.cdp()).click_count(clicks);
        }
        params
    }

    /// Moves the pointer to `(x, y)`.
    pub(crate) async fn mouse_move(&self, x: f64, y: f64) -> Result<()> {
        self.mouse(MouseType::MouseMoved, x, y, None, 0).await
    }

    /// Presses `button` at `(x, y)` as the `click_count`th click.
    pub(crate) async fn mouse_down(
        &self,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: i64,
    ) -> Result<()> {
        self.mouse(MouseType::MousePressed, x, y, Some(button), click_count)
            .await
    }

    /// Releases `button` at `(x, y)`.
    pub(crate) async fn mouse_up(
        &self,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: i64,
    ) -> Result<()> {
        self.mouse(MouseType::MouseReleased, x, y, Some(button), click_count)
            .await
    }

    /// Moves to `(x, y)` and clicks `count` times (1 = click, 2 = double click).
    pub(crate) async fn click_at(
        &self,
        x: f64,
        y: f64,
        button: MouseButton,
        count: i64,
    ) -> Result<()> {
        // Every event is written at once and answered in order, as typed characters are: the
        // browser delivers one session's input in order, and the press flushes the move the
        // renderer would otherwise hold until the next animation frame (moves are
        // frame-aligned), so the page sees move, press, release without that wait.
        let session = &self.page.session;
        let count = count.max(1);
        let mut sends = Vec::with_capacity(1 + 2 * usize::try_from(count).unwrap_or(1));
        sends.push(session.send(&self.mouse_params(MouseType::MouseMoved, x, y, None, 0)));
        for n in 1..=count {
            let press = self.mouse_params(MouseType::MousePressed, x, y, Some(button), n);
            sends.push(session.send(&press));
            let release = self.mouse_params(MouseType::MouseReleased, x, y, Some(button), n);
            sends.push(session.send(&release));
        }
        let all = async {
            for answer in futures::future::join_all(sends).await {
                answer?;
            }
            Ok(())
        };
        self.page.unless_dialog(all).await
    }

    /// Scrolls the wheel by `(delta_x, delta_y)` at `(x, y)`.
    pub(crate) async fn wheel(&self, x: f64, y: f64, delta_x: f64, delta_y: f64) -> Result<()> {
        let modifiers = self.held();
        {
            let mut state = lock(&self.page.shared.input);
            state.x = x;
            state.y = y;
        }
        let params = DispatchMouseEventParams::new(MouseType::MouseWheel, x, y)
            .modifiers(modifiers)
            .delta_x(delta_x)
            .delta_y(delta_y);
        self.page
            .unless_dialog(self.page.session.send(&params))
            .await?;
        Ok(())
    }
}
