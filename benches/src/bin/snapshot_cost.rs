//! Snapshot cost on the large fixture pages: time per snapshot (first, which mints every ref,
//! and the median of repeats, which reuse them), rendered bytes, lines and refs.
//!
//! `cargo run -p chromate-benches --bin snapshot_cost [-- <runs>]`; figures go in
//! `benches/README.md`. It measures; it does not assert.

use std::time::{Duration, Instant};

use chromate::{snapshot::SnapshotOptions, Browser, LaunchOptions, WaitUntil};
use chromate_benches::median_ms;
use chromate_tests::FixtureServer;

const PAGES: [&str; 3] = ["bench-50.html", "bench-2000.html", "bench-10000.html"];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs = chromate_benches::runs_arg(21);
    let server = FixtureServer::start_detached()?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    println!("{}", browser.version().product);
    println!(
        "{:<18} {:>9} {:>11} {:>11} {:>7} {:>6} {:>5}",
        "page", "first ms", "median ms", "in-page ms", "bytes", "lines", "refs"
    );
    for path in PAGES {
        let page = browser.new_page("about:blank").await?;
        page.goto(&server.url(path), WaitUntil::Load, Duration::from_secs(30))
            .await?;
        let started = Instant::now();
        let first = page.snapshot(SnapshotOptions::default()).await?;
        let first_time = started.elapsed();
        let mut samples = Vec::with_capacity(runs);
        let mut in_page = Vec::with_capacity(runs);
        let mut last = first.clone();
        for _ in 0..runs {
            let started = Instant::now();
            last = page.snapshot(SnapshotOptions::default()).await?;
            samples.push(started.elapsed());
            in_page.push(Duration::from_secs_f64(last.page_ms / 1000.0));
        }
        let rendered = last.render();
        let refs = last
            .lines
            .iter()
            .filter(|l| l.element_ref.is_some())
            .count();
        println!(
            "{:<18} {:>9.1} {:>11.1} {:>11.1} {:>7} {:>6} {:>5}",
            path,
            first_time.as_secs_f64() * 1000.0,
            median_ms(&mut samples),
            median_ms(&mut in_page),
            rendered.len(),
            last.lines.len(),
            refs
        );
        browser.close_page(&page).await?;
    }
    browser.close().await;
    Ok(())
}
