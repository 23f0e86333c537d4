//! The key table (US layout; docs/mcp.md#keys) and the chord grammar: one character, or a name matched
//! case-insensitively ignoring `_`, `-` and spaces, joined into chords with `+` (`++` ends in
//! `+`). Pure data and parsing; sending the events is `input/mod.rs`.

use crate::error::{Error, Result};

/// CDP modifier bit of Alt.
pub(crate) const ALT: i64 = 1;
/// CDP modifier bit of Control.
pub(crate) const CONTROL: i64 = 2;
/// CDP modifier bit of Meta.
pub(crate) const META: i64 = 4;
/// CDP modifier bit of Shift.
pub(crate) const SHIFT: i64 = 8;

/// One key of the US layout, as `Input.dispatchKeyEvent` wants it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// `KeyboardEvent.key` without Shift (`a`, `Enter`, `Shift`).
    pub key: String,
    /// `KeyboardEvent.key` with Shift, when it differs (`A`, `!`).
    pub shifted: Option<String>,
    /// `KeyboardEvent.code` (`KeyA`, `Enter`, `ShiftLeft`).
    pub code: String,
    /// Windows virtual key code (`65`).
    pub key_code: i64,
    /// Whether pressing it types its `key` (printable keys, Enter as `\r`).
    pub text: Option<String>,
    /// `KeyboardEvent.location` (1 left modifier, 3 numpad).
    pub location: i64,
    /// Whether typing the requested character needs Shift (`A`, `!`).
    pub needs_shift: bool,
}

/// A modifier key held during a click ([`crate::actions::ClickOptions::modifiers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modifier {
    /// Alt (Option).
    Alt,
    /// Control.
    Control,
    /// Meta (Command).
    Meta,
    /// Shift.
    Shift,
}

impl Modifier {
    /// The key name (docs/mcp.md#keys) of a modifier (any case; `Ctrl`, `Option`, `Cmd`, `ControlOrMeta` too);
    /// anything else is INVALID_ARGUMENT naming it, with `verb` first.
    pub fn parse(verb: &str, name: &str) -> Result<Modifier> {
        let key = parse_key(verb, name)?;
        match key.modifier_bit() {
            ALT => Ok(Modifier::Alt),
            CONTROL => Ok(Modifier::Control),
            META => Ok(Modifier::Meta),
            SHIFT => Ok(Modifier::Shift),
            _ => Err(Error::invalid_argument_of(
                "modifiers",
                format!("{verb}: {name:?} is not a modifier (Shift, Control, Alt, Meta)"),
            )
            .with_allowed(["Shift", "Control", "Alt", "Meta"])),
        }
    }

    /// The modifier's name as `KeyboardEvent.key` spells it (`Control`).
    pub fn as_str(self) -> &'static str {
        match self {
            Modifier::Alt => "Alt",
            Modifier::Control => "Control",
            Modifier::Meta => "Meta",
            Modifier::Shift => "Shift",
        }
    }

    /// The (left) key of the modifier.
    pub(crate) fn key(self) -> Key {
        let (key, code, vk) = match self {
            Modifier::Alt => ("Alt", "AltLeft", 18),
            Modifier::Control => ("Control", "ControlLeft", 17),
            Modifier::Meta => ("Meta", "MetaLeft", 91),
            Modifier::Shift => ("Shift", "ShiftLeft", 16),
        };
        let mut k = Key::new(key, code, vk);
        k.location = 1;
        k
    }
}

/// A parsed chord: modifiers pressed in order, then the final key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyChord {
    /// Modifiers, in the order they go down.
    pub modifiers: Vec<Key>,
    /// The key pressed while they are held.
    pub key: Key,
    /// Whether the final key is a symbol typed with Shift on a US keyboard (`+`, `!`): it is
    /// pressed with Shift added, as typing it is, so the page sees that symbol and not the
    /// key's unshifted one (`Control++` is `+` with Control, never `=`).
    pub shifted: bool,
}

impl KeyChord {
    /// Whether the final key is Enter (the Enter navigation fence applies, docs/mcp.md#navigation-waits).
    pub fn is_enter(&self) -> bool {
        self.key.key == "Enter"
    }

    /// The CDP modifier bits the final key goes down with, beyond the chord's modifiers.
    pub(crate) fn key_modifiers(&self) -> i64 {
        if self.shifted {
            SHIFT
        } else {
            0
        }
    }
}

impl Key {
    fn new(key: &str, code: &str, key_code: i64) -> Self {
        Key {
            key: key.into(),
            shifted: None,
            code: code.into(),
            key_code,
            text: None,
            location: 0,
            needs_shift: false,
        }
    }

    fn typing(mut self, text: &str) -> Self {
        self.text = Some(text.into());
        self
    }

    /// The CDP modifier bit this key holds, 0 for non-modifiers.
    pub(crate) fn modifier_bit(&self) -> i64 {
        match self.key.as_str() {
            "Alt" => ALT,
            "Control" => CONTROL,
            "Meta" => META,
            "Shift" => SHIFT,
            _ => 0,
        }
    }

    /// Whether this is a numpad key.
    pub(crate) fn is_keypad(&self) -> bool {
        self.location == 3
    }

    /// `key` as seen with `modifiers` held (Shift upper-cases letters and picks symbols).
    pub(crate) fn key_with(&self, modifiers: i64) -> String {
        match (&self.shifted, modifiers & SHIFT != 0) {
            (Some(shifted), true) => shifted.clone(),
            _ => self.key.clone(),
        }
    }

    /// The text this key types with `modifiers` held, if any (none while Control, Alt or Meta
    /// is down).
    pub(crate) fn text_with(&self, modifiers: i64) -> Option<String> {
        if modifiers & (CONTROL | ALT | META) != 0 {
            return None;
        }
        let text = self.text.as_ref()?;
        if self.shifted.is_some() {
            Some(self.key_with(modifiers))
        } else {
            Some(text.clone())
        }
    }

    /// The key that types `ch` on a US keyboard, or `None` (then it goes in as text input).
    pub fn for_char(ch: char) -> Option<Key> {
        const PUNCT: &[(char, char, &str, i64)] = &[
            ('`', '~', "Backquote", 192),
            ('-', '_', "Minus", 189),
            ('=', '+', "Equal", 187),
            ('[', '{', "BracketLeft", 219),
            (']', '}', "BracketRight", 221),
            ('\\', '|', "Backslash", 220),
            (';', ':', "Semicolon", 186),
            ('\'', '"', "Quote", 222),
            (',', '<', "Comma", 188),
            ('.', '>', "Period", 190),
            ('/', '?', "Slash", 191),
        ];
        const DIGIT_SHIFTED: &str = ")!@#$%^&*(";
        let base = |key: char, shifted: char, code: &str, vk: i64, needs_shift: bool| {
            let mut k = Key::new(&key.to_string(), code, vk).typing(&key.to_string());
            k.shifted = Some(shifted.to_string());
            k.needs_shift = needs_shift;
            k
        };
        if ch.is_ascii_lowercase() {
            let upper = ch.to_ascii_uppercase();
            return Some(base(ch, upper, &format!("Key{upper}"), upper as i64, false));
        }
        if ch.is_ascii_uppercase() {
            let lower = ch.to_ascii_lowercase();
            return Some(base(lower, ch, &format!("Key{ch}"), ch as i64, true));
        }
        if ch.is_ascii_digit() {
            let n = ch as usize - '0' as usize;
            let shifted = DIGIT_SHIFTED.as_bytes()[n] as char;
            return Some(base(ch, shifted, &format!("Digit{ch}"), ch as i64, false));
        }
        if let Some(n) = DIGIT_SHIFTED.find(ch) {
            let digit = (b'0' + n as u8) as char;
            return Some(base(
                digit,
                ch,
                &format!("Digit{digit}"),
                digit as i64,
                true,
            ));
        }
        if ch == ' ' {
            return Some(Key::new(" ", "Space", 32).typing(" "));
        }
        for &(key, shifted, code, vk) in PUNCT {
            if ch == key {
                return Some(base(key, shifted, code, vk, false));
            }
            if ch == shifted {
                return Some(base(key, shifted, code, vk, true));
            }
        }
        None
    }
}

/// Lower-cases and drops `_`, `-` and spaces: the form names are compared in.
pub(crate) fn normalize_name(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Every accepted key name, for error messages.
pub(crate) const NAMES: &str = "Enter, Return, Tab, Backspace, Delete, Escape, Esc, Space, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, F1-F12, Numpad0-Numpad9, Shift, Control, Ctrl, Alt, Option, Meta, Command, Cmd, ControlOrMeta";

/// The key for a key name (docs/mcp.md#keys; any case, `_`/`-`/spaces ignored), or `None`.
pub(crate) fn named(name: &str) -> Option<Key> {
    let n = normalize_name(name);
    let modifier = |key: &str, code: &str, vk: i64| {
        let mut k = Key::new(key, code, vk);
        k.location = 1;
        k
    };
    let key = match n.as_str() {
        "enter" | "return" => Key::new("Enter", "Enter", 13).typing("\r"),
        "tab" => Key::new("Tab", "Tab", 9),
        "backspace" => Key::new("Backspace", "Backspace", 8),
        "delete" => Key::new("Delete", "Delete", 46),
        "escape" | "esc" => Key::new("Escape", "Escape", 27),
        "space" => Key::new(" ", "Space", 32).typing(" "),
        "arrowup" | "up" => Key::new("ArrowUp", "ArrowUp", 38),
        "arrowdown" | "down" => Key::new("ArrowDown", "ArrowDown", 40),
        "arrowleft" | "left" => Key::new("ArrowLeft", "ArrowLeft", 37),
        "arrowright" | "right" => Key::new("ArrowRight", "ArrowRight", 39),
        "home" => Key::new("Home", "Home", 36),
        "end" => Key::new("End", "End", 35),
        "pageup" => Key::new("PageUp", "PageUp", 33),
        "pagedown" => Key::new("PageDown", "PageDown", 34),
        "insert" => Key::new("Insert", "Insert", 45),
        "shift" => modifier("Shift", "ShiftLeft", 16),
        "control" | "ctrl" => modifier("Control", "ControlLeft", 17),
        "alt" | "option" => modifier("Alt", "AltLeft", 18),
        "meta" | "command" | "cmd" => modifier("Meta", "MetaLeft", 91),
        "controlormeta" if cfg!(target_os = "macos") => modifier("Meta", "MetaLeft", 91),
        "controlormeta" => modifier("Control", "ControlLeft", 17),
        other => {
            if let Some(rest) = other.strip_prefix("numpad") {
                let d: i64 = rest
                    .parse()
                    .ok()
                    .filter(|d| (0..=9).contains(d) && rest.len() == 1)?;
                let mut k = Key::new(rest, &format!("Numpad{d}"), 96 + d).typing(rest);
                k.location = 3;
                k
            } else if let Some(rest) = other.strip_prefix('f') {
                let f: i64 = rest
                    .parse()
                    .ok()
                    .filter(|f| (1..=12).contains(f) && !rest.starts_with('0'))?;
                let name = format!("F{f}");
                Key::new(&name, &name, 111 + f)
            } else {
                return None;
            }
        }
    };
    Some(key)
}

/// One key: a single character or a name.
pub(crate) fn parse_key(verb: &str, text: &str) -> Result<Key> {
    let mut chars = text.chars();
    if let (Some(ch), None) = (chars.next(), chars.clone().next()) {
        // A character without a US key still goes down and up, typing itself.
        return Ok(Key::for_char(ch).unwrap_or_else(|| Key::new(text, "", 0).typing(text)));
    }
    named(text).ok_or_else(|| {
        Error::invalid_argument_of(
            "key",
            format!("{verb}: unknown key {text:?}; use one character or one of {NAMES}"),
        )
        .with_allowed(NAMES.split(", "))
    })
}

/// A chord (docs/mcp.md#keys: `Control+A`, `Shift+Tab`, `Control++`); a lone key is a chord without
/// modifiers.
pub(crate) fn parse_chord(verb: &str, text: &str) -> Result<KeyChord> {
    let (head, last) = if text == "+" {
        (None, "+")
    } else if let Some(head) = text.strip_suffix("++") {
        (Some(head), "+")
    } else if let Some((head, last)) = text.rsplit_once('+') {
        (Some(head), last)
    } else {
        (None, text)
    };
    let empty = || {
        Error::invalid_argument_of(
            "key",
            format!("{verb}: {text:?} has an empty part; write chords like Control+A or Shift+Tab"),
        )
    };
    if last.is_empty() {
        return Err(empty());
    }
    let mut modifiers = Vec::new();
    for part in head.into_iter().flat_map(|head| head.split('+')) {
        if part.is_empty() {
            return Err(empty());
        }
        let key = parse_key(verb, part)?;
        if key.modifier_bit() == 0 {
            return Err(Error::invalid_argument_of("key", format!(
                    "{verb}: {part:?} in {text:?} is not a modifier; all keys but the last must be Shift, Control, Alt, Meta or ControlOrMeta"
                )));
        }
        modifiers.push(key);
    }
    let key = parse_key(verb, last)?;
    // A letter's case does not matter in a chord (`Control+A` is Control and `a`; Shift
    // upper-cases it), but a symbol is the symbol named: `+` is Shift and `=`.
    let shifted = key.needs_shift && !last.chars().all(|c| c.is_ascii_alphabetic());
    Ok(KeyChord {
        modifiers,
        key,
        shifted,
    })
}

#[cfg(test)]
mod tests;
