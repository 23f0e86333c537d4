//! The read-only page tools (§4.3): find, exists, wait, read, expect —
//! declarations, arguments and the cross-argument rules between `state`,
//! `field`, `what`, `selector`, `expected` and `contains`.
//!
//! Does not read a page yet: handlers answer UNSUPPORTED until the engine is
//! wired.

use serde::Deserialize;

use super::schema::{Arg, Hints, IntDefault, ToolDecl, MAX_SAFE_INT};
use super::{ToolContext, SELECTOR, SELECTOR_OPT, TIMEOUT};
use crate::error::{ToolError, ToolOutput};
use crate::session::Session;

pub(crate) const FIND: ToolDecl = ToolDecl {
    name: "browser_find",
    title: "Find elements",
    verb: "find",
    description: "List elements matching a selector, without waiting.",
    hints: Hints::R,
    observes: false,
    args: &[
        SELECTOR,
        Arg::boolean("all", "List all matches (paged)"),
        Arg::int("limit", "Page size (all=true)", 1, 500).default_int(IntDefault::Value(20)),
        Arg::int("offset", "Matches to skip (all=true)", 0, 100_000),
    ],
};

pub(crate) const EXISTS: ToolDecl = ToolDecl {
    name: "browser_exists",
    title: "Probe selector",
    verb: "exists",
    description: "Check once whether a selector matches; zero matches is not an error.",
    hints: Hints::R,
    observes: false,
    args: &[SELECTOR],
};

const ELEMENT_STATES: [&str; 4] = ["visible", "hidden", "attached", "detached"];

pub(crate) const WAIT: ToolDecl = ToolDecl {
    name: "browser_wait",
    title: "Wait for condition",
    verb: "wait",
    description: "Wait for an element state (with selector) or a page load state (without).",
    hints: Hints::R,
    observes: false,
    args: &[
        SELECTOR_OPT,
        Arg::one_of(
            "state",
            "Element state (=visible) or load state (=load)",
            &[
                "visible",
                "hidden",
                "attached",
                "detached",
                "load",
                "domcontentloaded",
                "networkidle",
            ],
        ),
        TIMEOUT,
    ],
};

pub(crate) const READ: ToolDecl = ToolDecl {
    name: "browser_read",
    title: "Read element",
    verb: "read",
    description: "Read an element's text, attribute, form value or state without waiting.",
    hints: Hints::R,
    observes: false,
    args: &[
        Arg::one_of("field", "What to read", &["text", "attr", "value", "is"]).default_str("text"),
        Arg::string("selector", "Element (optional for text)").min_len(1),
        Arg::string("name", "Attribute name (field=attr)")
            .min_len(1)
            .max_len(256),
        Arg::one_of(
            "what",
            "State to test (field=is)",
            &["visible", "enabled", "checked"],
        ),
    ],
};

pub(crate) const EXPECT: ToolDecl = ToolDecl {
    name: "browser_expect",
    title: "Assert page state",
    verb: "expect",
    description: "Assert visibility, text, URL or no new errors, retrying until timeout.",
    hints: Hints::R,
    observes: false,
    args: &[
        Arg::one_of(
            "what",
            "What to assert",
            &["visible", "text", "url", "no-errors"],
        )
        .required(),
        SELECTOR_OPT,
        Arg::string("expected", "Exact value (text, url)"),
        Arg::string("contains", "Substring (text, url)"),
        Arg::int("since", "no-errors: count log seq > since", 0, MAX_SAFE_INT),
        TIMEOUT,
    ],
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct FindArgs {
    pub(crate) selector: String,
    #[serde(default)]
    pub(crate) all: bool,
    pub(crate) limit: u64,
    #[serde(default)]
    pub(crate) offset: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct ExistsArgs {
    pub(crate) selector: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct WaitArgs {
    pub(crate) selector: Option<String>,
    pub(crate) state: Option<String>,
    pub(crate) timeout_ms: u64,
}

impl WaitArgs {
    /// The state to wait for: `visible` with a selector, `load` without.
    #[allow(dead_code)] // Read once the engine is wired.
    pub(crate) fn effective_state(&self) -> &str {
        match (&self.state, &self.selector) {
            (Some(state), _) => state,
            (None, Some(_)) => "visible",
            (None, None) => "load",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct ReadArgs {
    pub(crate) field: String,
    pub(crate) selector: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) what: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Fields are read once the engine is wired.
pub(crate) struct ExpectArgs {
    pub(crate) what: String,
    pub(crate) selector: Option<String>,
    pub(crate) expected: Option<String>,
    pub(crate) contains: Option<String>,
    pub(crate) since: Option<u64>,
    pub(crate) timeout_ms: u64,
}

pub(crate) fn check_find(_args: &FindArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) fn check_exists(_args: &ExistsArgs, _session: &Session) -> Result<(), ToolError> {
    Ok(())
}

pub(crate) fn check_wait(args: &WaitArgs, _session: &Session) -> Result<(), ToolError> {
    let Some(state) = &args.state else {
        return Ok(());
    };
    let element_state = ELEMENT_STATES.contains(&state.as_str());
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

pub(crate) fn check_read(args: &ReadArgs, _session: &Session) -> Result<(), ToolError> {
    let missing = |argument: &str, hint: &str| {
        Err(ToolError::invalid_argument(
            format!("read: field \"{}\" needs \"{argument}\"", args.field),
            argument,
            hint,
        ))
    };
    if args.field != "text" && args.selector.is_none() {
        return missing("selector", "pass the element to read");
    }
    if args.field == "attr" && args.name.is_none() {
        return missing("name", "pass name= the attribute to read, e.g. href");
    }
    if args.field == "is" && args.what.is_none() {
        return missing("what", "pass what=visible, enabled or checked");
    }
    Ok(())
}

pub(crate) fn check_expect(args: &ExpectArgs, _session: &Session) -> Result<(), ToolError> {
    let what = args.what.as_str();
    if matches!(what, "visible" | "text") && args.selector.is_none() {
        return Err(ToolError::invalid_argument(
            format!("expect: \"{what}\" needs a selector"),
            "selector",
            "pass the element to check",
        ));
    }
    if matches!(what, "text" | "url") && args.expected.is_some() == args.contains.is_some() {
        return Err(ToolError::invalid_argument(
            format!("expect: \"{what}\" needs exactly one of \"expected\" and \"contains\""),
            "expected",
            "pass expected= for an exact match or contains= for a substring",
        ));
    }
    Ok(())
}

unwired! {
    find(FindArgs) => FIND;
    exists(ExistsArgs) => EXISTS;
    wait(WaitArgs) => WAIT;
    read(ReadArgs) => READ;
    expect(ExpectArgs) => EXPECT;
}
