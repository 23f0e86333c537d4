//! browser_mock (§11.1): add, block, list, remove and clear over the session's mock table
//! (`dispatch/mocks.rs`, which owns the table, glob matching and installing it).

use serde::Deserialize;
use serde_json::{json, Value};

use super::schema::{Arg, Cli, Hints, IntDefault, Slot, ToolDecl};
use super::ToolContext;
use crate::dispatch::error::{ErrorCode, ToolError, ToolOutput};
use crate::dispatch::mocks::{default_content_type, MockKind, MockRule};
use crate::dispatch::session::Session;

pub(crate) const MOCK: ToolDecl = ToolDecl {
    name: "browser_mock",
    title: "Network mocks",
    verb: "mock",
    description:
        "Answer (add) or fail (block) requests whose URL matches a glob; list, remove, clear.",
    hints: Hints::A,
    observes: false,
    cli: Cli::new(
        "mock",
        &[
            Slot::arg("action"),
            Slot::arg("id").when("action", "remove"),
            Slot::arg("pattern"),
        ],
    ),
    args: &[
        Arg::one_of(
            "action",
            "What to do",
            &["add", "block", "list", "remove", "clear"],
        )
        .default_str("list"),
        Arg::string("pattern", "URL glob, * = anything; no ? = ignore query")
            .min_len(1)
            .max_len(500),
        Arg::int("status", "HTTP status (add)", 200, 599).default_int(IntDefault::Value(200)),
        Arg::string("body", "Response body (add)").max_len(65536),
        Arg::string("content_type", "Content-Type (add; default by body)").max_len(128),
        Arg::string("id", "Mock id m<N> (remove)")
            .min_len(1)
            .max_len(128),
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MockArgs {
    pub(crate) action: String,
    pub(crate) pattern: Option<String>,
    pub(crate) status: u16,
    pub(crate) body: Option<String>,
    pub(crate) content_type: Option<String>,
    pub(crate) id: Option<String>,
}

pub(crate) fn check_mock(args: &MockArgs, _session: &Session) -> Result<(), ToolError> {
    let needs = |argument: &str, hint: &str| {
        Err(ToolError::invalid_argument(
            format!("mock: action \"{}\" needs \"{argument}\"", args.action),
            argument,
            hint,
        ))
    };
    match args.action.as_str() {
        "add" | "block" if args.pattern.is_none() => needs(
            "pattern",
            "pass pattern= a URL glob such as https://api.example.com/*",
        ),
        "remove" if args.id.is_none() => {
            needs("id", "pass id= an id from browser_mock action=list")
        }
        _ => Ok(()),
    }
}

pub(crate) async fn mock(
    ctx: &mut ToolContext<'_>,
    args: MockArgs,
) -> Result<ToolOutput, ToolError> {
    let changes = matches!(args.action.as_str(), "add" | "block" | "remove" | "clear");
    let table = &mut ctx.session.mocks;
    let result = match (args.action.as_str(), &args.pattern, &args.id) {
        ("add", Some(pattern), _) => {
            let body = args.body.clone().unwrap_or_default();
            let content_type = args
                .content_type
                .clone()
                .unwrap_or_else(|| default_content_type(&body).to_owned());
            let kind = MockKind::Respond {
                status: args.status,
                body,
                content_type,
            };
            let rule = table.add(pattern, kind)?;
            json!({ "ok": true, "action": "add", "id": rule.id, "pattern": rule.pattern, "status": args.status })
        }
        ("block", Some(pattern), _) => {
            let rule = table.add(pattern, MockKind::Block)?;
            json!({ "ok": true, "action": "block", "id": rule.id, "pattern": rule.pattern })
        }
        ("remove", _, Some(id)) => {
            if !table.remove(id) {
                let open: Vec<&str> = table.rules().iter().map(|rule| rule.id.as_str()).collect();
                return Err(ToolError::new(
                    ErrorCode::InvalidArgument,
                    format!("mock remove: no active mock with id \"{id}\""),
                )
                .with_hint("use an id from browser_mock action=list")
                .with_detail(json!({ "argument": "id", "open": open })));
            }
            json!({ "ok": true, "action": "remove", "id": id, "remaining": table.rules().len() })
        }
        ("clear", _, _) => json!({ "ok": true, "action": "clear", "cleared": table.clear() }),
        _ => {
            let mocks: Vec<Value> = table.rules().iter().map(MockRule::to_json).collect();
            json!({ "mocks": mocks, "count": mocks.len() })
        }
    };
    // A running browser gets the new table at once; otherwise it is installed
    // at launch (browser_mock never launches one, §1.5).
    if changes && ctx.session.browser_running() {
        let rules = ctx.session.mocks.engine_rules();
        let installed = match &ctx.session.live {
            Some(live) => live.set_intercept_rules(rules).await,
            None => Ok(()),
        };
        if let Err(err) = installed {
            return Err(ctx.session.engine_error("mock", &err));
        }
    }
    Ok(ToolOutput::new(result))
}
