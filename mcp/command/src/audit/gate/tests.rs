//! Unit tests of the audit's gate: the ignore file's reading and errors, globs, budgets and
//! the baseline.

use super::*;

#[test]
fn a_glob_matches_runs_and_single_characters() {
    assert!(glob("a11y.*", "a11y.image-alt"));
    assert!(glob(
        "http://*/legacy/*",
        "http://127.0.0.1:8080/legacy/a.html"
    ));
    assert!(glob("#logo", "#logo"));
    assert!(glob("?ogo", "logo"));
    assert!(!glob("a11y.*", "layout.covered"));
    assert!(!glob("#logo", "#logo2"));
    assert!(glob("*", ""));
}

#[test]
fn a_missing_reason_names_its_line() {
    let text = "# accepted\n\n[[ignore]]\nrule = \"a11y.image-alt\"\n";
    let err = parse(text).expect_err("no reason");
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("reason"), "{err}");
    let err = parse("[[ignore]]\nrule = \"x\"\nreason = \"  \"\n").expect_err("empty reason");
    assert!(err.starts_with("line 1:"), "{err}");
    let err = parse("[[ignore]]\nreason = \"all\"\n").expect_err("matches everything");
    assert!(err.contains("at least one of"), "{err}");
    let err = parse("\n[budgets]\nlcp = 3\n").expect_err("unknown key");
    assert!(err.contains("line 3"), "{err}");
    let err = parse("[budgets]\nseverity = \"huge\"\n").expect_err("severity");
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn budgets_per_page_replace_the_limits_they_name() {
    let file = parse(
        "[budgets]\nrequests = 10\nbytes = 1000\n\n[[budgets.pages]]\nurl = \"*/heavy*\"\nbytes = 5000\n",
    )
    .expect("parses");
    let budgets = file.budgets.expect("budgets");
    assert_eq!(budgets.severity, Severity::High);
    let over = budgets.all.overridden(&budgets.pages[0].1);
    assert_eq!(over.bytes, Some(5000));
    assert_eq!(over.requests, Some(10));
}

#[test]
fn a_baseline_is_an_audit_result_and_keeps_what_it_accepted() {
    let ids = baseline_ids(
        r#"{"findings":[{"id":"a@1"}],"suppressed":[{"id":"b@2","suppressed_by":"baseline"},{"id":"c@3","suppressed_by":"ignore"}]}"#,
    )
    .expect("reads");
    assert!(ids.contains("a@1") && ids.contains("b@2") && !ids.contains("c@3"));
    assert!(baseline_ids("[]").is_err());
    assert!(baseline_ids("{").is_err());
}
