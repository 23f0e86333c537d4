//! Tool errors and the MCP result shapes (docs/mcp.md#results, docs/error-codes.md).
//!
//! Owns: the public error-code table ([`ToolErrorCode`], with the text that
//! `docs/error-codes.md` is generated from), the tool error value
//! ([`ToolError`]), the success value ([`ToolOutput`]), the size bounds on
//! message, hint and detail, and the rendering of both into a `tools/call`
//! result. It does not own protocol errors (-326xx, see `jsonrpc.rs`),
//! spilling or the response cap (see `artifacts.rs`). [`from_engine`] is
//! the one place a `chromate::Error` becomes a tool error: the code one to
//! one by its string, the message prefixed with the tool's verb, the
//! `detail` keys (docs/error-codes.md) from the variant's fields, and a hint per code.

use serde_json::{json, Map, Value};

/// Longest error message kept, in bytes (docs/mcp.md#errors).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024;
/// Longest hint kept, in bytes (docs/mcp.md#errors).
pub const MAX_HINT_BYTES: usize = 4 * 1024;
/// Largest serialised `detail` kept as is, in bytes (docs/mcp.md#errors).
pub const MAX_DETAIL_BYTES: usize = 8 * 1024;
/// Largest recovery snapshot kept, in bytes (docs/mcp.md#errors, docs/mcp.md#refs).
pub const MAX_RECOVERY_BYTES: usize = 12 * 1024;

macro_rules! error_codes {
    ($($variant:ident => $text:literal, when: $when:literal, detail: $detail:literal;)*) => {
        /// The public, stable error codes of docs/error-codes.md. Append-only: never rename one.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ToolErrorCode {
            $(
                #[doc = $when]
                $variant,
            )*
        }

        impl ToolErrorCode {
            /// Every code, in table order.
            #[cfg_attr(not(test), allow(dead_code))]
            pub const ALL: &'static [ToolErrorCode] = &[$(ToolErrorCode::$variant),*];

            /// The wire spelling, e.g. `NO_MATCH`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ToolErrorCode::$variant => $text,)*
                }
            }

            /// Parses the wire spelling; the inverse of [`ToolErrorCode::as_str`].
            #[cfg_attr(not(test), allow(dead_code))]
            pub fn parse(text: &str) -> Option<ToolErrorCode> {
                match text {
                    $($text => Some(ToolErrorCode::$variant),)*
                    _ => None,
                }
            }

            /// When the code is used (the "When" column of docs/error-codes.md).
            #[cfg_attr(not(test), allow(dead_code))]
            pub fn when(self) -> &'static str {
                match self {
                    $(ToolErrorCode::$variant => $when,)*
                }
            }

            /// The `detail` keys the code carries (the "detail" column of docs/error-codes.md).
            #[cfg_attr(not(test), allow(dead_code))]
            pub fn detail_keys(self) -> &'static str {
                match self {
                    $(ToolErrorCode::$variant => $detail,)*
                }
            }
        }
    };
}

error_codes! {
    NoMatch => "NO_MATCH",
        when: "zero matches at an element action's or read's first check; wait `visible`/`attached` never matched; no such option or tab; a page tool (WebMCP) the page no longer offers",
        detail: "`selector`, `query`, `options?`";
    TimeoutWaitingVisible => "TIMEOUT_WAITING_VISIBLE",
        when: "matched, never visible; or the page answered no check (its script did not yield: `matched` null)",
        detail: "`selector`, `timeout`, `matched`";
    TimeoutWaitingState => "TIMEOUT_WAITING_STATE",
        when: "visible, never enabled/editable/unobscured; never hidden/detached",
        detail: "`selector`, `timeout`, `state`, `obscuredBy?`";
    TimeoutWaitingLoad => "TIMEOUT_WAITING_LOAD",
        when: "navigation or load state not reached",
        detail: "`state`, `timeout`, `url`, `clicked?`";
    Timeout => "TIMEOUT",
        when: "logs wait, eval promise, a page that did not answer in time, a page tool (WebMCP) that did not answer (canceled)",
        detail: "`timeout`, filters";
    ExpectMismatch => "EXPECT_MISMATCH",
        when: "browser_expect failed; check/uncheck did not take",
        detail: "`matcher`, `expected`, `actual`, …";
    EvalThrew => "EVAL_THREW",
        when: "page script threw; a page tool (WebMCP) threw or rejected",
        detail: "`exception`, `origin?`";
    EvalBadArg => "EVAL_BAD_ARG",
        when: "result not serialisable",
        detail: "`returnedType`";
    InvalidArgument => "INVALID_ARGUMENT",
        when: "cross-argument rule; selector rejected by the browser; bad URL, key, option, file, state name, log kind, rule id; a `tab` no open tab has; a ref of another tab",
        detail: "`argument?`, `allowed?`, `selector?`, `reason?` (`unknown-tab`: `allowed` the open tabs; `other-tab`: `ref`, `tab` its owner), `cdpMessage?`, `step?`";
    StateInvalid => "STATE_INVALID",
        when: "dialog blocks the call or none to answer; a page whose document keeps changing; mock limit; trace state or name clash; quota; no capture for no-errors; a page tool (WebMCP) the page canceled, or a browser without WebMCP",
        detail: "`reason` (`dialog-open`: `dialog`, `reopened?`; `document-keeps-changing`: `changes`; `webmcp-canceled`, `webmcp-off`)";
    BareRef => "BARE_REF",
        when: "bare `eN` never issued",
        detail: "`ref`";
    StaleRef => "STALE_REF",
        when: "the ref no longer resolves ([refs](mcp.md#refs))",
        detail: "`ref`, `reason` ∈ detached, document-changed, unknown-ref, ambiguous, no-snapshot; `error.recoverySnapshot` when available";
    NotEditable => "NOT_EDITABLE",
        when: "fill/clear on a container ref or an element that cannot take text",
        detail: "`target`, `role`, `alternative?`";
    NavigationFailed => "NAVIGATION_FAILED",
        when: "main document failed at network level (`net::ERR_…`) or was blocked",
        detail: "`netError`, `url`, `blockedBy?`";
    BrowserUnavailable => "BROWSER_UNAVAILABLE",
        when: "no executable, start failure/timeout, endpoint unreachable",
        detail: "`tried`, `endpoint?`, `reason`";
    DriverError => "DRIVER_ERROR",
        when: "protocol/transport failure, browser lost, a tab's renderer crashed, a call's tab closed while it ran, anything unexpected",
        detail: "`cdpMethod`, `cdpCode`, `cdpMessage` where known; `reason` (`tab-crashed`: `tab`, `url`, `newTab`; `tab-closed`: `tab`)";
    Unsupported => "UNSUPPORTED",
        when: "the connected browser lacks a protocol method the call needs",
        detail: "`cdpMethod`, `feature`";
    SsrfBlocked => "SSRF_BLOCKED",
        when: "an audit with `--block-private-network` reached a loopback, private, link-local or unique-local address (a redirect hop too)",
        detail: "`url`, `class`, `reason`";
    LlmProviderError => "LLM_PROVIDER_ERROR",
        when: "a model provider failed: refused the key, unknown model, rate limited or failing after two retries, no answer in time, an answer chromate cannot read or that breaks its JSON schema twice, a refusal, no provider configured",
        detail: "`provider`, `model`, `status`, `reason`, `attempts`";
}

/// A tool failure after argument validation (docs/mcp.md#errors): `{code, message, hint?, detail?, recoverySnapshot?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ToolErrorCode,
    /// Lower-case, no final period, starting with the tool's verb.
    pub message: String,
    /// The next useful step; every error should have one.
    pub hint: Option<String>,
    /// Structured facts per docs/error-codes.md; never stack traces.
    pub detail: Option<Value>,
    /// A rendered snapshot attached to STALE_REF (docs/mcp.md#refs).
    pub recovery_snapshot: Option<String>,
}

impl ToolError {
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
            hint: None,
            detail: None,
            recovery_snapshot: None,
        }
    }

    /// INVALID_ARGUMENT for a cross-argument rule, with `detail.argument`.
    pub fn invalid_argument(
        message: impl Into<String>,
        argument: &str,
        hint: impl Into<String>,
    ) -> ToolError {
        ToolError::new(ToolErrorCode::InvalidArgument, message)
            .with_hint(hint)
            .with_detail(json!({ "argument": argument }))
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> ToolError {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_detail(mut self, detail: Value) -> ToolError {
        self.detail = Some(detail);
        self
    }

    /// Adds one key to `detail` (creating it as an object if needed).
    pub fn with_detail_key(mut self, key: &str, value: Value) -> ToolError {
        let mut map = match self.detail.take() {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        map.insert(key.to_owned(), value);
        self.detail = Some(Value::Object(map));
        self
    }

    /// The bounded `structuredContent.error` object (bounds applied, docs/mcp.md#errors).
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("code".into(), json!(self.code.as_str()));
        map.insert(
            "message".into(),
            json!(cut_bytes(&self.message, MAX_MESSAGE_BYTES, "…")),
        );
        if let Some(hint) = &self.hint {
            map.insert("hint".into(), json!(cut_bytes(hint, MAX_HINT_BYTES, "…")));
        }
        if let Some(detail) = &self.detail {
            map.insert("detail".into(), bound_detail(detail));
        }
        if let Some(snapshot) = &self.recovery_snapshot {
            map.insert("recoverySnapshot".into(), json!(bound_recovery(snapshot)));
        }
        Value::Object(map)
    }

    /// The text block of docs/mcp.md#errors: `error:`, `code:`, `hint:` lines, then the recovery snapshot.
    /// `recovery_text` replaces the snapshot text (it may have been spilled).
    pub fn to_text(&self, recovery_text: Option<&str>) -> String {
        let mut text = format!(
            "error: {}\ncode:  {}",
            cut_bytes(&self.message, MAX_MESSAGE_BYTES, "…"),
            self.code.as_str()
        );
        if let Some(hint) = &self.hint {
            text.push_str("\nhint:  ");
            text.push_str(&cut_bytes(hint, MAX_HINT_BYTES, "…"));
        }
        let recovery = recovery_text
            .map(str::to_owned)
            .or_else(|| self.recovery_snapshot.as_deref().map(bound_recovery));
        if let Some(recovery) = recovery {
            text.push_str("\nrecovery snapshot:\n");
            text.push_str(&recovery);
        }
        text
    }

    /// The whole `tools/call` result for this error (before the response cap).
    pub fn to_call_result(&self, recovery_text: Option<&str>) -> Value {
        json!({
            "isError": true,
            "content": [{ "type": "text", "text": self.to_text(recovery_text) }],
            "structuredContent": { "error": self.to_json() },
        })
    }
}

/// A successful tool result (docs/mcp.md#success) before spilling and the response cap.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// `structuredContent.result`.
    pub result: Value,
    /// Replaces the compact JSON of `result` as `content[0]` (browser_snapshot's
    /// rendering, browser_batch's step summary).
    pub text: Option<String>,
    /// browser_batch only: a batch whose `ok` is false is a success shape with `isError:true`.
    pub is_error: bool,
    /// Set by the tool when it already made its own observation (browser_batch);
    /// otherwise the server asks the observation hook after observation-bearing tools.
    pub observation: Option<Observation>,
    /// Files the result hands back as `resource_link` blocks (docs/mcp.md#resources): a screenshot, a trace
    /// zip, the downloads its observation reports.
    pub links: Vec<std::path::PathBuf>,
}

impl ToolOutput {
    /// A plain result: `content[0]` is its compact JSON.
    pub fn new(result: Value) -> ToolOutput {
        ToolOutput {
            result,
            text: None,
            is_error: false,
            observation: None,
            links: Vec::new(),
        }
    }

    /// Adds a `resource_link` to `path` (docs/mcp.md#resources).
    pub fn with_link(mut self, path: std::path::PathBuf) -> ToolOutput {
        self.links.push(path);
        self
    }
}

/// Maps an engine error onto the tool error (docs/error-codes.md), one to
/// one by `err.code().as_str()`. `verb` starts the message unless the engine
/// already put it there (element actions name their verb themselves).
pub fn from_engine(verb: &str, err: &chromate::Error) -> ToolError {
    use chromate::Error as E;
    // A timeout on a page that stopped answering: the call's own timeout error, with a hint
    // saying what chromate found and did.
    if let Some(recovery) = err.recovery() {
        return from_engine(verb, err.unstalled()).with_hint(recovery_hint(recovery));
    }
    let code = from_engine_code(err.code());
    let text = err.to_string();
    let message = if text.starts_with(&format!("{verb}:")) {
        text
    } else {
        format!("{verb}: {text}")
    };
    let ms = |timeout: &std::time::Duration| {
        json!(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX))
    };
    let detail = match err {
        E::BrowserNotFound { tried } => json!({ "tried": tried, "reason": "not-found" }),
        E::LaunchFailed { reason, .. } => json!({ "tried": [], "reason": reason }),
        E::ConnectFailed { endpoint, reason } => {
            json!({ "tried": [], "endpoint": endpoint, "reason": reason })
        }
        E::ProtocolTooOld { found, needed } => {
            json!({ "tried": [], "reason": format!("protocol {found} < {needed}") })
        }
        E::Protocol {
            method,
            code: cdp_code,
            message: cdp_message,
        } => {
            if code == ToolErrorCode::Unsupported {
                json!({ "cdpMethod": method, "feature": verb })
            } else {
                json!({ "cdpMethod": method, "cdpCode": cdp_code, "cdpMessage": cdp_message, "reason": "protocol-error" })
            }
        }
        E::CommandTimeout { method, .. } => {
            json!({ "cdpMethod": method, "reason": "command-timeout" })
        }
        E::ConnectionClosed { .. } => json!({ "reason": "browser-closed" }),
        E::Decode { method, .. } => json!({ "cdpMethod": method, "reason": "decode" }),
        E::UnknownStatus { method, status } => {
            json!({ "cdpMethod": method, "status": status, "reason": "unknown-status" })
        }
        E::PageClosed => json!({ "reason": "page-closed" }),
        E::PageCrashed { url } => json!({ "reason": "tab-crashed", "url": url }),
        E::Io { .. } => json!({ "reason": "io" }),
        E::NavigationFailed { url, net_error } => json!({ "netError": net_error, "url": url }),
        E::TimeoutWaitingLoad {
            state,
            url,
            timeout,
        } => json!({ "state": state, "timeout": ms(timeout), "url": url }),
        E::EvalThrew { message, origin } => match origin {
            Some(origin) => json!({ "exception": message, "origin": origin }),
            None => json!({ "exception": message }),
        },
        E::EvalBadArg { returned_type } => json!({ "returnedType": returned_type }),
        E::Timeout { what, timeout } => json!({ "timeout": ms(timeout), "what": what }),
        E::InvalidSelector {
            selector,
            browser_message,
            ..
        } => {
            let mut detail = json!({ "selector": selector, "reason": "invalid-selector" });
            if let Some(text) = browser_message {
                detail["cdpMessage"] = json!(text);
            }
            detail
        }
        E::NoAnswer { method, timeout } => {
            json!({ "timeout": ms(timeout), "cdpMethod": method, "reason": "no-answer" })
        }
        E::InvalidArgument {
            argument, allowed, ..
        } => {
            let mut detail = json!({ "reason": "invalid" });
            if let Some(argument) = argument {
                detail["argument"] = json!(argument);
            }
            if !allowed.is_empty() {
                detail["allowed"] = json!(allowed);
            }
            detail
        }
        E::DialogOpen { .. } => json!({ "reason": "dialog-open" }),
        E::StateInvalid { .. } => json!({ "reason": "state-invalid" }),
        E::DocumentKeepsChanging { changes } => {
            json!({ "reason": "document-keeps-changing", "changes": changes })
        }
        E::NoMatch { selector, .. } => json!({ "selector": selector, "query": selector }),
        E::NoSuchOption {
            selector,
            value,
            options,
            ..
        } => json!({ "selector": selector, "query": value, "options": options }),
        E::TimeoutWaitingVisible {
            selector,
            timeout,
            matched,
            ..
        } => json!({ "selector": selector, "timeout": ms(timeout), "matched": matched }),
        E::TimeoutWaitingState {
            selector,
            timeout,
            state,
            obscured_by,
            ..
        } => {
            let mut detail =
                json!({ "selector": selector, "timeout": ms(timeout), "state": state.as_str() });
            if let Some(by) = obscured_by {
                detail["obscuredBy"] = json!(by);
            }
            detail
        }
        E::BareRef { element_ref } => json!({ "ref": element_ref }),
        E::StaleRef {
            element_ref,
            reason,
        } => json!({ "ref": element_ref, "reason": reason.as_str() }),
        E::NotEditable { target, role, .. } => json!({ "target": target, "role": role }),
        E::ExpectMismatch {
            expected, actual, ..
        } => json!({ "expected": expected, "actual": actual }),
        _ => json!({ "reason": "unexpected" }),
    };
    let hint = match err {
        E::BareRef { element_ref } => format!(
            "use ref={element_ref} from the latest snapshot, or css={element_ref} for a literal <{element_ref}> element"
        ),
        E::DialogOpen { .. } => "answer it with browser_dialog accept or dismiss".to_owned(),
        E::InvalidSelector { .. } => {
            "fix the selector's syntax, or use text=, role= or a ref from browser_snapshot".to_owned()
        }
        E::ConnectionClosed { .. } => {
            "the browser is gone; the next call relaunches it".to_owned()
        }
        E::ConnectFailed { .. } => {
            "the --cdp-endpoint browser or pool did not give a browser (its answer is in the message): check the endpoint's address and token (or --cdp-authorization); a full pool: retry later, raise --cdp-timeout or the pool's concurrency".to_owned()
        }
        E::DocumentKeepsChanging { .. } => {
            "the page keeps navigating or reloading itself: open a new tab with browser_page action=open (then close this one with browser_page action=close), or navigate elsewhere with browser_navigate, which the page's own navigations may overtake".to_owned()
        }
        E::PageCrashed { .. } => {
            "the tab's renderer crashed; the next call opens a new tab in its place (the browser runs on)".to_owned()
        }
        E::NoSuchOption { .. } => {
            "pass one of detail.options (an option's value or its label)".to_owned()
        }
        _ => hint_for(code).to_owned(),
    };
    ToolError::new(code, message)
        .with_hint(hint)
        .with_detail(detail)
}

/// The public code of an engine code, by its string. Every engine code is one (a unit test
/// walks the engine's table); DRIVER_ERROR only stands in for a code a newer engine could add.
pub fn from_engine_code(code: chromate::ErrorCode) -> ToolErrorCode {
    ToolErrorCode::parse(code.as_str()).unwrap_or(ToolErrorCode::DriverError)
}

/// The hint of a timeout on a page that stopped answering: what chromate found and did, then
/// the next useful step.
pub fn recovery_hint(recovery: chromate::error::Recovery) -> String {
    let next = match recovery {
        chromate::error::Recovery::ScriptStopped { .. } => {
            "the tab answers again: retry, or look at it with browser_snapshot"
        }
        chromate::error::Recovery::RendererStuck { .. } => {
            "chromate replaced the tab with a new one on about:blank: navigate again (refs from before are gone)"
        }
        _ => "check the browser process (browser_status browserPid); calls fail until it answers",
    };
    format!("{recovery}; {next}")
}

/// The default hint of a code: the next useful step (docs/error-codes.md).
pub fn hint_for(code: ToolErrorCode) -> &'static str {
    match code {
        ToolErrorCode::NoMatch => "check the selector against a fresh browser_snapshot, or probe with browser_exists",
        ToolErrorCode::TimeoutWaitingVisible => "the element exists but is hidden; reveal it first or check browser_snapshot",
        ToolErrorCode::TimeoutWaitingState => "wait for the page to enable or uncover the element (browser_wait), then retry",
        ToolErrorCode::TimeoutWaitingLoad => "raise timeout_ms, or check the page with browser_snapshot",
        ToolErrorCode::Timeout => "raise timeout_ms, or check what the page is doing with browser_logs",
        ToolErrorCode::ExpectMismatch => "look at the page with browser_snapshot or browser_read",
        ToolErrorCode::EvalThrew => "fix the script; browser_logs kind=error lists page errors",
        ToolErrorCode::EvalBadArg => "return JSON-serialisable data, e.g. el.textContent instead of el",
        ToolErrorCode::InvalidArgument => "fix the argument named in the message",
        ToolErrorCode::StateInvalid => "check browser_status, or answer an open dialog with browser_dialog",
        ToolErrorCode::BareRef => "use ref=eN from the latest snapshot",
        ToolErrorCode::StaleRef => "take a fresh snapshot and use the new ref; refs are never reassigned",
        ToolErrorCode::NotEditable => "use browser_element check/select or browser_upload for this element",
        ToolErrorCode::NavigationFailed => "check the URL and that the server is reachable",
        ToolErrorCode::BrowserUnavailable => "install Chromium (sudo apt install chromium, brew install --cask chromium) or set CHROMATE_BROWSER / --browser",
        ToolErrorCode::DriverError => "retry the call; browser_status shows whether the browser is still running",
        ToolErrorCode::Unsupported => "this browser lacks a protocol method the call needs; use a newer Chromium",
        ToolErrorCode::SsrfBlocked => "--block-private-network refused a private address; drop the flag to audit a local server, or allow one origin with --allow-private",
        ToolErrorCode::LlmProviderError => "check the provider, model and key (docs/llm.md); the error's hint says which",
    }
}

/// The post-action observation (docs/mcp.md#observations) as two parts, because spilling (docs/mcp.md#spilling)
/// applies to the snapshot/diff part only and the tripwire stays after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The dialog notice, full rendering, or diff (docs/mcp.md#observations).
    pub body: String,
    /// `download: <name> (<bytes> bytes) <state>` (or `… not saved: <reason>`) per download
    /// that ended since the previous observation (docs/mcp.md#downloads), printed before the tripwire.
    pub downloads: Vec<String>,
    /// The saved files of those downloads, for the call's `resource_link` blocks.
    pub links: Vec<std::path::PathBuf>,
    /// `errors: <n> (logCursor <c>)`, absent only if logs cannot be captured.
    pub tripwire: Option<String>,
}

impl Observation {
    /// The lines after the body: the download lines, then the tripwire.
    pub fn footer(&self) -> impl Iterator<Item = &String> {
        self.downloads.iter().chain(&self.tripwire)
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary, appending
/// `marker` (whose bytes count toward `max`) when anything was cut.
pub fn cut_bytes(text: &str, max: usize, marker: &str) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let keep = floor_char_boundary(text, max.saturating_sub(marker.len()));
    format!("{}{marker}", &text[..keep])
}

/// The largest index `<= index` that is a char boundary of `text`.
pub fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    let mut index = index;
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn bound_detail(detail: &Value) -> Value {
    let serialised = detail.to_string();
    if serialised.len() <= MAX_DETAIL_BYTES {
        return detail.clone();
    }
    json!({
        "truncated": true,
        "totalBytes": serialised.len(),
        "preview": cut_bytes(&serialised, MAX_DETAIL_BYTES / 2, ""),
    })
}

fn bound_recovery(snapshot: &str) -> String {
    cut_bytes(
        snapshot,
        MAX_RECOVERY_BYTES,
        "\n… (recovery snapshot truncated)",
    )
}

#[cfg(test)]
mod tests;
