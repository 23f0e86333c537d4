//! Several `chromate mcp --http` servers behind nginx, on one Browserless pool (issue 31).
//!
//! Phase 1: N agents (`tests/clients/agents.py`, the Python MCP SDK) on one server directly.
//! Phase 2: N agents through nginx (the config of docs/mcp.md, sticky by the session id's
//! node prefix) on two servers; then server `node-a` is killed (SIGKILL, by PID) while every
//! session is open, and each agent makes one more call. Each agent: initialize, navigate (the
//! pool's browser starts here), navigate again, eval, snapshot, then ROUNDS more of navigate,
//! eval and snapshot. Reports per step p50/p99 (ms, over every agent's calls) for both phases;
//! memory while all sessions are open: each server's RSS, and the pool's browsers (every
//! Chromium process of the pool, PSS from `/proc/<pid>/smaps_rollup`, so shared pages count
//! once), per session; and what the killed server's sessions got.
//!
//! Everything is on 127.0.0.1 and ended by PID (`chromate_tests::nginx`, `::pool`).
//!
//! ```text
//! cargo build -p chromate-mcp --bin chromate -p chromate-benches --bin balanced
//! target/debug/balanced [N, default 10] [ROUNDS, default 5] [path of the chromate binary]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use chromate_tests::nginx::{agents_fixture, Agents, HttpNode, Nginx};
use chromate_tests::pool::{Browserless, PoolLimits};
use serde_json::Value;

const TOKEN: &str = "balanced-bench-token";
const STEPS: [&str; 5] = [
    "initialize",
    "navigate",
    "navigate_again",
    "eval",
    "snapshot",
];

fn main() {
    if let Err(err) = run() {
        eprintln!("balanced bench: {err}");
        std::process::exit(1);
    }
}

fn arg<T: std::str::FromStr>(index: usize, default: T) -> T {
    std::env::args()
        .nth(index)
        .and_then(|text| text.parse().ok())
        .unwrap_or(default)
}

/// A number from `/proc/<pid>/<file>`'s line `<key>: <n> kB`, in KiB.
fn proc_kib(pid: u32, file: &str, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix(key)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or(0)
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

/// The `q` quantile (nearest rank) of `values`.
fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

/// Every agent's times of `step`.
fn times(report: &[Value], step: &str) -> Vec<f64> {
    report
        .iter()
        .flat_map(|agent| agent["times"][step].as_array().cloned().unwrap_or_default())
        .filter_map(|ms| ms.as_f64())
        .collect()
}

/// Runs `count` agents on `endpoint` until they are all ready (sessions open); the report.
fn ready(agents: &mut Agents) -> Result<Vec<Value>, String> {
    let report = agents.wait_for("READY", Duration::from_secs(300))?;
    let report = report.as_array().cloned().unwrap_or_default();
    let failed: Vec<&Value> = report
        .iter()
        .filter(|agent| !agent["error"].is_null())
        .collect();
    if !failed.is_empty() {
        return Err(format!("{} agents failed: {:?}", failed.len(), failed));
    }
    Ok(report)
}

/// The pool's browsers' memory now: the sum of their processes' PSS, in KiB, and how many
/// processes.
fn pool_pss(pool: &Browserless) -> (u64, usize) {
    let mut pids = pool.chromium_pids();
    for browser in pool.browser_pids() {
        for pid in chromate_tests::procs::descendants(browser) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
    }
    let total = pids
        .iter()
        .map(|&pid| proc_kib(pid, "smaps_rollup", "Pss"))
        .sum();
    (total, pids.len())
}

fn run() -> Result<(), String> {
    let count: usize = arg(1, 10);
    let rounds: usize = arg(2, 5);
    let binary = std::env::args()
        .nth(3)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/debug/chromate"));
    let binary = std::path::absolute(&binary).map_err(|err| err.to_string())?;
    if !binary.is_file() {
        return Err(format!("{} is missing", binary.display()));
    }
    let started = Instant::now();
    let fixture = agents_fixture().map_err(|err| format!("fixture: {err}"))?;
    let pool = Browserless::start(PoolLimits {
        concurrent: count as u32,
        queued: 0,
        timeout_ms: 600_000,
    })
    .map_err(|err| format!("Browserless: {err}"))?;
    let endpoint = pool.ws_url();
    let node_args = [
        "--auth-token",
        TOKEN,
        "--cdp-endpoint",
        endpoint.as_str(),
        "--cdp-timeout",
        "240000",
    ];
    let start_node = |name: &str| {
        HttpNode::start(&binary, name, &node_args).map_err(|err| format!("{name}: {err}"))
    };
    println!(
        "{count} agents, {rounds} more rounds each, chromate {}",
        binary.display()
    );

    // Phase 1: one server, no balancer.
    let mut solo = start_node("solo")?;
    let solo_idle = proc_kib(solo.pid(), "status", "VmRSS");
    let direct = format!("http://{}/mcp", solo.address());
    let mut agents = Agents::start_rounds(&direct, TOKEN, &fixture.origin(), count, rounds)
        .map_err(|err| format!("agents: {err}"))?;
    let direct_report = ready(&mut agents)?;
    let solo_rss = proc_kib(solo.pid(), "status", "VmRSS");
    let (solo_pool, solo_procs) = pool_pss(&pool);
    agents.go().map_err(|err| err.to_string())?;
    agents.wait_for("DONE", Duration::from_secs(120))?;
    drop(agents);
    solo.stop();
    println!(
        "phase 1 (one server, {count} sessions): server RSS {} MiB idle, {} MiB with the sessions ({} MiB per session); pool browsers {} processes, PSS {} MiB ({} MiB per session)",
        mib(solo_idle),
        mib(solo_rss),
        mib(solo_rss.saturating_sub(solo_idle) / count as u64),
        solo_procs,
        mib(solo_pool),
        mib(solo_pool / count as u64)
    );
    // The pool lets the browsers go as the sessions end.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pool.browser_pids().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }

    // Phase 2: two servers behind nginx.
    let mut a = start_node("node-a")?;
    let b = start_node("node-b")?;
    let idle = (
        proc_kib(a.pid(), "status", "VmRSS"),
        proc_kib(b.pid(), "status", "VmRSS"),
    );
    let nginx = Nginx::start(&[("node-a", a.address()), ("node-b", b.address())])
        .map_err(|err| format!("nginx: {err}"))?;
    let nginx_rss_idle: u64 = nginx
        .pids()
        .iter()
        .map(|&pid| proc_kib(pid, "status", "VmRSS"))
        .sum();
    let mut agents =
        Agents::start_rounds(&nginx.endpoint(), TOKEN, &fixture.origin(), count, rounds)
            .map_err(|err| format!("agents: {err}"))?;
    let balanced_report = ready(&mut agents)?;
    let on = |node: &str| {
        balanced_report
            .iter()
            .filter(|agent| {
                agent["session_id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(&format!("{node}.")))
            })
            .count()
    };
    let (on_a, on_b) = (on("node-a"), on("node-b"));
    let rss = (
        proc_kib(a.pid(), "status", "VmRSS"),
        proc_kib(b.pid(), "status", "VmRSS"),
    );
    let nginx_rss: u64 = nginx
        .pids()
        .iter()
        .map(|&pid| proc_kib(pid, "status", "VmRSS"))
        .sum();
    let (balanced_pool, balanced_procs) = pool_pss(&pool);
    println!(
        "phase 2 (nginx, two servers, {count} sessions: {on_a} on node-a, {on_b} on node-b): node-a RSS {} → {} MiB, node-b RSS {} → {} MiB; nginx (master and worker) RSS {} → {} MiB; pool browsers {} processes, PSS {} MiB ({} MiB per session)",
        mib(idle.0),
        mib(rss.0),
        mib(idle.1),
        mib(rss.1),
        mib(nginx_rss_idle),
        mib(nginx_rss),
        balanced_procs,
        mib(balanced_pool),
        mib(balanced_pool / count as u64)
    );
    // Kill node-a with every session open.
    let browsers_before = pool.browser_pids().len();
    a.kill();
    let killed = Instant::now();
    let deadline = killed + Duration::from_secs(60);
    while pool.browser_pids().len() > on_b && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let freed_after = killed.elapsed();
    let browsers_after = pool.browser_pids().len();
    agents.go().map_err(|err| err.to_string())?;
    let done = agents.wait_for("DONE", Duration::from_secs(120))?;
    drop(agents);
    println!(
        "node-a killed (SIGKILL): the pool's browsers {browsers_before} → {browsers_after} within {} ms",
        freed_after.as_millis()
    );
    let mut outcomes: Vec<(String, String)> = Vec::new();
    for agent in done.as_array().into_iter().flatten() {
        let after = &agent["after"];
        let node = balanced_report
            .iter()
            .find(|report| report["name"] == agent["name"])
            .and_then(|report| report["session_id"].as_str())
            .and_then(|id| id.split_once('.'))
            .map(|(node, _)| node.to_owned())
            .unwrap_or_default();
        let what = if after["ok"] == true {
            format!("ok in {} ms", after["ms"])
        } else {
            format!(
                "error {} {:?} in {} ms",
                after["code"], after["message"], after["ms"]
            )
        };
        outcomes.push((node, what));
    }
    outcomes.sort();
    outcomes.dedup_by(|x, y| x.0 == y.0 && x.1.split(" in ").next() == y.1.split(" in ").next());
    for (node, what) in &outcomes {
        println!("  next call of a session on {node}: {what}");
    }
    drop(nginx);
    drop(a);
    drop(b);

    println!();
    println!("| step | one server p50 | p99 | nginx, two servers p50 | p99 | calls each |");
    println!("|---|---|---|---|---|---|");
    for step in STEPS {
        let mut one = times(&direct_report, step);
        let mut two = times(&balanced_report, step);
        println!(
            "| {step} | {:.1} | {:.1} | {:.1} | {:.1} | {} / {} |",
            quantile(&mut one, 0.5),
            quantile(&mut one, 0.99),
            quantile(&mut two, 0.5),
            quantile(&mut two, 0.99),
            one.len(),
            two.len()
        );
    }
    let served = direct_report.len() + balanced_report.len();
    let calls: usize = STEPS
        .iter()
        .map(|step| times(&direct_report, step).len() + times(&balanced_report, step).len())
        .sum();
    println!();
    println!(
        "sessions served: {served} ({calls} timed calls, every one answered without error before the kill); bench wall time {:.0} s",
        started.elapsed().as_secs_f64()
    );
    drop(pool);
    Ok(())
}
