//! The wait after `load` (issues 20 and 26): what [`chromate::Page::wait_for_settled`] costs
//! on the benchmark pages and what it catches on pages that fill their content from script
//! after `load` (`late-results.html`: two fetches answered 300 ms late, 75 links;
//! `late-timer.html`: timers and an animation frame set during load, 3 links).
//!
//! For each page and grace window: navigate (`load`), wait until the page settles (cap 1.5 s),
//! then take the full snapshot; *load* is the navigation, *settle* the extra wait, *links* the
//! links listed, against a snapshot taken right at `load`. With the Rust toolchain's HTML docs
//! installed (`rustup component add rust-docs`), rustdoc's own search page
//! (`std/index.html?search=vec`, which loads its index and renders results after `load`) is
//! measured too, served from them.
//!
//! *complete* counts the runs whose snapshot lists as many links as the most any run saw on that
//! page (what the page ends up showing), at `load` and after the quiet period.
//!
//! `cargo run -p chromate-benches --bin settle [-- <runs> [<page filter>]]`; figures go in
//! `benches/README.md`. It measures; it does not assert.

use std::time::{Duration, Instant};

use chromate::{snapshot::SnapshotOptions, Browser, LaunchOptions, WaitUntil};
use chromate_benches::median_ms;
use chromate_tests::FixtureServer;

const PAGES: [&str; 7] = [
    "login.html",
    "console.html",
    "bench-50.html",
    "bench-2000.html",
    "bench-10000.html",
    "late-results.html",
    "late-timer.html",
];
const WINDOWS_MS: [u64; 3] = [50, 100, 200];
const CAP: Duration = Duration::from_millis(1500);

/// The toolchain's `share/doc/rust/html`, if the docs are installed.
fn rustdoc_root() -> Option<std::path::PathBuf> {
    let output = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = String::from_utf8(output.stdout).ok()?;
    let root = std::path::Path::new(sysroot.trim()).join("share/doc/rust/html");
    root.join("std/index.html").is_file().then_some(root)
}

fn links(snapshot: &chromate::snapshot::Snapshot) -> usize {
    snapshot.lines.iter().filter(|l| l.role == "link").count()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs = chromate_benches::runs_arg(11);
    let server = FixtureServer::start_detached()?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    println!("{}", browser.version().product);
    println!(
        "{:<34} {:>9} {:>8} {:>10} {:>11} {:>8} {:>14} {:>12} {:>6}",
        "page",
        "window ms",
        "load ms",
        "settle ms",
        "settle p90",
        "links",
        "complete@load",
        "complete@quiet",
        "quiet"
    );
    let full = SnapshotOptions {
        max_lines: 5000,
        ..SnapshotOptions::default()
    };
    let docs = rustdoc_root();
    let docs_server = match &docs {
        Some(root) => Some(FixtureServer::start_serving(root).await?),
        None => None,
    };
    let mut targets: Vec<(String, String)> = PAGES
        .iter()
        .map(|path| (path.to_string(), server.url(path)))
        .collect();
    if let Some(docs_server) = &docs_server {
        let path = "std/index.html?search=vec";
        targets.push((format!("rustdoc {path}"), docs_server.url(path)));
    }
    let filter = std::env::args().nth(2).unwrap_or_default();
    targets.retain(|(path, _)| path.contains(&filter));
    for (path, url) in &targets {
        let mut rows = Vec::new();
        let mut most = 0;
        for window_ms in WINDOWS_MS {
            let window = Duration::from_millis(window_ms);
            let mut loads = Vec::with_capacity(runs);
            let mut settles = Vec::with_capacity(runs);
            let mut at_load = Vec::with_capacity(runs);
            let mut at_quiet = Vec::with_capacity(runs);
            let mut n_quiet = 0;
            for _ in 0..runs {
                let page = browser.new_page("about:blank").await?;
                let started = Instant::now();
                page.goto(url, WaitUntil::Load, Duration::from_secs(30))
                    .await?;
                loads.push(started.elapsed());
                // The snapshot at load is taken in a second tab, so the timed wait is not
                // slowed by it: same page, same moment after load.
                let settled_at = Instant::now();
                let settled = page.wait_for_settled(window, CAP).await?;
                settles.push(settled_at.elapsed());
                n_quiet += usize::from(settled.quiet);
                at_quiet.push(links(&page.snapshot(full.clone()).await?));
                browser.close_page(&page).await?;
                let page = browser.new_page("about:blank").await?;
                page.goto(url, WaitUntil::Load, Duration::from_secs(30))
                    .await?;
                at_load.push(links(&page.snapshot(full.clone()).await?));
                browser.close_page(&page).await?;
            }
            let mut sorted = settles.clone();
            sorted.sort();
            let p90 = sorted[(sorted.len() * 9 / 10).min(sorted.len() - 1)];
            most = at_load.iter().chain(&at_quiet).fold(most, |m, n| m.max(*n));
            rows.push((
                window_ms,
                median_ms(&mut loads),
                median_ms(&mut settles),
                p90.as_secs_f64() * 1000.0,
                at_load,
                at_quiet,
                n_quiet,
            ));
        }
        for (window_ms, load, settle, p90, at_load, at_quiet, n_quiet) in rows {
            let complete = |seen: &[usize]| seen.iter().filter(|n| **n == most).count();
            println!(
                "{:<34} {:>9} {:>8.1} {:>10.1} {:>11.1} {:>8} {:>14} {:>12} {:>6}",
                path,
                window_ms,
                load,
                settle,
                p90,
                most,
                format!("{}/{runs}", complete(&at_load)),
                format!("{}/{runs}", complete(&at_quiet)),
                format!("{n_quiet}/{runs}"),
            );
        }
    }
    browser.close().await;
    Ok(())
}
