//! Tolerant JSON text: lone UTF-16 surrogate escapes become U+FFFD before parsing.
//!
//! Page text is UTF-16 and may hold a lone surrogate (`document.title = "a\ud800b"`). Chrome
//! writes it into CDP JSON as the escape `\ud800`, which is valid JSON syntax but names no
//! Unicode scalar value, so serde_json refuses the whole message: an answer, an event, a
//! console entry would be lost for one character of page text. [`replace_lone_surrogates`]
//! rewrites each lone surrogate escape to `\ufffd` in place (both are six bytes), leaving every
//! valid pair and every other byte as it is, and allocates only when it finds one.
//!
//! Used on every frame the transport reads and on JSON text that page scripts build with
//! `JSON.stringify` (which escapes lone surrogates the same way).

use std::borrow::Cow;

/// The replacement escape, as long as any `\uXXXX` escape.
const REPLACEMENT: &[u8; 6] = b"\\ufffd";

/// `text` with every lone surrogate escape (`\ud800`–`\udfff` not part of a high-low pair)
/// replaced by `\ufffd`. Bytes outside escapes are never touched, so text that is not JSON
/// comes back unchanged.
pub(crate) fn replace_lone_surrogates(text: &[u8]) -> Cow<'_, [u8]> {
    // The fast path: no `\u` followed by `d`/`D` at all.
    if !text
        .windows(3)
        .any(|w| w[0] == b'\\' && w[1] == b'u' && (w[2] | 0x20) == b'd')
    {
        return Cow::Borrowed(text);
    }
    let mut out: Option<Vec<u8>> = None;
    let mut idx = 0;
    while idx < text.len() {
        if text[idx] != b'\\' {
            idx += 1;
            continue;
        }
        // A backslash starts an escape; `\\` is one escape, so its second byte is skipped.
        let Some(unit) = unit_at(text, idx) else {
            idx += 2;
            continue;
        };
        match unit {
            0xD800..=0xDBFF => {
                if matches!(unit_at(text, idx + 6), Some(0xDC00..=0xDFFF)) {
                    idx += 12;
                    continue;
                }
            }
            0xDC00..=0xDFFF => {}
            _ => {
                idx += 6;
                continue;
            }
        }
        let buffer = out.get_or_insert_with(|| text.to_vec());
        buffer[idx..idx + 6].copy_from_slice(REPLACEMENT);
        idx += 6;
    }
    match out {
        Some(buffer) => Cow::Owned(buffer),
        None => Cow::Borrowed(text),
    }
}

/// The code unit of a `\uXXXX` escape starting at `idx`, if one does.
fn unit_at(text: &[u8], idx: usize) -> Option<u16> {
    let escape = text.get(idx..idx + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    u16::from_str_radix(hex, 16).ok()
}

/// [`replace_lone_surrogates`] for a `str` (the result is still valid UTF-8: only ASCII bytes
/// change).
pub(crate) fn replace_lone_surrogates_str(text: &str) -> Cow<'_, str> {
    match replace_lone_surrogates(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Cow::Owned(text),
            // Unreachable (only ASCII bytes were rewritten); the original is the safe answer.
            Err(_) => Cow::Borrowed(text),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(text: &str) -> String {
        String::from_utf8_lossy(&replace_lone_surrogates(text.as_bytes())).into_owned()
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        assert_eq!(fixed(r#"{"t":"a\ud800b"}"#), r#"{"t":"a\ufffdb"}"#);
        assert_eq!(fixed(r#"{"t":"\uDC00"}"#), r#"{"t":"\ufffd"}"#);
        // A high surrogate followed by another high one: both are lone.
        assert_eq!(fixed(r#""\ud800\ud801""#), r#""\ufffd\ufffd""#);
        // At the very end of the text.
        assert_eq!(fixed(r#""x\ud83d"#), r#""x\ufffd"#);
        let value: serde_json::Value =
            serde_json::from_slice(&replace_lone_surrogates(br#"{"t":"a\ud800b"}"#))
                .unwrap_or_default();
        assert_eq!(value["t"], "a\u{fffd}b");
    }

    #[test]
    fn pairs_other_escapes_and_plain_text_are_left_alone() {
        for text in [
            r#"{"t":"\ud83d\ude00"}"#,
            r#"{"t":"\\ud800"}"#,
            r#"{"t":"\u00e9\n\"\\"}"#,
            r#"{"t":"d800 \u0064800"}"#,
            "no escapes at all",
            r"\u",
            r"\ud8",
        ] {
            assert!(
                matches!(replace_lone_surrogates(text.as_bytes()), Cow::Borrowed(_)),
                "{text}"
            );
        }
        assert_eq!(replace_lone_surrogates_str(r#""é\udfff""#), r#""é\ufffd""#);
    }
}
