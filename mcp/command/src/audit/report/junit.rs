//! The JUnit XML report, for CI test views: one `<testsuite>` per audited page, one failing
//! `<testcase>` per finding (info findings are `<skipped>`), and a passing case for a page
//! with none.

use super::Report;
use crate::audit::findings::{AuditResult, Severity};
use crate::markup::escape;

pub(super) struct Junit;

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
            let on_page: Vec<_> = result.findings.iter().filter(|f| f.page == *page).collect();
            let failing = on_page
                .iter()
                .filter(|f| f.severity > Severity::Info)
                .count();
            let mut cases = String::new();
            for finding in &on_page {
                let body = format!(
                    "{}\nrule: {}\nselector: {}\nevidence: {}",
                    finding.description,
                    finding.rule,
                    finding.selector_hint.as_deref().unwrap_or("-"),
                    finding.evidence
                );
                let verdict = if finding.severity == Severity::Info {
                    format!("<skipped message=\"{}\"/>", escape(&finding.title))
                } else {
                    format!(
                        "<failure type=\"{}\" message=\"{}\">{}</failure>",
                        finding.severity.as_str(),
                        escape(&finding.title),
                        escape(&body)
                    )
                };
                cases.push_str(&format!(
                    "    <testcase classname=\"chromate.audit.{}\" name=\"{} [{}]\">{verdict}</testcase>\n",
                    finding.category.as_str(),
                    escape(&finding.title),
                    escape(&finding.id),
                ));
            }
            let tests = on_page.len().max(1);
            if on_page.is_empty() {
                cases.push_str(
                    "    <testcase classname=\"chromate.audit\" name=\"no findings\"/>\n",
                );
            }
            total += tests;
            failures += failing;
            suites.push_str(&format!(
                "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failing}\" errors=\"0\" skipped=\"{}\">\n{cases}  </testsuite>\n",
                escape(page),
                on_page.len() - failing,
            ));
        }
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"chromate audit {}\" tests=\"{total}\" failures=\"{failures}\" time=\"{:.3}\">\n{suites}</testsuites>\n",
            escape(&result.url),
            result.duration_ms as f64 / 1000.0,
        )
    }
}
