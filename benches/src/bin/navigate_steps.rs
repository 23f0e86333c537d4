//! Where `browser_navigate`'s time goes (issue 26): the engine's own steps, timed one by one on
//! the benchmark pages: the navigation to `load`, the wait after it
//! ([`chromate::Page::wait_for_settled`]), the title, the snapshot the observation takes, and a
//! second snapshot right after it. The first snapshot of a document runs chromate's walk in a
//! world that has never run it (its functions compiled on first call, its refs minted); the
//! second shows what the same walk costs once warm. *in page* is the walk's own time on the
//! page's clock.
//!
//! `cargo run --release -p chromate-benches --bin navigate_steps [-- <runs> [<browser flag>]]`;
//! the flag is added to Chromium's command line (`--js-flags=` takes away the compile hint flag
//! chromate launches with, to measure what it saves). Figures go in `benches/README.md`. It
//! measures; it does not assert.

use std::time::{Duration, Instant};

use chromate::{snapshot::SnapshotOptions, Browser, LaunchOptions, WaitUntil};
use chromate_benches::median_ms;
use chromate_tests::FixtureServer;

const PAGES: [&str; 4] = [
    "login.html",
    "bench-2000.html",
    "bench-10000.html",
    "console.html",
];

/// The median of `samples` (milliseconds on the page's clock).
fn median_f64(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(0.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs = chromate_benches::runs_arg(11);
    let server = FixtureServer::start_detached()?;
    let mut launch = LaunchOptions::default();
    launch.extra_args.extend(std::env::args().nth(2));
    let browser = Browser::launch(launch).await?;
    let page = browser.new_page("about:blank").await?;
    println!(
        "{}; {runs} navigations per page from about:blank; medians in ms",
        browser.version().product
    );
    println!(
        "{:<18} {:>7} {:>7} {:>6} {:>9} {:>9} {:>7} {:>14} {:>14}",
        "page",
        "load",
        "settle",
        "title",
        "snapshot",
        "again",
        "total",
        "in page first",
        "in page again"
    );
    for path in PAGES {
        let url = server.url(path);
        let mut steps: [Vec<Duration>; 6] = Default::default();
        let mut in_page: [Vec<f64>; 2] = Default::default();
        for _ in 0..runs {
            page.goto("about:blank", WaitUntil::Load, Duration::from_secs(30))
                .await?;
            let started = Instant::now();
            page.goto(&url, WaitUntil::Load, Duration::from_secs(30))
                .await?;
            let loaded = Instant::now();
            page.wait_for_settled(chromate::page::SETTLE_WINDOW, chromate::page::SETTLE_CAP)
                .await?;
            let settled = Instant::now();
            page.title().await?;
            let titled = Instant::now();
            let first = page.snapshot(SnapshotOptions::default()).await?;
            let done = Instant::now();
            let again = page.snapshot(SnapshotOptions::default()).await?;
            let again_took = done.elapsed();
            in_page[0].push(first.page_ms);
            in_page[1].push(again.page_ms);
            for (step, took) in steps.iter_mut().zip([
                loaded - started,
                settled - loaded,
                titled - settled,
                done - titled,
                again_took,
                done - started,
            ]) {
                step.push(took);
            }
        }
        let [load, settle, title, snapshot, again, total] = &mut steps;
        let [first_in_page, again_in_page] = &mut in_page;
        println!(
            "{:<18} {:>7.1} {:>7.1} {:>6.1} {:>9.1} {:>9.1} {:>7.1} {:>14.1} {:>14.1}",
            path,
            median_ms(load),
            median_ms(settle),
            median_ms(title),
            median_ms(snapshot),
            median_ms(again),
            median_ms(total),
            median_f64(first_in_page),
            median_f64(again_in_page)
        );
    }
    browser.close().await;
    Ok(())
}
