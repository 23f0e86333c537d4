//! The text report (the default): a summary line, one ranked line per finding, the metrics.
//! Bounded so a typical page's report stays under 4 KB: lines are cut, and past
//! [`MAX_LINES`] findings it says how many more the JSON has.

use super::{summary, Report};
use crate::audit::findings::{cut, short_url, AuditResult};

/// Findings listed at most.
const MAX_LINES: usize = 25;
/// Characters a finding's line keeps.
const MAX_LINE: usize = 150;

pub(super) struct Text;

impl Report for Text {
    fn render(&self, result: &AuditResult) -> String {
        let mut out = format!(
            "audit {} {} in {:.1} s: {} page{}, {} finding{} ({})\n",
            result.url,
            result.status.as_str(),
            result.duration_ms as f64 / 1000.0,
            result.metrics.pages_audited,
            if result.metrics.pages_audited == 1 {
                ""
            } else {
                "s"
            },
            result.findings.len(),
            if result.findings.len() == 1 { "" } else { "s" },
            summary(result),
        );
        for finding in result.findings.iter().take(MAX_LINES) {
            let mut line = format!(
                "{:<8} {:<13} {}  {}",
                finding.severity.as_str(),
                finding.category.as_str(),
                finding.title,
                short_url(&finding.page),
            );
            if let Some(selector) = &finding.selector_hint {
                line.push_str("  ");
                line.push_str(selector);
            }
            out.push_str(&cut(&line, MAX_LINE));
            out.push('\n');
        }
        if result.findings.len() > MAX_LINES {
            out.push_str(&format!(
                "… {} more (--format json lists them all)\n",
                result.findings.len() - MAX_LINES
            ));
        }
        for (index, set_aside) in result.suppressed.iter().enumerate() {
            if index == MAX_LINES {
                out.push_str(&format!(
                    "… {} more suppressed (--format json lists them all)\n",
                    result.suppressed.len() - MAX_LINES
                ));
                break;
            }
            let finding = &set_aside.finding;
            let line = format!(
                "suppressed ({}) {}  {}  {}: {}",
                set_aside.suppressed_by,
                finding.rule,
                short_url(&finding.page),
                finding.title,
                set_aside.reason,
            );
            out.push_str(&cut(&line, MAX_LINE));
            out.push('\n');
        }
        for warning in &result.warnings {
            out.push_str(&format!("warning: {warning}\n"));
        }
        let metrics = &result.metrics;
        let mut figures = Vec::new();
        if let Some(lcp) = metrics.lcp_ms {
            figures.push(format!("LCP {lcp} ms"));
        }
        if let Some(cls) = metrics.cls {
            figures.push(format!("CLS {cls:.3}"));
        }
        if let Some(tbt) = metrics.tbt_ms {
            figures.push(format!("TBT {tbt} ms"));
        }
        figures.push(format!("{} requests", metrics.requests));
        figures.push(format!("{} KiB", metrics.bytes / 1024));
        figures.push(format!("{} console errors", metrics.console_errors));
        figures.push(format!("{} http errors", metrics.http_errors));
        figures.push(format!("{} broken links", metrics.broken_links));
        figures.push(format!("{} a11y violations", metrics.a11y_violations));
        out.push_str(&format!("metrics: {}\n", figures.join(", ")));
        let entry = result.pages.first().map(|page| page.url.as_str());
        for shot in &result.screenshots {
            // Another page's screenshot names its page.
            let of = match shot.page.as_deref() {
                Some(page) if Some(page) != entry => format!(" of {}", short_url(page)),
                _ => String::new(),
            };
            out.push_str(&format!("screenshot {}{of}: {}\n", shot.name, shot.path));
        }
        out
    }
}
