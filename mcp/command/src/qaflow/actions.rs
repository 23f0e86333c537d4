//! The tools a user flow's model may call (docs/llm.md#qa-flow): their declarations as the
//! provider sees them, and running one call on the flow's page with the engine's auto-waiting
//! actions.
//!
//! Owns: [`specs`] (the fixed set: click, fill, select, check, press, navigate, wait, expect,
//! step_done, step_failed; never eval, upload, files or state), reading a call's arguments,
//! resolving its `target` (a ref of the last snapshot, or any selector), the durable selector
//! a step reports (from the locators code, never a ref), the navigation rule (only the
//! allowed origins) and what each call answers the model. Does not own the conversation
//! (`mod.rs`).

use std::time::Duration;

use serde_json::{json, Value};

use crate::error::from_engine;
use crate::llm::{ToolCall, ToolSpec};

/// Every tool name the model is offered, in the order offered.
pub const NAMES: [&str; 10] = [
    "click",
    "fill",
    "select",
    "check",
    "press",
    "navigate",
    "wait",
    "expect",
    "step_done",
    "step_failed",
];

fn target_arg() -> Value {
    json!({ "type": "string", "description": "The element: a ref of the last snapshot (e7) or a selector (role=button[name=\"Apply\"], label=Email, text=Checkout, testid=…, css)" })
}

fn findings_arg() -> Value {
    json!({
        "type": "array",
        "description": "Problems a person testing the page would report (optional)",
        "items": {
            "type": "object",
            "required": ["description"],
            "properties": {
                "description": { "type": "string" },
                "severity": { "enum": ["low", "medium", "high", "critical"] },
            },
        },
    })
}

fn spec(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": required,
        }),
    }
}

/// The tools offered to the model: the same fixed set for every step.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        spec(
            "click",
            "Click an element once it is visible, enabled and unobscured.",
            json!({ "target": target_arg() }),
            &["target"],
        ),
        spec(
            "fill",
            "Replace an editable field's content with value.",
            json!({ "target": target_arg(), "value": { "type": "string" } }),
            &["target", "value"],
        ),
        spec(
            "select",
            "Choose an option of a <select> by its value or visible label.",
            json!({ "target": target_arg(), "value": { "type": "string" } }),
            &["target", "value"],
        ),
        spec(
            "check",
            "Check (or, with checked false, uncheck) a checkbox or radio button.",
            json!({ "target": target_arg(), "checked": { "type": "boolean" } }),
            &["target"],
        ),
        spec(
            "press",
            "Press a key or chord (Enter, Tab, Control+A), in target when given, else in whatever has focus.",
            json!({ "key": { "type": "string" }, "target": target_arg() }),
            &["key"],
        ),
        spec(
            "navigate",
            "Load a URL of the journey's own site (other origins are refused).",
            json!({ "url": { "type": "string" } }),
            &["url"],
        ),
        spec(
            "wait",
            "Wait until an element is visible, hidden, enabled, attached or detached.",
            json!({ "target": target_arg(), "state": { "enum": ["visible", "hidden", "enabled", "attached", "detached"] } }),
            &["target", "state"],
        ),
        spec(
            "expect",
            "Check that an element is visible and, when text is given, that its text contains text.",
            json!({ "target": target_arg(), "text": { "type": "string" } }),
            &["target"],
        ),
        spec(
            "step_done",
            "The current step is done; say what shows it.",
            json!({ "summary": { "type": "string" }, "findings": findings_arg() }),
            &[],
        ),
        spec(
            "step_failed",
            "The current step cannot be done; say why.",
            json!({ "reason": { "type": "string" }, "findings": findings_arg() }),
            &["reason"],
        ),
    ]
}

/// What the model reported as a problem.
#[derive(Debug, Clone)]
pub struct Reported {
    pub description: String,
    pub severity: String,
}

/// How one call went.
#[derive(Debug)]
pub enum Outcome {
    /// An action ran (or failed on the page): what to answer the model, whether it failed, and
    /// the record of it for the step.
    Acted {
        answer: String,
        failed: bool,
        record: ActionRecord,
    },
    /// A call chromate refused before running it (bad arguments, an origin outside the
    /// journey's): the answer, nothing ran.
    Refused(String),
    /// `step_done`.
    Done {
        summary: String,
        findings: Vec<Reported>,
    },
    /// `step_failed`.
    Failed {
        reason: String,
        findings: Vec<Reported>,
    },
    /// A tool outside the offered set: the step fails, nothing runs.
    Unknown(String),
}

/// One action a step ran, as the result lists it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ActionRecord {
    pub action: String,
    /// A durable selector of the element (never a ref), when there was one.
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a call runs against.
pub struct Stage<'a> {
    pub page: &'a chromate::Page,
    /// The origins `navigate` may load.
    pub allowed: &'a [chromate::intercept::OriginPattern],
    /// The longest one action waits.
    pub timeout: Duration,
}

fn string_arg(call: &ToolCall, name: &str) -> Option<String> {
    call.arguments
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn reported(call: &ToolCall) -> Vec<Reported> {
    call.arguments
        .get("findings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(10)
        .filter_map(|item| {
            let description = item.get("description")?.as_str()?.trim();
            if description.is_empty() {
                return None;
            }
            let given = item.get("severity").and_then(Value::as_str);
            let severity = ["low", "medium", "high", "critical"]
                .into_iter()
                .find(|level| given == Some(*level))
                .unwrap_or("medium");
            Some(Reported {
                description: crate::audit::findings::cut(description, 500),
                severity: severity.to_owned(),
            })
        })
        .collect()
}

/// The selector of `target`: a bare `e7` the page issued is that ref.
fn selector_of(page: &chromate::Page, target: &str) -> Result<chromate::Selector, String> {
    let parsed = chromate::Selector::parse(target.trim())
        .map_err(|err| from_engine("target", &err).message)?;
    if parsed.is_bare_ref() {
        if let Some(element_ref) = parsed
            .element_ref()
            .and_then(chromate::snapshot::ElementRef::new)
            .filter(|element_ref| page.has_issued_ref(*element_ref))
        {
            return Ok(chromate::Selector::from_element_ref(element_ref));
        }
    }
    Ok(parsed)
}

/// A durable selector for what `selector` matches now (the locators code's best, else its
/// first candidate), or the selector itself when it is not a ref; never a ref.
async fn durable(page: &chromate::Page, selector: &chromate::Selector) -> Option<String> {
    let found = tokio::time::timeout(Duration::from_secs(3), page.locators_for(selector, 3)).await;
    if let Ok(Ok(found)) = found {
        if let Some(best) = found
            .best
            .or_else(|| found.candidates.first().map(|c| c.selector.clone()))
        {
            return Some(best);
        }
    }
    (selector.element_ref().is_none()).then(|| selector.as_typed().to_owned())
}

/// The origin of an http(s) URL as a pattern, when it has one.
pub fn origin_of(url: &str) -> Option<chromate::intercept::OriginPattern> {
    let (scheme, rest) = url.trim().split_once("://")?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    chromate::intercept::OriginPattern::parse(&format!("{scheme}://{authority}")).ok()
}

/// Runs `call` on the stage.
pub async fn run(stage: &Stage<'_>, call: &ToolCall) -> Outcome {
    let name = call.name.as_str();
    if !NAMES.contains(&name) {
        return Outcome::Unknown(name.to_owned());
    }
    match name {
        "step_done" => {
            return Outcome::Done {
                summary: string_arg(call, "summary").unwrap_or_default(),
                findings: reported(call),
            }
        }
        "step_failed" => {
            return Outcome::Failed {
                reason: string_arg(call, "reason")
                    .filter(|reason| !reason.trim().is_empty())
                    .unwrap_or_else(|| "the model gave no reason".to_owned()),
                findings: reported(call),
            }
        }
        "navigate" => return navigate(stage, call).await,
        _ => {}
    }
    let page = stage.page;
    let target = string_arg(call, "target").filter(|target| !target.trim().is_empty());
    let selector = match &target {
        Some(target) => match selector_of(page, target) {
            Ok(selector) => Some(selector),
            Err(message) => return Outcome::Refused(format!("refused: {message}")),
        },
        None if name == "press" => None,
        None => return Outcome::Refused(format!("refused: {name} needs a target")),
    };
    let value = string_arg(call, "value");
    let needs_value = matches!(name, "fill" | "select");
    if needs_value && value.is_none() {
        return Outcome::Refused(format!("refused: {name} needs a value"));
    }
    // The durable selector is read before the action: a click may take the element away.
    let durable_target = match &selector {
        Some(selector) => durable(page, selector).await,
        None => None,
    };
    let locator = selector.map(|selector| page.locator_for(selector).timeout(stage.timeout));
    let result: Result<String, chromate::Error> = match (name, &locator) {
        ("click", Some(locator)) => locator.click().await.map(|()| "clicked".to_owned()),
        ("fill", Some(locator)) => locator
            .fill(value.as_deref().unwrap_or_default())
            .await
            .map(|()| "filled".to_owned()),
        ("select", Some(locator)) => locator
            .select_option(value.as_deref().unwrap_or_default())
            .await
            .map(|_| "selected".to_owned()),
        ("check", Some(locator)) => {
            if call.arguments.get("checked").and_then(Value::as_bool) == Some(false) {
                locator.uncheck().await.map(|()| "unchecked".to_owned())
            } else {
                locator.check().await.map(|()| "checked".to_owned())
            }
        }
        ("press", _) => {
            let Some(key) = string_arg(call, "key").filter(|key| !key.is_empty()) else {
                return Outcome::Refused("refused: press needs a key".to_owned());
            };
            let pressed = match &locator {
                Some(locator) => locator.press(&key).await,
                None => page.press(&key).await,
            };
            pressed.map(|_| format!("pressed {key}"))
        }
        ("wait", Some(locator)) => {
            let state =
                match string_arg(call, "state").as_deref() {
                    Some("visible") => chromate::actions::ElementState::Visible,
                    Some("hidden") => chromate::actions::ElementState::Hidden,
                    Some("enabled") => chromate::actions::ElementState::Enabled,
                    Some("attached") => chromate::actions::ElementState::Attached,
                    Some("detached") => chromate::actions::ElementState::Detached,
                    _ => return Outcome::Refused(
                        "refused: wait needs state visible, hidden, enabled, attached or detached"
                            .to_owned(),
                    ),
                };
            locator
                .wait_for(state)
                .await
                .map(|()| format!("the element is {}", state.as_str()))
        }
        ("expect", Some(locator)) => match string_arg(call, "text") {
            Some(text) => locator
                .expect_text(&chromate::actions::TextMatch::Contains(text.clone()))
                .await
                .map(|()| format!("the element's text contains {text:?}")),
            None => locator
                .expect_visible()
                .await
                .map(|()| "the element is visible".to_owned()),
        },
        _ => return Outcome::Refused(format!("refused: {name} needs a target")),
    };
    let (answer, failed, error) = match result {
        Ok(done) => (done, false, None),
        Err(err) => {
            let message = from_engine(name, &err).message;
            (format!("failed: {message}"), true, Some(message))
        }
    };
    Outcome::Acted {
        answer,
        failed,
        record: ActionRecord {
            action: name.to_owned(),
            target: durable_target,
            value: if needs_value {
                value
            } else {
                string_arg(call, "key")
            },
            ok: !failed,
            error,
        },
    }
}

async fn navigate(stage: &Stage<'_>, call: &ToolCall) -> Outcome {
    let Some(url) = string_arg(call, "url").map(|url| url.trim().to_owned()) else {
        return Outcome::Refused("refused: navigate needs a url".to_owned());
    };
    let absolute = if url.starts_with('/') {
        match origin_of(&stage.page.url()) {
            Some(origin) => format!("{origin}{url}"),
            None => url.clone(),
        }
    } else {
        url.clone()
    };
    let allowed = origin_of(&absolute).is_some()
        && stage
            .allowed
            .iter()
            .any(|pattern| pattern.matches(&absolute));
    if !allowed {
        return Outcome::Refused(format!(
            "refused: {url} is outside the journey's allowed origins; nothing was loaded"
        ));
    }
    let result = stage
        .page
        .goto(
            &absolute,
            chromate::WaitUntil::Load,
            stage.timeout.max(Duration::from_secs(10)),
        )
        .await;
    let (answer, failed, error) = match result {
        Ok(navigation) => (format!("loaded {}", navigation.url), false, None),
        Err(err) => {
            let message = from_engine("navigate", &err).message;
            (format!("failed: {message}"), true, Some(message))
        }
    };
    Outcome::Acted {
        answer,
        failed,
        record: ActionRecord {
            action: "navigate".to_owned(),
            target: Some(absolute),
            value: None,
            ok: !failed,
            error,
        },
    }
}
