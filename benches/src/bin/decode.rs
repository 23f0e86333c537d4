//! Decoding real CDP events from bytes into their typed form.
//!
//! Records every `Network.requestWillBeSent` (and the other events) a headless Chromium emits
//! while loading the fixture pages, then decodes the recorded bytes in a loop and reports the
//! median time per decode of one typed event (`serde_json::from_str` into
//! `cdp::network::EventRequestWillBeSent`), of each other event the engine's handlers decode on
//! the reader task, and of the generic `CdpEvent::decode`.
//!
//! ```text
//! cargo run --release -p chromate-benches --bin decode
//! ```

use std::time::{Duration, Instant};

use chromate::cdp::{network, page as cdp_page, runtime, CdpEvent, Event};
use chromate::{Browser, LaunchOptions, WaitUntil};
use chromate_tests::FixtureServer;

const PAGES: &[&str] = &[
    "dashboard.html",
    "login.html",
    "console.html",
    "controls.html",
    "bench-2000.html",
];
const ROUNDS: usize = 2000;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let recorded = match record().await {
        Ok(recorded) => recorded,
        Err(err) => {
            eprintln!("decode bench: {err}");
            std::process::exit(1);
        }
    };
    let requests: Vec<&str> = recorded
        .iter()
        .filter(|(m, _)| m == "Network.requestWillBeSent")
        .map(|(_, p)| p.as_str())
        .collect();
    println!(
        "recorded {} events, {} Network.requestWillBeSent",
        recorded.len(),
        requests.len()
    );
    let typed = median_per_item(&requests, |params| {
        serde_json::from_str::<network::EventRequestWillBeSent>(params).is_ok()
    });
    let raw: Vec<(String, Box<serde_json::value::RawValue>)> = recorded
        .iter()
        .filter_map(|(m, p)| {
            serde_json::value::RawValue::from_string(p.clone())
                .ok()
                .map(|r| (m.clone(), r))
        })
        .collect();
    let all = median_per_item(&raw.iter().collect::<Vec<_>>(), |(method, params)| {
        !matches!(CdpEvent::decode(method, params), CdpEvent::Raw(_))
    });
    println!(
        "Network.requestWillBeSent typed decode: median {:.2} µs per event",
        typed.as_secs_f64() * 1e6
    );
    println!(
        "CdpEvent::decode over all recorded events: median {:.2} µs per event",
        all.as_secs_f64() * 1e6
    );
    println!("the other events the engine decodes on its reader task:");
    decode_typed::<network::EventResponseReceived>(&recorded);
    decode_typed::<network::EventLoadingFinished>(&recorded);
    decode_typed::<cdp_page::EventFrameNavigated>(&recorded);
    decode_typed::<cdp_page::EventLifecycleEvent>(&recorded);
    decode_typed::<runtime::EventConsoleAPICalled>(&recorded);
    decode_typed::<runtime::EventExecutionContextCreated>(&recorded);
}

/// Prints the median typed decode of the recorded events of type `E`.
fn decode_typed<E: Event>(recorded: &[(String, String)]) {
    let params: Vec<&str> = recorded
        .iter()
        .filter(|(m, _)| m == E::METHOD)
        .map(|(_, p)| p.as_str())
        .collect();
    let median = median_per_item(&params, |params| serde_json::from_str::<E>(params).is_ok());
    println!(
        "  {:<34} {:>4} recorded, median {:.2} µs per event",
        E::METHOD,
        params.len(),
        median.as_secs_f64() * 1e6
    );
}

/// Median over `ROUNDS` rounds of the mean time per item of one pass over `items`.
fn median_per_item<T>(items: &[T], mut decode: impl FnMut(&T) -> bool) -> Duration {
    let mut samples = Vec::with_capacity(ROUNDS);
    let mut n_ok = 0usize;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        for item in items {
            n_ok += usize::from(decode(item));
        }
        samples.push(started.elapsed() / u32::try_from(items.len().max(1)).unwrap_or(u32::MAX));
    }
    assert_eq!(
        n_ok,
        items.len() * ROUNDS,
        "every recorded event must decode"
    );
    samples.sort();
    samples[samples.len() / 2]
}

/// Loads the fixture pages and returns every event as `(method, params JSON)`.
async fn record() -> Result<Vec<(String, String)>, Box<dyn std::error::Error>> {
    let server = FixtureServer::start().await?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let mut events = browser.raw_events();
    let page = browser.new_page("about:blank").await?;
    for path in PAGES {
        page.goto(&server.url(path), WaitUntil::Load, Duration::from_secs(30))
            .await?;
    }
    page.evaluate("1").await?;
    let mut recorded = Vec::new();
    while let Ok(Some(Ok(message))) =
        tokio::time::timeout(Duration::from_millis(200), events.recv()).await
    {
        recorded.push((message.method.clone(), message.params.get().to_string()));
    }
    browser.close().await;
    Ok(recorded)
}
