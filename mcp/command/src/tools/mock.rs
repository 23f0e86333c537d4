//! browser_mock (docs/mcp.md#mocks): add, block, list, remove and clear over the session's mock table
//! (`mocks.rs`, which owns the table, glob matching and installing it).

use serde_json::{json, Value};

use super::schema::{
    arg_enum, tool_args, Arg, Capability, Cli, Hints, IntDefault, Runs, Slot, ToolDecl,
};
use super::ToolContext;
use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::mocks::{default_content_type, MockKind, MockRule};
use crate::session::ToolSession;

pub(super) const MOCK: ToolDecl = ToolDecl {
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
    args: MockArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

arg_enum! {
    /// browser_mock `action`.
    pub enum MockAction {
        Add = "add",
        Block = "block",
        List = "list",
        Remove = "remove",
        Clear = "clear",
    }
}

tool_args! {
    /// The arguments of browser_mock, in schema order.
    pub struct MockArgs {
        action: MockAction = Arg::one_of("action", "What to do", MockAction::VALUES).default_str("list"),
        pattern: Option<String> = Arg::string("pattern", "URL glob, * = anything; no ? = ignore query")
            .min_len(1)
            .max_len(500),
        status: u16 = Arg::int("status", "HTTP status (add)", 200, 599).default_int(IntDefault::Value(200)),
        body: Option<String> = Arg::string("body", "Response body (add)").max_len(65536),
        content_type: Option<String> = Arg::string("content_type", "Content-Type (add; default by body)").max_len(128),
        id: Option<String> = Arg::string("id", "Mock id m<N> (remove)")
            .min_len(1)
            .max_len(128),
    }
}

pub(super) fn check_mock(args: &MockArgs, _session: &ToolSession) -> Result<(), ToolError> {
    let needs = |argument: &str, hint: &str| {
        Err(ToolError::invalid_argument(
            format!(
                "mock: action \"{}\" needs \"{argument}\"",
                args.action.as_str()
            ),
            argument,
            hint,
        ))
    };
    match args.action {
        MockAction::Add | MockAction::Block if args.pattern.is_none() => needs(
            "pattern",
            "pass pattern= a URL glob such as https://api.example.com/*",
        ),
        MockAction::Remove if args.id.is_none() => {
            needs("id", "pass id= an id from browser_mock action=list")
        }
        _ => Ok(()),
    }
}

pub(super) async fn mock(
    ctx: &mut ToolContext<'_>,
    args: MockArgs,
) -> Result<ToolOutput, ToolError> {
    let changes = matches!(
        args.action,
        MockAction::Add | MockAction::Block | MockAction::Remove | MockAction::Clear
    );
    let table = &mut ctx.session.mocks;
    let result = match (args.action, &args.pattern, &args.id) {
        (MockAction::Add, Some(pattern), _) => {
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
        (MockAction::Block, Some(pattern), _) => {
            let rule = table.add(pattern, MockKind::Block)?;
            json!({ "ok": true, "action": "block", "id": rule.id, "pattern": rule.pattern })
        }
        (MockAction::Remove, _, Some(id)) => {
            if !table.remove(id) {
                let open: Vec<&str> = table.rules().iter().map(|rule| rule.id.as_str()).collect();
                return Err(ToolError::new(
                    ToolErrorCode::InvalidArgument,
                    format!("mock remove: no active mock with id \"{id}\""),
                )
                .with_hint("use an id from browser_mock action=list")
                .with_detail(json!({ "argument": "id", "open": open })));
            }
            json!({ "ok": true, "action": "remove", "id": id, "remaining": table.rules().len() })
        }
        (MockAction::Clear, _, _) => {
            json!({ "ok": true, "action": "clear", "cleared": table.clear() })
        }
        _ => {
            let mocks: Vec<Value> = table.rules().iter().map(MockRule::to_json).collect();
            json!({ "mocks": mocks, "count": mocks.len() })
        }
    };
    // A running browser gets the new table at once; otherwise it is installed
    // at launch (browser_mock never launches one, docs/mcp.md#run).
    if changes && ctx.session.browser_running() {
        let rules = ctx.session.mocks.engine_rules();
        let installed = match &ctx.session.browser.live {
            // Bounded by the agent timeout (browser_mock has no timeout_ms): a browser that
            // does not answer fails the call in time, not at the 30 s command timeout.
            Some(live) => {
                chromate::wait::bounded(
                    ctx.session.agent_timeout(),
                    live.set_intercept_rules(rules),
                )
                .await
            }
            None => Ok(()),
        };
        if let Err(err) = installed {
            return Err(ctx.session.engine_error("mock", &err));
        }
    }
    Ok(ToolOutput::new(result))
}
