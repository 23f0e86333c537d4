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
//! cargo run --release -p chromate-benches --bin decode -- --dump /tmp/events.jsonl
//! ```
//!
//! With `--dump FILE` the session goes on after the timed events: seven pages (`DUMP_PAGES`:
//! forms, roles, shadow DOM, frames, dialogs), on each six read-only commands (`COMMANDS`: the
//! DOM, the accessibility tree, the frame tree, an evaluation with a preview, layout metrics,
//! cookies), then an uncaught exception, console output and an `alert` accepted. Every event of
//! both parts is written to FILE as a JSON line `{"method": ..., "params": ...}` (the params as
//! the browser sent them), then every answer to those commands as `{"method": ..., "result":
//! ...}`; the per-method counts of chromate's decoding are printed: events through
//! `CdpEvent::decode` (typed, raw: a method the bindings lack, failed: first error per method),
//! answers into the command's typed `Returns`. The timed figures are over the first part only,
//! as without `--dump`. `benches/peers/oxide_decode.sh FILE` decodes the same file with
//! chromiumoxide_cdp.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::time::{Duration, Instant};

use chromate::cdp::{
    accessibility, dom, network, page as cdp_page, runtime, CdpEvent, Command, Event,
};
use chromate::{Browser, LaunchOptions, WaitUntil};
use chromate_benches::median;
use chromate_tests::FixtureServer;

const PAGES: &[&str] = &[
    "dashboard.html",
    "login.html",
    "console.html",
    "controls.html",
    "bench-2000.html",
];
/// The pages `--dump` loads after the timed part.
const DUMP_PAGES: &[&str] = &[
    "dashboard.html",
    "controls.html",
    "roles.html",
    "a11y-violations.html",
    "shadow.html",
    "iframe.html",
    "dialogs.html",
];
/// The commands `--dump` sends on each of `DUMP_PAGES`, with their params.
const COMMANDS: &[(&str, &str)] = &[
    ("DOM.getDocument", r#"{"depth":-1,"pierce":true}"#),
    ("Accessibility.getFullAXTree", "{}"),
    ("Page.getFrameTree", "{}"),
    (
        "Runtime.evaluate",
        r#"{"expression":"document.body","generatePreview":true}"#,
    ),
    ("Page.getLayoutMetrics", "{}"),
    ("Network.getCookies", "{}"),
];
const ROUNDS: usize = 2000;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut dump = None;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--dump", Some(file)) => dump = Some(file),
            _ => {
                eprintln!("usage: decode [--dump FILE]");
                std::process::exit(2);
            }
        }
    }
    let (recorded, more, answers) = match record(dump.is_some()).await {
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
    if let Some(file) = dump {
        let all: Vec<(String, String)> = recorded.into_iter().chain(more).collect();
        if let Err(err) = write_dump(&file, &all, &answers) {
            eprintln!("decode bench: writing {file}: {err}");
            std::process::exit(1);
        }
        println!(
            "wrote {} events and {} command answers to {file}",
            all.len(),
            answers.len()
        );
        let events_ok = report_decode(&all);
        let answers_ok = report_answers(&answers);
        if !(events_ok && answers_ok) {
            std::process::exit(1);
        }
    }
}

/// Writes `{"method": ..., "params": ...}` per event, the params as received, then
/// `{"method": ..., "result": ...}` per command answer.
fn write_dump(
    file: &str,
    events: &[(String, String)],
    answers: &[(String, String)],
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(file)?);
    for (method, params) in events {
        let method = serde_json::to_string(method)?;
        writeln!(out, r#"{{"method":{method},"params":{params}}}"#)?;
    }
    for (method, result) in answers {
        let method = serde_json::to_string(method)?;
        writeln!(out, r#"{{"method":{method},"result":{result}}}"#)?;
    }
    out.flush()
}

/// Prints, per command, how many answers decoded into its typed `Command::Returns`; false if
/// any failed.
fn report_answers(answers: &[(String, String)]) -> bool {
    fn decode<C: Command>(result: &str) -> Result<(), String> {
        serde_json::from_str::<C::Returns>(result)
            .map(drop)
            .map_err(|err| err.to_string())
    }
    // (answers, typed, first error)
    let mut by_method: BTreeMap<&str, (usize, usize, Option<String>)> = BTreeMap::new();
    for (method, result) in answers {
        let decoded = match method.as_str() {
            "DOM.getDocument" => decode::<dom::GetDocumentParams>(result),
            "Accessibility.getFullAXTree" => decode::<accessibility::GetFullAXTreeParams>(result),
            "Page.getFrameTree" => decode::<cdp_page::GetFrameTreeParams>(result),
            "Runtime.evaluate" => decode::<runtime::EvaluateParams>(result),
            "Page.getLayoutMetrics" => decode::<cdp_page::GetLayoutMetricsParams>(result),
            "Network.getCookies" => decode::<network::GetCookiesParams>(result),
            other => Err(format!("no typed answer listed for {other}")),
        };
        let row = by_method.entry(method).or_default();
        row.0 += 1;
        match decoded {
            Ok(()) => row.1 += 1,
            Err(error) => {
                row.2.get_or_insert(error);
            }
        }
    }
    println!("chromate typed command answers, per method:");
    println!(
        "  {:<44} {:>8} {:>6} {:>6}",
        "method", "answers", "typed", "failed"
    );
    let mut total = (0, 0);
    for (method, (n, typed, error)) in &by_method {
        println!("  {method:<44} {n:>8} {typed:>6} {:>6}", n - typed);
        if let Some(error) = error {
            println!("    first error: {error}");
        }
        total = (total.0 + n, total.1 + typed);
    }
    println!(
        "  {:<44} {:>8} {:>6} {:>6}",
        "total",
        total.0,
        total.1,
        total.0 - total.1
    );
    total.0 == total.1
}

/// Prints, per method, how `CdpEvent::decode` read the events; false if any failed.
fn report_decode(events: &[(String, String)]) -> bool {
    // (recorded, typed, raw: method not in the bindings, failed, first error)
    let mut by_method: BTreeMap<&str, (usize, usize, usize, usize, Option<String>)> =
        BTreeMap::new();
    for (method, params) in events {
        let row = by_method.entry(method).or_default();
        row.0 += 1;
        let Ok(raw) = serde_json::value::RawValue::from_string(params.clone()) else {
            row.3 += 1;
            row.4.get_or_insert_with(|| "params are not JSON".into());
            continue;
        };
        match CdpEvent::decode(method, &raw) {
            CdpEvent::Raw(raw) => match raw.error {
                None => row.2 += 1,
                Some(error) => {
                    row.3 += 1;
                    row.4.get_or_insert(error);
                }
            },
            _ => row.1 += 1,
        }
    }
    println!("chromate CdpEvent::decode, per method:");
    println!(
        "  {:<44} {:>8} {:>6} {:>4} {:>6}",
        "method", "recorded", "typed", "raw", "failed"
    );
    let mut total = (0, 0, 0, 0);
    for (method, (n, typed, raw, failed, error)) in &by_method {
        println!("  {method:<44} {n:>8} {typed:>6} {raw:>4} {failed:>6}");
        if let Some(error) = error {
            println!("    first error: {error}");
        }
        total = (
            total.0 + n,
            total.1 + typed,
            total.2 + raw,
            total.3 + failed,
        );
    }
    println!(
        "  {:<44} {:>8} {:>6} {:>4} {:>6}",
        format!("total ({} methods)", by_method.len()),
        total.0,
        total.1,
        total.2,
        total.3
    );
    total.3 == 0
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
    median(&mut samples)
}

/// Every event as `(method, params JSON)`.
type Recorded = Vec<(String, String)>;

/// Loads the fixture pages and returns every event; with `more`, goes on with the `--dump`
/// part and returns its events second and the answers to `COMMANDS` (`(method, result JSON)`)
/// third.
async fn record(more: bool) -> Result<(Recorded, Recorded, Recorded), Box<dyn std::error::Error>> {
    const NAV: Duration = Duration::from_secs(30);
    let server = FixtureServer::start().await?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let mut events = browser.raw_events();
    let page = browser.new_page("about:blank").await?;
    for path in PAGES {
        page.goto(&server.url(path), WaitUntil::Load, NAV).await?;
    }
    page.evaluate("1").await?;
    let recorded = drain(&mut events).await?;
    let mut extra = Vec::new();
    let mut answers = Vec::new();
    if more {
        for path in DUMP_PAGES {
            page.goto(&server.url(path), WaitUntil::Load, NAV).await?;
            for (method, params) in COMMANDS {
                let result = page
                    .session()
                    .send_raw(method, serde_json::from_str(params)?)
                    .await?;
                answers.push((method.to_string(), result.to_string()));
            }
        }
        page.evaluate(
            "setTimeout(() => { throw new TypeError('boom') }, 0); \
             console.error('e', {a: 1}); console.warn('w'); console.debug('d'); 1",
        )
        .await?;
        // The alert blocks the evaluation until it is answered; its result does not matter.
        let _ = page.evaluate("alert('hello')").await;
        page.wait_for_dialog(NAV).await?;
        page.accept_dialog(None).await?;
        page.evaluate("1").await?;
        extra = drain(&mut events).await?;
    }
    browser.close().await;
    Ok((recorded, extra, answers))
}

/// The events received until none came for 200 ms.
async fn drain(events: &mut chromate::session::RawEventStream) -> Result<Recorded, String> {
    let mut recorded = Vec::new();
    while let Ok(Some(item)) = tokio::time::timeout(Duration::from_millis(200), events.recv()).await
    {
        let message = item.map_err(|n| format!("the recorder lost {n} events"))?;
        recorded.push((message.method.clone(), message.params.get().to_string()));
    }
    Ok(recorded)
}
