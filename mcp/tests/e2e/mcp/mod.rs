//! The MCP server end to end: the real `chromate mcp` binary over stdio, driving real headless
//! Chromium, one server (and so one browser) per test.
//!
//! Each test is a transcript: tool calls with their results checked, the main failure of each
//! tool, and the observation after mutating tools. The shutdown tests prove by PID that the
//! server's browser (a descendant of the server process) is gone after stdin EOF and after
//! SIGTERM. The server is driven through the stdio client the wire tests use too
//! ([`chromate_tests::McpClient`], whose `ok` and `err` check every result's shape): every read
//! has a deadline; nothing sleeps. The binary is cargo's fresh build
//! ([`crate::util::chromate_binary`]).

use std::time::{Duration, Instant};

use chromate_tests::{procs, McpClient, McpCommand};
use serde_json::{json, Value};

use crate::util::chromate_binary;

mod balancer; // two --http servers behind nginx, sticky by session, on one Browserless pool; a server killed mid-run
mod crash; // tabs that crash or trap the agent: a killed renderer, an alert loop, a page that keeps navigating
mod evidence; // browser_screenshot, browser_a11y, browser_trace: files, quotas, viewers, a killed server
mod hostile; // pages that hang, loop, flood, override built-ins or navigate themselves while loading
mod lifecycle; // the server process: shutdown by pid on EOF and signals, relaunches, endpoints, a missing browser
mod network; // mocks, blocked origins, downloads, saved state, uploads under the working directory
mod observations; // batches, the logs journal and its tripwire, what each host family shows the model
mod pool; // --cdp-endpoint on Browserless, a real pool: ws and http forms, refusals, queues, sessions it ends
mod tabs; // calls that name a tab: two agents at once (Python SDK), batch steps, a tab closed mid-call
mod tools; // the page tools one by one: navigate, act, snapshot, dialogs, eval, tabs, elements, expect
mod webmcp; // --caps webmcp: the page's own tools projected, called, followed across clicks, tabs and frames

/// How long one response may take (navigation waits are 30 s at most in these tests).
const DEADLINE: Duration = Duration::from_secs(60);

/// A running `chromate mcp` that launches the browser the caller names in `CHROMATE_BROWSER`.
/// A `tools/call` request sent now, answered later (read with `McpClient::response`).
fn send_call(mcp: &mut McpClient, tool: &str, arguments: Value) -> Value {
    let id = json!(mcp.fresh_id());
    mcp.send(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": { "name": tool, "arguments": arguments },
    }));
    id
}

fn start_mcp() -> McpClient {
    start_mcp_with(&[])
}

fn start_mcp_with(envs: &[(&str, &str)]) -> McpClient {
    start_mcp_with_args(&[], envs)
}

fn start_mcp_with_args(args: &[&str], envs: &[(&str, &str)]) -> McpClient {
    mcp_command(args, envs).spawn()
}

fn mcp_command(args: &[&str], envs: &[(&str, &str)]) -> McpCommand {
    McpCommand::new(chromate_binary())
        .args(args)
        .envs(envs)
        .keep_env("CHROMATE_BROWSER")
        .deadline(DEADLINE)
}

/// A `data:` URL of an HTML body.
fn data_url(html: &str) -> String {
    let mut url = String::from("data:text/html,");
    for byte in html.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// The tripwire of an observation: its last line, `errors: <n> (logCursor <c>)`, as (n, c).
fn tripwire_of(observation: Option<&str>) -> (u64, u64) {
    let text = observation.unwrap_or_default();
    let last = text.lines().last().unwrap_or_default();
    let numbers: Vec<u64> = last
        .trim_start_matches("errors: ")
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|part| part.parse().ok())
        .collect();
    assert!(
        last.starts_with("errors: ") && numbers.len() == 2,
        "no tripwire in {text:?}"
    );
    (numbers[0], numbers[1])
}

/// Asserts that every one of `pids` (a server's browser processes) is gone within 5 s.
fn assert_all_gone(pids: &[u32]) {
    if let Err(alive) =
        procs::wait_until_gone_blocking(pids, Instant::now() + Duration::from_secs(5))
    {
        panic!("browser processes outlived the server: {alive:?}");
    }
}
