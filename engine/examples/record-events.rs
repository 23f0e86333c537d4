//! Records the CDP events of one page load into a JSON file, the fixtures the page-state
//! reducer's tests replay (`engine/src/page/testdata/`). Serves a small page on 127.0.0.1 (a
//! same-origin iframe, a fetch after `load`, a fragment navigation, an `alert`), drives headless
//! Chromium through it, and writes every event of the page's session as `[{"method", "params"}]`
//! in arrival order. No network needed.
//!
//! ```text
//! cargo run -p chromate --example record-events -- engine/src/page/testdata/load.json
//! ```

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::Duration;

use chromate::{Browser, LaunchOptions, WaitUntil};

const PAGE: &str = r#"<!doctype html>
<html lang="en"><head><title>recorded</title></head>
<body>
  <h1>Recorded</h1>
  <iframe name="child" src="/child"></iframe>
  <script>addEventListener('load', () => fetch('/data').then(r => r.text()))</script>
</body></html>"#;

const CHILD: &str = "<!doctype html><p>child</p>";
const DATA: &str = "{\"ok\":true}";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(err) = run().await {
        eprintln!("record-events failed: {err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .ok_or("usage: record-events OUT.json")?;
    let url = serve()?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let page = browser.new_page("about:blank").await?;
    let mut events = page.session().raw_events();
    let recorder = tokio::spawn(async move {
        let mut recorded = Vec::new();
        while let Some(Ok(event)) = events.recv().await {
            let params: serde_json::Value = serde_json::from_str(event.params.get())?;
            recorded.push(serde_json::json!({ "method": event.method, "params": params }));
        }
        Ok::<_, serde_json::Error>(recorded)
    });
    page.goto(&url, WaitUntil::NetworkIdle, Duration::from_secs(30))
        .await?;
    page.evaluate("location.hash = 'part'").await?;
    page.evaluate("setTimeout(() => alert('hello'), 0); 1")
        .await?;
    page.wait_for_dialog(Duration::from_secs(10)).await?;
    page.accept_dialog(None).await?;
    page.wait_for_load_state(WaitUntil::Load, Duration::from_secs(10))
        .await?;
    browser.close().await;
    let recorded = recorder.await??;
    let text = serde_json::to_string_pretty(&recorded)?;
    std::fs::write(&out, text + "\n")?;
    println!("{} events of {url} written to {out}", recorded.len());
    Ok(())
}

/// Serves the page, its frame and its data on 127.0.0.1; returns the page's URL.
fn serve() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let (status, kind, body) = match path {
                "/" => ("200 OK", "text/html", PAGE),
                "/child" => ("200 OK", "text/html", CHILD),
                "/data" => ("200 OK", "application/json", DATA),
                _ => ("404 Not Found", "text/plain", ""),
            };
            let mut stream = &stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: {kind}; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Ok(url)
}
