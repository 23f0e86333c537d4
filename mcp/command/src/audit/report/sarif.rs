//! The SARIF 2.1.0 report (OASIS Static Analysis Results Interchange Format), for
//! code-scanning dashboards: one run of the tool `chromate`, a rule per finding rule, a result
//! per finding with the page as its artifact, the selector as its logical location, and the
//! finding's id as a partial fingerprint. `mcp/tests/e2e/audit.rs` validates it against the
//! schema vendored in `tests/fixtures/sarif/`.

use serde_json::{json, Value};

use super::Report;
use crate::audit::findings::{AuditResult, Severity};

pub(super) struct Sarif;

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
        for finding in &result.findings {
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
                    if let Some(help) = finding.evidence.get("help_url").and_then(Value::as_str) {
                        if !help.is_empty() {
                            rule["helpUri"] = json!(help);
                        }
                    }
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
            results.push(json!({
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
            }));
        }
        let log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": { "driver": {
                    "name": "chromate",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://example.invalid/chromate",
                    "rules": rules,
                } },
                "invocations": [{
                    "executionSuccessful": result.status == crate::audit::findings::Status::Completed,
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
