//! Trace recording (docs/mcp.md#traces): `trace.ndjson`, screenshots, the offline viewer and the zip.
//!
//! Owns: the recording's files under `<root>/<name>/`, each event written whole and flushed
//! at once (a killed server leaves valid NDJSON), the `action` event of one tool call or batch
//! step (screenshot after observation-bearing calls), `trace-end`, the self-contained
//! `index.html` and `<root>/<name>.zip`. Everything is private like the artifacts: directories
//! created exclusively at 0700, files at 0600, never through a symlink (`private_fs.rs`).
//! Secrets are kept out like snapshots keep them out (docs/mcp.md#secrets): text typed into a field whose
//! value snapshots suppress, and a value read from one (browser_read `value`, in a batch step
//! too), show as `"[redacted]"` in every event, arguments and results alike. The server calls [`record_action`]
//! after each tool call, browser_batch after each step, and the session ends a recording at
//! shutdown.
//!
//! Does not own the tool's state rules (name clash, already recording: `tools/trace.rs`) or the
//! artifact quota (traces are outside it).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{json, Map, Value};

use crate::error::{ToolError, ToolOutput};
use crate::private_fs;
use crate::session::ToolSession;

/// What a trace shows instead of a secret.
const REDACTED: &str = "[redacted]";

/// Screenshots stop after this many per trace.
const MAX_SCREENSHOTS: u64 = 1000;

/// The viewer page; `/*EVENTS*/` is replaced by the events as JSON.
const VIEWER_HTML: &str = include_str!("trace_viewer.html");

/// An active recording.
#[derive(Debug)]
pub struct TraceRecording {
    pub name: String,
    pub root: PathBuf,
    pub out_dir: PathBuf,
    pub started_at: String,
    /// `action` events written so far.
    pub events: u64,
    screenshots: bool,
    n_screenshots: u64,
    file: fs::File,
}

impl TraceRecording {
    /// Creates `<root>/<name>/` (and `screenshots/`) and writes `trace-start`. `root` must
    /// exist; `<name>` must not (a directory or symlink there is refused).
    pub fn start(
        root: &Path,
        name: &str,
        screenshots: bool,
        header: Map<String, Value>,
    ) -> std::io::Result<TraceRecording> {
        let out_dir = root.join(name);
        private_fs::create_dir(&out_dir)?;
        private_fs::create_dir(&out_dir.join("screenshots"))?;
        let file = private_fs::create_file(&out_dir.join("trace.ndjson"))?;
        let started_at = iso_now();
        let mut recording = TraceRecording {
            name: name.to_owned(),
            root: root.to_path_buf(),
            out_dir,
            started_at: started_at.clone(),
            events: 0,
            screenshots,
            n_screenshots: 0,
            file,
        };
        let mut event = Map::new();
        event.insert("type".into(), json!("trace-start"));
        event.insert("version".into(), json!(1));
        event.insert("name".into(), json!(name));
        event.insert("startedAt".into(), json!(started_at));
        event.extend(header);
        recording.write(&Value::Object(event))?;
        Ok(recording)
    }

    /// Writes one event as one line and flushes it.
    fn write(&mut self, event: &Value) -> std::io::Result<()> {
        let mut line = event.to_string();
        line.push('\n');
        // One write of the whole line: a killed server never leaves half an event behind.
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }

    /// Writes `trace-end` (`reason` stop or shutdown).
    pub fn end(&mut self, reason: &str) -> std::io::Result<()> {
        let event = json!({ "type": "trace-end", "reason": reason, "events": self.events });
        self.write(&event)?;
        self.file.sync_all()
    }

    /// The path of `trace.ndjson`.
    pub fn trace_path(&self) -> PathBuf {
        self.out_dir.join("trace.ndjson")
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for now.
pub fn iso_now() -> String {
    crate::time::iso_time(SystemTime::now())
}

/// What one finished tool call (or batch step) looked like.
pub struct CallRecord<'a> {
    pub tool: &'a str,
    pub observes: bool,
    pub arguments: &'a Map<String, Value>,
    pub started_at: String,
    pub duration_ms: u64,
    pub outcome: Result<&'a ToolOutput, &'a ToolError>,
    /// The log journal's cursor when the call started: counts cover later entries.
    pub log_cursor: u64,
}

/// `{console:{errors, warnings}, network:{requests, failed}}` over journal entries after
/// `since` (entries evicted meanwhile are not counted).
fn log_counts(journal: &chromate::journal::Journal, since: u64) -> (Value, Value) {
    let entries = journal.list(&chromate::journal::LogFilter::default(), since, usize::MAX);
    let (mut errors, mut warnings, mut requests, mut failed) = (0u64, 0u64, 0u64, 0u64);
    for entry in &entries.entries {
        if entry.is_error() {
            errors += 1;
        } else if entry.level() == Some(chromate::journal::LogLevel::Warn) {
            warnings += 1;
        }
        match entry.kind() {
            chromate::journal::LogKind::Request => requests += 1,
            chromate::journal::LogKind::RequestFailed => failed += 1,
            _ => {}
        }
    }
    (
        json!({ "errors": errors, "warnings": warnings }),
        json!({ "requests": requests, "failed": failed }),
    )
}

/// Appends the `action` event of a call while a trace records (browser_trace itself excluded;
/// browser_batch is recorded as its steps, each its own event). Failures to write are reported
/// on stderr; they never fail the call.
pub fn record_action<'a>(
    session: &'a mut ToolSession,
    call: CallRecord<'a>,
) -> crate::Boxed<'a, ()> {
    Box::pin(record_action_unboxed(session, call))
}

async fn record_action_unboxed(session: &mut ToolSession, call: CallRecord<'_>) {
    if session.trace.is_none() || call.tool == "browser_trace" {
        return;
    }
    let page = session.current_page();
    let arguments = redact(call.tool, call.arguments, page.as_ref()).await;
    let (ok, outcome_key, outcome_value, observation) = match call.outcome {
        Ok(output) => {
            let result =
                redact_result(call.tool, call.arguments, &output.result, page.as_ref()).await;
            (!output.is_error, "result", result, observed(output))
        }
        Err(error) => (false, "error", error.to_json(), None),
    };
    let Some(recording) = session.trace.as_mut() else {
        return;
    };
    let seq = recording.events + 1;
    let wants_screenshot =
        call.observes && ok && recording.screenshots && recording.n_screenshots < MAX_SCREENSHOTS;
    let out_dir = recording.out_dir.clone();
    let mut screenshot = Value::Null;
    if let Some(page) = page
        .as_ref()
        .filter(|p| wants_screenshot && p.dialog().is_none())
    {
        if let Ok(shot) = page
            .screenshot(chromate::capture::ScreenshotOptions::default())
            .await
        {
            let relative = format!("screenshots/{seq:04}.png");
            match private_fs::write_new_file(&out_dir.join(&relative), &shot.png) {
                Ok(()) => screenshot = json!(relative),
                Err(err) => eprintln!("chromate: trace screenshot not written: {err}"),
            }
        }
    }
    let (console, network) = log_counts(&session.journal.log, call.log_cursor);
    let Some(recording) = session.trace.as_mut() else {
        return;
    };
    if !screenshot.is_null() {
        recording.n_screenshots += 1;
    }
    let mut event = json!({
        "type": "action",
        "seq": seq,
        "tool": call.tool,
        "arguments": arguments,
        "startedAt": call.started_at,
        "durationMs": call.duration_ms,
        "ok": ok,
        "observation": observation,
        "url": page.as_ref().map(chromate::Page::url),
        "console": console,
        "network": network,
        "screenshot": screenshot,
    });
    event[outcome_key] = outcome_value;
    match recording.write(&event) {
        Ok(()) => recording.events = seq,
        Err(err) => eprintln!("chromate: trace event not written: {err}"),
    }
}

/// The observation text as a trace event holds it (tripwire appended).
fn observed(output: &ToolOutput) -> Option<String> {
    output.observation.as_ref().map(|o| {
        let mut text = o.body.clone();
        for line in o.footer() {
            text.push('\n');
            text.push_str(line);
        }
        text
    })
}

/// The arguments as the trace shows them: text aimed at secret fields (docs/mcp.md#secrets) as
/// `"[redacted]"`, upload `files` as a count.
async fn redact(
    tool: &str,
    arguments: &Map<String, Value>,
    page: Option<&chromate::Page>,
) -> Map<String, Value> {
    let mut res = arguments.clone();
    if let Some(Value::Array(files)) = res.get("files") {
        let count = files.len();
        res.insert("files".into(), json!(count));
    }
    let (key, selector) = match tool {
        "browser_fill" => ("value", arguments.get("selector").and_then(Value::as_str)),
        "browser_type" => ("text", None),
        _ => return res,
    };
    if !res.contains_key(key) {
        return res;
    }
    // In doubt (no page, a malformed selector, an error), the text is redacted.
    let secret = match (page, selector.map(chromate::Selector::parse)) {
        (Some(page), None) => page.is_secret_field(None).await.unwrap_or(true),
        (Some(page), Some(Ok(parsed))) => page.is_secret_field(Some(&parsed)).await.unwrap_or(true),
        (Some(_), Some(Err(_))) | (None, _) => true,
    };
    if secret {
        res.insert(key.into(), json!(REDACTED));
    }
    res
}

/// Whether a browser_read call reads a form value (`field=value`, or the `value` attribute),
/// which may be a secret.
fn reads_a_value(tool: &str, arguments: &Map<String, Value>) -> bool {
    let field = arguments.get("field").and_then(Value::as_str);
    tool == "browser_read"
        && (field == Some("value")
            || (field == Some("attr")
                && arguments.get("name").and_then(Value::as_str) == Some("value")))
}

/// The result as the trace shows it: a value read from a secret field (docs/mcp.md#secrets) as
/// `"[redacted]"`. With no page to ask (`page` `None`), every value read is redacted.
async fn redact_result(
    tool: &str,
    arguments: &Map<String, Value>,
    result: &Value,
    page: Option<&chromate::Page>,
) -> Value {
    if !reads_a_value(tool, arguments) {
        return result.clone();
    }
    let selector = arguments
        .get("selector")
        .and_then(Value::as_str)
        .map(chromate::Selector::parse);
    // In doubt (no page, no selector or a malformed one, an error), the value is redacted.
    let secret = match (page, selector) {
        (Some(page), Some(Ok(parsed))) => page.is_secret_field(Some(&parsed)).await.unwrap_or(true),
        _ => true,
    };
    if secret {
        redact_value(result)
    } else {
        result.clone()
    }
}

/// A read's result with its value replaced (a null value, nothing read, stays null) and its
/// length (`totalBytes`) left out: the secret's length is no business of the trace either.
fn redact_value(result: &Value) -> Value {
    let mut res = result.clone();
    match res.as_object_mut() {
        Some(object) => {
            if object.get("value").is_some_and(|value| !value.is_null()) {
                object.insert("value".into(), json!(REDACTED));
                object.remove("totalBytes");
            }
        }
        None => res = json!(REDACTED),
    }
    res
}

/// Writes `index.html` into the recording's directory from its `trace.ndjson`.
pub fn write_viewer(recording: &TraceRecording) -> std::io::Result<PathBuf> {
    let ndjson =
        String::from_utf8_lossy(&private_fs::read_file(&recording.trace_path())?).into_owned();
    let events: Vec<Value> = ndjson
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let html = viewer_html(&recording.name, &events);
    let path = recording.out_dir.join("index.html");
    private_fs::write_new_file(&path, html.as_bytes())?;
    Ok(path)
}

/// The viewer page with `events` embedded (`</` escaped so no event can end the script).
pub fn viewer_html(name: &str, events: &[Value]) -> String {
    let data = Value::Array(events.to_vec())
        .to_string()
        .replace("</", "<\\/")
        .replace("<!--", "<\\!--");
    let title = name
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    VIEWER_HTML
        .replace("/*TITLE*/", &title)
        .replace("/*EVENTS*/", &data)
}

/// Writes `<root>/<name>.zip` (a new file, 0600) with `trace.ndjson`, `index.html` and
/// `screenshots/`.
pub fn write_zip(recording: &TraceRecording) -> Result<PathBuf, String> {
    use zip::write::SimpleFileOptions;
    let path = recording.root.join(format!("{}.zip", recording.name));
    let describe = |err: &dyn std::fmt::Display| format!("{}: {err}", path.display());
    let file = private_fs::create_file(&path).map_err(|err| describe(&err))?;
    let mut writer = zip::ZipWriter::new(file);
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for name in ["trace.ndjson", "index.html"] {
        let data =
            private_fs::read_file(&recording.out_dir.join(name)).map_err(|err| describe(&err))?;
        writer
            .start_file(name, options)
            .map_err(|err| describe(&err))?;
        writer.write_all(&data).map_err(|err| describe(&err))?;
    }
    writer
        .add_directory("screenshots/", options)
        .map_err(|err| describe(&err))?;
    let mut shots: Vec<PathBuf> = fs::read_dir(recording.out_dir.join("screenshots"))
        .map_err(|err| describe(&err))?
        .filter_map(Result::ok)
        // Only regular files: a symlink in there is not followed.
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .map(|entry| entry.path())
        .collect();
    shots.sort();
    for shot in shots {
        let Some(file_name) = shot.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let data = private_fs::read_file(&shot).map_err(|err| describe(&err))?;
        // PNGs are already compressed.
        let stored = options.compression_method(zip::CompressionMethod::Stored);
        writer
            .start_file(format!("screenshots/{file_name}"), stored)
            .map_err(|err| describe(&err))?;
        writer.write_all(&data).map_err(|err| describe(&err))?;
    }
    writer.finish().map_err(|err| describe(&err))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewer_embeds_events_without_closing_the_script() {
        let events = vec![json!({"type": "action", "tool": "browser_eval", "x": "</script><b>"})];
        let html = viewer_html("t<1>", &events);
        assert!(html.contains("<\\/script>"));
        assert!(!html.contains("</script><b>"));
        assert!(html.contains("t&lt;1&gt;"));
        assert!(!html.contains("http://") && !html.contains("https://"));
    }

    #[test]
    fn events_are_whole_lines_and_end_with_trace_end() {
        let root = std::env::temp_dir().join(format!("chromate-trace-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).expect("the trace root");
        let mut recording =
            TraceRecording::start(&root, "t", false, Map::new()).expect("start a recording");
        recording.end("stop").expect("end it");
        let text = fs::read_to_string(recording.trace_path()).expect("read the trace");
        let kinds: Vec<String> = text
            .lines()
            .map(|line| {
                let event: Value = serde_json::from_str(line).expect("a json line");
                event["type"].as_str().unwrap_or_default().to_owned()
            })
            .collect();
        assert_eq!(kinds, ["trace-start", "trace-end"]);
        write_viewer(&recording).expect("write the viewer");
        let zip = write_zip(&recording).expect("write the zip");
        assert!(zip.is_file());
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| {
            fs::symlink_metadata(path).map_or(0, |meta| meta.permissions().mode() & 0o7777)
        };
        assert_eq!(mode(&recording.out_dir), 0o700);
        assert_eq!(mode(&recording.out_dir.join("screenshots")), 0o700);
        assert_eq!(mode(&recording.trace_path()), 0o600);
        assert_eq!(mode(&recording.out_dir.join("index.html")), 0o600);
        assert_eq!(mode(&zip), 0o600);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn a_trace_never_starts_in_or_zips_through_a_planted_path() {
        let base = tempfile::tempdir().expect("a temp dir");
        let victim = base.path().join("victim");
        fs::create_dir(&victim).expect("victim");
        std::os::unix::fs::symlink(&victim, base.path().join("trace-1")).expect("plant");
        assert!(TraceRecording::start(base.path(), "trace-1", false, Map::new()).is_err());
        assert_eq!(fs::read_dir(&victim).map(Iterator::count).ok(), Some(0));
        let recording = TraceRecording::start(base.path(), "t", false, Map::new()).expect("start");
        let target = base.path().join("kept.txt");
        fs::write(&target, "keep").expect("target");
        std::os::unix::fs::symlink(&target, base.path().join("t.zip")).expect("plant");
        write_viewer(&recording).expect("viewer");
        assert!(
            write_zip(&recording).is_err(),
            "the zip is a new file, never a symlink's target"
        );
        assert_eq!(fs::read_to_string(&target).ok().as_deref(), Some("keep"));
    }

    #[test]
    fn a_redacted_read_keeps_its_shape() {
        let read = json!({ "value": "hunter2", "truncated": false, "totalBytes": 7 });
        assert_eq!(
            redact_value(&read),
            json!({ "value": "[redacted]", "truncated": false })
        );
        assert_eq!(
            redact_value(&json!({ "value": null }))["value"],
            Value::Null
        );
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert!(reads_a_value(
            "browser_read",
            &args(json!({ "field": "value" }))
        ));
        assert!(reads_a_value(
            "browser_read",
            &args(json!({ "field": "attr", "name": "value" }))
        ));
        assert!(!reads_a_value(
            "browser_read",
            &args(json!({ "field": "text" }))
        ));
        assert!(!reads_a_value(
            "browser_read",
            &args(json!({ "field": "attr", "name": "href" }))
        ));
    }
}
