//! The audit capability's tools (`chromate mcp --caps audit`; `chromate audit`,
//! `chromate errors` and `chromate qa-flow` on the command line): qa_audit_url,
//! qa_get_runtime_errors and qa_execute_user_flow, their declarations, arguments,
//! cross-argument rules and handlers.
//!
//! Owns turning the arguments into an [`AuditRequest`], storing the entry page's screenshots
//! as session files, and the audit's reply (the stable result object and the ranked text
//! report); the runtime-errors channel: its selection of the session journal (console
//! warnings and errors, uncaught errors, HTTP responses ≥ 400), severities, and its own drain
//! record, so `browser_logs` and the observations' tripwire never take an entry from it; the
//! user flow's allowed origins and its failing step's screenshot stored as a session file.
//! What an audit does is `audit/`, what a user flow does `qaflow/`. Not in the default tools/list: the 28 tools stay 28
//! unless the capability is asked for.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::schema::{
    arg_enum, tool_args, Arg, Capability, Cli, Hints, IntDefault, Kind, Runs, Slot, ToolDecl,
};
use super::{cancelled_error, ToolContext};
use crate::audit::findings::Shot;
use crate::audit::{self, report, AuditRequest};
use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::session::ToolSession;

pub const AUDIT_URL: ToolDecl = ToolDecl {
    name: "qa_audit_url",
    title: "Audit a URL",
    verb: "audit",
    description: "Audit a page or small site in an isolated browser context: runtime errors, failed requests, broken links, accessibility (axe), layout and speed, as ranked findings with durable selectors.",
    hints: Hints::S,
    observes: false,
    cli: Cli::new("audit", &[Slot::arg("url")]),
    args: AuditArgs::ARGS,
    capability: Capability::Audit,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

arg_enum! {
    /// qa_audit_url `wait_until`.
    pub enum AuditWaitUntil {
        Load = "load",
        DomContentLoaded = "domcontentloaded",
        NetworkIdle = "networkidle",
    }
}

tool_args! {
    /// The arguments of qa_audit_url, in schema order.
    pub struct AuditArgs {
        url: String = Arg::string("url", "Absolute http(s) URL of the entry page")
            .max_len(2048)
            .required(),
        #[serde(default)]
        urls: Vec<String> = Arg::kind(
            "urls",
            "More entry pages (absolute http(s) URLs), audited like url in the same run and result",
            Kind::StrList {
                min_items: 1,
                max_items: 49,
                item_min_len: 1,
                item_max_len: 2048,
            },
        ),
        max_depth: u32 = Arg::int("max_depth", "Follow same-origin links this many levels", 0, 5)
            .default_int(IntDefault::Value(0)),
        max_pages: u32 = Arg::int("max_pages", "Audit at most this many pages", 1, 200)
            .default_int(IntDefault::Value(20)),
        viewport: Option<Size> = Arg::kind(
            "viewport",
            "{width, height} in CSS px (else the browser's 1280x800); the command line's --viewport WxH",
            Kind::Size { min: 1, max: 9999 },
        ),
        wait_until: AuditWaitUntil = Arg::one_of(
            "wait_until",
            "When a page counts as loaded (then it settles until the network is quiet)",
            AuditWaitUntil::VALUES,
        )
        .default_str("load"),
        timeout_ms: u64 = Arg::int("timeout_ms", "The whole audit's deadline; past it the result is status timeout with what was found", 1000, 600_000)
            .default_int(IntDefault::Value(120_000)),
        focus: Option<String> = Arg::string("focus", "Rank findings whose text, URL or selector contains this first; with CHROMATE_LLM_PROVIDER set, a model ranks them for it and may add its own (source model)").max_len(200),
        #[serde(default)]
        include_screenshots: bool = Arg::boolean("include_screenshots", "Save the entry page's viewport and every audited page's full-page screenshots"),
        #[serde(default)]
        block_private_network: bool = Arg::boolean("block_private_network", "Refuse requests and redirect hops to loopback, private, link-local and unique-local addresses (SSRF_BLOCKED)"),
        sitemap: Option<String> = Arg::string("sitemap", "Also audit the pages this sitemap.xml (or sitemap index) lists: same-origin only, at most max_pages; when it is url itself, url is not audited as a page")
            .max_len(2048),
        state: Option<String> = Arg::string("state", "Audit logged in: a state saved with browser_state action=save (its cookies and localStorage go into the audit's context)")
            .max_len(64)
            .pattern(&super::state::STATE_NAME),
        storage_state: Option<String> = Arg::string("storage_state", "Audit logged in: a Playwright storage-state JSON file (cookies, origins' localStorage); refused on a server other machines reach")
            .max_len(4096),
        #[serde(default)]
        allow_private: Vec<String> = Arg::kind(
            "allow_private",
            "Origins (scheme://host[:port]) block_private_network lets through",
            Kind::StrList {
                min_items: 1,
                max_items: 20,
                item_min_len: 1,
                item_max_len: 300,
            },
        ),
    }
}

/// A validated `{width, height}` ([`Kind::Size`]).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

fn is_http(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    ["http://", "https://"].iter().any(|scheme| {
        lower
            .strip_prefix(scheme)
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
    })
}

/// Whether the audit refuses private-network targets: when the call asks, and always on a
/// server other machines reach (`--http` on an address that is not loopback), whose callers
/// must not reach the server's own network through it.
fn blocks_private_network(args: &AuditArgs, session: &ToolSession) -> bool {
    args.block_private_network || session.config.remote
}

pub fn check_audit(args: &AuditArgs, session: &ToolSession) -> Result<(), ToolError> {
    let entries = std::iter::once(("url", &args.url))
        .chain(args.urls.iter().map(|u| ("urls", u)))
        .chain(args.sitemap.iter().map(|u| ("sitemap", u)));
    for (argument, url) in entries {
        if !is_http(url) {
            return Err(ToolError::invalid_argument(
                format!("audit: {url:?} is not an absolute http or https URL"),
                argument,
                "audit a page a browser would load over the network, e.g. http://127.0.0.1:8080/",
            ));
        }
    }
    if args.state.is_some() && args.storage_state.is_some() {
        return Err(ToolError::invalid_argument(
            "audit: state and storage_state both give the login state; give one",
            "storage_state",
            "drop one of --state NAME and --storage-state FILE",
        ));
    }
    if args.storage_state.is_some() && session.config.remote {
        return Err(ToolError::invalid_argument(
            "audit: storage_state reads a file of the server's, refused on a server other machines reach",
            "storage_state",
            "save the state in the session with browser_state action=save and pass state=NAME",
        ));
    }
    if !args.allow_private.is_empty() && !blocks_private_network(args, session) {
        return Err(ToolError::invalid_argument(
            "audit: allow_private only matters with block_private_network",
            "allow_private",
            "add block_private_network (--block-private-network), or drop allow_private",
        ));
    }
    for origin in &args.allow_private {
        if let Err(err) = crate::config::parse_origin_list(origin) {
            return Err(ToolError::invalid_argument(
                format!("audit: allow_private: {err}"),
                "allow_private",
                "name origins as scheme://host[:port], e.g. http://127.0.0.1:3000",
            ));
        }
    }
    Ok(())
}

pub async fn audit(ctx: &mut ToolContext<'_>, args: AuditArgs) -> Result<ToolOutput, ToolError> {
    let verb = AUDIT_URL.verb;
    let block_private_network = blocks_private_network(&args, ctx.session);
    let allow_private = args
        .allow_private
        .iter()
        .flat_map(|origin| crate::config::parse_origin_list(origin).unwrap_or_default())
        .collect();
    let wait_until = match args.wait_until {
        AuditWaitUntil::Load => chromate::WaitUntil::Load,
        AuditWaitUntil::DomContentLoaded => chromate::WaitUntil::DomContentLoaded,
        AuditWaitUntil::NetworkIdle => chromate::WaitUntil::NetworkIdle,
    };
    let login = match (&args.state, &args.storage_state) {
        (Some(name), _) => Some(super::state::login_of_saved(ctx.session, name)?),
        (None, Some(path)) => Some(super::state::login_of_storage_state(ctx.session, path)?),
        (None, None) => None,
    };
    let focus = args.focus.filter(|focus| !focus.trim().is_empty());
    // The focus model pass (docs/cli.md#focus-model-pass): only with a focus and a provider
    // configured; without them the audit is exactly as before.
    let model_pass = match &focus {
        Some(_) => crate::audit::focus::configured(&|name| std::env::var(name).ok()),
        None => None,
    };
    let request = AuditRequest {
        url: args.url.trim().to_owned(),
        more_urls: args.urls.iter().map(|url| url.trim().to_owned()).collect(),
        sitemap: args.sitemap.as_ref().map(|url| url.trim().to_owned()),
        login,
        max_depth: args.max_depth,
        max_pages: args.max_pages,
        viewport: args.viewport.map(|size| (size.width, size.height)),
        wait_until,
        timeout: Duration::from_millis(args.timeout_ms),
        focus: focus.clone(),
        screenshots: args.include_screenshots,
        block_private_network,
        allow_private,
        page_text: matches!(model_pass, Some(Ok(_))),
    };
    if !ctx.session.browser_running() {
        ctx.progress.set_phase(ctx.session.start_phase());
    }
    let browser = ctx.session.ensure_browser(verb).await?.browser.clone();
    ctx.progress.set_phase(format!("audit {}", request.url));
    let run = audit::run(&browser, &request, &ctx.progress);
    let (mut result, shots) = match ctx.cancel.run(run).await {
        None => return Err(cancelled_error(verb)),
        Some(outcome) => outcome?,
    };
    match (model_pass, &focus) {
        (Some(Ok(provider)), Some(focus)) => {
            ctx.progress.set_phase(format!(
                "audit: asking {} ({}) about the focus",
                provider.kind.as_str(),
                provider.model
            ));
            let pass = crate::audit::focus::model_pass(&provider, &mut result, focus);
            if ctx.cancel.run(pass).await.is_none() {
                return Err(cancelled_error(verb));
            }
        }
        (Some(Err(problem)), Some(_)) => result.warnings.push(format!(
            "focus: no model pass: the configured provider cannot be used: {problem}"
        )),
        _ => {}
    }
    let mut links = Vec::new();
    for shot in shots {
        let name = &shot.name;
        match ctx
            .session
            .artifacts
            .write(&format!("audit-{name}.png"), &shot.png)
        {
            Ok(path) => {
                result.screenshots.push(Shot {
                    name: shot.name,
                    path: path.display().to_string(),
                    width: shot.width,
                    height: shot.height,
                    page: Some(shot.page),
                });
                links.push(path);
            }
            Err(err) => eprintln!("chromate: audit: the {name} screenshot was not saved: {err:?}"),
        }
    }
    let text = report::render(report::Format::Text, &result, report::Options::default());
    report_output(verb, &result, text, links)
}

/// A report tool's output: `result` as its JSON (failing to serialise is a chromate bug, said
/// as such), `text` for the model, and the files it wrote as links.
fn report_output(
    verb: &str,
    result: &impl serde::Serialize,
    text: String,
    links: Vec<std::path::PathBuf>,
) -> Result<ToolOutput, ToolError> {
    let value = serde_json::to_value(result).map_err(|err| {
        ToolError::new(
            ToolErrorCode::DriverError,
            format!("{verb}: the result did not serialise: {err}"),
        )
        .with_hint("report this chromate bug")
        .with_detail(json!({ "reason": "internal" }))
    })?;
    let mut output = ToolOutput::new(value);
    output.text = Some(text);
    output.links = links;
    Ok(output)
}

pub const RUNTIME_ERRORS: ToolDecl = ToolDecl {
    name: "qa_get_runtime_errors",
    title: "Runtime errors",
    verb: "errors",
    description: "Drain the session's runtime errors not drained before (console warnings and errors, uncaught exceptions, HTTP responses >= 400): id, severity, source, message, stack, URL, time. It keeps its own record: browser_logs never takes an entry from it.",
    hints: Hints::T,
    observes: false,
    cli: Cli::new("errors", &[]),
    args: ErrorsArgs::ARGS,
    capability: Capability::Audit,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

arg_enum! {
    /// qa_get_runtime_errors `source`.
    pub enum ErrorsSource {
        Console = "console",
        PageError = "pageerror",
        Http = "http",
        All = "all",
    }
}

arg_enum! {
    /// qa_get_runtime_errors `min_severity`.
    pub enum MinSeverity {
        Info = "info",
        Warning = "warning",
        Error = "error",
    }
}

tool_args! {
    /// The arguments of qa_get_runtime_errors, in schema order.
    pub struct ErrorsArgs {
        clear: Option<bool> = Arg::boolean("clear", "Drain what is returned (default true; false = peek)"),
        source: ErrorsSource = Arg::one_of(
            "source",
            "console (warnings and errors), pageerror (uncaught), http (responses >= 400), or all",
            ErrorsSource::VALUES,
        )
        .default_str("all"),
        min_severity: MinSeverity = Arg::one_of(
            "min_severity",
            "info (console.log and info too), warning, or error",
            MinSeverity::VALUES,
        )
        .default_str("warning"),
    }
}

/// A severity of the channel, least first.
fn rank(severity: &str) -> u8 {
    match severity {
        "error" => 2,
        "warning" => 1,
        _ => 0,
    }
}

/// An entry's source and severity, if it belongs to the channel.
fn classify(entry: &chromate::journal::LogEntry) -> Option<(&'static str, &'static str)> {
    match &entry.data {
        chromate::journal::LogData::Error { .. } => Some(("pageerror", "error")),
        chromate::journal::LogData::Console { level, .. } => Some((
            "console",
            match level {
                chromate::journal::LogLevel::Error => "error",
                chromate::journal::LogLevel::Warn => "warning",
                _ => "info",
            },
        )),
        // The favicon the browser asks for by itself is nobody's error.
        chromate::journal::LogData::Response { status, url, .. }
            if *status >= 400 && !crate::audit::findings::incidental(url) =>
        {
            Some(("http", if *status >= 500 { "error" } else { "warning" }))
        }
        _ => None,
    }
}

pub async fn errors(ctx: &mut ToolContext<'_>, args: ErrorsArgs) -> Result<ToolOutput, ToolError> {
    let clear = args.clear.unwrap_or(true);
    let floor = rank(args.min_severity.as_str());
    let journal = &ctx.session.journal;
    let filter = chromate::journal::LogFilter {
        kinds: vec![
            chromate::journal::LogKind::Console,
            chromate::journal::LogKind::Error,
            chromate::journal::LogKind::Response,
        ],
        ..chromate::journal::LogFilter::default()
    };
    // Every buffered console, error and network entry (500 + 1000 at most).
    let list = journal.log.list(&filter, 0, 2000);
    let mut errors = Vec::new();
    let mut returned = Vec::new();
    for entry in &list.entries {
        let Some((source, severity)) = classify(entry) else {
            continue;
        };
        if journal.errors_drained.contains(&entry.seq)
            || rank(severity) < floor
            || (args.source != ErrorsSource::All && args.source.as_str() != source)
        {
            continue;
        }
        let (message, stack, url) = match &entry.data {
            chromate::journal::LogData::Error {
                text,
                origin,
                stack,
                ..
            } => (text.clone(), stack.clone(), origin.clone()),
            chromate::journal::LogData::Console { text, origin, .. } => {
                (text.clone(), None, origin.clone())
            }
            chromate::journal::LogData::Response {
                url,
                method,
                status,
                ..
            } => (
                format!("{method} {url} answered {status}"),
                None,
                Some(url.clone()),
            ),
            _ => continue,
        };
        returned.push(entry.seq);
        errors.push(json!({
            "id": entry.seq,
            "severity": severity,
            "source": source,
            "message": message,
            "stack": stack,
            "url": url,
            "page": journal.page_id(&entry.page),
            "timestamp": crate::time::iso_time(entry.time),
        }));
    }
    if clear {
        let journal = &mut ctx.session.journal;
        journal.errors_drained.extend(returned);
        // Entries no longer buffered can never be returned again: forget them.
        if let Some(oldest) = list.entries.first().map(|entry| entry.seq) {
            journal.errors_drained = journal.errors_drained.split_off(&oldest);
        }
    }
    Ok(ToolOutput::new(json!({
        "count": errors.len(),
        "errors": errors,
        "cleared": clear,
        "capturing": ctx.session.journal.capturing(),
    })))
}

pub const USER_FLOW: ToolDecl = ToolDecl {
    name: "qa_execute_user_flow",
    title: "Run a user journey",
    verb: "qa-flow",
    description: "Run a user journey written as plain-language steps with a model (Anthropic, OpenAI or Ollama; docs/llm.md#qa-flow) in an isolated browser context: per step the model reads the page's snapshot and acts through a small fixed set of tools (click, fill, select, check, press, navigate within the entry URL's origin, wait, expect), never eval, uploads, files or state. Result: status completed/failed/timeout, steps with status, action, durable target selector, duration and error, outcome_matched, findings (console errors and HTTP failures, and the model's, marked), metrics, and the failing step's screenshot.",
    // It acts on pages (fills and submits their forms): never read-only.
    hints: Hints::A,
    observes: false,
    cli: Cli::new("qa-flow", &[Slot::arg("url")]),
    args: FlowArgs::ARGS,
    capability: Capability::Audit,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

tool_args! {
    /// The arguments of qa_execute_user_flow, in schema order.
    pub struct FlowArgs {
        url: String = Arg::string("url", "Absolute http(s) URL where the journey starts")
            .max_len(2048)
            .required(),
        steps: Vec<String> = Arg::kind(
            "steps",
            "The journey's steps in plain language, in order",
            Kind::StrList {
                min_items: 1,
                max_items: 50,
                item_min_len: 1,
                item_max_len: 2000,
            },
        )
        .required(),
        expected_outcome: Option<String> = Arg::string("expected_outcome", "What the page shows when the journey succeeded; checked by the model after the last step").max_len(2000),
        timeout_ms: u64 = Arg::int("timeout_ms", "The whole journey's deadline; past it the result is status timeout", 1000, 600_000)
            .default_int(IntDefault::Value(120_000)),
        stop_on_failure: Option<bool> = Arg::boolean("stop_on_failure", "Skip the steps after a failed one (default true)"),
        max_model_calls_per_step: u32 = Arg::int("max_model_calls_per_step", "Model calls one step may take before it fails", 1, 30)
            .default_int(IntDefault::Value(10)),
        provider: Option<String> = Arg::string("provider", "anthropic, openai or ollama (default: CHROMATE_LLM_PROVIDER, else the first whose key is set, else ollama)").max_len(32),
        model: Option<String> = Arg::string("model", "The model (default: CHROMATE_LLM_MODEL, else the provider's default); it must take tool calls").max_len(200),
        #[serde(default)]
        allowed_origins: Vec<String> = Arg::kind(
            "allowed_origins",
            "Origins (scheme://host[:port]) the model may navigate to besides the entry URL's",
            Kind::StrList {
                min_items: 1,
                max_items: 20,
                item_min_len: 1,
                item_max_len: 300,
            },
        ),
        vision: Option<bool> = Arg::boolean("vision", "The model takes images: a step that asks about the page's look gets a screenshot (default true)"),
        #[serde(default)]
        block_private_network: bool = Arg::boolean("block_private_network", "Refuse requests and redirect hops to loopback, private, link-local and unique-local addresses, as audits do"),
        #[serde(default)]
        allow_private: Vec<String> = Arg::kind(
            "allow_private",
            "Origins (scheme://host[:port]) block_private_network lets through",
            Kind::StrList {
                min_items: 1,
                max_items: 20,
                item_min_len: 1,
                item_max_len: 300,
            },
        ),
    }
}

pub fn check_flow(args: &FlowArgs, session: &ToolSession) -> Result<(), ToolError> {
    if !is_http(&args.url) {
        return Err(ToolError::invalid_argument(
            format!("qa-flow: {:?} is not an absolute http or https URL", args.url),
            "url",
            "start the journey on a page a browser loads over the network, e.g. http://127.0.0.1:8080/",
        ));
    }
    if crate::qaflow::actions::origin_of(&args.url).is_none() {
        return Err(ToolError::invalid_argument(
            format!("qa-flow: {:?} has no origin chromate can allow", args.url),
            "url",
            "give a URL of the form scheme://host[:port]/path",
        ));
    }
    if let Some(step) = args.steps.iter().position(|step| step.trim().is_empty()) {
        return Err(ToolError::invalid_argument(
            format!("qa-flow: step {} is blank", step + 1),
            "steps",
            "write each step as a sentence, e.g. \"Add the blue mug to the cart\"",
        ));
    }
    for origin in args.allowed_origins.iter().chain(&args.allow_private) {
        if let Err(err) = crate::config::parse_origin_list(origin) {
            return Err(ToolError::invalid_argument(
                format!("qa-flow: {err}"),
                "allowed_origins",
                "name origins as scheme://host[:port], e.g. http://127.0.0.1:3000",
            ));
        }
    }
    let guarded = args.block_private_network || session.config.remote;
    if !args.allow_private.is_empty() && !guarded {
        return Err(ToolError::invalid_argument(
            "qa-flow: allow_private only matters with block_private_network",
            "allow_private",
            "add block_private_network, or drop allow_private",
        ));
    }
    Ok(())
}

pub async fn user_flow(ctx: &mut ToolContext<'_>, args: FlowArgs) -> Result<ToolOutput, ToolError> {
    let verb = USER_FLOW.verb;
    let provider = crate::vision::provider(verb, args.provider.as_deref(), args.model.as_deref())?;
    let origins = |list: &[String]| -> Vec<chromate::intercept::OriginPattern> {
        list.iter()
            .flat_map(|origin| crate::config::parse_origin_list(origin).unwrap_or_default())
            .collect()
    };
    let mut allowed = origins(&args.allowed_origins);
    allowed.extend(crate::qaflow::actions::origin_of(&args.url));
    let request = crate::qaflow::FlowRequest {
        url: args.url.trim().to_owned(),
        steps: args
            .steps
            .iter()
            .map(|step| step.trim().to_owned())
            .collect(),
        expected_outcome: args
            .expected_outcome
            .filter(|outcome| !outcome.trim().is_empty()),
        timeout: Duration::from_millis(args.timeout_ms),
        stop_on_failure: args.stop_on_failure.unwrap_or(true),
        max_calls_per_step: args.max_model_calls_per_step,
        allowed,
        block_private_network: args.block_private_network || ctx.session.config.remote,
        allow_private: origins(&args.allow_private),
        vision: args.vision.unwrap_or(true),
    };
    if !ctx.session.browser_running() {
        ctx.progress.set_phase(ctx.session.start_phase());
    }
    let browser = ctx.session.ensure_browser(verb).await?.browser.clone();
    let run = crate::qaflow::run(&browser, &provider, &request, &ctx.progress);
    let (mut result, shot) = match ctx.cancel.run(run).await {
        None => return Err(cancelled_error(verb)),
        Some(outcome) => outcome?,
    };
    let mut links = Vec::new();
    if let Some((index, png)) = shot {
        match ctx
            .session
            .artifacts
            .write(&format!("qa-flow-step-{index}.png"), &png)
        {
            Ok(path) => {
                let shown = path.display().to_string();
                if let Some(step) = result.steps.iter_mut().find(|step| step.index == index) {
                    step.screenshot = Some(shown.clone());
                }
                result.screenshot = Some(shown);
                links.push(path);
            }
            Err(err) => {
                eprintln!("chromate: qa-flow: the failing step's screenshot was not saved: {err:?}")
            }
        }
    }
    let text = crate::qaflow::report::text(&result);
    report_output(verb, &result, text, links)
}
