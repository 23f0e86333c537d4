//! The engine core's own costs: CDP round trip against a minimal hand-written client on the
//! same transport, pipelined throughput, memory per idle page, and launch to first page.
//!
//! ```text
//! cargo run --release -p chromate-benches --bin transport
//! ```
//!
//! The minimal client spawns Chromium with `--remote-debugging-pipe` itself and speaks
//! NUL-framed JSON with blocking reads and writes on one thread: no tasks, no routing, no typed
//! decoding. The comparison isolates what chromate's transport adds.

#![allow(unsafe_code)]

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use chromate::cdp::runtime;
use chromate::{Browser, LaunchOptions, WaitUntil};
use chromate_benches::{median, median_ms};
use chromate_tests::FixtureServer;

const ROUND_TRIPS: usize = 500;
const PIPELINED: usize = 10_000;
const IDLE_PAGES: usize = 10;
const LAUNCHES: usize = 7;

/// `--current-thread` runs chromate on tokio's current-thread runtime (the reader task and the
/// caller then share one thread, as the minimal client does); the default is multi-threaded.
fn main() {
    let current_thread = std::env::args().any(|a| a == "--current-thread");
    let runtime = if current_thread {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    };
    let outcome = match runtime {
        Ok(runtime) => {
            println!(
                "tokio runtime: {}",
                if current_thread {
                    "current-thread"
                } else {
                    "multi-thread (2 workers)"
                }
            );
            runtime.block_on(run())
        }
        Err(err) => Err(err.into()),
    };
    if let Err(err) = outcome {
        eprintln!("transport bench: {err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let minimal = minimal_round_trips()?;

    let browser = Browser::launch(LaunchOptions::default()).await?;
    let page = browser.new_page("about:blank").await?;
    let session = page.session().clone();
    let eval = runtime::EvaluateParams::new("1");
    for _ in 0..50 {
        session.send(&eval).await?;
    }
    let mut samples = Vec::with_capacity(ROUND_TRIPS);
    for _ in 0..ROUND_TRIPS {
        let started = Instant::now();
        session.send(&eval).await?;
        samples.push(started.elapsed());
    }
    let chromate = median(&mut samples);
    println!(
        "round trip Runtime.evaluate(\"1\"): chromate {:.1} µs, minimal client {:.1} µs, ratio {:.2}",
        micros(chromate),
        micros(minimal),
        chromate.as_secs_f64() / minimal.as_secs_f64()
    );

    let started = Instant::now();
    let calls = (0..PIPELINED).map(|_| session.send(&eval));
    let answers = futures::future::join_all(calls).await;
    let elapsed = started.elapsed();
    let n_ok = answers.iter().filter(|a| a.is_ok()).count();
    println!(
        "pipelined: {n_ok}/{PIPELINED} answered in {:.0} ms = {:.0} commands/s",
        elapsed.as_secs_f64() * 1e3,
        PIPELINED as f64 / elapsed.as_secs_f64()
    );

    let server = FixtureServer::start().await?;
    let pid = browser.pid().ok_or("no pid")?;
    let before = tree_rss_kib(pid);
    let mut pages = Vec::new();
    for _ in 0..IDLE_PAGES {
        pages.push(browser.new_page(&server.url("login.html")).await?);
    }
    let after = tree_rss_kib(pid);
    println!(
        "memory per idle page (login.html): {:.1} MB proportional set size across the browser's processes ({IDLE_PAGES} pages)",
        (after.saturating_sub(before)) as f64 / 1024.0 / IDLE_PAGES as f64
    );
    browser.close().await;

    let mut launches = Vec::with_capacity(LAUNCHES);
    for _ in 0..LAUNCHES {
        let started = Instant::now();
        let browser = Browser::launch(LaunchOptions::default()).await?;
        let page = browser.new_page("about:blank").await?;
        page.goto(
            &server.url("login.html"),
            WaitUntil::Load,
            Duration::from_secs(30),
        )
        .await?;
        launches.push(started.elapsed());
        browser.close().await;
    }
    println!(
        "launch to first page loaded (login.html): median {:.0} ms over {LAUNCHES}",
        median_ms(&mut launches)
    );
    Ok(())
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Sum of proportional set size (shared pages split between the processes that map them) over
/// the browser and its descendants, in KiB.
fn tree_rss_kib(pid: u32) -> u64 {
    let mut pids = chromate_tests::procs::descendants(pid);
    pids.push(pid);
    pids.iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/smaps_rollup")).ok())
        .filter_map(|status| {
            status
                .lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .sum()
}

/// The minimal client: its own Chromium on pipes, blocking I/O, one thread.
fn minimal_round_trips() -> Result<Duration, String> {
    let browser = chromate::browser::find_browser(None).map_err(|e| e.to_string())?;
    let profile = tempfile_dir()?;
    let (browser_reads, mut we_write) = std::io::pipe().map_err(|e| e.to_string())?;
    let (we_read, browser_writes) = std::io::pipe().map_err(|e| e.to_string())?;
    let browser_reads: OwnedFd = browser_reads.into();
    let browser_writes: OwnedFd = browser_writes.into();
    let (read_fd, write_fd) = (browser_reads.as_raw_fd(), browser_writes.as_raw_fd());
    let mut command = std::process::Command::new(browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--remote-debugging-pipe",
            "about:blank",
        ])
        .arg(format!("--user-data-dir={profile}"))
        .stderr(std::process::Stdio::null())
        .process_group(0);
    // SAFETY: runs in the child before exec; fcntl and dup2 are async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            let high_read = libc::fcntl(read_fd, libc::F_DUPFD, 10);
            let high_write = libc::fcntl(write_fd, libc::F_DUPFD, 10);
            if high_read < 0
                || high_write < 0
                || libc::dup2(high_read, 3) < 0
                || libc::dup2(high_write, 4) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    drop(browser_reads);
    drop(browser_writes);
    let mut reader = BufReader::new(we_read);
    let mut next_id = 0u64;
    let mut call = |method: &str,
                    params: serde_json::Value,
                    session: Option<&str>|
     -> Result<serde_json::Value, String> {
        next_id += 1;
        let mut message = serde_json::json!({"id": next_id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = serde_json::json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).map_err(|e| e.to_string())?;
        bytes.push(0);
        we_write.write_all(&bytes).map_err(|e| e.to_string())?;
        loop {
            let mut frame = Vec::new();
            reader
                .read_until(0, &mut frame)
                .map_err(|e| e.to_string())?;
            if frame.is_empty() {
                return Err("the browser closed its pipe".into());
            }
            frame.pop();
            let value: serde_json::Value =
                serde_json::from_slice(&frame).map_err(|e| e.to_string())?;
            if value["id"].as_u64() == Some(next_id) {
                return Ok(value["result"].clone());
            }
        }
    };
    let created = call(
        "Target.createTarget",
        serde_json::json!({"url": "about:blank"}),
        None,
    )?;
    let target_id = created["targetId"]
        .as_str()
        .ok_or("no targetId")?
        .to_string();
    let attached = call(
        "Target.attachToTarget",
        serde_json::json!({"targetId": target_id, "flatten": true}),
        None,
    )?;
    let session = attached["sessionId"]
        .as_str()
        .ok_or("no sessionId")?
        .to_string();
    let params = serde_json::json!({"expression": "1"});
    for _ in 0..50 {
        call("Runtime.evaluate", params.clone(), Some(&session))?;
    }
    let mut samples = Vec::with_capacity(ROUND_TRIPS);
    for _ in 0..ROUND_TRIPS {
        let started = Instant::now();
        call("Runtime.evaluate", params.clone(), Some(&session))?;
        samples.push(started.elapsed());
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&profile);
    Ok(median(&mut samples))
}

fn tempfile_dir() -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("chromate-bench-minimal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(dir.display().to_string())
}
