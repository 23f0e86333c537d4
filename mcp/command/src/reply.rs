//! What one call produced, in the form every front end renders from: the MCP server's
//! `tools/call` result, the command line's stdout, stderr and exit status, the session
//! daemon's JSON line. A leaf: tools that run in browsers of their own (the flows) answer
//! with it directly.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What one call produced, in the form every front end renders from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Reply {
    /// The tool ran (a failed browser_batch too: its `is_error` is set).
    Done(Done),
    /// A tool error (docs/mcp.md#errors).
    Failed(Failed),
}

/// A successful call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Done {
    /// The result object (`structuredContent.result`, what `--json` prints).
    pub result: Value,
    /// The first text the model sees: the result's compact JSON or the tool's own text
    /// (a snapshot, a batch summary), spilled past the limit.
    pub text: String,
    /// The observation as the model sees it: its body spilled past the limit, then the
    /// download lines and the `errors:` tripwire.
    pub observation: Option<String>,
    /// The same observation never spilled.
    pub observation_full: Option<String>,
    /// Files the result hands back (MCP `resource_link` blocks).
    pub links: Vec<PathBuf>,
    /// A browser_batch whose `ok` is false.
    pub is_error: bool,
    /// An answer a script treats as a failed assertion though it is a success over MCP:
    /// `exists` that found nothing, `a11y check:true` that did not pass.
    pub negative: bool,
}

/// A failed call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failed {
    /// The bounded error object (`structuredContent.error`): code, message, hint, detail.
    pub error: Value,
    /// Its `error:`/`code:`/`hint:` lines and the (spilled) recovery snapshot.
    pub text: String,
}
