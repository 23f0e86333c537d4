//! browser_navigate (docs/tools.md#browser_navigate--navigate): its declaration, arguments, URL rule and handler.
//!
//! Owns the URL-shape cross-argument rule (with a hint fitting the mistake,
//! shared with browser_page open) and the `{url, title, status}`
//! result. Loading and waiting are the engine's (`Page::goto`).

use std::time::Duration;

use serde_json::json;

use super::schema::{tool_args, Arg, Capability, Cli, Hints, Runs, Slot, ToolDecl};
use super::{cancelled_error, ToolContext, NAV_TIMEOUT};
use crate::error::{hint_for, ToolError, ToolErrorCode, ToolOutput};
use crate::session::ToolSession;

pub(super) const NAVIGATE: ToolDecl = ToolDecl {
    name: "browser_navigate",
    title: "Navigate",
    verb: "navigate",
    description: "Load a URL in the active tab; wait for load, then for it to settle (≤ 1.5 s).",
    hints: Hints::A,
    observes: true,
    cli: Cli::new("navigate", &[Slot::arg("url")]).launching(),
    args: NavigateArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

tool_args! {
    /// The arguments of browser_navigate, in schema order.
    pub struct NavigateArgs {
        url: String = Arg::string("url", "Absolute http(s) or data URL, or about:blank")
            .max_len(2048)
            .required(),
        timeout_ms: u64 = NAV_TIMEOUT,
        tab: Option<String> = super::TAB,
    }
}

pub(super) fn check_navigate(args: &NavigateArgs, session: &ToolSession) -> Result<(), ToolError> {
    if url_is_navigable(&args.url) {
        return refuse_file_url(NAVIGATE.verb, &args.url, session);
    }
    Err(ToolError::invalid_argument(
        format!(
            "navigate: {:?} is not an absolute http, https, file or data URL, or about:blank",
            args.url
        ),
        "url",
        url_hint(&args.url),
    ))
}

/// INVALID_ARGUMENT `url` for a `file:` URL unless the session's configuration lets the browser
/// load local files (docs/mcp.md#file-access): a server's client would otherwise read any file
/// the server's user can. The engine refuses `file:` requests too (redirects, frames), so this
/// is the clear error for the direct case, not the only guard.
pub(super) fn refuse_file_url(
    verb: &str,
    url: &str,
    session: &ToolSession,
) -> Result<(), ToolError> {
    if session.config.file_urls || !url.trim_start().to_ascii_lowercase().starts_with("file:") {
        return Ok(());
    }
    Err(ToolError::invalid_argument(
        format!("{verb}: file: URLs are refused: {url:?} would show a local file to the client"),
        "url",
        FILE_URL_HINT,
    )
    .with_detail_key("reason", json!("file-access")))
}

/// The hint of a refused `file:` URL, direct or reached by a redirect or a frame.
pub const FILE_URL_HINT: &str = "serve the page over http://127.0.0.1 instead, or restart the server with --allow-unrestricted-file-access to let it load local files";

/// The hint for a URL [`url_is_navigable`] refused, fitting the mistake: a scheme-less address
/// (`example.com`, `localhost:3000/x`) needs the scheme added; an unsupported scheme (`ftp:`,
/// `javascript:`) needs one of the supported ones; an http(s) URL without a host needs one.
pub fn url_hint(url: &str) -> String {
    let url = url.trim();
    let supported = "use an http, https, file or data URL, or about:blank";
    match scheme_of(url) {
        None => format!("add the scheme, e.g. https://{url}"),
        Some(scheme) if scheme == "http" || scheme == "https" => {
            format!("{supported}, with a host, e.g. {scheme}://127.0.0.1:8080/")
        }
        Some(scheme) if scheme == "about" => {
            format!("{supported}; about:blank is the only about: page")
        }
        Some(scheme) => format!("{supported}; the {scheme}: scheme is not supported"),
    }
}

/// The lower-cased scheme `url` starts with, if it has one: letters, digits, `+`, `-` and `.`
/// after a letter, then `:`. What follows a host-like name and a colon only as a port
/// (`localhost:3000/x`, `example.com:8080`) is no scheme.
fn scheme_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let scheme_chars = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let port_follows = rest.starts_with(|c: char| c.is_ascii_digit());
    (starts_with_letter && scheme_chars && !port_follows).then(|| scheme.to_ascii_lowercase())
}

/// Absolute `http`, `https`, `file`, `data` URLs and `about:blank` (docs/tools.md#browser_navigate--navigate).
pub fn url_is_navigable(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let has_host = |rest: &str| {
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        !host.is_empty() && !host.contains(char::is_whitespace)
    };
    if let Some(rest) = lower.strip_prefix("http://") {
        return has_host(rest);
    }
    if let Some(rest) = lower.strip_prefix("https://") {
        return has_host(rest);
    }
    lower.starts_with("file://") || lower.starts_with("data:") || lower == "about:blank"
}

/// A failed navigation as a tool error. `Page.navigate` itself answering
/// too late (a server that never sends headers) is the load not reached in
/// time, TIMEOUT_WAITING_LOAD, not a driver failure: the engine's command
/// timeout can fire before its own load deadline.
pub(super) fn navigation_error(
    ctx: &mut ToolContext<'_>,
    verb: &str,
    err: &chromate::Error,
    url: &str,
    timeout_ms: u64,
) -> ToolError {
    match err {
        chromate::Error::CommandTimeout { method, .. } if method == "Page.navigate" => {
            ToolError::new(
                ToolErrorCode::TimeoutWaitingLoad,
                format!("{verb}: timed out after {timeout_ms}ms waiting for load of {url}"),
            )
            .with_hint(hint_for(ToolErrorCode::TimeoutWaitingLoad))
            .with_detail(json!({ "state": "load", "timeout": timeout_ms, "url": url }))
        }
        _ => ctx.session.engine_error(verb, err),
    }
}

pub(super) async fn navigate(
    ctx: &mut ToolContext<'_>,
    args: NavigateArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = NAVIGATE.verb;
    if !ctx.session.browser_running() {
        ctx.progress.set_phase(ctx.session.start_phase());
    }
    let page = ctx.session.active_page(verb).await?;
    ctx.progress
        .set_phase(format!("waiting for {} to load", args.url));
    let timeout = Duration::from_millis(args.timeout_ms);
    let started = std::time::Instant::now();
    let navigation = ctx
        .cancel
        .run(page.goto(&args.url, chromate::WaitUntil::Load, timeout))
        .await
        .ok_or_else(|| cancelled_error(verb))?;
    let navigation = match navigation {
        Ok(navigation) => navigation,
        Err(err) => {
            return Err(navigation_error(
                ctx,
                verb,
                &err,
                &args.url,
                args.timeout_ms,
            ))
        }
    };
    // The quiet period after `load` (docs/mcp.md#observations): work a page's script does right
    // after it (a search filling its results) shows in the observation. Bounded by the cap and
    // by what is left of the navigation's own timeout; a wait that fails leaves the page to the
    // observation, which reports it.
    let left = timeout.saturating_sub(started.elapsed());
    if !left.is_zero() {
        ctx.progress.set_phase("waiting for the page to settle");
        let settle = page.wait_for_settled(
            chromate::page::SETTLE_WINDOW,
            chromate::page::SETTLE_CAP.min(left),
        );
        if ctx.cancel.run(settle).await.is_none() {
            return Err(cancelled_error(verb));
        }
    }
    let title = match page.within(ctx.session.agent_timeout(), page.title()).await {
        Ok(title) => title,
        Err(err) => return Err(ctx.session.engine_error(verb, &err)),
    };
    // `null` when the document did not come over HTTP (data:, file:, about:).
    let is_http = navigation.url.starts_with("http://") || navigation.url.starts_with("https://");
    let status = navigation.status.filter(|_| is_http);
    Ok(ToolOutput::new(json!({
        "url": navigation.url,
        "title": title,
        "status": status,
    })))
}
