//! The client against real processes over stdio: small `sh` servers that write what a test
//! needs (a request of their own, a line that is no JSON, a notification) and a server that
//! ignores EOF. What `chromate mcp` itself answers is the wire tests' business
//! (`mcp/tests/wire/`, through `tests/support/mcp_client.rs`).

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use chromate_mcp_client::{ClientError, Others, StdioClient};
use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(10);

/// `sh -c script`, stderr discarded.
fn sh(script: &str) -> Command {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script).stderr(Stdio::null());
    command
}

/// A server that reads one request, asks the client for its roots, reads the answer and
/// answers the request with it (`result.answer`), after a notification and a line of no JSON.
const ASKS_BACK: &str = r#"
read -r request
echo 'not json'
echo '{"jsonrpc":"2.0","method":"notifications/message","params":{}}'
echo '{"jsonrpc":"2.0","id":"s1","method":"roots/list"}'
read -r answer
echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"answer\":$answer}}"
read -r rest || true
"#;

#[test]
fn a_driver_refuses_the_servers_requests_and_drops_the_rest() {
    let mut client = StdioClient::spawn(&mut sh(ASKS_BACK), 1, Others::Refuse).unwrap();
    let response = client.request("ping", json!({}), TIMEOUT).unwrap();
    assert_eq!(
        response["result"]["answer"],
        json!({"jsonrpc": "2.0", "id": "s1", "error": {"code": -32601, "message": "not offered"}}),
        "{response}"
    );
    assert!(client.take_stashed().is_empty());
    assert!(client.shutdown(TIMEOUT).is_some_and(|s| s.success()));
}

#[test]
fn a_recorder_keeps_every_other_message_in_order() {
    let mut client = StdioClient::spawn(&mut sh(ASKS_BACK), 1, Others::Keep).unwrap();
    client
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .unwrap();
    // The server waits for an answer to its request: the client sends none on its own.
    let mut seen: Vec<Value> = Vec::new();
    while seen.len() < 3 {
        seen.push(client.recv(TIMEOUT).unwrap());
    }
    assert_eq!(seen[0]["unparsable stdout line"], json!("not json"));
    assert_eq!(seen[1]["method"], json!("notifications/message"));
    assert_eq!(seen[2]["method"], json!("roots/list"));
    client
        .send(&json!({"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}))
        .unwrap();
    let response = client.response(&json!(1), TIMEOUT).unwrap();
    assert_eq!(response["result"]["answer"]["result"], json!({"roots": []}));
    client.close_stdin();
    assert!(client.wait_exit(TIMEOUT).unwrap().success());
}

#[test]
fn a_silent_server_times_out_and_one_that_exits_is_said_to_have_closed() {
    let mut silent =
        StdioClient::spawn(&mut sh("read -r line; exec sleep 30"), 1, Others::Keep).unwrap();
    let err = silent.request("ping", json!({}), Duration::from_millis(200));
    assert!(
        matches!(&err, Err(ClientError::Timeout { awaited }) if awaited == "response to id 1"),
        "{err:?}"
    );
    let mut gone = StdioClient::spawn(&mut sh("read -r line"), 1, Others::Refuse).unwrap();
    let err = gone.request("ping", json!({}), TIMEOUT);
    assert!(matches!(err, Err(ClientError::Closed { .. })), "{err:?}");
}

#[test]
fn shutdown_kills_a_server_that_ignores_eof_and_reaps_it() {
    // `sleep` holds neither stdin nor stdout open past the shell, which ignores EOF by
    // never reading: the client has to kill it.
    let client = StdioClient::spawn(&mut sh("exec sleep 30"), 1, Others::Refuse).unwrap();
    let pid = client.pid();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    assert_eq!(client.shutdown(Duration::from_millis(200)), None);
    // Reaped by the client: no process, not even a zombie, has the PID now (a new process
    // could take it only later, never between the kill and the reaping).
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    assert!(!status.contains("State:\tZ"), "{status}");
    assert!(
        !status.contains("Name:\tsleep"),
        "the server is still running: {status}"
    );
}
