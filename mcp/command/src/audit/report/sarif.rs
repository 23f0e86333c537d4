//! The SARIF 2.1.0 report (OASIS Static Analysis Results Interchange Format), for
//! code-scanning dashboards: one run of the tool `chromate`, a rule per finding rule, a result
//! per finding (a suppressed one with its `suppressions`: `external`, the reason as its
//! justification) with the page as its artifact, the selector as its logical location, and the
//! finding's id as a partial fingerprint. Each rule carries its help (what it checks and how
//! it is judged, as text and Markdown, linking the documentation's table of findings), and the
//! tool its documentation as `informationUri`. `mcp/tests/e2e/audit.rs` validates it against the
//! schema vendored in `tests/fixtures/sarif/`.

use serde_json::{json, Value};

use super::Report;
use crate::audit::findings::{AuditResult, Severity};

pub(super) struct Sarif;

/// Where the audit is documented: the tool's `informationUri`.
const DOCS_URL: &str = concat!(
    env!("CARGO_PKG_REPOSITORY"),
    "/blob/main/docs/cli.md#audits"
);

/// The table of findings every rule's help links.
const FINDINGS_URL: &str = concat!(
    env!("CARGO_PKG_REPOSITORY"),
    "/blob/main/docs/cli.md#findings"
);

/// What a rule checks and how its severity is judged, as docs/cli.md#findings says it.
fn rule_help(rule: &str) -> &'static str {
    match rule {
        "runtime.exception" | "runtime.unhandled-rejection" => {
            "An uncaught error or unhandled promise rejection while the page loaded and settled; the evidence has its stack. Severity high."
        }
        "runtime.console-error" | "runtime.console-warn" => {
            "A console.error (medium) or console.warn (low) message while the page loaded and settled: one finding per message and place, with its count."
        }
        "network.http-error" => {
            "A request answered with a status of 400 or more (high at 500 or more, else medium): its method, URL, status and duration."
        }
        "network.request-failed" => {
            "A request failed at network level (net::ERR_…); aborts and the favicon the browser asks for by itself are left out. Severity medium."
        }
        "network.ssrf-blocked" => {
            "The private-network guard refused a request (code SSRF_BLOCKED). Severity medium."
        }
        "network.image-decode" => "An image was answered but could not be decoded. Severity medium.",
        "network.mixed-content" => "An https page asks for a resource over http. Severity high.",
        "network.page-load" | "network.document-status" => {
            "The page itself did not load, or answered with a status of 400 or more (critical for the entry page, else high)."
        }
        "links.broken" => {
            "A link's target answers 400 or more or fails, checked from inside the page with HEAD, then GET (high; a timeout is medium); every referring page is in the evidence."
        }
        "layout.horizontal-overflow" => {
            "The document is wider than the viewport; the evidence names the element reaching furthest past it. Severity medium."
        }
        "layout.covered" => {
            "Another element sits on a control's middle (evidence.covered_by), so a click lands on it instead. Severity high."
        }
        "layout.zero-size" | "layout.off-screen" => {
            "A rendered control with no width or height (medium), or one outside the document (low; skip links excepted)."
        }
        "layout.nameless" => {
            "A control with a widget role and no accessible name that axe did not already report. Severity high."
        }
        "layout.small-target" => {
            "A target under 24×24 CSS px without WCAG 2.5.8's spacing, inline-text or browser-control exceptions. Severity low."
        }
        "speed.lcp" | "speed.cls" | "speed.tbt" => {
            "A lab web vital past its threshold: largest contentful paint (2.5 s / 4 s), cumulative layout shift (0.1 / 0.25), total blocking time (200 / 600 ms); needs improvement is medium, poor is high."
        }
        "speed.bytes" | "speed.requests" => {
            "The page's weight past its threshold: bytes transferred (1,600 / 4,000 KiB) or requests (100 / 200); needs improvement is medium, poor is high."
        }
        rule if rule.starts_with("a11y.") => {
            "An axe-core accessibility violation (critical and serious are high, moderate medium, minor low); the evidence lists every node with its selector, HTML and summary."
        }
        _ => "A finding of chromate's audit.",
    }
}

/// A rule's `help`: its text, and as Markdown with its links.
fn help(rule: &str, help_url: Option<&str>) -> Value {
    let text = rule_help(rule);
    let mut markdown =
        format!("**`{rule}`**\n\n{text}\n\nSee [the audit's findings]({FINDINGS_URL}).");
    let mut plain = format!("{text} See {FINDINGS_URL}");
    if let Some(url) = help_url {
        markdown.push_str(&format!(" The rule itself: [{url}]({url})."));
        plain.push_str(&format!(" and {url}"));
    }
    plain.push('.');
    json!({ "text": plain, "markdown": markdown })
}

/// SARIF's `level` of a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

impl Report for Sarif {
    fn render(&self, result: &AuditResult) -> String {
        let mut rules: Vec<Value> = Vec::new();
        let mut rule_ids: Vec<String> = Vec::new();
        let mut results = Vec::new();
        let active = result.findings.iter().map(|finding| (finding, None));
        let set_aside = result
            .suppressed
            .iter()
            .map(|entry| (&entry.finding, Some(entry)));
        for (finding, suppressed) in active.chain(set_aside) {
            let index = match rule_ids.iter().position(|id| *id == finding.rule) {
                Some(index) => index,
                None => {
                    let mut rule = json!({
                        "id": finding.rule,
                        "name": finding.rule.replace(['.', '-'], "_"),
                        "shortDescription": { "text": finding.title },
                        "fullDescription": { "text": if finding.description.is_empty() { &finding.title } else { &finding.description } },
                        "defaultConfiguration": { "level": level(finding.severity) },
                        "properties": { "category": finding.category.as_str() },
                    });
                    let help_url = finding
                        .evidence
                        .get("help_url")
                        .and_then(Value::as_str)
                        .filter(|url| !url.is_empty());
                    rule["help"] = help(&finding.rule, help_url);
                    rule["helpUri"] = json!(help_url.unwrap_or(FINDINGS_URL));
                    rules.push(rule);
                    rule_ids.push(finding.rule.clone());
                    rule_ids.len() - 1
                }
            };
            let mut location = json!({
                "physicalLocation": { "artifactLocation": { "uri": finding.page } },
            });
            if let Some(selector) = &finding.selector_hint {
                location["logicalLocations"] = json!([{ "name": selector, "fullyQualifiedName": selector, "kind": "element" }]);
            }
            let text = if finding.description.is_empty() {
                finding.title.clone()
            } else {
                format!("{}: {}", finding.title, finding.description)
            };
            let mut item = json!({
                "ruleId": finding.rule,
                "ruleIndex": index,
                "level": level(finding.severity),
                "message": { "text": text },
                "locations": [location],
                "partialFingerprints": { "chromateFindingId/v1": finding.id },
                "properties": {
                    "severity": finding.severity.as_str(),
                    "category": finding.category.as_str(),
                    "evidence": finding.evidence,
                },
            });
            if let Some(entry) = suppressed {
                // An ignore entry or the baseline, both outside the pages: `external`.
                item["suppressions"] = json!([{
                    "kind": "external",
                    "status": "accepted",
                    "justification": entry.reason,
                    "properties": { "suppressedBy": entry.suppressed_by },
                }]);
            }
            results.push(item);
        }
        let notifications: Vec<Value> = result
            .warnings
            .iter()
            .map(|warning| json!({ "level": "warning", "message": { "text": warning } }))
            .collect();
        let log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": { "driver": {
                    "name": "chromate",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": DOCS_URL,
                    "rules": rules,
                } },
                "invocations": [{
                    "executionSuccessful": result.status == crate::audit::findings::Status::Completed,
                    "toolExecutionNotifications": notifications,
                    "properties": { "status": result.status.as_str(), "url": result.url },
                }],
                "results": results,
                "properties": { "metrics": result.metrics },
            }],
        });
        let mut text = serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".to_owned());
        text.push('\n');
        text
    }
}
