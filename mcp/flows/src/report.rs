//! What a flow run leaves on disk for people, for CI and for the next command, and reading it
//! back: one writer per format.
//!
//! Owns: each capture's sidecar `<capture>.json` (its record: url, viewport, selector, time,
//! size, sha256, masked selectors, console errors), each flow's `index.md` (steps, outcome,
//! a failed step's files, downloads, captures) and `run.json` (the flow's result as `flows run` printed it), the run's
//! `report.html` (styles inline, captures as `data:` images, a failed step's screenshot by its
//! relative path, no script, opens offline), JUnit XML (a suite per flow, a case per step), and [`describe`], which reads a flow's files
//! back without a browser. Does not own running flows (`run.rs`) or where the directories are
//! (`output.rs`).

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::baseline::Verdict;
use super::capture::{name_is_valid, CaptureRecord};
use super::failure::FailureArtifacts;
use super::output;
use super::run::{DownloadRecord, FlowResult, RunReport};
use chromate_command::error::ToolError;
use chromate_command::markup::escape;

/// The machine-readable result a run leaves in each flow directory.
pub const RUN_JSON: &str = "run.json";
/// The human-readable one.
pub const INDEX_MD: &str = "index.md";

/// The run's HTML report, beside the flow directories.
pub const REPORT_HTML: &str = "report.html";

/// Writes `<dir>/<capture>.json`.
pub fn write_sidecar(dir: &Path, record: &CaptureRecord) -> io::Result<()> {
    write_json(dir, &format!("{}.json", record.name), &record.to_json())
}

/// Writes `value`, indented, as `<dir>/<name>` (atomically).
pub fn write_json(dir: &Path, name: &str, value: &Value) -> io::Result<()> {
    output::replace_file(dir, name, pretty(value).as_bytes())
}

/// Writes the flow's `index.md` and `run.json`.
pub fn write_flow(result: &FlowResult) -> io::Result<()> {
    output::replace_file(&result.dir, INDEX_MD, index_md(result).as_bytes())?;
    output::replace_file(&result.dir, RUN_JSON, pretty(&result.to_json()).as_bytes())
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}

/// The flow's `index.md`.
pub fn index_md(result: &FlowResult) -> String {
    let mut text = format!("# Flow `{}`\n\n", result.name);
    match (&result.error, result.failed_step_index) {
        (None, _) => {
            let _ = writeln!(text, "**Passed**: {} steps.", result.steps_total);
        }
        (Some(error), Some(index)) => {
            let label = result
                .steps
                .get(index)
                .map_or(String::new(), |step| format!(" ({})", step.label));
            let _ = writeln!(
                text,
                "**Failed** at step {} of {}{label}: `{}` {}",
                index + 1,
                result.steps_total,
                error["code"].as_str().unwrap_or(""),
                error["message"].as_str().unwrap_or("")
            );
            if let Some(hint) = error["hint"].as_str() {
                let _ = writeln!(text, "\nHint: {hint}");
            }
            let artifacts = result
                .steps
                .get(index)
                .and_then(|step| step.artifacts.as_ref());
            if let Some(artifacts) = artifacts {
                text.push_str("\nWhen the step failed:\n\n");
                for (kind, path) in artifacts.files() {
                    let relative = format!("{}/{}", super::failure::FAILURE_DIR, file_name(path));
                    let _ = writeln!(text, "- {kind}: [{relative}]({relative})");
                }
                for note in &artifacts.notes {
                    let _ = writeln!(text, "- not saved: {note}");
                }
            }
        }
        (Some(error), None) => {
            let _ = writeln!(
                text,
                "**Failed** {}: `{}` {}",
                result.failed_at().unwrap_or_default(),
                error["code"].as_str().unwrap_or(""),
                error["message"].as_str().unwrap_or("")
            );
        }
    }
    let _ = writeln!(
        text,
        "\nStarted {}, took {} ms.",
        result.started_at, result.duration_ms
    );
    if let Some(video) = &result.video_path {
        let _ = writeln!(
            text,
            "\nVideo: [{}]({})",
            file_name(video),
            file_name(video)
        );
    }
    if let Some(video) = &result.video_mp4_path {
        let _ = writeln!(
            text,
            "Video (MP4): [{}]({})",
            file_name(video),
            file_name(video)
        );
    }
    if let Some(note) = &result.video_note {
        let _ = writeln!(text, "\nNo video: {note}");
    }
    text.push_str(&super::describe::index_section(&result.descriptions));
    text.push_str("\n## Steps\n\n| # | step | line | result | ms | console errors |\n|---|---|---|---|---|---|\n");
    for (index, step) in result.steps.iter().enumerate() {
        let outcome = match &step.error {
            None => "ok".to_owned(),
            Some(error) => format!("failed: `{}`", error["code"].as_str().unwrap_or("")),
        } + &attempts_text(step);
        let _ = writeln!(
            text,
            "| {} | {} | {} | {outcome} | {} | {} |",
            index + 1,
            step.label,
            step.line,
            step.duration_ms,
            step.console_errors.len()
        );
    }
    for index in result.steps.len()..result.steps_total {
        let _ = writeln!(text, "| {} | | | not run | | |", index + 1);
    }
    if let Some(comparisons) = &result.comparisons {
        text.push_str("\n## Baseline\n\n");
        if result.baseline_updated {
            text.push_str("The baseline was updated with these captures.\n\n");
        }
        if comparisons.is_empty() {
            text.push_str("No PNG captures to compare.\n");
        }
        for comparison in comparisons {
            let _ = write!(
                text,
                "- {}: {}",
                comparison.name,
                comparison.verdict.as_str()
            );
            if comparison.different_pixels > 0 {
                let _ = write!(
                    text,
                    " ({} of {} pixels differ)",
                    comparison.different_pixels, comparison.total_pixels
                );
            }
            if let Some(diff) = &comparison.diff {
                let _ = write!(text, ", difference: [{0}]({0})", file_name(diff));
            }
            if let Some(note) = &comparison.note {
                let _ = write!(text, "; {note}");
            }
            text.push('\n');
        }
    }
    if !result.downloads.is_empty() {
        text.push_str("\n## Downloads\n\n");
        for download in &result.downloads {
            let _ = writeln!(text, "- {}", download_line(download));
        }
    }
    text.push_str("\n## Captures\n");
    if result.captures.is_empty() {
        text.push_str("\nNone.\n");
    }
    for record in &result.captures {
        let file = file_name(&record.path);
        let _ = write!(text, "\n### {}\n\n", record.name);
        if record.format == "png" {
            let _ = writeln!(text, "![{}]({file})\n", record.name);
        } else {
            let _ = writeln!(text, "[{file}]({file})\n");
        }
        let _ = writeln!(text, "- url: {}", record.url);
        let _ = writeln!(
            text,
            "- viewport: {}×{}",
            record.viewport.0, record.viewport.1
        );
        if let (Some(width), Some(height)) = (record.width, record.height) {
            let _ = writeln!(text, "- size: {width}×{height} px, {} bytes", record.bytes);
        } else {
            let _ = writeln!(text, "- size: {} bytes", record.bytes);
        }
        let _ = writeln!(text, "- sha256: `{}`", record.sha256);
        if let Some(selector) = &record.selector {
            let _ = writeln!(text, "- selector: `{selector}`");
        }
        if !record.masked.is_empty() {
            let masked: Vec<String> = record.masked.iter().map(|m| format!("`{m}`")).collect();
            let _ = writeln!(text, "- masked: {}", masked.join(", "));
        }
        let _ = writeln!(text, "- console errors: {}", record.console_errors.len());
        for error in &record.console_errors {
            let _ = writeln!(text, "  - {}", error["text"].as_str().unwrap_or(""));
        }
    }
    text
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `flows describe NAME`: what the last run of the flow left in `<output>/<name>/`, read from
/// disk only: `{flow_name, index_md, captures: [{name, path, metadata}]}`, with `index_md` null
/// and `captures` empty when the flow has not run, and `metadata` null for a capture without
/// its sidecar.
pub fn describe(output_dir: &Path, name: &str) -> Result<Value, ToolError> {
    if !name_is_valid(name) {
        return Err(ToolError::invalid_argument(
            format!("flows: {name:?} is not a flow name (^[A-Za-z0-9._-]+$, not . or ..)"),
            "flow_name",
            "chromate flows list shows the names",
        ));
    }
    let dir = output_dir.join(name);
    let ours = dir.join(output::FLOW_MARKER).is_file();
    let index_md = if ours {
        read_text(&dir.join(INDEX_MD))
    } else {
        None
    };
    let mut captures = Vec::new();
    if ours {
        for (capture, path) in capture_files(&dir) {
            let metadata = read_text(&dir.join(format!("{capture}.json")))
                .and_then(|text| serde_json::from_str::<Value>(&text).ok());
            let vision = metadata
                .as_ref()
                .and_then(|metadata| metadata.get("vision"))
                .cloned();
            captures.push(json!({
                "name": capture,
                "path": path.display().to_string(),
                "metadata": metadata,
                "vision": vision,
            }));
        }
    }
    Ok(json!({
        "flow_name": name,
        "output_dir": dir.display().to_string(),
        "index_md": index_md,
        "captures": captures,
    }))
}

/// The captures in a flow directory: in run order when `run.json` says it, then any other
/// `<name>.png`/`<name>.pdf` there, by name.
fn capture_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let recorded = read_text(&dir.join(RUN_JSON))
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|run| run.get("captures").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    for record in recorded {
        let (Some(name), Some(format)) = (record["name"].as_str(), record["format"].as_str())
        else {
            continue;
        };
        let path = dir.join(format!("{name}.{format}"));
        if name_is_valid(name) && path.is_file() {
            found.push((name.to_owned(), path));
        }
    }
    let mut others: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let (stem, extension) = file_name.rsplit_once('.')?;
            let is_capture = (extension == "png" || extension == "pdf")
                && !file_name.starts_with('.')
                && !stem.ends_with(".diff")
                && entry.file_type().is_ok_and(|kind| kind.is_file());
            (is_capture && !found.iter().any(|(name, _)| name == stem))
                .then(|| (stem.to_owned(), entry.path()))
        })
        .collect();
    others.sort();
    found.extend(others);
    found
}

fn read_text(path: &Path) -> Option<String> {
    chromate_command::private_fs::read_file(path)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
}

fn seconds(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

/// One line saying where and how a flow failed.
fn failure_line(flow: &FlowResult) -> Option<String> {
    let error = flow.error.as_ref()?;
    let at = flow.failed_at()?;
    Some(format!(
        "{at}: {} {}",
        error["code"].as_str().unwrap_or(""),
        error["message"].as_str().unwrap_or("")
    ))
}

/// `report.csv (64 bytes) completed: /abs/out/flow/files/downloads/report.csv`, or why it
/// was not saved.
fn download_line(download: &DownloadRecord) -> String {
    let mut line = download.name.clone();
    if let Some(bytes) = download.bytes {
        let _ = write!(line, " ({bytes} bytes)");
    }
    let _ = write!(line, " {}", download.state);
    if let Some(path) = &download.path {
        let _ = write!(line, ": {}", path.display());
    }
    if let Some(reason) = &download.reason {
        let _ = write!(line, ", not saved: {reason}");
    }
    let _ = write!(line, " from {}", download.url);
    line
}

/// The failure files of a step, a line each (`\nscreenshot: /abs/path`), and why any is missing.
fn artifacts_text(artifacts: Option<&FailureArtifacts>) -> String {
    let mut text = String::new();
    for (kind, path) in artifacts.map(FailureArtifacts::files).unwrap_or_default() {
        let _ = write!(text, "\n{kind}: {}", path.display());
    }
    for note in artifacts.map_or(&[][..], |artifacts| &artifacts.notes[..]) {
        let _ = write!(text, "\nnot saved: {note}");
    }
    text
}

/// The JUnit XML of a run, for CI test views: one `<testsuite>` per flow and one `<testcase>`
/// per step (`step 2: browser_fill`), a failed step's case failing with its code and message (its body naming the
/// files in `failure/`) and
/// the steps after it skipped, plus one case per capture compared with a baseline (`baseline
/// card`), failing when it changed or is missing, and a `setup` case for a flow that failed
/// before its first step. Cases are named within the flow file (`chromate.login`, the file's
/// name and the flow's), never by an absolute path, so a CI system's history follows them from
/// run to run and machine to machine.
/// ` (flaky: passed on attempt 2)`, ` (after 3 attempts)`: how often a step ran, when more
/// than once.
fn attempts_text(step: &super::run::StepRecord) -> String {
    if step.attempts <= 1 {
        String::new()
    } else if step.ok {
        format!(" (flaky: passed on attempt {})", step.attempts)
    } else {
        format!(" (after {} attempts)", step.attempts)
    }
}

/// ` (12 of 921600 pixels differ, at most 20 allowed)`: the measured count of a compared
/// capture, and the step's `max_diff_pixels` when it had one.
fn pixels_text(comparison: &super::baseline::Comparison) -> String {
    if comparison.total_pixels == 0 {
        return String::new();
    }
    let allowed = comparison
        .max_diff_pixels
        .map(|allowed| format!(", at most {allowed} allowed"))
        .unwrap_or_default();
    format!(
        " ({} of {} pixels differ{allowed})",
        comparison.different_pixels, comparison.total_pixels
    )
}

pub fn junit_xml(report: &RunReport) -> String {
    let file = report.config_path.file_stem().map_or_else(
        || "flows".to_owned(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    let mut suites = String::new();
    let (mut all_tests, mut all_failures) = (0, 0);
    let total_ms: u64 = report.flows.iter().map(|flow| flow.duration_ms).sum();
    for flow in &report.flows {
        let classname = escape(&format!("{file}.{}", flow.name));
        let mut cases = String::new();
        let (mut tests, mut failures, mut skipped) = (0, 0, 0);
        let mut case = |name: &str, ms: u64, verdict: &str| {
            let _ = writeln!(
                cases,
                "    <testcase classname=\"{classname}\" name=\"{}\" time=\"{}\">{verdict}</testcase>",
                escape(name),
                seconds(ms)
            );
        };
        let failure = |error: &Value, line: &str, artifacts: Option<&FailureArtifacts>| {
            let mut body = line.to_owned();
            if let Some(hint) = error["hint"].as_str() {
                body.push_str(&format!("\nhint: {hint}"));
            }
            body.push_str(&artifacts_text(artifacts));
            format!(
                "<failure message=\"{}\" type=\"{}\">{}</failure>",
                escape(line),
                escape(error["code"].as_str().unwrap_or("")),
                escape(&body)
            )
        };
        if let (Some(error), None, false) =
            (&flow.error, flow.failed_step_index, flow.failed_at_baseline)
        {
            tests += 1;
            failures += 1;
            let line = failure_line(flow).unwrap_or_default();
            case("setup", flow.duration_ms, &failure(error, &line, None));
        }
        for (index, step) in flow.steps.iter().enumerate() {
            tests += 1;
            let name = format!("step {}: {}", index + 1, step.label);
            let error = step.error.as_ref().or_else(|| {
                flow.error
                    .as_ref()
                    .filter(|_| flow.failed_step_index == Some(index))
            });
            let verdict = match error {
                Some(error) => {
                    failures += 1;
                    failure(
                        error,
                        &failure_line(flow).unwrap_or_default(),
                        step.artifacts.as_ref(),
                    )
                }
                None => String::new(),
            };
            // A capture step's case names its file.
            let captured = step
                .label
                .strip_prefix("capture ")
                .and_then(|name| flow.captures.iter().find(|capture| capture.name == name));
            let mut out: Vec<String> = Vec::new();
            if let Some(capture) = captured {
                out.push(capture.path.display().to_string());
            }
            if step.flaky() {
                out.push(format!(
                    "flaky: passed on attempt {}, after {} failed",
                    step.attempts,
                    step.attempts - 1
                ));
            } else if step.attempts > 1 {
                out.push(format!("failed on each of {} attempts", step.attempts));
            }
            for (number, error) in step.retried.iter().enumerate() {
                out.push(format!(
                    "attempt {}: {}: {}",
                    number + 1,
                    error["code"].as_str().unwrap_or(""),
                    error["message"].as_str().unwrap_or("")
                ));
            }
            let properties = if step.flaky() {
                format!(
                    "<properties><property name=\"flaky\" value=\"true\"/><property name=\"attempts\" value=\"{}\"/></properties>",
                    step.attempts
                )
            } else {
                String::new()
            };
            let verdict = if out.is_empty() {
                format!("{properties}{verdict}")
            } else {
                format!(
                    "{properties}{verdict}<system-out>{}</system-out>",
                    escape(&out.join("\n"))
                )
            };
            case(&name, step.duration_ms, &verdict);
        }
        for index in flow.steps.len()..flow.steps_total {
            tests += 1;
            skipped += 1;
            case(
                &format!("step {}", index + 1),
                0,
                "<skipped message=\"not run: an earlier step failed\"/>",
            );
        }
        for comparison in flow.comparisons.iter().flatten() {
            tests += 1;
            let verdict = match comparison.verdict {
                Verdict::Changed | Verdict::Missing => {
                    failures += 1;
                    let message = format!(
                        "{}: {}{}",
                        comparison.name,
                        comparison.verdict.as_str(),
                        pixels_text(comparison)
                    );
                    format!(
                        "<failure message=\"{}\" type=\"EXPECT_MISMATCH\">{}</failure>",
                        escape(&message),
                        escape(&message)
                    )
                }
                Verdict::Same => format!(
                    "<system-out>{}</system-out>",
                    escape(&format!(
                        "{}: same{}",
                        comparison.name,
                        pixels_text(comparison)
                    ))
                ),
                Verdict::New => String::new(),
            };
            case(&format!("baseline {}", comparison.name), 0, &verdict);
        }
        let mut out = format!("output: {}\n", flow.dir.display());
        for capture in &flow.captures {
            out.push_str(&format!(
                "capture {}: {}\n",
                capture.name,
                capture.path.display()
            ));
        }
        if let Some(video) = &flow.video_path {
            out.push_str(&format!("video: {}\n", video.display()));
        }
        for download in &flow.downloads {
            out.push_str(&format!("download {}\n", download_line(download)));
        }
        all_tests += tests;
        all_failures += failures;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{}\" timestamp=\"{}\">\n{cases}    <system-out>{}</system-out>\n  </testsuite>",
            escape(&flow.name),
            seconds(flow.duration_ms),
            escape(flow.started_at.trim_end_matches('Z')),
            escape(&out)
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"chromate flows\" tests=\"{all_tests}\" failures=\"{all_failures}\" errors=\"0\" time=\"{}\">\n{suites}</testsuites>\n",
        seconds(total_ms)
    )
}

const REPORT_STYLE: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;background:#fafafa}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:0}\
.summary{margin:0 0 20px;color:#555}\
.flow{background:#fff;border:1px solid #ddd;border-left:6px solid #2a7;border-radius:4px;padding:14px 18px;margin:0 0 18px}\
.flow.failed{border-left-color:#c33}\
.status{display:inline-block;font-weight:600;padding:1px 8px;border-radius:3px;margin-left:8px;font-size:12px;vertical-align:middle}\
.passed .status{background:#dfd;color:#161}.failed .status{background:#fdd;color:#911}\
.error{background:#fff4f4;border:1px solid #f0c8c8;padding:8px 10px;margin:10px 0;white-space:pre-wrap}\
table{border-collapse:collapse;margin:10px 0}td,th{border:1px solid #e3e3e3;padding:3px 8px;text-align:left;font-size:13px}\
tr.step-failed td{background:#fff0f0}tr.step-skipped td{color:#999}\
.captures{display:flex;flex-wrap:wrap;gap:14px}\
figure{margin:0;width:330px}figure img{max-width:320px;max-height:240px;border:1px solid #ccc;background:#fff}\
figcaption{font-size:12px;color:#555;word-break:break-all}\
.diff{border:1px solid #e5b; padding:6px}.changed{color:#a0a}.new{color:#07a}.missing{color:#a60}\
code{font-size:12px}\
.failure img{max-width:640px;border:1px solid #ccc}\
.failure pre{background:#f6f6f6;border:1px solid #e3e3e3;padding:6px 8px;max-height:320px;overflow:auto;white-space:pre-wrap;font-size:12px}";

/// A `data:` URL of a file, or `None` when it cannot be read.
fn data_url(path: &Path, mime: &str) -> Option<String> {
    use base64::Engine as _;
    let bytes = chromate_command::private_fs::read_file(path).ok()?;
    Some(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// The run's `report.html`: every flow with its status, steps and error, every capture as an
/// embedded thumbnail linking to its file. No script and nothing fetched: it opens offline.
pub fn html(report: &RunReport) -> String {
    let failed = report.flows.iter().filter(|flow| !flow.ok()).count();
    let mut page =
        String::from("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        page,
        "<title>chromate flows: {} run, {failed} failed</title>",
        report.flows.len()
    );
    let _ = writeln!(page, "<style>{REPORT_STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(page, "<h1>chromate flows</h1>");
    let _ = writeln!(
        page,
        "<p class=\"summary\" id=\"summary\" data-flows=\"{}\" data-failed=\"{failed}\">{} flows, {} passed, {failed} failed — {}</p>",
        report.flows.len(),
        report.flows.len(),
        report.flows.len() - failed,
        escape(&report.config_path.display().to_string())
    );
    for flow in &report.flows {
        let class = if flow.ok() { "passed" } else { "failed" };
        let _ = writeln!(
            page,
            "<section class=\"flow {class}\" id=\"flow-{}\" data-flow=\"{}\">",
            escape(&flow.name),
            escape(&flow.name)
        );
        let _ = writeln!(
            page,
            "<h2>{}<span class=\"status\">{}</span></h2>",
            escape(&flow.name),
            if flow.ok() { "passed" } else { "failed" }
        );
        let _ = writeln!(
            page,
            "<p>{} steps, {} captures, {} ms — <code>{}</code></p>",
            flow.steps_total,
            flow.captures.len(),
            flow.duration_ms,
            escape(&flow.dir.display().to_string())
        );
        if let (Some(line), Some(error)) = (failure_line(flow), &flow.error) {
            let hint = error["hint"]
                .as_str()
                .map(|hint| format!("\nhint: {}", escape(hint)))
                .unwrap_or_default();
            let _ = writeln!(page, "<div class=\"error\">{}{hint}</div>", escape(&line));
            // The error's whole detail (a failed a11y check's violations, a batch's steps),
            // which its one line only summarizes.
            if let Some(detail) = error.get("detail").filter(|detail| {
                detail.as_object().is_some_and(|map| !map.is_empty())
                    || detail.as_array().is_some_and(|items| !items.is_empty())
            }) {
                let _ = writeln!(
                    page,
                    "<details class=\"error-detail\"><summary>detail</summary><pre>{}</pre></details>",
                    escape(&chromate_command::markup::readable(detail))
                );
            }
        }
        if let Some(artifacts) = flow
            .failed_step_index
            .and_then(|index| flow.steps.get(index))
            .and_then(|step| step.artifacts.as_ref())
        {
            page.push_str(&failure_html(flow, artifacts));
        }
        if let Some(note) = &flow.video_note {
            let _ = writeln!(page, "<p>No video: {}</p>", escape(note));
        }
        for (label, video) in [("WebM", &flow.video_path), ("MP4", &flow.video_mp4_path)] {
            if let Some(video) = video {
                let _ = writeln!(
                    page,
                    "<p>Video ({label}): <a href=\"{}/{1}\">{1}</a></p>",
                    escape(&flow.name),
                    escape(&file_name(video))
                );
            }
        }
        page.push_str("<table><tr><th>#</th><th>step</th><th>line</th><th>result</th><th>ms</th><th>console errors</th></tr>\n");
        for (index, step) in flow.steps.iter().enumerate() {
            let (class, outcome) = match &step.error {
                None => ("step-ok", "ok".to_owned()),
                Some(error) => (
                    "step-failed",
                    format!("failed: {}", error["code"].as_str().unwrap_or("")),
                ),
            };
            let outcome = outcome + &attempts_text(step);
            let _ = writeln!(
                page,
                "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                index + 1,
                escape(&step.label),
                step.line,
                escape(&outcome),
                step.duration_ms,
                step.console_errors.len()
            );
        }
        for index in flow.steps.len()..flow.steps_total {
            let _ = writeln!(
                page,
                "<tr class=\"step-skipped\"><td>{}</td><td colspan=\"5\">not run</td></tr>",
                index + 1
            );
        }
        page.push_str("</table>\n<div class=\"captures\">\n");
        for capture in &flow.captures {
            // Relative to report.html, so the report still links its files when the output
            // directory is moved or uploaded.
            let href = escape(&format!("{}/{}", flow.name, file_name(&capture.path)));
            let image = if capture.format == "png" {
                data_url(&capture.path, "image/png")
                    .map(|src| {
                        format!(
                            "<a href=\"{href}\"><img class=\"thumb\" alt=\"{}\" src=\"{src}\"></a>",
                            escape(&capture.name)
                        )
                    })
                    .unwrap_or_else(|| "<p>(file missing)</p>".to_owned())
            } else {
                format!(
                    "<a href=\"{href}\">{}</a>",
                    escape(&file_name(&capture.path))
                )
            };
            let size = match (capture.width, capture.height) {
                (Some(width), Some(height)) => format!("{width}×{height} px, "),
                _ => String::new(),
            };
            let _ = writeln!(
                page,
                "<figure class=\"capture\" data-capture=\"{}\">{image}<figcaption><b>{}</b> — {size}{} bytes<br>{}<br>sha256 {}</figcaption></figure>",
                escape(&capture.name),
                escape(&capture.name),
                capture.bytes,
                escape(&capture.url),
                &capture.sha256[..capture.sha256.len().min(16)]
            );
        }
        page.push_str("</div>\n");
        if !flow.downloads.is_empty() {
            page.push_str("<h3>Downloads</h3>\n<ul class=\"downloads\">\n");
            for download in &flow.downloads {
                // A saved file linked by its path relative to report.html.
                let link = download
                    .path
                    .as_deref()
                    .and_then(|path| path.strip_prefix(&report.output_dir).ok())
                    .map(|relative| {
                        format!(
                            " <a href=\"{0}\">{0}</a>",
                            escape(&relative.display().to_string())
                        )
                    })
                    .unwrap_or_default();
                let _ = writeln!(
                    page,
                    "<li class=\"download\" data-state=\"{}\">{}{link}</li>",
                    escape(download.state),
                    escape(&download_line(download))
                );
            }
            page.push_str("</ul>\n");
        }
        if let Some(comparisons) = &flow.comparisons {
            page.push_str(&baseline_html(flow, comparisons));
        }
        page.push_str("</section>\n");
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// The most of one failure file report.html shows (the file itself has it all).
const MAX_SHOWN: usize = 64 * 1024;

/// What the failed step left: its screenshot (by its path relative to report.html, not
/// embedded) and its snapshot, console and network entries as text.
fn failure_html(flow: &FlowResult, artifacts: &FailureArtifacts) -> String {
    let mut html = String::from("<div class=\"failure\"><h3>When the step failed</h3>\n");
    let relative = |path: &Path| {
        escape(&format!(
            "{}/{}/{}",
            flow.name,
            super::failure::FAILURE_DIR,
            file_name(path)
        ))
    };
    for (kind, path) in artifacts.files() {
        if kind == "screenshot" {
            let _ = writeln!(
                html,
                "<a href=\"{0}\"><img class=\"failure-shot\" alt=\"the page when the step failed\" src=\"{0}\"></a>",
                relative(path)
            );
            continue;
        }
        let mut text = read_text(path).unwrap_or_else(|| "(the file cannot be read)".to_owned());
        if text.len() > MAX_SHOWN {
            let mut end = MAX_SHOWN;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n… (cut here; the file has the rest)");
        }
        let _ = writeln!(
            html,
            "<h4>{kind} — <a href=\"{0}\">{0}</a></h4><pre class=\"failure-{kind}\">{1}</pre>",
            relative(path),
            escape(&text)
        );
    }
    for note in &artifacts.notes {
        let _ = writeln!(html, "<p>Not saved: {}</p>", escape(note));
    }
    html.push_str("</div>\n");
    html
}

/// A flow's comparisons with the baseline: each changed capture as baseline, capture and
/// difference image side by side; new, missing and unchanged ones by name.
fn baseline_html(flow: &FlowResult, comparisons: &[super::baseline::Comparison]) -> String {
    use super::baseline::Verdict;
    let mut html = String::from("<div class=\"baseline\"><h3>Visual baseline</h3>\n");
    if flow.baseline_updated {
        html.push_str("<p>The baseline was updated with these captures.</p>\n");
    }
    let names = |verdict: Verdict| -> String {
        let names = flow.compared(verdict);
        if names.is_empty() {
            "none".to_owned()
        } else {
            escape(&names.join(", "))
        }
    };
    let _ = writeln!(
        html,
        "<p><span class=\"changed\">changed: {}</span> · <span class=\"new\">new: {}</span> · <span class=\"missing\">missing: {}</span> · same: {}</p>",
        names(Verdict::Changed),
        names(Verdict::New),
        names(Verdict::Missing),
        names(Verdict::Same)
    );
    for comparison in comparisons {
        let _ = write!(
            html,
            "<div class=\"comparison {0}\" data-comparison=\"{0}\" data-capture=\"{1}\">",
            comparison.verdict.as_str(),
            escape(&comparison.name)
        );
        if comparison.verdict == Verdict::Changed {
            let actual = flow
                .captures
                .iter()
                .find(|capture| capture.name == comparison.name)
                .map(|capture| capture.path.clone());
            html.push_str("<div class=\"captures\">");
            for (label, path) in [
                ("baseline", Some(comparison.baseline.clone())),
                ("this run", actual),
                ("difference", comparison.diff.clone()),
            ] {
                let image = path
                    .as_deref()
                    .and_then(|path| data_url(path, "image/png"))
                    .map(|src| {
                        format!(
                            "<img class=\"{}\" alt=\"{label}\" src=\"{src}\">",
                            label.replace(' ', "-")
                        )
                    })
                    .unwrap_or_else(|| "(no image)".to_owned());
                let _ = write!(
                    html,
                    "<figure>{image}<figcaption>{label}</figcaption></figure>"
                );
            }
            html.push_str("</div>");
            let _ = write!(
                html,
                "<p>{}: {} of {} pixels differ</p>",
                escape(&comparison.name),
                comparison.different_pixels,
                comparison.total_pixels
            );
        } else {
            let _ = write!(
                html,
                "<p>{}: {}</p>",
                escape(&comparison.name),
                comparison.verdict.as_str()
            );
        }
        if let Some(note) = &comparison.note {
            let _ = write!(html, "<p>{}</p>", escape(note));
        }
        html.push_str("</div>\n");
    }
    html.push_str("</div>\n");
    html
}

/// Writes `report.html` into the run's output directory and, when asked, the JUnit XML.
pub fn write_run(
    report: &RunReport,
    junit: Option<&Path>,
) -> io::Result<(PathBuf, Option<PathBuf>)> {
    output::replace_file(&report.output_dir, REPORT_HTML, html(report).as_bytes())?;
    let junit = match junit {
        Some(path) => {
            let path = std::path::absolute(path)?;
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, junit_xml(report))
                .map_err(|err| io::Error::new(err.kind(), format!("{}: {err}", path.display())))?;
            Some(path)
        }
        None => None,
    };
    Ok((report.output_dir.join(REPORT_HTML), junit))
}
