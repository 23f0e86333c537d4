//! The `chromate` binary: its front ends on top of the command layer (`chromate-command`) and
//! the flows (`chromate-flows`) — the MCP server over stdio and HTTP (`mcp/`), the command line
//! and its session daemons (`cli/`, `daemon/`) and `bench-snapshot` (`bench/`).
//!
//! Owns: argv dispatch to them, process exit statuses (2 for usage errors, before stdin is
//! ever read), printing environment warnings to stderr, and building the tokio runtime. Does
//! not own argv grammar (`cli/`), configuration (`chromate_command::config`) or the protocol
//! (`mcp/server.rs`).

mod bench;
mod cli;
mod daemon;
#[cfg(test)]
mod docs;
mod log;
mod mcp;
mod signals;

use std::process::ExitCode;

use chromate_command::config::Config;
use cli::Command;

fn main() -> ExitCode {
    log::install();
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let command = match cli::parse_args(&args) {
        Ok(command) => command,
        Err(cli::UsageError(message)) => {
            eprintln!("chromate: {}", message.trim_end());
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Command::Tool(command) => cli::run::tool(&command),
        Command::Audit(command) => cli::audit::run(&command),
        Command::Describe(command) => cli::describe::run(&command),
        Command::QaFlow(command) => cli::qa_flow::run(&command),
        Command::Capture(command) => cli::flows::run_capture(&command),
        Command::Flows(command) => cli::flows::run_flows(&command),
        Command::Close { session } => cli::run::close(session.as_deref()),
        Command::Sessions { json } => cli::run::sessions(json),
        Command::Skill { install: None } => {
            print!("{}", cli::skill::text());
            ExitCode::SUCCESS
        }
        Command::Skill {
            install: Some(install),
        } => cli::skill::run_install(&install),
        Command::Daemon {
            session,
            idle,
            launch,
        } => daemon_main(session, idle, launch),
        Command::Version => {
            println!("chromate {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Command::BenchSnapshot(args) => {
            let Some(runtime) = runtime() else {
                return ExitCode::FAILURE;
            };
            match runtime.block_on(bench::run(&args)) {
                Ok(report) => {
                    print!("{report}");
                    ExitCode::SUCCESS
                }
                Err(message) => {
                    eprintln!("chromate: bench-snapshot: {message}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Init { agent } => {
            print!("{}", cli::init_text(agent));
            // Read, never created: the servers that generated a token keep it there.
            let runtime = daemon::runtime_dir_from(
                &|name| std::env::var_os(name),
                chromate_command::private_fs::effective_uid(),
            );
            print!(
                "{}",
                cli::init_http_text(&mcp::http::running_servers(&runtime))
            );
            ExitCode::SUCCESS
        }
        Command::Mcp(flags) => {
            let attach = flags.session.clone();
            let caps_flows = flags.caps_flows;
            let http = flags.http.clone();
            let (config, warnings) = Config::resolve(flags, &|name| std::env::var(name).ok());
            for warning in warnings {
                eprintln!("chromate: {warning}");
            }
            let Some(runtime) = runtime() else {
                return ExitCode::FAILURE;
            };
            let status = match http {
                Some(mut http) => {
                    if http.auth_tokens.is_empty() && !http.no_auth {
                        http.auth_tokens.extend(
                            std::env::var("CHROMATE_MCP_AUTH_TOKEN")
                                .ok()
                                .filter(|token| !token.is_empty()),
                        );
                    }
                    runtime.block_on(mcp::http::serve(config, http, caps_flows))
                }
                None => runtime.block_on(mcp::server::serve(config, attach, caps_flows)),
            };
            // The stdin reader thread may be blocked in read(); exiting the
            // process (rather than joining it) is what lets EOF-less shutdowns
            // (signals) finish promptly.
            std::process::exit(status);
        }
    }
}

/// `chromate daemon`: the session daemon, with the configuration of the environment the
/// command that started it ran in.
#[cfg(unix)]
fn daemon_main(session: String, idle: std::time::Duration, launch: bool) -> ExitCode {
    let (config, warnings) =
        Config::resolve(chromate_command::config::McpFlags::default(), &|name| {
            std::env::var(name).ok()
        });
    let mut config = config.for_command_line();
    // `chromate webmcp list|call` (docs/cli.md#webmcp): a session's browser offers the page's
    // own tools.
    config.caps_webmcp = true;
    for warning in warnings {
        eprintln!("chromate: {warning}");
    }
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    // On a worker, not on this thread: a worker that sees a connection ready accepts it and
    // runs its request itself, where `block_on` would hand each one from a worker to this
    // thread and back (two wake-ups per command, slow when the machine is loaded).
    let serving = runtime.spawn(daemon::server::serve(session, idle, launch, config));
    let status = match runtime.block_on(serving) {
        Ok(status) => status,
        Err(err) => {
            eprintln!("chromate daemon: {err}");
            1
        }
    };
    std::process::exit(status);
}

#[cfg(not(unix))]
fn daemon_main(_session: String, _idle: std::time::Duration, _launch: bool) -> ExitCode {
    eprintln!("chromate: sessions need Linux or macOS; on Windows, use `chromate mcp`");
    ExitCode::FAILURE
}

/// The two-worker runtime the server and the bench run on; `None` (said on stderr) if the OS
/// refuses it.
fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => Some(runtime),
        Err(err) => {
            eprintln!("chromate: cannot start the async runtime: {err}");
            None
        }
    }
}
