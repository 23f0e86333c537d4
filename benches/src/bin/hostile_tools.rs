//! Every MCP tool on a page whose script never yields (issue 25), through the real `chromate
//! mcp` binary on stdio: per tool, the call's wall time, its error code, whether the hint says
//! chromate stopped the script, and the time until a `browser_navigate` to a plain fixture page
//! succeeds in the same tab.
//!
//! The tools are the ones `tools/list` offers by default (the 28 browser tools; the `--caps`
//! tools each load their URL in a fresh browser of their own, not in the session's tab). Each
//! call gets a fresh hung page (`hang-later.html`, which tells the fixture server just before
//! its endless loop), valid arguments, and `timeout_ms: 1000` where the tool takes it; the
//! server runs with `CHROMATE_AGENT_TIMEOUT=1000`, which bounds the tools without `timeout_ms`.
//! The goal: each call returns within 1000 ms + 0.5 s, and the tab navigates again within 2 s.
//!
//! ```text
//! cargo build --release -p chromate-mcp --bin chromate -p chromate-benches
//! target/release/hostile_tools
//! ```

use std::time::{Duration, Instant};

use chromate_tests::mcp_client::{McpClient, McpCommand};
use chromate_tests::FixtureServer;
use serde_json::{json, Value};

const TIMEOUT_MS: u64 = 1000;
const CALL_GOAL: Duration = Duration::from_millis(TIMEOUT_MS + 500);
const RECOVER_GOAL: Duration = Duration::from_secs(2);
/// How long the follow-up navigation is retried before it counts as never working.
const RECOVER_GIVE_UP: Duration = Duration::from_secs(20);
const STOPPED: &str = "chromate stopped it";

fn main() {
    if let Err(err) = run() {
        eprintln!("hostile_tools bench: {err}");
        std::process::exit(1);
    }
}

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

/// The arguments each tool gets on the hung page (`#answer` is a button, `#field` an input).
fn arguments(tool: &str, server: &FixtureServer, upload: &str) -> Value {
    let t = TIMEOUT_MS;
    match tool {
        "browser_navigate" => json!({ "url": server.url("/nav2.html"), "timeout_ms": t }),
        "browser_click" => json!({ "selector": "#answer", "timeout_ms": t }),
        "browser_fill" => json!({ "selector": "#field", "value": "x", "timeout_ms": t }),
        "browser_type" => json!({ "text": "abc" }),
        "browser_element" => json!({ "action": "focus", "selector": "#field", "timeout_ms": t }),
        "browser_press" => json!({ "key": "a", "timeout_ms": t }),
        "browser_key" => json!({ "action": "down", "key": "Shift", "timeout_ms": t }),
        "browser_mouse" => json!({ "action": "move", "x": 10, "y": 10, "timeout_ms": t }),
        "browser_hover" => json!({ "selector": "#answer", "timeout_ms": t }),
        "browser_upload" => json!({ "selector": "#field", "files": [upload], "timeout_ms": t }),
        "browser_dialog" => json!({ "action": "inspect" }),
        "browser_find" | "browser_exists" | "browser_locators" => json!({ "selector": "#answer" }),
        "browser_wait" => json!({ "selector": "#answer", "state": "visible", "timeout_ms": t }),
        "browser_read" => json!({ "field": "text", "selector": "#answer" }),
        "browser_expect" => {
            json!({ "what": "text", "selector": "#answer", "expected": "Answer", "timeout_ms": t })
        }
        "browser_page" => json!({ "action": "list" }),
        "browser_logs" => json!({ "action": "wait", "contains": "never logged", "timeout_ms": t }),
        "browser_mock" => json!({ "action": "list" }),
        "browser_state" => json!({ "action": "save", "name": "hung" }),
        "browser_trace" => json!({ "action": "status" }),
        "browser_screenshot" => json!({ "timeout_ms": t }),
        "browser_batch" => json!({ "steps": [
            { "tool": "browser_click", "arguments": { "selector": "#answer", "timeout_ms": t } }
        ] }),
        "browser_advanced_eval" => json!({ "js": "6 * 7", "timeout_ms": t }),
        // browser_snapshot, browser_a11y, browser_status, and any tool added later.
        _ => json!({}),
    }
}

/// Opens hang-later.html and returns once its script stopped yielding (it told the fixture
/// server so just before its endless loop).
fn open_hung_page(mcp: &mut McpClient, server: &FixtureServer) -> Result<(), String> {
    let before = server.request_count("spinning");
    let message = mcp.call(
        "browser_navigate",
        json!({ "url": server.url("/hang-later.html") }),
    );
    if message["result"]["isError"] == json!(true) {
        return Err(format!("navigate to hang-later.html failed: {message}"));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.request_count("spinning") == before {
        if Instant::now() > deadline {
            return Err("hang-later.html never started its loop".to_owned());
        }
        std::thread::yield_now();
    }
    Ok(())
}

struct Row {
    tool: String,
    took: Duration,
    outcome: String,
    stopped: bool,
    recovered: Option<Duration>,
    attempts: usize,
    /// The result's text blocks, for the details below the table.
    text: String,
}

/// The text blocks of a tool result, joined.
fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The first error code named in a text (`code:  X` or `"code":"X"`), for results whose
/// error is not the top-level one (a batch's failed step).
fn code_in(text: &str) -> Option<String> {
    let rest = text
        .split_once("\"code\":\"")
        .or_else(|| text.split_once("code:  "))?
        .1;
    let code: String = rest
        .chars()
        .take_while(|c| c.is_ascii_uppercase() || *c == '_')
        .collect();
    (!code.is_empty()).then_some(code)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let server = FixtureServer::start_detached()?;
    let binary = chromate_benches::chromate_binary()?;
    let work = std::env::temp_dir().join(format!("chromate-hostile-tools-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let upload = work.join("upload.txt");
    std::fs::write(&upload, "upload\n")?;
    let mut mcp = McpCommand::new(binary)
        .envs(&[("CHROMATE_AGENT_TIMEOUT", "1000")])
        .keep_env("CHROMATE_BROWSER")
        .current_dir(&work)
        .deadline(Duration::from_secs(60))
        .spawn();
    let rows = measure(&mut mcp, &server, &upload.to_string_lossy());
    // EOF: the server closes its browser and removes its profile, then exits.
    mcp.close_stdin();
    let _ = mcp.wait_exit(Duration::from_secs(30));
    drop(mcp);
    let _ = std::fs::remove_dir_all(&work);
    let rows = rows?;

    println!("| tool | call ms | outcome | hint: script stopped | next navigate works after ms |");
    println!("|---|---:|---|---|---:|");
    let mut misses = Vec::new();
    for row in &rows {
        let recovered = match row.recovered {
            Some(after) => format!("{} ({} tries)", ms(after), row.attempts),
            None => format!("never within {} s", RECOVER_GIVE_UP.as_secs()),
        };
        println!(
            "| {} | {} | {} | {} | {recovered} |",
            row.tool,
            ms(row.took),
            row.outcome,
            if row.stopped { "yes" } else { "no" },
        );
        if row.took > CALL_GOAL {
            misses.push(format!(
                "{}: returned after {} ms (goal {} ms)",
                row.tool,
                ms(row.took),
                CALL_GOAL.as_millis()
            ));
        }
        if row.recovered.is_none_or(|after| after > RECOVER_GOAL) {
            misses.push(format!(
                "{}: the tab worked again after {recovered}",
                row.tool
            ));
        }
    }
    println!();
    println!("What each call returned (its text, cut at 240 characters):");
    println!();
    for row in &rows {
        let text: String = row.text.replace('\n', " / ").chars().take(240).collect();
        println!("- {}: {text}", row.tool);
    }
    println!();
    if misses.is_empty() {
        println!("misses: none");
    } else {
        println!("misses ({}):", misses.len());
        for miss in misses {
            println!("- {miss}");
        }
    }
    Ok(())
}

fn measure(
    mcp: &mut McpClient,
    server: &FixtureServer,
    upload: &str,
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let init = mcp.request(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "hostile_tools", "version": "1" } }),
    );
    if init.get("error").is_some() {
        return Err(format!("initialize: {init}").into());
    }
    mcp.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let list = mcp.request("tools/list", json!({}));
    let tools: Vec<String> = list["result"]["tools"]
        .as_array()
        .ok_or_else(|| format!("tools/list: {list}"))?
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();
    let mut rows = Vec::new();
    for tool in tools {
        open_hung_page(mcp, server)?;
        let started = Instant::now();
        let message = mcp.call(&tool, arguments(&tool, server, upload));
        let took = started.elapsed();
        let result = &message["result"];
        let (outcome, stopped) = if let Some(error) = message.get("error") {
            (format!("JSON-RPC error {}", error["code"]), false)
        } else if result["isError"] == json!(true) {
            let code = result["structuredContent"]["error"]["code"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| code_in(&text_of(result)))
                .unwrap_or_else(|| "?".to_owned());
            (code, text_of(result).contains(STOPPED))
        } else {
            ("ok".to_owned(), false)
        };
        let text = text_of(result);
        // The follow-up: a plain page in the same tab, retried until it works.
        let started = Instant::now();
        let mut attempts = 0;
        let recovered = loop {
            attempts += 1;
            let message = mcp.call(
                "browser_navigate",
                json!({ "url": server.url("/nav.html"), "timeout_ms": 2000 }),
            );
            if message.get("error").is_none() && message["result"]["isError"] != json!(true) {
                break Some(started.elapsed());
            }
            if started.elapsed() > RECOVER_GIVE_UP {
                break None;
            }
        };
        rows.push(Row {
            tool,
            took,
            outcome,
            stopped,
            recovered,
            attempts,
            text,
        });
    }
    Ok(rows)
}
