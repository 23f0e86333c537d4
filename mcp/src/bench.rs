//! `chromate bench-snapshot`: snapshot cost on any URL or HTML file, as users measure it —
//! time (first and median with spread), rendered bytes, an estimate of tokens, and refs.
//!
//! It drives the engine directly (no MCP framing), so the figures are the snapshot's own cost.

use std::time::{Duration, Instant};

use chromate::{Browser, LaunchOptions, SnapshotOptions, WaitUntil};

/// Runs the benchmark and returns the printed report.
pub(crate) async fn snapshot_cost(
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
    res
}

async fn measure(
    browser: &Browser,
    url: &str,
    repeat: usize,
    max_lines: usize,
) -> Result<String, String> {
    let page = browser
        .new_page("about:blank")
        .await
        .map_err(|err| err.to_string())?;
    page.goto(url, WaitUntil::Load, Duration::from_secs(30))
        .await
        .map_err(|err| err.to_string())?;
    let options = SnapshotOptions {
        max_lines,
        ..SnapshotOptions::default()
    };
    let started = Instant::now();
    let first = page
        .snapshot(options.clone())
        .await
        .map_err(|err| err.to_string())?;
    let first_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut samples = Vec::with_capacity(repeat);
    let mut last = first;
    for _ in 0..repeat {
        let started = Instant::now();
        last = page
            .snapshot(options.clone())
            .await
            .map_err(|err| err.to_string())?;
        samples.push(started.elapsed().as_secs_f64() * 1e3);
    }
    // A small change (one button added at the top), then the snapshot and its diff from the
    // previous one, as an observation after an action computes them.
    page.evaluate(
        "document.body.prepend(Object.assign(document.createElement('button'), {textContent: 'bench change'})); 1",
    )
    .await
    .map_err(|err| err.to_string())?;
    let started = Instant::now();
    let changed = page
        .snapshot(options.clone())
        .await
        .map_err(|err| err.to_string())?;
    let diff = chromate::diff(Some(&last), &changed).render();
    let diff_ms = started.elapsed().as_secs_f64() * 1e3;
    let diff_lines = diff
        .lines()
        .filter(|l| l.starts_with("+ ") || l.starts_with("- "))
        .count();
    samples.sort_by(f64::total_cmp);
    let median = samples[samples.len() / 2];
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
         snapshot + diff after a small change: {diff_ms:.1} ms ({diff_lines} changed lines)\n",
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
