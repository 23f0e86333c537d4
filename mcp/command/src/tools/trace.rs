//! browser_trace (docs/mcp.md#traces): declaration, arguments, `start`, `stop` and
//! `status`.
//!
//! Owns: the trace root, default names (`trace-<n>`), the name-clash,
//! already-recording and not-recording rules. The files themselves (events,
//! viewer, zip) are `crate::trace`'s; the per-call events are written by the
//! server's dispatch and browser_batch. Never launches the browser.

use std::path::Path;

use serde_json::json;

use super::schema::{
    arg_enum, tool_args, Arg, Capability, Cli, Hints, Pattern, Runs, Slot, ToolDecl,
};
use super::ToolContext;
use crate::error::{ToolError, ToolErrorCode, ToolOutput};

/// `^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$`: bare, no path, no leading dot.
pub(super) static TRACE_NAME: Pattern = Pattern {
    source: "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$",
    matches: |name| {
        let mut bytes = name.bytes();
        let first_ok = bytes
            .next()
            .is_some_and(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
        first_ok
            && name.len() <= 64
            && bytes.all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
    },
};

pub(super) const TRACE: ToolDecl = ToolDecl {
    name: "browser_trace",
    title: "Tracing",
    verb: "trace",
    description: "Record tool calls with screenshots into an offline HTML viewer.",
    hints: Hints::T,
    observes: false,
    cli: Cli::new("trace", &[Slot::arg("action"), Slot::arg("name")]),
    args: TraceArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

arg_enum! {
    /// browser_trace `action`.
    pub enum TraceAction {
        Start = "start",
        Stop = "stop",
        Status = "status",
    }
}

tool_args! {
    /// The arguments of browser_trace, in schema order.
    pub struct TraceArgs {
        action: TraceAction = Arg::one_of("action", "What to do", TraceAction::VALUES).default_str("status"),
        name: Option<String> = Arg::string("name", "Name (start; default trace-<n>)")
            .max_len(64)
            .pattern(&TRACE_NAME),
        #[serde(default)]
        zip: bool = Arg::boolean("zip", "Also write <name>.zip (stop)"),
        #[serde(default)]
        no_screenshots: bool = Arg::boolean("no_screenshots", "Skip screenshots (start)"),
    }
}

/// Whether `<root>/<name>` or `<root>/<name>.zip` is taken: anything there counts, a dangling
/// symlink included.
fn name_taken(root: &Path, name: &str) -> bool {
    let present = |path: std::path::PathBuf| std::fs::symlink_metadata(path).is_ok();
    present(root.join(name)) || present(root.join(format!("{name}.zip")))
}

/// The first `trace-<n>` (n from 1) not taken under `root`.
pub(super) fn first_free_name(root: &Path) -> String {
    (1u64..)
        .map(|n| format!("trace-{n}"))
        .find(|name| !name_taken(root, name))
        .unwrap_or_else(|| "trace".to_owned())
}

pub(super) async fn trace(
    ctx: &mut ToolContext<'_>,
    args: TraceArgs,
) -> Result<ToolOutput, ToolError> {
    let root = ctx.session.trace_root();
    let recording = ctx.session.trace.as_ref();
    match args.action {
        TraceAction::Start => {
            if let Some(recording) = recording {
                return Err(state_invalid(
                    format!("trace start: already recording \"{}\"", recording.name),
                    "browser_trace action=stop first",
                    "already-recording",
                ));
            }
            let name = args.name.clone().unwrap_or_else(|| first_free_name(&root));
            if name_taken(&root, &name) {
                return Err(state_invalid(
                    format!("trace start: {} already exists", root.join(&name).display()),
                    "pick another name, or omit name for the next free trace-<n>",
                    "name-exists",
                ));
            }
            let root = ctx
                .session
                .ensure_trace_root()
                .map_err(|err| io_error("trace start", &root, &err))?;
            let session = &*ctx.session;
            let mut header = serde_json::Map::new();
            header.insert("chromate".into(), json!(env!("CARGO_PKG_VERSION")));
            header.insert("viewport".into(), json!({ "width": 1280, "height": 800 }));
            header.insert("headless".into(), json!(!session.config.headed));
            let recording =
                crate::trace::TraceRecording::start(&root, &name, !args.no_screenshots, header)
                    .map_err(|err| io_error("trace start", &root.join(&name), &err))?;
            let result = json!({
                "ok": true,
                "action": "start",
                "name": recording.name,
                "outDir": recording.out_dir.display().to_string(),
                "startedAt": recording.started_at,
            });
            ctx.session.trace = Some(recording);
            Ok(ToolOutput::new(result))
        }
        TraceAction::Stop => {
            let Some(mut recording) = ctx.session.trace.take() else {
                return Err(state_invalid(
                    "trace stop: no trace is recording".to_owned(),
                    "start one with browser_trace action=start",
                    "not-recording",
                ));
            };
            recording
                .end("stop")
                .map_err(|err| io_error("trace stop", &recording.trace_path(), &err))?;
            let viewer = crate::trace::write_viewer(&recording)
                .map_err(|err| io_error("trace stop", &recording.out_dir, &err))?;
            let mut result = json!({
                "ok": true,
                "action": "stop",
                "name": recording.name,
                "outDir": recording.out_dir.display().to_string(),
                "trace": recording.trace_path().display().to_string(),
                "viewer": viewer.display().to_string(),
            });
            if args.zip {
                let zip = crate::trace::write_zip(&recording).map_err(|reason| {
                    ToolError::new(
                        ToolErrorCode::DriverError,
                        format!("trace stop: cannot write the zip: {reason}"),
                    )
                    .with_hint("the trace directory is complete; zip it by hand or retry")
                    .with_detail(json!({ "reason": "io" }))
                })?;
                result["zip"] = json!(zip.display().to_string());
                return Ok(ToolOutput::new(result).with_link(zip));
            }
            Ok(ToolOutput::new(result))
        }
        TraceAction::Status => Ok(ToolOutput::new(match recording {
            None => json!({ "running": false, "root": root.display().to_string() }),
            Some(recording) => json!({
                "running": true,
                "name": recording.name,
                "outDir": recording.out_dir.display().to_string(),
                "startedAt": recording.started_at,
                "events": recording.events,
            }),
        })),
    }
}

fn io_error(verb: &str, path: &Path, err: &std::io::Error) -> ToolError {
    ToolError::new(
        ToolErrorCode::DriverError,
        format!("{verb}: cannot write {}: {err}", path.display()),
    )
    .with_hint("check that CHROMATE_TRACE_DIR (or the artifacts directory) is writable")
    .with_detail(json!({ "reason": "io" }))
}

fn state_invalid(message: String, hint: &str, reason: &str) -> ToolError {
    ToolError::new(ToolErrorCode::StateInvalid, message)
        .with_hint(hint)
        .with_detail(json!({ "reason": reason }))
}
