//! Wire tests: the modern era (2026-07-28) beside `initialize`.

use super::*;

#[test]
fn server_discover_has_the_2026_07_28_shape() {
    let mut server = start_server("discover");
    let initialize = server.request("initialize", json!({ "protocolVersion": "2025-11-25" }));
    let response = server.request("server/discover", json!({ "_meta": modern_meta() }));
    assert_eq!(
        response["result"],
        json!({
            "resultType": "complete",
            "supportedVersions": SUPPORTED_VERSIONS,
            "capabilities": { "tools": {}, "resources": {} },
            "instructions": initialize["result"]["instructions"],
            "_meta": server_info(),
            "ttlMs": 3_600_000,
            "cacheScope": "public",
        })
    );
    // Both eras advertise the same capabilities.
    assert_eq!(
        response["result"]["capabilities"],
        initialize["result"]["capabilities"]
    );
    // Discovery exists only in the modern era: without its metadata the
    // request is malformed.
    let bare = server.request("server/discover", json!({}));
    assert_eq!(
        error_of(&bare),
        (
            -32602,
            "invalid params: server/discover needs _meta \"io.modelcontextprotocol/protocolVersion\""
                .to_owned()
        )
    );
}

#[test]
fn modern_tools_list_and_tools_call_are_served_without_initialize() {
    let mut server = start_server("modern-stateless");
    let modern_list = server.request("tools/list", with_modern_meta(json!({})));
    let result = &modern_list["result"];
    assert_eq!(result["resultType"], json!("complete"));
    assert_eq!(result["_meta"], server_info());
    assert_eq!(
        (&result["ttlMs"], &result["cacheScope"]),
        (&json!(3_600_000), &json!("private"))
    );
    assert_eq!(result["tools"].as_array().map(Vec::len), Some(28));

    // The same process serves a legacy client too, with the same tools.
    let legacy_list = server.request("tools/list", json!({}));
    assert_eq!(without_modern_fields(result), legacy_list["result"]);

    // Tool results and tool errors are the same in both eras.
    for arguments in [json!({}), json!({ "kind": "console,warnings" })] {
        let params = json!({ "name": "browser_logs", "arguments": arguments });
        let modern = server.request("tools/call", with_modern_meta(params.clone()));
        let legacy = server.request("tools/call", params);
        assert_eq!(
            modern["result"]["resultType"],
            json!("complete"),
            "{modern}"
        );
        assert_eq!(modern["result"]["_meta"], server_info());
        assert!(modern["result"].get("ttlMs").is_none(), "{modern}");
        assert_eq!(without_modern_fields(&modern["result"]), legacy["result"]);
        assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    }
    let modern_error = server.call_modern_err("browser_logs", json!({ "kind": "nope" }));
    assert_eq!(modern_error["code"], json!("INVALID_ARGUMENT"));

    // Protocol errors are the same too.
    let unknown = json!({ "name": "browser_frobnicate", "arguments": {} });
    let modern = server.request("tools/call", with_modern_meta(unknown.clone()));
    let legacy = server.request("tools/call", unknown);
    assert_eq!(modern["error"], legacy["error"]);
    assert_eq!(error_of(&modern).0, -32602);
}

#[test]
fn modern_requests_are_stateless_and_initialize_still_works_beside_them() {
    let mut server = start_server("modern-beside-legacy");
    let modern = server.request("resources/templates/list", with_modern_meta(json!({})));
    assert_eq!(
        modern["result"],
        json!({ "resourceTemplates": [], "resultType": "complete", "_meta": server_info(), "ttlMs": 3_600_000, "cacheScope": "public" })
    );
    // A legacy request right after a modern one gets the legacy shape.
    assert_eq!(
        server.request("resources/templates/list", json!({}))["result"],
        json!({ "resourceTemplates": [] })
    );
    // Neither era serves prompts: none are declared.
    let modern = server.request("prompts/list", with_modern_meta(json!({})));
    assert_eq!(error_of(&modern).0, -32601, "{modern}");
    let init = server.request("initialize", json!({ "protocolVersion": "2025-06-18" }));
    assert_eq!(init["result"]["protocolVersion"], json!("2025-06-18"));
    assert!(init["result"].get("resultType").is_none(), "{init}");
    // After initialize the modern era is still served, request by request.
    let templates = server.request("resources/templates/list", with_modern_meta(json!({})));
    assert_eq!(templates["result"]["resultType"], json!("complete"));
    assert_eq!(templates["result"]["cacheScope"], json!("public"));
    let resources = server.request("resources/list", with_modern_meta(json!({})));
    assert_eq!(
        (
            &resources["result"]["ttlMs"],
            &resources["result"]["cacheScope"]
        ),
        (&json!(0), &json!("private"))
    );
    // ping was removed by 2026-07-28; a legacy ping is still answered.
    let modern_ping = server.request("ping", with_modern_meta(json!({})));
    assert_eq!(
        error_of(&modern_ping),
        (-32601, "method not found: ping".to_owned())
    );
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn an_unsupported_protocol_version_is_the_unsupported_version_error() {
    let mut server = start_server("modern-unsupported");
    for method in ["server/discover", "tools/list", "tools/call"] {
        let mut params =
            json!({ "name": "browser_status", "arguments": {}, "_meta": modern_meta() });
        params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
        let response = server.request(method, params);
        assert_eq!(
            response["error"],
            json!({
                "code": -32022,
                "message": "unsupported protocol version: 1900-01-01",
                "data": { "supported": SUPPORTED_VERSIONS, "requested": "1900-01-01" },
            }),
            "{method}"
        );
    }
    // A modern request without client capabilities is malformed.
    let response = server.request(
        "tools/list",
        json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }),
    );
    let (code, message) = error_of(&response);
    assert_eq!(code, -32602);
    assert!(
        message.contains("io.modelcontextprotocol/clientCapabilities"),
        "{message}"
    );
    // A version chromate speaks through initialize is served as legacy.
    let mut params = json!({ "_meta": modern_meta() });
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let legacy = server.request("tools/list", params);
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    assert_eq!(legacy["result"]["tools"].as_array().map(Vec::len), Some(28));
}

#[test]
fn notifications_and_responses_are_never_answered() {
    let mut server = start_server("notifications");
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    server.send(
        &json!({ "jsonrpc": "2.0", "method": "notifications/whatever", "params": { "x": 1 } }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 424242 } }));
    server.send(&json!({ "jsonrpc": "2.0", "id": 9, "result": {} }));
    server.send(&json!({ "jsonrpc": "2.0", "id": 10, "error": { "code": 1, "message": "x" } }));
    server.send(&json!({ "jsonrpc": "2.0", "id": "last", "method": "ping" }));
    // The first thing on stdout is the ping's answer: nothing before it was answered.
    let first = server.recv();
    assert_eq!(
        first,
        json!({ "jsonrpc": "2.0", "id": "last", "result": {} })
    );
}
