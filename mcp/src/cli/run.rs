//! Running the session commands: a tool command sent to its session's daemon and its reply
//! printed; `close`; `sessions`.
//!
//! Owns: what reaches stdout and stderr and the exit status. By default stdout gets exactly
//! the text the MCP model sees (the result line, then the observation); `--json` prints the
//! result object with the observation as its `observation` field. A tool error prints its
//! `error:`/`code:`/`hint:` lines (and recovery snapshot) on stderr — or, with `--json`, its
//! error object on stdout — and exits 1; so do `exists` finding nothing and a failing
//! `a11y --check`, which a script treats as assertions. Usage errors (exit 2) never get here.

use std::io::Write;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::commands::{ToolCommand, DEFAULT_IDLE};
use crate::daemon::client::{self, ClientError, Start};
use crate::daemon::{self, Request, Response, SessionPaths};
use chromate_command::Reply;

/// Exit status of a tool error or a negative answer.
const FAILED: u8 = 1;

/// Runs one tool command on its session (starting the session if needed).
pub(crate) fn tool(command: &ToolCommand) -> ExitCode {
    let paths = match paths(command.common.session.as_deref()) {
        Ok(paths) => paths,
        Err(message) => return fail(&message),
    };
    let request = Request::Call {
        tool: command.decl.name.to_owned(),
        arguments: command.arguments.clone(),
        cwd: std::env::current_dir().ok(),
        progress: false,
        refuse_file_urls: false,
    };
    let start = Start {
        idle: command.common.idle.unwrap_or(DEFAULT_IDLE),
        launch: command.decl.cli.launches,
    };
    match client::request(&paths, &request, Some(&start)) {
        Ok(Response::Reply(reply)) => print_reply(&reply, command.common.json),
        Ok(other) => fail(&unexpected(&other)),
        Err(err) => fail(&err.to_string()),
    }
}

/// Prints a reply the way the command line promises; returns its exit status.
pub(crate) fn print_reply(reply: &Reply, json: bool) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match reply {
        Reply::Done(done) => {
            let printed = if json {
                let mut object = match &done.result {
                    Value::Object(object) => object.clone(),
                    other => {
                        let mut object = serde_json::Map::new();
                        object.insert("result".to_owned(), other.clone());
                        object
                    }
                };
                if let Some(observation) = &done.observation {
                    object.insert("observation".to_owned(), json!(observation));
                }
                writeln!(stdout, "{}", Value::Object(object))
            } else {
                let mut text = done.text.clone();
                if let Some(observation) = &done.observation {
                    text.push('\n');
                    text.push_str(observation);
                }
                writeln!(stdout, "{text}")
            };
            if printed.and_then(|()| stdout.flush()).is_err() {
                // stdout is gone (a closed pipe): nothing else to tell.
                return ExitCode::from(FAILED);
            }
            if done.negative || done.is_error {
                ExitCode::from(FAILED)
            } else {
                ExitCode::SUCCESS
            }
        }
        Reply::Failed(failed) => {
            if json {
                let _ = writeln!(stdout, "{}", json!({ "error": failed.error }));
            } else {
                eprintln!("{}", failed.text);
            }
            ExitCode::from(FAILED)
        }
    }
}

/// `chromate close [--session NAME]`: ends the session's daemon and its browser.
pub(crate) fn close(session: Option<&str>) -> ExitCode {
    let paths = match paths(session) {
        Ok(paths) => paths,
        Err(message) => return fail(&message),
    };
    match client::request(&paths, &Request::Close, None) {
        Ok(Response::Closed) => {
            println!("closed session {}", paths.name);
            ExitCode::SUCCESS
        }
        Err(ClientError::NotRunning) => {
            println!("session {} was not running", paths.name);
            ExitCode::SUCCESS
        }
        // A daemon that does not answer (stopped, hung) is ended by the pid it recorded.
        Err(ClientError::NotAnswering { .. }) => match client::kill_unanswering(&paths) {
            Ok(pid) => {
                println!(
                    "closed session {} (its daemon, pid {pid}, did not answer and was killed)",
                    paths.name
                );
                ExitCode::SUCCESS
            }
            Err(message) => fail(&format!(
                "the daemon of session {} does not answer: {message}",
                paths.name
            )),
        },
        Ok(other) => fail(&unexpected(&other)),
        Err(err) => fail(&err.to_string()),
    }
}

/// `chromate sessions [--json]`: every session of this user with a daemon answering.
pub(crate) fn sessions(json: bool) -> ExitCode {
    let dir = match daemon::runtime_dir() {
        Ok(dir) => dir,
        Err(err) => return fail(&format!("the runtime directory: {err}")),
    };
    let mut names: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".sock").map(str::to_owned)
            })
            .collect(),
        Err(err) => return fail(&format!("{}: {err}", dir.display())),
    };
    names.sort();
    let mut rows = Vec::new();
    for name in names {
        let paths = SessionPaths::new(&dir, &name);
        // A dead daemon's socket answers nothing: the next command of that session replaces
        // it. A symlink or anything but this user's socket is skipped, never followed.
        match client::request(&paths, &Request::Info, None) {
            Ok(Response::Info(info)) => rows.push(json!({
                "session": info.session,
                "pid": info.pid,
                "browserPid": info.browser_pid,
                "busy": info.busy,
                "answering": true,
                "sessionDir": info.session_dir,
                "idleTimeoutS": info.idle_timeout_s,
                "version": info.version,
            })),
            Err(ClientError::NotAnswering { pid, .. }) => rows.push(json!({
                "session": name,
                "pid": pid,
                "answering": false,
            })),
            _ => {}
        }
    }
    if json {
        println!("{}", json!({ "sessions": rows }));
    } else if rows.is_empty() {
        println!("no sessions");
    } else {
        for row in &rows {
            let browser = match row["browserPid"].as_u64() {
                _ if row["answering"] == json!(false) => "not answering".to_owned(),
                Some(pid) => format!("browser pid {pid}"),
                None if row["busy"] == json!(true) => "busy".to_owned(),
                None => "no browser".to_owned(),
            };
            println!(
                "{}\tpid {}\t{browser}",
                row["session"].as_str().unwrap_or_default(),
                row["pid"]
            );
        }
    }
    ExitCode::SUCCESS
}

fn paths(session: Option<&str>) -> Result<SessionPaths, String> {
    let name = daemon::session_name(session)?;
    let dir = daemon::runtime_dir().map_err(|err| format!("the runtime directory: {err}"))?;
    Ok(SessionPaths::new(&dir, &name))
}

fn unexpected(response: &Response) -> String {
    match response {
        Response::Refused(message) => format!("the session daemon refused: {message}"),
        _ => {
            "the session daemon answered something else (a different chromate version?)".to_owned()
        }
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("chromate: {message}");
    ExitCode::from(FAILED)
}
