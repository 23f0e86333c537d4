//! The Markdown report: a heading with the summary, the findings as a table (worst first), the
//! metrics as a list. For pull-request comments and job summaries.

use super::{summary, Report};
use crate::audit::findings::{short_url, AuditResult};

pub(super) struct Markdown;

/// A table cell: no line breaks, `|` escaped.
fn cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

/// Text outside a code span: `&`, `<` and `>` as entities, since Markdown passes HTML through
/// and GitHub's renderer drops what it takes for a tag (`<html>` in a finding's title would
/// vanish). Inside backticks entities are shown as typed, so code spans are left alone.
fn prose(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Report for Markdown {
    fn render(&self, result: &AuditResult) -> String {
        let mut out = format!(
            "# Audit of {}\n\n**{}** in {:.1} s — {} pages, {} findings ({})\n\n",
            prose(&result.url),
            result.status.as_str(),
            result.duration_ms as f64 / 1000.0,
            result.metrics.pages_audited,
            result.findings.len(),
            summary(result)
        );
        if !result.findings.is_empty() {
            out.push_str(
                "| severity | category | finding | page | selector |\n|---|---|---|---|---|\n",
            );
            for finding in &result.findings {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    finding.severity.as_str(),
                    finding.category.as_str(),
                    cell(&prose(&finding.title)),
                    cell(&prose(&short_url(&finding.page))),
                    finding
                        .selector_hint
                        .as_deref()
                        .map(|selector| format!("`{}`", cell(selector).replace('`', "'")))
                        .unwrap_or_default(),
                ));
            }
            out.push('\n');
        }
        if !result.suppressed.is_empty() {
            out.push_str(&format!(
                "## Suppressed ({})\n\n| by | rule | finding | page | selector | reason |\n|---|---|---|---|---|---|\n",
                result.suppressed.len()
            ));
            for set_aside in &result.suppressed {
                let finding = &set_aside.finding;
                out.push_str(&format!(
                    "| {} | `{}` | {} | {} | {} | {} |\n",
                    set_aside.suppressed_by,
                    cell(&finding.rule),
                    cell(&prose(&finding.title)),
                    cell(&prose(&short_url(&finding.page))),
                    finding
                        .selector_hint
                        .as_deref()
                        .map(|selector| format!("`{}`", cell(selector).replace('`', "'")))
                        .unwrap_or_default(),
                    cell(&prose(&set_aside.reason)),
                ));
            }
            out.push('\n');
        }
        for warning in &result.warnings {
            out.push_str(&format!("> **warning:** {}\n\n", cell(&prose(warning))));
        }
        let m = &result.metrics;
        out.push_str("## Metrics\n\n");
        if let Some(lcp) = m.lcp_ms {
            out.push_str(&format!("- LCP: {lcp} ms\n"));
        }
        if let Some(cls) = m.cls {
            out.push_str(&format!("- CLS: {cls:.3}\n"));
        }
        if let Some(tbt) = m.tbt_ms {
            out.push_str(&format!("- TBT: {tbt} ms\n"));
        }
        out.push_str(&format!(
            "- requests: {}, {} KiB\n- console errors: {}\n- http errors: {}\n- broken links: {}\n- a11y violations: {}\n",
            m.requests,
            m.bytes / 1024,
            m.console_errors,
            m.http_errors,
            m.broken_links,
            m.a11y_violations
        ));
        out
    }
}
