//! Where the in-page walk of a snapshot spends its time: V8's sampling profiler (CDP `Profiler`)
//! around repeated default-view snapshots of one fixture page, then the functions with the most
//! self time (their name, script and line; chromate's world shows as the installer's functions).
//!
//! `cargo run --release -p chromate-benches --bin snapshot_profile [-- <runs> [<page> [first]]]`
//! (default 50 runs of bench-2000.html). With `first`, each run loads the page again and the
//! profile covers only its first snapshot (a document's first walk, the one after every
//! navigation). Figures go in `benches/README.md`. It measures; it does not assert.

use std::collections::HashMap;
use std::time::Duration;

use chromate::{snapshot::SnapshotOptions, Browser, LaunchOptions, WaitUntil};
use chromate_tests::FixtureServer;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs = chromate_benches::runs_arg(50);
    let path = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "bench-2000.html".to_owned());
    let first = std::env::args().nth(3).as_deref() == Some("first");
    let server = FixtureServer::start_detached()?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let page = browser.new_page("about:blank").await?;
    let url = server.url(&path);
    let session = page.session();
    session.send_raw("Profiler.enable", json!({})).await?;
    session
        .send_raw("Profiler.setSamplingInterval", json!({ "interval": 100 }))
        .await?;
    let mut in_page = 0.0;
    let mut by_function: HashMap<String, f64> = HashMap::new();
    if first {
        for _ in 0..runs {
            page.goto("about:blank", WaitUntil::Load, Duration::from_secs(30))
                .await?;
            page.goto(&url, WaitUntil::Load, Duration::from_secs(30))
                .await?;
            page.wait_for_settled(chromate::page::SETTLE_WINDOW, chromate::page::SETTLE_CAP)
                .await?;
            session.send_raw("Profiler.start", json!({})).await?;
            in_page += page.snapshot(SnapshotOptions::default()).await?.page_ms;
            let stopped = session.send_raw("Profiler.stop", json!({})).await?;
            add_self_time(&stopped["profile"], &mut by_function);
        }
    } else {
        page.goto(&url, WaitUntil::Load, Duration::from_secs(30))
            .await?;
        // The first snapshot mints every ref; the profile covers the repeats, as an agent's do.
        page.snapshot(SnapshotOptions::default()).await?;
        session.send_raw("Profiler.start", json!({})).await?;
        for _ in 0..runs {
            in_page += page.snapshot(SnapshotOptions::default()).await?.page_ms;
        }
        let stopped = session.send_raw("Profiler.stop", json!({})).await?;
        add_self_time(&stopped["profile"], &mut by_function);
    }
    browser.close().await;
    let total: f64 = by_function.values().sum();
    let mut rows: Vec<(String, f64)> = by_function.into_iter().collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!(
        "{path}: {runs} {} snapshots, in-page {:.2} ms each (the page's own clock); profiled {:.1} ms in all",
        if first { "first" } else { "repeated" },
        in_page / runs as f64,
        total / 1000.0
    );
    println!("{:>9} {:>6}  function", "self ms", "share");
    for (key, us) in rows.iter().take(25) {
        println!(
            "{:>9.1} {:>5.1}%  {key}",
            us / 1000.0,
            us / total.max(1.0) * 100.0
        );
    }
    Ok(())
}

/// Adds each function's self time in `profile` (a CDP `Profiler.Profile`) to `by_function`,
/// keyed by name, script and line.
fn add_self_time(profile: &serde_json::Value, by_function: &mut HashMap<String, f64>) {
    let nodes = profile["nodes"].as_array().cloned().unwrap_or_default();
    let samples = profile["samples"].as_array().cloned().unwrap_or_default();
    let deltas = profile["timeDeltas"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // Self time per node id: each sample's delta goes to the node sampled.
    let mut self_us: HashMap<u64, f64> = HashMap::new();
    for (sample, delta) in samples.iter().zip(deltas.iter()) {
        if let (Some(id), Some(us)) = (sample.as_u64(), delta.as_f64()) {
            *self_us.entry(id).or_default() += us;
        }
    }
    for node in &nodes {
        let Some(id) = node["id"].as_u64() else {
            continue;
        };
        let frame = &node["callFrame"];
        let name = frame["functionName"].as_str().unwrap_or_default();
        let key = format!(
            "{} ({}:{})",
            if name.is_empty() { "(anonymous)" } else { name },
            frame["url"].as_str().unwrap_or_default(),
            frame["lineNumber"].as_i64().unwrap_or(-1) + 1
        );
        *by_function.entry(key).or_default() += self_us.get(&id).copied().unwrap_or(0.0);
    }
}
