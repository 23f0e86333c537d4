//! Two ways to compute the snapshot, measured side by side on the benchmark pages (issue #5):
//! chromate's in-page walk in its isolated world (`Page::snapshot`, as shipped), against
//! Chrome's accessibility tree joined to the DOM, as an AX-based snapshot would have to do it.
//!
//! For the AX approach it times `Accessibility.getFullAXTree` (the first call, which makes the
//! renderer build its accessibility tree, then repeats), the size of the reply and its node
//! count, `Accessibility.enable` (whether it is needed at all), the DOM join (`DOM.getDocument`
//! depth -1 pierce: hints, hrefs and the backend ids to map AX nodes to elements), resolving the
//! listed nodes to JS objects (what minting refs on them would take), and a minimal renderer in
//! Rust (`role "name"`, indented, for non-ignored nodes that are not generic or text), plus the
//! scoped alternatives `getPartialAXTree` and `queryAXTree`. Every repeated figure is the median
//! over the repetitions (the first `getFullAXTree` and `Accessibility.enable` happen once); the
//! AX figures include JSON decoding into `serde_json::Value`, as any client must decode the
//! reply.
//!
//! `cargo run --release -p chromate-benches --bin snapshot_approaches [-- <runs>]`; figures go
//! in `benches/README.md` and the decision in `ARCHITECTURE.md`. It measures; it does not assert.

// A bench stops at the first failure, with the reason: it may expect.
#![allow(clippy::expect_used)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use chromate::{snapshot::SnapshotOptions, Browser, LaunchOptions, Page, Session, WaitUntil};
use chromate_benches::median_ms;
use chromate_tests::FixtureServer;
use serde_json::{json, Value};

const PAGES: [&str; 3] = ["bench-50.html", "bench-2000.html", "bench-10000.html"];

/// Roles a minimal AX renderer leaves out: structure without meaning, and text runs (the
/// renderer prints the name of their parent instead).
const SKIPPED_ROLES: [&str; 6] = [
    "generic",
    "none",
    "StaticText",
    "InlineTextBox",
    "LineBreak",
    "RootWebArea",
];

async fn timed<T, F: std::future::Future<Output = T>>(fut: F) -> (T, Duration) {
    let started = Instant::now();
    let res = fut.await;
    (res, started.elapsed())
}

/// One CDP command answered as JSON, with its time and the size of the answer re-serialised
/// (compact JSON, as Chrome sends it).
async fn raw(session: &Session, method: &str, params: Value) -> (Value, Duration, usize) {
    let (answer, time) = timed(session.send_raw(method, params)).await;
    let answer = answer.unwrap_or_else(|err| panic!("{method}: {err}"));
    let bytes = serde_json::to_string(&answer).map_or(0, |s| s.len());
    (answer, time, bytes)
}

fn text_of(value: &Value) -> &str {
    value.get("value").and_then(Value::as_str).unwrap_or("")
}

/// The lines a minimal AX renderer prints, and the backend DOM ids of the nodes listed, in tree
/// order: `role "name"` indented by depth, for every non-ignored node whose role is not
/// structure or text.
fn render_ax(tree: &Value) -> (String, Vec<i64>) {
    let empty = Vec::new();
    let nodes = tree
        .get("nodes")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|n| Some((n.get("nodeId")?.as_str()?, n)))
        .collect();
    let mut out = String::new();
    let mut backend_ids = Vec::new();
    let Some(root) = nodes.first() else {
        return (out, backend_ids);
    };
    let mut stack = vec![(root, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        let ignored = node.get("ignored").and_then(Value::as_bool) == Some(true);
        let role = node.get("role").map_or("", text_of);
        let listed = !ignored && !role.is_empty() && !SKIPPED_ROLES.contains(&role);
        if listed {
            for _ in 0..depth {
                out.push_str("  ");
            }
            out.push_str(role);
            let name = node.get("name").map_or("", text_of);
            if !name.is_empty() {
                out.push(' ');
                out.push_str(&Value::from(name).to_string());
            }
            out.push('\n');
            if let Some(id) = node.get("backendDOMNodeId").and_then(Value::as_i64) {
                backend_ids.push(id);
            }
        }
        let child_depth = if listed { depth + 1 } else { depth };
        if let Some(children) = node.get("childIds").and_then(Value::as_array) {
            for child in children.iter().rev() {
                if let Some(child) = child.as_str().and_then(|id| by_id.get(id)) {
                    stack.push((child, child_depth));
                }
            }
        }
    }
    (out, backend_ids)
}

/// Joins the DOM to the AX nodes: backend node id → element attributes (what hints, hrefs and
/// secret-field checks need), over the pierced document.
fn index_dom(document: &Value) -> HashMap<i64, &Value> {
    let mut map = HashMap::new();
    let mut stack: Vec<&Value> = document.get("root").into_iter().collect();
    while let Some(node) = stack.pop() {
        if let Some(id) = node.get("backendNodeId").and_then(Value::as_i64) {
            map.insert(id, node);
        }
        for key in ["children", "shadowRoots"] {
            if let Some(children) = node.get(key).and_then(Value::as_array) {
                stack.extend(children);
            }
        }
        if let Some(content) = node.get("contentDocument") {
            stack.push(content);
        }
    }
    map
}

struct Row {
    page: &'static str,
    walk_default: f64,
    walk_default_bytes: usize,
    walk_full: f64,
    walk_full_bytes: usize,
    walk_full_lines: usize,
    walk_after_ax: f64,
    ax_first: f64,
    ax_median: f64,
    ax_bytes: usize,
    ax_nodes: usize,
    ax_not_ignored: usize,
    enable: f64,
    ax_enabled_median: f64,
    dom_median: f64,
    dom_bytes: usize,
    dom_nodes: usize,
    render_ms: f64,
    ax_lines: usize,
    ax_render_bytes: usize,
    ax_joined: usize,
    resolve_ms: f64,
    partial_ms: f64,
    query_ms: f64,
}

async fn measure(page: &Page, path: &'static str, runs: usize) -> Row {
    let session = page.session().clone();
    // chromate's walk, as shipped: the first snapshot mints every ref, then repeats.
    page.snapshot(SnapshotOptions::default())
        .await
        .expect("first snapshot");
    let mut samples = Vec::new();
    let mut default_view = None;
    for _ in 0..runs {
        let (snap, time) = timed(page.snapshot(SnapshotOptions::default())).await;
        default_view = Some(snap.expect("default snapshot"));
        samples.push(time);
    }
    let walk_default = median_ms(&mut samples);
    let full = SnapshotOptions {
        max_lines: 100_000,
        ..SnapshotOptions::default()
    };
    page.snapshot(full.clone())
        .await
        .expect("first full snapshot");
    let mut samples = Vec::new();
    let mut full_view = None;
    for _ in 0..runs {
        let (snap, time) = timed(page.snapshot(full.clone())).await;
        full_view = Some(snap.expect("full snapshot"));
        samples.push(time);
    }
    let walk_full = median_ms(&mut samples);
    let default_view = default_view.expect("at least one run");
    let full_view = full_view.expect("at least one run");

    // The AX tree, first without `Accessibility.enable`: the first call builds the tree.
    let (_, first, _) = raw(&session, "Accessibility.getFullAXTree", json!({})).await;
    let mut samples = Vec::new();
    let mut tree = Value::Null;
    let mut ax_bytes = 0;
    for _ in 0..runs {
        let (answer, time, bytes) = raw(&session, "Accessibility.getFullAXTree", json!({})).await;
        samples.push(time);
        tree = answer;
        ax_bytes = bytes;
    }
    let ax_median = median_ms(&mut samples);
    let nodes = tree
        .get("nodes")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let ax_nodes = nodes.len();
    let ax_not_ignored = nodes
        .iter()
        .filter(|n| n.get("ignored").and_then(Value::as_bool) != Some(true))
        .count();
    let (_, enable, _) = raw(&session, "Accessibility.enable", json!({})).await;
    let mut samples = Vec::new();
    for _ in 0..runs {
        samples.push(
            raw(&session, "Accessibility.getFullAXTree", json!({}))
                .await
                .1,
        );
    }
    let ax_enabled_median = median_ms(&mut samples);

    // The join: the whole pierced DOM (attributes for hints, hrefs, secrets; backend ids).
    let mut samples = Vec::new();
    let mut document = Value::Null;
    let mut dom_bytes = 0;
    for _ in 0..runs {
        let (answer, time, bytes) = raw(
            &session,
            "DOM.getDocument",
            json!({"depth": -1, "pierce": true}),
        )
        .await;
        samples.push(time);
        document = answer;
        dom_bytes = bytes;
    }
    let dom_median = median_ms(&mut samples);

    // Rendering in Rust: index the DOM by backend id, walk the AX tree, print lines.
    let mut samples = Vec::new();
    let mut rendered = (String::new(), Vec::new());
    let mut dom_nodes = 0;
    let mut ax_joined = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let index = index_dom(&document);
        rendered = render_ax(&tree);
        let joined = rendered
            .1
            .iter()
            .filter(|id| index.contains_key(id))
            .count();
        samples.push(started.elapsed());
        dom_nodes = index.len();
        ax_joined = joined;
    }
    let render_ms = median_ms(&mut samples);
    let (ax_text, backend_ids) = rendered;

    // Refs: an AX snapshot must reach each listed element as an object to tag it (here the
    // first 97 lines, as many as the default view lists), one `DOM.resolveNode` each, pipelined.
    let listed: Vec<i64> = backend_ids.iter().copied().take(97).collect();
    let mut samples = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let answers = futures::future::join_all(listed.iter().map(|id| {
            session.send_raw(
                "DOM.resolveNode",
                json!({"backendNodeId": id, "objectGroup": "bench"}),
            )
        }))
        .await;
        samples.push(started.elapsed());
        for answer in answers {
            answer.expect("DOM.resolveNode");
        }
        session
            .send_raw(
                "Runtime.releaseObjectGroup",
                json!({"objectGroup": "bench"}),
            )
            .await
            .expect("releaseObjectGroup");
    }
    let resolve_ms = median_ms(&mut samples);

    // Scoped alternatives: one node (what the oracle test asks per element) and a query of one
    // role under the document.
    let one = *listed.first().expect("an AX line with a DOM node");
    let mut samples = Vec::new();
    for _ in 0..runs {
        samples.push(
            raw(
                &session,
                "Accessibility.getPartialAXTree",
                json!({"backendNodeId": one, "fetchRelatives": false}),
            )
            .await
            .1,
        );
    }
    let partial_ms = median_ms(&mut samples);
    let root_backend = document
        .pointer("/root/backendNodeId")
        .and_then(Value::as_i64)
        .expect("document backend id");
    let mut samples = Vec::new();
    for _ in 0..runs {
        samples.push(
            raw(
                &session,
                "Accessibility.queryAXTree",
                json!({"backendNodeId": root_backend, "role": "button"}),
            )
            .await
            .1,
        );
    }
    let query_ms = median_ms(&mut samples);
    raw(&session, "Accessibility.disable", json!({})).await;

    // chromate's walk again, now that the renderer keeps an accessibility tree.
    let mut samples = Vec::new();
    for _ in 0..runs {
        let (snap, time) = timed(page.snapshot(SnapshotOptions::default())).await;
        snap.expect("snapshot after AX");
        samples.push(time);
    }
    let walk_after_ax = median_ms(&mut samples);

    Row {
        page: path,
        walk_default,
        walk_default_bytes: default_view.render().len(),
        walk_full,
        walk_full_bytes: full_view.render().len(),
        walk_full_lines: full_view.lines.len(),
        walk_after_ax,
        ax_first: first.as_secs_f64() * 1e3,
        ax_median,
        ax_bytes,
        ax_nodes,
        ax_not_ignored,
        enable: enable.as_secs_f64() * 1e3,
        ax_enabled_median,
        dom_median,
        dom_bytes,
        dom_nodes,
        render_ms,
        ax_lines: ax_text.lines().count(),
        ax_render_bytes: ax_text.len(),
        ax_joined,
        resolve_ms,
        partial_ms,
        query_ms,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs = chromate_benches::runs_arg(21);
    let server = FixtureServer::start_detached()?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    println!("{}; medians of {runs}", browser.version().product);
    let mut rows = Vec::new();
    for path in PAGES {
        let page = browser.new_page("about:blank").await?;
        page.goto(&server.url(path), WaitUntil::Load, Duration::from_secs(30))
            .await?;
        rows.push(measure(&page, path, runs).await);
        browser.close_page(&page).await?;
    }
    browser.close().await;
    for r in &rows {
        println!("\n{}", r.page);
        println!(
            "  walk, default view:        {:>8.1} ms  {:>9} bytes rendered",
            r.walk_default, r.walk_default_bytes
        );
        println!(
            "  walk, full view:           {:>8.1} ms  {:>9} bytes rendered, {} lines",
            r.walk_full, r.walk_full_bytes, r.walk_full_lines
        );
        println!(
            "  walk, default, AX on:      {:>8.1} ms  (after the renderer built its AX tree)",
            r.walk_after_ax
        );
        println!(
            "  getFullAXTree, first:      {:>8.1} ms  (no Accessibility.enable)",
            r.ax_first
        );
        println!(
            "  getFullAXTree, repeat:     {:>8.1} ms  {:>9} bytes, {} nodes, {} not ignored",
            r.ax_median, r.ax_bytes, r.ax_nodes, r.ax_not_ignored
        );
        println!("  Accessibility.enable:      {:>8.1} ms", r.enable);
        println!(
            "  getFullAXTree, enabled:    {:>8.1} ms",
            r.ax_enabled_median
        );
        println!(
            "  DOM.getDocument -1 pierce: {:>8.1} ms  {:>9} bytes, {} nodes",
            r.dom_median, r.dom_bytes, r.dom_nodes
        );
        println!(
            "  join + render in Rust:     {:>8.2} ms  {:>9} bytes rendered, {} lines ({} joined)",
            r.render_ms, r.ax_render_bytes, r.ax_lines, r.ax_joined
        );
        println!(
            "  resolveNode x97 (refs):    {:>8.1} ms  (pipelined)",
            r.resolve_ms
        );
        println!("  getPartialAXTree, 1 node:  {:>8.1} ms", r.partial_ms);
        println!("  queryAXTree role=button:   {:>8.1} ms", r.query_ms);
        println!(
            "  AX total (tree + DOM + render + refs): {:.1} ms",
            r.ax_median + r.dom_median + r.render_ms + r.resolve_ms
        );
    }
    Ok(())
}
