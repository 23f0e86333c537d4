//! A flood of half-open connections against `chromate mcp --http` (issue 25): while N sockets
//! that connected and never finish their request headers are held open (each one the server
//! closes is opened again at once, as a persistent attacker would), a real client with the
//! token sends `initialize` and `tools/list` (then `DELETE`s its session) every 200 ms for
//! 15 s. Reports how many rounds succeeded, their latency, what the flood sockets got (a 503,
//! or closed without an answer), the server's stderr size, and its most open descriptors
//! against its limit.
//!
//! The bench raises its own descriptor limit to what the flood needs (the server inherits it;
//! its connection cap stays 512). Everything goes to 127.0.0.1; the server is started and
//! ended (SIGTERM, by PID) by the bench. No browser is launched: neither request needs one.
//!
//! ```text
//! cargo build --release -p chromate-mcp --bin chromate -p chromate-benches
//! target/release/connection_flood [N, default 1000] [path of the chromate binary]
//! ```

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOKEN: &str = "connection-flood-bench-token";
const EVERY: Duration = Duration::from_millis(200);
const FOR: Duration = Duration::from_secs(15);
/// How long one real request may take before it counts as unanswered.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);
const PARTIAL: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-";

fn main() {
    if let Err(err) = run() {
        eprintln!("connection_flood bench: {err}");
        std::process::exit(1);
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// Raises this process's soft descriptor limit to at least `want` (up to the hard limit, which
/// root may raise too); returns the soft limit now.
#[allow(unsafe_code)]
fn raise_fd_limit(want: u64) -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read or write one rlimit struct, which `limit` is.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        if limit.rlim_cur < want {
            let raised = libc::rlimit {
                rlim_cur: want,
                rlim_max: limit.rlim_max.max(want),
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) != 0 {
                let capped = libc::rlimit {
                    rlim_cur: limit.rlim_max,
                    rlim_max: limit.rlim_max,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &capped);
            }
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        }
    }
    limit.rlim_cur
}

/// One exchange on a new connection: the status, the headers (lower-case names) and the body.
fn exchange(
    port: u16,
    method: &str,
    session: Option<&str>,
    body: &str,
) -> Result<(u16, String, String), String> {
    let mut stream =
        TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(ANSWER_WITHIN))
        .map_err(|e| e.to_string())?;
    let session = session
        .map(|id| format!("MCP-Session-Id: {id}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Authorization: Bearer {TOKEN}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    let mut raw = Vec::new();
    match stream.read_to_end(&mut raw) {
        Ok(_) => {}
        Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            return Err("no answer within 5 s".to_owned());
        }
        Err(err) if raw.is_empty() => return Err(format!("read: {err}")),
        Err(_) => {}
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    if text.is_empty() {
        return Err("closed without an answer".to_owned());
    }
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    Ok((status, head.to_ascii_lowercase(), body.to_owned()))
}

/// One round of the real client: initialize, then tools/list in its session (timed), then
/// DELETE of the session (not timed, so sessions do not pile up to --max-sessions).
fn round(port: u16) -> Result<Duration, String> {
    let started = Instant::now();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}"#;
    let (status, head, _) = exchange(port, "POST", None, init)?;
    if status != 200 {
        return Err(format!("initialize: {status}"));
    }
    let session = head
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: "))
        .ok_or("initialize: no session id")?
        .trim()
        .to_owned();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, body) = exchange(port, "POST", Some(&session), list)?;
    let took = started.elapsed();
    let _ = exchange(port, "DELETE", Some(&session), "");
    if status != 200 || !body.contains("browser_navigate") {
        return Err(format!("tools/list: {status}"));
    }
    Ok(took)
}

/// What happened to the flood's sockets.
#[derive(Default)]
struct FloodCounts {
    opened: AtomicUsize,
    refused_503: AtomicUsize,
    closed_silently: AtomicUsize,
    connect_failed: AtomicUsize,
}

/// Holds `n` half-open sockets until `stop`, opening a new one for each the server closes.
fn flood(port: u16, n: usize, stop: &AtomicBool, counts: &FloodCounts, ready: &AtomicBool) {
    let open = || -> Option<TcpStream> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
        stream.write_all(PARTIAL).ok()?;
        stream.set_nonblocking(true).ok()?;
        Some(stream)
    };
    let mut sockets: Vec<Option<TcpStream>> = Vec::with_capacity(n);
    for _ in 0..n {
        let socket = open();
        match &socket {
            Some(_) => counts.opened.fetch_add(1, Ordering::SeqCst),
            None => counts.connect_failed.fetch_add(1, Ordering::SeqCst),
        };
        sockets.push(socket);
    }
    ready.store(true, Ordering::SeqCst);
    let mut buf = [0u8; 512];
    while !stop.load(Ordering::SeqCst) {
        for slot in &mut sockets {
            let closed = match slot {
                None => true,
                Some(stream) => match stream.read(&mut buf) {
                    Ok(0) => {
                        counts.closed_silently.fetch_add(1, Ordering::SeqCst);
                        true
                    }
                    Ok(read) => {
                        if buf[..read].starts_with(b"HTTP/1.1 503") {
                            counts.refused_503.fetch_add(1, Ordering::SeqCst);
                        } else {
                            counts.closed_silently.fetch_add(1, Ordering::SeqCst);
                        }
                        true
                    }
                    Err(err) if err.kind() == ErrorKind::WouldBlock => false,
                    Err(_) => {
                        counts.closed_silently.fetch_add(1, Ordering::SeqCst);
                        true
                    }
                },
            };
            if closed {
                *slot = open();
                match slot {
                    Some(_) => counts.opened.fetch_add(1, Ordering::SeqCst),
                    None => counts.connect_failed.fetch_add(1, Ordering::SeqCst),
                };
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Every flood socket is closed here, as `sockets` drops.
}

fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

fn fd_limit_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/limits"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with("Max open files"))
                .and_then(|line| line.split_whitespace().nth(3).map(str::to_owned))
        })
        .unwrap_or_else(|| "?".to_owned())
}

fn percentile(sorted: &[Duration], p: f64) -> String {
    if sorted.is_empty() {
        return "-".to_owned();
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    ms(sorted[idx.min(sorted.len() - 1)])
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(1000);
    let binary = match std::env::args().nth(2) {
        Some(path) => PathBuf::from(path),
        None => chromate_benches::chromate_binary()?,
    };
    let limit = raise_fd_limit(u64::try_from(n)? * 2 + 256);
    let dir = std::env::temp_dir().join(format!("chromate-flood-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let stderr_path = dir.join("stderr.txt");
    let mut child = Command::new(&binary)
        .args(["mcp", "--http", "127.0.0.1:0", "--auth-token", TOKEN])
        .env("CHROMATE_MCP_ARTIFACTS_DIR", &dir)
        .env("CHROMATE_RUNTIME_DIR", dir.join("runtime"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path)?)
        .spawn()?;
    let pid = child.id();
    let res = measure(pid, n, &stderr_path, &binary, limit);
    // SAFETY: signals only the child this bench started, by its PID; it is not reaped yet, so
    // the PID cannot have been reused.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(i32::try_from(pid)?, libc::SIGTERM);
    }
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    res
}

fn measure(
    pid: u32,
    n: usize,
    stderr_path: &std::path::Path,
    binary: &std::path::Path,
    own_limit: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let port = loop {
        let text = std::fs::read_to_string(stderr_path).unwrap_or_default();
        if let Some(port) = text
            .split("http://127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|port| port.parse::<u16>().ok())
        {
            break port;
        }
        if Instant::now() > deadline {
            return Err(format!("the server printed no address: {text}").into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr_before = std::fs::metadata(stderr_path)?.len();
    let stop = Arc::new(AtomicBool::new(false));
    let ready = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(FloodCounts::default());
    let flooder = {
        let (stop, ready, counts) = (stop.clone(), ready.clone(), counts.clone());
        std::thread::spawn(move || flood(port, n, &stop, &counts, &ready))
    };
    while !ready.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut latencies = Vec::new();
    let mut failures: std::collections::BTreeMap<String, usize> = Default::default();
    let mut most_fds = fd_count(pid);
    let started = Instant::now();
    let mut rounds = 0;
    while started.elapsed() < FOR {
        let tick = Instant::now();
        rounds += 1;
        match round(port) {
            Ok(took) => latencies.push(took),
            Err(reason) => *failures.entry(reason).or_default() += 1,
        }
        most_fds = most_fds.max(fd_count(pid));
        if let Some(rest) = EVERY.checked_sub(tick.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    stop.store(true, Ordering::SeqCst);
    let _ = flooder.join();
    let stderr_after = std::fs::metadata(stderr_path)?.len();
    latencies.sort();
    println!("binary: {}", binary.display());
    println!(
        "flood: {n} half-open sockets held for {} s (the bench's descriptor limit {own_limit})",
        FOR.as_secs()
    );
    println!();
    println!("| measure | value |");
    println!("|---|---:|");
    println!(
        "| real client rounds (initialize + tools/list) | {rounds} |\n| succeeded | {} |",
        latencies.len()
    );
    for (reason, count) in &failures {
        println!("| failed: {reason} | {count} |");
    }
    println!(
        "| latency p50 / p90 / p99 / max ms | {} / {} / {} / {} |",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.9),
        percentile(&latencies, 0.99),
        latencies.last().map_or("-".to_owned(), |d| ms(*d)),
    );
    println!(
        "| flood sockets opened (first {n} + reopened) | {} |",
        counts.opened.load(Ordering::SeqCst)
    );
    println!(
        "| flood sockets answered 503 | {} |",
        counts.refused_503.load(Ordering::SeqCst)
    );
    println!(
        "| flood sockets closed without an answer (evicted or header timeout) | {} |",
        counts.closed_silently.load(Ordering::SeqCst)
    );
    println!(
        "| flood connects that failed | {} |",
        counts.connect_failed.load(Ordering::SeqCst)
    );
    println!(
        "| server stderr bytes during the flood | {} |",
        stderr_after - stderr_before
    );
    println!(
        "| server's most open descriptors (sampled every round) / its limit | {most_fds} / {} |",
        fd_limit_of(pid)
    );
    Ok(())
}
