//! Unit tests for the validator: check order, exact messages and batch steps.

use expect_test::{expect, Expect};
use serde_json::Value;

use crate::tools::schema::OVERFLOW_MARKER;
use crate::tools::{find, validate, Defaults};

const DEFAULTS: Defaults = Defaults {
    agent_timeout_ms: 5000,
};

/// Validates `arguments` (JSON text) for `tool`. The wire's frame parser (in the binary) turns
/// a number literal beyond a double into the overflow marker; `1e400` here stands for that.
fn check(tool: &str, arguments: &str, expect: Expect) {
    let Some(decl) = find(tool) else {
        panic!("no tool {tool}");
    };
    let marked = format!("\"{}1e400\"", OVERFLOW_MARKER.replace('\u{0}', "\\u0000"));
    let arguments: Value =
        serde_json::from_str(&arguments.replace("1e400", &marked)).unwrap_or(Value::Null);
    let actual = match validate(decl, Some(&arguments), &DEFAULTS) {
        Ok(valid) => format!("ok {}", Value::Object(valid)),
        Err(error) => format!("{}\n{}", error.full_message(), error.data()),
    };
    expect.assert_eq(&actual);
}

#[test]
fn valid_arguments_get_defaults_and_normalised_integers() {
    check(
        "browser_click",
        r#"{"selector":"a1","timeout_ms":5.0}"#,
        expect![[r#"ok {"selector":"a1","timeout_ms":5}"#]],
    );
    check(
        "browser_click",
        r#"{"selector":"a1","double":null}"#,
        expect![[r#"ok {"selector":"a1","timeout_ms":5000}"#]],
    );
    check(
        "browser_mouse",
        r#"{"action":"wheel"}"#,
        expect![[
            r#"ok {"action":"wheel","button":"left","delta_x":0.0,"delta_y":0.0,"timeout_ms":5000}"#
        ]],
    );
    check("browser_status", "null", expect!["ok {}"]);
}

#[test]
fn checks_run_in_the_contract_order() {
    check(
        "browser_click",
        "[]",
        expect![[r#"
        browser_click: arguments must be object, got array
        {"argument":"","tool":"browser_click"}"#]],
    );
    check(
        "browser_click",
        r#"{"zz":1,"aa":2,"selector":5}"#,
        expect![[r#"
            browser_click: unknown argument "aa"
            {"allowed":["selector","double","timeout_ms","tab"],"argument":"aa","tool":"browser_click","unknown":["aa","zz"]}"#]],
    );
    check(
        "browser_click",
        r#"{"selector":5}"#,
        expect![[r#"
        browser_click: argument "selector" must be string, got integer
        {"argument":"selector","expected":"string","tool":"browser_click"}"#]],
    );
    check(
        "browser_click",
        r#"{"selector":"a","timeout_ms":1e400}"#,
        expect![[r#"
        browser_click: argument "timeout_ms" must be a finite number, got 1e400
        {"argument":"timeout_ms","tool":"browser_click"}"#]],
    );
    check(
        "browser_click",
        r#"{"selector":"a","timeout_ms":2.5}"#,
        expect![[r#"
        browser_click: argument "timeout_ms" must be integer, got 2.5
        {"argument":"timeout_ms","tool":"browser_click"}"#]],
    );
    check(
        "browser_click",
        r#"{"selector":"a","timeout_ms":300001}"#,
        expect![[r#"
        browser_click: argument "timeout_ms" must be between 0 and 300000, got 300001
        {"argument":"timeout_ms","tool":"browser_click"}"#]],
    );
    check(
        "browser_dialog",
        r#"{"action":"ok"}"#,
        expect![[r#"
        browser_dialog: argument "action" must be one of: inspect, accept, dismiss
        {"allowed":["inspect","accept","dismiss"],"argument":"action","tool":"browser_dialog"}"#]],
    );
    check(
        "browser_press",
        r#"{"key":"x","selector":""}"#,
        expect![[r#"
        browser_press: argument "selector" must not be empty
        {"argument":"selector","tool":"browser_press"}"#]],
    );
    check(
        "browser_state",
        r#"{"name":"../etc"}"#,
        expect![[r#"
        browser_state: argument "name" must match ^[A-Za-z0-9_-]{1,64}$
        {"argument":"name","pattern":"^[A-Za-z0-9_-]{1,64}$","tool":"browser_state"}"#]],
    );
    check(
        "browser_click",
        r#"{"double":true}"#,
        expect![[r#"
        browser_click: missing required argument "selector"
        {"argument":"selector","tool":"browser_click"}"#]],
    );
}

#[test]
fn string_length_counts_code_points() {
    let ok = format!(r#"{{"key":"{}"}}"#, "é".repeat(64));
    check(
        "browser_press",
        &ok,
        expect![[
            r#"ok {"key":"éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé","timeout_ms":5000}"#
        ]],
    );
    let long = format!(r#"{{"key":"{}"}}"#, "é".repeat(65));
    check(
        "browser_press",
        &long,
        expect![[r#"
        browser_press: argument "key" is too long (65 characters; at most 64)
        {"argument":"key","tool":"browser_press"}"#]],
    );
}

#[test]
fn array_items_are_checked_with_indexed_paths() {
    check(
        "browser_upload",
        r#"{"selector":"f1","files":[]}"#,
        expect![[r#"
        browser_upload: argument "files" has too few items (0; at least 1)
        {"argument":"files","tool":"browser_upload"}"#]],
    );
    check(
        "browser_upload",
        r#"{"selector":"f1","files":["a","b","c",""]}"#,
        expect![[r#"
        browser_upload: argument "files[3]" must not be empty
        {"argument":"files[3]","tool":"browser_upload"}"#]],
    );
    check(
        "browser_upload",
        r#"{"selector":"f1","files":["a",1]}"#,
        expect![[r#"
        browser_upload: argument "files[1]" must be string, got integer
        {"argument":"files[1]","expected":"string","tool":"browser_upload"}"#]],
    );
}

#[test]
fn batch_steps_are_validated_against_their_own_tools() {
    check(
        "browser_batch",
        r#"{"steps":[{"tool":"browser_status"},{"tool":"browser_fill","arguments":{"selector":"a1","value":3}}]}"#,
        expect![[r#"
        browser_batch: steps[1] (browser_fill): argument "value" must be string, got integer
        {"argument":"steps[1].arguments.value","expected":"string","step":1,"stepTool":"browser_fill","tool":"browser_batch"}"#]],
    );
    check(
        "browser_batch",
        r#"{"steps":[{"tool":"browser_batch","arguments":{}}]}"#,
        expect![[r#"
        browser_batch: steps[0] (browser_batch): browser_batch cannot be nested
        {"argument":"steps[0].tool","tool":"browser_batch"}"#]],
    );
    check(
        "browser_batch",
        r#"{"steps":[{"tool":"browser_nope"}]}"#,
        expect![[r#"
        browser_batch: argument "steps[0].tool" must be one of: browser_navigate, browser_click, browser_fill, browser_type, browser_element, browser_press, browser_key, browser_mouse, browser_hover, browser_upload, browser_dialog, browser_find, browser_exists, browser_wait, browser_read, browser_expect, browser_snapshot, browser_locators, browser_a11y, browser_page, browser_logs, browser_mock, browser_state, browser_trace, browser_screenshot, browser_status, browser_advanced_eval
        {"allowed":["browser_navigate","browser_click","browser_fill","browser_type","browser_element","browser_press","browser_key","browser_mouse","browser_hover","browser_upload","browser_dialog","browser_find","browser_exists","browser_wait","browser_read","browser_expect","browser_snapshot","browser_locators","browser_a11y","browser_page","browser_logs","browser_mock","browser_state","browser_trace","browser_screenshot","browser_status","browser_advanced_eval"],"argument":"steps[0].tool","tool":"browser_batch"}"#]],
    );
    check(
        "browser_batch",
        r#"{"steps":[{"tool":"browser_click","extra":1}]}"#,
        expect![[r#"
        browser_batch: unknown argument "steps[0].extra"
        {"allowed":["tool","arguments"],"argument":"steps[0].extra","tool":"browser_batch","unknown":["extra"]}"#]],
    );
    check(
        "browser_batch",
        r#"{"steps":[{"tool":"browser_click","arguments":{}}]}"#,
        expect![[r#"
        browser_batch: steps[0] (browser_click): missing required argument "selector"
        {"argument":"steps[0].arguments.selector","step":0,"stepTool":"browser_click","tool":"browser_batch"}"#]],
    );
    check(
        "browser_batch",
        r#"{"steps":[{"tool":"browser_logs"}]}"#,
        expect![[
            r#"ok {"observe":"delta","steps":[{"arguments":{"action":"list","limit":20,"timeout_ms":5000},"tool":"browser_logs"}]}"#
        ]],
    );
}
