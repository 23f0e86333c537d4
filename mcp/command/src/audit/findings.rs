//! The audit's stable result (`docs/cli.md#audits`): findings, metrics, the whole result
//! object, the ranking, and the judgements that turn what a page showed into findings — every
//! rule's severity and category, the Core Web Vitals thresholds, the deduplication.
//!
//! Owns everything about a finding that is not the browser: pure functions from plain values,
//! unit-tested in `findings/tests.rs`. Does not talk to the browser (`audit/mod.rs` collects)
//! or render reports (`report/`).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// How bad a finding is, least first (`Ord` follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 5] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
        Severity::Info,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Functional,
    Visual,
    Accessibility,
    Performance,
    Network,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Functional => "functional",
            Category::Visual => "visual",
            Category::Accessibility => "accessibility",
            Category::Performance => "performance",
            Category::Network => "network",
        }
    }
}

/// One thing the audit found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `<rule>@<8 hex digits>`: the same defect on the same page gets the same id every run.
    pub id: String,
    pub severity: Severity,
    pub category: Category,
    /// The rule that found it (`runtime.exception`, `a11y.image-alt`, `layout.covered`…).
    pub rule: String,
    /// One line.
    pub title: String,
    pub description: String,
    /// The page it was found on.
    pub page: String,
    /// A durable selector of the element, never a ref.
    pub selector_hint: Option<String>,
    /// The facts: URLs, statuses, stacks, figures, boxes (`rect`, document CSS px).
    pub evidence: Value,
    /// Who found it when not chromate's own checks: `model` for a model's finding (a
    /// `qa_execute_user_flow` step's report, the audit's `focus` pass), `journal` for a user
    /// flow's console errors and HTTP failures. Absent (never serialised) on an audit's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Finding {
    pub fn new(
        rule: &str,
        severity: Severity,
        category: Category,
        page: &str,
        title: impl Into<String>,
    ) -> Finding {
        Finding {
            id: String::new(),
            severity,
            category,
            rule: rule.to_owned(),
            title: title.into(),
            description: String::new(),
            page: page.to_owned(),
            selector_hint: None,
            evidence: json!({}),
            source: None,
        }
    }

    pub fn describe(mut self, description: impl Into<String>) -> Finding {
        self.description = description.into();
        self
    }

    pub fn at(mut self, selector: Option<String>) -> Finding {
        self.selector_hint = selector.filter(|selector| !selector.is_empty());
        self
    }

    pub fn evidence(mut self, evidence: Value) -> Finding {
        self.evidence = evidence;
        self
    }

    /// Gives the finding its id from the rule, the page and what it points at (`key`).
    pub fn keyed(mut self, key: &str) -> Finding {
        let hash = fnv1a(&format!("{}\n{}\n{key}", self.rule, self.page));
        self.id = format!("{}@{:08x}", self.rule, hash & 0xffff_ffff);
        self
    }

    /// Whether the finding's text, URL, page or selector mentions `focus` (any case).
    pub fn matches(&self, focus: &str) -> bool {
        let needle = focus.to_lowercase();
        [
            self.title.as_str(),
            self.description.as_str(),
            self.page.as_str(),
            self.rule.as_str(),
            self.selector_hint.as_deref().unwrap_or(""),
            &self.evidence.to_string(),
        ]
        .iter()
        .any(|hay| hay.to_lowercase().contains(&needle))
    }
}

/// FNV-1a, 64 bits: a stable hash without a dependency.
fn fnv1a(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The figures of an audit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub pages_audited: u64,
    /// Console errors and uncaught errors.
    pub console_errors: u64,
    /// Responses ≥ 400 and failed requests.
    pub http_errors: u64,
    pub broken_links: u64,
    /// axe violations (rules, counted once per page).
    pub a11y_violations: u64,
    /// The entry page's largest contentful paint.
    pub lcp_ms: Option<u64>,
    /// The entry page's cumulative layout shift.
    pub cls: Option<f64>,
    /// The entry page's total blocking time.
    pub tbt_ms: Option<u64>,
    /// Requests and bytes of every audited page.
    pub requests: u64,
    pub bytes: u64,
    pub duration_ms: u64,
}

/// A screenshot file of an audited page: the entry page's viewport and full page, every other
/// page's full page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shot {
    /// `viewport` or `full-page`.
    pub name: String,
    pub path: String,
    pub width: u32,
    pub height: u32,
    /// The page it shows (absent in results of chromate before it was added: the entry page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
}

/// One audited page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditedPage {
    pub url: String,
    /// Breadth-first depth from the entry page.
    pub depth: u32,
    /// The document's HTTP status.
    pub status: Option<u16>,
    pub findings: u64,
    /// The page's own speed figures, when it was inspected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vitals: Option<PageVitals>,
    /// Whether its network went quiet after the load (`false`: inspected at the settle cap),
    /// when it was inspected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
}

/// One page's speed figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageVitals {
    pub lcp_ms: Option<u64>,
    pub cls: f64,
    pub tbt_ms: u64,
    pub long_tasks: u64,
    pub requests: u64,
    pub bytes: u64,
    /// False when the recorder was not in place or the page was hidden for a while: then the
    /// paint, shift and task figures are low.
    pub complete: bool,
}

/// A link to another origin: listed, and checked only when the server's origin policy names
/// an allow list that lets it through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalLink {
    pub url: String,
    /// The pages that link to it.
    pub pages: Vec<String>,
    /// Whether the audit checked it (a broken one is also a `links.broken` finding).
    #[serde(default)]
    pub checked: bool,
}

/// `completed`, `failed` (the entry page could not be audited) or `timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Completed,
    Failed,
    Timeout,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
        }
    }
}

/// The stable result of an audit (`docs/cli.md#the-result`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditResult {
    pub status: Status,
    pub url: String,
    pub duration_ms: u64,
    /// Ranked: `focus` matches first, then by severity, category, page and id.
    pub findings: Vec<Finding>,
    pub metrics: Metrics,
    pub screenshots: Vec<Shot>,
    pub pages: Vec<AuditedPage>,
    pub external_links: Vec<ExternalLink>,
    pub focus: Option<String>,
    /// Findings the gate set aside (`chromate audit`'s ignore file and baseline,
    /// `docs/cli.md#gating-a-pipeline`): listed, never counted for `--fail-on`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suppressed: Vec<Suppressed>,
    /// What the run wants said without failing: stale ignore entries, a URL list cut short.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The `focus` model pass, when a provider is configured (`docs/cli.md#focus-model-pass`):
    /// `{provider, model, ranked, added}`. Absent (never serialised) without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_pass: Option<Value>,
    /// The entry page's snapshot text, read for the model pass only; never in the result.
    #[serde(skip)]
    pub page_text: Option<String>,
}

/// A finding the gate set aside, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suppressed {
    #[serde(flatten)]
    pub finding: Finding,
    /// `ignore` (an entry of the ignore file) or `baseline` (accepted in the baseline).
    pub suppressed_by: String,
    /// The ignore entry's reason, or the baseline file it was accepted in.
    pub reason: String,
}

/// Sorts findings: `focus` matches first, then worst first, then category, page, id.
pub fn rank(findings: &mut [Finding], focus: Option<&str>) {
    findings.sort_by(|a, b| {
        let focused = |finding: &Finding| focus.is_some_and(|focus| finding.matches(focus));
        focused(b)
            .cmp(&focused(a))
            .then(b.severity.cmp(&a.severity))
            .then(a.category.cmp(&b.category))
            .then(a.page.cmp(&b.page))
            .then(a.id.cmp(&b.id))
    });
}

/// Drops findings whose id repeats (the first is kept).
pub fn dedupe(findings: &mut Vec<Finding>) {
    let mut seen = std::collections::HashSet::new();
    findings.retain(|finding| seen.insert(finding.id.clone()));
}

/// The number of findings per severity, worst first (`[(critical, n), …]`).
pub fn counts(findings: &[Finding]) -> Vec<(Severity, usize)> {
    Severity::ALL
        .into_iter()
        .map(|severity| {
            let n = findings.iter().filter(|f| f.severity == severity).count();
            (severity, n)
        })
        .collect()
}

// ---- the judgements ----

/// An axe impact → severity.
pub fn axe_severity(impact: chromate::audit::Impact) -> Severity {
    match impact {
        chromate::audit::Impact::Critical => Severity::Critical,
        chromate::audit::Impact::Serious => Severity::High,
        chromate::audit::Impact::Moderate => Severity::Medium,
        chromate::audit::Impact::Minor => Severity::Low,
    }
}

/// A Core Web Vitals band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Band {
    Good,
    NeedsImprovement,
    Poor,
}

impl Band {
    pub fn as_str(self) -> &'static str {
        match self {
            Band::Good => "good",
            Band::NeedsImprovement => "needs-improvement",
            Band::Poor => "poor",
        }
    }

    /// good → none (the figure is in the metrics), needs improvement → medium, poor → high.
    pub fn severity(self) -> Option<Severity> {
        match self {
            Band::Good => None,
            Band::NeedsImprovement => Some(Severity::Medium),
            Band::Poor => Some(Severity::High),
        }
    }
}

/// One speed metric and its thresholds: good up to `good`, poor above `poor`.
#[derive(Debug, Clone, Copy)]
pub struct Threshold {
    pub rule: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub good: f64,
    pub poor: f64,
}

impl Threshold {
    pub fn band(&self, value: f64) -> Band {
        if value <= self.good {
            Band::Good
        } else if value <= self.poor {
            Band::NeedsImprovement
        } else {
            Band::Poor
        }
    }
}

/// Core Web Vitals (web.dev/vitals): LCP 2.5 s / 4 s, CLS 0.1 / 0.25; total blocking time as
/// the lab proxy of INP, with Lighthouse's 200 / 600 ms.
pub const LCP: Threshold = Threshold {
    rule: "speed.lcp",
    name: "Largest contentful paint",
    unit: "ms",
    good: 2500.0,
    poor: 4000.0,
};
pub const CLS: Threshold = Threshold {
    rule: "speed.cls",
    name: "Cumulative layout shift",
    unit: "",
    good: 0.1,
    poor: 0.25,
};
pub const TBT: Threshold = Threshold {
    rule: "speed.tbt",
    name: "Total blocking time",
    unit: "ms",
    good: 200.0,
    poor: 600.0,
};
/// Lighthouse's "avoid enormous network payloads" budget (1,600 KiB), and 4,000 KiB as poor.
pub const BYTES: Threshold = Threshold {
    rule: "speed.bytes",
    name: "Bytes transferred",
    unit: "bytes",
    good: 1_638_400.0,
    poor: 4_096_000.0,
};
/// Requests per page: more than 100 needs a look, more than 200 is poor.
pub const REQUESTS: Threshold = Threshold {
    rule: "speed.requests",
    name: "Requests",
    unit: "",
    good: 100.0,
    poor: 200.0,
};

/// A speed finding for `value` on `page`, or `None` when it is good.
pub fn speed_finding(
    threshold: &Threshold,
    value: f64,
    page: &str,
    selector: Option<String>,
) -> Option<Finding> {
    let band = threshold.band(value);
    let severity = band.severity()?;
    let shown = match threshold.unit {
        "ms" => format!("{} ms", value.round()),
        "bytes" => format!("{:.0} KiB", value / 1024.0),
        _ if threshold.good < 1.0 => format!("{value:.3}"),
        _ => format!("{}", value.round()),
    };
    let limit = |limit: f64| match threshold.unit {
        "ms" => format!("{limit} ms"),
        "bytes" => format!("{:.0} KiB", limit / 1024.0),
        _ => format!("{limit}"),
    };
    Some(
        Finding::new(
            threshold.rule,
            severity,
            Category::Performance,
            page,
            format!("{} is {shown} ({})", threshold.name, band.as_str()),
        )
        .describe(format!(
            "{} should be at most {} (good); above {} is poor",
            threshold.name,
            limit(threshold.good),
            limit(threshold.poor)
        ))
        .at(selector)
        .evidence(json!({
            "value": value,
            "band": band.as_str(),
            "good": threshold.good,
            "poor": threshold.poor,
        }))
        .keyed(""),
    )
}

/// The severity of an HTTP error status: of the audited document itself, or of a subresource.
pub fn http_severity(status: u16, document: bool) -> Severity {
    match (document, status >= 500) {
        (true, true) => Severity::Critical,
        (true, false) | (false, true) => Severity::High,
        (false, false) => Severity::Medium,
    }
}

/// A layout problem's kind → rule, severity, category and title.
pub fn control_rule(kind: &str) -> Option<(&'static str, Severity, Category, &'static str)> {
    Some(match kind {
        "covered" => (
            "layout.covered",
            Severity::High,
            Category::Visual,
            "Control is covered by another element",
        ),
        "off-screen" => (
            "layout.off-screen",
            Severity::Low,
            Category::Visual,
            "Control is off-screen",
        ),
        "zero-size" => (
            "layout.zero-size",
            Severity::Medium,
            Category::Visual,
            "Control has zero size",
        ),
        "nameless" => (
            "layout.nameless",
            Severity::High,
            Category::Accessibility,
            "Control has no accessible name",
        ),
        "small-target" => (
            "layout.small-target",
            Severity::Low,
            Category::Visual,
            "Tap target is smaller than 24×24 CSS px",
        ),
        _ => return None,
    })
}

/// Whether a request is one no page asks for on purpose and no one would fix: the favicon the
/// browser looks for by itself.
pub fn incidental(url: &str) -> bool {
    let path = url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|slash| &rest[slash..]))
        .unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or(path);
    path == "/favicon.ico"
}

/// A URL's path and query for titles (`/a/b?x=1`), the whole URL when it has none.
pub fn short_url(url: &str) -> String {
    match url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
    {
        Some(path) => path.to_owned(),
        None => url.to_owned(),
    }
}

/// `text` cut to `max` characters with `…`.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests;
