//! `chromate audit` measured, and side by side with Lighthouse and pa11y on the same pages:
//! a single-page audit of the 2,000-element page and a depth-1 audit of the fixture site, cold
//! (a new session: daemon and browser start) and warm (the same session again); then each
//! planted page of `tests/fixtures/audit-site/` through Lighthouse (accessibility, performance
//! and best-practices, against the same Debian Chromium) and pa11y, with the time per page and
//! which of their reports on the planted defect chromate's audit also has.
//!
//! ```text
//! cargo build --release -p chromate-mcp
//! cargo run --release -p chromate-benches --bin audit_side_by_side -- [PEERS_DIR] [REPS]
//! ```
//!
//! `PEERS_DIR` holds `node_modules/.bin/lighthouse` and `node_modules/.bin/pa11y` (see
//! `benches/README.md`); without it only chromate is measured. `CHROMATE_BIN` names the binary
//! (default `target/release/chromate`), `CHROMIUM` the browser (default `/usr/bin/chromium`).
//! Everything is served on 127.0.0.1 by the fixture server.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use chromate_tests::FixtureServer;
use serde_json::Value;

/// A planted page: its file, and for each Lighthouse audit and pa11y code that names its
/// defect, the rule prefix of chromate's finding for the same defect.
struct Planted {
    page: &'static str,
    lighthouse: &'static [(&'static str, &'static str)],
    pa11y: &'static [(&'static str, &'static str)],
    /// chromate's finding for the planted defect, whoever else reports it.
    ours: &'static str,
}

const PLANTED: &[Planted] = &[
    Planted {
        page: "a11y.html",
        lighthouse: &[("image-alt", "a11y.image-alt")],
        pa11y: &[("H37", "a11y.image-alt")],
        ours: "a11y.image-alt",
    },
    Planted {
        page: "runtime.html",
        lighthouse: &[("errors-in-console", "runtime.")],
        pa11y: &[],
        ours: "runtime.",
    },
    Planted {
        page: "network.html",
        lighthouse: &[("errors-in-console", "network.")],
        pa11y: &[],
        ours: "network.http-error",
    },
    Planted {
        page: "images.html",
        lighthouse: &[("errors-in-console", "network.image-decode")],
        pa11y: &[],
        ours: "network.image-decode",
    },
    Planted {
        page: "controls.html",
        lighthouse: &[
            ("aria-tab-name", "a11y.aria-tab-name"),
            ("aria-command-name", "a11y.aria-tab-name"),
            ("target-size", "layout.small-target"),
        ],
        pa11y: &[
            ("ARIA", "a11y.aria-tab-name"),
            ("H91", "a11y.aria-tab-name"),
        ],
        ours: "layout.covered",
    },
    Planted {
        page: "overflow.html",
        lighthouse: &[],
        pa11y: &[],
        ours: "layout.horizontal-overflow",
    },
    Planted {
        page: "links.html",
        lighthouse: &[],
        pa11y: &[],
        ours: "links.broken",
    },
    Planted {
        page: "lcp.html",
        lighthouse: &[("largest-contentful-paint", "speed.lcp")],
        pa11y: &[],
        ours: "speed.lcp",
    },
    Planted {
        page: "cls.html",
        lighthouse: &[("cumulative-layout-shift", "speed.cls")],
        pa11y: &[],
        ours: "speed.cls",
    },
    Planted {
        page: "tbt.html",
        lighthouse: &[("total-blocking-time", "speed.tbt")],
        pa11y: &[],
        ours: "speed.tbt",
    },
    Planted {
        page: "bytes.html",
        lighthouse: &[("total-byte-weight", "speed.bytes")],
        pa11y: &[],
        ours: "speed.bytes",
    },
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let peers = args.first().filter(|arg| *arg != "-").map(PathBuf::from);
    let reps: usize = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(3).max(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let binary = std::env::var_os("CHROMATE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/release/chromate"));
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let pages =
        FixtureServer::start_detached().unwrap_or_else(|err| panic!("fixture server: {err}"));
    let site = FixtureServer::start_detached_serving(chromate_tests::server::audit_site_dir())
        .unwrap_or_else(|err| panic!("fixture server: {err}"));
    let runtime = tempdir("chromate-audit-bench-");

    println!("chromate: {}", binary.display());
    let big = pages.url("bench-2000.html");
    let entry = site.url("index.html");
    for (label, url, extra) in [
        ("single page, bench-2000.html", big.as_str(), &[][..]),
        (
            "depth 1, the fixture site (13 pages)",
            entry.as_str(),
            &["--depth", "1"][..],
        ),
    ] {
        let mut cold = Vec::new();
        let mut warm = Vec::new();
        for rep in 0..reps {
            let session = format!("bench{rep}");
            cold.push(audit(&binary, &runtime, &session, url, extra).0);
            warm.push(audit(&binary, &runtime, &session, url, extra).0);
            close(&binary, &runtime, &session);
        }
        println!(
            "chromate audit {label}: cold median {:.2} s, warm median {:.2} s ({reps} runs each)",
            median(&mut cold),
            median(&mut warm)
        );
    }

    // chromate on each planted page (warm), for the side-by-side table.
    let mut ours = Vec::new();
    for planted in PLANTED {
        let url = site.url(planted.page);
        // The first run warms the session (daemon, browser, axe in the page's world).
        let _ = audit(&binary, &runtime, "side", &url, &[]);
        let (seconds, result) = audit(&binary, &runtime, "side", &url, &[]);
        let rules: Vec<String> = result["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["rule"].as_str().map(str::to_owned))
            .collect();
        ours.push((seconds, rules));
    }
    let bench_seconds = audit(&binary, &runtime, "side", &big, &[]).0;
    close(&binary, &runtime, "side");
    let Some(peers) = peers else {
        for (planted, (seconds, rules)) in PLANTED.iter().zip(&ours) {
            println!("{:<14} chromate {seconds:.2} s {rules:?}", planted.page);
        }
        return;
    };
    let lighthouse = peers.join("node_modules/.bin/lighthouse");
    let pa11y = peers.join("node_modules/.bin/pa11y");
    let pa11y_config = runtime.join("pa11y.json");
    let config = serde_json::json!({
        "chromeLaunchConfig": { "executablePath": chromium, "args": ["--no-sandbox", "--headless=new"] },
        "standard": "WCAG2AA",
    });
    std::fs::write(&pa11y_config, config.to_string()).unwrap_or_else(|err| panic!("{err}"));
    let lh_bench = run_lighthouse(&lighthouse, &chromium, &runtime, &big).0;
    let pa_bench = run_pa11y(&pa11y, &pa11y_config, &big).0;
    println!(
        "bench-2000.html: chromate {bench_seconds:.2} s, Lighthouse {lh_bench:.2} s, pa11y {pa_bench:.2} s"
    );
    println!("| page | chromate s | Lighthouse s | pa11y s | they report on the planted defect | chromate finds it: its findings |");
    println!("|---|---:|---:|---:|---|---|");
    let (mut sum_ours, mut sum_lh) = (0.0, 0.0);
    let mut missed = 0usize;
    for (planted, (seconds, rules)) in PLANTED.iter().zip(&ours) {
        let url = site.url(planted.page);
        let (lh_seconds, lh_failed) = run_lighthouse(&lighthouse, &chromium, &runtime, &url);
        let (pa_seconds, pa_codes) = run_pa11y(&pa11y, &pa11y_config, &url);
        sum_ours += seconds;
        sum_lh += lh_seconds;
        let has = |prefix: &str| rules.iter().any(|rule| rule.starts_with(prefix));
        // What they report on the planted defect, and whether chromate has the same.
        let mut reported: Vec<String> = Vec::new();
        for (id, ours) in planted.lighthouse {
            if lh_failed.iter().any(|failed| failed == id) {
                reported.push(format!(
                    "LH {id}{}",
                    if has(ours) { "" } else { " (missed)" }
                ));
                missed += usize::from(!has(ours));
            }
        }
        for (needle, ours) in planted.pa11y {
            if let Some(code) = pa_codes.iter().find(|code| code.contains(needle)) {
                let short = code.rsplit('.').next().unwrap_or(code);
                reported.push(format!(
                    "pa11y {short}{}",
                    if has(ours) { "" } else { " (missed)" }
                ));
                missed += usize::from(!has(ours));
            }
        }
        println!(
            "| {} | {seconds:.2} | {lh_seconds:.2} | {pa_seconds:.2} | {} | {} |",
            planted.page,
            if reported.is_empty() {
                "-".to_owned()
            } else {
                reported.join(", ")
            },
            if has(planted.ours) {
                format!("yes: {}", rules.join(", "))
            } else {
                format!("NO: {}", rules.join(", "))
            },
        );
    }
    println!(
        "per page: chromate {:.2} s, Lighthouse {:.2} s (ratio {:.2}); planted defects they report that chromate misses: {missed}",
        sum_ours / PLANTED.len() as f64,
        sum_lh / PLANTED.len() as f64,
        sum_ours / sum_lh.max(f64::EPSILON)
    );
    let _ = std::fs::remove_dir_all(&runtime);
}

fn tempdir(prefix: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    let _ = std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700));
    dir
}

/// One `chromate audit URL --format json` on `session`: seconds and the result.
fn audit(binary: &Path, runtime: &Path, session: &str, url: &str, extra: &[&str]) -> (f64, Value) {
    let started = Instant::now();
    let out = Command::new(binary)
        .args(["audit", url, "--format", "json", "--session", session])
        .args(extra)
        .env("CHROMATE_RUNTIME_DIR", runtime)
        .output()
        .unwrap_or_else(|err| panic!("{}: {err}", binary.display()));
    let seconds = started.elapsed().as_secs_f64();
    let result = serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
        panic!(
            "chromate audit {url}: {err}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (seconds, result)
}

fn close(binary: &Path, runtime: &Path, session: &str) {
    let _ = Command::new(binary)
        .args(["close", "--session", session])
        .env("CHROMATE_RUNTIME_DIR", runtime)
        .output();
}

/// Lighthouse on `url` with the three categories, measured as it is (no simulated
/// throttling, desktop): seconds and the ids of the audits that did not pass.
fn run_lighthouse(binary: &Path, chromium: &str, dir: &Path, url: &str) -> (f64, Vec<String>) {
    let report = dir.join("lighthouse.json");
    let started = Instant::now();
    let out = Command::new(binary)
        .arg(url)
        .args([
            "--quiet",
            "--output=json",
            "--only-categories=accessibility,performance,best-practices",
            "--throttling-method=provided",
            "--preset=desktop",
            "--chrome-flags=--headless=new --no-sandbox",
        ])
        .arg(format!("--output-path={}", report.display()))
        .env("CHROME_PATH", chromium)
        .output()
        .unwrap_or_else(|err| panic!("{}: {err}", binary.display()));
    let seconds = started.elapsed().as_secs_f64();
    let parsed: Value = std::fs::read_to_string(&report)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| panic!("lighthouse {url}: {}", String::from_utf8_lossy(&out.stderr)));
    let failed = parsed["audits"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, audit)| audit["score"].as_f64().is_some_and(|score| score < 0.9))
        .map(|(id, _)| id.clone())
        .collect();
    (seconds, failed)
}

/// pa11y on `url` (WCAG2AA, HTML_CodeSniffer): seconds and its issue codes.
fn run_pa11y(binary: &Path, config: &Path, url: &str) -> (f64, Vec<String>) {
    let started = Instant::now();
    let out = Command::new(binary)
        .args(["--reporter", "json", "--config"])
        .arg(config)
        .arg(url)
        .output()
        .unwrap_or_else(|err| panic!("{}: {err}", binary.display()));
    let seconds = started.elapsed().as_secs_f64();
    let issues: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let codes = issues
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|issue| issue["code"].as_str().map(str::to_owned))
        .collect();
    (seconds, codes)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}
