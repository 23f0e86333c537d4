//! The audit's gate (`docs/cli.md#gating-a-pipeline`): the controls a CI pipeline puts between
//! an audit's findings and its exit status — the ignore file's entries (`chromate-audit.toml`:
//! `[[ignore]]` with `rule`, `url`, `selector` and a required `reason`), a baseline of accepted
//! findings (an audit's own JSON result), and budgets (`[budgets]`, optionally per URL pattern)
//! that become findings when exceeded.
//!
//! Owns reading the TOML file (a malformed one is an error naming its line), the glob patterns,
//! matching findings to entries and to the baseline (by the finding's stable id: rule, page and
//! durable key, never a measured value), the budget findings, and the warnings of a run (stale
//! entries). Pure functions over an [`AuditResult`]; the command line reads the files and
//! chooses what fails. Unit-tested in `gate/tests.rs`.

use std::collections::HashSet;
use std::ops::Range;

use serde::Deserialize;
use serde_json::{json, Value};

use super::findings::{self, AuditResult, Category, Finding, Severity, Suppressed};

/// The ignore file's default name, looked for in the working directory.
pub const DEFAULT_FILE: &str = "chromate-audit.toml";

/// One `[[ignore]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Ignore {
    /// The line of its `[[ignore]]` header.
    pub line: usize,
    /// A glob over the finding's rule (`a11y.*`).
    pub rule: Option<String>,
    /// A glob over the page's URL (`http://*/legacy/*`).
    pub url: Option<String>,
    /// The finding's selector, exactly, or a glob.
    pub selector: Option<String>,
    pub reason: String,
}

impl Ignore {
    pub fn matches(&self, finding: &Finding) -> bool {
        let rule = self.rule.as_deref().is_none_or(|p| glob(p, &finding.rule));
        let url = self.url.as_deref().is_none_or(|p| glob(p, &finding.page));
        let selector = self.selector.as_deref().is_none_or(|p| {
            finding
                .selector_hint
                .as_deref()
                .is_some_and(|selector| glob(p, selector))
        });
        rule && url && selector
    }

    /// `rule=… url=… selector=…`, for messages.
    fn describe(&self) -> String {
        let parts: Vec<String> = [
            ("rule", &self.rule),
            ("url", &self.url),
            ("selector", &self.selector),
        ]
        .iter()
        .filter_map(|(key, value)| value.as_ref().map(|value| format!("{key} = {value:?}")))
        .collect();
        parts.join(", ")
    }
}

/// Limits of one page's figures; `None` is no limit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub lcp_ms: Option<u64>,
    pub cls: Option<f64>,
    pub tbt_ms: Option<u64>,
    pub requests: Option<u64>,
    pub bytes: Option<u64>,
}

impl Limits {
    /// `self`, each limit `over` sets replacing its own.
    fn overridden(&self, over: &Limits) -> Limits {
        Limits {
            lcp_ms: over.lcp_ms.or(self.lcp_ms),
            cls: over.cls.or(self.cls),
            tbt_ms: over.tbt_ms.or(self.tbt_ms),
            requests: over.requests.or(self.requests),
            bytes: over.bytes.or(self.bytes),
        }
    }
}

/// The `[budgets]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Budgets {
    /// A budget finding's severity (default high).
    pub severity: Severity,
    /// Every page's limits.
    pub all: Limits,
    /// `[[budgets.pages]]`: a URL glob and its limits; the first that matches a page replaces
    /// the limits it names.
    pub pages: Vec<(String, Limits)>,
}

/// `chromate-audit.toml`, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateFile {
    pub ignores: Vec<Ignore>,
    pub budgets: Option<Budgets>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    ignore: Vec<toml::Spanned<RawIgnore>>,
    budgets: Option<RawBudgets>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIgnore {
    rule: Option<String>,
    url: Option<String>,
    selector: Option<String>,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBudgets {
    severity: Option<toml::Spanned<String>>,
    lcp_ms: Option<u64>,
    cls: Option<toml::Spanned<f64>>,
    tbt_ms: Option<u64>,
    requests: Option<u64>,
    bytes: Option<u64>,
    #[serde(default)]
    pages: Vec<toml::Spanned<RawPageBudget>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPageBudget {
    url: String,
    lcp_ms: Option<u64>,
    cls: Option<toml::Spanned<f64>>,
    tbt_ms: Option<u64>,
    requests: Option<u64>,
    bytes: Option<u64>,
}

/// The line (1-based) where `span` starts in `text`.
fn line_of(text: &str, span: &Range<usize>) -> usize {
    let end = span.start.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn cls_limit(text: &str, cls: Option<toml::Spanned<f64>>) -> Result<Option<f64>, String> {
    match cls {
        Some(cls) if !cls.get_ref().is_finite() || *cls.get_ref() < 0.0 => Err(format!(
            "line {}: cls must be a number of 0 or more, not {}",
            line_of(text, &cls.span()),
            cls.get_ref()
        )),
        other => Ok(other.map(toml::Spanned::into_inner)),
    }
}

/// Reads the ignore file's text; `Err` names the line of what is wrong.
pub fn parse(text: &str) -> Result<GateFile, String> {
    let raw: RawFile = toml::from_str(text).map_err(|err| {
        // toml says `TOML parse error at line N, column M`, the line quoted, and what.
        err.to_string().trim_end().to_owned()
    })?;
    let mut file = GateFile::default();
    for entry in raw.ignore {
        let line = line_of(text, &entry.span());
        let entry = entry.into_inner();
        if entry.reason.trim().is_empty() {
            return Err(format!(
                "line {line}: an [[ignore]] entry needs a reason: say why the finding is accepted"
            ));
        }
        if entry.rule.is_none() && entry.url.is_none() && entry.selector.is_none() {
            return Err(format!(
                "line {line}: an [[ignore]] entry needs at least one of rule, url or selector \
                 (without them it would ignore every finding)"
            ));
        }
        for (key, value) in [
            ("rule", &entry.rule),
            ("url", &entry.url),
            ("selector", &entry.selector),
        ] {
            if value
                .as_deref()
                .is_some_and(|value| value.trim().is_empty())
            {
                return Err(format!(
                    "line {line}: {key} is empty; leave it out to match any {key}"
                ));
            }
        }
        file.ignores.push(Ignore {
            line,
            rule: entry.rule,
            url: entry.url,
            selector: entry.selector,
            reason: entry.reason,
        });
    }
    if let Some(budgets) = raw.budgets {
        let severity = match budgets.severity {
            None => Severity::High,
            Some(name) => Severity::parse(name.get_ref()).ok_or_else(|| {
                format!(
                    "line {}: severity is critical, high, medium, low or info, not {:?}",
                    line_of(text, &name.span()),
                    name.get_ref()
                )
            })?,
        };
        let all = Limits {
            lcp_ms: budgets.lcp_ms,
            cls: cls_limit(text, budgets.cls)?,
            tbt_ms: budgets.tbt_ms,
            requests: budgets.requests,
            bytes: budgets.bytes,
        };
        let mut pages = Vec::new();
        for page in budgets.pages {
            let line = line_of(text, &page.span());
            let page = page.into_inner();
            if page.url.trim().is_empty() {
                return Err(format!(
                    "line {line}: a [[budgets.pages]] entry needs a url pattern"
                ));
            }
            let limits = Limits {
                lcp_ms: page.lcp_ms,
                cls: cls_limit(text, page.cls)?,
                tbt_ms: page.tbt_ms,
                requests: page.requests,
                bytes: page.bytes,
            };
            pages.push((page.url, limits));
        }
        file.budgets = Some(Budgets {
            severity,
            all,
            pages,
        });
    }
    Ok(file)
}

/// Whether `text` matches the glob `pattern`: `*` any run of characters (`/` included), `?`
/// one character, anything else itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    // The last `*` seen and the text position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(c) if *c == '?' || *c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// The ids a baseline file accepts: an audit's JSON result (`--format json`): its findings,
/// and the findings it had set aside as in its own baseline.
pub fn baseline_ids(text: &str) -> Result<HashSet<String>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|err| format!("not an audit's JSON result: {err}"))?;
    let Some(found) = value.get("findings").and_then(Value::as_array) else {
        return Err(
            "not an audit's JSON result: it has no \"findings\" list (write one with \
             --update-baseline, or --format json=FILE)"
                .to_owned(),
        );
    };
    let accepted = value
        .get("suppressed")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|entry| entry.get("suppressed_by").and_then(Value::as_str) == Some("baseline"));
    let mut ids = HashSet::new();
    for finding in found.iter().chain(accepted) {
        match finding.get("id").and_then(Value::as_str) {
            Some(id) => ids.insert(id.to_owned()),
            None => return Err("a finding of the baseline has no \"id\"".to_owned()),
        };
    }
    Ok(ids)
}

/// Adds a finding for every budget a page exceeds (rule `budget.<figure>`, category
/// performance). Its id is the rule and the page only: the measured and the allowed value are
/// in its title and evidence, never in its identity.
pub fn budget_findings(result: &mut AuditResult, budgets: &Budgets) {
    let mut found = Vec::new();
    for page in &result.pages {
        let Some(vitals) = &page.vitals else {
            continue;
        };
        let limits = match budgets.pages.iter().find(|(url, _)| glob(url, &page.url)) {
            Some((_, over)) => budgets.all.overridden(over),
            None => budgets.all.clone(),
        };
        let mut over = |figure: &str, label: &str, measured: Value, allowed: Value, unit: &str| {
            let finding = Finding::new(
                &format!("budget.{figure}"),
                budgets.severity,
                Category::Performance,
                &page.url,
                format!("{label} {measured}{unit} over its budget of {allowed}{unit}"),
            )
            .describe(format!(
                "the page's {label} is past the [budgets] of the audit's ignore file"
            ))
            .evidence(json!({ "figure": figure, "measured": measured, "allowed": allowed }))
            .keyed("");
            found.push(finding);
        };
        if let (Some(limit), Some(lcp)) = (limits.lcp_ms, vitals.lcp_ms) {
            if lcp > limit {
                over("lcp", "LCP", json!(lcp), json!(limit), " ms");
            }
        }
        if let Some(limit) = limits.cls {
            if vitals.cls > limit {
                let cls = (vitals.cls * 1000.0).round() / 1000.0;
                over("cls", "CLS", json!(cls), json!(limit), "");
            }
        }
        if let Some(limit) = limits.tbt_ms {
            if vitals.tbt_ms > limit {
                over("tbt", "TBT", json!(vitals.tbt_ms), json!(limit), " ms");
            }
        }
        if let Some(limit) = limits.requests {
            if vitals.requests > limit {
                over(
                    "requests",
                    "request count",
                    json!(vitals.requests),
                    json!(limit),
                    "",
                );
            }
        }
        if let Some(limit) = limits.bytes {
            if vitals.bytes > limit {
                over(
                    "bytes",
                    "transferred bytes",
                    json!(vitals.bytes),
                    json!(limit),
                    " B",
                );
            }
        }
    }
    result.findings.extend(found);
    findings::dedupe(&mut result.findings);
    findings::rank(&mut result.findings, result.focus.as_deref());
}

/// Sets aside the findings an ignore entry matches (the first entry that does gives the
/// reason), and warns of each entry that matched none (stale).
pub fn apply_ignores(result: &mut AuditResult, ignores: &[Ignore], file: &str) {
    let mut used = vec![false; ignores.len()];
    let mut kept = Vec::new();
    for finding in std::mem::take(&mut result.findings) {
        match ignores.iter().position(|entry| entry.matches(&finding)) {
            Some(index) => {
                used[index] = true;
                result.suppressed.push(Suppressed {
                    finding,
                    suppressed_by: "ignore".to_owned(),
                    reason: ignores[index].reason.clone(),
                });
            }
            None => kept.push(finding),
        }
    }
    result.findings = kept;
    for (entry, used) in ignores.iter().zip(used) {
        if !used {
            result.warnings.push(format!(
                "{file} line {}: stale [[ignore]] entry ({}): it matches no finding of this run",
                entry.line,
                entry.describe()
            ));
        }
    }
}

/// Sets aside the findings the baseline accepts.
pub fn apply_baseline(result: &mut AuditResult, accepted: &HashSet<String>, file: &str) {
    let (old, new): (Vec<Finding>, Vec<Finding>) = std::mem::take(&mut result.findings)
        .into_iter()
        .partition(|finding| accepted.contains(&finding.id));
    result.findings = new;
    result
        .suppressed
        .extend(old.into_iter().map(|finding| Suppressed {
            finding,
            suppressed_by: "baseline".to_owned(),
            reason: format!("accepted in the baseline {file}"),
        }));
}

#[cfg(test)]
mod tests;
