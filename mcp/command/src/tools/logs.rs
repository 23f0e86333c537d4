//! browser_logs (docs/tools.md#browser_logs--console-and-network, docs/mcp.md#logs): declaration, arguments, the `kind` filter rule,
//! and list/wait/clear over the session's journal.
//!
//! Owns: filter parsing and the MCP shape of journal entries (`p<N>` page
//! ids, camelCase fields). Does not capture anything: console and network
//! capture is the engine's (`chromate::journal::Journal`); before a browser has run
//! the journal is empty and `capturing` is false.

use std::time::Duration;

use serde_json::{json, Value};

use super::schema::{
    arg_enum, tool_args, Arg, Capability, Cli, Hints, IntDefault, Runs, Slot, ToolDecl,
    MAX_SAFE_INT,
};
use super::{cancelled_error, ToolContext, TIMEOUT};
use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::session::ToolSession;

/// The journal's entry kinds (docs/mcp.md#logs).
pub(super) const KINDS: [&str; 6] = [
    "console",
    "error",
    "request",
    "response",
    "requestfailed",
    "download",
];

pub(super) const LOGS: ToolDecl = ToolDecl {
    name: "browser_logs",
    title: "Console and network",
    verb: "logs",
    description: "List, wait for or clear captured console, error, network and download entries.",
    hints: Hints::L,
    observes: false,
    cli: Cli::new("logs", &[Slot::arg("action")]),
    args: LogsArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

arg_enum! {
    /// browser_logs `level`.
    pub enum LogsLevel {
        Debug = "debug",
        Info = "info",
        Warn = "warn",
        Error = "error",
    }
}

impl LogsLevel {
    /// The engine's level.
    fn engine(self) -> chromate::journal::LogLevel {
        match self {
            LogsLevel::Debug => chromate::journal::LogLevel::Debug,
            LogsLevel::Info => chromate::journal::LogLevel::Info,
            LogsLevel::Warn => chromate::journal::LogLevel::Warn,
            LogsLevel::Error => chromate::journal::LogLevel::Error,
        }
    }
}

arg_enum! {
    /// browser_logs `action`.
    pub enum LogsAction {
        List = "list",
        Wait = "wait",
        Clear = "clear",
    }
}

tool_args! {
    /// The arguments of browser_logs, in schema order.
    pub struct LogsArgs {
        action: LogsAction = Arg::one_of("action", "What to do", LogsAction::VALUES).default_str("list"),
        kind: Option<String> = Arg::string(
            "kind",
            "Comma list: console,error,request,response,requestfailed,download",
        )
        .max_len(64),
        level: Option<LogsLevel> = Arg::one_of("level", "Minimum level", LogsLevel::VALUES),
        contains: Option<String> = Arg::string("contains", "Substring of text or url (any case)").max_len(512),
        since: Option<u64> = Arg::int("since", "Only seq > since", 0, MAX_SAFE_INT),
        limit: u64 = Arg::int("limit", "Max entries", 1, 500).default_int(IntDefault::Value(20)),
        timeout_ms: u64 = TIMEOUT,
    }
}

pub(super) fn check_logs(args: &LogsArgs, _session: &ToolSession) -> Result<(), ToolError> {
    if let Some(kind) = &args.kind {
        parse_kinds(kind)?;
    }
    Ok(())
}

/// Parses the `kind` comma list; unknown → INVALID_ARGUMENT with `detail.allowed`.
pub(super) fn parse_kinds(list: &str) -> Result<Vec<&'static str>, ToolError> {
    let mut kinds = Vec::new();
    for part in list.split(',').map(str::trim) {
        match KINDS.iter().find(|kind| **kind == part) {
            Some(kind) => {
                if !kinds.contains(kind) {
                    kinds.push(*kind);
                }
            }
            None => return Err(ToolError::new(
                ToolErrorCode::InvalidArgument,
                format!("logs: unknown kind \"{part}\""),
            )
            .with_hint(
                "use a comma list of console, error, request, response, requestfailed, download",
            )
            .with_detail(json!({ "argument": "kind", "allowed": KINDS }))),
        }
    }
    Ok(kinds)
}

/// The engine filter of the `kind`, `level` and `contains` arguments.
pub(super) fn filter_of(
    kind: Option<&str>,
    level: Option<LogsLevel>,
    contains: Option<&str>,
) -> Result<chromate::journal::LogFilter, ToolError> {
    let kinds = match kind {
        Some(list) => parse_kinds(list)?
            .into_iter()
            .filter_map(chromate::journal::LogKind::parse)
            .collect(),
        None => Vec::new(),
    };
    Ok(chromate::journal::LogFilter {
        kinds,
        level: level.map(LogsLevel::engine),
        contains: contains.map(str::to_owned),
    })
}

/// One journal entry (docs/mcp.md#logs).
pub(super) fn entry_json(entry: &chromate::journal::LogEntry, session: &ToolSession) -> Value {
    let mut res = json!({
        "seq": entry.seq,
        "kind": entry.kind().as_str(),
        "time": crate::time::iso_time(entry.time),
        "page": session.journal.page_id(&entry.page),
    });
    let fields = match &entry.data {
        chromate::journal::LogData::Console {
            level,
            method,
            text,
            origin,
        } => json!({ "level": level.as_str(), "method": method, "text": text, "origin": origin }),
        chromate::journal::LogData::Error {
            method,
            text,
            origin,
            ..
        } => json!({ "level": "error", "method": method, "text": text, "origin": origin }),
        chromate::journal::LogData::Request {
            url,
            method,
            resource_type,
        } => json!({ "url": url, "method": method, "resourceType": resource_type }),
        chromate::journal::LogData::Response {
            url,
            method,
            status,
            mime_type,
            mocked,
        } => {
            let mut fields =
                json!({ "url": url, "method": method, "status": status, "mimeType": mime_type });
            if *mocked {
                fields["mocked"] = json!(true);
            }
            fields
        }
        chromate::journal::LogData::RequestFailed {
            url,
            method,
            failure,
            blocked_by,
        } => json!({ "url": url, "method": method, "failure": failure, "blockedBy": blocked_by }),
        // `reason` stays out of the entry (docs/mcp.md#logs); the observation line says it (docs/mcp.md#downloads).
        chromate::journal::LogData::Download {
            url,
            name,
            state,
            bytes,
            path,
            reason: _,
        } => json!({
            "url": url,
            "name": name,
            "state": state.as_str(),
            "bytes": bytes,
            "path": path.as_ref().map(|path| path.display().to_string()),
        }),
    };
    if let (Some(res), Value::Object(fields)) = (res.as_object_mut(), fields) {
        // Optional fields (`origin`, `blockedBy`, `bytes`, `path`) are left out when absent.
        res.extend(fields.into_iter().filter(|(_, value)| !value.is_null()));
    }
    res
}

pub(super) async fn logs(
    ctx: &mut ToolContext<'_>,
    args: LogsArgs,
) -> Result<ToolOutput, ToolError> {
    // New tabs (popups) get their `p<N>` before their entries are shown.
    ctx.session.sync_tabs();
    let filter = filter_of(args.kind.as_deref(), args.level, args.contains.as_deref())?;
    let since = args.since.unwrap_or(0);
    let journal = ctx.session.journal.log.clone();
    let capturing = ctx.session.journal.capturing();
    match args.action {
        LogsAction::Clear => {
            let cleared = journal.clear();
            Ok(ToolOutput::new(
                json!({ "ok": true, "cleared": cleared, "capturing": capturing }),
            ))
        }
        LogsAction::Wait => {
            ctx.progress.set_phase("waiting for a matching log entry");
            let timeout = Duration::from_millis(args.timeout_ms);
            let waited = tokio::select! {
                () = ctx.cancel.cancelled() => return Err(cancelled_error("logs wait")),
                entry = journal.wait_for(&filter, since, timeout) => entry,
            };
            if let Some(entry) = waited {
                ctx.session.sync_tabs();
                return Ok(ToolOutput::new(json!({
                    "ok": true,
                    "entry": entry_json(&entry, ctx.session),
                    "cursor": journal.cursor(),
                })));
            }
            let mut detail = json!({
                "timeout": args.timeout_ms,
                "cursor": journal.cursor(),
                "since": since,
            });
            let level = args.level.map(|level| level.as_str().to_owned());
            for (key, value) in [
                ("kind", &args.kind),
                ("level", &level),
                ("contains", &args.contains),
            ] {
                if let Some(value) = value {
                    detail[key] = json!(value);
                }
            }
            Err(ToolError::new(
                ToolErrorCode::Timeout,
                format!("logs wait: nothing matched within {}ms", args.timeout_ms),
            )
            .with_hint("widen the filters, raise timeout_ms, or check browser_logs action=list")
            .with_detail(detail))
        }
        LogsAction::List => {
            let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
            let list = journal.list(&filter, since, limit);
            let entries: Vec<Value> = list
                .entries
                .iter()
                .map(|entry| entry_json(entry, ctx.session))
                .collect();
            Ok(ToolOutput::new(json!({
                "entries": entries,
                "cursor": list.cursor,
                "dropped": list.dropped,
                "truncated": list.truncated,
                "capturing": capturing,
            })))
        }
    }
}
