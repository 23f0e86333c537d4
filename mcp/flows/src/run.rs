//! Running flows: each flow in a headless browser of its own, its steps one after the other
//! through [`chromate_command::run`] exactly as the tools run them, its captures into
//! `<output>/<flow>/`.
//!
//! Owns: the order of a run (flow directory made afresh, browser launched with the flow's
//! viewport, its screencast started when the flow asks for video, steps — the viewport and
//! the screencast following the flow to any tab a step moves it to —, the screencast
//! stopped, browser killed, video encoded, baseline compared, `index.md` and `run.json`
//! written), what counts as a
//! failed step (a tool error, a failed browser_batch, a negative answer such as `exists`
//! finding nothing), stopping at the first failure while keeping every capture taken before
//! it, cancellation (a signal: the current step stops, the flow is finalized), and the events
//! the front end shows as progress. Does not own the file format (`file.rs`), one capture
//! (`capture.rs`) or what reports look like (`report.rs`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

use super::baseline::{self, BaselineOptions, Comparison, Verdict};
use super::capture::{self, CaptureRecord, DEFAULT_VIEWPORT};
use super::failure::{self, FailureArtifacts};
use super::file::{Flow, FlowFile, StepKind};
use super::{output, report, video};
use chromate_command::call::{Cancel, Progress};
use chromate_command::config::Config;
use chromate_command::error::{ToolError, ToolErrorCode};
use chromate_command::session::ToolSession;
use chromate_command::Reply;

/// What a run was asked for.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The flows to run, in this order; empty: all of them, in file order.
    pub names: Vec<String>,
    /// `--output-dir`; `None`: the private per-user directory.
    pub output_dir: Option<String>,
    /// `--junit FILE`: JUnit XML written there too.
    pub junit: Option<PathBuf>,
    /// `--baseline DIR [--threshold F] [--update-baseline]`.
    pub baseline: Option<BaselineOptions>,
    /// `--video`: record every flow, not only those with `video = true`.
    pub video: bool,
    /// `CHROMATE_FFMPEG`: the ffmpeg to encode with (else `ffmpeg` on PATH).
    pub ffmpeg: Option<PathBuf>,
    /// `--describe`: describe every flow's PNG captures, not only those with
    /// `vision_describe = true` (docs/llm.md#flows).
    pub describe: bool,
    /// `--workers N`: how many flows run at once, each in its own browser (0 and 1: one).
    pub workers: usize,
}

/// The front end's event handler, shared by the flows that run at once (held only while an
/// event is told, never across an await).
type Events<'a> = std::sync::Mutex<&'a mut (dyn FnMut(Event<'_>) + Send)>;

fn tell(events: &Events<'_>, event: Event<'_>) {
    let mut on_event = events
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    (*on_event)(event);
}

/// What the front end hears while a run goes on.
#[derive(Debug)]
pub enum Event<'a> {
    /// A step is about to run (`index` 0-based of `total`).
    Step {
        flow: &'a str,
        index: usize,
        total: usize,
        label: &'a str,
        captures: usize,
    },
    /// A flow has finished and its files are written.
    Finished(&'a FlowResult),
}

/// One step as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    pub label: String,
    /// Its line in the flow file.
    pub line: usize,
    pub ok: bool,
    pub duration_ms: u64,
    /// The error object of a failed step.
    pub error: Option<Value>,
    /// Page and console errors journalled while it ran.
    pub console_errors: Vec<Value>,
    /// What a failed step left in `<flow>/failure/` (none for a step stopped by a signal).
    pub artifacts: Option<FailureArtifacts>,
    /// How many times it ran (1 + the retries it used).
    pub attempts: u32,
    /// The errors of the attempts that failed before the last one.
    pub retried: Vec<Value>,
}

impl StepRecord {
    /// It passed, but only after a retry.
    pub fn flaky(&self) -> bool {
        self.ok && self.attempts > 1
    }
}

/// One flow's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowResult {
    pub name: String,
    /// `<output>/<flow>/`.
    pub dir: PathBuf,
    pub steps_total: usize,
    pub steps: Vec<StepRecord>,
    pub captures: Vec<CaptureRecord>,
    pub error: Option<Value>,
    /// 0-based index of the step that failed.
    pub failed_step_index: Option<usize>,
    /// The flow failed after its steps had all passed: against the baseline, or updating it.
    pub failed_at_baseline: bool,
    pub video_path: Option<PathBuf>,
    pub video_mp4_path: Option<PathBuf>,
    /// Why there is no video although one was asked for (how to install ffmpeg).
    pub video_note: Option<String>,
    pub started_at: String,
    pub duration_ms: u64,
    /// Each PNG capture against the baseline, when `--baseline` was given.
    pub comparisons: Option<Vec<Comparison>>,
    /// `--update-baseline` wrote this flow's captures there.
    pub baseline_updated: bool,
    /// The downloads that ended while the flow ran, saved in `<flow>/files/downloads/` or not.
    pub downloads: Vec<DownloadRecord>,
    /// Each PNG capture's description when the flow asked for them: the capture's name and
    /// its `vision` object, or why there is none (the flow does not fail for it).
    pub descriptions: Vec<(String, Result<Value, String>)>,
}

/// A download that ended during a flow.
#[derive(Debug, Clone, PartialEq)]
pub struct DownloadRecord {
    /// The saved file's name (after numbering), else the name the browser suggested.
    pub name: String,
    pub url: String,
    /// `completed`, `canceled` or `failed`.
    pub state: &'static str,
    pub bytes: Option<u64>,
    /// The saved file (`completed` only).
    pub path: Option<PathBuf>,
    /// Why it was not saved.
    pub reason: Option<String>,
}

impl DownloadRecord {
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "url": self.url,
            "state": self.state,
            "bytes": self.bytes,
            "path": self.path.as_ref().map(|path| path.display().to_string()),
            "reason": self.reason,
        })
    }
}

/// The downloads the session's journal holds (a flow's session is its own: all are the flow's).
fn downloads(session: &ToolSession) -> Vec<DownloadRecord> {
    session
        .journal
        .log
        .downloads_since(0)
        .into_iter()
        .filter_map(|entry| match entry.data {
            chromate::journal::LogData::Download {
                url,
                name,
                state,
                bytes,
                path,
                reason,
            } => Some(DownloadRecord {
                name,
                url,
                state: state.as_str(),
                bytes,
                path,
                reason,
            }),
            _ => None,
        })
        .collect()
}

impl FlowResult {
    /// The names of the comparisons with `verdict`.
    pub fn compared(&self, verdict: Verdict) -> Vec<&str> {
        self.comparisons
            .iter()
            .flatten()
            .filter(|comparison| comparison.verdict == verdict)
            .map(|comparison| comparison.name.as_str())
            .collect()
    }

    pub fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// Where the flow failed, in words every report uses: `step 2 of 5 (click #send)`, `at the
    /// baseline, after its 5 steps`, or `before its first step` (its browser did not start, its
    /// file could not be read).
    pub fn failed_at(&self) -> Option<String> {
        self.error.as_ref()?;
        Some(match self.failed_step_index {
            Some(index) => format!(
                "step {} of {} ({})",
                index + 1,
                self.steps_total,
                self.steps.get(index).map_or("", |step| step.label.as_str())
            ),
            None if self.failed_at_baseline => format!(
                "at the baseline, after its {} step{}",
                self.steps_total,
                if self.steps_total == 1 { "" } else { "s" }
            ),
            None => "before its first step".to_owned(),
        })
    }

    /// The result of `flows run` for this flow: `{flow_name, ok, captures, video_path,
    /// video_mp4_path, error, failed_step_index, ...}`.
    pub fn to_json(&self) -> Value {
        let mut value = self.to_json_without_descriptions();
        if !self.descriptions.is_empty() {
            value["descriptions"] = super::describe::to_json(&self.descriptions);
        }
        value
    }

    fn to_json_without_descriptions(&self) -> Value {
        let path = |path: &Option<PathBuf>| path.as_ref().map(|path| path.display().to_string());
        json!({
            "flow_name": self.name,
            "ok": self.ok(),
            "output_dir": self.dir.display().to_string(),
            "captures": self.captures.iter().map(CaptureRecord::to_json).collect::<Vec<_>>(),
            "downloads": self.downloads.iter().map(DownloadRecord::to_json).collect::<Vec<_>>(),
            "video_path": path(&self.video_path),
            "video_mp4_path": path(&self.video_mp4_path),
            "video_note": self.video_note,
            "error": self.error,
            "failed_step_index": self.failed_step_index,
            "failed_at": self.failed_at(),
            "steps_total": self.steps_total,
            "steps": self.steps.iter().map(|step| json!({
                "label": step.label,
                "line": step.line,
                "ok": step.ok,
                "duration_ms": step.duration_ms,
                "error": step.error,
                "console_errors": step.console_errors,
                "artifacts": step.artifacts.as_ref().map(FailureArtifacts::to_json),
                "attempts": step.attempts,
                "flaky": step.flaky(),
                "retried_errors": step.retried,
            })).collect::<Vec<_>>(),
            "started_at": self.started_at,
            "duration_ms": self.duration_ms,
            "baseline": self.comparisons.as_ref().map(|comparisons| json!({
                "changed": self.compared(Verdict::Changed),
                "new": self.compared(Verdict::New),
                "missing": self.compared(Verdict::Missing),
                "same": self.compared(Verdict::Same),
                "updated": self.baseline_updated,
                "comparisons": comparisons.iter().map(Comparison::to_json).collect::<Vec<_>>(),
            })),
        })
    }
}

/// A whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub output_dir: PathBuf,
    pub config_path: PathBuf,
    pub flows: Vec<FlowResult>,
    /// `<output>/report.html`, once written.
    pub report_html: Option<PathBuf>,
    /// The JUnit XML, when asked for and written.
    pub junit: Option<PathBuf>,
}

impl RunReport {
    pub fn ok(&self) -> bool {
        self.flows.iter().all(FlowResult::ok)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "ok": self.ok(),
            "config_path": self.config_path.display().to_string(),
            "output_dir": self.output_dir.display().to_string(),
            "report_html": self.report_html.as_ref().map(|path| path.display().to_string()),
            "junit": self.junit.as_ref().map(|path| path.display().to_string()),
            "flows": self.flows.iter().map(FlowResult::to_json).collect::<Vec<_>>(),
        })
    }
}

/// The flows `names` asks for (all when empty), or INVALID_ARGUMENT listing the names there are.
pub fn select<'a>(file: &'a FlowFile, names: &[String]) -> Result<Vec<&'a Flow>, ToolError> {
    if names.is_empty() {
        return Ok(file.flows.iter().collect());
    }
    names
        .iter()
        .map(|name| file.flow(name).ok_or_else(|| missing_flow(name, file)))
        .collect()
}

/// A flow name the file does not have.
pub fn missing_flow(name: &str, file: &FlowFile) -> ToolError {
    let names = file.names();
    ToolError::new(
        ToolErrorCode::InvalidArgument,
        format!(
            "flows: no flow named {name:?} in {}; its flows: {}",
            file.path.display(),
            names.join(", ")
        ),
    )
    .with_hint("use one of the names listed (chromate flows list shows them)")
    .with_detail(json!({ "argument": "flow_name", "available": names }))
}

/// Runs the flows of `file` that `options` names, `options.workers` at a time (one after the
/// other by default); results, and their `Finished` events, come in the order asked for.
pub async fn run(
    config: &Config,
    file: &FlowFile,
    options: &RunOptions,
    cancel: &Cancel,
    on_event: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<RunReport, ToolError> {
    let flows = select(file, &options.names)?;
    let output_dir =
        output::resolve_dir(options.output_dir.as_deref()).map_err(|err| super::io_error(&err))?;
    let workers = options.workers.max(1);
    let events: Events<'_> = std::sync::Mutex::new(on_event);
    let mut done: Vec<Option<FlowResult>> = vec![None; flows.len()];
    let mut told = 0;
    let mut waiting = flows.iter().enumerate();
    let mut running: Vec<(usize, chromate_command::Boxed<'_, FlowResult>)> = Vec::new();
    loop {
        while running.len() < workers {
            let Some((index, flow)) = waiting.next() else {
                break;
            };
            running.push((
                index,
                run_flow(config, flow, &output_dir, options, cancel, &events),
            ));
        }
        if running.is_empty() {
            break;
        }
        let (at, result) = std::future::poll_fn(|cx| {
            for (at, (_, flow)) in running.iter_mut().enumerate() {
                if let std::task::Poll::Ready(result) = flow.as_mut().poll(cx) {
                    return std::task::Poll::Ready((at, result));
                }
            }
            std::task::Poll::Pending
        })
        .await;
        let (index, _) = running.swap_remove(at);
        done[index] = Some(result);
        while let Some(Some(result)) = done.get(told) {
            tell(&events, Event::Finished(result));
            told += 1;
        }
    }
    drop(running);
    let results: Vec<FlowResult> = done.into_iter().flatten().collect();
    let mut report = RunReport {
        output_dir,
        config_path: std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone()),
        flows: results,
        report_html: None,
        junit: None,
    };
    let written = report::write_run(&report, options.junit.as_deref()).map_err(|err| {
        ToolError::new(
            ToolErrorCode::DriverError,
            format!("flows: cannot write the reports: {err}"),
        )
        .with_hint("check that the output directory and the --junit path are writable")
        .with_detail(json!({ "reason": "io" }))
    })?;
    report.report_html = Some(written.0);
    report.junit = written.1;
    Ok(report)
}

fn run_flow<'a, 'e: 'a>(
    config: &'a Config,
    flow: &'a Flow,
    output_dir: &'a Path,
    options: &'a RunOptions,
    cancel: &'a Cancel,
    events: &'a Events<'e>,
) -> chromate_command::Boxed<'a, FlowResult> {
    Box::pin(run_flow_unboxed(
        config, flow, output_dir, options, cancel, events,
    ))
}

async fn run_flow_unboxed(
    config: &Config,
    flow: &Flow,
    output_dir: &Path,
    options: &RunOptions,
    cancel: &Cancel,
    events: &Events<'_>,
) -> FlowResult {
    let started = Instant::now();
    let mut result = FlowResult {
        name: flow.name.clone(),
        dir: output_dir.join(&flow.name),
        steps_total: flow.steps.len(),
        steps: Vec::new(),
        captures: Vec::new(),
        error: None,
        failed_step_index: None,
        failed_at_baseline: false,
        video_path: None,
        video_mp4_path: None,
        video_note: None,
        started_at: chromate_command::trace::iso_now(),
        duration_ms: 0,
        comparisons: None,
        baseline_updated: false,
        downloads: Vec::new(),
        descriptions: Vec::new(),
    };
    let dir = match output::fresh_flow_dir(output_dir, &flow.name) {
        Ok(dir) => dir,
        Err(err) => {
            result.error = Some(super::io_error(&err).to_json());
            return result;
        }
    };
    let files_dir = dir.join("files");
    let config = Config {
        rendering_profile: true,
        ..config.clone()
    };
    let mut session = ToolSession::with_artifacts_dir(config, files_dir.clone());
    // A step's selector waits up to its timeout_ms for a match, as in Playwright: a flow
    // cannot look at the page before it acts.
    session.wait_for_match = true;
    let viewport = flow.viewport.unwrap_or(DEFAULT_VIEWPORT);
    let progress = Progress::new("flow", Instant::now());
    let wants_video = flow.video || options.video;
    let ffmpeg = video::find_ffmpeg(options.ffmpeg.as_deref());
    if wants_video && ffmpeg.is_none() {
        result.video_note = Some(video::INSTALL_HINT.to_owned());
    }
    let mut video = None;
    match prepare(&mut session, viewport).await {
        Ok(page) => {
            if wants_video && ffmpeg.is_some() {
                match Video::start(&page, viewport).await {
                    Ok(started) => video = Some(started),
                    Err(err) => {
                        result.video_note = Some(format!("the screencast did not start: {err}"));
                    }
                }
            }
            let mut on = OnTab {
                target: page.target_id().to_owned(),
                video: video.as_mut(),
            };
            let run = Run {
                dir: &dir,
                viewport,
                cancel,
                progress: &progress,
            };
            run_steps(&mut session, flow, &run, &mut result, &mut on, events).await;
        }
        Err(error) => result.error = Some(error.to_json()),
    }
    // The recording ends before the browser does; it is encoded once the browser is gone, so a
    // failed or interrupted flow still gets its video.
    let recording = match video {
        Some(video) => Some(video.stop().await),
        None => None,
    };
    // Shutting down gives a download in flight its grace first, so it is listed once it ended.
    session.shutdown().await;
    result.downloads = downloads(&session);
    output::remove_if_empty(&files_dir);
    if let (Some(recording), Some(ffmpeg)) = (recording, &ffmpeg) {
        let files = video::encode(&recording, viewport, &dir, ffmpeg).await;
        result.video_path = files.webm;
        result.video_mp4_path = files.mp4;
        result.video_note = files.note;
    }
    if let Some(baseline) = &options.baseline {
        let tolerances: Vec<(String, baseline::Tolerance)> = flow
            .steps
            .iter()
            .filter_map(|step| match &step.kind {
                StepKind::Capture(args) => Some((args.name.clone(), step.tolerance)),
                StepKind::Tool { .. } => None,
            })
            .collect();
        check_baseline(baseline, &tolerances, &dir, &mut result);
    }
    if flow.vision_describe || options.describe {
        super::describe::describe_captures(&mut result, cancel).await;
    }
    result.duration_ms = millis(started);
    if let Err(err) = report::write_flow(&result) {
        eprintln!("chromate: flow {}: {err}", flow.name);
    }
    result
}

/// Compares the flow's captures with the baseline; a changed or missing capture fails a flow
/// that had not failed already, unless `--update-baseline` accepts them.
fn check_baseline(
    baseline: &BaselineOptions,
    tolerances: &[(String, baseline::Tolerance)],
    dir: &Path,
    result: &mut FlowResult,
) {
    let comparisons =
        baseline::compare_flow(baseline, &result.name, &result.captures, tolerances, dir);
    result.comparisons = Some(comparisons);
    if baseline.update {
        match baseline::update(baseline, &result.name, &result.captures) {
            Ok(()) => result.baseline_updated = true,
            Err(err) => {
                if result.error.is_none() {
                    result.failed_at_baseline = true;
                    result.error = Some(
                        ToolError::new(
                            ToolErrorCode::DriverError,
                            format!("flows: cannot update the baseline: {err}"),
                        )
                        .with_hint("check that the --baseline directory is writable")
                        .with_detail(json!({ "reason": "io" }))
                        .to_json(),
                    );
                }
            }
        }
        return;
    }
    let changed = result.compared(Verdict::Changed);
    let missing = result.compared(Verdict::Missing);
    if result.error.is_some() || (changed.is_empty() && missing.is_empty()) {
        return;
    }
    let mut parts = Vec::new();
    if !changed.is_empty() {
        parts.push(format!("changed: {}", changed.join(", ")));
    }
    if !missing.is_empty() {
        parts.push(format!("missing: {}", missing.join(", ")));
    }
    let message = format!(
        "flows: the captures differ from the baseline ({})",
        parts.join("; ")
    );
    let detail = json!({ "changed": changed, "missing": missing, "baseline": baseline.dir.join(&result.name).display().to_string() });
    result.failed_at_baseline = true;
    result.error = Some(
        ToolError::new(ToolErrorCode::ExpectMismatch, message)
            .with_hint("look at the <capture>.diff.png images (report.html shows them); if the change is right, run again with --update-baseline")
            .with_detail(detail)
            .to_json(),
    );
}

/// Launches the flow's browser and gives its page the flow's viewport.
async fn prepare(
    session: &mut ToolSession,
    viewport: (u32, u32),
) -> Result<chromate::Page, ToolError> {
    let page = session.active_page("flow").await?;
    capture::set_viewport(session, &page, viewport.0, viewport.1).await?;
    Ok(page)
}

/// What every step of one flow run shares: where its files go, its viewport, the signal that
/// interrupts it and its progress.
struct Run<'a> {
    dir: &'a Path,
    viewport: (u32, u32),
    cancel: &'a Cancel,
    progress: &'a Progress,
}

fn run_steps<'a, 'e: 'a>(
    session: &'a mut ToolSession,
    flow: &'a Flow,
    run: &'a Run<'a>,
    result: &'a mut FlowResult,
    on: &'a mut OnTab<'a>,
    events: &'a Events<'e>,
) -> chromate_command::Boxed<'a, ()> {
    Box::pin(run_steps_unboxed(session, flow, run, result, on, events))
}

async fn run_steps_unboxed(
    session: &mut ToolSession,
    flow: &Flow,
    run: &Run<'_>,
    result: &mut FlowResult,
    on: &mut OnTab<'_>,
    events: &Events<'_>,
) {
    let Run {
        dir,
        viewport,
        cancel,
        progress,
    } = *run;
    for (index, step) in flow.steps.iter().enumerate() {
        let label = step.label();
        tell(
            events,
            Event::Step {
                flow: &flow.name,
                index,
                total: flow.steps.len(),
                label: &label,
                captures: result.captures.len(),
            },
        );
        let started = Instant::now();
        let cursor = session.journal.log.cursor();
        // A failed step is tried again while its retries last (not after a signal); each
        // failed attempt's error is kept.
        let allowed = step.retries.unwrap_or(flow.retries);
        let mut attempts: u32 = 0;
        let mut retried: Vec<Value> = Vec::new();
        let outcome = loop {
            attempts += 1;
            let outcome = if cancel.is_cancelled() {
                Err(cancelled())
            } else {
                match &step.kind {
                    StepKind::Tool { decl, arguments } => {
                        let reply = chromate_command::run(
                            session,
                            decl,
                            arguments.clone(),
                            cancel,
                            progress,
                        )
                        .await;
                        if cancel.is_cancelled() {
                            Err(cancelled())
                        } else {
                            step_outcome(decl.name, &reply)
                        }
                    }
                    StepKind::Capture(args) => {
                        let waited = match &step.wait_for {
                            Some((decl, wait)) => {
                                wait_for_element(session, args, decl, wait, cancel, progress)
                                    .await
                                    .map(Some)
                            }
                            None => Ok(None),
                        };
                        let captured = match &waited {
                            Err(error) => Err(error.clone()),
                            Ok(prepared) => {
                                let own = prepared.as_ref().map_or(&**args, |(own, _)| own);
                                capture::capture(session, own, dir, cancel)
                                    .await
                                    .map(|mut record| {
                                        if let Some((_, attempts)) = prepared {
                                            record.attempts = *attempts;
                                        }
                                        record
                                    })
                                    .map_err(|error| tool_error(error, cancel))
                            }
                        };
                        // A capture's own viewport lasts for that capture only.
                        if captured.is_ok() && args.viewport().is_some_and(|own| own != viewport) {
                            if let Some(page) = session.current_page() {
                                let _ =
                                    capture::set_viewport(session, &page, viewport.0, viewport.1)
                                        .await;
                            }
                        }
                        match captured {
                            Ok(record) => {
                                if let Err(err) = report::write_sidecar(dir, &record) {
                                    eprintln!("chromate: capture {}: {err}", record.name);
                                }
                                result.captures.push(record);
                                Ok(())
                            }
                            Err(error) => Err(error),
                        }
                    }
                }
            };
            match outcome {
                Err(error) if attempts <= allowed && !cancel.is_cancelled() => {
                    on.follow(session, viewport).await;
                    retried.push(error);
                }
                outcome => break outcome,
            }
        };
        // A step that moved the flow to another tab (browser_tabs, a popup) takes the flow's
        // viewport and the video along.
        on.follow(session, viewport).await;
        let console_errors = capture::console_errors_since(session, cursor);
        let failed = outcome.as_ref().err().cloned();
        // A failed step leaves what the page looked like and what it logged; a signal leaves
        // nothing more to wait for.
        let artifacts = match &failed {
            Some(_) if !cancel.is_cancelled() => Some(failure::collect(session, dir, cursor).await),
            _ => None,
        };
        result.steps.push(StepRecord {
            label,
            line: step.line,
            ok: failed.is_none(),
            duration_ms: millis(started),
            error: failed.clone(),
            console_errors,
            artifacts,
            attempts,
            retried,
        });
        if let Some(error) = failed {
            result.error = Some(error);
            result.failed_step_index = Some(index);
            return;
        }
    }
}

/// A capture step's `wait_for`: loads the capture's `url` (when it has one: its viewport first,
/// then the load with the retry schedule, as the capture itself would), then waits for the
/// selector to be visible; returns the capture to take now (without its `url`) and how many
/// tries the load took.
async fn wait_for_element(
    session: &mut ToolSession,
    args: &capture::CaptureArgs,
    decl: &'static chromate_command::tools::ToolDecl,
    wait: &serde_json::Map<String, Value>,
    cancel: &Cancel,
    progress: &Progress,
) -> Result<(capture::CaptureArgs, u32), Value> {
    let mut own = args.clone();
    let mut attempts = 0;
    if let Some(url) = own.url.take() {
        let loaded: Result<u32, ToolError> = async {
            let page = session.active_page(capture::CAPTURE.verb).await?;
            if let Some((width, height)) = own.viewport() {
                capture::set_viewport(session, &page, width, height).await?;
            }
            let timeout = std::time::Duration::from_millis(own.timeout_ms);
            super::retry::navigate(session, &page, &url, own.wait_until(), timeout, cancel).await
        }
        .await;
        attempts = loaded.map_err(|error| tool_error(error, cancel))?;
    }
    let reply = chromate_command::run(session, decl, wait.clone(), cancel, progress).await;
    if cancel.is_cancelled() {
        return Err(cancelled());
    }
    step_outcome(decl.name, &reply)?;
    Ok((own, attempts))
}

/// A capture's error as a step's: a signal's cancellation says what it interrupted.
fn tool_error(error: ToolError, cancel: &Cancel) -> Value {
    if cancel.is_cancelled() {
        cancelled().with_detail_key("during", json!(error.message))
    } else {
        error.to_json()
    }
}

/// The tab the flow is on (the session's active tab), and its video.
struct OnTab<'a> {
    target: String,
    video: Option<&'a mut Video>,
}

impl OnTab<'_> {
    /// After a step: if the active tab is another one, gives it the flow's viewport and moves
    /// the recording there.
    async fn follow(&mut self, session: &mut ToolSession, viewport: (u32, u32)) {
        let Some(page) = session.current_page() else {
            return;
        };
        if page.target_id() == self.target {
            return;
        }
        self.target = page.target_id().to_owned();
        let _ = capture::set_viewport(session, &page, viewport.0, viewport.1).await;
        if let Some(video) = self.video.as_deref_mut() {
            video.switch_to(&page, viewport).await;
        }
    }
}

/// A flow's recording: the screencast of the tab the flow is on, one part per tab it was on,
/// joined end to end when it stops.
struct Video {
    started: Instant,
    /// The part being recorded and when it started.
    current: Option<(Instant, chromate::capture::Screencast)>,
    /// The finished parts, each with its start in seconds since the video started.
    parts: Vec<(f64, chromate::capture::Recording)>,
}

impl Video {
    async fn start(page: &chromate::Page, viewport: (u32, u32)) -> chromate::Result<Video> {
        let started = Instant::now();
        let screencast = page.start_screencast(screencast_options(viewport)).await?;
        Ok(Video {
            started,
            current: Some((started, screencast)),
            parts: Vec::new(),
        })
    }

    /// Ends the current part and records `page` from now on (a tab that cannot be recorded
    /// leaves a gap: the last frame before it lasts until the next part's first).
    async fn switch_to(&mut self, page: &chromate::Page, viewport: (u32, u32)) {
        self.end_part().await;
        let begun = Instant::now();
        if let Ok(screencast) = page.start_screencast(screencast_options(viewport)).await {
            self.current = Some((begun, screencast));
        }
    }

    fn end_part<'a>(&'a mut self) -> chromate_command::Boxed<'a, ()> {
        Box::pin(self.end_part_unboxed())
    }

    async fn end_part_unboxed(&mut self) {
        if let Some((begun, screencast)) = self.current.take() {
            let offset = begun.duration_since(self.started).as_secs_f64();
            self.parts.push((offset, screencast.stop().await));
        }
    }

    /// Stops recording: the parts as one recording, on one clock.
    async fn stop(mut self) -> chromate::capture::Recording {
        self.end_part().await;
        let mut joined = chromate::capture::Recording::default();
        for (offset, part) in self.parts {
            joined.frames.extend(part.frames.into_iter().map(|frame| {
                chromate::capture::ScreencastFrame {
                    at: frame.at + offset,
                    ..frame
                }
            }));
            joined.ended_at = offset + part.ended_at;
            joined.dropped += part.dropped;
        }
        joined
    }
}

fn screencast_options(viewport: (u32, u32)) -> chromate::capture::ScreencastOptions {
    chromate::capture::ScreencastOptions {
        max_width: viewport.0,
        max_height: viewport.1,
        ..chromate::capture::ScreencastOptions::default()
    }
}

/// A tool step's reply as a step outcome: a tool error, a failed browser_batch or a negative
/// answer fails the step.
fn step_outcome(tool: &str, reply: &Reply) -> Result<(), Value> {
    match reply {
        Reply::Failed(failed) => Err(failed.error.clone()),
        Reply::Done(done) if done.is_error => {
            let failed_step = done.result.get("failedStep").cloned();
            let inner = failed_step
                .as_ref()
                .and_then(Value::as_u64)
                .and_then(|at| done.result["steps"].get(at as usize))
                .and_then(|step| step.get("error"))
                .cloned();
            Err(inner.unwrap_or_else(|| {
                json!({
                    "code": "DRIVER_ERROR",
                    "message": format!("{tool}: the batch failed at step {}", failed_step.unwrap_or(Value::Null)),
                    "detail": done.result,
                })
            }))
        }
        Reply::Done(done) if done.negative => Err(json!({
            "code": "EXPECT_MISMATCH",
            "message": negative_message(tool, &done.result, &done.text),
            "hint": "a flow treats a negative answer (exists false, a failed a11y check) as a failed step; the error's detail (run.json, report.html) has the whole answer",
            "detail": done.result,
        })),
        Reply::Done(_) => Ok(()),
    }
}

/// Most rule ids a failed accessibility check names in its one line.
const MAX_RULES_NAMED: usize = 8;

/// Most characters of another negative answer in its one line.
const MAX_ANSWER_CHARS: usize = 200;

/// A negative answer in one line: a failed accessibility check as its rule ids with their
/// impact and node counts (`browser_a11y: the accessibility check failed: 3 violations:
/// image-alt (critical, 2 nodes), label (serious, 1 node), ...`), anything else as its text
/// cut short. The whole answer stays in the error's `detail`.
fn negative_message(tool: &str, result: &Value, text: &str) -> String {
    if let Some(violations) = result.get("violations").and_then(Value::as_array) {
        let total = result["counts"]["violations"]
            .as_u64()
            .unwrap_or(violations.len() as u64);
        let mut named: Vec<String> = violations
            .iter()
            .take(MAX_RULES_NAMED)
            .map(|violation| {
                let nodes = violation["nodes"].as_array().map_or(0, Vec::len);
                format!(
                    "{} ({}, {nodes} node{})",
                    violation["id"].as_str().unwrap_or("?"),
                    violation["impact"].as_str().unwrap_or("?"),
                    if nodes == 1 { "" } else { "s" }
                )
            })
            .collect();
        if violations.len() > MAX_RULES_NAMED {
            named.push(format!("… {} more", violations.len() - MAX_RULES_NAMED));
        }
        return format!(
            "{tool}: the accessibility check failed: {total} violation{}: {}",
            if total == 1 { "" } else { "s" },
            named.join(", ")
        );
    }
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = line.chars().take(MAX_ANSWER_CHARS).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    format!("{tool}: the answer is negative: {cut}")
}

/// The error of a step stopped by a signal.
fn cancelled() -> Value {
    ToolError::new(
        ToolErrorCode::DriverError,
        "flow: cancelled by a signal; the captures taken so far are kept",
    )
    .with_hint("run the flow again")
    .with_detail(json!({ "reason": "cancelled" }))
    .to_json()
}

trait WithDetailKey {
    fn with_detail_key(self, key: &str, value: Value) -> Value;
}

impl WithDetailKey for Value {
    fn with_detail_key(mut self, key: &str, value: Value) -> Value {
        if let Some(detail) = self.get_mut("detail").and_then(Value::as_object_mut) {
            detail.insert(key.to_owned(), value);
        }
        self
    }
}

fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_accessibility_check_is_one_line_of_rule_ids_and_counts() {
        let node = json!({ "target": "img", "html": "<img src=x.png>".repeat(20), "failureSummary": "Fix any of the following: ".repeat(10) });
        let result = json!({
            "passed": false,
            "checked": true,
            "counts": { "violations": 2, "passes": 10, "incomplete": 0 },
            "violations": [
                { "id": "image-alt", "impact": "critical", "nodes": [node.clone(), node.clone()] },
                { "id": "label", "impact": "serious", "nodes": [node] },
            ],
        });
        let text = result.to_string();
        assert!(text.len() > 1000, "a long answer: {}", text.len());
        let message = negative_message("browser_a11y", &result, &text);
        assert_eq!(
            message,
            "browser_a11y: the accessibility check failed: 2 violations: image-alt (critical, 2 nodes), label (serious, 1 node)"
        );
        let reply = Reply::Done(chromate_command::Done {
            result: result.clone(),
            text,
            observation: None,
            observation_full: None,
            links: Vec::new(),
            is_error: false,
            negative: true,
        });
        let error = step_outcome("browser_a11y", &reply).expect_err("negative");
        assert_eq!(error["message"], json!(message));
        assert_eq!(
            error["detail"], result,
            "the whole answer stays in the detail"
        );
    }

    #[test]
    fn many_rules_are_cut_with_a_count_and_another_long_answer_is_cut_short() {
        let violations: Vec<Value> = (0..11)
            .map(|n| json!({ "id": format!("rule-{n}"), "impact": "minor", "nodes": [] }))
            .collect();
        let result = json!({ "violations": violations, "counts": { "violations": 11 } });
        let message = negative_message("browser_a11y", &result, "");
        assert!(
            message.ends_with("rule-7 (minor, 0 nodes), … 3 more"),
            "{message}"
        );
        let long = "word ".repeat(100);
        let message = negative_message("browser_exists", &json!({ "exists": false }), &long);
        assert_eq!(
            message.chars().count(),
            "browser_exists: the answer is negative: ".len() + MAX_ANSWER_CHARS + 1
        );
        assert!(message.ends_with('…'), "{message}");
    }
}
