//! The page scripts' answers and the Rust side agree: every `status` string
//! `actionability.js` (and `locators.js`) writes is a [`Status`], every [`Status`] is one
//! `actionability.js` writes, a status neither side knows is a DRIVER_ERROR naming it, and the
//! stale-ref reasons are the ref table's statuses.

use serde_json::json;

use super::{status, Status};
use crate::error::{Error, ErrorCode};

/// Every [`Status`]; the exhaustive match keeps the list complete when one is added.
fn every_status() -> Vec<Status> {
    let all = vec![
        Status::Ok,
        Status::NoMatch,
        Status::InvalidSelector,
        Status::StaleRef,
        Status::NotVisible,
        Status::NotEnabled,
        Status::NotEditable,
        Status::Obscured,
        Status::Unstable,
        Status::OutsideViewport,
        Status::NoValue,
        Status::BadField,
        Status::NotFileInput,
        Status::NotCheckable,
        Status::NotSelect,
        Status::NoOption,
        Status::DisabledOption,
        Status::Rejected,
        Status::NotSettable,
    ];
    for status in &all {
        match status {
            Status::Ok
            | Status::NoMatch
            | Status::InvalidSelector
            | Status::StaleRef
            | Status::NotVisible
            | Status::NotEnabled
            | Status::NotEditable
            | Status::Obscured
            | Status::Unstable
            | Status::OutsideViewport
            | Status::NoValue
            | Status::BadField
            | Status::NotFileInput
            | Status::NotCheckable
            | Status::NotSelect
            | Status::NoOption
            | Status::DisabledOption
            | Status::Rejected
            | Status::NotSettable => {}
        }
    }
    all
}

/// The strings `actionability.js` writes as `status: "…"`.
fn script_statuses() -> Vec<String> {
    statuses_in(crate::js::ACTIONABILITY)
}

#[test]
fn every_status_the_script_writes_decodes() {
    let found = script_statuses();
    assert!(found.len() > 10, "found too few statuses: {found:?}");
    for text in &found {
        let answer = json!({ "status": text });
        assert!(
            status("actionability.check", &answer).is_ok(),
            "actionability.js writes status {text:?}, which Status does not know"
        );
    }
}

#[test]
fn every_status_is_one_the_script_writes() {
    let found = script_statuses();
    for variant in every_status() {
        let text = serde_json::to_value(variant)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        assert!(
            found.contains(&text),
            "Status::{variant:?} ({text:?}) is written nowhere in actionability.js"
        );
    }
}

#[test]
fn an_unknown_status_is_a_driver_error_naming_it() {
    let err = status("actionability.check", &json!({ "status": "not-visibel" }))
        .expect_err("a typo must not decode");
    assert!(matches!(err, Error::UnknownStatus { .. }), "{err:?}");
    assert_eq!(err.code(), ErrorCode::DriverError);
    assert_eq!(
        err.to_string(),
        "actionability.check answered with an unknown status \"not-visibel\""
    );
    let err = status("actionability.find", &json!({ "count": 0 })).expect_err("no status");
    assert_eq!(
        err.to_string(),
        "actionability.find answered with an unknown status \"\""
    );
}

/// The quoted strings a script writes as `status: "…"`.
fn statuses_in(script: &str) -> Vec<String> {
    crate::js::literals_after(script, "status: \"")
}

#[test]
fn every_status_locators_suggest_writes_decodes() {
    let found = statuses_in(crate::js::LOCATORS);
    assert!(found.contains(&"no-match".to_owned()), "{found:?}");
    for text in &found {
        assert!(
            status("locators.suggest", &json!({ "status": text })).is_ok(),
            "locators.js writes status {text:?}, which Status does not know"
        );
    }
}

#[test]
fn a_stale_ref_reason_is_one_the_ref_table_gives() {
    use super::{stale, StaleRefReason};
    use crate::error::StaleReason;
    let found = statuses_in(crate::js::REFS);
    assert_eq!(found, ["ambiguous", "detached", "ok", "unknown"]);
    for reason in [
        StaleRefReason::Detached,
        StaleRefReason::Ambiguous,
        StaleRefReason::Unknown,
    ] {
        let text = serde_json::to_value(reason).unwrap_or_default();
        assert!(
            found.iter().any(|f| json!(f) == text),
            "{reason:?} ({text}) is not a status of refs.js"
        );
    }
    let reason_of = |answer: serde_json::Value| match stale(&answer) {
        Error::StaleRef { reason, .. } => Some(reason),
        _ => None,
    };
    assert_eq!(
        reason_of(json!({ "status": "stale-ref", "ref": 3, "reason": "detached" })),
        Some(StaleReason::Detached)
    );
    assert_eq!(
        reason_of(json!({ "status": "stale-ref", "ref": 3, "reason": "ambiguous" })),
        Some(StaleReason::Ambiguous)
    );
    assert_eq!(
        reason_of(json!({ "status": "stale-ref", "ref": 3, "reason": "unknown" })),
        Some(StaleReason::UnknownRef)
    );
}

#[test]
fn check_state_answers_decode_and_an_unknown_checked_does_not() {
    use super::check::{CheckState, Checked};
    let decode = |answer: serde_json::Value| serde_json::from_value::<CheckState>(answer);
    let radio = decode(json!({"status": "ok", "kind": "radio", "checked": true})).expect("radio");
    assert_eq!(
        (radio.kind.as_str(), radio.checked),
        ("radio", Checked::Flag(true))
    );
    let mixed =
        decode(json!({"status": "ok", "kind": "checkbox", "checked": "mixed"})).expect("mixed");
    assert_eq!(mixed.checked.as_str(), "mixed");
    let off = decode(json!({"status": "ok", "kind": "switch", "checked": false})).expect("off");
    assert_eq!(off.checked.as_str(), "unchecked");
    assert!(decode(json!({"status": "ok", "kind": "checkbox", "checked": "mixd"})).is_err());
    assert!(decode(json!({"status": "ok", "kind": "checkbox"})).is_err());
    // `"mixed"` is the one word the script writes for `checked` besides a flag.
    let script = crate::js::ACTIONABILITY;
    assert!(script.contains("checked: a === \"mixed\" ? \"mixed\" : a === \"true\""));
    assert!(script.contains("checked: target.indeterminate && target.type === \"checkbox\" ? \"mixed\" : target.checked"));
}
