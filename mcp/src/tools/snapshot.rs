//! The page-model tools (§4.3): browser_snapshot, browser_locators,
//! browser_a11y — declarations, arguments and the a11y rule-list rules.
//!
//! Owns the snapshot result (`{url, title, documentId, revision, lines}`) and
//! the baseline rule (a full snapshot replaces it, a scoped one does not).
//! browser_a11y stays UNSUPPORTED: the engine bundles no axe-core yet.

use serde::Deserialize;
use serde_json::json;

use super::schema::{Arg, Hints, IntDefault, ToolDecl};
use super::{ToolContext, SELECTOR, SELECTOR_OPT};
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

pub(crate) const SNAPSHOT: ToolDecl = ToolDecl {
    name: "browser_snapshot",
    title: "Page snapshot",
    verb: "snapshot",
    description: "Render the active tab as lines with refs (e7); becomes the baseline.",
    hints: Hints::R,
    observes: false,
    args: &[
        Arg::string("selector", "Only this subtree (keeps the baseline)").min_len(1),
        Arg::int("max_lines", "Line budget (this call)", 1, 5000)
            .default_int(IntDefault::Value(80)),
    ],
};

pub(crate) const LOCATORS: ToolDecl = ToolDecl {
    name: "browser_locators",
    title: "Durable selectors",
    verb: "locators",
    description: "Propose durable selectors for an element, graded by uniqueness.",
    hints: Hints::R,
    observes: false,
    args: &[
        SELECTOR,
        Arg::int("limit", "Unique selectors wanted", 1, 20).default_int(IntDefault::Value(5)),
    ],
};

/// Most rule ids in `rules`/`disable_rules`.
const MAX_RULE_IDS: usize = 50;

pub(crate) const A11Y: ToolDecl = ToolDecl {
    name: "browser_a11y",
    title: "Accessibility audit",
    verb: "a11y",
    description: "Run an axe-core accessibility audit of the page or a subtree.",
    hints: Hints::R,
    observes: false,
    args: &[
        SELECTOR_OPT,
        Arg::one_of(
            "min_impact",
            "Lowest impact reported",
            &["minor", "moderate", "serious", "critical"],
        )
        .default_str("minor"),
        Arg::boolean("check", "Add passed:true|false"),
        Arg::string("rules", "Axe rule ids to run (comma list)").max_len(1024),
        Arg::string("disable_rules", "Axe rule ids to skip (comma list)").max_len(1024),
        Arg::int("limit", "Most violations", 1, 100).default_int(IntDefault::Value(20)),
        Arg::int("nodes", "Most nodes per violation", 1, 10).default_int(IntDefault::Value(3)),
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SnapshotArgs {
    pub(crate) selector: Option<String>,
    pub(crate) max_lines: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LocatorsArgs {
    pub(crate) selector: String,
    pub(crate) limit: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct A11yArgs {
    pub(crate) selector: Option<String>,
    pub(crate) min_impact: String,
    #[serde(default)]
    pub(crate) check: bool,
    pub(crate) rules: Option<String>,
    pub(crate) disable_rules: Option<String>,
    pub(crate) limit: u64,
    pub(crate) nodes: u64,
}

pub(crate) fn check_snapshot(_args: &SnapshotArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) fn check_locators(_args: &LocatorsArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) fn check_a11y(args: &A11yArgs, _session: &Session) -> Result<(), ToolError> {
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
pub(crate) fn rule_ids(list: &str) -> Vec<&str> {
    list.split(',').map(str::trim).collect()
}

pub(crate) async fn snapshot(
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
            "revision": ctx.session.revision,
            "lines": [],
            "dialog": { "type": dialog.kind, "message": dialog.message },
        }));
        output.text = Some(format!(
            "dialog open: {} — accept or dismiss it first",
            dialog.message
        ));
        return Ok(output);
    }
    if let Some(selector) = &args.selector {
        ctx.session
            .check_ref_baseline(verb, &page, selector)
            .await?;
    }
    let options = chromate::SnapshotOptions {
        max_lines: usize::try_from(args.max_lines).unwrap_or(usize::MAX),
        scope: args.selector.clone(),
    };
    let snapshot = match ctx.session.take_snapshot(&page, options).await {
        Ok(snapshot) => snapshot,
        Err(err) => return Err(ctx.session.element_error(verb, &page, &err).await),
    };
    let text = snapshot.render();
    let lines: Vec<String> = snapshot.lines.iter().map(ToString::to_string).collect();
    let mut output = ToolOutput::new(json!({
        "url": snapshot.url,
        "title": snapshot.title,
        "documentId": snapshot.document_id,
        "revision": ctx.session.revision,
        "lines": lines,
    }));
    output.text = Some(text);
    if args.selector.is_none() {
        ctx.session.baseline = Some(snapshot);
    }
    Ok(output)
}

pub(crate) async fn locators(
    ctx: &mut ToolContext<'_>,
    args: LocatorsArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = LOCATORS.verb;
    let page = ctx.session.active_page(verb).await?;
    ctx.session
        .check_ref_baseline(verb, &page, &args.selector)
        .await?;
    let limit = usize::try_from(args.limit).unwrap_or(20);
    let found = match page.locators(&args.selector, limit).await {
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

unwired! {
    a11y(A11yArgs) => A11Y;
}
