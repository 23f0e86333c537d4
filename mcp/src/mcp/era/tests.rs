//! Unit tests for era classification and result decoration; the wire
//! behaviour is tested in `mcp/tests/wire/`.

use serde_json::{json, Value};

use super::*;

fn modern_params(version: &str) -> Value {
    json!({ "_meta": {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_CAPABILITIES_KEY: {},
        "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "1" },
    } })
}

fn classify(method: &str, params: Value) -> Result<Era, RpcError> {
    Era::of_request(&json!(7), method, &params)
}

#[test]
fn requests_without_protocol_metadata_are_legacy() {
    assert_eq!(classify("tools/list", json!({})), Ok(Era::Legacy));
    assert_eq!(
        classify("tools/call", json!({ "_meta": { "progressToken": 1 } })),
        Ok(Era::Legacy)
    );
    assert_eq!(
        classify("tools/list", json!({ "_meta": "not an object" })),
        Ok(Era::Legacy)
    );
}

#[test]
fn initialize_is_legacy_whatever_it_carries() {
    assert_eq!(
        classify("initialize", modern_params("2026-07-28")),
        Ok(Era::Legacy)
    );
}

#[test]
fn a_modern_version_with_capabilities_is_modern() {
    assert_eq!(
        classify("tools/list", modern_params("2026-07-28")),
        Ok(Era::Modern)
    );
    assert_eq!(
        classify("server/discover", modern_params("2026-07-28")),
        Ok(Era::Modern)
    );
}

#[test]
fn a_legacy_version_in_meta_is_served_as_legacy() {
    assert_eq!(
        classify("tools/list", modern_params("2025-11-25")),
        Ok(Era::Legacy)
    );
}

#[test]
fn an_unknown_version_is_the_unsupported_version_error() {
    let error = classify("tools/list", modern_params("1900-01-01")).unwrap_err();
    assert_eq!(error.code, -32022);
    assert_eq!(error.id, json!(7));
    assert_eq!(error.message, "unsupported protocol version: 1900-01-01");
    assert_eq!(
        error.data,
        Some(json!({
            "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
            "requested": "1900-01-01",
        }))
    );
}

#[test]
fn malformed_modern_metadata_is_invalid_params() {
    let missing_capabilities = classify(
        "tools/list",
        json!({ "_meta": { PROTOCOL_VERSION_KEY: "2026-07-28" } }),
    )
    .unwrap_err();
    assert_eq!(missing_capabilities.code, -32602);
    assert!(missing_capabilities
        .message
        .contains(CLIENT_CAPABILITIES_KEY));

    let missing_version = classify(
        "tools/list",
        json!({ "_meta": { CLIENT_CAPABILITIES_KEY: {} } }),
    )
    .unwrap_err();
    assert_eq!(missing_version.code, -32602);
    assert!(missing_version.message.contains(PROTOCOL_VERSION_KEY));

    let numeric_version = classify(
        "tools/list",
        json!({ "_meta": { PROTOCOL_VERSION_KEY: 2026 } }),
    )
    .unwrap_err();
    assert_eq!(numeric_version.code, -32602);

    let capabilities_not_object = classify(
        "tools/list",
        json!({ "_meta": { PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: [] } }),
    )
    .unwrap_err();
    assert_eq!(capabilities_not_object.code, -32602);
}

#[test]
fn discover_needs_protocol_metadata() {
    let error = classify("server/discover", json!({})).unwrap_err();
    assert_eq!(error.code, -32602);
    assert_eq!(
        error.message,
        "invalid params: server/discover needs _meta \"io.modelcontextprotocol/protocolVersion\""
    );
}

#[test]
fn the_modern_era_answers_discover_and_refuses_removed_methods() {
    let discover = Era::Modern.answer(&json!(1), "server/discover");
    assert_eq!(discover, Ok(Some(discover_result())));
    let ping = Era::Modern.answer(&json!(1), "ping").unwrap_err();
    assert_eq!(
        (ping.code, ping.message.as_str()),
        (-32601, "method not found: ping")
    );
    assert_eq!(Era::Modern.answer(&json!(1), "tools/list"), Ok(None));
    assert_eq!(Era::Legacy.answer(&json!(1), "ping"), Ok(None));
    assert_eq!(Era::Legacy.answer(&json!(1), "server/discover"), Ok(None));
}

#[test]
fn discover_result_has_the_revision_shape() {
    let result = Era::Modern.decorate("server/discover", discover_result());
    assert_eq!(
        result,
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
            "capabilities": { "tools": {}, "resources": {} },
            "instructions": INSTRUCTIONS,
            "_meta": { SERVER_INFO_KEY: { "name": "chromate", "version": env!("CARGO_PKG_VERSION") } },
            "ttlMs": 3_600_000,
            "cacheScope": "public",
        })
    );
}

#[test]
fn modern_results_carry_result_type_server_info_and_cache_hints() {
    let tools = Era::Modern.decorate("tools/list", json!({ "tools": [] }));
    assert_eq!(tools["resultType"], json!("complete"));
    assert_eq!(tools["_meta"][SERVER_INFO_KEY]["name"], json!("chromate"));
    assert_eq!(
        (&tools["ttlMs"], &tools["cacheScope"]),
        (&json!(3_600_000), &json!("private"))
    );

    let read = Era::Modern.decorate("resources/read", json!({ "contents": [] }));
    assert_eq!(
        (&read["ttlMs"], &read["cacheScope"]),
        (&json!(0), &json!("private"))
    );

    let call = Era::Modern.decorate(
        "tools/call",
        json!({ "content": [], "isError": true, "_meta": { "com.example/x": 1 } }),
    );
    assert_eq!(call["resultType"], json!("complete"));
    assert_eq!(call["_meta"]["com.example/x"], json!(1));
    assert_eq!(call["_meta"][SERVER_INFO_KEY]["name"], json!("chromate"));
    assert!(call.get("ttlMs").is_none() && call.get("cacheScope").is_none());
}

#[test]
fn legacy_results_are_unchanged() {
    let result = json!({ "tools": [] });
    assert_eq!(Era::Legacy.decorate("tools/list", result.clone()), result);
}
