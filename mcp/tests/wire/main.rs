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

/// An argument validation failure (docs/mcp.md#errors): a tool error the model reads, INVALID_ARGUMENT with
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

mod cli; // CLI
mod framing; // Framing and JSON-RPC error classes
mod lifecycle; // Lifecycle and methods
mod modern; // The modern era (2026-07-28) beside `initialize`
mod no_browser; // Tools that need no browser
mod refs;
mod resources; // Resources
mod scheduling; // Scheduling, cancellation, progress, shutdown
mod schema; // tools/list and the schema walk
mod spilling; // Spilling and the response cap // Refs before any browser work (docs/mcp.md#refs)
