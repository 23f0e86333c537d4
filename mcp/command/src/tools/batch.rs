//! browser_batch (docs/tools.md#browser_batch--batch): several tool calls in one queue slot.
//!
//! Owns: the steps' cross-argument rules (all run before any step, failing
//! INVALID_ARGUMENT with `detail.step`), running steps in order with
//! cancellation checked before each, stop-on-first-failure, per-step result
//! bounds, the step summary text, the `logs` block and the one observation at
//! the end. Step schemas are validated by `schema.rs` (a nested batch is
//! rejected there). The observation itself (diff or page identity) is the
//! session's (`ToolSession::observe`, `ToolSession::observe_page`).

use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::schema::{arg_enum, tool_args, Arg, Capability, Cli, Hints, Kind, Runs, Slot, ToolDecl};
use super::{cancelled_error, ToolCall, ToolContext};
use crate::error::{cut_bytes, ToolError, ToolOutput};
use crate::session::ToolSession;

/// A step result over this many bytes becomes `{truncated, totalBytes, preview}`.
const MAX_STEP_RESULT_BYTES: usize = 8 * 1024;
/// Once `steps` passes this many bytes, later results are omitted.
const MAX_STEPS_BYTES: usize = 32 * 1024;
/// Longest per-step summary in the text.
const SUMMARY_CHARS: usize = 80;

pub(super) const BATCH: ToolDecl = ToolDecl {
    name: "browser_batch",
    title: "Batch",
    verb: "batch",
    description: "Run up to 25 tool calls in order as one call; stops at the first failure.",
    hints: Hints::D,
    observes: true,
    cli: Cli::new("batch", &[Slot::arg("steps")]),
    args: BatchArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Steps,
    spill: Some("batch.txt"),
    negative: None,
};

arg_enum! {
    /// browser_batch `observe`.
    pub enum BatchObserve {
        Page = "page",
        Delta = "delta",
    }
}

tool_args! {
    /// The arguments of browser_batch, in schema order.
    pub struct BatchArgs {
        steps: Vec<Step> = Arg::kind(
            "steps",
            "{tool, arguments} per call",
            Kind::Steps {
                min_items: 1,
                max_items: 25,
            },
        )
        .required(),
        #[serde(default)]
        continue_on_error: bool = Arg::boolean("continue_on_error", "Run later steps after a failure"),
        observe: BatchObserve = Arg::one_of(
            "observe",
            "Final observation: diff or page identity",
            BatchObserve::VALUES,
        )
        .default_str("delta"),
        tab: Option<String> = super::TAB,
    }
}

/// One validated step.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub tool: String,
    pub arguments: Map<String, Value>,
}

impl Step {
    fn to_call(&self) -> Result<ToolCall, ToolError> {
        let decl = super::find(&self.tool).ok_or_else(|| {
            ToolError::new(
                crate::error::ToolErrorCode::DriverError,
                format!("batch: internal error: unknown step tool {}", self.tool),
            )
        })?;
        ToolCall::from_validated(decl, self.arguments.clone())
    }
}

pub(super) fn check_batch(args: &BatchArgs, session: &ToolSession) -> Result<(), ToolError> {
    for (idx, step) in args.steps.iter().enumerate() {
        // A batch on a tab runs every step there (docs/mcp.md#tabs-for-parallel-agents).
        let step_tab = crate::session::tab_argument(&step.arguments);
        if let (Some(tab), Some(step_tab)) = (&args.tab, step_tab) {
            if step_tab != tab {
                return Err(ToolError::invalid_argument(
                    format!("batch: steps[{idx}] ({}): tab {step_tab} in a batch on tab {tab}", step.tool),
                    &format!("steps[{idx}].arguments.tab"),
                    "a batch with tab runs all its steps on that tab: drop the step's tab, or run the batch without tab",
                )
                .with_detail_key("step", json!(idx)));
            }
        }
        step.to_call()
            .and_then(|call| call.check(session))
            .map_err(|err| {
                let message = format!("batch: steps[{idx}] ({}): {}", step.tool, err.message);
                ToolError {
                    message,
                    ..err.with_detail_key("step", json!(idx))
                }
            })?;
    }
    Ok(())
}

pub(super) async fn batch(
    ctx: &mut ToolContext<'_>,
    args: BatchArgs,
) -> Result<ToolOutput, ToolError> {
    let total = args.steps.len();
    ctx.progress.set_steps(0, total as u64);
    let mut records: Vec<Value> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut steps_bytes = 0usize;
    let (mut ran, mut skipped) = (0usize, 0usize);
    let mut failed_step: Option<usize> = None;
    let mut first_recovery: Option<String> = None;
    let mut observed = false;
    let mut links = Vec::new();

    for (idx, step) in args.steps.iter().enumerate() {
        if failed_step.is_some() && !args.continue_on_error {
            skipped += 1;
            continue;
        }
        if ctx.cancel.is_cancelled() {
            return Err(cancelled_error("batch"));
        }
        ctx.progress
            .set_phase(format!("step {} of {total}: {}", idx + 1, step.tool));
        let started = Instant::now();
        let step_started_at = ctx
            .session
            .trace
            .is_some()
            .then(|| (crate::trace::iso_now(), ctx.session.journal.log.cursor()));
        let call = step.to_call()?;
        // A step on another tab runs there and leaves the batch's observation to its own tab.
        let elsewhere = crate::session::tab_argument(&step.arguments)
            .filter(|tab| ctx.session.forked_tab() != Some(*tab));
        let observes = call.decl().observes && elsewhere.is_none();
        let outcome = match elsewhere {
            Some(tab) => run_on_tab(ctx, tab, call).await,
            None => call.run(ctx).await,
        };
        let duration_ms = started.elapsed().as_millis() as u64;
        // Each step is its own trace event (docs/mcp.md#traces).
        if let Some((started_at, log_cursor)) = step_started_at {
            let record = crate::trace::CallRecord {
                tool: &step.tool,
                observes,
                arguments: &step.arguments,
                started_at,
                duration_ms,
                outcome: outcome.as_ref(),
                log_cursor,
            };
            crate::trace::record_action(ctx.session, record).await;
        }
        ran += 1;
        ctx.progress.set_steps(ran as u64, total as u64);
        let mut record = Map::new();
        record.insert("index".into(), json!(idx));
        record.insert("tool".into(), json!(step.tool));
        record.insert("ok".into(), json!(outcome.is_ok()));
        record.insert("durationMs".into(), json!(duration_ms));
        match outcome {
            Ok(output) => {
                observed |= observes;
                links.extend(output.links);
                let summary = cut_chars(&output.result.to_string(), SUMMARY_CHARS);
                lines.push(format!(
                    "{} ✓ {}  {duration_ms}ms  {summary}",
                    idx + 1,
                    step.tool
                ));
                let result = if steps_bytes > MAX_STEPS_BYTES {
                    json!(format!(
                        "(result omitted: batch exceeded {MAX_STEPS_BYTES} bytes)"
                    ))
                } else {
                    bound_step_result(output.result)
                };
                record.insert("result".into(), result);
            }
            Err(error) => {
                if failed_step.is_none() {
                    failed_step = Some(idx);
                    first_recovery = error.recovery_snapshot.clone();
                }
                lines.push(format!("{} ✗ {}  {duration_ms}ms", idx + 1, step.tool));
                for line in error.to_text(Some("")).lines() {
                    if !line.is_empty() && line != "recovery snapshot:" {
                        lines.push(format!("    {line}"));
                    }
                }
                record.insert("error".into(), error.to_json());
            }
        }
        let record = Value::Object(record);
        steps_bytes += record.to_string().len();
        records.push(record);
    }

    if skipped > 0 {
        if let Some(failed) = failed_step {
            lines.push(format!(
                "stopped at step {} of {total}; {skipped} later step(s) not run",
                failed + 1
            ));
        }
    }
    let ok = failed_step.is_none();
    let mut result = Map::new();
    result.insert("ok".into(), json!(ok));
    result.insert("ran".into(), json!(ran));
    result.insert("skipped".into(), json!(skipped));
    if let Some(failed) = failed_step {
        result.insert("failedStep".into(), json!(failed));
    }
    result.insert("steps".into(), Value::Array(records));

    // One observation at the end, if an observation-bearing step ran and the
    // batch did not stop on an error carrying a recovery snapshot.
    let observation = if !observed || first_recovery.is_some() {
        None
    } else if args.observe == BatchObserve::Page {
        match ctx.session.observe_page(&ctx.cancel).await {
            Some((summary, observation)) => {
                result.insert("page".into(), summary);
                Some(observation)
            }
            None => None,
        }
    } else {
        let observation = ctx.session.observe(&ctx.cancel).await;
        if let Some(observation) = &observation {
            result.insert("delta".into(), json!(observation.body));
        }
        observation
    };
    // The tripwire is always evaluated (docs/tools.md#browser_batch--batch): the observation's, else its own.
    let tripwire = match &observation {
        Some(observation) if observation.tripwire.is_some() => ctx.session.journal.last_tripwire,
        _ => ctx.session.evaluate_tripwire(),
    };
    let mut text = lines.join("\n");
    if let Some(tripwire) = tripwire {
        let mut logs = json!({ "errors": tripwire.errors, "logCursor": tripwire.cursor });
        if tripwire.evicted > 0 {
            logs["logsDropped"] = json!(tripwire.evicted);
        }
        result.insert("logs".into(), logs);
        if observation.is_none() {
            text.push('\n');
            text.push_str(&tripwire.line());
        }
    }
    if let Some(recovery) = &first_recovery {
        text.push_str("\nrecovery snapshot:\n");
        text.push_str(recovery);
    }
    let links = observation
        .as_ref()
        .map_or_else(Vec::new, |observation| observation.links.clone());
    Ok(ToolOutput {
        result: Value::Object(result),
        text: Some(text),
        is_error: !ok,
        observation,
        links,
    })
}

/// A step that names a tab, run on a fork of the session for that tab
/// (docs/mcp.md#tabs-for-parallel-agents) and merged back.
async fn run_on_tab(
    ctx: &mut ToolContext<'_>,
    tab: &str,
    call: ToolCall,
) -> Result<ToolOutput, ToolError> {
    let verb = call.decl().verb;
    let mut fork = ctx.session.fork_tab(tab, verb)?;
    fork.trace = ctx.session.trace.take();
    let mut step = ToolContext {
        session: &mut fork,
        cancel: ctx.cancel.clone(),
        progress: ctx.progress.clone(),
    };
    let mut outcome = call.run(&mut step).await;
    fork.report_closed_tab(verb, &mut outcome);
    ctx.session.trace = fork.trace.take();
    ctx.session.merge_tab(fork);
    outcome
}

fn bound_step_result(result: Value) -> Value {
    let serialised = result.to_string();
    if serialised.len() <= MAX_STEP_RESULT_BYTES {
        return result;
    }
    json!({
        "truncated": true,
        "totalBytes": serialised.len(),
        "preview": cut_bytes(&serialised, MAX_STEP_RESULT_BYTES / 4, "…"),
    })
}

fn cut_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}
