//! The read-only page tools (docs/tools.md): find, exists, wait, read, expect —
//! declarations, arguments and the cross-argument rules between `state`,
//! `field`, `what`, `selector`, `expected` and `contains`.
//!
//! Handlers are thin over the engine's reads and waits. `expect no-errors`
//! reads the session's log journal after an ordering round trip; before any
//! browser has captured it fails STATE_INVALID (docs/error-codes.md: no capture for
//! no-errors).

use std::time::Duration;

use serde_json::{json, Value};

use super::schema::{
    arg_enum, tool_args, Arg, Capability, Cli, Hints, IntDefault, Runs, Slot, ToolDecl,
    MAX_SAFE_INT,
};
use super::{
    cancelled_error, echo_of, engine, locate, no_wait, ToolContext, SELECTOR, SELECTOR_OPT, TIMEOUT,
};
use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::session::ToolSession;

pub(super) const FIND: ToolDecl = ToolDecl {
    name: "browser_find",
    title: "Find elements",
    verb: "find",
    description: "List elements matching a selector, without waiting.",
    hints: Hints::R,
    observes: false,
    cli: Cli::new("find", &[Slot::arg("selector")]),
    args: FindArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const EXISTS: ToolDecl = ToolDecl {
    name: "browser_exists",
    title: "Probe selector",
    verb: "exists",
    description: "Check once whether a selector matches; zero matches is not an error.",
    hints: Hints::R,
    observes: false,
    cli: Cli::new("exists", &[Slot::arg("selector")]),
    args: ExistsArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: Some(exists_found_nothing),
};

/// `exists` that found nothing: a success over MCP, a failed assertion to a script.
fn exists_found_nothing(result: &Value) -> bool {
    result.get("exists") == Some(&Value::Bool(false))
}

arg_enum! {
    /// browser_wait `state`: four element states, then three load states.
    pub enum WaitState {
        Visible = "visible",
        Hidden = "hidden",
        Attached = "attached",
        Detached = "detached",
        Load = "load",
        DomContentLoaded = "domcontentloaded",
        NetworkIdle = "networkidle",
    }
}

impl WaitState {
    /// The element state it names, or `None` for a load state.
    fn element_state(self) -> Option<chromate::actions::ElementState> {
        match self {
            WaitState::Visible => Some(chromate::actions::ElementState::Visible),
            WaitState::Hidden => Some(chromate::actions::ElementState::Hidden),
            WaitState::Attached => Some(chromate::actions::ElementState::Attached),
            WaitState::Detached => Some(chromate::actions::ElementState::Detached),
            WaitState::Load | WaitState::DomContentLoaded | WaitState::NetworkIdle => None,
        }
    }

    /// The load state it names, or `None` for an element state.
    fn load_state(self) -> Option<chromate::WaitUntil> {
        match self {
            WaitState::Load => Some(chromate::WaitUntil::Load),
            WaitState::DomContentLoaded => Some(chromate::WaitUntil::DomContentLoaded),
            WaitState::NetworkIdle => Some(chromate::WaitUntil::NetworkIdle),
            WaitState::Visible | WaitState::Hidden | WaitState::Attached | WaitState::Detached => {
                None
            }
        }
    }
}

arg_enum! {
    /// browser_read `field`.
    pub enum ReadField {
        Text = "text",
        Attr = "attr",
        Value = "value",
        Is = "is",
    }
}

arg_enum! {
    /// browser_read `what` (field=is).
    pub enum ReadIs {
        Visible = "visible",
        Enabled = "enabled",
        Checked = "checked",
    }
}

arg_enum! {
    /// browser_expect `what`.
    pub enum ExpectWhat {
        Visible = "visible",
        Text = "text",
        Url = "url",
        NoErrors = "no-errors",
    }
}

pub(super) const WAIT: ToolDecl = ToolDecl {
    name: "browser_wait",
    title: "Wait for condition",
    verb: "wait",
    description: "Wait for an element state (with selector) or a page load state (without).",
    hints: Hints::R,
    observes: false,
    cli: Cli::new("wait", &[Slot::arg("selector")]),
    args: WaitArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const READ: ToolDecl = ToolDecl {
    name: "browser_read",
    title: "Read element",
    verb: "read",
    description: "Read an element's text, attribute, form value or state without waiting.",
    hints: Hints::R,
    observes: false,
    cli: Cli::new("read", &[Slot::arg("selector")]),
    args: ReadArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

pub(super) const EXPECT: ToolDecl = ToolDecl {
    name: "browser_expect",
    title: "Assert page state",
    verb: "expect",
    description: "Assert visibility, text, URL or no new errors, retrying until timeout.",
    hints: Hints::R,
    observes: false,
    cli: Cli::new("expect", &[Slot::arg("what"), Slot::arg("selector")]),
    args: ExpectArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

tool_args! {
    /// The arguments of browser_find, in schema order.
    pub struct FindArgs {
        selector: String = SELECTOR,
        #[serde(default)]
        all: bool = Arg::boolean("all", "List all matches (paged)"),
        limit: u64 = Arg::int("limit", "Page size (all=true)", 1, 500).default_int(IntDefault::Value(20)),
        #[serde(default)]
        offset: u64 = Arg::int("offset", "Matches to skip (all=true)", 0, 100_000),
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_exists, in schema order.
    pub struct ExistsArgs {
        selector: String = SELECTOR,
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_wait, in schema order.
    pub struct WaitArgs {
        selector: Option<String> = SELECTOR_OPT,
        state: Option<WaitState> = Arg::one_of(
            "state",
            "Element state (=visible) or load state (=load)",
            WaitState::VALUES,
        ),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

impl WaitArgs {
    /// The state to wait for: `visible` with a selector, `load` without.
    pub fn effective_state(&self) -> WaitState {
        match (self.state, &self.selector) {
            (Some(state), _) => state,
            (None, Some(_)) => WaitState::Visible,
            (None, None) => WaitState::Load,
        }
    }
}

tool_args! {
    /// The arguments of browser_read, in schema order.
    pub struct ReadArgs {
        field: ReadField = Arg::one_of("field", "What to read", ReadField::VALUES).default_str("text"),
        selector: Option<String> = Arg::string("selector", "Element (optional for text)").min_len(1),
        name: Option<String> = Arg::string("name", "Attribute name (field=attr)")
            .min_len(1)
            .max_len(256),
        what: Option<ReadIs> = Arg::one_of("what", "State to test (field=is)", ReadIs::VALUES),
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_expect, in schema order.
    pub struct ExpectArgs {
        what: ExpectWhat = Arg::one_of("what", "What to assert", ExpectWhat::VALUES).required(),
        selector: Option<String> = SELECTOR_OPT,
        expected: Option<String> = Arg::string("expected", "Exact value (text, url)"),
        contains: Option<String> = Arg::string("contains", "Substring (text, url)"),
        since: Option<u64> = Arg::int("since", "no-errors: count log seq > since", 0, MAX_SAFE_INT),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

pub(super) fn check_wait(args: &WaitArgs, _session: &ToolSession) -> Result<(), ToolError> {
    let Some(state) = args.state else {
        return Ok(());
    };
    let element_state = state.element_state().is_some();
    let state = state.as_str();
    if element_state && args.selector.is_none() {
        return Err(ToolError::invalid_argument(
            format!("wait: state \"{state}\" needs a selector"),
            "selector",
            "pass selector, or use a load state (load, domcontentloaded, networkidle)",
        ));
    }
    if !element_state && args.selector.is_some() {
        return Err(ToolError::invalid_argument(
            format!("wait: state \"{state}\" is a load state and takes no selector"),
            "selector",
            "drop selector, or use an element state (visible, hidden, attached, detached)",
        ));
    }
    Ok(())
}

pub(super) fn check_read(args: &ReadArgs, _session: &ToolSession) -> Result<(), ToolError> {
    let missing = |argument: &str, hint: &str| {
        Err(ToolError::invalid_argument(
            format!(
                "read: field \"{}\" needs \"{argument}\"",
                args.field.as_str()
            ),
            argument,
            hint,
        ))
    };
    if args.field != ReadField::Text && args.selector.is_none() {
        return missing("selector", "pass the element to read");
    }
    if args.field == ReadField::Attr && args.name.is_none() {
        return missing("name", "pass name= the attribute to read, e.g. href");
    }
    if args.field == ReadField::Is && args.what.is_none() {
        return missing("what", "pass what=visible, enabled or checked");
    }
    Ok(())
}

pub(super) fn check_expect(args: &ExpectArgs, _session: &ToolSession) -> Result<(), ToolError> {
    let what = args.what.as_str();
    if matches!(args.what, ExpectWhat::Visible | ExpectWhat::Text) && args.selector.is_none() {
        return Err(ToolError::invalid_argument(
            format!("expect: \"{what}\" needs a selector"),
            "selector",
            "pass the element to check",
        ));
    }
    if matches!(args.what, ExpectWhat::Text | ExpectWhat::Url)
        && args.expected.is_some() == args.contains.is_some()
    {
        return Err(ToolError::invalid_argument(
            format!("expect: \"{what}\" needs exactly one of \"expected\" and \"contains\""),
            "expected",
            "pass expected= for an exact match or contains= for a substring",
        ));
    }
    Ok(())
}

pub(super) async fn find(
    ctx: &mut ToolContext<'_>,
    args: FindArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = FIND.verb;
    let (page, locator) = locate(ctx, verb, &args.selector, no_wait(ctx)).await?;
    let options = chromate::actions::FindOptions {
        all: args.all,
        limit: usize::try_from(args.limit).unwrap_or(500),
        offset: usize::try_from(args.offset).unwrap_or(0),
    };
    let found = engine(ctx, verb, &page, locator.find(options)).await?;
    let matches: Vec<serde_json::Value> = found
        .matches
        .iter()
        .map(|m| json!({ "index": m.index, "tag": m.tag, "text": m.text, "visible": m.visible }))
        .collect();
    let result = if args.all {
        json!({
            "count": found.count,
            "offset": found.offset,
            "limit": found.limit,
            "matches": matches,
            "truncated": found.truncated,
            "next_offset": found.next_offset,
        })
    } else {
        json!({
            "count": found.count,
            "truncated": found.count > 1,
            "matches": matches.into_iter().take(1).collect::<Vec<_>>(),
        })
    };
    Ok(ToolOutput::new(result))
}

pub(super) async fn exists(
    ctx: &mut ToolContext<'_>,
    args: ExistsArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = EXISTS.verb;
    let (page, locator) = locate(ctx, verb, &args.selector, no_wait(ctx)).await?;
    let (exists, count) = engine(ctx, verb, &page, locator.exists()).await?;
    Ok(ToolOutput::new(json!({ "exists": exists, "count": count })))
}

pub(super) async fn wait(
    ctx: &mut ToolContext<'_>,
    args: WaitArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = WAIT.verb;
    let state = args.effective_state();
    match &args.selector {
        Some(selector) => {
            let (page, locator) = locate(ctx, verb, selector, args.timeout_ms).await?;
            // `check_wait` refused a load state with a selector.
            let element_state = state
                .element_state()
                .unwrap_or(chromate::actions::ElementState::Visible);
            engine(ctx, verb, &page, locator.wait_for(element_state)).await?;
            Ok(ToolOutput::new(
                json!({ "ok": true, "state": state, "selector": echo_of(locator.selector()) }),
            ))
        }
        None => {
            let page = ctx.session.active_page(verb).await?;
            // `check_wait` refused an element state without a selector.
            let load_state = state.load_state().unwrap_or(chromate::WaitUntil::Load);
            let timeout = Duration::from_millis(args.timeout_ms);
            engine(
                ctx,
                verb,
                &page,
                page.wait_for_load_state(load_state, timeout),
            )
            .await?;
            Ok(ToolOutput::new(json!({ "ok": true, "state": state })))
        }
    }
}

pub(super) async fn read(
    ctx: &mut ToolContext<'_>,
    args: ReadArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = READ.verb;
    let selector = args.selector.as_deref().unwrap_or("css=body");
    let (page, locator) = locate(ctx, verb, selector, no_wait(ctx)).await?;
    let result = match args.field {
        ReadField::Attr => {
            let name = args.name.as_deref().unwrap_or("");
            let read = engine(ctx, verb, &page, locator.attribute(name)).await?;
            json!({ "name": name, "value": read.text, "truncated": read.truncated, "totalBytes": read.total_bytes })
        }
        ReadField::Value => {
            let read = engine(ctx, verb, &page, locator.value()).await?;
            json!({ "value": read.text, "truncated": read.truncated, "totalBytes": read.total_bytes })
        }
        ReadField::Is => {
            // `check_read` refused field=is without `what`.
            let what = args.what.unwrap_or(ReadIs::Visible);
            let answer = match what {
                ReadIs::Enabled => engine(ctx, verb, &page, locator.is_enabled()).await?,
                ReadIs::Checked => engine(ctx, verb, &page, locator.is_checked()).await?,
                ReadIs::Visible => engine(ctx, verb, &page, locator.is_visible()).await?,
            };
            json!({ "what": what, "result": answer })
        }
        ReadField::Text => {
            let read = engine(ctx, verb, &page, locator.text()).await?;
            json!({ "text": read.text.unwrap_or_default(), "truncated": read.truncated, "totalBytes": read.total_bytes })
        }
    };
    Ok(ToolOutput::new(result))
}

pub(super) async fn expect(
    ctx: &mut ToolContext<'_>,
    args: ExpectArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = EXPECT.verb;
    let mode = if args.expected.is_some() {
        "exact"
    } else {
        "contains"
    };
    let wanted = args.expected.clone().or_else(|| args.contains.clone());
    let with_matcher = |error: ToolError| {
        let mut error = error
            .with_detail_key("matcher", json!(args.what))
            .with_detail_key("timeout", json!(args.timeout_ms));
        if let Some(selector) = &args.selector {
            error = error.with_detail_key("selector", json!(selector));
        }
        if matches!(args.what, ExpectWhat::Text | ExpectWhat::Url) {
            error = error.with_detail_key("mode", json!(mode));
        }
        error
    };
    match args.what {
        ExpectWhat::Visible | ExpectWhat::Text => {
            let selector = args.selector.as_deref().unwrap_or("");
            let (page, locator) = locate(ctx, verb, selector, args.timeout_ms).await?;
            let outcome = if args.what == ExpectWhat::Visible {
                engine(ctx, verb, &page, locator.expect_visible()).await
            } else {
                let want = match &args.expected {
                    Some(exact) => chromate::actions::TextMatch::Exact(exact.clone()),
                    None => chromate::actions::TextMatch::Contains(
                        args.contains.clone().unwrap_or_default(),
                    ),
                };
                engine(ctx, verb, &page, locator.expect_text(&want)).await
            };
            if let Err(error) = outcome {
                // `actual` is null when nothing matched a text check (docs/tools.md#browser_expect--assert-page-state): the engine says
                // so with `None`.
                if error.code == ToolErrorCode::ExpectMismatch {
                    return Err(with_matcher(error));
                }
                return Err(error);
            }
            let mut result = json!({ "ok": true, "matcher": args.what, "selector": echo_of(locator.selector()) });
            if args.what == ExpectWhat::Text {
                result["mode"] = json!(mode);
                result["expected"] = json!(wanted);
            }
            Ok(ToolOutput::new(result))
        }
        ExpectWhat::Url => {
            let page = ctx.session.active_page(verb).await?;
            let wanted = wanted.unwrap_or_default();
            let want = if mode == "exact" {
                chromate::actions::TextMatch::Exact(wanted.clone())
            } else {
                chromate::actions::TextMatch::Contains(wanted.clone())
            };
            let timeout = Duration::from_millis(args.timeout_ms);
            let outcome = ctx
                .cancel
                .run(page.expect_url(&want, timeout))
                .await
                .ok_or_else(|| cancelled_error(verb))?;
            match outcome {
                Ok(()) => Ok(ToolOutput::new(
                    json!({ "ok": true, "matcher": "url", "mode": mode, "expected": wanted }),
                )),
                Err(url) => {
                    let relation = if mode == "exact" {
                        "to be"
                    } else {
                        "to contain"
                    };
                    Err(with_matcher(
                        ToolError::new(
                            ToolErrorCode::ExpectMismatch,
                            format!("expect: expected the url {relation} {wanted:?}, but got {url:?} after {}ms", args.timeout_ms),
                        )
                        .with_hint("check where the page went with browser_snapshot")
                        .with_detail(json!({ "expected": wanted, "actual": url })),
                    ))
                }
            }
        }
        ExpectWhat::NoErrors => expect_no_errors(ctx, args.since.unwrap_or(0)).await,
    }
}

/// `expect what=no-errors` (docs/tools.md#browser_expect--assert-page-state): after an ordering round trip, error
/// entries (docs/mcp.md#logs) with `seq > since`; evicted ones count too.
async fn expect_no_errors(ctx: &mut ToolContext<'_>, since: u64) -> Result<ToolOutput, ToolError> {
    if !ctx.session.journal.capturing() {
        return Err(ToolError::new(
            ToolErrorCode::StateInvalid,
            "expect: no-errors has no log capture yet: no browser has run in this session",
        )
        .with_hint("load a page first (browser_navigate), then assert no-errors")
        .with_detail(json!({ "reason": "no-capture", "matcher": "no-errors" })));
    }
    if let Some(page) = ctx.session.current_page() {
        page.sync_events(Duration::from_secs(1)).await;
    }
    let journal = ctx.session.journal.log.clone();
    // The first three in journal order (docs/tools.md#browser_expect--assert-page-state): `list` keeps the newest, so ask for them all.
    let list = journal.list(&chromate::journal::LogFilter::errors(), since, usize::MAX);
    let (count, dropped) = journal.errors_since(since);
    let cursor = list.cursor;
    if count + dropped == 0 {
        return Ok(ToolOutput::new(json!({
            "ok": true,
            "matcher": "no-errors",
            "errors": 0,
            "logCursor": cursor,
        })));
    }
    let first: Vec<&str> = list
        .entries
        .iter()
        .filter_map(|e| e.text())
        .take(3)
        .collect();
    let quoted: Vec<String> = first.iter().map(|text| format!("{text:?}")).collect();
    let mut message = format!(
        "expect: expected no errors since seq {since}, but got {} ({})",
        count + dropped,
        quoted.join(", ")
    );
    if dropped > 0 {
        message.push_str(&format!("; {dropped} evicted"));
    }
    let mut detail = json!({
        "matcher": "no-errors",
        "expected": 0,
        "actual": { "count": count + dropped, "first": first },
        "since": since,
        "logCursor": cursor,
    });
    if dropped > 0 {
        detail["logsDropped"] = json!(dropped);
    }
    Err(ToolError::new(ToolErrorCode::ExpectMismatch, message)
        .with_hint(format!("browser_logs kind=error since={since}"))
        .with_detail(detail))
}
