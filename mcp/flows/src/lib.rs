//! Captures and flows for CI (issue 14): deterministic captures of a page, and named multi-step
//! flows from a TOML file whose steps are ordinary tool calls run through [`chromate_command::run`].
//!
//! Owns: the one-shot capture (`chromate capture`: its own headless browser, launched for the
//! call and ended before it returns, so a CI job needs no session), `flows list`, and — in the
//! modules below — the capture itself (`capture.rs`), the navigation retries (`retry.rs`), the
//! flow file (`file.rs`), running flows (`run.rs`, each flow in a browser of its own), visual baselines (`baseline.rs`), what a failed step leaves (`failure.rs`), video (`video.rs`), what a
//! run writes and `flows describe` reads (`report.rs`), the five MCP tools of `--caps flows`
//! (`tools.rs`) and the files on disk (`output.rs`). Does not own argv or printing: every entry
//! point returns a [`Reply`] or a value the front end renders.

pub mod baseline;
pub mod capture;
pub mod describe;
pub mod failure;
pub mod file;
pub mod output;
pub mod report;
pub mod retry;
pub mod run;
pub mod tools;
pub mod video;

use serde_json::{json, Map, Value};

use chromate_command::call::Cancel;
use chromate_command::config::Config;
use chromate_command::error::{ToolError, ToolErrorCode};
use chromate_command::session::ToolSession;
use chromate_command::{Done, Failed, Reply};

use capture::{CaptureArgs, CAPTURE, DEFAULT_VIEWPORT};

/// Validates `arguments` against [`CAPTURE`] (defaults filled) and types them.
pub fn capture_args(arguments: &Map<String, Value>) -> Result<CaptureArgs, ToolError> {
    let defaults = chromate_command::tools::Defaults {
        agent_timeout_ms: chromate_command::config::DEFAULT_AGENT_TIMEOUT_MS,
    };
    let lookup = |_: &str| None;
    let validated = chromate_command::tools::schema::validate(
        &CAPTURE,
        Some(&Value::Object(arguments.clone())),
        &defaults,
        &lookup,
    )
    .map_err(|error| error.to_tool_error())?;
    CaptureArgs::from_validated(validated)
}

/// [`capture_once`] as the detached call its declaration ([`CAPTURE`]) names.
pub fn capture_call<'a>(
    config: &'a Config,
    arguments: Map<String, Value>,
    cancel: &'a Cancel,
    _progress: &'a chromate_command::call::Progress,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Reply> + Send + 'a>> {
    Box::pin(capture_once(config.clone(), arguments, cancel))
}

/// `chromate capture URL --name NAME ...`: launches a headless browser of its own, captures,
/// and closes it before returning. The reply's text is the file's absolute path; its result
/// the capture's record.
pub async fn capture_once(config: Config, arguments: Map<String, Value>, cancel: &Cancel) -> Reply {
    let outcome = capture_in_own_browser(config, arguments, cancel).await;
    match outcome {
        Ok(record) => Reply::Done(Done {
            text: record.path.display().to_string(),
            result: record.to_json(),
            observation: None,
            observation_full: None,
            links: vec![record.path.clone()],
            is_error: false,
            negative: false,
        }),
        Err(error) => failed(&error),
    }
}

async fn capture_in_own_browser(
    config: Config,
    arguments: Map<String, Value>,
    cancel: &Cancel,
) -> Result<capture::CaptureRecord, ToolError> {
    let mut args = capture_args(&arguments)?;
    if args.url.is_none() {
        return Err(ToolError::invalid_argument(
            "capture: a URL is required (only a flow's capture step may omit it)",
            "url",
            "give the page to capture, e.g. chromate capture http://127.0.0.1:8080/ --name home",
        ));
    }
    if args.viewport().is_none() {
        args.viewport_width = Some(DEFAULT_VIEWPORT.0);
        args.viewport_height = Some(DEFAULT_VIEWPORT.1);
    }
    let dir = output::resolve_dir(args.output_dir.as_deref()).map_err(|err| io_error(&err))?;
    let session_dir = dir.join(format!(
        ".chromate-session-{}",
        chromate_command::private_fs::random_suffix()
    ));
    let config = Config {
        rendering_profile: true,
        ..config
    };
    let mut session = ToolSession::with_artifacts_dir(config, session_dir.clone());
    let outcome = capture::capture(&mut session, &args, &dir, cancel).await;
    session.shutdown().await;
    output::remove_if_empty(&session_dir);
    outcome
}

/// `flows list`: each flow of the file with its steps and captures.
pub fn list(file: &file::FlowFile) -> Value {
    let flows: Vec<Value> = file
        .flows
        .iter()
        .map(|flow| {
            let captures: Vec<&str> = flow
                .steps
                .iter()
                .filter_map(|step| match &step.kind {
                    file::StepKind::Capture(args) => Some(args.name.as_str()),
                    file::StepKind::Tool { .. } => None,
                })
                .collect();
            json!({
                "name": flow.name,
                "line": flow.line,
                "base_url": flow.base_url,
                "viewport": flow.viewport.map(|(width, height)| json!({ "width": width, "height": height })),
                "video": flow.video,
                "steps": flow.steps.iter().map(file::Step::label).collect::<Vec<_>>(),
                "captures": captures,
            })
        })
        .collect();
    json!({
        "config_path": std::path::absolute(&file.path).unwrap_or_else(|_| file.path.clone()).display().to_string(),
        "flows": flows,
    })
}

/// An output directory that cannot be made or used.
pub fn io_error(err: &std::io::Error) -> ToolError {
    ToolError::new(
        ToolErrorCode::DriverError,
        format!("capture: the output directory: {err}"),
    )
    .with_hint("choose a directory you can write with --output-dir")
    .with_detail(json!({ "reason": "io" }))
}

fn failed(error: &ToolError) -> Reply {
    Reply::Failed(Failed {
        error: error.to_json(),
        text: error.to_text(None),
    })
}
