//! The JUnit XML report, for CI test views: one `<testsuite>` per audited page and one
//! `<testcase>` per rule with findings on it, named by the rule's id (`a11y.image-alt`) so that
//! a CI system's history follows it from run to run (a measured value never goes into a name);
//! the case fails when its worst finding is at the run's `--fail-on` severity or worse (without
//! it, above info), and lists every finding of the rule on the page. A page with no findings
//! has one passing case. A rule whose every finding on a page is suppressed (ignore file,
//! baseline) is a skipped case with the reason; suppressed findings of a rule that also has
//! others are listed in its case's body.

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
        let set_aside = result.suppressed.iter().map(|entry| &entry.finding);
        for finding in result.findings.iter().chain(set_aside) {
            if !pages.contains(&finding.page) {
                pages.push(finding.page.clone());
            }
        }
        let mut total = 0;
        let mut failures = 0;
        let mut skips = 0;
        for page in &pages {
            // The rules with findings on this page, in the report's (ranked) order.
            let mut rules: Vec<&str> = Vec::new();
            for finding in result.findings.iter().filter(|f| f.page == *page) {
                if !rules.contains(&finding.rule.as_str()) {
                    rules.push(&finding.rule);
                }
            }
            // Rules whose every finding here is suppressed: a skipped case with the reasons.
            let mut skipped_rules: Vec<&str> = Vec::new();
            for entry in result.suppressed.iter().filter(|e| e.finding.page == *page) {
                let rule = entry.finding.rule.as_str();
                if !rules.contains(&rule) && !skipped_rules.contains(&rule) {
                    skipped_rules.push(rule);
                }
            }
            let mut cases = String::new();
            let mut failing = 0;
            for rule in &skipped_rules {
                let entries: Vec<String> = result
                    .suppressed
                    .iter()
                    .filter(|e| e.finding.page == *page && e.finding.rule == *rule)
                    .map(|e| {
                        format!(
                            "suppressed ({}): {}\n{}",
                            e.suppressed_by,
                            e.reason,
                            describe(&e.finding)
                        )
                    })
                    .collect();
                let first = result
                    .suppressed
                    .iter()
                    .find(|e| e.finding.page == *page && e.finding.rule == *rule);
                let category = first.map_or("audit", |e| e.finding.category.as_str());
                let reason = first.map_or(String::new(), |e| e.reason.clone());
                cases.push_str(&format!(
                    "    <testcase classname=\"chromate.audit.{category}\" name=\"{}\"><skipped message=\"suppressed: {}\"/><system-out>{}</system-out></testcase>\n",
                    escape(rule),
                    escape(&reason),
                    escape(&entries.join("\n\n")),
                ));
            }
            for rule in &rules {
                let found: Vec<&Finding> = result
                    .findings
                    .iter()
                    .filter(|f| f.page == *page && f.rule == *rule)
                    .collect();
                let Some(worst) = found.iter().max_by_key(|f| f.severity) else {
                    continue;
                };
                let mut body: Vec<String> = found.iter().map(|f| describe(f)).collect();
                body.extend(
                    result
                        .suppressed
                        .iter()
                        .filter(|e| e.finding.page == *page && e.finding.rule == *rule)
                        .map(|e| {
                            format!(
                                "suppressed ({}): {}\n{}",
                                e.suppressed_by,
                                e.reason,
                                describe(&e.finding)
                            )
                        }),
                );
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
            if rules.is_empty() && skipped_rules.is_empty() {
                cases.push_str(
                    "    <testcase classname=\"chromate.audit\" name=\"no findings\"/>\n",
                );
            }
            let skipped = skipped_rules.len();
            let tests = (rules.len() + skipped).max(1);
            total += tests;
            failures += failing;
            skips += skipped;
            suites.push_str(&format!(
                "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failing}\" errors=\"0\" skipped=\"{skipped}\">\n{cases}  </testsuite>\n",
                escape(page),
            ));
        }
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"chromate audit {}\" tests=\"{total}\" failures=\"{failures}\" skipped=\"{skips}\" time=\"{:.3}\">\n{suites}</testsuites>\n",
            escape(&result.url),
            result.duration_ms as f64 / 1000.0,
        )
    }
}
