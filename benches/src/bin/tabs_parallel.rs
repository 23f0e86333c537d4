//! Two agents, each on its own tab of one `chromate mcp` (docs/mcp.md#tabs-for-parallel-agents):
//! the same 30-step scenario on `tests/fixtures/pages/tabs-agent.html`, run by both agents at
//! once over one stdio connection (each agent with one call in flight, as a subagent has) and
//! then by one agent after the other. Prints both wall times and their ratio (the goal is
//! ≤ 0.6×), and fails if an agent's observation ever mentions the other agent's page. Twice:
//! with documents served at once, and served 150 ms late (a site away from the machine). As a
//! control, the same with each agent on a server and browser of its own: the best this
//! machine allows.
//!
//! ```text
//! cargo build -p chromate-mcp --bin chromate && cargo run -p chromate-benches --bin tabs_parallel -- 3
//! ```

use std::time::{Duration, Instant};

use chromate_tests::{McpClient, McpCommand};
use serde_json::{json, Value};

/// Steps per agent in one run of the scenario.
const STEPS: usize = 30;
/// How late the fixture server answers a navigation's document in the second scenario.
const SITE_DELAY_MS: u64 = 150;

fn main() {
    if let Err(err) = run() {
        eprintln!("tabs_parallel bench: {err}");
        std::process::exit(1);
    }
}

/// Step `index` (0-based) of agent `name`'s scenario on `tab`, in cycles of five: a
/// navigation (its document answered `delay_ms` late, as a site away from the machine),
/// a fill, a click that adds an item, a check that the item is there and a full snapshot.
fn step(base: &str, delay_ms: u64, name: &str, tab: &str, index: usize) -> (&'static str, Value) {
    match index % 5 {
        0 => {
            let url = match delay_ms {
                0 => format!("{base}tabs-agent.html?agent={name}"),
                ms => format!("{base}delay/{ms}/tabs-agent.html?agent={name}"),
            };
            ("browser_navigate", json!({ "url": url, "tab": tab }))
        }
        1 => (
            "browser_fill",
            json!({ "selector": "#note", "value": format!("{name}-note-{index}"), "tab": tab }),
        ),
        2 => ("browser_click", json!({ "selector": "#add", "tab": tab })),
        3 => (
            "browser_exists",
            json!({ "selector": format!("text={name} item 1: {name}-note-{}", index - 2), "tab": tab }),
        ),
        _ => ("browser_snapshot", json!({ "tab": tab })),
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
/// together, and each agent sends its next step once its previous one is answered. Agent A
/// talks to `servers[0]`, agent B to the last server (the same one when there is one).
fn together(servers: &mut [McpClient], base: &str, delay_ms: u64) -> Result<Duration, String> {
    let last = servers.len() - 1;
    let started = Instant::now();
    for index in 0..STEPS {
        let (tool, arguments) = step(base, delay_ms, "A", "p2", index);
        let a = send(&mut servers[0], tool, arguments);
        let (tool, arguments) = step(base, delay_ms, "B", "p3", index);
        let b = send(&mut servers[last], tool, arguments);
        answer(&mut servers[0], &a, "A", "B")?;
        answer(&mut servers[last], &b, "B", "A")?;
    }
    Ok(started.elapsed())
}

/// Agent A's scenario (on `servers[0]`), then agent B's (on the last server); each call's
/// time goes to `per_tool`.
fn one_after_the_other(
    servers: &mut [McpClient],
    base: &str,
    delay_ms: u64,
    per_tool: &mut std::collections::BTreeMap<&'static str, Vec<Duration>>,
) -> Result<Duration, String> {
    let last = servers.len() - 1;
    let started = Instant::now();
    for (name, other, tab, at) in [("A", "B", "p2", 0), ("B", "A", "p3", last)] {
        let server = &mut servers[at];
        for index in 0..STEPS {
            let (tool, arguments) = step(base, delay_ms, name, tab, index);
            let call = Instant::now();
            let id = send(server, tool, arguments);
            answer(server, &id, name, other)?;
            per_tool.entry(tool).or_default().push(call.elapsed());
        }
    }
    Ok(started.elapsed())
}

/// A `chromate mcp` with the parent's tab p1 and the agents' p2 and p3, p1 active.
fn start_server(base: &str) -> Result<McpClient, Box<dyn std::error::Error>> {
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
    for (tool, arguments) in [
        (
            "browser_navigate",
            json!({ "url": format!("{base}nav.html") }),
        ),
        ("browser_page", json!({ "action": "open" })),
        ("browser_page", json!({ "action": "open" })),
        (
            "browser_page",
            json!({ "action": "select", "target": "p1" }),
        ),
    ] {
        let result = server.call_result(tool, arguments);
        if result["isError"] == json!(true) {
            return Err(format!("{tool} failed: {result}").into());
        }
    }
    Ok(server)
}

/// The median ratio of `runs` runs of both ways on `servers`, printed under `label`.
fn measure(
    label: &str,
    servers: &mut [McpClient],
    base: &str,
    delay_ms: u64,
    runs: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut per_tool = std::collections::BTreeMap::new();
    // One warm-up run of each, unmeasured.
    together(servers, base, delay_ms)?;
    one_after_the_other(servers, base, delay_ms, &mut per_tool)?;
    per_tool.clear();
    let mut ratios = Vec::new();
    for run in 1..=runs {
        let sequential = one_after_the_other(servers, base, delay_ms, &mut per_tool)?;
        let parallel = together(servers, base, delay_ms)?;
        let ratio = parallel.as_secs_f64() / sequential.as_secs_f64();
        println!(
            "{label} run {run}: one after the other {:.0} ms, at once {:.0} ms, ratio {ratio:.2}",
            sequential.as_secs_f64() * 1e3,
            parallel.as_secs_f64() * 1e3
        );
        ratios.push(ratio);
    }
    for (tool, samples) in &mut per_tool {
        println!(
            "  {tool}: median {:.1} ms one after the other",
            chromate_benches::median_ms(samples)
        );
    }
    ratios.sort_by(f64::total_cmp);
    Ok(ratios[ratios.len() / 2])
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let runs = chromate_benches::runs_arg(5);
    let pages = chromate_tests::FixtureServer::start_detached()?;
    let base = pages.url("");
    let mut summary = Vec::new();
    for delay_ms in [0, SITE_DELAY_MS] {
        let mut one = vec![start_server(&base)?];
        let label = format!("two tabs, one server, documents {delay_ms} ms away");
        let tabs = measure(&label, &mut one, &base, delay_ms, runs)?;
        let list = one[0].call_result("browser_page", json!({ "action": "list" }));
        let listed: Value =
            serde_json::from_str(list["content"][0]["text"].as_str().unwrap_or_default())?;
        if listed["active"] != json!("p1") {
            return Err(format!("the active tab changed: {listed}").into());
        }
        drop(one);
        // The machine's own bound: two servers, two browsers, nothing shared.
        let mut two = vec![start_server(&base)?, start_server(&base)?];
        let label = format!("two servers, documents {delay_ms} ms away");
        let apart = measure(&label, &mut two, &base, delay_ms, runs)?;
        drop(two);
        summary.push(format!(
            "documents {delay_ms} ms away: two tabs of one server {tabs:.2}, two servers {apart:.2}"
        ));
    }
    println!("median ratios over {runs} runs ({STEPS} steps per agent):");
    for line in summary {
        println!("  {line}");
    }
    Ok(())
}
