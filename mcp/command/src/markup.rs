//! Text made safe for the XML and HTML the reports write (the audit's HTML, JUnit and SARIF
//! neighbours, the flows' HTML and JUnit reports): one escaper for all of them.
//!
//! Owns the five markup characters and the characters XML 1.0 has no place for, and JSON
//! shown as readable lines ([`readable`]). It does not build elements or attributes; each
//! report writes its own.

use serde_json::Value;

/// `text` safe inside XML and HTML element content and (double- or single-quoted) attribute
/// values: `&`, `<`, `>`, `"` and `'` as `&amp;`, `&lt;`, `&gt;`, `&quot;` and `&#39;` (the
/// numeric form: HTML 4 has no `&apos;`); the characters XML 1.0 forbids — the C0 controls but
/// tab, line feed and carriage return, and U+FFFE, U+FFFF — replaced by U+FFFD, so a report
/// stays well-formed and still shows that something was there.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A JSON value as lines a person reads (an audit finding's evidence, a failed flow step's
/// detail): `key: value`, nested values indented under their key, list items after `- `; no
/// braces, quotes or escapes (escape the result for markup).
pub fn readable(evidence: &Value) -> String {
    let mut out = String::new();
    write_value(evidence, 0, &mut out);
    if out.is_empty() {
        out.push_str("(none)");
    }
    out.trim_end().to_owned()
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("none".to_owned()),
        Value::Bool(flag) => Some(if *flag { "yes" } else { "no" }.to_owned()),
        Value::Number(number) => Some(number.to_string()),
        Value::String(text) => Some(text.clone()),
        Value::Array(items) if items.is_empty() => Some("none".to_owned()),
        Value::Object(map) if map.is_empty() => Some("none".to_owned()),
        _ => None,
    }
}

/// `text` after `lead`, its later lines indented by `indent`.
fn push_lines(out: &mut String, lead: &str, text: &str, indent: usize) {
    out.push_str(lead);
    for (n, line) in text.lines().enumerate() {
        if n > 0 {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(line);
    }
    out.push('\n');
}

fn write_value(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match scalar(value) {
                    Some(text) => push_lines(out, &format!("{pad}{key}: "), &text, indent + 2),
                    None => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        write_value(value, indent + 2, out);
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match scalar(item) {
                    Some(text) => push_lines(out, &format!("{pad}- "), &text, indent + 2),
                    None => {
                        // The item's first line after the dash, the rest under it.
                        let mut inner = String::new();
                        write_value(item, indent + 2, &mut inner);
                        let inner = inner.get(indent + 2..).unwrap_or(&inner);
                        out.push_str(&format!("{pad}- {inner}"));
                    }
                }
            }
        }
        other => {
            if let Some(text) = scalar(other) {
                push_lines(out, &pad, &text, indent);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn the_five_markup_characters_become_entities() {
        assert_eq!(
            escape(r#"a<b>&"c" 'd'"#),
            "a&lt;b&gt;&amp;&quot;c&quot; &#39;d&#39;"
        );
        assert_eq!(
            escape("&amp;"),
            "&amp;amp;",
            "already escaped text is escaped again"
        );
    }

    #[test]
    fn characters_xml_forbids_are_replaced_and_whitespace_is_kept() {
        assert_eq!(
            escape("a\u{0}b\u{1}c\u{1b}d\u{1f}e"),
            "a\u{fffd}b\u{fffd}c\u{fffd}d\u{fffd}e"
        );
        assert_eq!(escape("\u{fffe}\u{ffff}"), "\u{fffd}\u{fffd}");
        assert_eq!(escape("tab\tlf\ncr\r"), "tab\tlf\ncr\r");
    }

    #[test]
    fn other_text_is_unchanged() {
        for text in [
            "",
            "plain",
            "naïve — ✓ 日本 🦀",
            "\u{7f}\u{85}\u{a0}",
            "\u{fffd}",
        ] {
            assert_eq!(escape(text), text);
        }
    }
}
