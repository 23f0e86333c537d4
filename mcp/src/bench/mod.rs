//! `chromate bench-snapshot`: snapshot cost on a user's own pages, chromate against whichever
//! peers are installed (Playwright MCP, chrome-devtools-mcp, agent-browser).
//!
//! Owns: the run (`run`): the pages (`targets`: URLs, a file of URLs, a directory served on
//! 127.0.0.1, a sitemap), the tools (`peers`: each spawned and driven as a user's agent would,
//! over MCP stdio or its CLI; chromate through its own binary, the same way), the reference
//! (Chrome's accessibility tree, read through the engine in a browser of its own), the token
//! count (`tokens`) and the report (`report`: a table, JSON or a self-contained HTML page).
//! `detail` is the single-page report of chromate alone (first snapshot, spread, the snapshot
//! and diff after small changes).
//!
//! It sits beside the front ends, not in one: it reads Chrome's tree through the engine.

mod detail;
mod peers;
mod report;
mod targets;
mod tokens;

use std::path::PathBuf;
use std::time::Duration;

use chromate::{
    oracle::{Control, Controls, Score},
    Browser, LaunchOptions, WaitUntil,
};

pub(crate) use report::Format;

/// What `chromate bench-snapshot` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BenchArgs {
    /// URLs, files of URLs, HTML files, directories or sitemaps.
    pub(crate) targets: Vec<String>,
    /// Timed default-view snapshots per page and tool.
    pub(crate) repeat: usize,
    /// The semantic budget of `--detail`.
    pub(crate) max_lines: usize,
    /// The single-page report of chromate alone.
    pub(crate) detail: bool,
    /// Peers named on the command line: kind and command.
    pub(crate) peers: Vec<(String, String)>,
    /// Measure chromate alone: no peer is looked for.
    pub(crate) no_peers: bool,
    /// Where else to look for peers (`DIR/node_modules/.bin`).
    pub(crate) peers_dir: Option<PathBuf>,
    /// The browser every tool runs (else chromate's search).
    pub(crate) browser: Option<PathBuf>,
    pub(crate) format: Format,
    /// Where the report goes (else stdout).
    pub(crate) output: Option<PathBuf>,
    /// The wait every tool gets after its navigation, and the reference after `load`, before
    /// any snapshot is read (`--wait-ms`).
    pub(crate) wait_ms: u64,
}

/// The wait after each navigation (`--wait-ms`): long enough for the script-filled content of
/// common pages, and the same for every tool, chromate included, and for the reference.
pub(crate) const DEFAULT_WAIT_MS: u64 = 1000;

/// How many missing and extra controls a report keeps per page and tool.
const DIFFERENCES_KEPT: usize = 40;

/// The same wait for every tool and the reference after a navigation: a fixed time, stated in
/// the report, so that no tool's own waiting (chromate's settle after `load`, or none) decides
/// what the others are scored on.
pub(crate) async fn wait_after_navigation(wait_ms: u64) {
    tokio::time::sleep(Duration::from_millis(wait_ms)).await;
}

/// One tool's figures on one page.
#[derive(Debug, Clone, Default)]
pub(crate) struct Measured {
    /// Timed default-view snapshot calls, in milliseconds, as the client sees them.
    pub(crate) samples_ms: Vec<f64>,
    /// Bytes of the default view's text.
    pub(crate) bytes: usize,
    /// o200k_base tokens of the default view (`None`: built without the tokenizer).
    pub(crate) tokens: Option<usize>,
    /// Scored controls in the default view.
    pub(crate) controls: usize,
    /// Bytes of the full view (the whole page).
    pub(crate) full_bytes: usize,
    /// The full view against Chrome's tree.
    pub(crate) score: Score,
    /// Chrome's controls the full view lacks: each with how many are missing (at most
    /// [`DIFFERENCES_KEPT`]).
    pub(crate) missing: Vec<(Control, usize)>,
    /// Controls the full view lists that Chrome's tree does not have (as many more).
    pub(crate) extra: Vec<(Control, usize)>,
}

impl Measured {
    pub(crate) fn median_ms(&self) -> f64 {
        percentile(&self.samples_ms, 0.5)
    }

    pub(crate) fn p90_ms(&self) -> f64 {
        percentile(&self.samples_ms, 0.9)
    }
}

/// The nearest-rank percentile `p` (0–1) of `samples`; 0 for none.
pub(crate) fn percentile(samples: &[f64], p: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// One page of the run: its URL, Chrome's reference, and each tool's result.
#[derive(Debug, Clone)]
pub(crate) struct PageRun {
    pub(crate) url: String,
    /// How the page was named on the command line (a path, or the URL).
    pub(crate) label: String,
    /// Chrome's scored controls (`None`: the reference browser could not read it).
    pub(crate) reference: Option<usize>,
    /// Per tool, in the order of [`Run::tools`]: the figures or why there are none.
    pub(crate) results: Vec<Result<Measured, String>>,
}

/// A whole run, as the report shows it.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) browser: String,
    /// The browser's own version (`Browser.getVersion`'s product), as every tool ran it.
    pub(crate) browser_version: String,
    /// The wait after each navigation, for every tool and the reference.
    pub(crate) wait_ms: u64,
    pub(crate) repeat: usize,
    pub(crate) tools: Vec<peers::ToolInfo>,
    /// Tools looked for and not found (or that would not start): name and why.
    pub(crate) skipped: Vec<(String, String)>,
    pub(crate) pages: Vec<PageRun>,
}

/// Runs the command and returns what goes to stdout (the report, or where it was written).
pub(crate) async fn run(args: &BenchArgs) -> Result<String, String> {
    if args.detail {
        let mut out = String::new();
        for target in &args.targets {
            out.push_str(&detail::snapshot_cost(target, args.repeat, args.max_lines).await?);
        }
        return Ok(out);
    }
    let browser =
        chromate::browser::find_browser(args.browser.as_deref()).map_err(|e| e.to_string())?;
    let work = std::env::temp_dir().join(format!("chromate-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let result = run_in(args, &browser, &work).await;
    let _ = std::fs::remove_dir_all(&work);
    let run = result?;
    let text = report::render(&run, args.format);
    match &args.output {
        Some(path) => {
            std::fs::write(path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok(format!(
                "{}\nreport written to {}\n",
                report::summary_table(&run),
                path.display()
            ))
        }
        None => Ok(text),
    }
}

fn run_in<'a>(
    args: &'a BenchArgs,
    browser: &'a std::path::Path,
    work: &'a std::path::Path,
) -> chromate_command::Boxed<'a, Result<Run, String>> {
    Box::pin(run_in_unboxed(args, browser, work))
}

async fn run_in_unboxed(
    args: &BenchArgs,
    browser: &std::path::Path,
    work: &std::path::Path,
) -> Result<Run, String> {
    let served = targets::expand(&args.targets).await?;
    if served.pages.is_empty() {
        return Err("no pages to measure".into());
    }
    let reference = Browser::launch(LaunchOptions {
        executable: Some(browser.to_path_buf()),
        ..LaunchOptions::default()
    })
    .await
    .map_err(|e| format!("cannot launch the reference browser: {e}"))?;
    let browser_version = reference.version().product.clone();
    let found = peers::find(args, browser, work);
    let mut tools = Vec::new();
    let mut skipped = found.skipped;
    for spec in found.specs {
        match peers::Tool::start(&spec).await {
            Ok(tool) => tools.push(tool),
            Err(why) => skipped.push((spec.name.clone(), why)),
        }
    }
    let mut pages = Vec::new();
    for (url, label) in &served.pages {
        let chrome = chrome_reference(&reference, url, args.wait_ms).await;
        let mut results = Vec::new();
        for tool in &mut tools {
            let measured = tool
                .measure(url, args.repeat, args.wait_ms)
                .await
                .map(|mut figures| {
                    if let Ok(chrome) = &chrome {
                        let listed = &figures.full_controls;
                        figures.measured.score = chrome.score(listed, None);
                        figures.measured.missing = differences(chrome, listed);
                        figures.measured.extra = differences(listed, chrome);
                    }
                    figures.measured
                });
            results.push(measured);
        }
        pages.push(PageRun {
            url: url.clone(),
            label: label.clone(),
            reference: chrome.as_ref().ok().map(Controls::len),
            results,
        });
    }
    let infos = tools.iter().map(|t| t.info.clone()).collect();
    for tool in tools {
        tool.stop().await;
    }
    reference.close().await;
    drop(served.server);
    Ok(Run {
        browser: browser.display().to_string(),
        browser_version,
        wait_ms: args.wait_ms,
        repeat: args.repeat,
        tools: infos,
        skipped,
        pages,
    })
}

/// What `have` holds more of than `other`: each control with the difference, the largest first,
/// at most [`DIFFERENCES_KEPT`].
fn differences(have: &Controls, other: &Controls) -> Vec<(Control, usize)> {
    let mut found: Vec<(Control, usize)> = have
        .surplus_over(other)
        .map(|(control, n, m)| (control.clone(), n - m))
        .collect();
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    found.truncate(DIFFERENCES_KEPT);
    found
}

/// Chrome's scored controls of `url` in every frame, read after `load` and the same wait every
/// tool gets, names compared regardless of whitespace (a `<wbr>` is a space in Chrome's names
/// and not in every tool's).
async fn chrome_reference(browser: &Browser, url: &str, wait_ms: u64) -> Result<Controls, String> {
    let page = browser
        .new_page("about:blank")
        .await
        .map_err(|e| e.to_string())?;
    let res = async {
        page.goto(url, WaitUntil::Load, Duration::from_secs(60))
            .await?;
        wait_after_navigation(wait_ms).await;
        page.chrome_controls().await
    }
    .await;
    let _ = browser.close_page(&page).await;
    res.map(|c| c.ignoring_whitespace())
        .map_err(|e| e.to_string())
}
