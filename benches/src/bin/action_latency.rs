//! Action latency: median wall time of `click` (no navigation), `fill`, and a click that
//! navigates (awaiting the next page's `load`), over 30 repetitions each on fixture pages.
//!
//! Clicks wait for an animation frame to prove the element holds still, so a click's cost
//! depends on what came before it. Three click figures: back to back on one element (each click
//! then needs a frame after the previous one, so they run at the frame rate); after a pause, as
//! an agent's calls come, on the same element (the previous click's observation is evidence);
//! and after a pause, the first click on a freshly loaded page (one frame's wait).
//!
//! Run: `cargo run --release -p chromate-benches --bin action_latency`

use std::time::{Duration, Instant};

use chromate::{actions::ElementState, Browser, LaunchOptions, WaitUntil};
use chromate_benches::median_ms;

const REPS: usize = 30;
const NAV: Duration = Duration::from_secs(15);

/// An untimed pause before a repetition, standing for the time between an agent's calls. Its
/// length varies so that the repetitions start at different points of the frame cycle.
fn think_time(rep: usize) -> Duration {
    Duration::from_millis(100 + (rep as u64 * 7) % 17)
}

#[tokio::main]
async fn main() -> chromate::Result<()> {
    let server = chromate_benches::fixture_server()?;
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
    let mut paused_clicks = Vec::with_capacity(REPS);
    for rep in 0..REPS {
        tokio::time::sleep(think_time(rep)).await;
        let started = Instant::now();
        target.click().await?;
        paused_clicks.push(started.elapsed());
    }
    let mut first_clicks = Vec::with_capacity(REPS);
    for rep in 0..REPS {
        page.goto(&server.url("disabled.html"), WaitUntil::Load, NAV)
            .await?;
        target.wait_for(ElementState::Enabled).await?;
        tokio::time::sleep(think_time(rep)).await;
        let started = Instant::now();
        target.click().await?;
        first_clicks.push(started.elapsed());
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
    for (label, samples) in [
        ("click, back to back", &mut clicks),
        ("click, after a pause", &mut paused_clicks),
        ("first click on a page", &mut first_clicks),
        ("fill (~15 characters)", &mut fills),
        ("click that navigates", &mut navigations),
    ] {
        println!("  {label:<24}{:>7.1} ms", median_ms(samples));
    }
    Ok(())
}
