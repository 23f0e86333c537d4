//! browser_state (§11.2): saved login state — declaration, arguments, `list`
//! and the name rules that need no browser.
//!
//! Owns: listing `<root>/*.json` (never creating anything) and the
//! unknown-name rule of `load`. Does not read or write cookies and storage
//! yet: `save` and a valid `load` answer UNSUPPORTED until the engine is
//! wired.

use std::path::Path;

use serde::Deserialize;
use serde_json::json;

use super::schema::{Arg, Hints, Pattern, ToolDecl};
use super::ToolContext;
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

/// `^[A-Za-z0-9_-]{1,64}$`.
pub(crate) static STATE_NAME: Pattern = Pattern {
    source: "^[A-Za-z0-9_-]{1,64}$",
    matches: |name| {
        (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
    },
};

pub(crate) const STATE: ToolDecl = ToolDecl {
    name: "browser_state",
    title: "Login state",
    verb: "state",
    description: "Save or load cookies and storage under a name, or list saved names.",
    hints: Hints::D,
    observes: false,
    args: &[
        Arg::one_of("action", "What to do", &["save", "load", "list"]).default_str("list"),
        Arg::string("name", "State name (save, load)")
            .max_len(64)
            .pattern(&STATE_NAME),
        Arg::boolean("session_storage", "Also save sessionStorage (save)"),
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateArgs {
    pub(crate) action: String,
    pub(crate) name: Option<String>,
    #[serde(default)]
    #[allow(dead_code)] // Read once the engine is wired.
    pub(crate) session_storage: bool,
}

pub(crate) fn check_state(args: &StateArgs, _session: &Session) -> Result<(), ToolError> {
    if matches!(args.action.as_str(), "save" | "load") && args.name.is_none() {
        return Err(ToolError::invalid_argument(
            format!("state {}: missing \"name\"", args.action),
            "name",
            "pass name= letters, digits, _ or -; browser_state action=list shows saved names",
        ));
    }
    Ok(())
}

/// Saved state names under `root`, sorted; a missing root is an empty list.
pub(crate) fn saved_names(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            let file_name = entry.file_name().into_string().ok()?;
            let stem = file_name.strip_suffix(".json")?;
            (STATE_NAME.matches)(stem).then(|| stem.to_owned())
        })
        .collect();
    names.sort();
    names
}

pub(crate) async fn state(
    ctx: &mut ToolContext<'_>,
    args: StateArgs,
) -> Result<ToolOutput, ToolError> {
    let root = ctx.session.state_root();
    match (args.action.as_str(), &args.name) {
        ("load", Some(name)) => {
            let available = saved_names(&root);
            if !available.contains(name) {
                return Err(ToolError::invalid_argument(
                    format!("state load: no saved state named \"{name}\""),
                    "name",
                    "save one first with browser_state action=save, or pick a name from action=list",
                )
                .with_detail_key("available", json!(available)));
            }
            Err(ToolError::not_in_this_build("state load", STATE.name))
        }
        ("save", _) => Err(ToolError::not_in_this_build("state save", STATE.name)),
        _ => Ok(ToolOutput::new(json!({
            "states": saved_names(&root),
            "root": root.display().to_string(),
        }))),
    }
}
