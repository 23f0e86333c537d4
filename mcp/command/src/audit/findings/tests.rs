//! Unit tests of the audit's judgements: thresholds, severities, ids, ranking.

use serde_json::json;

use super::*;

#[test]
fn core_web_vitals_bands_follow_the_published_thresholds() {
    assert_eq!(LCP.band(2500.0), Band::Good);
    assert_eq!(LCP.band(2500.1), Band::NeedsImprovement);
    assert_eq!(LCP.band(4000.0), Band::NeedsImprovement);
    assert_eq!(LCP.band(4000.1), Band::Poor);
    assert_eq!(CLS.band(0.1), Band::Good);
    assert_eq!(CLS.band(0.2), Band::NeedsImprovement);
    assert_eq!(CLS.band(0.26), Band::Poor);
    assert_eq!(TBT.band(200.0), Band::Good);
    assert_eq!(TBT.band(650.0), Band::Poor);
    assert_eq!(Band::Good.severity(), None);
    assert_eq!(Band::NeedsImprovement.severity(), Some(Severity::Medium));
    assert_eq!(Band::Poor.severity(), Some(Severity::High));
}

#[test]
fn a_good_figure_is_no_finding_and_a_poor_one_is_high() {
    assert!(speed_finding(&LCP, 900.0, "http://h/", None).is_none());
    let finding = speed_finding(&CLS, 0.31, "http://h/", Some("#hero".into())).expect("poor");
    assert_eq!(finding.severity, Severity::High);
    assert_eq!(finding.category, Category::Performance);
    assert_eq!(finding.title, "Cumulative layout shift is 0.310 (poor)");
    assert_eq!(finding.selector_hint.as_deref(), Some("#hero"));
    assert_eq!(finding.evidence["band"], json!("poor"));
    let bytes = speed_finding(&BYTES, 2_000_000.0, "http://h/", None).expect("heavy");
    assert_eq!(bytes.severity, Severity::Medium);
    assert_eq!(
        bytes.title,
        "Bytes transferred is 1953 KiB (needs-improvement)"
    );
}

#[test]
fn axe_impacts_and_http_statuses_map_to_severities() {
    assert_eq!(
        axe_severity(chromate::audit::Impact::Critical),
        Severity::Critical
    );
    assert_eq!(
        axe_severity(chromate::audit::Impact::Serious),
        Severity::High
    );
    assert_eq!(
        axe_severity(chromate::audit::Impact::Moderate),
        Severity::Medium
    );
    assert_eq!(axe_severity(chromate::audit::Impact::Minor), Severity::Low);
    assert_eq!(http_severity(503, true), Severity::Critical);
    assert_eq!(http_severity(404, true), Severity::High);
    assert_eq!(http_severity(500, false), Severity::High);
    assert_eq!(http_severity(404, false), Severity::Medium);
}

#[test]
fn ids_are_stable_and_differ_by_rule_page_and_target() {
    let make = |rule: &str, page: &str, key: &str| {
        Finding::new(rule, Severity::Low, Category::Visual, page, "t")
            .keyed(key)
            .id
    };
    let id = make("layout.covered", "http://h/a", "#x");
    assert_eq!(id, make("layout.covered", "http://h/a", "#x"));
    assert!(id.starts_with("layout.covered@") && id.len() == "layout.covered@".len() + 8);
    assert_ne!(id, make("layout.covered", "http://h/b", "#x"));
    assert_ne!(id, make("layout.covered", "http://h/a", "#y"));
    assert_ne!(id, make("layout.zero-size", "http://h/a", "#x"));
}

#[test]
fn ranking_puts_focus_matches_first_then_the_worst() {
    let finding = |rule: &str, severity: Severity, title: &str| {
        Finding::new(rule, severity, Category::Functional, "http://h/", title).keyed(title)
    };
    let mut findings = vec![
        finding("a", Severity::Low, "checkout button too small"),
        finding("b", Severity::Critical, "image without alt"),
        finding("c", Severity::Medium, "console error"),
        finding("d", Severity::High, "Checkout link broken"),
    ];
    rank(&mut findings, None);
    let order: Vec<&str> = findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(order, ["b", "d", "c", "a"]);
    rank(&mut findings, Some("checkout"));
    let order: Vec<&str> = findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(order, ["d", "a", "b", "c"]);
}

#[test]
fn the_favicon_the_browser_asks_for_is_incidental() {
    assert!(incidental("http://127.0.0.1:8080/favicon.ico"));
    assert!(incidental("https://h/favicon.ico?v=2"));
    assert!(!incidental("http://h/img/favicon.ico"));
    assert!(!incidental("http://h/missing.png"));
    assert_eq!(short_url("http://h:1/a/b?c=1"), "/a/b?c=1");
    assert_eq!(short_url("http://h"), "http://h");
    assert_eq!(cut("abcdef", 4), "abc…");
}

#[test]
fn layout_kinds_have_rules() {
    for kind in [
        "covered",
        "off-screen",
        "zero-size",
        "nameless",
        "small-target",
    ] {
        let (rule, _, _, _) = control_rule(kind).expect(kind);
        assert_eq!(rule, format!("layout.{kind}"));
    }
    assert_eq!(
        control_rule("nameless").map(|r| r.2),
        Some(Category::Accessibility)
    );
    assert!(control_rule("other").is_none());
}
