//! Snapshot text (docs/mcp.md#snapshots): the header, one line per record, the empty and truncation notes.
//!
//! Pure functions of [`Snapshot`] and [`Line`]; nothing here talks to the browser. The page's
//! `snapshot.render` is the reference rendering these mirror, line for line.

use std::fmt::Write as _;

use super::{Checked, Line, LineKind, Snapshot};

/// The line printed when a snapshot lists nothing.
pub(crate) const EMPTY: &str = "(no interactive elements detected)";

/// The final line of a snapshot that a budget cut short, without its closing parenthesis
/// (before which a snapshot the semantic budget cut says where the next page starts).
pub(crate) const TRUNCATED: &str = "\u{2026} (more elements not shown: snapshot limits reached";

/// The shadow-root marker (docs/mcp.md#snapshots); it has no ref.
pub(crate) const SHADOW_ROOT: &str = "#shadow-root (open)";

/// `s` cut to at most `n` characters: `n - 1` of them plus `…` when longer.
pub(crate) fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut res: String = s.chars().take(n.saturating_sub(1)).collect();
    res.push('\u{2026}');
    res
}

/// A JSON string literal, escaped as `JSON.stringify` does.
fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

impl Snapshot {
    /// The header line: `page: <title> — <url>` (title cut at 80, URL at 200 characters).
    pub fn header(&self) -> String {
        let title = if self.title.is_empty() {
            "(untitled)".to_string()
        } else {
            cut(&self.title, 80)
        };
        let url = if self.url.is_empty() {
            "(no url)".to_string()
        } else {
            cut(&self.url, 200)
        };
        format!("page: {title} \u{2014} {url}")
    }

    /// The contract's full text: header, lines, and the empty or truncation note.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let snapshot = page.snapshot(chromate::snapshot::SnapshotOptions::default()).await?;
    /// assert!(snapshot.render().starts_with("page: "));
    /// # Ok(()) }
    /// ```
    pub fn render(&self) -> String {
        let mut res = self.header();
        for line in &self.lines {
            res.push('\n');
            line.write_to(&mut res, true);
        }
        if self.lines.is_empty() {
            res.push('\n');
            res.push_str(EMPTY);
        }
        if self.truncated {
            res.push('\n');
            res.push_str(TRUNCATED);
            if let Some(next) = self.next_after {
                let _ = write!(res, "; continue with after={next}");
            }
            res.push(')');
        }
        res
    }
}

impl Line {
    /// The line without its `eN: ` prefix (indentation kept): what diffs compare (docs/mcp.md#observations).
    pub fn render_without_ref(&self) -> String {
        let mut res = String::new();
        self.write_to(&mut res, false);
        res
    }

    fn write_to(&self, out: &mut String, with_ref: bool) {
        for _ in 0..self.depth {
            out.push_str("  ");
        }
        if self.kind == LineKind::ShadowRoot {
            out.push_str(SHADOW_ROOT);
            return;
        }
        if let (true, Some(element_ref)) = (with_ref, self.element_ref) {
            let _ = write!(out, "{element_ref}: ");
        }
        out.push_str(&self.role);
        if self.container {
            out.push_str(" (container)");
        }
        if let Some(name) = self.name.as_deref().filter(|n| !n.is_empty()) {
            out.push(' ');
            out.push_str(&json(name));
        }
        if let Some(level) = self.level.filter(|l| *l > 0) {
            let _ = write!(out, " [level={level}]");
        }
        if let Some(href) = &self.href {
            let _ = write!(out, " href={}", json(href));
        }
        if let Some(value) = &self.value {
            let _ = write!(out, " value={}", json(value));
        }
        if let Some(options) = &self.options {
            let _ = write!(out, " options={options}");
        }
        if let Some(hint) = self.hint.as_deref().filter(|h| !h.is_empty()) {
            out.push(' ');
            out.push_str(hint);
        }
        if self.disabled {
            out.push_str(" (disabled)");
        }
        match self.checked {
            Some(Checked::Mixed) => out.push_str(" (checked=mixed)"),
            Some(Checked::True) => out.push_str(" (checked)"),
            None => {}
        }
        if self.selected {
            out.push_str(" (selected)");
        }
        for (flag, value) in [
            ("expanded", &self.expanded),
            ("pressed", &self.pressed),
            ("current", &self.current),
        ] {
            if let Some(value) = value.as_deref().filter(|v| !v.is_empty()) {
                let _ = write!(out, " ({flag}={value})");
            }
        }
    }
}

impl std::fmt::Display for Line {
    /// The snapshot line (docs/mcp.md#snapshots), with its ref and indentation.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut res = String::new();
        self.write_to(&mut res, true);
        f.write_str(&res)
    }
}
