//! Wire tests: the real `chromate` binary over stdio, no browser needed.
//!
//! The servers are driven by the stdio client shared with the end-to-end
//! tests (`chromate_tests::McpClient`): every read has a deadline, so a
//! misbehaving server fails a test instead of hanging it; nothing here
//! sleeps. Goldens live in `tests/expected/` (bless with `UPDATE_EXPECT=1`).

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chromate_tests::mcp_client::scrubbed_command;
use chromate_tests::{McpClient, McpCommand};
use expect_test::expect_file;
use serde_json::{json, Map, Value};

const DEADLINE: Duration = Duration::from_secs(15);
const FRAME_LIMIT: usize = 1_048_576;

/// `chromate` with the caller's `CHROMATE_*` variables scrubbed.
fn chromate() -> Command {
    scrubbed_command(env!("CARGO_BIN_EXE_chromate"), &[])
}

/// A running `chromate mcp`; `name` tells its artifacts directory apart.
fn start_server(name: &str) -> McpClient {
    start_server_with(name, &[], &[])
}

fn start_server_with(name: &str, args: &[&str], envs: &[(&str, &str)]) -> McpClient {
    McpCommand::new(env!("CARGO_BIN_EXE_chromate"))
        .label(name)
        .args(args)
        .envs(envs)
        .deadline(DEADLINE)
        .spawn()
}

/// A modern-era tool error's `structuredContent.error`.
trait ModernToolResults {
    fn call_modern_err(&mut self, tool: &str, arguments: Value) -> Value;
}

impl ModernToolResults for McpClient {
    fn call_modern_err(&mut self, tool: &str, arguments: Value) -> Value {
        let params = with_modern_meta(json!({ "name": tool, "arguments": arguments }));
        let response = self.request("tools/call", params);
        assert_eq!(response["result"]["isError"], json!(true), "{response}");
        assert_eq!(
            response["result"]["resultType"],
            json!("complete"),
            "{response}"
        );
        response["result"]["structuredContent"]["error"].clone()
    }
}

/// The result JSON a success carries as its first text block.
fn result_json(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    match serde_json::from_str(text) {
        Ok(value) => value,
        Err(err) => panic!("content[0] is not the result JSON ({err}): {result}"),
    }
}

/// An argument validation failure (§2): a tool error the model reads, INVALID_ARGUMENT with
/// `detail.{tool, argument}`, its text block saying the same. Returns (message, detail).
fn validation_error(response: &Value) -> (String, Value) {
    assert!(
        response.get("error").is_none(),
        "a protocol error: {response}"
    );
    let result = &response["result"];
    assert_eq!(result["isError"], json!(true), "{response}");
    let error = &result["structuredContent"]["error"];
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{response}");
    let message = error["message"].as_str().unwrap_or_default().to_owned();
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with(&format!(
            "error: {message}\ncode:  INVALID_ARGUMENT\nhint:  "
        )),
        "{text}"
    );
    assert!(error["detail"]["tool"].is_string(), "{response}");
    (message, error["detail"].clone())
}

fn error_of(response: &Value) -> (i64, String) {
    let error = &response["error"];
    (
        error["code"].as_i64().unwrap_or(0),
        error["message"].as_str().unwrap_or_default().to_owned(),
    )
}

// ---------------------------------------------------------------------------
// Lifecycle and methods
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// The modern era (2026-07-28) beside `initialize`
// ---------------------------------------------------------------------------

const SUPPORTED_VERSIONS: [&str; 5] = [
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// The per-request metadata a 2026-07-28 client sends.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "wire", "version": "1" },
    })
}

fn with_modern_meta(mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    params
}

/// A modern result without the fields only the modern era adds.
fn without_modern_fields(result: &Value) -> Value {
    let mut result = result.clone();
    if let Some(fields) = result.as_object_mut() {
        for key in ["resultType", "_meta", "ttlMs", "cacheScope"] {
            fields.remove(key);
        }
    }
    result
}

fn server_info() -> Value {
    json!({ "io.modelcontextprotocol/serverInfo": { "name": "chromate", "version": env!("CARGO_PKG_VERSION") } })
}

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

// ---------------------------------------------------------------------------
// Framing and JSON-RPC error classes
// ---------------------------------------------------------------------------

#[test]
fn malformed_frames_are_parse_errors_and_serving_continues() {
    let mut server = start_server("parse-errors");
    let nested_129 = format!("{}{}\n", "[".repeat(129), "]".repeat(129));
    let nested_128 = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":128,\"method\":\"ping\",\"params\":{{\"p\":{}{}}}}}\n",
        "[".repeat(126),
        "]".repeat(126)
    );
    let frames: [&[u8]; 4] = [
        b"{not json\n",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"\n",
        b"{\"a\":\"\xff\xfe\"}\n",
        nested_129.as_bytes(),
    ];
    for frame in frames {
        server.send_raw(frame);
        let response = server.recv();
        assert_eq!(response["id"], Value::Null, "{response}");
        assert_eq!(error_of(&response).0, -32700, "{response}");
        assert!(
            error_of(&response).1.starts_with("parse error: "),
            "{response}"
        );
    }
    server.send_raw(nested_128.as_bytes());
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": 128, "result": {} })
    );
}

#[test]
fn crlf_and_blank_lines_are_accepted() {
    let mut server = start_server("crlf");
    server.send_raw(b"\n\r\n   \n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n");
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": 1, "result": {} })
    );
}

#[test]
fn batch_arrays_are_invalid_requests_and_nothing_in_them_runs() {
    let mut server = start_server("batch-array");
    server.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]\n");
    let response = server.recv();
    assert_eq!(response["id"], Value::Null);
    assert_eq!(error_of(&response).0, -32600);
    server.send(&json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }));
    assert_eq!(
        server.recv()["id"],
        json!(3),
        "the batch's pings must not have run"
    );
}

#[test]
fn a_2025_03_26_session_answers_a_batch_with_an_array_of_its_responses() {
    let mut server = start_server("batch-2025-03-26");
    let init = server.request("initialize", json!({ "protocolVersion": "2025-03-26" }));
    assert_eq!(init["result"]["protocolVersion"], json!("2025-03-26"));
    // Two requests, a notification (never answered) and an invalid item (its error in place).
    server.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"},{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":5}]\n");
    let response = server.recv();
    let items = response
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {response}"));
    assert_eq!(items.len(), 3, "{response}");
    let by_id = |id: Value| {
        items
            .iter()
            .find(|item| item["id"] == id)
            .unwrap_or_else(|| panic!("no response for {id}: {response}"))
    };
    assert_eq!(by_id(json!(1))["result"], json!({}));
    assert_eq!(
        by_id(json!(2))["result"]["tools"].as_array().map(Vec::len),
        Some(28)
    );
    assert_eq!(error_of(by_id(json!(3))).0, -32600);
    // A batch of notifications gets no answer at all; an empty batch is an invalid request.
    server.send_raw(b"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]\n");
    server.send_raw(b"[]\n");
    let empty = server.recv();
    assert_eq!(empty["id"], Value::Null, "{empty}");
    assert_eq!(error_of(&empty).0, -32600);
    // A tool call inside a batch is answered in the array too.
    server.send(&json!([
        { "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": "browser_click", "arguments": {} } },
        { "jsonrpc": "2.0", "id": 8, "method": "ping" },
    ]));
    let response = server.recv();
    let ids: Vec<Value> = response
        .as_array()
        .map(|items| items.iter().map(|item| item["id"].clone()).collect())
        .unwrap_or_default();
    assert!(
        ids.contains(&json!(7)) && ids.contains(&json!(8)) && ids.len() == 2,
        "{response}"
    );
}

#[test]
fn later_revisions_keep_refusing_batches() {
    let mut server = start_server("batch-2025-06-18");
    server.request("initialize", json!({ "protocolVersion": "2025-06-18" }));
    server.send_raw(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n");
    let response = server.recv();
    assert_eq!(
        error_of(&response),
        (
            -32600,
            "invalid request: batch arrays are not supported".to_owned()
        )
    );
    server.send(&json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }));
    assert_eq!(
        server.recv()["id"],
        json!(3),
        "the batch's ping must not have run"
    );
}

#[test]
fn invalid_requests_carry_the_id_when_it_is_valid() {
    let mut server = start_server("invalid-request");
    let cases = [
        (json!("just a string"), Value::Null),
        (
            json!({ "jsonrpc": "1.0", "id": 5, "method": "ping" }),
            json!(5),
        ),
        (json!({ "id": 6, "method": "ping" }), json!(6)),
        (
            json!({ "jsonrpc": "2.0", "id": "s", "method": 17 }),
            json!("s"),
        ),
        (
            json!({ "jsonrpc": "2.0", "id": { "x": 1 }, "method": "ping" }),
            Value::Null,
        ),
        (
            json!({ "jsonrpc": "2.0", "id": 1.5, "method": "ping" }),
            Value::Null,
        ),
        (
            json!({ "jsonrpc": "2.0", "id": null, "method": "ping" }),
            Value::Null,
        ),
    ];
    for (message, id) in cases {
        server.send(&message);
        let response = server.recv();
        assert_eq!(response["id"], id, "{message}");
        assert_eq!(error_of(&response).0, -32600, "{message}");
        assert!(
            error_of(&response).1.starts_with("invalid request: "),
            "{response}"
        );
    }
    // An overflowing id is not an integer.
    server.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"ping\"}\n");
    let response = server.recv();
    assert_eq!(
        (response["id"].clone(), error_of(&response).0),
        (Value::Null, -32600)
    );
}

#[test]
fn non_object_params_are_invalid_params() {
    let mut server = start_server("params");
    for params in [json!([1]), json!("x"), json!(3)] {
        let response = server.request("ping", params.clone());
        assert_eq!(error_of(&response).0, -32602, "{params}");
    }
    assert_eq!(server.request("ping", Value::Null)["result"], json!({}));
}

/// A ping frame of exactly `len` bytes (terminator excluded).
fn ping_frame(id: i64, len: usize) -> Vec<u8> {
    let skeleton = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\",\"params\":{{\"pad\":\"\"}}}}"
    );
    let pad = len - skeleton.len();
    let frame = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(pad)
    );
    assert_eq!(frame.len(), len);
    frame.into_bytes()
}

#[test]
fn a_frame_of_exactly_one_mebibyte_is_served() {
    let mut server = start_server("frame-exact");
    let mut frame = ping_frame(1, FRAME_LIMIT);
    frame.push(b'\n');
    server.send_raw(&frame);
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": 1, "result": {} })
    );
    let mut frame = ping_frame(2, FRAME_LIMIT);
    frame.extend_from_slice(b"\r\n");
    server.send_raw(&frame);
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": 2, "result": {} })
    );
}

#[test]
fn one_byte_over_is_rejected_before_the_newline_and_serving_continues() {
    let mut server = start_server("frame-over");
    let frame = ping_frame(1, FRAME_LIMIT + 1);
    // No newline yet: the error must come anyway.
    server.send_raw(&frame);
    let response = server.recv();
    assert_eq!(
        response,
        json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "input frame exceeds 1048576-byte limit" } })
    );
    // The rest of that frame is discarded through the next newline.
    server.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}\n");
    server.send(&json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" }));
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": 3, "result": {} })
    );
}

#[test]
fn tools_call_protocol_errors() {
    let mut server = start_server("call-errors");
    let response = server.request("tools/call", json!({}));
    assert_eq!(
        error_of(&response),
        (-32602, "tools/call: missing \"name\"".to_owned())
    );
    let response = server.request("tools/call", json!({ "name": "browser_nope" }));
    assert_eq!(
        error_of(&response),
        (-32602, "unknown tool \"browser_nope\"".to_owned())
    );
    assert_eq!(response["error"]["data"], json!({ "tool": "browser_nope" }));
    let response = server.request("tools/list", json!({ "cursor": "abc" }));
    assert_eq!(error_of(&response).0, -32602);
    // Arguments that are not an object are the tool's argument error, which the model reads
    // (§2); only a missing or unknown name stays a protocol error.
    let response = server.request(
        "tools/call",
        json!({ "name": "browser_status", "arguments": [1] }),
    );
    let (_, detail) = validation_error(&response);
    assert_eq!(detail["tool"], json!("browser_status"));
    // A non-object `params` is a malformed tools/call.
    let response = server.request("tools/call", json!([1]));
    assert_eq!(error_of(&response).0, -32602);
}

#[test]
fn overflow_literals_parse_and_are_rejected_where_used() {
    let mut server = start_server("overflow");
    server.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"browser_logs\",\"arguments\":{\"limit\":1e400}}}\n");
    let response = server.recv();
    assert_eq!(
        validation_error(&response).0,
        "browser_logs: argument \"limit\" must be a finite number, got 1e400"
    );
    // Where unused, it is harmless.
    server.send_raw(
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":-1e999}}\n",
    );
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": 2, "result": {} })
    );
}

// ---------------------------------------------------------------------------
// tools/list and the schema walk
// ---------------------------------------------------------------------------

#[test]
fn tools_list_matches_the_golden_and_fits_the_budget() {
    let mut server = start_server("tools-list");
    let result = server.request("tools/list", json!({}))["result"].clone();
    let compact = result.to_string();
    assert!(
        compact.len() <= 24_576,
        "tools/list is {} bytes",
        compact.len()
    );
    let pretty = serde_json::to_string_pretty(&result).unwrap_or_default();
    expect_file!["expected/tools_list.json"].assert_eq(&format!("{pretty}\n"));
}

/// A value that satisfies a property schema.
fn valid_value(schema: &Value) -> Value {
    if let Some(values) = schema["enum"].as_array() {
        return values[0].clone();
    }
    match schema["type"].as_str() {
        Some("string") => json!("x"),
        Some("integer") | Some("number") => schema["minimum"].clone(),
        Some("boolean") => json!(false),
        Some("array") if schema["items"]["type"] == "object" => {
            json!([{ "tool": "browser_status" }])
        }
        Some("array") => json!(["x"]),
        other => panic!("unexpected schema type {other:?}"),
    }
}

fn minimal_arguments(schema: &Value) -> Map<String, Value> {
    let mut arguments = Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap_or_default();
        arguments.insert(name.to_owned(), valid_value(&schema["properties"][name]));
    }
    arguments
}

/// A marker replaced by a raw overflow literal in the frame text.
const OVERFLOW: &str = "__overflow_literal__";

struct Walk<'a> {
    server: &'a mut McpClient,
    tool: String,
    base: Map<String, Value>,
    n_checked: usize,
}

impl Walk<'_> {
    /// Calls the tool with `name` set to `value` and expects the INVALID_ARGUMENT tool error
    /// naming `argument`.
    fn rejects(&mut self, name: &str, value: Value, argument: &str, what: &str) {
        let mut arguments = self.base.clone();
        arguments.insert(name.to_owned(), value);
        self.rejects_arguments(Value::Object(arguments), argument, what);
    }

    fn rejects_arguments(&mut self, arguments: Value, argument: &str, what: &str) {
        let id = self.server.fresh_id();
        let frame = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": self.tool, "arguments": arguments } })
            .to_string()
            .replace(&format!("\"{OVERFLOW}\""), "1e400");
        self.server.send_raw(format!("{frame}\n").as_bytes());
        let response = self.server.response(&json!(id));
        let context = format!("{} {what} ({argument}): {response}", self.tool);
        let (message, detail) = validation_error(&response);
        assert!(
            message.starts_with(&format!("{}: ", self.tool)),
            "{context}"
        );
        // A batch step's message names the step's own argument.
        let named = argument.rsplit(".arguments.").next().unwrap_or(argument);
        assert!(message.contains(&format!("\"{named}")), "{context}");
        assert_eq!(detail["tool"], json!(self.tool), "{context}");
        let data_argument = detail["argument"].as_str().unwrap_or_default();
        assert!(data_argument.starts_with(argument), "{context}");
        self.n_checked += 1;
    }
}

#[test]
fn every_declared_constraint_of_every_tool_is_enforced() {
    let mut server = start_server("schema-walk");
    let tools = server.request("tools/list", json!({}))["result"]["tools"].clone();
    let mut n_checked = 0;
    for tool in tools.as_array().into_iter().flatten() {
        let name = tool["name"].as_str().unwrap_or_default().to_owned();
        let schema = &tool["inputSchema"];
        assert_eq!(schema["additionalProperties"], json!(false), "{name}");
        let base = minimal_arguments(schema);
        // The minimal arguments pass validation: whatever the call then does, it is no
        // argument error (those carry `detail.tool`; cross-argument rules do not).
        let response = server.call(&name, Value::Object(base.clone()));
        assert!(
            response.get("result").is_some()
                && response["result"]["structuredContent"]["error"]["detail"]
                    .get("tool")
                    .is_none(),
            "{name} minimal arguments rejected: {response}"
        );
        let mut walk = Walk {
            server: &mut server,
            tool: name.clone(),
            base,
            n_checked: 0,
        };
        walk.rejects("zz_unknown", json!(1), "zz_unknown", "unknown argument");
        for required in schema["required"].as_array().into_iter().flatten() {
            let required = required.as_str().unwrap_or_default();
            let mut arguments = walk.base.clone();
            arguments.remove(required);
            walk.rejects_arguments(Value::Object(arguments.clone()), required, "required");
            arguments.insert(required.to_owned(), Value::Null);
            walk.rejects_arguments(Value::Object(arguments), required, "required (null)");
        }
        for (property, prop) in schema["properties"].as_object().into_iter().flatten() {
            let mut covered: Vec<&str> = vec!["type", "description", "default", "items"];
            match prop["type"].as_str() {
                Some("string") => {
                    walk.rejects(property, json!(5), property, "type");
                    walk.rejects(property, json!(true), property, "type");
                    if let Some(values) = prop["enum"].as_array() {
                        walk.rejects(property, json!("not-a-listed-value"), property, "enum");
                        assert!(!values.is_empty());
                        covered.push("enum");
                    }
                    if let Some(max) = prop["maxLength"].as_u64() {
                        walk.rejects(
                            property,
                            json!("a".repeat(max as usize + 1)),
                            property,
                            "maxLength",
                        );
                        walk.rejects(
                            property,
                            json!("é".repeat(max as usize + 1)),
                            property,
                            "maxLength (code points)",
                        );
                        covered.push("maxLength");
                    }
                    if prop["minLength"].as_u64().is_some() {
                        walk.rejects(property, json!(""), property, "minLength");
                        covered.push("minLength");
                    }
                    if prop["pattern"].is_string() {
                        walk.rejects(property, json!("bad/name"), property, "pattern");
                        walk.rejects(property, json!(".hidden"), property, "pattern");
                        covered.push("pattern");
                    }
                }
                Some(kind @ ("integer" | "number")) => {
                    walk.rejects(property, json!("5"), property, "type");
                    walk.rejects(property, json!(OVERFLOW), property, "finite");
                    let min = prop["minimum"].as_f64().unwrap_or(0.0);
                    let max = prop["maximum"].as_f64().unwrap_or(0.0);
                    walk.rejects(property, json!(min - 1.0), property, "minimum");
                    walk.rejects(property, json!(max + 1.0), property, "maximum");
                    covered.extend(["minimum", "maximum"]);
                    if kind == "integer" {
                        walk.rejects(property, json!(min + 0.5), property, "integer");
                    }
                }
                Some("boolean") => {
                    walk.rejects(property, json!("true"), property, "type");
                    walk.rejects(property, json!(1), property, "type");
                }
                Some("array") => {
                    walk.rejects(property, json!("x"), property, "type");
                    let max = prop["maxItems"].as_u64().unwrap_or(0) as usize;
                    let item =
                        valid_value(&json!({ "type": "array", "items": prop["items"] }))[0].clone();
                    walk.rejects(
                        property,
                        Value::Array(vec![item; max + 1]),
                        property,
                        "maxItems",
                    );
                    covered.push("maxItems");
                    if prop["minItems"].as_u64().is_some_and(|min| min > 0) {
                        walk.rejects(property, json!([]), property, "minItems");
                        covered.push("minItems");
                    }
                    let items = &prop["items"];
                    let first = format!("{property}[0]");
                    walk.rejects(property, json!([5]), &first, "item type");
                    if let Some(item_max) = items["maxLength"].as_u64() {
                        walk.rejects(
                            property,
                            json!(["a".repeat(item_max as usize + 1)]),
                            &first,
                            "item maxLength",
                        );
                    }
                    if items["minLength"].as_u64().is_some() {
                        walk.rejects(
                            property,
                            json!(["ok", ""]),
                            &format!("{property}[1]"),
                            "item minLength",
                        );
                    }
                    if items["type"] == "object" {
                        // browser_batch steps: item shape, tool enum, nesting, nested arguments.
                        walk.rejects(
                            property,
                            json!([{ "tool": "browser_status", "x": 1 }]),
                            &format!("{first}.x"),
                            "item unknown key",
                        );
                        walk.rejects(
                            property,
                            json!([{ "tool": "browser_nope" }]),
                            &format!("{first}.tool"),
                            "item tool enum",
                        );
                        walk.rejects(
                            property,
                            json!([{}]),
                            &format!("{first}.tool"),
                            "item tool required",
                        );
                        walk.rejects(
                            property,
                            json!([{ "tool": "browser_status", "arguments": [] }]),
                            &format!("{first}.arguments"),
                            "item arguments type",
                        );
                        walk.rejects(property, json!([{ "tool": "browser_status" }, { "tool": "browser_logs", "arguments": { "limit": 0 } }]), "steps[1].arguments.limit", "nested argument");
                        let nested = walk.server.call(
                            &name,
                            json!({ "steps": [{ "tool": name, "arguments": {} }] }),
                        );
                        let (message, detail) = validation_error(&nested);
                        assert_eq!(message, "browser_batch: steps[0] (browser_batch): browser_batch cannot be nested");
                        assert_eq!(detail["argument"], json!("steps[0].tool"));
                    }
                }
                other => panic!("{name}.{property}: unexpected type {other:?}"),
            }
            for key in prop
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, _)| key.as_str())
            {
                assert!(
                    covered.contains(&key),
                    "{name}.{property}: constraint {key} is not exercised"
                );
            }
        }
        n_checked += walk.n_checked;
    }
    assert!(n_checked > 400, "only {n_checked} rejections checked");
}

// ---------------------------------------------------------------------------
// Scheduling, cancellation, progress, shutdown
// ---------------------------------------------------------------------------

#[test]
fn ping_is_answered_during_a_slow_call_and_progress_names_the_phase() {
    let mut server = start_server("slow-call");
    server.send(
        &json!({ "jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {
        "name": "browser_logs", "arguments": { "action": "wait", "timeout_ms": 2500 },
        "_meta": { "progressToken": "tok" } } }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "id": "ping", "method": "ping" }));
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": "ping", "result": {} })
    );
    // Progress arrives after about a second, before the response.
    let progress = server.recv();
    assert_eq!(
        progress["method"],
        json!("notifications/progress"),
        "{progress}"
    );
    assert_eq!(progress["params"]["progressToken"], json!("tok"));
    assert_eq!(
        progress["params"]["message"],
        json!("waiting for a matching log entry")
    );
    assert!(progress["params"]["progress"]
        .as_u64()
        .is_some_and(|seconds| seconds >= 1));
    let response = server.response(&json!("slow"));
    let error = &response["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], json!("TIMEOUT"));
    assert_eq!(
        error["message"],
        json!("logs wait: nothing matched within 2500ms")
    );
    // Whatever was stashed arrived before the response.
    assert!(server
        .take_stashed()
        .iter()
        .all(|m| m["method"] == json!("notifications/progress")));
    // Nothing follows the response for that token.
    server.send(&json!({ "jsonrpc": "2.0", "id": "after", "method": "ping" }));
    assert_eq!(
        server.recv(),
        json!({ "jsonrpc": "2.0", "id": "after", "result": {} })
    );
}

#[test]
fn tool_calls_run_in_arrival_order_and_cancellation_drops_them() {
    let mut server = start_server("cancel");
    let wait = |id: &str| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "browser_logs", "arguments": { "action": "wait", "timeout_ms": 60000 } } })
    };
    server.send(&wait("running"));
    server.send(&wait("queued"));
    server.send(&json!({ "jsonrpc": "2.0", "id": "status", "method": "tools/call", "params": { "name": "browser_status" } }));
    // Queued behind the waits: status answers only after both are cancelled.
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "queued" } }));
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "running", "reason": "user" } }));
    let first = server.recv();
    assert_eq!(
        first["id"],
        json!("status"),
        "cancelled calls must not answer: {first}"
    );
    assert_eq!(result_json(&first["result"])["ready"], json!(false));
    server.send(&json!({ "jsonrpc": "2.0", "id": "end", "method": "ping" }));
    assert_eq!(server.recv()["id"], json!("end"));
}

#[test]
fn stdin_eof_cancels_the_running_call_and_exits_zero() {
    let mut server = start_server("eof");
    server.send(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "browser_logs", "arguments": { "action": "wait", "timeout_ms": 60000 } } }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" }));
    assert_eq!(server.recv()["id"], json!(2));
    let started = Instant::now();
    server.close_stdin();
    let status = server.wait_exit(Duration::from_secs(5));
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let stashed = server.take_stashed();
    assert!(
        stashed.iter().all(|m| m["id"] != json!(1)),
        "cancelled call answered: {stashed:?}"
    );
}

#[cfg(unix)]
#[test]
fn sigterm_exits_zero_within_five_seconds() {
    let mut server = start_server("sigterm");
    server.send(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "browser_logs", "arguments": { "action": "wait", "timeout_ms": 60000 } } }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" }));
    assert_eq!(server.recv()["id"], json!(2));
    let killed = Command::new("kill")
        .arg("-TERM")
        .arg(server.pid().to_string())
        .status();
    assert!(killed.is_ok_and(|status| status.success()));
    let status = server.wait_exit(Duration::from_secs(5));
    assert!(status.success(), "{status:?}");
}

// ---------------------------------------------------------------------------
// Tools that need no browser
// ---------------------------------------------------------------------------

#[test]
fn status_before_launch() {
    let mut server = start_server("status");
    let status = server.ok("browser_status", json!({})).0;
    assert_eq!(status["ready"], json!(false));
    for field in ["browser", "browserVersion", "browserPid", "activeUrl"] {
        assert_eq!(status[field], Value::Null, "{field}");
    }
    assert_eq!(status["mode"], json!("launch"));
    assert_eq!(status["serverPid"], json!(server.pid()));
    assert_eq!(status["headless"], json!(true));
    assert_eq!(status["viewport"], json!({ "width": 1280, "height": 800 }));
    let dir = status["artifactsDir"].as_str().unwrap_or_default();
    let expected_prefix = format!(
        "{}/chromate-mcp-{}-",
        server.artifacts_dir().display(),
        server.pid()
    );
    assert!(dir.starts_with(&expected_prefix), "{dir}");
    // `<stamp>-<16 hex digits>`: a name nobody else can guess and plant first.
    let (stamp, suffix) = dir[expected_prefix.len()..]
        .split_once('-')
        .unwrap_or_default();
    assert_eq!(stamp.len(), "YYYYMMDDTHHMMSSZ".len(), "{dir}");
    assert!(
        suffix.len() == 16 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
        "{dir}"
    );
    // Created lazily: a status call creates nothing.
    assert!(!Path::new(dir).exists());

    let mut headed = start_server_with(
        "status-headed",
        &["--headed", "--cdp-endpoint", "http://127.0.0.1:1"],
        &[],
    );
    let status = headed.ok("browser_status", json!({})).0;
    assert_eq!(
        (status["mode"].clone(), status["headless"].clone()),
        (json!("cdp-endpoint"), json!(false))
    );
}

#[test]
fn success_results_carry_compact_json_text_and_structured_content_only_when_asked() {
    let expected =
        json!({ "entries": [], "cursor": 0, "dropped": 0, "truncated": false, "capturing": false });
    let mut asked = start_server_with("shape-structured", &["--structured-content"], &[]);
    let result = asked.call("browser_logs", json!({}))["result"].clone();
    assert_eq!(
        result,
        json!({
            "content": [{ "type": "text", "text": expected.to_string() }],
            "structuredContent": { "result": expected },
        })
    );
    let mut by_env = start_server_with(
        "shape-env",
        &[],
        &[("CHROMATE_MCP_STRUCTURED_CONTENT", "1")],
    );
    let result = by_env.call("browser_logs", json!({}))["result"].clone();
    assert_eq!(result["structuredContent"]["result"], expected);

    let mut server = start_server("shape");
    let response = server.call("browser_logs", json!({}));
    let result = &response["result"];
    // By default nothing but the content blocks: the text is what every host shows.
    assert_eq!(
        result,
        &json!({ "content": [{ "type": "text", "text": expected.to_string() }] })
    );
    assert_eq!(
        server.ok("browser_logs", json!({ "action": "clear" })).0,
        json!({ "ok": true, "cleared": 0, "capturing": false })
    );
    let error = server.err("browser_logs", json!({ "kind": "console,warnings" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(error["message"], json!("logs: unknown kind \"warnings\""));
    assert_eq!(
        error["detail"]["allowed"],
        json!([
            "console",
            "error",
            "request",
            "response",
            "requestfailed",
            "download"
        ])
    );
}

#[test]
fn mocks_are_held_by_the_server() {
    let mut server = start_server("mocks");
    let added = server
        .ok(
            "browser_mock",
            json!({ "action": "add", "pattern": "https://api.test/*", "body": "{\"a\":1}" }),
        )
        .0;
    assert_eq!(
        added,
        json!({ "ok": true, "action": "add", "id": "m1", "pattern": "https://api.test/*", "status": 200 })
    );
    let blocked = server
        .ok(
            "browser_mock",
            json!({ "action": "block", "pattern": "**/ads/*" }),
        )
        .0;
    assert_eq!(
        blocked,
        json!({ "ok": true, "action": "block", "id": "m2", "pattern": "**/ads/*" })
    );
    let list = server.ok("browser_mock", json!({})).0;
    assert_eq!(
        list,
        json!({ "mocks": [
        { "id": "m1", "pattern": "https://api.test/*", "kind": "mock", "status": 200 },
        { "id": "m2", "pattern": "**/ads/*", "kind": "block" } ], "count": 2 })
    );
    assert_eq!(
        server
            .ok("browser_mock", json!({ "action": "remove", "id": "m1" }))
            .0,
        json!({ "ok": true, "action": "remove", "id": "m1", "remaining": 1 })
    );
    let error = server.err("browser_mock", json!({ "action": "remove", "id": "m1" }));
    assert_eq!(
        (error["code"].clone(), error["detail"]["open"].clone()),
        (json!("INVALID_ARGUMENT"), json!(["m2"]))
    );
    let error = server.err("browser_mock", json!({ "action": "add" }));
    assert_eq!(
        error["message"],
        json!("mock: action \"add\" needs \"pattern\"")
    );
    for _ in 0..19 {
        server.ok("browser_mock", json!({ "action": "block", "pattern": "x" }));
    }
    let error = server.err("browser_mock", json!({ "action": "block", "pattern": "y" }));
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("STATE_INVALID"),
            json!("mock: limit reached (20 active)")
        )
    );
    assert_eq!(
        server.ok("browser_mock", json!({ "action": "clear" })).0,
        json!({ "ok": true, "action": "clear", "cleared": 20 })
    );
    let again = server
        .ok("browser_mock", json!({ "action": "block", "pattern": "z" }))
        .0;
    assert_eq!(again["id"], json!("m22"), "ids are never reused");
}

#[test]
fn trace_state_and_page_lists_never_launch() {
    let mut server = start_server("lists-no-launch");
    let trace = server.ok("browser_trace", json!({})).0;
    assert_eq!(trace["running"], json!(false));
    assert!(trace["root"]
        .as_str()
        .unwrap_or_default()
        .ends_with("/traces"));
    let error = server.err("browser_trace", json!({ "action": "stop" }));
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("STATE_INVALID"),
            json!("trace stop: no trace is recording")
        )
    );
    assert_eq!(
        server.ok("browser_page", json!({ "action": "list" })).0,
        json!({ "pages": [], "count": 0, "active": null })
    );
    let state_root = server.artifacts_dir().join("state");
    let states = server.ok("browser_state", json!({})).0;
    assert_eq!(
        states,
        json!({ "states": [], "root": state_root.display().to_string() })
    );
    assert!(!state_root.exists(), "list must not create the state root");
    let _ = std::fs::create_dir_all(&state_root);
    let _ = std::fs::write(state_root.join("admin.json"), "{}");
    assert_eq!(
        server.ok("browser_state", json!({ "action": "list" })).0["states"],
        json!(["admin"])
    );
    let error = server.err(
        "browser_state",
        json!({ "action": "load", "name": "guest" }),
    );
    assert_eq!(
        error["message"],
        json!("state load: no saved state named \"guest\"")
    );
    assert_eq!(error["detail"]["available"], json!(["admin"]));
}

#[test]
fn tool_errors_render_error_code_and_hint_lines_without_launching() {
    let mut server = start_server("tool-error");
    let response = server.call("browser_trace", json!({ "action": "stop" }));
    let result = &response["result"];
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        json!("STATE_INVALID")
    );
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "error: trace stop: no trace is recording");
    assert_eq!(lines[1], "code:  STATE_INVALID");
    assert!(lines[2].starts_with("hint:  "));
    assert_eq!(
        result["content"].as_array().map(Vec::len),
        Some(1),
        "errors carry no observation"
    );
}

#[test]
fn cross_argument_rules_fail_before_the_browser() {
    let mut server = start_server("cross-args");
    let cases = [
        ("browser_navigate", json!({ "url": "example.com" }), "navigate: \"example.com\" is not an absolute http, https, file or data URL, or about:blank"),
        ("browser_mouse", json!({ "action": "click", "x": 3 }), "mouse: x and y go together"),
        ("browser_mouse", json!({ "action": "move" }), "mouse: move needs a target (selector or x/y)"),
        ("browser_mouse", json!({ "action": "click", "x": 1, "y": 2, "selector": "#a" }), "mouse: pass either selector or x/y, not both"),
        ("browser_wait", json!({ "state": "load", "selector": "#a" }), "wait: state \"load\" is a load state and takes no selector"),
        ("browser_wait", json!({ "state": "hidden" }), "wait: state \"hidden\" needs a selector"),
        ("browser_read", json!({ "field": "attr", "selector": "a" }), "read: field \"attr\" needs \"name\""),
        ("browser_expect", json!({ "what": "url" }), "expect: \"url\" needs exactly one of \"expected\" and \"contains\""),
        ("browser_expect", json!({ "what": "text", "selector": "#m", "expected": "a", "contains": "b" }), "expect: \"text\" needs exactly one of \"expected\" and \"contains\""),
        ("browser_element", json!({ "action": "select", "selector": "#s" }), "element: action \"select\" needs \"value\""),
        ("browser_key", json!({ "action": "press", "key": "Control+A" }), "key: \"Control+A\" is a chord; browser_key takes one key"),
        ("browser_dialog", json!({ "action": "dismiss", "text": "x" }), "dialog: text is only for action \"accept\", not \"dismiss\""),
        ("browser_upload", json!({ "selector": "#f", "files": ["Cargo.toml", "definitely/not/here"] }), "upload: files[1] does not exist or is not a regular file"),
        ("browser_screenshot", json!({ "selector": "#a", "full_page": true }), "screenshot: full_page cannot be combined with selector"),
        ("browser_a11y", json!({ "rules": "label", "disable_rules": "region" }), "a11y: pass either rules or disable_rules, not both"),
        ("browser_page", json!({ "action": "select" }), "page select: missing \"target\""),
        ("browser_state", json!({ "action": "save" }), "state save: missing \"name\""),
    ];
    for (tool, arguments, message) in cases {
        let error = server.err(tool, arguments);
        assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{tool}: {error}");
        assert_eq!(error["message"], json!(message), "{tool}");
        assert!(error["hint"].is_string(), "{tool}: every error has a hint");
    }
}

/// Uploads read only under the server's working directory (here the crate's `mcp/`): a file
/// outside, existing or not, gets one message naming the rule and the flag, before any browser
/// work (none is launched).
#[test]
fn uploads_outside_the_working_directory_are_refused_alike_whether_they_exist_or_not() {
    let mut server = start_server("upload-rule");
    let outside = "upload: files[0] is outside the server's working directory and the client's roots, the only places uploads may read from (--allow-unrestricted-file-access lifts this)";
    let mut errors = Vec::new();
    for file in [
        "/etc/hostname",
        "/definitely/not/here",
        "../Cargo.toml",
        "/proc/self/environ",
    ] {
        let error = server.err(
            "browser_upload",
            json!({ "selector": "#f", "files": [file] }),
        );
        assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{file}: {error}");
        assert_eq!(error["message"], json!(outside), "{file}");
        assert_eq!(
            error["detail"],
            json!({ "argument": "files[0]", "reason": "outside-allowed-directories" }),
            "{file}"
        );
        assert!(
            error["hint"]
                .as_str()
                .is_some_and(|hint| hint.contains("--allow-unrestricted-file-access")),
            "{error}"
        );
        errors.push(error);
    }
    assert!(
        errors.windows(2).all(|pair| pair[0] == pair[1]),
        "existing and missing files outside answer alike: {errors:?}"
    );
    let status = server.ok("browser_status", json!({})).0;
    assert_eq!(status["browserPid"], Value::Null, "no browser was launched");
}

#[test]
fn issue_12_an_unsupported_scheme_names_the_supported_ones_and_launches_nothing() {
    let mut server = start_server("schemes");
    let error = server.err("browser_navigate", json!({ "url": "ftp://127.0.0.1/x" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
    assert_eq!(
        error["hint"],
        json!("use an http, https, file or data URL, or about:blank; the ftp: scheme is not supported")
    );
    let error = server.err(
        "browser_page",
        json!({ "action": "open", "url": "ftp://127.0.0.1/x" }),
    );
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|h| h.contains("ftp: scheme is not supported")),
        "{error}"
    );
    let error = server.err("browser_navigate", json!({ "url": "example.com" }));
    assert_eq!(
        error["hint"],
        json!("add the scheme, e.g. https://example.com")
    );
    // Rejected by validation: no browser was started for any of them.
    let status = server.call("browser_status", json!({}));
    let text = status["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let status: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    assert_eq!(status["ready"], json!(false), "{status}");
}

#[test]
fn batch_runs_steps_in_order_and_stops_at_the_first_failure() {
    let mut server = start_server("batch");
    let response = server.call(
        "browser_batch",
        json!({ "steps": [
        { "tool": "browser_mock", "arguments": { "action": "block", "pattern": "x" } },
        { "tool": "browser_trace", "arguments": { "action": "stop" } },
        { "tool": "browser_status" } ] }),
    );
    let result = &response["result"];
    assert_eq!(result["isError"], json!(true));
    let batch = &result["structuredContent"]["result"];
    assert_eq!(
        (
            batch["ok"].clone(),
            batch["ran"].clone(),
            batch["skipped"].clone(),
            batch["failedStep"].clone()
        ),
        (json!(false), json!(2), json!(1), json!(1))
    );
    assert_eq!(batch["steps"][1]["error"]["code"], json!("STATE_INVALID"));
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("1 ✓ browser_mock  "), "{text}");
    assert!(text.contains("\n2 ✗ browser_trace  "), "{text}");
    // The tripwire (§8) follows the summary.
    assert!(
        text.contains("\nstopped at step 2 of 3; 1 later step(s) not run\n"),
        "{text}"
    );

    // A successful batch follows §3: its result JSON is structured only when asked for, since
    // content[0] is the step summary.
    let response = server.call("browser_batch", json!({ "continue_on_error": true, "steps": [{ "tool": "browser_mock" }, { "tool": "browser_status" }] }));
    assert!(
        response["result"].get("structuredContent").is_none(),
        "{response}"
    );
    let mut structured = start_server_with("batch-structured", &["--structured-content"], &[]);
    structured.call("browser_mock", json!({ "action": "block", "pattern": "x" }));
    let response = structured.call("browser_batch", json!({ "continue_on_error": true, "steps": [{ "tool": "browser_mock" }, { "tool": "browser_status" }] }));
    let ok = response["result"]["structuredContent"]["result"].clone();
    assert_eq!(
        (ok["ok"].clone(), ok["ran"].clone()),
        (json!(true), json!(2))
    );
    assert_eq!(ok["steps"][0]["result"]["count"], json!(1));

    let error = server.err("browser_batch", json!({ "steps": [{ "tool": "browser_status" }, { "tool": "browser_mock", "arguments": { "action": "add" } }] }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(error["detail"]["step"], json!(1));
    assert_eq!(
        error["message"],
        json!("batch: steps[1] (browser_mock): mock: action \"add\" needs \"pattern\"")
    );
}

// ---------------------------------------------------------------------------
// Spilling and the response cap
// ---------------------------------------------------------------------------

#[test]
fn large_text_spills_to_the_session_directory() {
    let mut server = start_server_with("spill", &[], &[("CHROMATE_MCP_SPILL_BYTES", "200")]);
    for idx in 0..5 {
        server.ok(
            "browser_mock",
            json!({ "action": "block", "pattern": format!("https://spill.test/{idx}/*") }),
        );
    }
    let response = server.call("browser_mock", json!({}));
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let last = text.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("(full output: ") && last.ends_with(" bytes)"),
        "{text}"
    );
    let path = last
        .trim_start_matches("(full output: ")
        .split(", ")
        .next()
        .unwrap_or_default();
    assert!(path.ends_with("/0001-browser_mock.json"), "{path}");
    let full = std::fs::read_to_string(path).unwrap_or_default();
    let full: Value = serde_json::from_str(&full).unwrap_or_default();
    assert_eq!(full["count"], json!(5), "{full}");
    assert_eq!(full["mocks"][4]["pattern"], json!("https://spill.test/4/*"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0)
        };
        assert_eq!(mode(Path::new(path)), 0o600);
        assert_eq!(
            mode(Path::new(path).parent().unwrap_or(Path::new("/"))),
            0o700
        );
    }
}

#[test]
fn artifact_quota_turns_spills_into_truncated_text() {
    let mut server = start_server_with(
        "quota",
        &[],
        &[
            ("CHROMATE_MCP_SPILL_BYTES", "100"),
            ("CHROMATE_MCP_MAX_ARTIFACT_FILES", "0"),
        ],
    );
    for idx in 0..5 {
        server.ok(
            "browser_mock",
            json!({ "action": "block", "pattern": format!("https://quota.test/{idx}/*") }),
        );
    }
    let response = server.call("browser_mock", json!({}));
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.ends_with("… (truncated: artifact quota reached)"),
        "{text}"
    );
    assert!(text.len() <= 100);
}

#[test]
fn responses_over_the_cap_truncate_the_result_json() {
    for structured in [false, true] {
        let args: &[&str] = if structured {
            &["--structured-content"]
        } else {
            &[]
        };
        let mut server = start_server_with(
            "cap",
            args,
            &[
                ("CHROMATE_MCP_MAX_RESPONSE_BYTES", "1024"),
                ("CHROMATE_MCP_SPILL_BYTES", "100000"),
            ],
        );
        for idx in 0..20 {
            server.call("browser_mock", json!({ "action": "block", "pattern": format!("https://cap.test/{idx}/{}", "p".repeat(100)) }));
        }
        let id = server.fresh_id();
        server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "browser_mock" } }));
        let response = server.response(&json!(id));
        assert!(
            response.to_string().len() <= 1024,
            "{} bytes",
            response.to_string().len()
        );
        // By default the result JSON is content[0]; with structuredContent on, that copy is
        // truncated too (and may then be cut), the structured one stays whole JSON.
        let result = if structured {
            response["result"]["structuredContent"]["result"].clone()
        } else {
            assert!(response["result"].get("structuredContent").is_none());
            result_json(&response["result"])
        };
        {
            assert_eq!(result["truncated"], json!(true), "{response}");
            assert!(result["totalBytes"].as_u64().unwrap_or(0) > 2000);
            assert!(result["fullOutput"]
                .as_str()
                .is_some_and(|path| path.ends_with("-browser_mock.json")));
        }
    }
}

// ---------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------

fn run_with_open_stdin(args: &[&str]) -> (ExitStatus, String, String) {
    // No runtime directory: `init --mcp` then lists no running HTTP server of the user's.
    let mut child = match chromate()
        .args(args)
        .env("CHROMATE_RUNTIME_DIR", "/nonexistent/chromate-wire-tests")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(err) => panic!("cannot start chromate: {err}"),
    };
    // stdin stays open: a process that read it would hang, and the deadline would fail.
    let _stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let mut err = String::new();
        if let Some(stdout) = stdout.as_mut() {
            let _ = stdout.read_to_string(&mut out);
        }
        if let Some(stderr) = stderr.as_mut() {
            let _ = stderr.read_to_string(&mut err);
        }
        let _ = sender.send((out, err));
    });
    let Ok((out, err)) = receiver.recv_timeout(DEADLINE) else {
        let _ = child.kill();
        panic!("chromate {args:?} did not exit");
    };
    let status = match child.wait() {
        Ok(status) => status,
        Err(err) => panic!("{err}"),
    };
    (status, out, err)
}

#[test]
fn bad_cli_flags_exit_2_without_reading_stdin() {
    for args in [
        &["mcp", "--bogus"][..],
        &["mcp", "--browser"],
        &["mcp", "--allowed-origins", "not-an-origin"],
        &["mcp", "--blocked-origins", "https://a.com/path"],
        &["nope"],
        &[],
        &["init", "--mcp", "--agent", "vim"],
    ] {
        let (status, out, err) = run_with_open_stdin(args);
        assert_eq!(status.code(), Some(2), "{args:?}");
        assert!(out.is_empty(), "{args:?}: stdout must stay clean: {out}");
        assert!(err.starts_with("chromate: "), "{args:?}: {err}");
    }
    // The list of known agents, one host per line with its aliases, all thirteen, then the
    // hint naming the help.
    let (_, _, err) = run_with_open_stdin(&["init", "--mcp", "--agent", "vim"]);
    assert!(
        err.contains("\n  claude, claude-code ") && err.contains("\n  cline "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 15, "{err}");
    assert_eq!(
        err.lines().last(),
        Some("hint: chromate init --help"),
        "{err}"
    );
}

#[test]
fn invalid_environment_values_warn_on_stderr_and_fall_back() {
    let mut server = start_server_with("bad-env", &[], &[("CHROMATE_AGENT_TIMEOUT", "soon")]);
    let tools = server.request("tools/list", json!({}));
    assert_eq!(
        tools["result"]["tools"][1]["inputSchema"]["properties"]["timeout_ms"]["default"],
        json!(5000)
    );
    let mut custom = start_server_with("env-timeout", &[], &[("CHROMATE_AGENT_TIMEOUT", "1234")]);
    let tools = custom.request("tools/list", json!({}));
    assert_eq!(
        tools["result"]["tools"][1]["inputSchema"]["properties"]["timeout_ms"]["default"],
        json!(1234)
    );
}

#[test]
fn init_mcp_prints_every_client_snippet() {
    let (status, out, err) = run_with_open_stdin(&["init", "--mcp"]);
    assert!(status.success() && err.is_empty(), "{err}");
    expect_file!["expected/init_mcp.txt"].assert_eq(&out);
    let (status, out, _) = run_with_open_stdin(&["init", "--mcp", "--agent", "vscode"]);
    assert!(status.success());
    assert!(out.starts_with("# VS Code — .vscode/mcp.json"), "{out}");
    assert!(out.contains(r#"{ "servers": { "chromate": { "type": "stdio", "command": "chromate", "args": ["mcp"] } } }"#));
    let (status, out, _) = run_with_open_stdin(&["init", "--mcp", "--agent", "claude-code"]);
    assert!(
        status.success() && out.starts_with("# Claude Code — .mcp.json"),
        "{out}"
    );
    let (status, out, err) = run_with_open_stdin(&["init", "--mcp", "--agent", "vim"]);
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("unknown agent \"vim\"") && err.contains("copilot-cli, copilot"),
        "{err}"
    );
}

#[test]
fn help_goes_to_stdout_and_exits_zero() {
    let (status, out, _) = run_with_open_stdin(&["mcp", "--help"]);
    assert!(status.success());
    assert!(out.starts_with("usage: chromate mcp [options]"));
}

#[test]
fn environment_warnings_go_to_stderr_and_stdout_stays_clean() {
    let output = chromate()
        .arg("mcp")
        .env("CHROMATE_MCP_SPILL_BYTES", "lots")
        .env("CHROMATE_MCP_ARTIFACTS_DIR", std::env::temp_dir())
        .stdin(Stdio::null())
        .output();
    let Ok(output) = output else {
        panic!("cannot run chromate");
    };
    assert!(output.status.success(), "{output:?}");
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning: ignoring CHROMATE_MCP_SPILL_BYTES=\"lots\""),
        "{stderr}"
    );
}

#[test]
fn other_methods_and_rejected_calls_are_answered_while_a_call_runs() {
    let mut server = start_server("out-of-order");
    server.send(
        &json!({ "jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {
        "name": "browser_logs", "arguments": { "action": "wait", "timeout_ms": 60000 } } }),
    );
    server.send(
        &json!({ "jsonrpc": "2.0", "id": "bad", "method": "tools/call", "params": {
        "name": "browser_click", "arguments": {} } }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "id": "list", "method": "tools/list" }));
    let bad = server.recv();
    assert_eq!(bad["id"], json!("bad"));
    assert_eq!(
        validation_error(&bad).0,
        "browser_click: missing required argument \"selector\""
    );
    assert_eq!(server.recv()["id"], json!("list"));
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "slow" } }));
    server.send(&json!({ "jsonrpc": "2.0", "id": "next", "method": "tools/call", "params": { "name": "browser_status" } }));
    assert_eq!(server.recv()["id"], json!("next"));
}

#[test]
fn batch_progress_counts_steps() {
    let mut server = start_server("batch-progress");
    server.send(
        &json!({ "jsonrpc": "2.0", "id": "batch", "method": "tools/call", "params": {
        "name": "browser_batch",
        "arguments": { "steps": [
            { "tool": "browser_status" },
            { "tool": "browser_logs", "arguments": { "action": "wait", "timeout_ms": 2500 } } ] },
        "_meta": { "progressToken": 7 } } }),
    );
    let progress = server.recv();
    assert_eq!(
        progress["method"],
        json!("notifications/progress"),
        "{progress}"
    );
    assert_eq!(progress["params"]["progressToken"], json!(7));
    assert_eq!(
        (
            progress["params"]["progress"].clone(),
            progress["params"]["total"].clone()
        ),
        (json!(1), json!(2))
    );
    assert_eq!(
        progress["params"]["message"],
        json!("waiting for a matching log entry")
    );
    let response = server.response(&json!("batch"));
    let batch = &response["result"]["structuredContent"]["result"];
    assert_eq!(
        (batch["ok"].clone(), batch["failedStep"].clone()),
        (json!(false), json!(1))
    );
    assert_eq!(batch["steps"][1]["error"]["code"], json!("TIMEOUT"));
}

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

#[test]
fn artifacts_are_listed_and_read_as_resources_and_nothing_else_is() {
    let mut server = start_server_with("resources", &[], &[("CHROMATE_MCP_SPILL_BYTES", "600")]);
    assert_eq!(
        server.request("resources/list", json!({}))["result"],
        json!({ "resources": [] })
    );
    for idx in 0..5 {
        server.ok(
            "browser_mock",
            json!({ "action": "block", "pattern": format!("https://res.test/{idx}/{}", "p".repeat(100)) }),
        );
    }
    // The listing spills to `0001-browser_mock.json`.
    let listing = server.call("browser_mock", json!({}));
    let listed = server.request("resources/list", json!({}))["result"].clone();
    let resources = listed["resources"].as_array().cloned().unwrap_or_default();
    assert_eq!(resources.len(), 1, "{listed}");
    let resource = &resources[0];
    assert_eq!(resource["name"], json!("0001-browser_mock.json"));
    assert_eq!(resource["mimeType"], json!("application/json"));
    let uri = resource["uri"].as_str().unwrap_or_default().to_owned();
    let path = uri.trim_start_matches("file://");
    let text = listing["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains(&format!("(full output: {path}, ")), "{text}");

    let read = server.request("resources/read", json!({ "uri": uri }))["result"].clone();
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], json!(uri));
    let full: Value =
        serde_json::from_str(contents["text"].as_str().unwrap_or_default()).unwrap_or_default();
    assert_eq!(full["count"], json!(5), "{read}");
    assert_eq!(
        resource["size"],
        json!(contents["text"].as_str().map_or(0, str::len))
    );

    // Outside the session directory, `..`, other schemes: unknown, whether the file exists
    // or not.
    let outside = server.artifacts_dir().join("outside.txt");
    std::fs::write(&outside, "secret").unwrap_or_default();
    let dir = Path::new(path).parent().unwrap_or(Path::new("/"));
    for bad in [
        format!("file://{}", outside.display()),
        format!("file://{}/../outside.txt", dir.display()),
        "file:///etc/passwd".to_owned(),
        "http://127.0.0.1:1/x".to_owned(),
        format!("file://{}", dir.display()),
    ] {
        let response = server.request("resources/read", json!({ "uri": bad }));
        assert_eq!(
            error_of(&response),
            (-32002, format!("unknown resource {bad}")),
            "{response}"
        );
    }
    #[cfg(unix)]
    {
        let link = dir.join("0002-link.txt");
        std::os::unix::fs::symlink(&outside, &link).unwrap_or_default();
        let bad = format!("file://{}", link.display());
        let response = server.request("resources/read", json!({ "uri": bad }));
        assert_eq!(error_of(&response).0, -32002, "{response}");
    }
    let response = server.request("resources/read", json!({}));
    assert_eq!(error_of(&response).0, -32602);
    // Reading launched nothing.
    assert_eq!(
        server.ok("browser_status", json!({})).0["ready"],
        json!(false)
    );
}

// ---------------------------------------------------------------------------
// Refs before any browser work (§6.2, §6.3)
// ---------------------------------------------------------------------------

#[test]
fn refs_on_a_fresh_session_fail_before_any_browser_work() {
    let mut server = start_server("fresh-refs");
    // A bare ref this session never issued: BARE_REF, and no browser is launched for it.
    let error = server.err("browser_click", json!({ "selector": "e42" }));
    assert_eq!(error["code"], json!("BARE_REF"), "{error}");
    assert_eq!(
        error["message"],
        json!("click: e42 looks like a snapshot ref but this session never issued it")
    );
    assert_eq!(error["detail"], json!({ "ref": "e42" }));
    // `ref=e1` with no snapshot yet: row 2 (no-snapshot) comes before row 3 (unknown-ref).
    for tool in ["browser_click", "browser_hover", "browser_read"] {
        let error = server.err(tool, json!({ "selector": "ref=e1" }));
        assert_eq!(error["code"], json!("STALE_REF"), "{tool}: {error}");
        assert_eq!(
            error["detail"],
            json!({ "ref": "e1", "reason": "no-snapshot" }),
            "{tool}"
        );
    }
    assert_eq!(
        server.ok("browser_status", json!({})).0["ready"],
        json!(false),
        "no browser was launched"
    );
}
