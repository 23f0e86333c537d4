//! Unit tests for the error-code table, tool error text and size bounds.

use expect_test::expect;
use serde_json::json;

use super::*;

#[test]
fn every_code_round_trips_through_its_wire_spelling() {
    assert_eq!(ToolErrorCode::ALL.len(), 19);
    for code in ToolErrorCode::ALL {
        assert_eq!(ToolErrorCode::parse(code.as_str()), Some(*code));
        assert!(!code.when().is_empty());
    }
    assert_eq!(ToolErrorCode::parse("no_match"), None);
}

#[test]
fn error_text_has_error_code_and_hint_lines() {
    let error = ToolError::new(
        ToolErrorCode::NoMatch,
        "click: no element matches css=#nope",
    )
    .with_hint("check the selector with browser_find")
    .with_detail(json!({ "selector": "css=#nope" }));
    expect![[r#"
        error: click: no element matches css=#nope
        code:  NO_MATCH
        hint:  check the selector with browser_find"#]]
    .assert_eq(&error.to_text(None));
    expect![[r#"{"content":[{"text":"error: click: no element matches css=#nope\ncode:  NO_MATCH\nhint:  check the selector with browser_find","type":"text"}],"isError":true,"structuredContent":{"error":{"code":"NO_MATCH","detail":{"selector":"css=#nope"},"hint":"check the selector with browser_find","message":"click: no element matches css=#nope"}}}"#]]
    .assert_eq(&error.to_call_result(None).to_string());
}

#[test]
fn recovery_snapshot_follows_the_hint() {
    let mut error = ToolError::new(
        ToolErrorCode::StaleRef,
        "ref=e3 is stale: the element was removed from the document",
    );
    error.recovery_snapshot = Some("page: t — about:blank\ne9: button \"Save\"".into());
    expect![[r#"
        error: ref=e3 is stale: the element was removed from the document
        code:  STALE_REF
        recovery snapshot:
        page: t — about:blank
        e9: button "Save""#]]
    .assert_eq(&error.to_text(None));
}

#[test]
fn oversized_message_hint_and_detail_are_bounded() {
    let error = ToolError::new(ToolErrorCode::DriverError, "x".repeat(40_000))
        .with_hint("é".repeat(5_000))
        .with_detail(json!({ "cdpMessage": "y".repeat(20_000) }));
    let value = error.to_json();
    let message = value["message"].as_str().unwrap_or_default();
    assert!(message.len() <= MAX_MESSAGE_BYTES && message.ends_with('…'));
    let hint = value["hint"].as_str().unwrap_or_default();
    assert!(hint.len() <= MAX_HINT_BYTES);
    assert_eq!(value["detail"]["truncated"], json!(true));
    assert!(value["detail"]["totalBytes"].as_u64().unwrap_or(0) > 20_000);
}

#[test]
fn cut_bytes_respects_char_boundaries() {
    assert_eq!(cut_bytes("abc", 3, "…"), "abc");
    assert_eq!(cut_bytes("ééé", 5, "."), "éé.");
    assert_eq!(cut_bytes("ééé", 4, "."), "é.");
}

#[test]
fn issue_12_an_invalid_selector_keeps_the_browsers_sentence_in_detail() {
    let err = chromate::Error::InvalidSelector {
        verb: "click".into(),
        selector: "css=[".into(),
        reason: "not a valid CSS selector".into(),
        browser_message: Some(
            "Failed to execute 'querySelector' on 'DocumentFragment': '[' is not a valid selector."
                .into(),
        ),
    };
    let tool_error = from_engine("click", &err);
    assert_eq!(tool_error.code, ToolErrorCode::InvalidArgument);
    assert_eq!(
        tool_error.message,
        "click: invalid selector css=[: not a valid CSS selector"
    );
    expect![[r#"{"cdpMessage":"Failed to execute 'querySelector' on 'DocumentFragment': '[' is not a valid selector.","reason":"invalid-selector","selector":"css=["}"#]]
    .assert_eq(&tool_error.detail.unwrap_or_default().to_string());
}

#[test]
fn every_engine_code_is_a_public_code_of_the_same_spelling() {
    for engine_code in chromate::ErrorCode::ALL {
        let code = ToolErrorCode::parse(engine_code.as_str());
        assert!(
            code.is_some(),
            "engine code {engine_code} has no public code: it would fall back to DRIVER_ERROR"
        );
        assert_eq!(
            from_engine_code(*engine_code),
            code.unwrap_or(ToolErrorCode::DriverError)
        );
    }
}

#[test]
fn an_invalid_argument_names_its_argument_and_allowed_values_in_detail() {
    let err =
        chromate::Error::invalid_argument_of("files", "upload: files needs at least one path");
    let tool_error = from_engine("upload", &err);
    assert_eq!(tool_error.code, ToolErrorCode::InvalidArgument);
    assert_eq!(tool_error.message, "upload: files needs at least one path");
    assert_eq!(
        tool_error.detail,
        Some(json!({ "reason": "invalid", "argument": "files" }))
    );
    let err = chromate::Error::invalid_argument("seed storage: the storage has no origin");
    assert_eq!(
        from_engine("seed", &err).detail,
        Some(json!({ "reason": "invalid" }))
    );
}
