#!/usr/bin/env bash
# Decodes recorded CDP events and command answers with chromiumoxide_cdp from crates.io and
# counts, per method, how many decode into their typed form, fall back to `CdpEvent::Other` (the
# method is not in its bindings) or fail with an error (first error printed per method).
#
#   cargo run --release -p chromate-benches --bin decode -- --dump /tmp/events.jsonl
#   bash benches/peers/oxide_decode.sh /tmp/events.jsonl
#
# The input is one JSON object per line: an event `{"method": ..., "params": ...}` or a command
# answer `{"method": ..., "result": ...}`. An event is decoded twice: as
# `chromiumoxide_cdp::cdp::CdpEventMessage` (its typed event decoding; the error message comes
# from here) and as `chromiumoxide_types::Message<CdpEventMessage>`, the untagged
# response-or-event enum its own test decodes a WebSocket message into (column *message*). An
# answer is decoded as chromiumoxide_types does it: `Command::response_from_value` of the
# command's params type on the `result` value.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 EVENTS.jsonl" >&2; exit 2; }
input=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -f "$input" ] || { echo "no such file: $1" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/oxide/src"
cat > "$work/oxide/Cargo.toml" <<TOML
[package]
name = "oxide-decode"
version = "0.0.0"
edition = "2021"
[dependencies]
chromiumoxide_cdp = "=0.9.1"
chromiumoxide_types = "=0.9.1"
serde_json = "1"
[workspace]
TOML
cat > "$work/oxide/src/main.rs" <<'RUST'
use std::collections::BTreeMap;

use chromiumoxide_cdp::cdp::browser_protocol::{accessibility, dom, network, page};
use chromiumoxide_cdp::cdp::js_protocol::runtime;
use chromiumoxide_cdp::cdp::{CdpEvent, CdpEventMessage};
use chromiumoxide_types::{Command, Message};

#[derive(Default)]
struct Row {
    recorded: usize,
    typed: usize,
    other: usize,
    error: usize,
    first_error: Option<String>,
    // Through `Message<CdpEventMessage>`: decoded as an event (typed or other).
    message_ok: usize,
}

fn answer<C: Command>(result: serde_json::Value) -> Result<(), String> {
    C::response_from_value(result).map(drop).map_err(|err| err.to_string())
}

fn main() {
    let path = std::env::args().nth(1).expect("the JSONL file");
    let text = std::fs::read_to_string(&path).expect("read the JSONL file");
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut answers: BTreeMap<String, Row> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let method = value["method"].as_str().expect("a method").to_string();
        if let Some(result) = value.get_mut("result").map(serde_json::Value::take) {
            let decoded = match method.as_str() {
                "DOM.getDocument" => answer::<dom::GetDocumentParams>(result),
                "Accessibility.getFullAXTree" => answer::<accessibility::GetFullAxTreeParams>(result),
                "Page.getFrameTree" => answer::<page::GetFrameTreeParams>(result),
                "Runtime.evaluate" => answer::<runtime::EvaluateParams>(result),
                "Page.getLayoutMetrics" => answer::<page::GetLayoutMetricsParams>(result),
                "Network.getCookies" => answer::<network::GetCookiesParams>(result),
                other => Err(format!("no typed answer listed for {other}")),
            };
            let row = answers.entry(method).or_default();
            row.recorded += 1;
            match decoded {
                Ok(()) => row.typed += 1,
                Err(err) => {
                    row.error += 1;
                    row.first_error.get_or_insert(err);
                }
            }
            continue;
        }
        let row = rows.entry(method).or_default();
        row.recorded += 1;
        match serde_json::from_str::<CdpEventMessage>(line) {
            Ok(message) => match message.params {
                CdpEvent::Other(_) => row.other += 1,
                _ => row.typed += 1,
            },
            Err(err) => {
                row.error += 1;
                row.first_error.get_or_insert(err.to_string());
            }
        }
        if let Ok(Message::Event(_)) = serde_json::from_str::<Message<CdpEventMessage>>(line) {
            row.message_ok += 1;
        }
    }
    println!(
        "{:<44} {:>8} {:>6} {:>6} {:>6} {:>8}",
        "method", "recorded", "typed", "other", "error", "message"
    );
    let (mut n, mut typed, mut other, mut error, mut message_ok) = (0, 0, 0, 0, 0);
    for (method, row) in &rows {
        println!(
            "{method:<44} {:>8} {:>6} {:>6} {:>6} {:>8}",
            row.recorded, row.typed, row.other, row.error, row.message_ok
        );
        if let Some(err) = &row.first_error {
            println!("    first error: {err}");
        }
        n += row.recorded;
        typed += row.typed;
        other += row.other;
        error += row.error;
        message_ok += row.message_ok;
    }
    println!(
        "{:<44} {n:>8} {typed:>6} {other:>6} {error:>6} {message_ok:>8}",
        format!("total ({} methods)", rows.len())
    );
    println!("(message: decoded as Message::Event through chromiumoxide_types::Message<CdpEventMessage>)");
    if answers.is_empty() {
        return;
    }
    println!();
    println!("{:<44} {:>8} {:>6} {:>6}", "command answer", "answers", "typed", "error");
    let (mut n, mut typed, mut error) = (0, 0, 0);
    for (method, row) in &answers {
        println!("{method:<44} {:>8} {:>6} {:>6}", row.recorded, row.typed, row.error);
        if let Some(err) = &row.first_error {
            println!("    first error: {err}");
        }
        n += row.recorded;
        typed += row.typed;
        error += row.error;
    }
    println!("{:<44} {n:>8} {typed:>6} {error:>6}", "total");
}
RUST

# A debug build without debuginfo or incremental state: the quickest to build; decoding a few
# hundred events needs no optimisation.
export CARGO_TARGET_DIR="$work/target"
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=0
cargo build -q --manifest-path "$work/oxide/Cargo.toml"
echo "chromiumoxide_cdp $(cd "$work/oxide" && cargo pkgid -q chromiumoxide_cdp | sed 's/.*[@#]//'), $(rustc --version)"
"$CARGO_TARGET_DIR/debug/oxide-decode" "$input"
