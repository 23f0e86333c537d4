//! browser_advanced_eval (§4.3, §11.5): declaration and arguments.
//!
//! Does not run script yet: the handler answers UNSUPPORTED until the engine
//! is wired. No tool ever runs caller code outside the page.

use serde::Deserialize;

use super::schema::{Arg, Hints, ToolDecl};
use super::{ToolContext, TIMEOUT};
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

pub(crate) const EVAL: ToolDecl = ToolDecl {
    name: "browser_advanced_eval",
    title: "Evaluate JavaScript",
    verb: "eval",
    description: "Run JavaScript in the active tab and return its JSON value.",
    hints: Hints::D,
    observes: true,
    args: &[
        Arg::string("js", "Expression or function body; promises are awaited")
            .min_len(1)
            .max_len(32768)
            .required(),
        TIMEOUT,
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct EvalArgs {
    pub(crate) js: String,
    pub(crate) timeout_ms: u64,
}

pub(crate) fn check_eval(_args: &EvalArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

unwired! {
    eval(EvalArgs) => EVAL;
}
