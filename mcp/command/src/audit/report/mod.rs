//! The audit's reports: one writer per format behind [`Report`] (text, JSON, Markdown, HTML,
//! SARIF 2.1.0, JUnit XML), each a pure function of an [`AuditResult`] (and, for HTML, the
//! screenshot files' bytes).
//!
//! Owns the formats (`text.rs`, `markdown.rs`, `html.rs`, `sarif.rs`, `junit.rs`; JSON is the
//! result itself) and the escaping they need. Does not own where a report goes (the front
//! end writes stdout, `--output` and each `--format NAME=PATH`) or what a finding says
//! (`findings.rs`).

mod html;
mod junit;
mod markdown;
mod sarif;
mod text;

use super::findings::{AuditResult, Severity};

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Html,
    Sarif,
    Junit,
}

impl Format {
    pub const NAMES: &'static [&'static str] = &["text", "json", "md", "html", "sarif", "junit"];

    pub fn parse(name: &str) -> Option<Format> {
        Some(match name {
            "text" => Format::Text,
            "json" => Format::Json,
            "md" | "markdown" => Format::Markdown,
            "html" => Format::Html,
            "sarif" => Format::Sarif,
            "junit" => Format::Junit,
            _ => return None,
        })
    }

    /// The name [`Format::parse`] reads (`md` for Markdown).
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Sarif => "sarif",
            Format::Junit => "junit",
        }
    }
}

/// One report writer.
pub trait Report {
    /// The whole report.
    fn render(&self, result: &AuditResult) -> String;
}

/// The screenshot files' bytes, by path, for the HTML report.
pub type ShotBytes = Vec<(String, Vec<u8>)>;

/// What a report reads besides the result.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// The screenshot files' bytes, for the HTML report.
    pub shots: &'a [(String, Vec<u8>)],
    /// `--fail-on`: the JUnit report fails a test case at this severity or worse only (without
    /// it, at any severity above info), as the exit status does.
    pub fail_on: Option<Severity>,
}

/// `result` in `format`.
pub fn render(format: Format, result: &AuditResult, options: Options<'_>) -> String {
    match format {
        Format::Text => text::Text.render(result),
        Format::Json => json(result),
        Format::Markdown => markdown::Markdown.render(result),
        Format::Html => html::Html {
            shots: options.shots,
        }
        .render(result),
        Format::Sarif => sarif::Sarif.render(result),
        Format::Junit => junit::Junit {
            fail_on: options.fail_on.unwrap_or(Severity::Low),
        }
        .render(result),
    }
}

/// The result as one line of JSON.
fn json(result: &AuditResult) -> String {
    let mut text = serde_json::to_string(result).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

/// `1 critical, 2 high` (only severities that occur), or `none`.
pub fn summary(result: &AuditResult) -> String {
    let parts: Vec<String> = super::findings::counts(&result.findings)
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(severity, n)| format!("{n} {}", severity.as_str()))
        .collect();
    if parts.is_empty() {
        "none".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Whether any finding is at `threshold` or worse.
pub fn fails(result: &AuditResult, threshold: Severity) -> bool {
    result
        .findings
        .iter()
        .any(|finding| finding.severity >= threshold)
}

#[cfg(test)]
mod tests;
