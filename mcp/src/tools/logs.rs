//! browser_logs (§4.3, §10): declaration, arguments, the `kind` filter rule,
//! and the journal before capture (`capturing:false`).
//!
//! Owns: filter parsing and the list/clear/wait results over the MCP-side
//! journal. Does not capture anything: console and network capture is the
//! engine's, so in this build the journal stays empty and `wait` waits out
//! its timeout (cancellable) and fails TIMEOUT.

use serde::Deserialize;
use serde_json::json;

use super::schema::{Arg, Hints, IntDefault, ToolDecl, MAX_SAFE_INT};
use super::{cancelled_error, ToolContext, TIMEOUT};
use crate::error::{ErrorCode, ToolError, ToolOutput};
use crate::session::Session;

/// The journal's entry kinds (§10).
pub(crate) const KINDS: [&str; 5] = ["console", "error", "request", "response", "requestfailed"];

pub(crate) const LOGS: ToolDecl = ToolDecl {
    name: "browser_logs",
    title: "Console and network",
    verb: "logs",
    description: "List, wait for or clear captured console, error and network entries.",
    hints: Hints::L,
    observes: false,
    args: &[
        Arg::one_of("action", "What to do", &["list", "wait", "clear"]).default_str("list"),
        Arg::string(
            "kind",
            "Comma list: console,error,request,response,requestfailed",
        )
        .max_len(64),
        Arg::one_of(
            "level",
            "Minimum level",
            &["debug", "info", "warn", "error"],
        ),
        Arg::string("contains", "Substring of text or url (any case)").max_len(512),
        Arg::int("since", "Only seq > since", 0, MAX_SAFE_INT),
        Arg::int("limit", "Max entries", 1, 500).default_int(IntDefault::Value(20)),
        TIMEOUT,
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogsArgs {
    pub(crate) action: String,
    pub(crate) kind: Option<String>,
    pub(crate) level: Option<String>,
    pub(crate) contains: Option<String>,
    pub(crate) since: Option<u64>,
    #[allow(dead_code)] // Read once entries exist (engine capture).
    pub(crate) limit: u64,
    pub(crate) timeout_ms: u64,
}

pub(crate) fn check_logs(args: &LogsArgs, _session: &Session) -> Result<(), ToolError> {
    if let Some(kind) = &args.kind {
        parse_kinds(kind)?;
    }
    Ok(())
}

/// Parses the `kind` comma list; unknown → INVALID_ARGUMENT with `detail.allowed`.
pub(crate) fn parse_kinds(list: &str) -> Result<Vec<&'static str>, ToolError> {
    let mut kinds = Vec::new();
    for part in list.split(',').map(str::trim) {
        match KINDS.iter().find(|kind| **kind == part) {
            Some(kind) => {
                if !kinds.contains(kind) {
                    kinds.push(*kind);
                }
            }
            None => {
                return Err(ToolError::new(
                    ErrorCode::InvalidArgument,
                    format!("logs: unknown kind \"{part}\""),
                )
                .with_hint("use a comma list of console, error, request, response, requestfailed")
                .with_detail(json!({ "argument": "kind", "allowed": KINDS })))
            }
        }
    }
    Ok(kinds)
}

pub(crate) async fn logs(
    ctx: &mut ToolContext<'_>,
    args: LogsArgs,
) -> Result<ToolOutput, ToolError> {
    let journal = &ctx.session.journal;
    match args.action.as_str() {
        "clear" => Ok(ToolOutput::new(
            json!({ "ok": true, "cleared": 0, "capturing": journal.capturing }),
        )),
        "wait" => {
            let cursor = journal.cursor;
            ctx.progress.set_phase("waiting for a matching log entry");
            let timeout = std::time::Duration::from_millis(args.timeout_ms);
            tokio::select! {
                () = ctx.cancel.cancelled() => Err(cancelled_error("logs wait")),
                () = tokio::time::sleep(timeout) => {
                    let mut filters = serde_json::Map::new();
                    for (key, value) in [
                        ("kind", args.kind.as_ref().map(|v| json!(v))),
                        ("level", args.level.as_ref().map(|v| json!(v))),
                        ("contains", args.contains.as_ref().map(|v| json!(v))),
                        ("since", Some(json!(args.since.unwrap_or(0)))),
                    ] {
                        if let Some(value) = value {
                            filters.insert(key.to_owned(), value);
                        }
                    }
                    let mut detail = json!({ "timeout": args.timeout_ms, "cursor": cursor });
                    if let Some(map) = detail.as_object_mut() {
                        map.extend(filters);
                    }
                    Err(ToolError::new(
                        ErrorCode::Timeout,
                        format!("logs wait: nothing matched within {}ms", args.timeout_ms),
                    )
                    .with_hint("widen the filters, raise timeout_ms, or check browser_logs action=list")
                    .with_detail(detail))
                }
            }
        }
        _ => Ok(ToolOutput::new(json!({
            "entries": [],
            "cursor": journal.cursor,
            "dropped": 0,
            "truncated": false,
            "capturing": journal.capturing,
        }))),
    }
}
