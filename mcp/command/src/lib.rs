//! The command layer every front end of the `chromate` binary calls: one validated tool call
//! in, one [`Reply`] out.
//!
//! Owns: the tools (their declarations, registry, validation and handlers, `tools/`), the
//! session a front end runs them against (`session/`: the browser and its tabs, the guard that
//! resolves a target, the observation), its files (`artifacts`), mocks and traces, the audit
//! capability (`audit/`), and running one call (typing the validated arguments, the
//! cross-argument check, the handler, replacing a tab the call found stuck, the observation
//! hook of docs/mcp.md#observations, the trace's action event), turning its outcome into a
//! [`Reply`] with spilling (docs/mcp.md#spilling) applied — the text the model or the
//! terminal sees, the result object, the files it hands back. Also the configuration every
//! front end resolves (`config`) and the private files and locks they share (`private_fs`,
//! `sync`).
//!
//! Does not own any wire format: the binary's MCP server turns a reply into a `tools/call`
//! result, its command line into stdout, stderr and an exit status, and its session daemon
//! carries a reply over a socket as JSON. Flows and captures for CI (`chromate-flows`) run
//! their steps through [`run`] like any front end would. Cargo keeps it so: this crate depends
//! on the engine only.
//!
//! Module order is the dependency order: `call`, `error`, `sync`, `private_fs` and `time` are
//! leaves, `config` and `artifacts` sit under `session` with `mocks` and `trace`, and `tools`
//! uses them all; nothing below `tools` names it.

pub mod artifacts;
pub mod audit;
pub mod call;
pub mod config;
pub mod error;
pub mod llm;
pub mod markup;
pub mod mocks;
pub mod private_fs;
pub mod qaflow;
pub mod reply;
pub mod session;
pub mod shared;
pub mod sync;
pub mod time;
pub mod tools;
pub mod trace;
pub mod vision;
pub mod webmcp;

use serde_json::{Map, Value};

use call::{Cancel, Progress};
use error::{ToolError, ToolOutput};
use session::ToolSession;
use tools::{Runs, ToolCall, ToolContext, ToolDecl};

pub use reply::{Done, Failed, Reply};

/// A future boxed where it is made. rustc compiles an `async fn`'s state machine into every
/// codegen unit, in every crate, that awaits it; the few large ones that many callers await
/// return this instead, so their code exists once (ARCHITECTURE.md, "Futures boxed where they
/// are made"). The flows crate and the binary use it too.
pub type Boxed<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Runs one validated call against the session and renders its outcome. A call that names a
/// `tab` runs on that tab (docs/mcp.md#tabs-for-parallel-agents), the session's active tab
/// untouched; [`run_shared`] runs such calls beside each other.
pub async fn run(
    session: &mut ToolSession,
    decl: &'static ToolDecl,
    arguments: Map<String, Value>,
    cancel: &Cancel,
    progress: &Progress,
) -> Reply {
    // A tool that runs in browsers of its own never touches the session.
    if let Runs::Detached(detached) = decl.runs {
        return detached(&session.config, arguments, cancel, progress).await;
    }
    let tab = session::tab_argument(&arguments)
        .filter(|tab| session.forked_tab() != Some(*tab))
        .map(str::to_owned);
    let Some(tab) = tab else {
        return run_here(session, decl, arguments, cancel, progress).await;
    };
    let mut fork = match session.fork_tab(&tab, decl.verb) {
        Ok(fork) => fork,
        Err(error) => return render(session, decl, Err(error)),
    };
    fork.trace = session.trace.take();
    let reply = run_here(&mut fork, decl, arguments, cancel, progress).await;
    session.trace = fork.trace.take();
    session.merge_tab(fork);
    reply
}

/// Whether [`run_shared`] runs this call beside others: it names a tab.
pub fn runs_on_tab(decl: &ToolDecl, arguments: &Map<String, Value>) -> bool {
    !matches!(decl.runs, Runs::Detached(_)) && session::tab_argument(arguments).is_some()
}

/// A browser_page `open` or `close`, which runs beside calls on tabs
/// (docs/mcp.md#tabs-for-parallel-agents): `Some(tab)` with the id (`p<N>`) a `close` names,
/// `Some(None)` for an `open` or a close of the active tab or of a tab by index; `None` for
/// any other call.
pub fn opens_or_closes_a_tab<'a>(
    decl: &ToolDecl,
    arguments: &'a Map<String, Value>,
) -> Option<Option<&'a str>> {
    if decl.name != "browser_page" {
        return None;
    }
    match arguments.get("action").and_then(Value::as_str) {
        Some("open") => Some(None),
        Some("close") => Some(
            arguments
                .get("target")
                .and_then(Value::as_str)
                .filter(|target| target.starts_with('p')),
        ),
        _ => None,
    }
}

/// [`run`] for a call that names a tab ([`runs_on_tab`]), on a session other calls share: the
/// session is locked only to fork it for the tab and to merge the fork back, so calls on
/// other tabs run meanwhile (docs/mcp.md#tabs-for-parallel-agents). While a trace records, the
/// session stays locked for the whole call: a trace is one ordered record. Calls on one tab
/// are kept in order by the caller.
pub fn run_shared<'a>(
    session: &'a tokio::sync::Mutex<ToolSession>,
    decl: &'static ToolDecl,
    arguments: Map<String, Value>,
    cancel: &'a Cancel,
    progress: &'a Progress,
) -> Boxed<'a, Reply> {
    Box::pin(run_shared_unboxed(
        session, decl, arguments, cancel, progress,
    ))
}

async fn run_shared_unboxed(
    session: &tokio::sync::Mutex<ToolSession>,
    decl: &'static ToolDecl,
    arguments: Map<String, Value>,
    cancel: &Cancel,
    progress: &Progress,
) -> Reply {
    let mut guard = session.lock().await;
    let tab = session::tab_argument(&arguments).map(str::to_owned);
    let Some(tab) = tab.filter(|_| guard.trace.is_none()) else {
        if guard.trace.is_none() && opens_with_url(decl, &arguments) {
            drop(guard);
            return open_then_load_reply(session, decl, arguments, cancel, progress).await;
        }
        return run(&mut guard, decl, arguments, cancel, progress).await;
    };
    let mut fork = match guard.fork_tab(&tab, decl.verb) {
        Ok(fork) => fork,
        Err(error) => return render(&mut guard, decl, Err(error)),
    };
    drop(guard);
    let reply = run_here(&mut fork, decl, arguments, cancel, progress).await;
    session.lock().await.merge_tab(fork);
    reply
}

/// Whether `arguments` ask browser_page to open a tab on a URL other than about:blank.
fn opens_with_url(decl: &ToolDecl, arguments: &Map<String, Value>) -> bool {
    opens_or_closes_a_tab(decl, arguments) == Some(None)
        && arguments
            .get("url")
            .and_then(Value::as_str)
            .is_some_and(|url| url != "about:blank")
}

/// A browser_page `open` with a URL on a shared session ([`run_shared`]): the session is
/// locked to open the tab and to answer, not while the URL loads.
async fn open_then_load_reply(
    session: &tokio::sync::Mutex<ToolSession>,
    decl: &'static ToolDecl,
    arguments: Map<String, Value>,
    cancel: &Cancel,
    progress: &Progress,
) -> Reply {
    let started = std::time::Instant::now();
    let (call, timeout, agent) = {
        let mut guard = session.lock().await;
        let agent = guard.agent_timeout();
        let timeout = call_timeout(decl, &arguments, agent);
        let call = ToolCall::from_validated(decl, arguments).and_then(|call| {
            call.check(&guard)?;
            Ok(call)
        });
        match call {
            Ok(call) => (call, timeout, agent),
            Err(error) => return render(&mut guard, decl, Err(error)),
        }
    };
    let outcome = tools::open_then_load(
        session,
        call,
        progress.started() + timeout,
        cancel,
        progress,
    )
    .await;
    let mut guard = session.lock().await;
    let outcome = finish(&mut guard, decl, outcome, cancel, started, timeout, agent).await;
    render(&mut guard, decl, outcome)
}

/// [`run`] on this session's active tab (a fork's: its tab).
async fn run_here(
    session: &mut ToolSession,
    decl: &'static ToolDecl,
    arguments: Map<String, Value>,
    cancel: &Cancel,
    progress: &Progress,
) -> Reply {
    // Kept for the trace's action event (docs/mcp.md#traces); a tool that runs steps records
    // its steps itself.
    let traced = (session.trace.is_some() && matches!(decl.runs, Runs::Session)).then(|| {
        (
            arguments.clone(),
            trace::iso_now(),
            std::time::Instant::now(),
            session.journal.log.cursor(),
        )
    });
    let outcome = execute(session, decl, arguments, cancel, progress).await;
    if let Some((arguments, started_at, started, log_cursor)) = &traced {
        if !cancel.is_cancelled() {
            let record = trace::CallRecord {
                tool: decl.name,
                observes: decl.observes,
                arguments,
                started_at: started_at.clone(),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                outcome: outcome.as_ref(),
                log_cursor: *log_cursor,
            };
            trace::record_action(session, record).await;
        }
    }
    render(session, decl, outcome)
}

async fn execute(
    session: &mut ToolSession,
    decl: &'static ToolDecl,
    arguments: Map<String, Value>,
    cancel: &Cancel,
    progress: &Progress,
) -> Result<ToolOutput, ToolError> {
    let started = std::time::Instant::now();
    let agent = session.agent_timeout();
    let timeout = call_timeout(decl, &arguments, agent);
    let tool_call = ToolCall::from_validated(decl, arguments)?;
    tool_call.check(session)?;
    // Connecting to a --cdp-endpoint (a pool's queue) is bounded by the call's own timeout,
    // counted from its arrival.
    session.call_deadline = Some(progress.started() + timeout);
    let mut ctx = ToolContext {
        session: &mut *session,
        cancel: cancel.clone(),
        progress: progress.clone(),
    };
    let outcome = tool_call.run(&mut ctx).await;
    finish(ctx.session, decl, outcome, cancel, started, timeout, agent).await
}

/// What every call's outcome gets after its tool ran: a tab closed, stuck or crashed meanwhile
/// reported or replaced, the observation, a replaced browser said.
async fn finish(
    session: &mut ToolSession,
    decl: &'static ToolDecl,
    mut outcome: Result<ToolOutput, ToolError>,
    cancel: &Cancel,
    started: std::time::Instant,
    timeout: std::time::Duration,
    agent: std::time::Duration,
) -> Result<ToolOutput, ToolError> {
    session.call_deadline = None;
    session.report_closed_tab(decl.verb, &mut outcome);
    // A tab the call found stuck is replaced before anything else runs; so is a tab whose
    // renderer crashed, which the failed call then reports.
    session.replace_stuck_tab().await;
    session.report_crashed_tab(decl.verb, &mut outcome).await;
    // The observation hook (docs/mcp.md#observations); a tool that runs steps makes its own.
    if let Ok(output) = &mut outcome {
        let hooked = decl.observes && matches!(decl.runs, Runs::Session);
        if hooked && output.observation.is_none() {
            let left = observation_bound(timeout, agent, started.elapsed());
            output.observation = session.observe_within(cancel, left).await;
            if let Some(observation) = &output.observation {
                output.links.extend(observation.links.iter().cloned());
            }
        }
    }
    say_replaced_browser(session, &mut outcome);
    outcome
}

/// A --cdp-endpoint browser replaced during the call (the pool ended the session since the
/// last one) is said first in the call's observation, else in its error's hint; a call with
/// neither leaves it to the next call's.
fn say_replaced_browser(session: &mut ToolSession, outcome: &mut Result<ToolOutput, ToolError>) {
    match outcome {
        Ok(output) => {
            if let Some(observation) = output.observation.as_mut() {
                if let Some(notice) = session.take_replaced_notice() {
                    observation.body = format!("{notice}\n{}", observation.body);
                }
            } else if let Some(text) = output.text.as_mut() {
                // browser_snapshot: its rendering is what the model reads.
                if let Some(notice) = session.take_replaced_notice() {
                    *text = format!("{notice}\n{text}");
                }
            }
        }
        Err(error) => {
            if let Some(notice) = session.take_replaced_notice() {
                let hint = error.hint.take().unwrap_or_default();
                error.hint = Some(if hint.is_empty() {
                    notice
                } else {
                    format!("{notice}; {hint}")
                });
            }
        }
    }
}

/// The call's `timeout_ms`: as given, else the tool's default for it (the agent timeout for
/// most tools, 30 s for navigations), else the agent timeout (a tool without one).
fn call_timeout(
    decl: &ToolDecl,
    arguments: &Map<String, Value>,
    agent: std::time::Duration,
) -> std::time::Duration {
    use tools::schema::{IntDefault, Kind};
    if let Some(ms) = arguments.get("timeout_ms").and_then(Value::as_u64) {
        return std::time::Duration::from_millis(ms);
    }
    let default = decl
        .args
        .iter()
        .find(|arg| arg.name == "timeout_ms")
        .and_then(|arg| match arg.kind {
            Kind::Int { default, .. } => default,
            _ => None,
        });
    match default {
        Some(IntDefault::Value(ms)) => {
            std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0))
        }
        Some(IntDefault::AgentTimeout) | None => agent,
    }
}

/// The smallest bound an observation gets, like a single check's (docs/mcp.md#pages-that-hang): an
/// action that succeeded just before its timeout still gets its snapshot from a page that
/// answers.
const OBSERVATION_FLOOR: std::time::Duration = std::time::Duration::from_millis(500);

/// The observation's bound: what is left of the call's own `timeout` (the tool's default when
/// the call gave none: 30 s for a navigation) after `elapsed`, at most the agent timeout, at
/// least [`OBSERVATION_FLOOR`] (never more than the agent timeout).
fn observation_bound(
    timeout: std::time::Duration,
    agent: std::time::Duration,
    elapsed: std::time::Duration,
) -> std::time::Duration {
    timeout
        .saturating_sub(elapsed)
        .min(agent)
        .max(OBSERVATION_FLOOR.min(agent))
}

/// A tool outcome → its [`Reply`], spilling applied (docs/mcp.md#spilling).
fn render(
    session: &mut ToolSession,
    decl: &ToolDecl,
    outcome: Result<ToolOutput, ToolError>,
) -> Reply {
    let output = match outcome {
        Err(error) => {
            let recovery = error
                .recovery_snapshot
                .as_deref()
                .map(|snapshot| session.artifacts.spill("recovery.txt", snapshot).inline);
            return Reply::Failed(Failed {
                error: error.to_json(),
                text: error.to_text(recovery.as_deref()),
            });
        }
        Ok(output) => output,
    };
    let label = decl.spill_label();
    let text = output
        .text
        .clone()
        .unwrap_or_else(|| output.result.to_string());
    let text = session.artifacts.spill(&label, &text).inline;
    let (observation, observation_full) = match &output.observation {
        None => (None, None),
        Some(observation) => {
            let mut inline = session
                .artifacts
                .spill("snapshot.txt", &observation.body)
                .inline;
            let mut full = observation.body.clone();
            for line in observation.footer() {
                for text in [&mut inline, &mut full] {
                    text.push('\n');
                    text.push_str(line);
                }
            }
            (Some(inline), Some(full))
        }
    };
    Reply::Done(Done {
        negative: decl
            .negative
            .is_some_and(|negative| negative(&output.result)),
        result: output.result,
        text,
        observation,
        observation_full,
        links: output.links,
        is_error: output.is_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    /// A navigation without `timeout_ms` has its 30 s, not the agent's 5 s: its observation is
    /// not starved when the load itself took longer than 5 s (issue 25, twenty sessions at once).
    #[test]
    fn a_calls_timeout_is_its_own_or_its_tools_default() {
        let agent = Duration::from_secs(5);
        let none = Map::new();
        let decl = |name: &str| tools::find(name).expect("a declared tool");
        let navigate = decl("browser_navigate");
        assert_eq!(
            call_timeout(navigate, &none, agent),
            Duration::from_secs(30)
        );
        let mut given = Map::new();
        given.insert("timeout_ms".into(), json!(1000));
        assert_eq!(
            call_timeout(navigate, &given, agent),
            Duration::from_secs(1)
        );
        assert_eq!(call_timeout(decl("browser_click"), &none, agent), agent);
        assert_eq!(call_timeout(decl("browser_snapshot"), &none, agent), agent);
    }

    /// The agent timeout caps what is left, not the call's whole timeout: a navigation that
    /// took 6 s of its 30 s still gets 5 s for its observation, where capping first left it
    /// 0 ms (`timed out after 0ms`, twenty sessions at once in CI).
    #[test]
    fn an_observation_gets_what_is_left_capped_by_the_agent_timeout_with_a_floor() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        assert_eq!(observation_bound(s(30), s(5), s(6)), s(5));
        assert_eq!(observation_bound(s(30), s(5), s(27)), s(3));
        assert_eq!(observation_bound(s(1), s(5), ms(400)), ms(600));
        // Past its timeout (an action that answered late), a page that answers still shows.
        assert_eq!(observation_bound(s(1), s(5), s(2)), OBSERVATION_FLOOR);
        // An agent timeout below the floor is the bound.
        assert_eq!(observation_bound(s(30), ms(200), s(1)), ms(200));
    }
}
