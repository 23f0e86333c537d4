//! Action latency: median wall time of `click` (no navigation), `fill`, and a click that
//! navigates (awaiting the next page's `load`), over 30 repetitions each on fixture pages.
//!
//! Run: `cargo run --release -p chromate-benches --bin action_latency`

use std::time::{Duration, Instant};

use chromate::{Browser, LaunchOptions, WaitUntil};
use chromate_tests::FixtureServer;

const REPS: usize = 30;
const NAV: Duration = Duration::from_secs(15);

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main]
async fn main() -> chromate::Result<()> {
    let server = FixtureServer::start_detached().map_err(|e| chromate::Error::InvalidArgument {
        message: format!("start the fixture server: {e}"),
    })?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let page = browser.new_page("about:blank").await?;

    page.goto(&server.url("disabled.html"), WaitUntil::Load, NAV)
        .await?;
    let target = page.locator("#soon-enabled")?;
    target.click().await?; // warm-up: isolated world, enabled after 300 ms
    let mut clicks = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let started = Instant::now();
        target.click().await?;
        clicks.push(started.elapsed());
    }

    page.goto(&server.url("controls.html"), WaitUntil::Load, NAV)
        .await?;
    let field = page.locator("#text-input")?;
    field.fill("warm").await?;
    let mut fills = Vec::with_capacity(REPS);
    for i in 0..REPS {
        let started = Instant::now();
        field.fill(&format!("value number {i}")).await?;
        fills.push(started.elapsed());
    }

    let mut navigations = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        page.goto(&server.url("nav.html"), WaitUntil::Load, NAV)
            .await?;
        let link = page.locator("#to-nav2")?;
        let started = Instant::now();
        link.click().await?;
        navigations.push(started.elapsed());
    }

    browser.close().await;
    println!("action latency, median of {REPS}:");
    println!(
        "  click (no navigation)   {:>7.1} ms",
        median(clicks).as_secs_f64() * 1e3
    );
    println!(
        "  fill (~15 characters)   {:>7.1} ms",
        median(fills).as_secs_f64() * 1e3
    );
    println!(
        "  click that navigates    {:>7.1} ms",
        median(navigations).as_secs_f64() * 1e3
    );
    Ok(())
}
