//! Wire tests: scheduling, cancellation, progress, shutdown.

use super::*;

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
