//! The page-model tools (docs/tools.md): browser_snapshot, browser_locators,
//! browser_a11y — declarations, arguments and the a11y rule-list rules.
//!
//! Owns the snapshot result (`{url, title, documentId, revision, lines}`) and
//! the baseline rule (a full snapshot replaces it, a scoped one does not).
//! browser_a11y runs the engine's axe-core audit, then snapshots (the new
//! baseline) and cuts the report to the bounds of docs/tools.md#browser_a11y--accessibility-audit.

use serde_json::{json, Value};

use super::schema::{
    arg_enum, tool_args, Arg, Capability, Cli, Hints, IntDefault, Pattern, Runs, Slot, ToolDecl,
};
use super::{ToolContext, SELECTOR, SELECTOR_OPT};
use crate::error::{ToolError, ToolOutput};
use crate::session::ToolSession;

pub(super) const SNAPSHOT: ToolDecl = ToolDecl {
    name: "browser_snapshot",
    title: "Page snapshot",
    verb: "snapshot",
    description: "Render the active tab as lines with refs (e7); becomes the baseline.",
    hints: Hints::R,
    observes: false,
    cli: Cli::new("snapshot", &[]),
    args: SnapshotArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: Some("snapshot.txt"),
    negative: None,
};

/// A ref as snapshots print it: `e7`.
pub(super) static ELEMENT_REF: Pattern = Pattern {
    source: "^e[1-9][0-9]{0,15}$",
    matches: |text| {
        text.starts_with('e')
            && text.len() <= 17
            && chromate::snapshot::ElementRef::parse(text).is_some()
    },
};

pub(super) const LOCATORS: ToolDecl = ToolDecl {
    name: "browser_locators",
    title: "Durable selectors",
    verb: "locators",
    description: "Propose durable selectors for an element, graded by uniqueness.",
    hints: Hints::R,
    observes: false,
    cli: Cli::new("locators", &[Slot::arg("selector")]),
    args: LocatorsArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

/// Most rule ids in `rules`/`disable_rules`.
const MAX_RULE_IDS: usize = 50;

pub(super) const A11Y: ToolDecl = ToolDecl {
    name: "browser_a11y",
    title: "Accessibility audit",
    verb: "a11y",
    description: "Run an axe-core accessibility audit of the page or a subtree.",
    hints: Hints::R,
    observes: false,
    cli: Cli::new("a11y", &[]),
    args: A11yArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: Some(a11y_did_not_pass),
};

/// `a11y` whose check did not pass: a success over MCP, a failed assertion to a script.
fn a11y_did_not_pass(result: &Value) -> bool {
    result.get("passed") == Some(&Value::Bool(false))
}

tool_args! {
    /// The arguments of browser_snapshot, in schema order.
    pub struct SnapshotArgs {
        selector: Option<String> = Arg::string("selector", "Only this subtree (keeps the baseline)").min_len(1),
        max_lines: u64 = Arg::int("max_lines", "Line budget (this call)", 1, 5000)
            .default_int(IntDefault::Value(80)),
        after: Option<String> = Arg::string(
            "after",
            "Next page: lines after this ref (keeps the baseline)",
        )
        .pattern(&ELEMENT_REF),
        tab: Option<String> = super::TAB,
    }
}

tool_args! {
    /// The arguments of browser_locators, in schema order.
    pub struct LocatorsArgs {
        selector: String = SELECTOR,
        limit: u64 = Arg::int("limit", "Unique selectors wanted", 1, 20).default_int(IntDefault::Value(5)),
        tab: Option<String> = super::TAB,
    }
}

arg_enum! {
    /// browser_a11y `min_impact`.
    pub enum MinImpact {
        Minor = "minor",
        Moderate = "moderate",
        Serious = "serious",
        Critical = "critical",
    }
}

tool_args! {
    /// The arguments of browser_a11y, in schema order.
    pub struct A11yArgs {
        selector: Option<String> = SELECTOR_OPT,
        min_impact: MinImpact = Arg::one_of("min_impact", "Lowest impact reported", MinImpact::VALUES).default_str("minor"),
        #[serde(default)]
        check: bool = Arg::boolean("check", "Add passed:true|false"),
        rules: Option<String> = Arg::string("rules", "Axe rule ids to run (comma list)").max_len(1024),
        disable_rules: Option<String> = Arg::string("disable_rules", "Axe rule ids to skip (comma list)").max_len(1024),
        limit: u64 = Arg::int("limit", "Most violations", 1, 100).default_int(IntDefault::Value(20)),
        nodes: u64 = Arg::int("nodes", "Most nodes per violation", 1, 10).default_int(IntDefault::Value(3)),
        tab: Option<String> = super::TAB,
    }
}

pub(super) fn check_a11y(args: &A11yArgs, _session: &ToolSession) -> Result<(), ToolError> {
    if args.rules.is_some() && args.disable_rules.is_some() {
        return Err(ToolError::invalid_argument(
            "a11y: pass either rules or disable_rules, not both",
            "disable_rules",
            "keep one of the two lists",
        ));
    }
    for (argument, list) in [
        ("rules", &args.rules),
        ("disable_rules", &args.disable_rules),
    ] {
        let Some(list) = list else { continue };
        let ids = rule_ids(list);
        if ids.is_empty() || ids.iter().any(|id| id.is_empty()) {
            return Err(ToolError::invalid_argument(
                format!("a11y: {argument} must be a comma list of rule ids"),
                argument,
                "write ids like color-contrast,label",
            ));
        }
        if ids.len() > MAX_RULE_IDS {
            return Err(ToolError::invalid_argument(
                format!(
                    "a11y: {argument} has {} rule ids; at most {MAX_RULE_IDS}",
                    ids.len()
                ),
                argument,
                "pass fewer rule ids",
            ));
        }
    }
    Ok(())
}

/// Splits a comma list of rule ids, trimming each.
pub(super) fn rule_ids(list: &str) -> Vec<&str> {
    list.split(',').map(str::trim).collect()
}

pub(super) async fn snapshot(
    ctx: &mut ToolContext<'_>,
    args: SnapshotArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = SNAPSHOT.verb;
    let page = ctx.session.active_page_any(verb).await?;
    if let Some(dialog) = page.dialog() {
        let mut output = ToolOutput::new(json!({
            "url": page.url(),
            "title": null,
            "documentId": page.document_id(),
            "revision": ctx.session.shown.revision,
            "lines": [],
            "dialog": { "type": dialog.kind, "message": dialog.message },
        }));
        let mut text = format!(
            "dialog open: {} — accept or dismiss it first",
            dialog.message
        );
        if let Some(trap) = ctx.session.dialog_trap(&page) {
            text.push_str(&format!("\n({trap})"));
        }
        output.text = Some(text);
        return Ok(output);
    }
    // The scope is parsed here, once (after the dialog check, which keeps its precedence as in
    // `locate`), and travels typed.
    let scope = args
        .selector
        .as_deref()
        .map(chromate::Selector::parse)
        .transpose()
        .map_err(|err| crate::error::from_engine(verb, &err))?;
    if let Some(selector) = &scope {
        ctx.session
            .check_ref_baseline(verb, &page, selector.element_ref())
            .await?;
    }
    let after = args
        .after
        .as_deref()
        .and_then(chromate::snapshot::ElementRef::parse);
    ctx.session
        .check_ref_baseline(
            verb,
            &page,
            after.map(chromate::snapshot::ElementRef::number),
        )
        .await?;
    let options = chromate::snapshot::SnapshotOptions {
        max_lines: usize::try_from(args.max_lines).unwrap_or(usize::MAX),
        scope,
        after,
    };
    let snapshot = match ctx.session.take_snapshot(&page, options).await {
        Ok(snapshot) => snapshot,
        Err(err) => return Err(ctx.session.element_error(verb, &page, &err).await),
    };
    let mut text = snapshot.render();
    // Under `--caps webmcp` the header says when the page offers tools (docs/mcp.md#webmcp);
    // without it the browser has no WebMCP and nothing is asked of the page.
    if ctx.session.config.caps_webmcp && page.webmcp_enable().await.is_ok() {
        let line = crate::webmcp::header_line(&crate::webmcp::project(&page, &[]));
        text = crate::webmcp::after_header(text, line);
    }
    let lines: Vec<String> = snapshot.lines.iter().map(ToString::to_string).collect();
    let mut output = ToolOutput::new(json!({
        "url": snapshot.url,
        "title": snapshot.title,
        "documentId": snapshot.document_id,
        "revision": ctx.session.shown.revision,
        "lines": lines,
    }));
    if let Some(next) = snapshot.next_after {
        output.result["next"] = json!(next.to_string());
    }
    output.text = Some(text);
    if args.selector.is_none() && args.after.is_none() {
        ctx.session.shown.baseline = Some(snapshot);
    }
    Ok(output)
}

pub(super) async fn locators(
    ctx: &mut ToolContext<'_>,
    args: LocatorsArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = LOCATORS.verb;
    let page = ctx.session.active_page(verb).await?;
    // Parsed here, once, and carried typed to the engine.
    let selector = chromate::Selector::parse(&args.selector)
        .map_err(|err| crate::error::from_engine(verb, &err))?;
    ctx.session
        .check_ref_baseline(verb, &page, selector.element_ref())
        .await?;
    let limit = usize::try_from(args.limit).unwrap_or(20);
    // No timeout_ms: its round trips are bounded by the agent default (a page whose script
    // does not yield is freed when it runs out).
    let timeout = ctx.session.agent_timeout();
    let found = match page
        .within(timeout, page.locators_for(&selector, limit))
        .await
    {
        Ok(found) => found,
        Err(err) => return Err(ctx.session.element_error(verb, &page, &err).await),
    };
    let candidates: Vec<serde_json::Value> = found
        .candidates
        .iter()
        .map(|candidate| {
            json!({
                "selector": candidate.selector,
                "kind": candidate.kind,
                "status": format!("{:?}", candidate.status).to_lowercase(),
                "matches": candidate.matches,
            })
        })
        .collect();
    let mut result = json!({
        "target": {
            "tag": found.target.tag,
            "role": found.target.role,
            "name": found.target.name,
            "selector": found.target.canonical,
        },
        "candidates": candidates,
        "best": found.best,
    });
    if let Some(note) = found.note {
        result["note"] = json!(note);
    }
    Ok(ToolOutput::new(result))
}

/// Most nodes reported over all violations (docs/tools.md#browser_a11y--accessibility-audit).
const MAX_TOTAL_NODES: usize = 50;

pub(super) async fn a11y(
    ctx: &mut ToolContext<'_>,
    args: A11yArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = A11Y.verb;
    let (page, scope) = match &args.selector {
        Some(selector) => {
            let (page, locator) = super::locate(ctx, verb, selector, super::no_wait(ctx)).await?;
            (page, Some(locator.selector().clone()))
        }
        None => (ctx.session.active_page(verb).await?, None),
    };
    let list = |text: &Option<String>| -> Vec<String> {
        text.as_deref()
            .map(|list| rule_ids(list).into_iter().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let min_impact = match args.min_impact {
        MinImpact::Minor => chromate::audit::Impact::Minor,
        MinImpact::Moderate => chromate::audit::Impact::Moderate,
        MinImpact::Serious => chromate::audit::Impact::Serious,
        MinImpact::Critical => chromate::audit::Impact::Critical,
    };
    let echoed = scope.as_ref().map(super::echo_of);
    let options = chromate::audit::AuditOptions {
        scope,
        min_impact,
        rules: list(&args.rules),
        disable_rules: list(&args.disable_rules),
        max_violations: usize::try_from(args.limit).unwrap_or(20),
        max_nodes: usize::try_from(args.nodes).unwrap_or(3),
        max_total_nodes: MAX_TOTAL_NODES,
    };
    ctx.progress.set_phase("running axe-core");
    // The audit is bounded by the agent timeout (browser_a11y has no timeout_ms): an audit
    // still running then is stopped, so the next call finds the page free.
    let audit = page.within(
        ctx.session.agent_timeout(),
        page.audit_accessibility(options),
    );
    let report = match ctx.cancel.run(audit).await {
        None => return Err(super::cancelled_error(verb)),
        Some(Ok(report)) => report,
        Some(Err(err)) => return Err(audit_error(ctx, &page, &err).await),
    };
    // The audit's snapshot is the new baseline (docs/mcp.md#refs); refs of reported nodes are already in
    // the table, so the snapshot shows the same numbers.
    match ctx
        .session
        .take_snapshot(&page, chromate::snapshot::SnapshotOptions::default())
        .await
    {
        Ok(snapshot) => ctx.session.shown.baseline = Some(snapshot),
        Err(err) => return Err(ctx.session.element_error(verb, &page, &err).await),
    }
    Ok(ToolOutput::new(a11y_result(&args, echoed, &report)))
}

/// A failed audit as a tool error: one that did not finish in time is TIMEOUT naming the
/// audit, with the hint saying it was stopped.
async fn audit_error(
    ctx: &mut ToolContext<'_>,
    page: &chromate::Page,
    err: &chromate::Error,
) -> ToolError {
    let verb = A11Y.verb;
    let chromate::Error::NoAnswer { timeout, .. } = err.unstalled() else {
        return ctx.session.element_error(verb, page, err).await;
    };
    let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    // axe may yield now and then, so a page that answers can still be running it: the audit
    // is known to run past its deadline, so it is stopped either way.
    // A page that did not answer at all was stopped already (the probe after the deadline);
    // its hint says so as every tool's does. One that answered was running the audit.
    let (recovery, stopped_now) = match err.recovery() {
        Some(recovery) => (recovery, false),
        None => (page.stop_script(*timeout).await, true),
    };
    if let chromate::error::Recovery::RendererStuck { .. } = recovery {
        ctx.session.mark_stuck(page);
    }
    let narrow = "audit a part of the page with selector, or fewer rules with rules";
    let hint = match recovery {
        chromate::error::Recovery::ScriptStopped { .. } if stopped_now => {
            format!("chromate stopped the audit after {ms} ms and the tab answers again; {narrow}")
        }
        recovery => format!("{}; {narrow}", crate::error::recovery_hint(recovery)),
    };
    ToolError::new(
        crate::error::ToolErrorCode::Timeout,
        format!("{verb}: timed out after {ms}ms waiting for the audit to finish"),
    )
    .with_hint(hint)
    .with_detail(json!({ "timeout": ms, "what": "the audit" }))
}

/// The result of an audit (docs/tools.md#browser_a11y--accessibility-audit).
fn a11y_result(
    args: &A11yArgs,
    scope: Option<String>,
    report: &chromate::audit::AuditReport,
) -> serde_json::Value {
    let violations: Vec<serde_json::Value> = report
        .violations
        .iter()
        .map(|violation| {
            let nodes: Vec<serde_json::Value> = violation
                .nodes
                .iter()
                .map(|node| {
                    let summary: Vec<&str> = node
                        .failure_summary
                        .lines()
                        .map(str::trim)
                        .filter(|line| !line.is_empty())
                        .collect();
                    let mut entry = json!({
                        "target": cut_chars(&node.target, 120),
                        "html": cut_chars(&node.html, 160),
                        "failureSummary": cut_chars(&summary.join("; "), 240),
                    });
                    if let Some(element_ref) = node.element_ref {
                        entry["ref"] = json!(element_ref.to_string());
                    }
                    entry
                })
                .collect();
            let wcag: Vec<&String> = violation
                .tags
                .iter()
                .filter(|tag| tag.starts_with("wcag"))
                .collect();
            json!({
                "id": violation.id,
                "impact": violation.impact.as_str(),
                "wcag": wcag,
                "help": violation.help,
                "description": violation.description,
                "helpUrl": violation.help_url,
                "nodes": nodes,
            })
        })
        .collect();
    let mut result = json!({
        "minImpact": args.min_impact,
        "violations": violations,
        "counts": {
            "violations": report.n_violations,
            "passes": report.n_passes,
            "incomplete": report.n_incomplete,
        },
        "truncated": report.truncated,
    });
    if let Some(scope) = scope {
        result["scope"] = json!(scope);
    }
    if args.check {
        result["checked"] = json!(true);
        result["passed"] = json!(report.n_violations == 0);
    }
    result
}

/// `text` cut to `max` characters, the last one `…` when cut.
fn cut_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut res: String = text.chars().take(max.saturating_sub(1)).collect();
    res.push('…');
    res
}
