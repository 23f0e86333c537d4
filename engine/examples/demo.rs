//! The chromate demo: serves a small page on 127.0.0.1, drives headless Chromium through it,
//! and prints what chromate saw and did. No network needed.
//!
//! ```text
//! cargo run -p chromate --example demo
//! ```

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use chromate::{
    actions::TextMatch,
    journal::LogFilter,
    snapshot::{diff, SnapshotOptions},
    Browser, LaunchOptions, WaitUntil,
};

const PAGE: &str = r#"<!doctype html>
<html lang="en"><head><title>chromate demo</title></head>
<body>
  <h1>Sign in</h1>
  <form id="login" onsubmit="event.preventDefault(); document.querySelector('#status').textContent = 'Welcome, ' + this.user.value">
    <label>User <input name="user" placeholder="ann"></label>
    <button id="go">Sign in</button>
  </form>
  <p id="status" role="status"></p>
  <script>console.log('demo page loaded')</script>
</body></html>"#;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(err) = run().await {
        eprintln!("demo failed: {err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let url = serve_page()?;
    println!("serving the demo page at {url}");

    let started = Instant::now();
    let browser = Browser::launch(LaunchOptions::default()).await?;
    println!(
        "launched {} (pid {}) in {} ms",
        browser.version().product,
        browser.pid().unwrap_or(0),
        started.elapsed().as_millis()
    );

    let page = browser.new_page("about:blank").await?;
    let nav_started = Instant::now();
    let nav = page
        .goto(&url, WaitUntil::Load, Duration::from_secs(30))
        .await?;
    println!(
        "navigated to {} (HTTP {}) in {} ms; title {:?}",
        nav.url,
        nav.status.map_or("-".to_string(), |s| s.to_string()),
        nav_started.elapsed().as_millis(),
        page.title().await?
    );

    let snapshot = page.snapshot(SnapshotOptions::default()).await?;
    println!(
        "chromate sees ({} ms in the page):",
        snapshot.page_ms.round()
    );
    for line in snapshot.render().lines() {
        println!("  {line}");
    }

    let act_started = Instant::now();
    page.locator("label=User")?.fill("ann").await?;
    page.locator("role=button[name=\"Sign in\"]")?
        .click()
        .await?;
    page.locator("#status")?
        .expect_text(&TextMatch::Contains("Welcome".into()))
        .await?;
    let status = page
        .locator("#status")?
        .text()
        .await?
        .text
        .unwrap_or_default();
    println!(
        "filled User, clicked Sign in, waited for the status in {} ms; the page says {status:?}",
        act_started.elapsed().as_millis()
    );

    let after = page.snapshot(SnapshotOptions::default()).await?;
    println!("what changed:");
    for line in diff(Some(&snapshot), &after).render().lines() {
        println!("  {line}");
    }
    let logs = browser.journal().list(&LogFilter::default(), 0, 20);
    println!("console and network, as journalled:");
    for entry in &logs.entries {
        println!(
            "  #{} {} {}",
            entry.seq,
            entry.kind().as_str(),
            entry.text().or(entry.url()).unwrap_or_default()
        );
    }

    let pid = browser.pid();
    browser.close().await;
    println!(
        "closed the browser (pid {}) and removed its profile; total {} ms",
        pid.unwrap_or(0),
        started.elapsed().as_millis()
    );
    Ok(())
}

/// Serves `PAGE` to every request on an ephemeral 127.0.0.1 port, from a background thread.
fn serve_page() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            // Read the request head; the demo page ignores what was asked for.
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let mut stream = &stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PAGE}",
                PAGE.len()
            );
        }
    });
    Ok(url)
}
