//! The tools: the 28 (docs/tools.md), the audit capability's and browser_webmcp
//! (`--caps webmcp`), in tools/list order, the registry a front end offers, and the context a
//! tool handler runs with.
//!
//! Owns: [`TOOLS`] and [`AUDIT_TOOLS`] (each tool's declaration, declared once in its group
//! file), [`Registry`] (those and the tools of the crates above, such as the flows, filtered
//! by the capabilities a front end offers; [`Registry::prepare`] finds and validates a
//! call), the typed call ([`ToolCall`]) a validated argument map turns into, dispatch to each
//! tool's cross-argument `check` and async handler, tools/list entries, and [`ToolContext`]
//! (session, cancellation, progress). Does not own: validation itself (`schema.rs`),
//! scheduling (the front ends) or result rendering (`error.rs`, `artifacts.rs`).
//!
//! Adding a tool: in a group file, declare its arguments once with
//! `tool_args!` (each field of the args struct beside its `Arg`), then
//! `pub const DECL: ToolDecl` with `args: TheArgs::ARGS` and what else the declaration says
//! (capability, where it runs, spill label), the handler (and a `check` if the tool has
//! cross-argument rules); then add one line to `registry!` below.

use serde_json::{json, Map, Value};

use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::session::{Refusal, ToolSession};

pub mod schema;

mod batch;
mod eval;
mod input;
mod logs;
mod mock;
mod navigation;
pub mod qa;
mod read;
mod screenshot;
mod snapshot;
mod state;
mod status;
mod tabs;
mod trace;
pub mod vision;
pub mod webmcp;

pub use crate::call::{cancelled_error, Cancel, Progress};
pub use input::resolve_path;
pub use navigation::{url_hint, url_is_navigable, FILE_URL_HINT};
pub use schema::{ArgError, Capability, Defaults, Runs, ToolDecl};
pub(crate) use tabs::open_then_load;

use schema::{Arg, IntDefault};

/// Everything a handler may touch while it runs.
pub struct ToolContext<'a> {
    /// Server-held state: config, artifacts, mocks, journal, trace (and later the browser).
    pub session: &'a mut ToolSession,
    /// Fires when `notifications/cancelled` names this call or the server shuts down.
    pub cancel: Cancel,
    /// The phase and step count reported in `notifications/progress`.
    pub progress: Progress,
}

/// The active page and a locator for `selector` with `timeout_ms`, for an
/// element tool: STATE_INVALID while a dialog is open, STALE_REF
/// `no-snapshot` (with a recovery snapshot) for a ref without a baseline,
/// INVALID_ARGUMENT for a malformed selector. The selector is parsed here, once: the checks
/// read the parsed form and the locator carries it (its `selector()` is what results echo,
/// [`echo_of`]).
pub async fn locate(
    ctx: &mut ToolContext<'_>,
    verb: &str,
    selector: &str,
    timeout_ms: u64,
) -> Result<(chromate::Page, chromate::Locator), ToolError> {
    // A malformed selector fails where the engine would have refused it: after the browser
    // and dialog checks, so those keep their precedence.
    let parsed = chromate::Selector::parse(selector);
    let ref_number = parsed
        .as_ref()
        .ok()
        .and_then(chromate::Selector::element_ref);
    let bare = parsed.as_ref().is_ok_and(chromate::Selector::is_bare_ref);
    // docs/mcp.md#refs: a bare ref this session never issued fails before any browser work. With no
    // browser running, the only refs issued are those of earlier browsers.
    if let (true, Some(number), false) = (bare, ref_number, ctx.session.browser_running()) {
        if !ctx.session.issued_by_earlier_browser(number) {
            return Err(ctx
                .session
                .refuse(verb, None, Refusal::BareRef { number })
                .await);
        }
    }
    // `no-snapshot` (docs/mcp.md#refs) with no browser: there is no baseline and nothing to snapshot, so the ref
    // is `no-snapshot` without launching one (row 1, a dialog, needs a browser).
    if let (Some(number), false) = (ref_number, ctx.session.browser_running()) {
        return Err(ctx
            .session
            .refuse(verb, None, Refusal::NoSnapshot { number })
            .await);
    }
    if !ctx.session.browser_running() {
        ctx.progress.set_phase(ctx.session.start_phase());
    }
    let page = ctx.session.active_page_any(verb).await?;
    // docs/mcp.md#refs: a ref is not even resolved while a dialog is open.
    if let Some(dialog) = page.dialog() {
        let refusal = Refusal::DialogOpen {
            dialog,
            resolving: ref_number,
        };
        return Err(ctx.session.refuse(verb, Some(&page), refusal).await);
    }
    // A call on one tab (docs/mcp.md#tabs-for-parallel-agents) with a ref of another.
    if let Some(number) = ref_number {
        ctx.session.check_ref_tab(verb, &page, number)?;
    }
    // A bare `e7` this session issued means `ref=e7` (docs/mcp.md#refs); one it never issued stays bare
    // and fails BARE_REF in the engine.
    let issued_bare = ref_number
        .filter(|_| bare)
        .and_then(chromate::snapshot::ElementRef::new)
        .filter(|element_ref| page.has_issued_ref(*element_ref));
    if let (true, Some(number), None) = (bare, ref_number, issued_bare) {
        if !ctx.session.issued_by_earlier_browser(number) {
            return Err(ctx
                .session
                .refuse(verb, Some(&page), Refusal::BareRef { number })
                .await);
        }
    }
    ctx.session
        .check_ref_baseline(verb, &page, ref_number)
        .await?;
    if let Some(number) = ref_number {
        let current = chromate::snapshot::ElementRef::new(number)
            .is_some_and(|element_ref| page.has_issued_ref(element_ref));
        if !current && ctx.session.issued_by_earlier_browser(number) {
            let refusal = Refusal::StaleRef {
                number,
                reason: chromate::error::StaleReason::DocumentChanged,
            };
            return Err(ctx.session.refuse(verb, Some(&page), refusal).await);
        }
    }
    let selector = match issued_bare {
        Some(element_ref) => chromate::Selector::from_element_ref(element_ref),
        None => parsed.map_err(|err| crate::error::from_engine(verb, &err))?,
    };
    let mut locator = page
        .locator_for(selector)
        .timeout(std::time::Duration::from_millis(timeout_ms));
    if ctx.session.wait_for_match {
        locator = locator.wait_for_match();
    }
    ctx.progress
        .set_phase(format!("{verb} {}", locator.selector().canonical()));
    Ok((page, locator))
}

/// The `timeout_ms` of a tool that never waits (find, exists, read, a11y): no poll, but its
/// round trips are bounded by the agent default, so a page that does not answer fails TIMEOUT
/// instead of holding the call for the 30 s command timeout.
pub fn no_wait(ctx: &ToolContext<'_>) -> u64 {
    ctx.session.config.agent_timeout_ms
}

/// The selector as results echo it (docs/mcp.md#selectors): the caller's text, a bare `e7` as `ref=e7`; of a
/// parsed selector (a locator's, from [`locate`]).
pub fn echo_of(selector: &chromate::Selector) -> String {
    if selector.is_bare_ref() {
        selector.canonical().to_owned()
    } else {
        selector.as_typed().to_owned()
    }
}

/// Runs an engine future unless the call is cancelled, mapping its error
/// (with a recovery snapshot for a stale ref).
pub async fn engine<T>(
    ctx: &mut ToolContext<'_>,
    verb: &str,
    page: &chromate::Page,
    future: impl std::future::Future<Output = chromate::Result<T>>,
) -> Result<T, ToolError> {
    match ctx.cancel.run(future).await {
        None => Err(cancelled_error(verb)),
        Some(Ok(value)) => Ok(value),
        Some(Err(err)) => Err(ctx.session.element_error(verb, page, &err).await),
    }
}

/// [`engine`] for input actions. A dialog that opens while the action runs
/// was opened by the page in answer to it (tools refuse to start while one
/// is open), so the action counts as done and its observation reports the
/// dialog (docs/mcp.md#observations); the value is then the type's default.
pub async fn act<T: Default>(
    ctx: &mut ToolContext<'_>,
    verb: &str,
    page: &chromate::Page,
    future: impl std::future::Future<Output = chromate::Result<T>>,
) -> Result<T, ToolError> {
    match ctx.cancel.run(future).await {
        None => Err(cancelled_error(verb)),
        Some(Ok(value)) => Ok(value),
        Some(Err(chromate::Error::DialogOpen { .. })) if page.dialog().is_some() => {
            Ok(T::default())
        }
        Some(Err(err)) => Err(ctx.session.element_error(verb, page, &err).await),
    }
}

/// `timeout_ms` with the agent default (docs/mcp.md#tools).
pub const TIMEOUT: Arg = Arg::int(
    "timeout_ms",
    "ms; 0 = check once",
    0,
    crate::config::MAX_TIMEOUT_MS as i64,
)
.default_int(IntDefault::AgentTimeout);

/// `timeout_ms` for navigation waits (=30000).
pub const NAV_TIMEOUT: Arg = Arg::int(
    "timeout_ms",
    "ms to wait for load",
    0,
    crate::config::MAX_TIMEOUT_MS as i64,
)
.default_int(IntDefault::Value(30_000));

/// A tab id as browser_page lists it: `p2`.
pub(crate) static TAB_ID: schema::Pattern = schema::Pattern {
    source: "^p[1-9][0-9]{0,15}$",
    matches: |text| {
        let digits = text.strip_prefix('p').unwrap_or_default();
        (1..=16).contains(&digits.len())
            && !digits.starts_with('0')
            && digits.bytes().all(|byte| byte.is_ascii_digit())
    },
};

/// `tab` of every tool that acts on one page (docs/mcp.md#tabs-for-parallel-agents): the call
/// acts on that tab, never changes the active one, and runs beside calls on other tabs.
pub const TAB: Arg = Arg::string("tab", "Tab id (p2); default the active tab")
    .max_len(17)
    .pattern(&TAB_ID);

/// A required selector (docs/mcp.md#selectors).
pub const SELECTOR: Arg = Arg::string("selector", "e7, css, text=, role=, label=, testid=, xpath=")
    .min_len(1)
    .required();

/// An optional selector.
pub const SELECTOR_OPT: Arg = Arg::string("selector", "Optional target element").min_len(1);

/// The future a tool handler returns.
pub type ToolFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

macro_rules! registry {
    // A tool's cross-argument rules, when it declares any (`check: check_x`).
    (@check $group:ident, $args:ident, $session:ident, $check:ident) => {
        $group::$check($args, $session)
    };
    (@check $group:ident, $args:ident, $session:ident) => {{
        let _ = ($args, $session);
        Ok(())
    }};
    ($($variant:ident($group:ident :: $args:ident) = $group2:ident :: $decl:ident => $run:ident $(, check: $check:ident)?;)*
     @audit $($avariant:ident($agroup:ident :: $aargs:ident) = $agroup2:ident :: $adecl:ident => $arun:ident $(, check: $acheck:ident)?;)*) => {
        /// Every tool, in tools/list order.
        pub const TOOLS: &[&ToolDecl] = &[$(&$group2::$decl),*];

        /// The tools of the capabilities this crate declares, outside the 28, each filtered by
        /// its declaration's capability: the audit's (`chromate mcp --caps audit`;
        /// `chromate audit`), browser_webmcp (`--caps webmcp`; `chromate webmcp`) and
        /// describe_screenshot (`--caps vision`; `chromate describe`).
        pub const AUDIT_TOOLS: &[&ToolDecl] = &[$(&$agroup2::$adecl),*];

        /// Each tool's name and the fields of its arguments struct, in order.
        #[cfg(test)]
        pub const FIELDS: &[(&str, &[&str])] = &[
            $(($group2::$decl.name, $group::$args::FIELDS),)*
            $(($agroup2::$adecl.name, $agroup::$aargs::FIELDS),)*
        ];

        /// A validated call, with typed arguments.
        #[derive(Debug)]
        pub enum ToolCall {
            $($variant($group::$args),)*
            $($avariant($agroup::$aargs),)*
        }

        impl ToolCall {
            /// Types a map the validator produced. A failure here is a bug
            /// (declaration and args struct disagree), reported as DRIVER_ERROR.
            pub fn from_validated(
                decl: &'static ToolDecl,
                arguments: Map<String, Value>,
            ) -> Result<ToolCall, ToolError> {
                let arguments = Value::Object(arguments);
                let typed = |err: serde_json::Error| {
                    ToolError::new(
                        ToolErrorCode::DriverError,
                        format!("{}: internal error: arguments did not decode: {err}", decl.verb),
                    )
                    .with_hint("report this chromate bug; the call was not run")
                    .with_detail(json!({ "reason": "internal" }))
                };
                $(
                    if decl.name == $group2::$decl.name {
                        return serde_json::from_value(arguments)
                            .map(ToolCall::$variant)
                            .map_err(typed);
                    }
                )*
                $(
                    if decl.name == $agroup2::$adecl.name {
                        return serde_json::from_value(arguments)
                            .map(ToolCall::$avariant)
                            .map_err(typed);
                    }
                )*
                Err(ToolError::new(
                    ToolErrorCode::DriverError,
                    format!("internal error: no handler for {}", decl.name),
                ))
            }

            pub fn decl(&self) -> &'static ToolDecl {
                match self {
                    $(ToolCall::$variant(_) => &$group2::$decl,)*
                    $(ToolCall::$avariant(_) => &$agroup2::$adecl,)*
                }
            }

            /// Cross-argument rules (docs/mcp.md#errors): run before any browser work. A tool that declares
            /// none has nothing to check.
            pub fn check(&self, session: &ToolSession) -> Result<(), ToolError> {
                match self {
                    $(ToolCall::$variant(args) => registry!(@check $group, args, session $(, $check)?),)*
                    $(ToolCall::$avariant(args) => registry!(@check $agroup, args, session $(, $acheck)?),)*
                }
            }

            /// Runs the handler. Boxed (and `Send`) because browser_batch
            /// runs its steps through this same dispatcher.
            pub fn run<'a>(self, ctx: &'a mut ToolContext<'_>) -> ToolFuture<'a> {
                match self {
                    $(ToolCall::$variant(args) => Box::pin($group::$run(ctx, args)),)*
                    $(ToolCall::$avariant(args) => Box::pin($agroup::$arun(ctx, args)),)*
                }
            }
        }
    };
}

registry! {
    Navigate(navigation::NavigateArgs) = navigation::NAVIGATE => navigate, check: check_navigate;
    Click(input::ClickArgs) = input::CLICK => click;
    Fill(input::FillArgs) = input::FILL => fill;
    Type(input::TypeArgs) = input::TYPE => type_text;
    Element(input::ElementArgs) = input::ELEMENT => element, check: check_element;
    Press(input::PressArgs) = input::PRESS => press;
    Key(input::KeyArgs) = input::KEY => key, check: check_key;
    Mouse(input::MouseArgs) = input::MOUSE => mouse, check: check_mouse;
    Hover(input::HoverArgs) = input::HOVER => hover;
    Upload(input::UploadArgs) = input::UPLOAD => upload, check: check_upload;
    Dialog(input::DialogArgs) = input::DIALOG => dialog, check: check_dialog;
    Find(read::FindArgs) = read::FIND => find;
    Exists(read::ExistsArgs) = read::EXISTS => exists;
    Wait(read::WaitArgs) = read::WAIT => wait, check: check_wait;
    Read(read::ReadArgs) = read::READ => read, check: check_read;
    Expect(read::ExpectArgs) = read::EXPECT => expect, check: check_expect;
    Snapshot(snapshot::SnapshotArgs) = snapshot::SNAPSHOT => snapshot;
    Locators(snapshot::LocatorsArgs) = snapshot::LOCATORS => locators;
    A11y(snapshot::A11yArgs) = snapshot::A11Y => a11y, check: check_a11y;
    Page(tabs::PageArgs) = tabs::PAGE => page, check: check_page;
    Logs(logs::LogsArgs) = logs::LOGS => logs, check: check_logs;
    Mock(mock::MockArgs) = mock::MOCK => mock, check: check_mock;
    State(state::StateArgs) = state::STATE => state, check: check_state;
    Trace(trace::TraceArgs) = trace::TRACE => trace;
    Screenshot(screenshot::ScreenshotArgs) = screenshot::SCREENSHOT => screenshot, check: check_screenshot;
    Status(status::StatusArgs) = status::STATUS => status;
    Batch(batch::BatchArgs) = batch::BATCH => batch, check: check_batch;
    AdvancedEval(eval::EvalArgs) = eval::EVAL => eval;
    @audit
    AuditUrl(qa::AuditArgs) = qa::AUDIT_URL => audit, check: check_audit;
    RuntimeErrors(qa::ErrorsArgs) = qa::RUNTIME_ERRORS => errors;
    UserFlow(qa::FlowArgs) = qa::USER_FLOW => user_flow, check: check_flow;
    WebMcp(webmcp::WebMcpArgs) = webmcp::WEBMCP => webmcp, check: check_webmcp;
    DescribeScreenshot(vision::DescribeArgs) = vision::DESCRIBE_SCREENSHOT => describe;
}

/// The declaration of a tool of the default list by name.
pub fn find(name: &str) -> Option<&'static ToolDecl> {
    TOOLS.iter().copied().find(|decl| decl.name == name)
}

/// The tools a browser_batch step may name: the 28 but the batch itself.
pub fn step_tool_names() -> Vec<&'static str> {
    TOOLS
        .iter()
        .filter(|decl| is_step_tool(decl))
        .map(|decl| decl.name)
        .collect()
}

/// Whether a browser_batch step may name `decl`: a tool of the 28 that runs on the session
/// and does not run steps itself.
fn is_step_tool(decl: &ToolDecl) -> bool {
    matches!(decl.runs, Runs::Session)
}

/// Validates `arguments` for `decl` (docs/mcp.md#errors), including browser_batch steps.
pub fn validate(
    decl: &'static ToolDecl,
    arguments: Option<&Value>,
    defaults: &Defaults,
) -> Result<Map<String, Value>, schema::ArgError> {
    let lookup = |name: &str| find(name).filter(|decl| is_step_tool(decl));
    schema::validate(decl, arguments, defaults, &lookup)
}

/// One tools/list entry.
pub fn tool_json(decl: &ToolDecl, defaults: &Defaults) -> Value {
    let [read_only, destructive, idempotent, open_world] = decl.hints.flags();
    json!({
        "name": decl.name,
        "title": decl.title,
        "description": decl.description,
        "inputSchema": schema::input_schema(decl, defaults, &step_tool_names()),
        "annotations": {
            "title": decl.title,
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
            "openWorldHint": open_world,
        },
    })
}

/// The capabilities a front end offers beside the 28 (`chromate mcp --caps audit,flows`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    pub audit: bool,
    pub flows: bool,
    /// `--caps webmcp`: browser_webmcp, and the page's own tools (docs/mcp.md#webmcp).
    pub webmcp: bool,
    /// `--caps vision`: describe_screenshot.
    pub vision: bool,
}

impl Caps {
    /// Whether a tool of `capability` is offered.
    pub fn offers(self, capability: Capability) -> bool {
        match capability {
            Capability::Core => true,
            Capability::Audit => self.audit,
            Capability::Flows => self.flows,
            Capability::WebMcp => self.webmcp,
            Capability::Vision => self.vision,
        }
    }
}

/// The one list of tools a front end offers: the 28, the audit tools and the tools of the
/// crates above this one (the flows), each declaration saying its capability, where it runs,
/// whether it observes and how its text spills. Every front end finds and validates a call
/// through [`Registry::prepare`].
#[derive(Debug)]
pub struct Registry {
    tools: Vec<&'static ToolDecl>,
}

/// A call [`Registry::prepare`] found and validated.
#[derive(Debug)]
pub struct Prepared {
    pub decl: &'static ToolDecl,
    /// The arguments, defaults filled and integers normalised.
    pub arguments: Map<String, Value>,
}

/// Why [`Registry::prepare`] refused a call.
#[derive(Debug)]
pub enum Unprepared {
    /// No tool of that name is offered.
    Unknown,
    /// The arguments do not validate (docs/mcp.md#errors): a tool error the model reads.
    Invalid(ArgError),
}

impl Registry {
    /// The tools of the 28 and of the offered capabilities, `above` (the flows tools) after
    /// the audit tools, in tools/list order.
    pub fn new(above: &[&'static ToolDecl], caps: Caps) -> Registry {
        let tools = TOOLS
            .iter()
            .chain(AUDIT_TOOLS)
            .chain(above)
            .copied()
            .filter(|decl| caps.offers(decl.capability))
            .collect();
        Registry { tools }
    }

    /// The offered tool called `name`.
    pub fn find(&self, name: &str) -> Option<&'static ToolDecl> {
        self.tools.iter().copied().find(|decl| decl.name == name)
    }

    /// Finds the tool `name` and validates `arguments` for it (browser_batch's steps
    /// included), as every front end does before anything runs.
    pub fn prepare(
        &self,
        name: &str,
        arguments: Option<&Value>,
        defaults: &Defaults,
    ) -> Result<Prepared, Unprepared> {
        let decl = self.find(name).ok_or(Unprepared::Unknown)?;
        let arguments = validate(decl, arguments, defaults).map_err(Unprepared::Invalid)?;
        Ok(Prepared { decl, arguments })
    }

    /// The tools/list result.
    pub fn list(&self, defaults: &Defaults) -> Value {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|decl| tool_json(decl, defaults))
            .collect();
        json!({ "tools": tools })
    }
}

#[cfg(test)]
mod tests;
