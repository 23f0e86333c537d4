//! `chromate bench-snapshot --detail`: chromate alone on any URL or HTML file, in-process —
//! time (first and median with spread), rendered bytes, an estimate of tokens, and refs.
//!
//! It drives the engine directly (no MCP framing), so the figures are the snapshot's own cost.

use std::time::{Duration, Instant};

use chromate::{snapshot::SnapshotOptions, Browser, LaunchOptions, WaitUntil};

/// Runs the benchmark and returns the printed report.
pub(crate) fn snapshot_cost<'a>(
    target: &'a str,
    repeat: usize,
    max_lines: usize,
) -> chromate_command::Boxed<'a, Result<String, String>> {
    Box::pin(snapshot_cost_unboxed(target, repeat, max_lines))
}

async fn snapshot_cost_unboxed(
    target: &str,
    repeat: usize,
    max_lines: usize,
) -> Result<String, String> {
    let url = to_url(target)?;
    let browser = Browser::launch(LaunchOptions::default())
        .await
        .map_err(|err| err.to_string())?;
    let res = measure(&browser, &url, repeat, max_lines).await;
    browser.close().await;
    res.map_err(|err| err.to_string())
}

async fn measure(
    browser: &Browser,
    url: &str,
    repeat: usize,
    max_lines: usize,
) -> chromate::Result<String> {
    let page = browser.new_page("about:blank").await?;
    page.goto(url, WaitUntil::Load, Duration::from_secs(30))
        .await?;
    let options = SnapshotOptions {
        max_lines,
        ..SnapshotOptions::default()
    };
    let started = Instant::now();
    let first = page.snapshot(options.clone()).await?;
    let first_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut samples = Vec::with_capacity(repeat);
    let mut last = first;
    for _ in 0..repeat {
        let started = Instant::now();
        last = page.snapshot(options.clone()).await?;
        samples.push(started.elapsed().as_secs_f64() * 1e3);
    }
    // Small changes, then the snapshot and its diff from the previous one, as an observation
    // after an action computes them; one change alone is too noisy, so the median of several.
    let mut changes = ChangeTimes::default();
    let mut diff_lines = 0;
    let mut baseline = last.clone();
    for index in 0..SMALL_CHANGES {
        page.evaluate(small_change(index)).await?;
        let started = Instant::now();
        let changed = page.snapshot(options.clone()).await?;
        let snapshot_ms = started.elapsed().as_secs_f64() * 1e3;
        let diff = chromate::snapshot::diff(Some(&baseline), &changed).render();
        let total_ms = started.elapsed().as_secs_f64() * 1e3;
        diff_lines += diff
            .lines()
            .filter(|l| l.starts_with("+ ") || l.starts_with("- "))
            .count();
        changes.total.push(total_ms);
        changes.page.push(changed.page_ms);
        changes.diff.push(total_ms - snapshot_ms);
        baseline = changed;
    }
    let change_ms = median_of(&mut changes.total);
    let (change_low, change_high) = (changes.total[0], changes.total[changes.total.len() - 1]);
    let change_page_ms = median_of(&mut changes.page);
    let change_diff_ms = median_of(&mut changes.diff);
    let median = median_of(&mut samples);
    let (low, high) = (samples[0], samples[samples.len() - 1]);
    let text = last.render();
    let n_refs = last
        .lines
        .iter()
        .filter(|l| l.element_ref.is_some())
        .count();
    Ok(format!(
        "page: {url}\n\
         budget: {max_lines} semantic lines\n\
         first snapshot: {first_ms:.1} ms\n\
         next {repeat}: median {median:.1} ms (min {low:.1}, max {high:.1})\n\
         bytes: {}\n\
         tokens (estimate, bytes / 4): {}\n\
         lines: {}, refs: {n_refs}{}\n\
         snapshot + diff after a small change: median {change_ms:.1} ms of {SMALL_CHANGES} \
         (min {change_low:.1}, max {change_high:.1}; in-page walk {change_page_ms:.1} ms, \
         Rust diff {change_diff_ms:.2} ms; {diff_lines} changed lines in all)\n",
        text.len(),
        text.len().div_ceil(4),
        last.lines.len(),
        if last.truncated {
            " (limits reached)"
        } else {
            ""
        },
    ))
}

/// How many small changes the diff figure is the median of.
const SMALL_CHANGES: usize = 21;

/// Times of the snapshot + diff after each small change, in milliseconds.
#[derive(Default)]
struct ChangeTimes {
    /// Snapshot and diff, from Rust.
    total: Vec<f64>,
    /// The walk inside the page (`Snapshot::page_ms`).
    page: Vec<f64>,
    /// Computing and rendering the diff in Rust.
    diff: Vec<f64>,
}

/// The `index`-th small change, in turn: a button added at the top of the body, the text of
/// the first heading changed, the added button removed.
fn small_change(index: usize) -> &'static str {
    match index % 3 {
        0 => "document.body.prepend(Object.assign(document.createElement('button'), {id: 'bench-change', textContent: 'bench change'})); 1",
        1 => "{ const h = document.querySelector('h1, h2, h3, button, a'); if (h) h.textContent += ' changed'; } 1",
        _ => "document.getElementById('bench-change')?.remove(); 1",
    }
}

/// Sorts `samples` and returns the median.
fn median_of(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// A URL as given, or a path to a file made into a `file://` URL.
fn to_url(target: &str) -> Result<String, String> {
    if target.contains("://") || target.starts_with("about:") || target.starts_with("data:") {
        return Ok(target.to_owned());
    }
    let path = std::fs::canonicalize(target)
        .map_err(|err| format!("{target} is neither a url nor a readable file: {err}"))?;
    Ok(format!("file://{}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::to_url;

    #[test]
    fn urls_pass_through_and_files_become_file_urls() {
        assert_eq!(
            to_url("http://127.0.0.1:1/x").as_deref(),
            Ok("http://127.0.0.1:1/x")
        );
        let here = std::env::current_dir().expect("cwd");
        assert_eq!(
            to_url("Cargo.toml").as_deref(),
            Ok(format!("file://{}", here.join("Cargo.toml").display()).as_str())
        );
        assert!(to_url("/no/such/file.html").is_err());
    }
}
