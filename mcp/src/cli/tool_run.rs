//! One tool run by a command of its own (`chromate audit`, `chromate qa-flow`): in this process
//! on a headless browser it launches and closes before it returns, or with `--session NAME` in
//! that session's daemon, on its browser.
//!
//! Owns the resolution of the configuration a one-shot run uses (the environment, as the
//! command line reads it, its warnings on stderr), the validation of the tool's arguments, the
//! runtime of a one-shot run, the request to a session's daemon, and handing each progress
//! phase in turn to the command, which decides how to show it.

use std::time::Duration;

use serde_json::{Map, Value};

use super::commands::DEFAULT_IDLE;
use crate::daemon::client::{self, Start};
use crate::daemon::{self, Request, Response, SessionPaths};
use chromate_command::call::Progress;
use chromate_command::config::{Config, McpFlags};
use chromate_command::session::ToolSession;
use chromate_command::tools::{self, schema::ToolDecl, Defaults};
use chromate_command::Reply;

/// Where a command runs its tool.
pub(crate) enum Target<'a> {
    /// In this process, on a browser of its own, with the command's configuration flags.
    OwnBrowser(Box<McpFlags>),
    /// In the named session's daemon; one it starts lives `idle` unused ([`DEFAULT_IDLE`]).
    Session {
        name: &'a str,
        idle: Option<Duration>,
    },
}

/// Runs `decl` at `target` ([`on_own_browser`], [`on_session`]).
pub(crate) fn run(
    decl: &'static ToolDecl,
    target: Target<'_>,
    arguments: &Map<String, Value>,
    invalid: &dyn Fn(&str) -> String,
    on_phase: Option<&mut dyn FnMut(&str)>,
) -> Result<Reply, String> {
    match target {
        Target::OwnBrowser(flags) => on_own_browser(decl, *flags, arguments, invalid, on_phase),
        Target::Session { name, idle } => on_session(decl, Some(name), idle, arguments, on_phase),
    }
}

/// Runs `decl` in this process, on a browser of its own that is closed (with its context and
/// every process it started) before this returns: a one-shot command leaves nothing running.
/// `flags` are the command's own configuration flags; `invalid` words the validator's message
/// as the command line spells the arguments; `on_phase` gets each progress phase in turn.
fn on_own_browser(
    decl: &'static ToolDecl,
    flags: McpFlags,
    arguments: &Map<String, Value>,
    invalid: &dyn Fn(&str) -> String,
    mut on_phase: Option<&mut dyn FnMut(&str)>,
) -> Result<Reply, String> {
    let (config, warnings) = Config::resolve(flags, &|name| std::env::var(name).ok());
    let config = config.for_command_line();
    for warning in warnings {
        eprintln!("chromate: {warning}");
    }
    let defaults = Defaults {
        agent_timeout_ms: config.agent_timeout_ms,
    };
    let arguments = tools::validate(decl, Some(&Value::Object(arguments.clone())), &defaults)
        .map_err(|error| invalid(&error.message))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))?;
    let reply = runtime.block_on(async {
        let cancel = super::flows::watch_signals();
        let phases = Progress::new("starting", std::time::Instant::now());
        let mut changes = phases.changes();
        let mut watching = on_phase.is_some();
        let mut seen = 0;
        let mut show = |on_phase: &mut Option<&mut dyn FnMut(&str)>| {
            if let Some(on_phase) = on_phase {
                for phase in phases.phases_since(&mut seen) {
                    on_phase(&phase);
                }
            }
        };
        let work = async {
            let mut session = ToolSession::new(config);
            session.call_dir = std::env::current_dir().ok();
            let reply =
                chromate_command::run(&mut session, decl, arguments, &cancel, &phases).await;
            session.shutdown().await;
            reply
        };
        tokio::pin!(work);
        loop {
            tokio::select! {
                reply = &mut work => {
                    show(&mut on_phase);
                    break reply;
                }
                changed = changes.changed(), if watching => match changed {
                    Ok(()) => show(&mut on_phase),
                    Err(_) => watching = false,
                },
            }
        }
    });
    // The signal watch and anything else still spawned end with the runtime, now.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(reply)
}

/// Runs `decl` in the named session's daemon (started if need be, and kept for `idle` unused,
/// by default [`DEFAULT_IDLE`]), on its browser; `on_phase` gets each progress phase in turn.
/// The daemon validates the arguments with its own configuration.
fn on_session(
    decl: &ToolDecl,
    session: Option<&str>,
    idle: Option<Duration>,
    arguments: &Map<String, Value>,
    on_phase: Option<&mut dyn FnMut(&str)>,
) -> Result<Reply, String> {
    let paths = paths(session)?;
    let request = Request::Call {
        tool: decl.name.to_owned(),
        arguments: arguments.clone(),
        cwd: std::env::current_dir().ok(),
        progress: on_phase.is_some(),
        refuse_file_urls: false,
    };
    let start = Start {
        idle: idle.unwrap_or(DEFAULT_IDLE),
        launch: true,
    };
    let mut ignore = |_: &str| {};
    let on_phase = on_phase.unwrap_or(&mut ignore);
    match client::request_with_progress(&paths, &request, Some(&start), on_phase) {
        Ok(Response::Reply(reply)) => Ok(reply),
        Ok(Response::Refused(message)) => Err(format!("the session daemon refused: {message}")),
        Ok(_) => Err("the session daemon answered something else".to_owned()),
        Err(err) => Err(err.to_string()),
    }
}

fn paths(session: Option<&str>) -> Result<SessionPaths, String> {
    let name = daemon::session_name(session)?;
    let dir = daemon::runtime_dir().map_err(|err| format!("the runtime directory: {err}"))?;
    Ok(SessionPaths::new(&dir, &name))
}
