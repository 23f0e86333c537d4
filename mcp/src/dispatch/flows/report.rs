//! What a flow run leaves on disk for people and for the next command, and reading it back.
//!
//! Owns: each capture's sidecar `<capture>.json` (its record: url, viewport, selector, time,
//! size, sha256, masked selectors, console errors), each flow's `index.md` (steps, outcome,
//! captures) and `run.json` (the flow's result as `flows run` printed it), and
//! [`describe`], which reads them back without a browser. Does not own running flows
//! (`run.rs`) or where the directories are (`output.rs`).

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::capture::{name_is_valid, CaptureRecord};
use super::output;
use super::run::FlowResult;
use crate::dispatch::error::ToolError;

/// The machine-readable result a run leaves in each flow directory.
pub(crate) const RUN_JSON: &str = "run.json";
/// The human-readable one.
pub(crate) const INDEX_MD: &str = "index.md";

/// Writes `<dir>/<capture>.json`.
pub(crate) fn write_sidecar(dir: &Path, record: &CaptureRecord) -> io::Result<()> {
    let text = pretty(&record.to_json());
    output::replace_file(dir, &format!("{}.json", record.name), text.as_bytes())
}

/// Writes the flow's `index.md` and `run.json`.
pub(crate) fn write_flow(result: &FlowResult) -> io::Result<()> {
    output::replace_file(&result.dir, INDEX_MD, index_md(result).as_bytes())?;
    output::replace_file(&result.dir, RUN_JSON, pretty(&result.to_json()).as_bytes())
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    text.push('\n');
    text
}

/// The flow's `index.md`.
pub(crate) fn index_md(result: &FlowResult) -> String {
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
        }
        (Some(error), None) => {
            let _ = writeln!(
                text,
                "**Failed** before its first step: `{}` {}",
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
    text.push_str("\n## Steps\n\n| # | step | line | result | ms | console errors |\n|---|---|---|---|---|---|\n");
    for (index, step) in result.steps.iter().enumerate() {
        let outcome = match &step.error {
            None => "ok".to_owned(),
            Some(error) => format!("failed: `{}`", error["code"].as_str().unwrap_or("")),
        };
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
pub(crate) fn describe(output_dir: &Path, name: &str) -> Result<Value, ToolError> {
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
            captures.push(json!({
                "name": capture,
                "path": path.display().to_string(),
                "metadata": metadata,
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
    crate::private_fs::read_file(path)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
}
