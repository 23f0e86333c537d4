//! `chromate audit URL... [...]` (`docs/cli.md#audits`): the audit in a browser context of its
//! own — on a headless browser this process launches and closes before it returns (one-shot: no
//! session daemon is started or left), or with `--session NAME` on that session's browser — and
//! its reports.
//!
//! Owns the command's flags (the audit's arguments by their command-line names: `--depth` is
//! `max_depth`, `--screenshots` is `include_screenshots`, the URLs after the first and
//! `--urls FILE`'s are `urls`; and its own: `--format`, `--output`, `--fail-on`, `--quiet`,
//! the gate's `--ignore-file`, `--baseline`, `--update-baseline`), the progress line on a
//! terminal's stderr, reading the gate's files before any browser starts and applying them to
//! the result (`chromate_command::audit::gate`), writing the report to stdout or `--output`
//! and each `--format NAME=PATH` report to its file (all from the one audit), and the exit
//! status: 0, or 1 when the audit failed, timed out, or found something not suppressed at
//! `--fail-on` or worse; 2 for usage errors, a malformed ignore file or a missing baseline,
//! before any browser starts. The audit itself is `qa_audit_url` in the command layer; the
//! reports are its writers (`chromate_command::audit::report`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::commands::{idle_timeout, session_name};
use super::tool_run::{self, Target};
use super::words::{Dashes, Words};
use super::UsageError;
use std::collections::HashSet;

use chromate_command::audit::findings::{AuditResult, Severity, Status};
use chromate_command::audit::gate;
use chromate_command::audit::report::{self, Format};
use chromate_command::config::McpFlags;
use chromate_command::tools::{self, qa, Defaults};
use chromate_command::Reply;

pub(crate) const HELP: &str = "\
usage: chromate audit URL... [--urls FILE] [--sitemap URL]
                          [--depth N] [--max-pages N] [--viewport WxH]
                          [--wait-until load|domcontentloaded|networkidle] [--timeout-ms N]
                          [--focus TEXT] [--format text|json|md|html|sarif|junit] [--output FILE]
                          [--format NAME=PATH]...
                          [--fail-on critical|high|medium|low] [--screenshots]
                          [--block-private-network [--allow-private ORIGIN]...] [--quiet]
                          [--state NAME | --storage-state FILE]
                          [--ignore-file FILE] [--baseline FILE [--update-baseline]]
                          [--session NAME [--idle-timeout SECONDS]]

Audits each URL (and, with --depth, the same-origin pages it links to, breadth-first) in a browser
context of its own on the session's browser: runtime errors, failed requests, broken links,
accessibility (axe-core), layout and speed, as findings ranked worst first, each with a durable
selector. The user's cookies, storage and tabs never leak in or out. Without --session it
runs in a browser of its own, ended (with everything it started) before the command returns.
docs/cli.md#audits, docs/cli.md#gating-a-pipeline.

options:
  URL...                   the entry pages (at most 50 with --urls'), each audited with its
                           same-origin links; one result with every page
  --urls FILE              more entry pages, one URL a line (# comments, blank lines skipped)
  --sitemap URL            also audit the pages a sitemap.xml (or a sitemap index) lists: same
                           origin only, at most --max-pages (a warning says what was cut);
                           URL may then be left out
  --state NAME             audit logged in: the cookies and localStorage of a state saved with
                           `chromate state save NAME` (CHROMATE_STATE_DIR, else .chromate/state)
  --storage-state FILE     the same from a Playwright storage-state JSON file (cookies, origins'
                           localStorage)
  --ignore-file FILE       the gate's ignore entries and budgets (default: chromate-audit.toml in
                           the working directory, when there); a malformed file is exit 2
  --baseline FILE          an earlier run's JSON result: findings in it are accepted (listed as
                           suppressed), only new ones count for --fail-on; a missing FILE is exit 2
  --update-baseline        write this run's findings (ignored ones left out) to --baseline FILE
  --depth N                follow same-origin links N levels (0..5; default 0: URL only)
  --max-pages N            audit at most N pages (1..200; default 20)
  --viewport WxH           the audit's viewport in CSS px (default 1280x800)
  --wait-until STATE       when a page counts as loaded (default load); each page then
                           settles until its network is quiet (at most 3 s)
  --timeout-ms N           the whole audit's deadline (default 120000); past it the report
                           says timeout and lists what was found
  --focus TEXT             rank findings mentioning TEXT (text, URL, selector) first; with
                           CHROMATE_LLM_PROVIDER set, a model also ranks them for TEXT and may
                           add findings of its own (source: model; docs/cli.md#focus-model-pass)
  --format FORMAT          text (default: ranked, one line per finding), json (the result),
                           md, html (self-contained, with screenshots), sarif (2.1.0), junit;
                           one such --format at most
  --output FILE            write the report to FILE; stdout then gets the text report
  --format NAME=PATH       also write the report in format NAME to PATH, from the same audit
                           (repeat for more: --format sarif=a.sarif --format junit=a.xml);
                           two reports to one file are a usage error
  --fail-on SEVERITY       exit 1 when a finding at SEVERITY or worse exists
  --screenshots            save the entry page's viewport and every page's full-page screenshots
  --block-private-network  refuse requests and redirect hops to loopback, private, link-local
                           and unique-local addresses (SSRF_BLOCKED)
  --allow-private ORIGIN   scheme://host[:port] that --block-private-network lets through
                           (repeat for more)
  --quiet                  no progress on stderr (shown only while stderr is a terminal)
  --json                   same as --format json
  --session NAME           run on this session's browser (its daemon is started if need be and
                           kept, as every session command does); without it the audit runs in a
                           browser of its own that ends before the command returns
  --idle-timeout SECONDS   with --session: a session this command starts ends after this long
                           unused (1800)
  --ignore-https-errors    accept any TLS certificate (self-signed, expired, wrong host); without
                           --session only (also CHROMATE_IGNORE_HTTPS_ERRORS=1)
  -h, --help               this help

exit status: 0; 1 when the audit failed (the entry page did not load), timed out, or found
something at --fail-on or worse, on a tool error, or when a report file cannot be written; 2
for a usage error.
";

/// `chromate audit`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuditCommand {
    /// `qa_audit_url`'s arguments as given (the daemon fills its defaults).
    pub(crate) arguments: Map<String, Value>,
    /// The report for stdout, or `--output` (`--format NAME`, `--json`; default text).
    pub(crate) format: Format,
    pub(crate) output: Option<std::path::PathBuf>,
    /// `--format NAME=PATH`, in the order given.
    pub(crate) reports: Vec<(Format, std::path::PathBuf)>,
    pub(crate) fail_on: Option<Severity>,
    pub(crate) quiet: bool,
    pub(crate) session: Option<String>,
    pub(crate) idle: Option<Duration>,
    /// The entry pages: the positional URLs, then `--urls FILE`'s lines.
    pub(crate) urls: Vec<String>,
    /// `--ignore-file PATH` (else `chromate-audit.toml` in the working directory, if there).
    pub(crate) ignore_file: Option<PathBuf>,
    /// `--baseline FILE` and `--update-baseline`.
    pub(crate) baseline: Option<PathBuf>,
    pub(crate) update_baseline: bool,
    /// `--ignore-https-errors`: the one-shot audit's browser accepts any TLS certificate.
    pub(crate) ignore_https_errors: bool,
}

/// What `chromate audit ...` asked for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Parsed {
    Run(AuditCommand),
    Help,
}

/// Parses the words after `chromate audit`.
pub(crate) fn parse(words: &[String]) -> Result<Parsed, UsageError> {
    let usage = |message: String| UsageError(format!("audit: {message}"));
    let mut arguments = Map::new();
    let mut command = AuditCommand {
        arguments: Map::new(),
        format: Format::Text,
        output: None,
        reports: Vec::new(),
        fail_on: None,
        quiet: false,
        session: None,
        idle: None,
        urls: Vec::new(),
        ignore_file: None,
        baseline: None,
        update_baseline: false,
        ignore_https_errors: false,
    };
    let mut urls_file: Option<PathBuf> = None;
    // The plain report asked for, and how (`--format NAME` or `--json`): a second, different
    // one is a usage error, not "the last one wins".
    let mut plain: Option<(Format, String)> = None;
    let mut choose = |format: Format, spelled: String| match &plain {
        Some((chosen, first)) if *chosen != format => Err(usage(format!(
            "{first} and {spelled}: one report goes to stdout (or --output); write the \
             others to files with --format NAME=PATH"
        ))),
        _ => {
            plain = Some((format, spelled));
            Ok(format)
        }
    };
    let mut words = Words::new(words, Dashes::Any);
    let mut positional = Vec::new();
    while let Some(flag) = words.next_flag(&mut positional) {
        let mut value = |what: &str| words.value(&flag, what).map_err(usage);
        let number = |text: String, flag: &str| {
            text.parse::<i64>()
                .map_err(|_| usage(format!("{flag} needs a whole number, not {text:?}")))
        };
        match flag.name {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--depth" => {
                let n = number(value("a number")?, flag.name)?;
                arguments.insert("max_depth".into(), json!(n));
            }
            "--max-pages" => {
                let n = number(value("a number")?, flag.name)?;
                arguments.insert("max_pages".into(), json!(n));
            }
            "--timeout-ms" => {
                let n = number(value("a number of milliseconds")?, flag.name)?;
                arguments.insert("timeout_ms".into(), json!(n));
            }
            "--viewport" => {
                let text = value("WxH")?;
                let (width, height) = tools::schema::parse_size(&text).ok_or_else(|| {
                    usage(format!(
                        "--viewport is WxH in CSS px, e.g. 1280x800, not {text:?}"
                    ))
                })?;
                arguments.insert(
                    "viewport".into(),
                    json!({ "width": width, "height": height }),
                );
            }
            "--wait-until" => {
                arguments.insert("wait_until".into(), json!(value("a load state")?));
            }
            "--focus" => {
                arguments.insert("focus".into(), json!(value("a text")?));
            }
            "--allow-private" => {
                let origin = value("an origin")?;
                let list = arguments
                    .entry("allow_private")
                    .or_insert_with(|| json!([]));
                if let Value::Array(items) = list {
                    items.push(json!(origin));
                }
            }
            "--screenshots" if flag.is_bare() => {
                arguments.insert("include_screenshots".into(), json!(true));
            }
            "--block-private-network" if flag.is_bare() => {
                arguments.insert("block_private_network".into(), json!(true));
            }
            "--format" => {
                let text = value("a format")?;
                let (name, path) = match text.split_once('=') {
                    Some((name, path)) => (name, Some(path)),
                    None => (text.as_str(), None),
                };
                let format = Format::parse(name).ok_or_else(|| {
                    usage(format!(
                        "--format is one of {}, not {name:?} (NAME or NAME=PATH)",
                        Format::NAMES.join(", ")
                    ))
                })?;
                match path {
                    None => command.format = choose(format, format!("--format {name}"))?,
                    Some("") => {
                        return Err(usage(format!(
                            "--format {name}= needs a file after the =, e.g. {name}=report.{}",
                            extension(format)
                        )))
                    }
                    Some(path) => command
                        .reports
                        .push((format, std::path::PathBuf::from(path))),
                }
            }
            "--json" if flag.is_bare() => {
                command.format = choose(Format::Json, "--json".to_owned())?;
            }
            "--output" => command.output = Some(std::path::PathBuf::from(value("a file")?)),
            "--fail-on" => {
                let name = value("a severity")?;
                command.fail_on = Some(
                    Severity::parse(&name)
                        .filter(|severity| *severity != Severity::Info)
                        .ok_or_else(|| {
                            usage(format!(
                                "--fail-on is critical, high, medium or low, not {name:?}"
                            ))
                        })?,
                );
            }
            "--quiet" if flag.is_bare() => command.quiet = true,
            "--ignore-file" => command.ignore_file = Some(PathBuf::from(value("a file")?)),
            "--baseline" => command.baseline = Some(PathBuf::from(value("a file")?)),
            "--update-baseline" if flag.is_bare() => command.update_baseline = true,
            "--ignore-https-errors" if flag.is_bare() => command.ignore_https_errors = true,
            "--urls" => urls_file = Some(PathBuf::from(value("a file")?)),
            "--sitemap" => {
                arguments.insert("sitemap".into(), json!(value("a sitemap's URL")?));
            }
            "--state" => {
                arguments.insert("state".into(), json!(value("a saved state's name")?));
            }
            "--storage-state" => {
                let path = PathBuf::from(value("a file")?);
                let path = std::path::absolute(&path).unwrap_or(path);
                arguments.insert("storage_state".into(), json!(path.display().to_string()));
            }

            "--session" => command.session = Some(session_name(&value("a name")?)?),
            "--idle-timeout" => {
                command.idle = Some(idle_timeout(&value("a number of seconds")?).map_err(usage)?);
            }
            name => return Err(usage(format!("unknown option {name}"))),
        }
    }
    if command.idle.is_some() && command.session.is_none() {
        return Err(usage(
            "--idle-timeout needs --session NAME: without it the audit's browser ends with the command"
                .to_owned(),
        ));
    }
    if command.ignore_https_errors && command.session.is_some() {
        return Err(usage(
            "--ignore-https-errors is for an audit on its own browser: a session's browser keeps \
             what it was started with (start the session with CHROMATE_IGNORE_HTTPS_ERRORS=1)"
                .to_owned(),
        ));
    }
    if command.update_baseline && command.baseline.is_none() {
        return Err(usage(
            "--update-baseline needs --baseline FILE: the file to write".to_owned(),
        ));
    }
    let mut urls = positional;
    if let Some(path) = &urls_file {
        urls.extend(read_urls(path).map_err(usage)?);
    }
    if urls.len() > MAX_URLS {
        return Err(usage(format!(
            "{} URLs: an audit takes at most {MAX_URLS} entry pages",
            urls.len()
        )));
    }
    // With only --sitemap, the sitemap's URL is the audit's `url` (not audited as a page).
    let sitemap = arguments
        .get("sitemap")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let first = match (urls.first(), sitemap) {
        (Some(url), _) => url.clone(),
        (None, Some(sitemap)) => sitemap,
        (None, None) => {
            return Err(usage(
                "missing URL (or --urls FILE, or --sitemap URL)".to_owned(),
            ))
        }
    };
    arguments.insert("url".into(), json!(first));
    if urls.len() > 1 {
        arguments.insert("urls".into(), json!(urls[1..]));
    }
    let defaults = Defaults {
        agent_timeout_ms: chromate_command::config::DEFAULT_AGENT_TIMEOUT_MS,
    };
    if let Err(error) = tools::validate(
        &qa::AUDIT_URL,
        Some(&Value::Object(arguments.clone())),
        &defaults,
    ) {
        return Err(usage(cli_names(&error.message)));
    }
    check_report_files(&command).map_err(usage)?;
    command.urls = urls;
    command.arguments = arguments;
    Ok(Parsed::Run(command))
}

/// Entry pages an audit takes at most (the positional URLs and `--urls FILE`'s together).
const MAX_URLS: usize = 50;

/// `--urls FILE`: one URL a line; blank lines and lines starting with `#` are skipped.
fn read_urls(path: &std::path::Path) -> Result<Vec<String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|err| format!("--urls {}: {err}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

/// The usual file extension of `format`, for hints.
fn extension(format: Format) -> &'static str {
    match format {
        Format::Text => "txt",
        Format::Json => "json",
        Format::Markdown => "md",
        Format::Html => "html",
        Format::Sarif => "sarif",
        Format::Junit => "xml",
    }
}

/// No two reports (`--output`, each `--format NAME=PATH`) go to one file: the second would
/// silently replace the first.
fn check_report_files(command: &AuditCommand) -> Result<(), String> {
    let mut seen: Vec<(std::path::PathBuf, String)> = Vec::new();
    let output = command
        .output
        .iter()
        .map(|path| (path, format!("--output {}", path.display())));
    let reports = command.reports.iter().map(|(format, path)| {
        (
            path,
            format!("--format {}={}", format.name(), path.display()),
        )
    });
    for (path, spelled) in output.chain(reports) {
        let same = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        if let Some((_, first)) = seen.iter().find(|(known, _)| *known == same) {
            return Err(format!(
                "{first} and {spelled} write the same file; give each report a file of its own"
            ));
        }
        seen.push((same, spelled));
    }
    Ok(())
}

/// The validator's argument names as the command line spells them.
fn cli_names(message: &str) -> String {
    [
        ("\"max_depth\"", "--depth"),
        ("\"max_pages\"", "--max-pages"),
        ("\"timeout_ms\"", "--timeout-ms"),
        ("\"viewport\"", "--viewport"),
        ("\"viewport.width\"", "--viewport's width"),
        ("\"viewport.height\"", "--viewport's height"),
        ("\"wait_until\"", "--wait-until"),
        ("\"focus\"", "--focus"),
        ("\"allow_private\"", "--allow-private"),
        ("\"url\"", "URL"),
        ("\"urls\"", "URL"),
        ("\"state\"", "--state"),
        ("\"storage_state\"", "--storage-state"),
        ("\"sitemap\"", "--sitemap"),
    ]
    .iter()
    .fold(message.to_owned(), |message, (from, to)| {
        message.replace(from, to)
    })
}

/// The gate's inputs, read before any browser starts.
struct GateInputs {
    /// The ignore file's path as shown, and what it holds.
    file: Option<(String, gate::GateFile)>,
    /// The baseline's accepted ids (`None` with `--update-baseline`: it is written, not read).
    baseline: Option<(String, HashSet<String>)>,
}

/// Reads the ignore file and the baseline; `Err` is a usage error (exit status 2).
fn load_gate(command: &AuditCommand) -> Result<GateInputs, String> {
    let file = match &command.ignore_file {
        Some(path) => Some(path.clone()),
        None => {
            let default = PathBuf::from(gate::DEFAULT_FILE);
            default.is_file().then_some(default)
        }
    };
    let file = match file {
        None => None,
        Some(path) => {
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(&path)
                .map_err(|err| format!("the ignore file {shown}: {err}"))?;
            let parsed = gate::parse(&text).map_err(|err| format!("{shown}: {err}"))?;
            Some((shown, parsed))
        }
    };
    let baseline = match (&command.baseline, command.update_baseline) {
        (Some(path), false) => {
            let shown = path.display().to_string();
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    return Err(format!(
                        "the baseline {shown} does not exist: write it first with \
                         --baseline {shown} --update-baseline (or --format json={shown})"
                    ))
                }
                Err(err) => return Err(format!("the baseline {shown}: {err}")),
            };
            let ids =
                gate::baseline_ids(&text).map_err(|err| format!("the baseline {shown}: {err}"))?;
            Some((shown, ids))
        }
        _ => None,
    };
    Ok(GateInputs { file, baseline })
}

/// Runs the audit (on the named session's browser, else on one of its own), applies the gate,
/// and prints or writes the reports.
pub(crate) fn run(command: &AuditCommand) -> ExitCode {
    let inputs = match load_gate(command) {
        Ok(inputs) => inputs,
        Err(message) => {
            eprintln!("chromate: audit: {message}");
            return ExitCode::from(2);
        }
    };
    // Progress (pages audited, queued, findings so far) while stderr is a terminal: one line,
    // rewritten in place.
    let progress = !command.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut shown = false;
    let mut line = |phase: &str| {
        eprint!("\r\x1b[Kchromate: {phase}");
        shown = true;
    };
    let on_phase = progress.then_some(&mut line as &mut dyn FnMut(&str));
    let target = match &command.session {
        Some(name) => Target::Session {
            name,
            idle: command.idle,
        },
        None => Target::OwnBrowser(Box::new(McpFlags {
            ignore_https_errors: command.ignore_https_errors,
            ..McpFlags::default()
        })),
    };
    let answer = tool_run::run(
        &qa::AUDIT_URL,
        target,
        &command.arguments,
        &cli_names,
        on_phase,
    );
    if shown {
        eprintln!();
    }
    let reply = match answer {
        Ok(reply) => reply,
        Err(message) => return fail(&message),
    };
    let done = match reply {
        Reply::Done(done) => done,
        Reply::Failed(failed) => {
            if command.format == Format::Json {
                println!("{}", json!({ "error": failed.error }));
            } else {
                eprintln!("{}", failed.text);
            }
            return ExitCode::from(1);
        }
    };
    let mut result: AuditResult = match serde_json::from_value(done.result) {
        Ok(result) => result,
        Err(err) => return fail(&format!("the audit's result did not decode: {err}")),
    };
    if let Some((shown, file)) = &inputs.file {
        if let Some(budgets) = &file.budgets {
            gate::budget_findings(&mut result, budgets);
        }
        gate::apply_ignores(&mut result, &file.ignores, shown);
    }
    if command.update_baseline {
        if let Some(path) = &command.baseline {
            let mut text = serde_json::to_string_pretty(&result).unwrap_or_default();
            text.push('\n');
            if let Err(err) = std::fs::write(path, text) {
                return fail(&format!("--baseline {}: {err}", path.display()));
            }
            let accepted: HashSet<String> = result.findings.iter().map(|f| f.id.clone()).collect();
            gate::apply_baseline(&mut result, &accepted, &path.display().to_string());
        }
    } else if let Some((shown, accepted)) = &inputs.baseline {
        gate::apply_baseline(&mut result, accepted, shown);
    }
    for warning in &result.warnings {
        eprintln!("chromate: audit: warning: {warning}");
    }
    write_reports(command, &result)
}

/// Writes each report and prints the plain one; the exit status.
fn write_reports(command: &AuditCommand, result: &AuditResult) -> ExitCode {
    let wants_html = command.format == Format::Html
        || command
            .reports
            .iter()
            .any(|(format, _)| *format == Format::Html);
    let shots: report::ShotBytes = if wants_html {
        result
            .screenshots
            .iter()
            .filter_map(|shot| Some((shot.path.clone(), std::fs::read(&shot.path).ok()?)))
            .collect()
    } else {
        Vec::new()
    };
    let options = report::Options {
        shots: &shots,
        fail_on: command.fail_on,
    };
    for (format, path) in &command.reports {
        let rendered = report::render(*format, result, options);
        if let Err(err) = std::fs::write(path, rendered) {
            return fail(&format!(
                "--format {}={}: {err}",
                format.name(),
                path.display()
            ));
        }
    }
    let rendered = report::render(command.format, result, options);
    let printed = match &command.output {
        Some(path) => {
            if let Err(err) = std::fs::write(path, &rendered) {
                return fail(&format!("--output {}: {err}", path.display()));
            }
            report::render(Format::Text, result, report::Options::default())
        }
        None => rendered,
    };
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(printed.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::from(1);
    }
    let failed = result.status != Status::Completed
        || command
            .fail_on
            .is_some_and(|threshold| report::fails(result, threshold));
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("chromate: {message}");
    ExitCode::from(1)
}
