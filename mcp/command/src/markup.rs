//! Text made safe for the XML and HTML the reports write (the audit's HTML, JUnit and SARIF
//! neighbours, the flows' HTML and JUnit reports): one escaper for all of them.
//!
//! Owns the five markup characters and the characters XML 1.0 has no place for. It does not
//! build elements or attributes; each report writes its own.

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
