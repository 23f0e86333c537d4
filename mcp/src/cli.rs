//! Hand-written argv parsing for the `chromate` binary and the text of
//! `chromate init --mcp` (§14).
//!
//! Owns: turning argv into a [`Command`], the help text and the client
//! configuration snippets. Does not own the environment (`config.rs`) or
//! running anything: `main.rs` dispatches. One-shot subcommands (`demo`,
//! `bench-snapshot`, …) are added as new [`Command`] variants here.

use std::path::PathBuf;

use crate::config::{parse_origin_list, McpFlags};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Command {
    /// `chromate mcp [flags]`: the MCP server over stdio.
    Mcp(McpFlags),
    /// `chromate init --mcp [--agent NAME]`.
    Init { agent: Option<Agent> },
    /// `chromate --help`, `chromate help`, `chromate <cmd> --help`.
    Help(&'static str),
    /// `chromate --version`.
    Version,
    /// `chromate bench-snapshot <url|file> [--repeat N] [--max-lines N]`.
    BenchSnapshot {
        /// A URL, or a path to an HTML file.
        target: String,
        /// How many timed snapshots.
        repeat: usize,
        /// The semantic line budget (80 = the default view).
        max_lines: usize,
    },
}

/// A usage error: printed to stderr, exit status 2.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UsageError(pub(crate) String);

pub(crate) const TOP_HELP: &str = "\
chromate — browser automation for AI agents

usage:
  chromate mcp [options]        run the MCP server over stdio
  chromate init --mcp [--agent NAME]
                                print MCP client configuration snippets
  chromate bench-snapshot <url|file> [--repeat N] [--max-lines N]
                                measure snapshot cost (time, bytes, tokens, refs)
  chromate --help | --version
";

pub(crate) const BENCH_HELP: &str = "\
usage: chromate bench-snapshot <url|file> [--repeat N] [--max-lines N]

Loads the page in headless Chromium and takes N+1 snapshots with the given semantic budget
(default 80, the MCP default view; 5000 shows everything). Prints the first snapshot's time and
the median and spread of the next N, the rendered bytes, an estimate of tokens (bytes / 4) and
the number of refs.
";

pub(crate) const MCP_HELP: &str = "\
usage: chromate mcp [options]

Runs the MCP server on stdin/stdout (one JSON-RPC message per line).

options:
  --headed                  show the browser window (default: headless)
  --browser PATH            browser executable (else CHROMATE_BROWSER, else search)
  --cdp-endpoint URL        connect to a running browser instead of launching one
  --artifacts-dir DIR       artifact root (else CHROMATE_MCP_ARTIFACTS_DIR, else temp dir)
  --allowed-origins LIST    comma list of scheme://host[:port]; block everything else
  --blocked-origins LIST    comma list of scheme://host[:port] to block
  --structured-content      success results also carry structuredContent {result, observation}
                            (for hosts that show the model only structuredContent)
  -h, --help                print this help

environment:
  CHROMATE_BROWSER, CHROMATE_MCP_ARTIFACTS_DIR, CHROMATE_MCP_SPILL_BYTES (8192),
  CHROMATE_MCP_MAX_RESPONSE_BYTES (32768), CHROMATE_AGENT_TIMEOUT (5000 ms),
  CHROMATE_TRACE_DIR, CHROMATE_STATE_DIR (./.chromate/state),
  CHROMATE_MCP_STRUCTURED_CONTENT (1 = --structured-content)
";

pub(crate) const INIT_HELP: &str = "\
usage: chromate init --mcp [--agent claude|vscode|codex|cursor|gemini|goose|zed]

Prints MCP client configuration for chromate. It never reads or writes a file.
";

/// Parses argv without the program name.
pub(crate) fn parse_args(args: &[String]) -> Result<Command, UsageError> {
    let Some((first, rest)) = args.split_first() else {
        return Err(UsageError(format!("missing command\n\n{TOP_HELP}")));
    };
    match first.as_str() {
        "mcp" => parse_mcp(rest),
        "init" => parse_init(rest),
        "bench-snapshot" => parse_bench(rest),
        "-h" | "--help" | "help" => Ok(Command::Help(TOP_HELP)),
        "-V" | "--version" => Ok(Command::Version),
        other => Err(UsageError(format!(
            "unknown command {other:?}\n\n{TOP_HELP}"
        ))),
    }
}

fn parse_bench(args: &[String]) -> Result<Command, UsageError> {
    let mut target = None;
    let mut repeat = 21;
    let mut max_lines = 80;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help(BENCH_HELP)),
            "--repeat" | "--max-lines" => {
                let value = args
                    .next()
                    .and_then(|v| v.parse::<usize>().ok())
                    .filter(|v| (1..=5000).contains(v))
                    .ok_or_else(|| UsageError(format!("{arg} needs a number from 1 to 5000")))?;
                if arg == "--repeat" {
                    repeat = value;
                } else {
                    max_lines = value;
                }
            }
            other if other.starts_with('-') => {
                return Err(UsageError(format!(
                    "unknown option {other:?}\n\n{BENCH_HELP}"
                )))
            }
            other if target.is_none() => target = Some(other.to_owned()),
            other => return Err(UsageError(format!("unexpected argument {other:?}"))),
        }
    }
    let target =
        target.ok_or_else(|| UsageError(format!("missing url or file\n\n{BENCH_HELP}")))?;
    Ok(Command::BenchSnapshot {
        target,
        repeat,
        max_lines,
    })
}

fn parse_mcp(args: &[String]) -> Result<Command, UsageError> {
    let mut flags = McpFlags::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        // `--flag=value` is accepted as well as `--flag value`.
        let (name, inline_value) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = |flag: &str| -> Result<String, UsageError> {
            match inline_value.clone().or_else(|| args.next().cloned()) {
                Some(value) => Ok(value),
                None => Err(UsageError(format!("mcp: {flag} needs a value"))),
            }
        };
        match name {
            "-h" | "--help" => return Ok(Command::Help(MCP_HELP)),
            "--headed" if inline_value.is_none() => flags.headed = true,
            "--structured-content" if inline_value.is_none() => flags.structured_content = true,
            "--browser" => flags.browser = Some(PathBuf::from(value(name)?)),
            "--cdp-endpoint" => flags.cdp_endpoint = Some(value(name)?),
            "--artifacts-dir" => flags.artifacts_dir = Some(PathBuf::from(value(name)?)),
            "--allowed-origins" => {
                let list = value(name)?;
                flags.allowed_origins = Some(
                    parse_origin_list(&list)
                        .map_err(|err| UsageError(format!("mcp: --allowed-origins: {err}")))?,
                );
            }
            "--blocked-origins" => {
                let list = value(name)?;
                flags.blocked_origins = Some(
                    parse_origin_list(&list)
                        .map_err(|err| UsageError(format!("mcp: --blocked-origins: {err}")))?,
                );
            }
            _ => {
                return Err(UsageError(format!(
                    "mcp: unknown option {arg:?}\n\n{MCP_HELP}"
                )))
            }
        }
    }
    Ok(Command::Mcp(flags))
}

fn parse_init(args: &[String]) -> Result<Command, UsageError> {
    let mut mcp = false;
    let mut agent = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help(INIT_HELP)),
            "--mcp" => mcp = true,
            "--agent" => {
                let Some(name) = args.next() else {
                    return Err(UsageError("init: --agent needs a value".to_owned()));
                };
                agent = Some(parse_agent(name)?);
            }
            other => match other.strip_prefix("--agent=") {
                Some(name) => agent = Some(parse_agent(name)?),
                None => {
                    return Err(UsageError(format!(
                        "init: unknown option {other:?}\n\n{INIT_HELP}"
                    )))
                }
            },
        }
    }
    if !mcp {
        return Err(UsageError(format!(
            "init: --mcp is required\n\n{INIT_HELP}"
        )));
    }
    Ok(Command::Init { agent })
}

fn parse_agent(name: &str) -> Result<Agent, UsageError> {
    Agent::ALL
        .iter()
        .copied()
        .find(|agent| agent.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = Agent::ALL.iter().map(|agent| agent.name()).collect();
            UsageError(format!(
                "init: unknown agent {name:?}; known agents: {}",
                names.join(", ")
            ))
        })
}

/// The MCP clients `chromate init --mcp` knows, in print order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Agent {
    Claude,
    Vscode,
    Codex,
    Cursor,
    Gemini,
    Goose,
    Zed,
}

impl Agent {
    pub(crate) const ALL: &'static [Agent] = &[
        Agent::Claude,
        Agent::Vscode,
        Agent::Codex,
        Agent::Cursor,
        Agent::Gemini,
        Agent::Goose,
        Agent::Zed,
    ];

    /// The `--agent` spelling.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Vscode => "vscode",
            Agent::Codex => "codex",
            Agent::Cursor => "cursor",
            Agent::Gemini => "gemini",
            Agent::Goose => "goose",
            Agent::Zed => "zed",
        }
    }

    /// Heading line: the client and the file the snippet goes in.
    fn heading(self) -> &'static str {
        match self {
            Agent::Claude => "# Claude Code — .mcp.json at the repo root (approved once), or run: claude mcp add --scope project chromate -- chromate mcp",
            Agent::Vscode => "# VS Code — .vscode/mcp.json (note `servers` and the required `type`)",
            Agent::Codex => "# Codex — .codex/config.toml (trusted projects only; else ~/.codex/config.toml)",
            Agent::Cursor => "# Cursor — .cursor/mcp.json (or ~/.cursor/mcp.json)",
            Agent::Gemini => "# Gemini CLI — .gemini/settings.json (or ~/.gemini/settings.json), or run: gemini mcp add chromate chromate mcp",
            Agent::Goose => "# Goose — ~/.config/goose/config.yaml (restart goose)",
            Agent::Zed => "# Zed — settings.json",
        }
    }

    fn snippet(self) -> &'static str {
        const CLAUDE_LIKE: &str =
            r#"{ "mcpServers": { "chromate": { "command": "chromate", "args": ["mcp"] } } }"#;
        match self {
            Agent::Claude | Agent::Cursor | Agent::Gemini => CLAUDE_LIKE,
            Agent::Vscode => {
                r#"{ "servers": { "chromate": { "type": "stdio", "command": "chromate", "args": ["mcp"] } } }"#
            }
            Agent::Codex => "[mcp_servers.chromate]\ncommand = \"chromate\"\nargs = [\"mcp\"]",
            Agent::Goose => "extensions:\n  chromate: { enabled: true, name: chromate, type: stdio, cmd: chromate, args: [mcp], envs: {}, timeout: 300 }",
            Agent::Zed => {
                r#"{ "context_servers": { "chromate": { "source": "custom", "command": "chromate", "args": ["mcp"], "env": {} } } }"#
            }
        }
    }
}

/// The stdout of `chromate init --mcp [--agent NAME]`.
pub(crate) fn init_text(agent: Option<Agent>) -> String {
    let agents: Vec<Agent> = match agent {
        Some(agent) => vec![agent],
        None => Agent::ALL.to_vec(),
    };
    let mut out = String::new();
    for agent in agents {
        out.push_str(agent.heading());
        out.push('\n');
        out.push_str(agent.snippet());
        out.push_str("\n\n");
    }
    out.push_str(
        "# If the client cannot find `chromate` on PATH, use its absolute path as the command.\n\
         # Environment variables go in the client's env map ([mcp_servers.chromate.env] for Codex, envs for Goose).\n",
    );
    out
}

#[cfg(test)]
mod tests;
