//! Two agents, each on its own tab of one `chromate mcp` (docs/mcp.md#tabs-for-parallel-agents):
//! the same 30-step scenario on `tests/fixtures/pages/tabs-agent.html`, run by both agents at
//! once over one stdio connection (each agent with one call in flight, as a subagent has) and
//! then by one agent after the other. Prints both wall times and their ratio (the goal is
//! ≤ 0.6×), and fails if an agent's observation ever mentions the other agent's page.
//!
//! ```text
//! cargo build -p chromate-mcp --bin chromate && cargo run -p chromate-benches --bin tabs_parallel -- 3
//! ```

use std::time::{Duration, Instant};

use chromate_tests::{McpClient, McpCommand};
use serde_json::{json, Value};

/// Steps per agent in one run of the scenario.
const STEPS: usize = 30;

fn main() {
    if let Err(err) = run() {
        eprintln!("tabs_parallel bench: {err}");
        std::process::exit(1);
    }
}

/// Step `index` (0-based) of agent `name`'s scenario on `tab`: a navigation, then fill, click
/// and a read of the page, in turn.
fn step(base: &str, name: &str, tab: &str, index: usize) -> (&'static str, Value) {
    if index == 0 {
        let url = format!("{base}tabs-agent.html?agent={name}");
        return ("browser_navigate", json!({ "url": url, "tab": tab }));
    }
    match index % 3 {
        1 => (
            "browser_fill",
            json!({ "selector": "#note", "value": format!("{name}-note-{index}"), "tab": tab }),
        ),
        2 => ("browser_click", json!({ "selector": "#add", "tab": tab })),
        _ => (
            "browser_exists",
            json!({ "selector": format!("text={name} item {}: {name}-note-{}", index / 3, index - 2), "tab": tab }),
        ),
    }
}

/// Sends a `tools/call`; its answer is read later with [`answer`].
fn send(server: &mut McpClient, tool: &str, arguments: Value) -> Value {
    let id = json!(server.fresh_id());
    server.send(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": { "name": tool, "arguments": arguments },
    }));
    id
}

/// The text of the answer to `id`: an error of the bench if the call failed, or if it
/// mentions the page of `other`.
fn answer(server: &mut McpClient, id: &Value, name: &str, other: &str) -> Result<(), String> {
    let response = server.response(id);
    let result = &response["result"];
    let text = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if response.get("error").is_some() || result["isError"] == json!(true) {
        return Err(format!("agent {name}: a call failed: {response}"));
    }
    if text.contains(&format!("Agent {other}")) || text.contains(&format!("{other} item")) {
        return Err(format!("agent {name} saw agent {other}'s page: {text}"));
    }
    Ok(())
}

/// Both agents' scenarios at once: each step of A and the same step of B are in flight
/// together, and each agent sends its next step once its previous one is answered.
fn together(server: &mut McpClient, base: &str) -> Result<Duration, String> {
    let started = Instant::now();
    for index in 0..STEPS {
        let (tool, arguments) = step(base, "A", "p2", index);
        let a = send(server, tool, arguments);
        let (tool, arguments) = step(base, "B", "p3", index);
        let b = send(server, tool, arguments);
        answer(server, &a, "A", "B")?;
        answer(server, &b, "B", "A")?;
    }
    Ok(started.elapsed())
}

/// Agent A's scenario, then agent B's; each call's time goes to `per_tool`.
fn one_after_the_other(
    server: &mut McpClient,
    base: &str,
    per_tool: &mut std::collections::BTreeMap<&'static str, Vec<Duration>>,
) -> Result<Duration, String> {
    let started = Instant::now();
    for (name, other, tab) in [("A", "B", "p2"), ("B", "A", "p3")] {
        for index in 0..STEPS {
            let (tool, arguments) = step(base, name, tab, index);
            let call = Instant::now();
            let id = send(server, tool, arguments);
            answer(server, &id, name, other)?;
            per_tool.entry(tool).or_default().push(call.elapsed());
        }
    }
    Ok(started.elapsed())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let runs = chromate_benches::runs_arg(3);
    let pages = chromate_tests::FixtureServer::start_detached()?;
    let base = pages.url("");
    let binary = chromate_benches::chromate_binary()?;
    let mut server = McpCommand::new(binary)
        .keep_env("CHROMATE_BROWSER")
        .deadline(Duration::from_secs(60))
        .label("bench")
        .spawn();
    server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
    );
    // The parent's tab p1, the agents' p2 and p3; p1 stays active.
    for arguments in [
        json!({ "tool": "browser_navigate", "url": format!("{base}nav.html") }),
        json!({ "tool": "browser_page", "action": "open" }),
        json!({ "tool": "browser_page", "action": "open" }),
        json!({ "tool": "browser_page", "action": "select", "target": "p1" }),
    ] {
        let mut arguments = arguments;
        let tool = arguments["tool"].as_str().unwrap_or_default().to_owned();
        if let Some(map) = arguments.as_object_mut() {
            map.remove("tool");
        }
        let result = server.call_result(&tool, arguments);
        if result["isError"] == json!(true) {
            return Err(format!("{tool} failed: {result}").into());
        }
    }
    // One warm-up run of each, unmeasured.
    let mut per_tool = std::collections::BTreeMap::new();
    together(&mut server, &base)?;
    one_after_the_other(&mut server, &base, &mut per_tool)?;
    per_tool.clear();
    let mut ratios = Vec::new();
    for run in 1..=runs {
        let sequential = one_after_the_other(&mut server, &base, &mut per_tool)?;
        let parallel = together(&mut server, &base)?;
        let ratio = parallel.as_secs_f64() / sequential.as_secs_f64();
        println!(
            "run {run}: one after the other {:.0} ms, at once {:.0} ms, ratio {ratio:.2}",
            sequential.as_secs_f64() * 1e3,
            parallel.as_secs_f64() * 1e3
        );
        ratios.push(ratio);
    }
    let list = server.call_result("browser_page", json!({ "action": "list" }));
    let listed: Value =
        serde_json::from_str(list["content"][0]["text"].as_str().unwrap_or_default())?;
    if listed["active"] != json!("p1") {
        return Err(format!("the active tab changed: {listed}").into());
    }
    for (tool, samples) in &mut per_tool {
        println!(
            "  {tool}: median {:.1} ms one after the other",
            chromate_benches::median_ms(samples)
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median ratio over {runs} runs ({STEPS} steps per agent): {:.2}",
        ratios[ratios.len() / 2]
    );
    Ok(())
}
