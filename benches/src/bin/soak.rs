//! A soak of `chromate mcp`: thousands of sequential tool calls (navigate, snapshot, click,
//! fill, logs) against fixture pages on 127.0.0.1, with the server's resident memory sampled
//! every 1,000 calls, to show whether memory levels off.
//!
//! ```text
//! cargo build --release -p chromate-mcp && cargo run --release -p chromate-benches --bin soak -- 10000
//! ```
//!
//! Prints one row per 1,000 calls: calls so far, server RSS (MB) and the growth since the
//! warm-up sample (the one at 1,000 calls), then the growth per 10,000 calls after warm-up and
//! over the second half, then the round trip of pings sent while one call floods the journal.

use std::time::{Duration, Instant};

use chromate_tests::{FixtureServer, McpCommand, Response};
use serde_json::{json, Value};

const SAMPLE_EVERY: usize = 1000;

fn main() {
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(10_000);
    if let Err(err) = run(calls) {
        eprintln!("soak: {err}");
        std::process::exit(1);
    }
}

/// The server's resident set in kB, from `/proc/<pid>/status`.
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run(calls: usize) -> Result<(), String> {
    let binary = chromate_benches::chromate_binary()?;
    let server = FixtureServer::start_detached().map_err(|e| e.to_string())?;
    // Two small pages that link to each other, each with a button that changes its text and
    // a field, so navigations, diffs, clicks and fills all happen.
    for (path, other) in [
        ("/soak-a.html", "/soak-b.html"),
        ("/soak-b.html", "/soak-a.html"),
    ] {
        let body = format!(
            "<title>soak {path}</title><h1>Soak</h1><a id=next href=\"{other}\">next</a>\
             <button id=b onclick=\"this.textContent = 'clicked ' + Date.now(); console.log('click')\">press</button>\
             <input id=q aria-label=Query><ul>{}</ul>",
            (0..20).map(|i| format!("<li>item {i}</li>")).collect::<String>()
        );
        server.route(path, move |_| Response::html(body.clone()));
    }
    let mut mcp = McpCommand::new(&binary)
        .label("soak")
        .keep_env("CHROMATE_BROWSER")
        .deadline(Duration::from_secs(60))
        .spawn();
    let pid = mcp.pid();
    let started = Instant::now();
    let mut samples: Vec<(usize, u64)> = Vec::new();
    let steps: [(&str, Value); 5] = [
        (
            "browser_navigate",
            json!({ "url": server.url("soak-a.html") }),
        ),
        ("browser_snapshot", json!({})),
        ("browser_click", json!({ "selector": "#b" })),
        ("browser_fill", json!({ "selector": "#q", "value": "soak" })),
        ("browser_logs", json!({ "limit": 5 })),
    ];
    let mut failures = 0usize;
    for call in 0..calls {
        let (tool, arguments) = &steps[call % steps.len()];
        let mut arguments = arguments.clone();
        if *tool == "browser_navigate" && (call / steps.len()) % 2 == 1 {
            arguments["url"] = json!(server.url("soak-b.html"));
        }
        let response = mcp.call(tool, arguments);
        if response.get("error").is_some() || response["result"]["isError"] == json!(true) {
            failures += 1;
        }
        if (call + 1) % SAMPLE_EVERY == 0 {
            let rss = rss_kb(pid).ok_or("cannot read the server's RSS")?;
            samples.push((call + 1, rss));
        }
    }
    let warm = samples.first().map_or(0, |(_, rss)| *rss);
    println!(
        "{calls} calls in {:.0} s, {failures} failed",
        started.elapsed().as_secs_f64()
    );
    println!("| calls | server RSS (MB) | since 1,000 calls (MB) |");
    println!("|---:|---:|---:|");
    for (n, rss) in &samples {
        println!(
            "| {n} | {:.1} | {:+.2} |",
            *rss as f64 / 1024.0,
            (*rss as f64 - warm as f64) / 1024.0
        );
    }
    // After warm-up (the first sample), and over the second half, once the log journal's
    // bounded rings (500 console, 1,000 network entries) have filled.
    let half = samples.get(samples.len() / 2);
    for (label, from) in [
        ("after warm-up", samples.first()),
        ("over the second half", half),
    ] {
        if let (Some((first_n, first)), Some((last_n, last))) = (from, samples.last()) {
            if last_n > first_n {
                let per_10k = (*last as f64 - *first as f64) / 1024.0 / (*last_n - *first_n) as f64
                    * 10_000.0;
                println!(
                    "growth {label} ({first_n} to {last_n} calls): {per_10k:+.2} MB per 10,000 calls"
                );
            }
        }
    }
    ping_during_a_flood(&mut mcp, &server)?;
    Ok(())
}

/// Pings while one call floods the journal (100,000 console messages, then 10,000 requests):
/// pings are answered on the read loop, never queued behind the call, so they stay fast.
fn ping_during_a_flood(
    mcp: &mut chromate_tests::McpClient,
    server: &FixtureServer,
) -> Result<(), String> {
    mcp.call(
        "browser_navigate",
        json!({ "url": server.url("soak-a.html") }),
    );
    let flood = mcp.fresh_id();
    mcp.send(
        &json!({ "jsonrpc": "2.0", "id": flood, "method": "tools/call", "params": {
        "name": "browser_advanced_eval",
        "arguments": { "timeout_ms": 120000, "js": "for (let i = 0; i < 100000; i++) \
            console.log('flood ' + i); await Promise.all(Array.from({length: 10000}, (_, i) => \
            fetch('/echo?i=' + i).then(r => r.text()).catch(() => ''))); return 1" } } }),
    );
    let mut during = Vec::new();
    let mut flood_done = false;
    while !flood_done && during.len() < 2000 {
        let id = mcp.fresh_id();
        let sent = Instant::now();
        mcp.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }));
        mcp.response(&json!(id));
        let rtt = sent.elapsed();
        flood_done = mcp
            .take_stashed()
            .iter()
            .any(|message| message["id"] == json!(flood));
        if !flood_done {
            during.push(rtt);
        }
    }
    if !flood_done {
        mcp.response(&json!(flood));
    }
    if during.is_empty() {
        return Err("the flood ended before the first ping".into());
    }
    let max = during.iter().max().copied().unwrap_or_default();
    let median = chromate_benches::median_ms(&mut during);
    // Sorted by `median_ms`; nearest rank.
    let p99 = during[(during.len() * 99).div_ceil(100).saturating_sub(1)];
    let over_10_ms = during
        .iter()
        .filter(|rtt| **rtt >= Duration::from_millis(10))
        .count();
    println!(
        "ping during the flood: {} pings, median {median:.2} ms, p99 {:.2} ms, max {:.2} ms, {over_10_ms} at 10 ms or more",
        during.len(),
        p99.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
    Ok(())
}
