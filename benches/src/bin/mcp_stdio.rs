//! `chromate mcp` measured through its stdio interface, as an editor's agent sees it:
//! `initialize` latency, `tools/list` size, spawn to first navigate result, click by ref that
//! navigates, fill by ref, navigate to a 10,000-element page with its observation, and the
//! server's resident memory (Chrome aside).
//!
//! ```text
//! cargo build --release -p chromate-mcp && cargo run --release -p chromate-benches --bin mcp_stdio
//! ```

use chromate_benches::median_ms;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const REPEAT: usize = 15;

fn main() {
    if let Err(err) = run() {
        eprintln!("mcp_stdio bench: {err}");
        std::process::exit(1);
    }
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: i64,
}

impl Server {
    fn spawn() -> Result<Server, String> {
        let binary = chromate_benches::chromate_binary()?;
        let artifacts =
            std::env::temp_dir().join(format!("chromate-bench-mcp-{}", std::process::id()));
        let mut child = Command::new(binary)
            .arg("mcp")
            .env("CHROMATE_MCP_ARTIFACTS_DIR", &artifacts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    if tx.send(value).is_err() {
                        break;
                    }
                }
            }
        });
        Ok(Server {
            child,
            stdin,
            lines,
            next_id: 0,
        })
    }

    /// Sends a request and returns its response and the raw bytes of the response line.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").map_err(|e| e.to_string())?;
        loop {
            let value = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .map_err(|_| format!("no answer to {method}"))?;
            if value["id"] == json!(id) {
                if value.get("error").is_some() {
                    return Err(format!("{method} failed: {value}"));
                }
                return Ok(value["result"].clone());
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        if result["isError"] == json!(true) {
            return Err(format!("{tool} failed: {}", result["content"][0]["text"]));
        }
        Ok(result)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM: the server closes its browser and removes its profile, then exits.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// The ref on the snapshot line that carries `hint` (`#to-nav2`).
fn ref_with_hint(snapshot_text: &str, hint: &str) -> Option<String> {
    snapshot_text
        .lines()
        .find(|l| l.contains(hint))
        .and_then(|l| l.trim().split(':').next())
        .map(str::to_string)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let server_pages = chromate_tests::FixtureServer::start_detached()?;
    let spawned = Instant::now();
    let mut server = Server::spawn()?;
    let started = Instant::now();
    server.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}))?;
    let initialize_ms = started.elapsed().as_secs_f64() * 1e3;
    let tools = server.request("tools/list", json!({}))?;
    let tools_bytes = serde_json::to_string(&tools)?.len();
    server.call(
        "browser_navigate",
        json!({"url": server_pages.url("nav.html")}),
    )?;
    let first_navigate_ms = spawned.elapsed().as_secs_f64() * 1e3;

    let mut clicks = Vec::with_capacity(REPEAT);
    for _ in 0..REPEAT {
        server.call(
            "browser_navigate",
            json!({"url": server_pages.url("nav.html")}),
        )?;
        let snapshot = server.call("browser_snapshot", json!({}))?;
        let text = snapshot["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let element_ref = ref_with_hint(&text, "#to-nav2").ok_or("no #to-nav2 line")?;
        let started = Instant::now();
        server.call("browser_click", json!({"selector": element_ref}))?;
        clicks.push(started.elapsed());
    }

    server.call(
        "browser_navigate",
        json!({"url": server_pages.url("controls.html")}),
    )?;
    let snapshot = server.call("browser_snapshot", json!({}))?;
    let text = snapshot["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let field = ref_with_hint(&text, "#text-input").ok_or("no #text-input line")?;
    let mut fills = Vec::with_capacity(REPEAT);
    for i in 0..REPEAT {
        let started = Instant::now();
        server.call(
            "browser_fill",
            json!({"selector": field, "value": format!("hello world {i}")}),
        )?;
        fills.push(started.elapsed());
    }

    let mut big = Vec::with_capacity(5);
    let mut big_bytes = 0;
    for _ in 0..5 {
        server.call("browser_navigate", json!({"url": "about:blank"}))?;
        let started = Instant::now();
        let result = server.call(
            "browser_navigate",
            json!({"url": server_pages.url("bench-10000.html")}),
        )?;
        big.push(started.elapsed());
        big_bytes = serde_json::to_string(&result)?.len();
    }

    let rss_kib = std::fs::read_to_string(format!("/proc/{}/status", server.child.id()))?
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);

    println!("initialize answered: {initialize_ms:.1} ms");
    println!("tools/list: {tools_bytes} bytes");
    println!("spawn to first navigate result: {first_navigate_ms:.0} ms");
    println!(
        "click by ref that navigates: median {:.1} ms over {REPEAT}",
        median_ms(&mut clicks)
    );
    println!(
        "fill by ref: median {:.1} ms over {REPEAT}",
        median_ms(&mut fills)
    );
    println!(
        "navigate to bench-10000.html with its observation: median {:.0} ms over 5 ({big_bytes} bytes reply)",
        median_ms(&mut big)
    );
    println!(
        "server resident memory (Chrome aside): {:.1} MB",
        rss_kib as f64 / 1024.0
    );
    Ok(())
}
