//! Unit tests for the initialize result; the wire behaviour is tested in `mcp/tests/wire/`.

use serde_json::json;

use super::*;

#[test]
fn initialize_echoes_a_supported_version() {
    for version in PROTOCOL_VERSIONS {
        assert_eq!(
            initialize_result(Some(version))["protocolVersion"],
            json!(version)
        );
    }
}

#[test]
fn initialize_falls_back_to_the_latest_version() {
    assert_eq!(
        initialize_result(Some("1999-01-01"))["protocolVersion"],
        json!("2025-11-25")
    );
    assert_eq!(
        initialize_result(None)["protocolVersion"],
        json!("2025-11-25")
    );
    let result = initialize_result(None);
    assert_eq!(result["serverInfo"]["name"], json!("chromate"));
    assert_eq!(
        result["capabilities"],
        json!({ "tools": {}, "resources": {} })
    );
    assert!(INSTRUCTIONS.starts_with("One browser per session."));
}
