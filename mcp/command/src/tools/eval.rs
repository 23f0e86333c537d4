//! browser_advanced_eval (docs/tools.md#browser_advanced_eval--evaluate-javascript): declaration and arguments.
//!
//! Owns the expression-or-function-body rule (decided by compiling, never by
//! running twice), the promise timeout and the 32 KiB result bound. No tool
//! ever runs caller code outside the page.

use std::time::Duration;

use serde_json::{json, Value};

use super::schema::{tool_args, Arg, Capability, Cli, Hints, Runs, Slot, ToolDecl};
use super::{cancelled_error, ToolContext, TIMEOUT};
use crate::error::{cut_bytes, ToolError, ToolErrorCode, ToolOutput};

pub(super) const EVAL: ToolDecl = ToolDecl {
    name: "browser_advanced_eval",
    title: "Evaluate JavaScript",
    verb: "eval",
    description: "Run JavaScript in the active tab and return its JSON value.",
    hints: Hints::D,
    observes: true,
    cli: Cli::new("eval", &[Slot::arg("js")]).file("js"),
    args: EvalArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

tool_args! {
    /// The arguments of browser_advanced_eval, in schema order.
    pub struct EvalArgs {
        js: String = Arg::string("js", "Expression or function body; promises are awaited")
            .min_len(1)
            .max_len(32768)
            .required(),
        timeout_ms: u64 = TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

/// Results beyond this many bytes of JSON are returned as a preview (docs/tools.md#browser_advanced_eval--evaluate-javascript).
const MAX_RESULT_BYTES: usize = 32 * 1024;

pub(super) async fn eval(
    ctx: &mut ToolContext<'_>,
    args: EvalArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = EVAL.verb;
    let page = ctx.session.active_page(verb).await?;
    // An expression, or a function body such as `const a = 1; return a` (docs/tools.md#browser_advanced_eval--evaluate-javascript).
    let run = page.evaluate_expression_or_body(&args.js);
    // Every round trip is bounded by timeout_ms; a script that does not yield is stopped then.
    let timeout = Duration::from_millis(args.timeout_ms);
    let evaluated = ctx
        .cancel
        .run(page.within(timeout, run))
        .await
        .ok_or_else(|| cancelled_error(verb))?;
    let value = match evaluated {
        Err(err) if matches!(err.unstalled(), chromate::Error::NoAnswer { .. }) => {
            let (waiting_for, hint) = match err.recovery() {
                Some(recovery) => (
                    "the script to finish",
                    crate::error::recovery_hint(recovery),
                ),
                None => (
                    "the promise to settle",
                    "raise timeout_ms, or return without awaiting".to_owned(),
                ),
            };
            return Err(ToolError::new(
                ToolErrorCode::Timeout,
                format!(
                    "eval: timed out after {}ms waiting for {waiting_for}",
                    args.timeout_ms
                ),
            )
            .with_hint(hint)
            .with_detail(json!({ "timeout": args.timeout_ms })));
        }
        Err(err) => return Err(ctx.session.engine_error(verb, &err)),
        Ok(value) => value,
    };
    Ok(ToolOutput::new(json!({ "result": bound_result(value) })))
}

/// The value, or beyond 32 KiB `{value, truncated, totalBytes, retainedBytes}`
/// with a JSON-text preview (docs/tools.md#browser_advanced_eval--evaluate-javascript).
fn bound_result(value: Value) -> Value {
    let text = value.to_string();
    if text.len() <= MAX_RESULT_BYTES {
        return value;
    }
    let preview = cut_bytes(&text, MAX_RESULT_BYTES, "");
    json!({
        "value": preview,
        "truncated": true,
        "totalBytes": text.len(),
        "retainedBytes": preview.len(),
    })
}
