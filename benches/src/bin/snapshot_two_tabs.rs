//! Two tabs' snapshots at once (issue 29): each tab of one browser shows the same large page,
//! and both tabs snapshot it, first one after the other, then both at once (`join`). Refs are
//! numbered from one browser-wide counter; the ratio *at once* / *one after the other* shows
//! whether the two in-page walks overlap (about 0.5 when each tab's renderer has a core of its
//! own) or take turns (about 1).
//!
//! `cargo run --release -p chromate-benches --bin snapshot_two_tabs [-- <runs> [<max lines>]]`
//! (11 runs, 5000 lines: a full view, whose walk visits the whole page). Figures go in
//! `benches/README.md`. It measures; it does not assert.

use std::time::{Duration, Instant};

use chromate::{snapshot::SnapshotOptions, Browser, LaunchOptions, WaitUntil};
use chromate_benches::median_ms;
use chromate_tests::FixtureServer;

const PAGES: [&str; 2] = ["bench-2000.html", "bench-10000.html"];

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs = chromate_benches::runs_arg(11);
    let max_lines = match std::env::args().nth(2) {
        Some(text) => text.parse::<usize>()?,
        None => 5000,
    };
    let options = || SnapshotOptions {
        max_lines,
        ..SnapshotOptions::default()
    };
    let server = FixtureServer::start_detached()?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let one = browser.new_page("about:blank").await?;
    let two = browser.new_page("about:blank").await?;
    println!(
        "{}; two tabs, {runs} runs per page, snapshots of {max_lines} lines; medians in ms",
        browser.version().product
    );
    println!(
        "{:<18} {:>18} {:>9} {:>7}",
        "page", "one after the other", "at once", "ratio"
    );
    for path in PAGES {
        let url = server.url(path);
        for page in [&one, &two] {
            page.goto(&url, WaitUntil::Load, Duration::from_secs(30))
                .await?;
            // The first walk of a document is slower (benches/README.md "Compiled once per
            // renderer"): both sides of the comparison start warm.
            page.snapshot(options()).await?;
        }
        let mut apart = Vec::with_capacity(runs);
        let mut together = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            one.snapshot(options()).await?;
            two.snapshot(options()).await?;
            apart.push(started.elapsed());
            let started = Instant::now();
            let (a, b) = tokio::join!(one.snapshot(options()), two.snapshot(options()));
            together.push(started.elapsed());
            a?;
            b?;
        }
        let (apart, together) = (median_ms(&mut apart), median_ms(&mut together));
        println!(
            "{path:<18} {apart:>18.1} {together:>9.1} {:>6.2}×",
            together / apart
        );
    }
    browser.close().await;
    Ok(())
}
