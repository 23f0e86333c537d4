//! Wire tests: lifecycle and methods.

use super::*;

#[test]
fn initialize_echoes_a_supported_version_and_rejects_a_second_initialize() {
    let mut server = start_server("init");
    let response = server.request("initialize", json!({ "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }));
    let result = &response["result"];
    assert_eq!(result["protocolVersion"], json!("2025-03-26"));
    assert_eq!(
        result["capabilities"],
        json!({ "tools": {}, "resources": {} })
    );
    assert_eq!(result["serverInfo"]["name"], json!("chromate"));
    assert_eq!(
        result["serverInfo"]["version"],
        json!(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        result["instructions"],
        json!("One browser per session. Page-changing tools add a text block: the page as numbered lines (`e7: button \"Save\" #save`), later only +/- changes. Pass `ref=e7` (or `e7`) as the next selector. Refs are session state: never put them in tests; browser_locators gives durable selectors. A removed element or a navigation makes a ref STALE_REF; the error carries a recovery snapshot with current refs. Probe guesses with browser_exists; branch on structuredContent.error.code.")
    );
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let again = server.request("initialize", json!({ "protocolVersion": "2025-03-26" }));
    assert_eq!(error_of(&again).0, -32600);
    assert!(error_of(&again).1.starts_with("invalid request: "));
}

#[test]
fn unsupported_protocol_version_gets_the_latest() {
    for (requested, expected) in [
        ("1999-01-01", "2025-11-25"),
        ("2024-11-05", "2024-11-05"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
    ] {
        let mut server = start_server("versions");
        let response = server.request("initialize", json!({ "protocolVersion": requested }));
        assert_eq!(
            response["result"]["protocolVersion"],
            json!(expected),
            "{requested}"
        );
    }
}

#[test]
fn requests_before_initialize_are_served() {
    let mut server = start_server("before-init");
    let response = server.request("tools/list", json!({}));
    assert_eq!(
        response["result"]["tools"].as_array().map(Vec::len),
        Some(28)
    );
}

#[test]
fn empty_lists_and_ping() {
    let mut server = start_server("lists");
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    assert_eq!(
        server.request("resources/list", json!({}))["result"],
        json!({ "resources": [] })
    );
    assert_eq!(
        server.request("resources/templates/list", json!({}))["result"],
        json!({ "resourceTemplates": [] })
    );
}

#[test]
fn unknown_methods_are_method_not_found() {
    let mut server = start_server("unknown-method");
    // No prompts capability is declared, so the prompts methods are unknown too.
    for method in [
        "tools/frobnicate",
        "subscriptions/listen",
        "",
        "prompts/list",
        "prompts/get",
    ] {
        let response = server.request(method, json!({}));
        assert_eq!(
            error_of(&response),
            (-32601, format!("method not found: {method}"))
        );
    }
}
