//! `chromate mcp` measured through its stdio interface, as an editor's agent sees it:
//! `initialize` latency, `tools/list` size, spawn to first navigate result, click by ref that
//! navigates, fill by ref, navigate to a 10,000-element page with its observation, and the
//! server's resident memory (Chrome aside).
//!
//! ```text
//! cargo build --release -p chromate-mcp && cargo run --release -p chromate-benches --bin mcp_stdio
//! ```

use std::time::{Duration, Instant};

use chromate_benches::median_ms;
use chromate_tests::{McpClient, McpCommand};
use serde_json::{json, Value};

const REPEAT: usize = 15;

fn main() {
    if let Err(err) = run() {
        eprintln!("mcp_stdio bench: {err}");
        std::process::exit(1);
    }
}

/// `tools/call` of `tool` through the tests' stdio client (the one MCP client the tests and
/// the benches share); a tool error is an error of the bench.
fn call(server: &mut McpClient, tool: &str, arguments: Value) -> Result<Value, String> {
    let result = server.call_result(tool, arguments);
    if result["isError"] == json!(true) {
        return Err(format!("{tool} failed: {}", result["content"][0]["text"]));
    }
    Ok(result)
}

/// The ref on the snapshot line that carries `hint` (`#to-nav2`).
fn ref_with_hint(snapshot_text: &str, hint: &str) -> Option<String> {
    snapshot_text
        .lines()
        .find(|l| l.contains(hint))
        .and_then(|l| l.trim().split(':').next())
        .map(str::to_string)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let server_pages = chromate_tests::FixtureServer::start_detached()?;
    let binary = chromate_benches::chromate_binary()?;
    let spawned = Instant::now();
    let mut server = McpCommand::new(binary)
        .keep_env("CHROMATE_BROWSER")
        .deadline(Duration::from_secs(60))
        .label("bench")
        .spawn();
    let started = Instant::now();
    let initialized = server.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}));
    let initialize_ms = started.elapsed().as_secs_f64() * 1e3;
    if initialized.get("result").is_none() {
        return Err(format!("initialize failed: {initialized}").into());
    }
    let tools = server.request("tools/list", json!({}))["result"].clone();
    let tools_bytes = serde_json::to_string(&tools)?.len();
    call(
        &mut server,
        "browser_navigate",
        json!({"url": server_pages.url("nav.html")}),
    )?;
    let first_navigate_ms = spawned.elapsed().as_secs_f64() * 1e3;

    let mut clicks = Vec::with_capacity(REPEAT);
    for _ in 0..REPEAT {
        call(
            &mut server,
            "browser_navigate",
            json!({"url": server_pages.url("nav.html")}),
        )?;
        let snapshot = call(&mut server, "browser_snapshot", json!({}))?;
        let text = snapshot["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let element_ref = ref_with_hint(&text, "#to-nav2").ok_or("no #to-nav2 line")?;
        let started = Instant::now();
        call(
            &mut server,
            "browser_click",
            json!({"selector": element_ref}),
        )?;
        clicks.push(started.elapsed());
    }

    call(
        &mut server,
        "browser_navigate",
        json!({"url": server_pages.url("controls.html")}),
    )?;
    let snapshot = call(&mut server, "browser_snapshot", json!({}))?;
    let text = snapshot["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let field = ref_with_hint(&text, "#text-input").ok_or("no #text-input line")?;
    let mut fills = Vec::with_capacity(REPEAT);
    for i in 0..REPEAT {
        let started = Instant::now();
        call(
            &mut server,
            "browser_fill",
            json!({"selector": field, "value": format!("hello world {i}")}),
        )?;
        fills.push(started.elapsed());
    }

    let mut big = Vec::with_capacity(5);
    let mut big_bytes = 0;
    for _ in 0..5 {
        call(
            &mut server,
            "browser_navigate",
            json!({"url": "about:blank"}),
        )?;
        let started = Instant::now();
        let result = call(
            &mut server,
            "browser_navigate",
            json!({"url": server_pages.url("bench-10000.html")}),
        )?;
        big.push(started.elapsed());
        big_bytes = serde_json::to_string(&result)?.len();
    }

    let rss_kib = std::fs::read_to_string(format!("/proc/{}/status", server.pid()))?
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);

    println!("initialize answered: {initialize_ms:.1} ms");
    println!("tools/list: {tools_bytes} bytes");
    println!("spawn to first navigate result: {first_navigate_ms:.0} ms");
    println!(
        "click by ref that navigates: median {:.1} ms over {REPEAT}",
        median_ms(&mut clicks)
    );
    println!(
        "fill by ref: median {:.1} ms over {REPEAT}",
        median_ms(&mut fills)
    );
    println!(
        "navigate to bench-10000.html with its observation: median {:.0} ms over 5 ({big_bytes} bytes reply)",
        median_ms(&mut big)
    );
    println!(
        "server resident memory (Chrome aside): {:.1} MB",
        rss_kib as f64 / 1024.0
    );
    // End of input: the server closes its browser and removes its profile, then exits.
    server.close_stdin();
    server.wait_exit(Duration::from_secs(30));
    Ok(())
}
