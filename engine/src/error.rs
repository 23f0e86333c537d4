//! `chromate::Error` and its stable [`ErrorCode`].
//!
//! Every failure of the engine is one variant carrying its context (selector, timeout, CDP
//! method, URL...). The code of a variant is API: codes are never renamed, only added, and their
//! strings come from one table (the `error_codes!` declaration behind [`ErrorCode::ALL`]) so
//! `as_str` and parsing cannot drift apart. The command layer maps these one to one onto the public
//! codes of the contract, and a test there checks that no engine code falls back.

use std::time::Duration;

/// Declares [`ErrorCode`] from one table: each code's variant, wire string and meaning. The
/// command layer declares its public codes with a macro of the same form, so the two tables read
/// alike and a test there checks every engine code is one of its codes.
macro_rules! error_codes {
    ($($variant:ident => $text:literal, when: $when:literal;)*) => {
        /// A stable, machine-readable error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $(
                #[doc = $when]
                $variant,
            )*
        }

        impl ErrorCode {
            /// Every code, in table order: the single source for `as_str` and `parse`.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            /// The code's stable string (`NO_MATCH`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $text,)*
                }
            }

            /// The code for a string, if it is one; the inverse of [`ErrorCode::as_str`].
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some(ErrorCode::$variant),)*
                    _ => None,
                }
            }

            /// When the code is used.
            pub fn when(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $when,)*
                }
            }
        }
    };
}

error_codes! {
    NoMatch => "NO_MATCH",
        when: "Nothing matched the selector at the first check.";
    TimeoutWaitingVisible => "TIMEOUT_WAITING_VISIBLE",
        when: "Matches existed but none became visible in time.";
    TimeoutWaitingState => "TIMEOUT_WAITING_STATE",
        when: "The element never reached the required state (enabled, editable, unobscured...).";
    TimeoutWaitingLoad => "TIMEOUT_WAITING_LOAD",
        when: "A navigation or load state was not reached in time.";
    Timeout => "TIMEOUT",
        when: "Any other wait ran out of time.";
    ExpectMismatch => "EXPECT_MISMATCH",
        when: "An assertion did not hold.";
    EvalThrew => "EVAL_THREW",
        when: "Page script threw.";
    EvalBadArg => "EVAL_BAD_ARG",
        when: "A script result could not be returned as JSON.";
    InvalidArgument => "INVALID_ARGUMENT",
        when: "The caller passed something unusable.";
    StateInvalid => "STATE_INVALID",
        when: "The call cannot run in the current state (a dialog is open, nothing to answer...).";
    BareRef => "BARE_REF",
        when: "A bare `eN` that was never issued.";
    StaleRef => "STALE_REF",
        when: "A ref that no longer names exactly one live element.";
    NotEditable => "NOT_EDITABLE",
        when: "The target cannot take text.";
    NavigationFailed => "NAVIGATION_FAILED",
        when: "The main document failed at network level or was blocked.";
    BrowserUnavailable => "BROWSER_UNAVAILABLE",
        when: "No browser could be found, started or reached.";
    DriverError => "DRIVER_ERROR",
        when: "A protocol or transport failure, or the browser went away.";
    Unsupported => "UNSUPPORTED",
        when: "The browser lacks a protocol method the call needs.";
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first state an element did not reach before a [`Error::TimeoutWaitingState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnmetState {
    /// Enabled (not `disabled`, not `aria-disabled`).
    Enabled,
    /// Able to take text.
    Editable,
    /// Not covered at its action point.
    Unobscured,
    /// Not moving between two animation frames.
    Stable,
    /// Inside the viewport (`in the viewport`).
    InViewport,
    /// Visible (an `enabled` wait whose element stayed hidden).
    Visible,
    /// Hidden, or gone.
    Hidden,
    /// Gone from the document.
    Detached,
}

impl UnmetState {
    /// The words messages and the contract's `detail.state` use (`enabled`, `in the viewport`).
    pub fn as_str(self) -> &'static str {
        match self {
            UnmetState::Enabled => "enabled",
            UnmetState::Editable => "editable",
            UnmetState::Unobscured => "unobscured",
            UnmetState::Stable => "stable",
            UnmetState::InViewport => "in the viewport",
            UnmetState::Visible => "visible",
            UnmetState::Hidden => "hidden",
            UnmetState::Detached => "detached",
        }
    }
}

impl std::fmt::Display for UnmetState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for UnmetState {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for UnmetState {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Why a ref no longer resolves (docs/mcp.md#refs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaleReason {
    /// The element was removed from its document.
    Detached,
    /// The page navigated, reloaded, or the tab changed after the ref was issued.
    DocumentChanged,
    /// This session never issued the ref.
    UnknownRef,
    /// The element now sits in another document or frame.
    Ambiguous,
    /// No snapshot since the session started or the baseline was reset.
    NoSnapshot,
}

impl StaleReason {
    /// The contract's reason string.
    pub fn as_str(self) -> &'static str {
        match self {
            StaleReason::Detached => "detached",
            StaleReason::DocumentChanged => "document-changed",
            StaleReason::UnknownRef => "unknown-ref",
            StaleReason::Ambiguous => "ambiguous",
            StaleReason::NoSnapshot => "no-snapshot",
        }
    }

    /// The human explanation used in messages.
    pub fn explain(self) -> &'static str {
        match self {
            StaleReason::Detached => "the element was removed from the document",
            StaleReason::DocumentChanged => {
                "the page navigated, reloaded, or the tab changed after the ref was issued"
            }
            StaleReason::UnknownRef => "this session never issued the ref",
            StaleReason::Ambiguous => "the ref no longer identifies one element of its page",
            StaleReason::NoSnapshot => {
                "no snapshot since the session started or the baseline was reset"
            }
        }
    }
}

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No browser executable was found.
    #[error("no chromium or chrome executable found (tried: {}); install one (debian/ubuntu: `sudo apt-get install chromium`) or set CHROMATE_BROWSER", tried.join(", "))]
    BrowserNotFound {
        /// Every path and name that was tried.
        tried: Vec<String>,
    },
    /// The browser process could not be started or exited before it was ready.
    #[error("browser failed to start: {reason}{}", stderr_suffix(stderr_tail))]
    LaunchFailed {
        /// What went wrong (exit status, spawn error, timeout).
        reason: String,
        /// The last lines the browser wrote to stderr.
        stderr_tail: String,
    },
    /// A remote browser endpoint could not be reached.
    #[error("cannot connect to browser endpoint {endpoint}: {reason}")]
    ConnectFailed {
        /// The endpoint as given.
        endpoint: String,
        /// Why the connection failed.
        reason: String,
    },
    /// The browser speaks a protocol version chromate cannot use.
    #[error("browser protocol version {found} is too old; chromate needs {needed} or newer")]
    ProtocolTooOld {
        /// What the browser reports.
        found: String,
        /// What chromate needs.
        needed: String,
    },
    /// The browser answered a command with an error.
    #[error("{method} failed: {message} (cdp error {code})")]
    Protocol {
        /// The CDP method.
        method: String,
        /// The CDP error code.
        code: i64,
        /// The CDP error message.
        message: String,
    },
    /// A command got no answer in time.
    #[error("{method} got no answer within {}ms", timeout.as_millis())]
    CommandTimeout {
        /// The CDP method.
        method: String,
        /// The time it was given.
        timeout: Duration,
    },
    /// A command sent under a call's deadline got no answer before it passed: the page (or the
    /// browser) is busy or stopped. The per-command timeout is [`Error::CommandTimeout`].
    #[error("timed out after {}ms waiting for the page to answer {method}", timeout.as_millis())]
    NoAnswer {
        /// The CDP method.
        method: String,
        /// The call's timeout.
        timeout: Duration,
    },
    /// A call ran out of time because the page stopped answering, and chromate did something
    /// about it: `error` is the timeout the call reports (its code is the call's code),
    /// `recovery` what was done.
    #[error("{error}; {recovery}")]
    Stalled {
        /// The call's own timeout error.
        #[source]
        error: Box<Error>,
        /// What chromate found and did.
        recovery: Recovery,
    },
    /// The connection to the browser is gone (crash, kill, close).
    #[error("the browser connection closed: {reason}")]
    ConnectionClosed {
        /// What ended it.
        reason: String,
    },
    /// A message from the browser could not be decoded.
    #[error("cannot decode the answer to {method}")]
    Decode {
        /// The CDP method or event.
        method: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// A page script answered with a `status` chromate does not know: the two sides of a page
    /// helper disagree, which is a bug of chromate's, never something to default.
    #[error("{method} answered with an unknown status {status:?}")]
    UnknownStatus {
        /// The page function (`actionability.check`).
        method: String,
        /// The status it gave (empty when it gave none).
        status: String,
    },
    /// The main document failed to load at network level.
    #[error("navigation to {url} failed: {net_error}")]
    NavigationFailed {
        /// The URL being loaded.
        url: String,
        /// The `net::ERR_...` text.
        net_error: String,
    },
    /// A load state was not reached in time.
    #[error("timed out after {}ms waiting for {state} of {url}", timeout.as_millis())]
    TimeoutWaitingLoad {
        /// The state waited for (`load`, `domcontentloaded`, `networkidle`, `commit`).
        state: String,
        /// The URL being loaded.
        url: String,
        /// The time it was given.
        timeout: Duration,
    },
    /// Page script threw.
    #[error("evaluation threw: {message}")]
    EvalThrew {
        /// The exception's first line (`TypeError: x is undefined`).
        message: String,
        /// `url:line:column` of the throw, when known.
        origin: Option<String>,
    },
    /// A script result is not JSON-serialisable.
    #[error("evaluation returned a {returned_type}, which cannot be returned as json")]
    EvalBadArg {
        /// What came back (`function`, `symbol`, `bigint`, `node`, `window`, `circular`).
        returned_type: String,
    },
    /// A wait other than element and load waits ran out.
    #[error("timed out after {}ms waiting for {what}", timeout.as_millis())]
    Timeout {
        /// What was waited for.
        what: String,
        /// The time it was given.
        timeout: Duration,
    },
    /// The caller passed something unusable.
    #[error("{message}")]
    InvalidArgument {
        /// What is wrong, naming the argument.
        message: String,
        /// The argument at fault, as the API names it (`selector`, `key`, `files`), when one is.
        argument: Option<String>,
        /// The values it takes, when there are few enough to list (`Shift`, `Control`, …).
        allowed: Vec<String>,
    },
    /// The browser rejected a selector (`css=[`): chromate's reason in the message, the
    /// browser's own text beside it.
    #[error("{verb}: invalid selector {selector}: {reason}")]
    InvalidSelector {
        /// The call's verb.
        verb: String,
        /// The selector in canonical form.
        selector: String,
        /// Why, in chromate's words (`not a valid CSS selector`).
        reason: String,
        /// The browser's own message, when it gave one.
        browser_message: Option<String>,
    },
    /// A page script's dialog is open and blocks the call.
    #[error("a dialog is open: {message}")]
    DialogOpen {
        /// The dialog's message.
        message: String,
    },
    /// The call cannot run now.
    #[error("{message}")]
    StateInvalid {
        /// Why.
        message: String,
    },
    /// The target page or browser went away during the call.
    #[error("the page was closed")]
    PageClosed,
    /// The page kept replacing its document while a call worked on it (it navigates or
    /// reloads itself without pause): the call followed `changes` new documents and gave up.
    #[error("the page's document changed {changes} times during the call: it keeps navigating or reloading itself")]
    DocumentKeepsChanging {
        /// How many new documents the call followed.
        changes: u32,
    },
    /// The tab's renderer process crashed (was killed, ran out of memory): its page is gone,
    /// the browser and its other tabs are not.
    #[error("the page crashed (its renderer process is gone) on {url}")]
    PageCrashed {
        /// The URL the tab showed when it crashed.
        url: String,
    },
    /// Nothing matched the selector at the first check (or a wait for it never matched).
    #[error("{verb}: no element matches {selector}")]
    NoMatch {
        /// The action's verb (`click`).
        verb: String,
        /// The selector in canonical form (`css=#save`).
        selector: String,
    },
    /// A `<select>` has no option with that value or label.
    #[error("{verb}: no option {value:?} in {selector} ({count} options)")]
    NoSuchOption {
        /// The action's verb (`select`).
        verb: String,
        /// The select's selector in canonical form.
        selector: String,
        /// The value or label asked for.
        value: String,
        /// The labels of its first 20 options, in document order.
        options: Vec<String>,
        /// How many options it has.
        count: usize,
    },
    /// Elements matched but none became visible in time.
    #[error("{verb}: timed out after {}ms waiting for {selector} to become visible ({})", timeout.as_millis(), matched_suffix(*matched))]
    TimeoutWaitingVisible {
        /// The action's verb.
        verb: String,
        /// The selector in canonical form.
        selector: String,
        /// The time it was given.
        timeout: Duration,
        /// How many elements matched at the last check; `None` when the page answered no
        /// check at all (its script did not yield), so nothing is known of its elements.
        matched: Option<usize>,
    },
    /// The element never reached a required state.
    #[error("{verb}: timed out after {}ms waiting for {selector} to become {state}{}", timeout.as_millis(), obscured_suffix(obscured_by.as_deref()))]
    TimeoutWaitingState {
        /// The action's verb.
        verb: String,
        /// The selector in canonical form.
        selector: String,
        /// The time it was given.
        timeout: Duration,
        /// The first unmet state: `enabled`, `editable`, `unobscured`, `hidden`, `detached`.
        state: UnmetState,
        /// What covers the element (`div#overlay.modal-backdrop`), for `unobscured`.
        obscured_by: Option<String>,
    },
    /// A bare `eN` that this session never issued.
    #[error("{element_ref} looks like a snapshot ref but this session never issued it")]
    BareRef {
        /// The ref as written (`e7`).
        element_ref: String,
    },
    /// A ref that no longer names exactly one live element.
    #[error("ref={element_ref} is stale: {}", reason.explain())]
    StaleRef {
        /// The ref (`e7`).
        element_ref: String,
        /// Why it is stale.
        reason: StaleReason,
    },
    /// The target cannot take text.
    #[error("{verb}: {target} is not an editable field ({role})")]
    NotEditable {
        /// The action's verb.
        verb: String,
        /// The selector or ref.
        target: String,
        /// The element's role.
        role: String,
    },
    /// An assertion did not hold.
    #[error("{message}")]
    ExpectMismatch {
        /// `expected #msg to have text "Saved", but got "Saving…" after 5000ms`.
        message: String,
        /// What was expected.
        expected: String,
        /// What was there; `None` when nothing matched a text check.
        actual: Option<String>,
    },
    /// File or process I/O failed.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// What chromate found and did when a call's deadline passed while the page was not
/// answering (`wait::stall`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recovery {
    /// The page's script did not yield for `waited`; chromate stopped it
    /// (`Runtime.terminateExecution`) and the page answers again.
    ScriptStopped {
        /// The call's timeout.
        waited: Duration,
    },
    /// The page's renderer answered nothing, not even `Runtime.terminateExecution`, while the
    /// browser did; the tab may stay stuck.
    RendererStuck {
        /// The call's timeout.
        waited: Duration,
    },
    /// The browser itself did not answer (its process may be stopped or overloaded).
    BrowserUnresponsive {
        /// The call's timeout.
        waited: Duration,
    },
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Recovery::ScriptStopped { waited } => write!(
                f,
                "the page's script did not yield for {} ms; chromate stopped it",
                waited.as_millis()
            ),
            Recovery::RendererStuck { waited } => write!(
                f,
                "the page did not answer for {} ms and could not be stopped",
                waited.as_millis()
            ),
            Recovery::BrowserUnresponsive { waited } => write!(
                f,
                "the browser did not answer for {} ms (its process may be stopped or overloaded)",
                waited.as_millis()
            ),
        }
    }
}

fn matched_suffix(matched: Option<usize>) -> String {
    match matched {
        Some(matched) => format!("{matched} elements match, none visible"),
        None => "the page answered no check".to_owned(),
    }
}

fn obscured_suffix(obscured_by: Option<&str>) -> String {
    obscured_by
        .map(|by| format!(" ({by} covers it)"))
        .unwrap_or_default()
}

fn stderr_suffix(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("; browser stderr ends with:\n{}", tail.trim_end())
    }
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::BrowserNotFound { .. }
            | Error::LaunchFailed { .. }
            | Error::ConnectFailed { .. }
            | Error::ProtocolTooOld { .. } => ErrorCode::BrowserUnavailable,
            Error::Protocol { code: -32601, .. } => ErrorCode::Unsupported,
            Error::Protocol { .. }
            | Error::CommandTimeout { .. }
            | Error::ConnectionClosed { .. }
            | Error::Decode { .. }
            | Error::UnknownStatus { .. }
            | Error::PageClosed
            | Error::PageCrashed { .. }
            | Error::Io { .. } => ErrorCode::DriverError,
            Error::NavigationFailed { .. } => ErrorCode::NavigationFailed,
            Error::TimeoutWaitingLoad { .. } => ErrorCode::TimeoutWaitingLoad,
            Error::EvalThrew { .. } => ErrorCode::EvalThrew,
            Error::EvalBadArg { .. } => ErrorCode::EvalBadArg,
            Error::Timeout { .. } | Error::NoAnswer { .. } => ErrorCode::Timeout,
            Error::Stalled { error, .. } => error.code(),
            Error::InvalidArgument { .. } | Error::InvalidSelector { .. } => {
                ErrorCode::InvalidArgument
            }
            Error::DialogOpen { .. }
            | Error::StateInvalid { .. }
            | Error::DocumentKeepsChanging { .. } => ErrorCode::StateInvalid,
            Error::NoMatch { .. } | Error::NoSuchOption { .. } => ErrorCode::NoMatch,
            Error::TimeoutWaitingVisible { .. } => ErrorCode::TimeoutWaitingVisible,
            Error::TimeoutWaitingState { .. } => ErrorCode::TimeoutWaitingState,
            Error::BareRef { .. } => ErrorCode::BareRef,
            Error::StaleRef { .. } => ErrorCode::StaleRef,
            Error::NotEditable { .. } => ErrorCode::NotEditable,
            Error::ExpectMismatch { .. } => ErrorCode::ExpectMismatch,
        }
    }

    /// INVALID_ARGUMENT for a selector the page's `selector.parse`/`resolve` rejected: `answer`
    /// carries `reason` (chromate's words) and `browserMessage` (the browser's), as every page
    /// helper passes them on.
    pub(crate) fn invalid_selector(verb: &str, selector: &str, answer: &serde_json::Value) -> Self {
        let text = |key: &str| answer.get(key).and_then(serde_json::Value::as_str);
        Error::InvalidSelector {
            verb: verb.into(),
            selector: selector.into(),
            reason: text("reason")
                .filter(|r| !r.is_empty())
                .unwrap_or("the browser rejected it")
                .into(),
            browser_message: text("browserMessage").map(str::to_string),
        }
    }

    /// Whether this is a deadline running out (any of the timeout codes).
    pub(crate) fn is_timeout(&self) -> bool {
        matches!(
            self.code(),
            ErrorCode::Timeout
                | ErrorCode::TimeoutWaitingLoad
                | ErrorCode::TimeoutWaitingVisible
                | ErrorCode::TimeoutWaitingState
        )
    }

    /// The error itself, or the timeout a [`Error::Stalled`] wraps.
    pub fn unstalled(&self) -> &Error {
        match self {
            Error::Stalled { error, .. } => error.unstalled(),
            other => other,
        }
    }

    /// What chromate did about a page that stopped answering, if this error says.
    pub fn recovery(&self) -> Option<Recovery> {
        match self {
            Error::Stalled { recovery, .. } => Some(*recovery),
            _ => None,
        }
    }

    /// [`Error::InvalidArgument`] that names no one argument.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            message: message.into(),
            argument: None,
            allowed: Vec::new(),
        }
    }

    /// [`Error::InvalidArgument`] about `argument`.
    pub fn invalid_argument_of(argument: &str, message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            message: message.into(),
            argument: Some(argument.into()),
            allowed: Vec::new(),
        }
    }

    /// The same error with the values its argument takes (an [`Error::InvalidArgument`] only).
    pub(crate) fn with_allowed<S: Into<String>>(self, values: impl IntoIterator<Item = S>) -> Self {
        match self {
            Error::InvalidArgument {
                message, argument, ..
            } => Error::InvalidArgument {
                message,
                argument,
                allowed: values.into_iter().map(Into::into).collect(),
            },
            other => other,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_string() {
        assert_eq!(ErrorCode::ALL.len(), 17);
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
            assert!(code.when().ends_with('.'), "{code}: {}", code.when());
        }
        assert_eq!(ErrorCode::parse("NOPE"), None);
        assert_eq!(ErrorCode::DriverError.as_str(), "DRIVER_ERROR");
        assert_eq!(
            ErrorCode::TimeoutWaitingState.as_str(),
            "TIMEOUT_WAITING_STATE"
        );
    }

    #[test]
    fn an_unmet_state_reads_as_the_words_it_always_had() {
        let states = [
            (UnmetState::Enabled, "enabled"),
            (UnmetState::Editable, "editable"),
            (UnmetState::Unobscured, "unobscured"),
            (UnmetState::Stable, "stable"),
            (UnmetState::InViewport, "in the viewport"),
            (UnmetState::Visible, "visible"),
            (UnmetState::Hidden, "hidden"),
            (UnmetState::Detached, "detached"),
        ];
        for (state, text) in states {
            assert_eq!(state.as_str(), text);
            assert_eq!(state.to_string(), text);
            assert!(state == *text);
        }
        let err = Error::TimeoutWaitingState {
            verb: "click".into(),
            selector: "css=#save".into(),
            timeout: Duration::from_millis(300),
            state: UnmetState::InViewport,
            obscured_by: None,
        };
        assert_eq!(
            err.to_string(),
            "click: timed out after 300ms waiting for css=#save to become in the viewport"
        );
        let err = Error::TimeoutWaitingState {
            verb: "click".into(),
            selector: "css=#save".into(),
            timeout: Duration::from_millis(300),
            state: UnmetState::Unobscured,
            obscured_by: Some("div#overlay".into()),
        };
        assert_eq!(
            err.to_string(),
            "click: timed out after 300ms waiting for css=#save to become unobscured (div#overlay covers it)"
        );
    }

    #[test]
    fn messages_are_lower_case_without_final_period() {
        let err = Error::NavigationFailed {
            url: "http://127.0.0.1:9/".into(),
            net_error: "net::ERR_CONNECTION_REFUSED".into(),
        };
        assert_eq!(
            err.to_string(),
            "navigation to http://127.0.0.1:9/ failed: net::ERR_CONNECTION_REFUSED"
        );
        assert_eq!(err.code(), ErrorCode::NavigationFailed);
    }
}
