//! Wire tests: framing and JSON-RPC error classes.

use super::*;

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
    // (docs/mcp.md#errors); only a missing or unknown name stays a protocol error.
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
