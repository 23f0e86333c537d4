//! The JUnit XML report, for CI test views: one `<testsuite>` per audited page and one
//! `<testcase>` per rule with findings on it, named by the rule's id (`a11y.image-alt`) so that
//! a CI system's history follows it from run to run (a measured value never goes into a name);
//! the case fails when its worst finding is at the run's `--fail-on` severity or worse (without
//! it, above info), and lists every finding of the rule on the page. A page with no findings
//! has one passing case.

use super::Report;
use crate::audit::findings::{AuditResult, Finding, Severity};
use crate::markup::escape;

pub(super) struct Junit {
    /// The severity at which a case fails.
    pub(super) fail_on: Severity,
}

/// One finding as the lines of a case's body.
fn describe(finding: &Finding) -> String {
    format!(
        "{} [{}]: {}\nselector: {}\nevidence: {}",
        finding.severity.as_str(),
        finding.id,
        finding.title,
        finding.selector_hint.as_deref().unwrap_or("-"),
        finding.evidence
    )
}

impl Report for Junit {
    fn render(&self, result: &AuditResult) -> String {
        let mut suites = String::new();
        let mut pages: Vec<String> = result.pages.iter().map(|page| page.url.clone()).collect();
        for finding in &result.findings {
            if !pages.contains(&finding.page) {
                pages.push(finding.page.clone());
            }
        }
        let mut total = 0;
        let mut failures = 0;
        for page in &pages {
            // The rules with findings on this page, in the report's (ranked) order.
            let mut rules: Vec<&str> = Vec::new();
            for finding in result.findings.iter().filter(|f| f.page == *page) {
                if !rules.contains(&finding.rule.as_str()) {
                    rules.push(&finding.rule);
                }
            }
            let mut cases = String::new();
            let mut failing = 0;
            for rule in &rules {
                let found: Vec<&Finding> = result
                    .findings
                    .iter()
                    .filter(|f| f.page == *page && f.rule == *rule)
                    .collect();
                let Some(worst) = found.iter().max_by_key(|f| f.severity) else {
                    continue;
                };
                let body: Vec<String> = found.iter().map(|f| describe(f)).collect();
                let body = escape(&body.join("\n\n"));
                let verdict = if worst.severity >= self.fail_on {
                    failing += 1;
                    format!(
                        "<failure type=\"{}\" message=\"{}\">{body}</failure>",
                        worst.severity.as_str(),
                        escape(&worst.title),
                    )
                } else {
                    format!("<system-out>{body}</system-out>")
                };
                cases.push_str(&format!(
                    "    <testcase classname=\"chromate.audit.{}\" name=\"{}\">{verdict}</testcase>\n",
                    worst.category.as_str(),
                    escape(rule),
                ));
            }
            if rules.is_empty() {
                cases.push_str(
                    "    <testcase classname=\"chromate.audit\" name=\"no findings\"/>\n",
                );
            }
            let tests = rules.len().max(1);
            total += tests;
            failures += failing;
            suites.push_str(&format!(
                "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failing}\" errors=\"0\" skipped=\"0\">\n{cases}  </testsuite>\n",
                escape(page),
            ));
        }
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"chromate audit {}\" tests=\"{total}\" failures=\"{failures}\" time=\"{:.3}\">\n{suites}</testsuites>\n",
            escape(&result.url),
            result.duration_ms as f64 / 1000.0,
        )
    }
}
