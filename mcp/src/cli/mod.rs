//! The command line front end: argv of the `chromate` binary, the session commands, and
//! the text of `chromate init --mcp` (`docs/mcp.md#configure-a-host`).
//!
//! Owns: turning argv into a [`Command`], the top-level help text and the client
//! configuration snippets; `commands.rs` reads every tool's command from its declaration,
//! `run.rs` runs it on a session and prints its reply, `skill.rs` is the agent skill. Does
//! not own the environment (`chromate_command::config`), sessions (`crate::daemon`) or what a tool does
//! (`chromate_command`): `main.rs` dispatches.

pub(crate) mod audit;
pub(crate) mod commands;
pub(crate) mod describe;
pub(crate) mod flows;
mod init;
pub(crate) mod qa_flow;
pub(crate) mod run;
pub(crate) mod skill;
mod tool_run;
mod words;

use std::path::PathBuf;
use std::time::Duration;

use chromate_command::config::{parse_origin_list, McpFlags};
use init::parse_init;
pub(crate) use init::{init_http_text, init_text, Agent};
use words::{Dashes, Words};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Command {
    /// `chromate mcp [flags]`: the MCP server over stdio.
    Mcp(McpFlags),
    /// `chromate init --mcp [--agent NAME]`.
    Init { agent: Option<Agent> },
    /// `chromate --help`, `chromate help`, `chromate <cmd> --help`.
    Help(String),
    /// `chromate <tool command> ...`: one tool on a persistent session.
    Tool(commands::ToolCommand),
    /// `chromate audit URL [...]`: an audit on a session's browser, and its report.
    Audit(audit::AuditCommand),
    /// `chromate capture URL --name NAME [...]`: one capture in a browser of its own.
    Capture(flows::CaptureCommand),
    /// `chromate flows list|run|describe ...`.
    Flows(flows::FlowsCommand),
    /// `chromate describe FILE [...]`: a screenshot described by a vision model.
    Describe(describe::DescribeCommand),
    /// `chromate qa-flow URL --step TEXT... [...]`: a user journey run by a model.
    QaFlow(qa_flow::QaFlowCommand),
    /// `chromate close [--session NAME]`.
    Close { session: Option<String> },
    /// `chromate sessions [--json]`.
    Sessions { json: bool },
    /// `chromate skill [--install [--agents] [--dir DIR]]`: print the agent skill, or (with
    /// `install`) write it where agents find it.
    Skill { install: Option<skill::Install> },
    /// `chromate daemon --session NAME --idle-timeout S [--launch]`: started by the client,
    /// not by people; `--launch` launches the browser at once.
    Daemon {
        session: String,
        idle: Duration,
        launch: bool,
    },
    /// `chromate --version`.
    Version,
    /// `chromate bench-snapshot TARGET... [--peer KIND=CMD] [--format F] ...`.
    BenchSnapshot(crate::bench::BenchArgs),
}

/// A usage error: printed to stderr, exit status 2.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UsageError(pub(crate) String);

pub(crate) const TOP_HELP: &str = "\
chromate — browser automation for AI agents

usage:
  chromate [--session NAME] [--json] <command> [args]
                                run one browser tool on a persistent session
                                (chromate <command> --help; docs/cli.md); the
                                global flags also go after the command
    navigate click fill type element press key mouse hover upload dialog find exists
    wait read expect snapshot locators a11y page logs mock state trace screenshot
    status batch eval
  chromate audit URL [--depth N] [--format text|json|md|html|sarif|junit] [--fail-on SEV] ...
                                audit a page or small site: errors, network, links,
                                accessibility, layout, speed (chromate audit --help)
  chromate errors [--peek] [--source console|pageerror|http|all] [--min-severity S]
                                drain the session's runtime errors (its own cursor)
  chromate capture URL --name NAME [--selector CSS] [--full-page] [--output-dir DIR] ...
                                save a deterministic PNG or PDF of a page (its own
                                headless browser; no session)
  chromate flows list|run [NAME...]|describe NAME [--config FILE] [--output-dir DIR] ...
                                named flows of tool steps and captures from a TOML file
                                (./chromate.toml), for CI: reports, exit status 1 on failure
  chromate describe FILE [--provider P] [--model M] [--prompt TEXT] [--text]
                                describe a screenshot with a vision model (docs/llm.md)
  chromate qa-flow URL --step TEXT... [--expect TEXT] [--format json|text|junit] ...
                                run a user journey in plain-language steps with a model
                                (docs/llm.md#qa-flow)
  chromate close [--session NAME]
                                end a session and its browser
  chromate sessions [--json]    list this user's running sessions
  chromate skill [--install [--agents] [--dir DIR]]
                                print the agent skill (SKILL.md), or install it for
                                Claude Code (.claude/skills) or other agents (.agents/skills)
  chromate mcp [options]        run the MCP server over stdio
  chromate init --mcp [--agent NAME]
                                print MCP client configuration snippets
  chromate bench-snapshot TARGET... [--peer KIND=CMD] [--format table|json|html] ...
                                snapshot cost on your pages against the installed peers
                                (time, bytes, tokens, controls, recall against Chrome)
  chromate --help | --version
";

pub(crate) const BENCH_HELP: &str = "\
usage: chromate bench-snapshot TARGET... [options]

Snapshot cost on your own pages, chromate against whichever peers are installed (Playwright MCP,
chrome-devtools-mcp, agent-browser), each driven as an agent drives it (MCP over stdio, or the
CLI), all on the same browser. Per page and tool: the time of the default-view snapshot call
(median and p90 of --repeat), its bytes and tokens (o200k_base in a `--features tokens` build;
bytes / 4 beside it), and the full view's controls (links, buttons, textboxes, comboboxes,
checkboxes, radios, headings, tabs, menu items, options, switches, sliders, spin buttons) with
recall and precision against Chrome's accessibility tree in every frame, each tool read after
the same --wait-ms.

targets (any mix):
  URL                       a page (http://, https://, file://)
  FILE.html                 a local page (served on 127.0.0.1 with its directory)
  DIR                       every .html/.htm file under DIR (served on 127.0.0.1)
  SITEMAP.xml | URL.xml     the <loc> pages of a sitemap (a file, or over http://)
  FILE                      a file of targets, one a line (# comments)

options:
  --repeat N                timed snapshots per page and tool (default 5)
  --peer KIND=CMD           the command that starts a peer (KIND: playwright-mcp,
                            chrome-devtools-mcp, agent-browser; chromate = another chromate
                            MCP server, e.g. an older build); KIND=off leaves it out. Unnamed
                            peers are looked for on PATH and in node_modules/.bin
  --peers-dir DIR           look in DIR/node_modules/.bin first
  --no-peers                chromate alone (peers named with --peer still run)
  --wait-ms N               the wait after each navigation, the same for every tool and for
                            Chrome's reference (default 1000)
  --browser PATH            the browser every tool runs (default: CHROMATE_BROWSER, else search)
  --format table|json|html  the report (default table); html is one self-contained page
  --output FILE             write the report to FILE (stdout gets the summary)
  --detail                  chromate alone, in-process, per page: first snapshot, median and
                            spread of the next N (default 21), and the snapshot + diff after
                            small changes
  --max-lines N             the semantic budget of --detail (default 80; 5000 = everything)
  -h, --help                print this help

Reproducing a figure: docs/cli.md#bench-snapshot.
";

/// The largest `--cdp-timeout` (10 minutes).
const MAX_CDP_TIMEOUT_MS: u64 = 600_000;

pub(crate) const MCP_HELP: &str = "\
usage: chromate mcp [options]

Runs the MCP server on stdin/stdout (one JSON-RPC message per line), or with --http over
Streamable HTTP for many isolated sessions.

options:
  --headed                  show the browser window (default: headless)
  --browser PATH            browser executable (else CHROMATE_BROWSER, else search)
  --cdp-endpoint URL        connect to a running browser instead of launching one: ws://,
                            wss:// (TLS, certificate verified; query and user:password@
                            kept) or http://host:port
  --cdp-ca FILE             PEM CA certificates trusted for a wss:// endpoint, besides the
                            system's roots
  --cdp-authorization VALUE the Authorization header of the endpoint's websocket handshake
                            (else CHROMATE_CDP_AUTHORIZATION), e.g. `Bearer TOKEN`
  --cdp-timeout MS          how long connecting to the endpoint may take, a pool's queue
                            included (default 30000; a call's timeout_ms also bounds it)
  --artifacts-dir DIR       artifact root (else CHROMATE_MCP_ARTIFACTS_DIR, else temp dir)
  --allowed-origins LIST    comma list of scheme://host[:port]; block everything else
  --blocked-origins LIST    comma list of scheme://host[:port] to block
  --structured-content      success results also carry structuredContent {result, observation}
                            (for hosts that show the model only structuredContent)
  --allow-unrestricted-file-access
                            browser_upload may read any file the server can (default: only
                            files under the server's working directory)
  --caps audit              add the audit capability's tools to tools/list: qa_audit_url,
                            qa_get_runtime_errors (docs/cli.md#audits) and
                            qa_execute_user_flow (docs/llm.md#qa-flow); default: the 28 tools
  --caps flows              also offer capture_url, capture_element, run_flow, list_flows and
                            describe_flow (captures and flows for CI; docs/cli.md); without
                            it, tools/list is the 28 browser tools
  --caps webmcp             launch the browser with WebMCP on and offer the page's own tools
                            as webmcp_<name> tools, plus browser_webmcp (docs/mcp.md#webmcp)
  --caps vision             also offer describe_screenshot: a screenshot described by a vision
                            model (Anthropic, OpenAI, Ollama; docs/llm.md)
  --isolated                the session's tabs, cookies and storage live in a browser
                            context of their own (Target.createBrowserContext)
  --ignore-https-errors     the browser chromate launches accepts any TLS certificate
                            (self-signed, expired, wrong host): Chromium's
                            --ignore-certificate-errors (else CHROMATE_IGNORE_HTTPS_ERRORS=1)
  --http [ADDR]             serve MCP Streamable HTTP on ADDR (default 127.0.0.1:8931), path
                            /mcp, instead of stdio: each MCP session is isolated in one
                            shared browser (docs/mcp.md#streamable-http)
  --auth-token TOKEN        HTTP: every request needs `Authorization: Bearer TOKEN` (else
                            CHROMATE_MCP_AUTH_TOKEN; without either, a token is generated,
                            printed on stderr and kept for `chromate init --mcp`); repeat it
                            to give each client a token of its own; required to bind an
                            address that is not loopback
  --no-auth                 HTTP: no token at all (a loopback address only): every local
                            process can then drive the browser
  --allowed-hosts LIST      HTTP: comma list of Origin hosts (host or host:port) accepted
                            besides localhost, 127.0.0.1 and [::1]; other Origins get 403
  --max-sessions N          HTTP: at most N sessions at once (64); over it, 503
  --session-idle-timeout SECONDS
                            HTTP: a session without requests this long ends and its browser
                            context is disposed of (1800)
  --node NAME               HTTP: this server's name behind a load balancer (1 to 32 of
                            a-z, 0-9, -): its session ids start with `NAME.`, for a sticky
                            route by that prefix (docs/mcp.md#several-servers-behind-a-load-balancer)
  --session NAME            drive the CLI session NAME (started if needed) instead of an own
                            browser: the agent and `chromate <command> --session NAME` share
                            one page; the browser options then come from the environment of
                            whoever started the session
  -h, --help                print this help

environment:
  CHROMATE_BROWSER, CHROMATE_MCP_ARTIFACTS_DIR, CHROMATE_MCP_SPILL_BYTES (8192),
  CHROMATE_MCP_MAX_RESPONSE_BYTES (32768), CHROMATE_AGENT_TIMEOUT (5000 ms),
  CHROMATE_TRACE_DIR, CHROMATE_STATE_DIR (./.chromate/state),
  CHROMATE_MCP_STRUCTURED_CONTENT (1 = --structured-content),
  CHROMATE_MCP_AUTH_TOKEN (--auth-token), CHROMATE_CDP_AUTHORIZATION (--cdp-authorization),
  CHROMATE_IGNORE_HTTPS_ERRORS (1 = --ignore-https-errors; a session daemon reads it too)
";

/// Parses argv without the program name. The global flags `--session NAME` and `--json` may
/// come before the command as well as after it (`docs/cli.md#global-flags`). A usage error is
/// one line, then a hint naming the help that applies (`chromate <command> --help`).
pub(crate) fn parse_args(args: &[String]) -> Result<Command, UsageError> {
    let args = hoist_global_flags(args)?;
    parse_command(&args).map_err(|UsageError(message)| {
        let help = match args.first().map(String::as_str) {
            Some(command) if is_command(command) => format!("chromate {command} --help"),
            _ => "chromate --help".to_owned(),
        };
        UsageError(format!("{}\nhint: {help}", message.trim_end()))
    })
}

/// The commands of the binary, as `parse_command` knows them.
fn is_command(word: &str) -> bool {
    const OTHERS: &[&str] = &[
        "mcp",
        "init",
        "bench-snapshot",
        "close",
        "capture",
        "flows",
        "sessions",
        "skill",
        "daemon",
        "audit",
        "qa-flow",
        "errors",
        "webmcp",
    ];
    OTHERS.contains(&word) || commands::find(word).is_some()
}

/// Moves the global flags written before the command (`chromate --session s --json status`)
/// to just after it (after the action of `flows`), where every command's parser reads them:
/// a command that does not take one says so as for any option. The last one written wins.
fn hoist_global_flags(args: &[String]) -> Result<Vec<String>, UsageError> {
    let mut global: Vec<String> = Vec::new();
    let mut rest = args;
    while let Some((word, after)) = rest.split_first() {
        match word.as_str() {
            "--json" => {
                global.push(word.clone());
                rest = after;
            }
            "--session" => {
                let Some((name, after)) = after.split_first() else {
                    return Err(UsageError("--session needs a name".to_owned()));
                };
                global.extend([word.clone(), name.clone()]);
                rest = after;
            }
            _ if word.starts_with("--session=") => {
                global.push(word.clone());
                rest = after;
            }
            _ => break,
        }
    }
    let mut args = rest.to_vec();
    if global.is_empty() || args.is_empty() {
        // `chromate --json` alone: the missing command is the error.
        return Ok(args);
    }
    let flows_action = args.first().is_some_and(|command| command == "flows")
        && args.get(1).is_some_and(|action| !action.starts_with('-'));
    let at = if flows_action { 2 } else { 1 };
    args.splice(at..at, global);
    Ok(args)
}

fn parse_command(args: &[String]) -> Result<Command, UsageError> {
    let Some((first, rest)) = args.split_first() else {
        return Err(UsageError("missing command".to_owned()));
    };
    match first.as_str() {
        "mcp" => parse_mcp(rest),
        "init" => parse_init(rest),
        "bench-snapshot" => parse_bench(rest),
        "-h" | "--help" | "help" => Ok(Command::Help(TOP_HELP.to_owned())),
        "-V" | "--version" => Ok(Command::Version),
        "close" => parse_close(rest),
        "describe" => match describe::parse(rest)? {
            Some(command) => Ok(Command::Describe(command)),
            None => Ok(Command::Help(describe::HELP.to_owned())),
        },
        "qa-flow" => match qa_flow::parse(rest)? {
            Some(command) => Ok(Command::QaFlow(command)),
            None => Ok(Command::Help(qa_flow::HELP.to_owned())),
        },
        "capture" => flows::parse_capture(rest),
        "flows" => flows::parse_flows(rest),
        "sessions" => parse_sessions(rest),
        "skill" => skill::parse(rest),
        "daemon" => parse_daemon(rest),
        "audit" => match audit::parse(rest)? {
            audit::Parsed::Run(command) => Ok(Command::Audit(command)),
            audit::Parsed::Help => Ok(Command::Help(audit::HELP.to_owned())),
        },
        "errors" => {
            // `--peek` is `--clear=false`: the runtime errors stay to be drained.
            let words: Vec<String> = rest
                .iter()
                .map(|word| match word.as_str() {
                    "--peek" => "--clear=false".to_owned(),
                    _ => word.clone(),
                })
                .collect();
            match commands::parse(
                &chromate_command::tools::qa::RUNTIME_ERRORS,
                &words,
                &read_input,
            )? {
                commands::Parsed::Run(command) => Ok(Command::Tool(command)),
                commands::Parsed::Help(text) => Ok(Command::Help(text)),
            }
        }
        "webmcp" => {
            match commands::parse(&chromate_command::tools::webmcp::WEBMCP, rest, &read_input)? {
                commands::Parsed::Run(command) => Ok(Command::Tool(command)),
                commands::Parsed::Help(text) => Ok(Command::Help(text)),
            }
        }
        other => match commands::find(other) {
            Some(decl) => match commands::parse(decl, rest, &read_input)? {
                commands::Parsed::Run(command) => Ok(Command::Tool(command)),
                commands::Parsed::Help(text) => Ok(Command::Help(text)),
            },
            None => Err(UsageError(format!("unknown command {other:?}"))),
        },
    }
}

/// A file's text for `--file PATH` and JSON steps; `-` is standard input.
fn read_input(path: &str) -> std::io::Result<String> {
    if path == "-" {
        commands::read_stdin()
    } else {
        std::fs::read_to_string(path)
    }
}

const CLOSE_HELP: &str = "\
usage: chromate close [--session NAME]

Ends the session (else CHROMATE_SESSION, else default): cancels a running call, closes its
browser and stops its daemon. A session that is not running is not an error.
";

const SESSIONS_HELP: &str = "\
usage: chromate sessions [--json]

Lists this user's sessions whose daemon answers: name, daemon pid, browser pid.
";

fn parse_close(args: &[String]) -> Result<Command, UsageError> {
    let mut session = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help(CLOSE_HELP.to_owned())),
            "--session" => match args.next() {
                Some(name) => session = Some(commands::session_name(name)?),
                None => return Err(UsageError("close: --session needs a name".to_owned())),
            },
            other => match other.strip_prefix("--session=") {
                Some(name) => session = Some(commands::session_name(name)?),
                None => return Err(UsageError(format!("close: unexpected argument {other:?}"))),
            },
        }
    }
    Ok(Command::Close { session })
}

fn parse_sessions(args: &[String]) -> Result<Command, UsageError> {
    match args {
        [] => Ok(Command::Sessions { json: false }),
        [flag] if flag == "--json" => Ok(Command::Sessions { json: true }),
        [flag] if flag == "-h" || flag == "--help" => Ok(Command::Help(SESSIONS_HELP.to_owned())),
        _ => Err(UsageError("sessions: unexpected arguments".to_owned())),
    }
}

fn parse_daemon(args: &[String]) -> Result<Command, UsageError> {
    let (args, launch) = match args {
        [rest @ .., last] if last == "--launch" => (rest, true),
        _ => (args, false),
    };
    match args {
        [session_flag, session, idle_flag, idle]
            if session_flag == "--session" && idle_flag == "--idle-timeout" =>
        {
            let idle = idle
                .parse::<u64>()
                .ok()
                .filter(|seconds| *seconds > 0)
                .ok_or_else(|| UsageError(format!("daemon: bad --idle-timeout {idle:?}")))?;
            Ok(Command::Daemon {
                session: commands::session_name(session)?,
                idle: Duration::from_secs(idle),
                launch,
            })
        }
        _ => Err(UsageError(
            "daemon: usage: chromate daemon --session NAME --idle-timeout SECONDS [--launch] \
             (the session commands start it)"
                .to_owned(),
        )),
    }
}

fn parse_bench(args: &[String]) -> Result<Command, UsageError> {
    let mut bench = crate::bench::BenchArgs {
        targets: Vec::new(),
        repeat: 0,
        max_lines: 80,
        detail: false,
        peers: Vec::new(),
        no_peers: false,
        peers_dir: None,
        browser: None,
        format: crate::bench::Format::Table,
        output: None,
        wait_ms: crate::bench::DEFAULT_WAIT_MS,
    };
    let mut words = Words::new(args, Dashes::Any);
    while let Some(flag) = words.next_flag(&mut bench.targets) {
        let name = flag.name;
        let mut value = |what: &str| words.value(&flag, what).map_err(UsageError);
        match name {
            "-h" | "--help" => return Ok(Command::Help(BENCH_HELP.to_owned())),
            "--repeat" | "--max-lines" => {
                let n = value("a number")?
                    .parse::<usize>()
                    .ok()
                    .filter(|v| (1..=5000).contains(v))
                    .ok_or_else(|| UsageError(format!("{name} needs a number from 1 to 5000")))?;
                if name == "--repeat" {
                    bench.repeat = n;
                } else {
                    bench.max_lines = n;
                }
            }
            "--peer" => {
                let spec = value("KIND=CMD")?;
                let (kind, command) = spec
                    .split_once('=')
                    .filter(|(_, c)| !c.trim().is_empty())
                    .ok_or_else(|| UsageError(format!("--peer needs KIND=CMD, not {spec:?}")))?;
                if ![
                    "chromate",
                    "playwright-mcp",
                    "chrome-devtools-mcp",
                    "agent-browser",
                ]
                .contains(&kind)
                {
                    return Err(UsageError(format!(
                        "unknown peer {kind:?}: playwright-mcp, chrome-devtools-mcp, agent-browser or chromate"
                    )));
                }
                bench
                    .peers
                    .push((kind.to_owned(), command.trim().to_owned()));
            }
            "--wait-ms" => {
                bench.wait_ms = value("milliseconds")?
                    .parse::<u64>()
                    .ok()
                    .filter(|v| *v <= 60_000)
                    .ok_or_else(|| {
                        UsageError("--wait-ms needs milliseconds from 0 to 60000".into())
                    })?;
            }
            "--peers-dir" => bench.peers_dir = Some(value("a directory")?.into()),
            "--browser" => bench.browser = Some(value("a path")?.into()),
            "--output" => bench.output = Some(value("a file")?.into()),
            "--format" => {
                let format = value("table, json or html")?;
                bench.format = crate::bench::Format::parse(&format).ok_or_else(|| {
                    UsageError(format!("--format is table, json or html, not {format:?}"))
                })?;
            }
            "--no-peers" => bench.no_peers = true,
            "--detail" => bench.detail = true,
            other => return Err(UsageError(format!("unknown option {other:?}"))),
        }
    }
    if bench.targets.is_empty() {
        return Err(UsageError(
            "missing url, file, directory or sitemap".to_owned(),
        ));
    }
    if bench.format == crate::bench::Format::Html && bench.output.is_none() {
        return Err(UsageError("--format html needs --output FILE".into()));
    }
    if bench.repeat == 0 {
        bench.repeat = if bench.detail { 21 } else { 5 };
    }
    Ok(Command::BenchSnapshot(bench))
}

fn parse_mcp(args: &[String]) -> Result<Command, UsageError> {
    let mut flags = McpFlags::default();
    // The HTTP options, kept aside until `--http` says HTTP is served at all.
    let mut http_options = chromate_command::config::HttpFlags::default();
    let mut http_option: Option<&str> = None;
    let mut serve_http = false;
    let mut words = Words::new(args, Dashes::Any);
    let mut positional = Vec::new();
    while let Some(flag) = words.next_flag(&mut positional) {
        let name = flag.name;
        let mut value = |_: &str| {
            words
                .value(&flag, "a value")
                .map_err(|message| UsageError(format!("mcp: {message}")))
        };
        match name {
            "-h" | "--help" => return Ok(Command::Help(MCP_HELP.to_owned())),
            "--headed" if flag.is_bare() => flags.headed = true,
            "--isolated" if flag.is_bare() => flags.isolated = true,
            "--ignore-https-errors" if flag.is_bare() => flags.ignore_https_errors = true,
            "--http" => {
                // The address is optional: `--http`, `--http ADDR`, `--http=ADDR`.
                let given = words.optional_value(&flag);
                serve_http = true;
                if let Some(addr) = given {
                    http_options.addr = parse_http_addr(&addr)?;
                }
            }
            "--auth-token" => {
                let token = value(name)?;
                if token.is_empty() {
                    return Err(UsageError("mcp: --auth-token must not be empty".to_owned()));
                }
                if !http_options.auth_tokens.contains(&token) {
                    http_options.auth_tokens.push(token);
                }
                http_option = Some("--auth-token");
            }
            "--no-auth" if flag.is_bare() => {
                http_options.no_auth = true;
                http_option = Some("--no-auth");
            }
            "--allowed-hosts" => {
                let list = value(name)?;
                http_option = Some("--allowed-hosts");
                http_options.allowed_hosts = list
                    .split(',')
                    .map(|host| host.trim().to_ascii_lowercase())
                    .filter(|host| !host.is_empty())
                    .collect();
            }
            "--max-sessions" => {
                let text = value(name)?;
                let max = text
                    .parse::<usize>()
                    .ok()
                    .filter(|max| (1..=10_000).contains(max));
                let Some(max) = max else {
                    return Err(UsageError(format!(
                        "mcp: --max-sessions needs a whole number from 1 to 10000, not {text:?}"
                    )));
                };
                http_options.max_sessions = max;
                http_option = Some("--max-sessions");
            }
            "--session-idle-timeout" => {
                let text = value(name)?;
                let seconds = text
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (1..=604_800).contains(s));
                let Some(seconds) = seconds else {
                    return Err(UsageError(format!(
                        "mcp: --session-idle-timeout needs whole seconds from 1 to 604800, not {text:?}"
                    )));
                };
                http_options.idle_timeout = std::time::Duration::from_secs(seconds);
                http_option = Some("--session-idle-timeout");
            }
            "--node" => {
                let name = value(name)?;
                if !crate::mcp::http::is_node_name(&name) {
                    return Err(UsageError(format!(
                        "mcp: --node needs a name of 1 to 32 characters from a-z, 0-9 and -, not {name:?}"
                    )));
                }
                http_options.node = Some(name);
                http_option = Some("--node");
            }
            "--structured-content" if flag.is_bare() => flags.structured_content = true,
            "--allow-unrestricted-file-access" if flag.is_bare() => {
                flags.unrestricted_file_access = true;
            }
            "--caps" => {
                for cap in value(name)?.split(',').map(str::trim) {
                    match cap {
                        "audit" => flags.caps_audit = true,
                        "flows" => flags.caps_flows = true,
                        "webmcp" => flags.caps_webmcp = true,
                        "vision" => flags.caps_vision = true,
                        other => {
                            return Err(UsageError(format!(
                                "mcp: --caps: unknown capability {other:?} (known: audit, flows, vision, webmcp)"
                            )))
                        }
                    }
                }
            }
            "--browser" => flags.browser = Some(PathBuf::from(value(name)?)),
            "--session" => flags.session = Some(commands::session_name(&value(name)?)?),
            "--cdp-endpoint" => flags.cdp_endpoint = Some(value(name)?),
            "--cdp-ca" => flags.cdp_ca = Some(PathBuf::from(value(name)?)),
            "--cdp-authorization" => flags.cdp_authorization = Some(value(name)?),
            "--cdp-timeout" => {
                let text = value(name)?;
                let ms = text
                    .parse::<u64>()
                    .ok()
                    .filter(|ms| (1..=MAX_CDP_TIMEOUT_MS).contains(ms))
                    .ok_or_else(|| {
                        UsageError(format!(
                            "mcp: --cdp-timeout: expected milliseconds from 1 to {MAX_CDP_TIMEOUT_MS}, got {text:?}"
                        ))
                    })?;
                flags.cdp_timeout_ms = Some(ms);
            }
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
                    "mcp: unknown option {:?}",
                    flag.written
                )))
            }
        }
    }
    if let Some(word) = positional.first() {
        return Err(UsageError(format!("mcp: unexpected argument {word:?}")));
    }
    match (serve_http, http_option) {
        (true, _) if http_options.no_auth && !http_options.auth_tokens.is_empty() => {
            return Err(UsageError(
                "mcp: --no-auth and --auth-token cannot be combined".to_owned(),
            ))
        }
        (true, _) if http_options.no_auth && !http_options.addr.ip().is_loopback() => {
            return Err(UsageError(format!(
                "mcp: --no-auth is for loopback addresses only; {} needs --auth-token",
                http_options.addr
            )))
        }
        (true, _) => flags.http = Some(http_options),
        (false, Some(option)) => {
            return Err(UsageError(format!(
                "mcp: {option} is an option of --http; add --http [ADDR]"
            )))
        }
        (false, None) => {}
    }
    if flags.http.is_some() && flags.session.is_some() {
        return Err(UsageError(
            "mcp: --http and --session cannot be combined (an HTTP server isolates each of its sessions)".to_owned(),
        ));
    }
    Ok(Command::Mcp(flags))
}

/// `HOST:PORT`, `:PORT` or `PORT` (loopback), an IP address only: a name would need a lookup.
fn parse_http_addr(text: &str) -> Result<std::net::SocketAddr, UsageError> {
    let loopback = std::net::Ipv4Addr::LOCALHOST;
    let port_only = text.strip_prefix(':').unwrap_or(text);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(std::net::SocketAddr::from((loopback, port)));
    }
    let text = text.replacen("localhost:", "127.0.0.1:", 1);
    text.parse::<std::net::SocketAddr>().map_err(|_| {
        UsageError(format!(
            "mcp: --http needs an address as IP:PORT (127.0.0.1:8931, [::1]:8931, 0.0.0.0:8931) or a port, not {text:?}"
        ))
    })
}

#[cfg(test)]
mod tests;
