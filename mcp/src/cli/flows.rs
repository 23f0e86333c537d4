//! The command line of captures and flows: `chromate capture URL --name NAME [...]` and
//! `chromate flows list|run|describe`.
//!
//! Owns: their argv (the capture flags read from the capture declaration, `--viewport WxH` as
//! its two numbers), their help, the runtime and signal watch they run under, and what reaches
//! stdout, stderr and the exit status. Does not own what a capture or a flow does
//! (`chromate_flows`): a bad argument is a usage error (exit status 2) before any
//! browser starts, a failed capture exit status 1.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::process::ExitCode;

use serde_json::{json, Map, Value};

use super::commands::{self, describe, flag_with_value, metavar};
use super::words::{Dashes, Words};
use super::UsageError;
use chromate_command::call::Cancel;
use chromate_command::config::{Config, McpFlags};
use chromate_command::tools::schema::Kind;
use chromate_flows::run::{Event, FlowResult, RunOptions};
use chromate_flows::{capture::CAPTURE, file, output, report};

/// `chromate capture ...`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaptureCommand {
    /// The capture's arguments, as the capture declaration names them.
    pub(crate) arguments: Map<String, Value>,
    /// `--json`: the capture's record instead of its path.
    pub(crate) json: bool,
    /// `--ignore-https-errors`: its browser accepts any TLS certificate.
    pub(crate) ignore_https_errors: bool,
}

/// `chromate capture --help`.
pub(crate) fn capture_help() -> String {
    let mut text = String::from(
        "usage: chromate capture URL --name NAME [--selector CSS] [--full-page] [--output-dir DIR]\n\
         \x20      [--wait-until load|domcontentloaded|networkidle|commit] [--timeout-ms N]\n\
         \x20      [--viewport WxH] [--animations disabled|allow] [--mask CSS]... [--mask-color COLOR]\n\
         \x20      [--format png|pdf] [--paper SIZE] [--margin-in N] [--landscape]\n\
         \x20      [--ignore-https-errors] [--json]\n\n",
    );
    text.push_str(
        "Loads URL in a headless Chromium of its own (ended before the command exits: no session is\n\
         needed) and writes <output dir>/<NAME>.png, or .pdf, replacing a file of that name. Prints\n\
         the file's absolute path (--json: its record: url, viewport, size, sha256, masked\n\
         selectors, console errors). A load that times out or fails with net::ERR_* is tried twice\n\
         more, after 0.5 s and 1 s, before the error is reported; nothing else is retried.\n\
         Defaults: load, 30000 ms, 1280x720, animations disabled (two captures of an unchanged page\n\
         are byte-identical), masks #FF00FF, the output directory a private one of this user's in\n\
         the temp directory.\n\narguments:\n",
    );
    for arg in CAPTURE.args {
        if arg.name == "viewport_width" || arg.name == "viewport_height" {
            continue;
        }
        let name = if arg.name == "url" {
            metavar(arg)
        } else {
            flag_with_value(arg)
        };
        let _ = writeln!(text, "  {name:<26} {}", describe(arg));
        if arg.name == "timeout_ms" {
            let _ = writeln!(
                text,
                "  {:<26} the viewport in CSS px (default 1280x720)",
                "--viewport WxH"
            );
        }
    }
    text.push_str("  --ignore-https-errors      accept any TLS certificate (self-signed, expired, wrong host)\n");
    text.push_str("  --json                     print the capture's record as one JSON document\n");
    text.push_str("  -h, --help                 this help\n");
    text
}

/// Parses the words after `chromate capture`.
pub(crate) fn parse_capture(words: &[String]) -> Result<super::Command, UsageError> {
    let usage_error = |message: String| UsageError(format!("capture: {message}"));
    let mut arguments = Map::new();
    let mut json = false;
    let mut ignore_https_errors = false;
    let mut positional = Vec::new();
    let never_read = |path: &str| -> std::io::Result<String> {
        Err(std::io::Error::other(format!("{path}: not a file option")))
    };
    let mut words = Words::new(words, Dashes::Long);
    while let Some(flag) = words.next_flag(&mut positional) {
        let mut value = |what: &str| words.value(&flag, what).map_err(usage_error);
        match flag.name {
            "-h" | "--help" => return Ok(super::Command::Help(capture_help())),
            "--json" if flag.is_bare() => json = true,
            "--ignore-https-errors" if flag.is_bare() => ignore_https_errors = true,
            "--viewport" => {
                let text = value("WIDTHxHEIGHT")?;
                let (width, height) = parse_viewport(&text).ok_or_else(|| {
                    usage_error(format!(
                        "--viewport is WIDTHxHEIGHT in CSS px, e.g. 1280x720, not {text:?}"
                    ))
                })?;
                arguments.insert("viewport_width".into(), json!(width));
                arguments.insert("viewport_height".into(), json!(height));
            }
            name => {
                let arg = commands::find_arg(CAPTURE.args, name)
                    .filter(|arg| arg.name != "url")
                    .ok_or_else(|| usage_error(format!("unknown option {name}")))?;
                let raw = match arg.kind {
                    Kind::Bool if flag.is_bare() => "true".to_owned(),
                    _ => value("a value")?,
                };
                commands::add(&mut arguments, arg, &raw, &never_read).map_err(usage_error)?;
            }
        }
    }
    match positional.as_slice() {
        [url] => {
            arguments.insert("url".into(), json!(url));
        }
        [] => return Err(usage_error("missing URL".to_owned())),
        [_, extra, ..] => return Err(usage_error(format!("unexpected argument {extra:?}"))),
    }
    if let Err(error) = chromate_flows::capture_args(&arguments) {
        let message = cli_words(&error.message);
        let mut message = message
            .strip_prefix("capture_url: ")
            .or_else(|| message.strip_prefix("capture: "))
            .unwrap_or(&message)
            .to_owned();
        if let Some(hint) = error.hint.filter(|hint| !hint.contains("inputSchema")) {
            message.push_str(&format!("\nhint: {hint}"));
        }
        return Err(usage_error(message));
    }
    Ok(super::Command::Capture(CaptureCommand {
        arguments,
        json,
        ignore_https_errors,
    }))
}

/// `"max_lines"` as the command line spells it, `--max-lines`.
fn cli_words(message: &str) -> String {
    let mut message = message.to_owned();
    for arg in CAPTURE.args {
        let quoted = format!("\"{}\"", arg.name);
        let spelled = if arg.name == "url" {
            "URL".to_owned()
        } else {
            commands::flag_name(arg)
        };
        message = message.replace(&quoted, &spelled);
        if arg.name != "url" {
            message = message.replace(
                &format!("capture: {} ", arg.name),
                &format!("capture: {spelled} "),
            );
        }
    }
    message
}

/// `1280x720` → (1280, 720).
fn parse_viewport(text: &str) -> Option<(u32, u32)> {
    let (width, height) = text.split_once(['x', 'X'])?;
    let width = width
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|w| (1..=16_384).contains(w))?;
    let height = height
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|h| (1..=16_384).contains(h))?;
    Some((width, height))
}

/// Runs `chromate capture`: its reply printed as the session commands print theirs (the path,
/// or with `--json` the record; an error on stderr and exit status 1).
pub(crate) fn run_capture(command: &CaptureCommand) -> ExitCode {
    let Some((runtime, config)) = setup(command.ignore_https_errors) else {
        return ExitCode::FAILURE;
    };
    let reply = runtime.block_on(async {
        let cancel = watch_signals();
        chromate_flows::capture_once(config, command.arguments.clone(), &cancel).await
    });
    super::run::print_reply(&reply, command.json)
}

/// The configuration of the environment (browser, origins) and a runtime; `None` (said on
/// stderr) if the runtime cannot start.
fn setup(ignore_https_errors: bool) -> Option<(tokio::runtime::Runtime, Config)> {
    let flags = McpFlags {
        ignore_https_errors,
        ..McpFlags::default()
    };
    let (config, warnings) = Config::resolve(flags, &|name| std::env::var(name).ok());
    let config = config.for_command_line();
    for warning in warnings {
        eprintln!("chromate: {warning}");
    }
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => Some((runtime, config)),
        Err(err) => {
            eprintln!("chromate: cannot start the async runtime: {err}");
            None
        }
    }
}

/// A cancellation that fires on SIGTERM, SIGINT or SIGHUP: the capture or flow stops at its
/// next wait, its browser is closed and what it made is kept.
pub(crate) fn watch_signals() -> Cancel {
    let (sender, receiver) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        let mut signals = crate::signals::Signals::new();
        signals.recv().await;
        let _ = sender.send(true);
        // Keep the sender alive so the cancellation stays set.
        std::future::pending::<()>().await;
    });
    Cancel::new(receiver)
}

/// `chromate flows ...`, parsed.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct FlowsCommand {
    pub(crate) action: FlowsAction,
    /// `--config FILE`.
    pub(crate) config: Option<String>,
    /// `--output-dir DIR`.
    pub(crate) output_dir: Option<String>,
    /// `--base-url URL` (list, run): replaces every flow's `base_url`.
    pub(crate) base_url: Option<String>,
    /// `--junit FILE` (run).
    pub(crate) junit: Option<String>,
    /// `--baseline DIR` (run).
    pub(crate) baseline: Option<String>,
    /// `--threshold F` (run, with `--baseline`).
    pub(crate) threshold: Option<f64>,
    /// `--update-baseline` (run, with `--baseline`).
    pub(crate) update_baseline: bool,
    /// `--video` (run): record every flow.
    pub(crate) video: bool,
    /// `--describe` (run): describe every flow's PNG captures with a vision model.
    pub(crate) describe: bool,
    /// `--workers N` (run): how many flows run at once.
    pub(crate) workers: Option<usize>,
    /// `--quiet`: no progress on stderr.
    pub(crate) quiet: bool,
    /// `--ignore-https-errors` (run): every flow's browser accepts any TLS certificate.
    pub(crate) ignore_https_errors: bool,
    /// `--json`: the result object on stdout.
    pub(crate) json: bool,
}

/// What `chromate flows` is asked to do.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum FlowsAction {
    #[default]
    List,
    Run {
        names: Vec<String>,
    },
    Describe {
        name: String,
    },
}

pub(crate) const FLOWS_HELP: &str = "\
usage: chromate flows list [--config FILE] [--base-url URL] [--json]
       chromate flows run [NAME...] [--config FILE] [--base-url URL] [--output-dir DIR]
                          [--junit FILE] [--baseline DIR [--threshold F] [--update-baseline]]
                          [--video] [--describe] [--workers N] [--ignore-https-errors]
                          [--quiet] [--json]
       chromate flows describe NAME [--config FILE] [--output-dir DIR] [--json]

Named flows from a TOML file: --config FILE, else CHROMATE_FLOWS, else ./chromate.toml. Each
[[flow]] has a name, an optional base_url (relative URLs resolve against it), viewport
{ width, height } (default 1280x720) and video; each [[flow.step]] is either a tool call
(tool = \"browser_fill\" and that tool's arguments as keys, checked by the tool's own
validator) or a capture (capture = \"NAME\" and the options of `chromate capture`; without
url, the current page). In base_url and every string of a step's arguments, ${VAR} is the
environment variable VAR and ${VAR:-default} its value or, when unset or empty, default; an
unset VAR without a default is an error; $${ is a literal ${ (names are not interpolated).
retries = N (0 to 10) on a flow or a step tries a failed step again (a step passing only
after a retry is flaky in the reports). A capture step may have wait_for = \"SELECTOR\" (wait
for it to be visible first) and, against --baseline, max_diff_pixels = N and threshold = T
(the per-pixel colour distance, 0 to 1, default 0.1).
The whole file is checked before anything runs: a mistake is reported with its file, line and
key (exit status 2).

list       the flows, their steps and captures
run        each flow (all, or the NAMEs) in a headless browser of its own; captures go to
           <output dir>/<flow>/ with a <capture>.json sidecar each, an index.md and run.json;
           <output dir>/report.html shows every flow (self-contained, opens offline).
           A failed step stops its flow but keeps every capture taken before it (the result
           says failed_step_index) and leaves <flow>/failure/ (screenshot, snapshot, console
           and network entries); the exit status is 1 if any flow failed. Each flow's result
           is printed once, as it finishes: on stdout (--json: one line per flow on stderr,
           the report on stdout); a terminal also gets a live step line on stderr
           (--quiet: no stderr)
describe   what the last run of NAME left on disk (no browser): index.md and the captures
           with their sidecars

options:
  --config FILE       the flow file
  --base-url URL      replaces every flow's base_url (an absolute http or https URL); the
                      file's base_url is then not read
  --output-dir DIR    where runs go (default: a private per-user directory in the temp dir)
  --junit FILE        also write JUnit XML there: a suite per flow, a case per step (run)
  --baseline DIR      compare each PNG capture with DIR/<flow>/<capture>.png (a previous
                      run's output directory will do): a changed or missing one fails its
                      flow, a new one is reported; <capture>.diff.png shows the difference
                      (red; antialiasing yellow, not counted)
  --threshold F       the share of pixels (0 to 1) that may differ (default 0)
  --update-baseline   write the captures into --baseline DIR instead of failing on changes
  --video             record every flow (else only those with video = true): the page's
                      screencast as video.webm and video.mp4 in the flow's directory, made
                      with ffmpeg (CHROMATE_FFMPEG, else on PATH; without it the flow runs and
                      the result says how to install it); a failed or interrupted flow keeps
                      its video
  --describe          describe every PNG capture with a vision model (else only the flows
                      with vision_describe = true): its sidecar <capture>.json gets a
                      `vision` object; a failed description leaves it as it was and does not
                      fail the flow (docs/llm.md)
  --workers N         run N flows at once (1 to 16, default 1), each in its own browser;
                      results and reports keep the flows' order (run)
  --ignore-https-errors
                      every flow's browser accepts any TLS certificate (self-signed,
                      expired, wrong host); also CHROMATE_IGNORE_HTTPS_ERRORS=1 (run)
  --quiet             no progress on stderr (run)
  --json              print the result object as one JSON document
  -h, --help          this help
";

/// Parses the words after `chromate flows`.
pub(crate) fn parse_flows(words: &[String]) -> Result<super::Command, UsageError> {
    let usage_error = |message: String| UsageError(format!("flows: {message}"));
    let Some((action, rest)) = words.split_first() else {
        return Err(usage_error("missing list, run or describe".to_owned()));
    };
    let mut command = FlowsCommand::default();
    let mut positional: Vec<String> = Vec::new();
    match action.as_str() {
        "-h" | "--help" | "help" => return Ok(super::Command::Help(FLOWS_HELP.to_owned())),
        "list" | "run" | "describe" => {}
        other => return Err(usage_error(format!("unknown action {other:?}"))),
    }
    let mut words = Words::new(rest, Dashes::Any);
    while let Some(flag) = words.next_flag(&mut positional) {
        let mut value = || words.value(&flag, "a value").map_err(usage_error);
        match (flag.name, action.as_str()) {
            ("-h" | "--help", _) => return Ok(super::Command::Help(FLOWS_HELP.to_owned())),
            ("--json", _) if flag.is_bare() => command.json = true,
            ("--quiet", "run") if flag.is_bare() => command.quiet = true,
            ("--video", "run") if flag.is_bare() => command.video = true,
            ("--describe", "run") if flag.is_bare() => command.describe = true,
            ("--ignore-https-errors", "run") if flag.is_bare() => {
                command.ignore_https_errors = true;
            }
            ("--config", _) => command.config = Some(value()?),
            ("--base-url", "list" | "run") => {
                let url = value()?;
                let lower = url.to_ascii_lowercase();
                if !(lower.starts_with("http://") || lower.starts_with("https://"))
                    || !chromate_command::tools::url_is_navigable(&url)
                {
                    return Err(usage_error(format!(
                        "--base-url is an absolute http or https URL, not {url:?}"
                    )));
                }
                command.base_url = Some(url);
            }
            ("--output-dir", "run" | "describe") => command.output_dir = Some(value()?),
            ("--junit", "run") => command.junit = Some(value()?),
            ("--baseline", "run") => command.baseline = Some(value()?),
            ("--update-baseline", "run") if flag.is_bare() => command.update_baseline = true,
            ("--workers", "run") => {
                let text = value()?;
                let workers = text
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=16).contains(n))
                    .ok_or_else(|| {
                        usage_error(format!(
                            "--workers is how many flows run at once, 1 to 16, not {text:?}"
                        ))
                    })?;
                command.workers = Some(workers);
            }
            ("--threshold", "run") => {
                let text = value()?;
                let threshold = text
                    .parse::<f64>()
                    .ok()
                    .filter(|share| (0.0..=1.0).contains(share))
                    .ok_or_else(|| {
                        usage_error(format!(
                            "--threshold is the share of pixels that may differ, 0 to 1, not {text:?}"
                        ))
                    })?;
                command.threshold = Some(threshold);
            }
            _ => {
                return Err(usage_error(format!(
                    "unknown option {} for flows {action}",
                    flag.name
                )))
            }
        }
    }
    if command.baseline.is_none() && (command.update_baseline || command.threshold.is_some()) {
        return Err(usage_error(
            "--threshold and --update-baseline go with --baseline DIR".to_owned(),
        ));
    }
    for name in &positional {
        if !chromate_flows::capture::name_is_valid(name) {
            return Err(usage_error(format!(
                "{name:?} is not a flow name (^[A-Za-z0-9._-]+$, not . or ..)"
            )));
        }
    }
    command.action = match action.as_str() {
        "list" if positional.is_empty() => FlowsAction::List,
        "list" => return Err(usage_error("list takes no names".to_owned())),
        "run" => FlowsAction::Run { names: positional },
        _ => match positional.as_slice() {
            [name] => FlowsAction::Describe { name: name.clone() },
            [] => return Err(usage_error("describe needs a flow name".to_owned())),
            _ => return Err(usage_error("describe takes one flow name".to_owned())),
        },
    };
    Ok(super::Command::Flows(command))
}

/// Exit status of a flow file that does not check, or a flow name it does not have.
const USAGE: u8 = 2;

/// Runs `chromate flows ...`.
pub(crate) fn run_flows(command: &FlowsCommand) -> ExitCode {
    let Some((runtime, config)) = setup(command.ignore_https_errors) else {
        return ExitCode::FAILURE;
    };
    let path = file::locate(command.config.as_deref(), &|name| std::env::var(name).ok());
    let env = |name: &str| std::env::var(name).ok();
    let inputs = file::Inputs {
        env: &env,
        base_url: command.base_url.as_deref(),
    };
    let loaded = file::load_with(&path, &config, inputs);
    match &command.action {
        FlowsAction::List => match loaded {
            Ok(flow_file) => print_list(&chromate_flows::list(&flow_file), command.json),
            Err(err) => file_error(&err),
        },
        FlowsAction::Describe { name } => {
            // The flow file, where there is one, says whether the name is a flow at all.
            if let Ok(flow_file) = &loaded {
                if flow_file.flow(name).is_none() {
                    let error = chromate_flows::run::missing_flow(name, flow_file);
                    eprintln!("{}", error.to_text(None));
                    return ExitCode::from(USAGE);
                }
            }
            let dir = output::existing_dir(command.output_dir.as_deref());
            match report::describe(&dir, name) {
                Ok(described) => print_described(&described, command.json),
                Err(error) => {
                    eprintln!("{}", error.to_text(None));
                    ExitCode::from(USAGE)
                }
            }
        }
        FlowsAction::Run { names } => {
            let flow_file = match loaded {
                Ok(flow_file) => flow_file,
                Err(err) => return file_error(&err),
            };
            if let Err(error) = chromate_flows::run::select(&flow_file, names) {
                eprintln!("{}", error.to_text(None));
                return ExitCode::from(USAGE);
            }
            // A baseline that is not there would make every capture new and the run pass: the
            // visual check would be off without a word (docs/cli.md#chromate-flows).
            if let Some(dir) = command.baseline.as_deref() {
                if !command.update_baseline && !std::path::Path::new(dir).is_dir() {
                    eprintln!(
                        "chromate: flows run: --baseline {dir}: no such directory; to create the \
                         baseline from this run's captures, add --update-baseline"
                    );
                    return ExitCode::from(USAGE);
                }
            }
            let options = RunOptions {
                names: names.clone(),
                output_dir: command.output_dir.clone(),
                junit: command.junit.as_ref().map(std::path::PathBuf::from),
                baseline: command.baseline.as_ref().map(|dir| {
                    chromate_flows::baseline::BaselineOptions {
                        dir: std::path::absolute(dir)
                            .unwrap_or_else(|_| std::path::PathBuf::from(dir)),
                        threshold: command.threshold.unwrap_or(0.0),
                        update: command.update_baseline,
                    }
                }),
                video: command.video,
                describe: command.describe,
                workers: command.workers.unwrap_or(1),
                ffmpeg: std::env::var_os("CHROMATE_FFMPEG")
                    .filter(|value| !value.is_empty())
                    .map(std::path::PathBuf::from),
            };
            let mut progress = ProgressLine::new(command.quiet, command.json);
            let outcome = runtime.block_on(async {
                let cancel = watch_signals();
                chromate_flows::run::run(&config, &flow_file, &options, &cancel, &mut |event| {
                    progress.show(&event)
                })
                .await
            });
            let report = match outcome {
                Ok(report) => report,
                Err(error) => {
                    eprintln!("{}", error.to_text(None));
                    return ExitCode::FAILURE;
                }
            };
            print_run(&report.to_json(), command.json);
            if report.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn file_error(err: &file::FileError) -> ExitCode {
    eprintln!("chromate: {err}");
    ExitCode::from(USAGE)
}

fn print_list(list: &Value, json: bool) -> ExitCode {
    if json {
        println!("{list}");
        return ExitCode::SUCCESS;
    }
    let mut text = format!("flows in {}:\n", list["config_path"].as_str().unwrap_or(""));
    for flow in list["flows"].as_array().into_iter().flatten() {
        let steps = flow["steps"].as_array().map_or(0, Vec::len);
        let captures: Vec<&str> = flow["captures"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let _ = writeln!(
            text,
            "  {:<20} {steps} steps, captures: {}",
            flow["name"].as_str().unwrap_or(""),
            if captures.is_empty() {
                "none".to_owned()
            } else {
                captures.join(", ")
            }
        );
    }
    print!("{text}");
    ExitCode::SUCCESS
}

fn print_described(described: &Value, json: bool) -> ExitCode {
    if json {
        println!("{described}");
        return ExitCode::SUCCESS;
    }
    match described["index_md"].as_str() {
        Some(index) => print!("{index}"),
        None => println!(
            "flow {} has not run (nothing at {})",
            described["flow_name"].as_str().unwrap_or(""),
            described["output_dir"].as_str().unwrap_or("")
        ),
    }
    ExitCode::SUCCESS
}

fn print_run(report: &Value, json: bool) {
    if json {
        println!("{report}");
        return;
    }
    // Each flow's line was printed as the flow finished (ProgressLine): not again here.
    let mut text = String::new();
    let flows = report["flows"].as_array().cloned().unwrap_or_default();
    let failed = flows
        .iter()
        .filter(|flow| flow["ok"] != json!(true))
        .count();
    let _ = writeln!(
        text,
        "flows: {} run, {failed} failed; output in {}",
        flows.len(),
        report["output_dir"].as_str().unwrap_or("")
    );
    if let Some(html) = report["report_html"].as_str() {
        let _ = writeln!(text, "report: {html}");
    }
    if let Some(junit) = report["junit"].as_str() {
        let _ = writeln!(text, "junit: {junit}");
    }
    print!("{text}");
}

/// `ok    login  3 steps, 1 capture, 812 ms` or `FAIL  login  step 3 of 5 (browser_click): ...`.
fn flow_line(flow: &Value) -> String {
    let name = flow["flow_name"].as_str().unwrap_or("");
    let captures = flow["captures"].as_array().map_or(0, Vec::len);
    let plural = if captures == 1 { "" } else { "s" };
    if flow["ok"] == json!(true) {
        format!(
            "ok    {name}  {} steps, {captures} capture{plural}, {} ms",
            flow["steps_total"], flow["duration_ms"]
        )
    } else {
        let error = &flow["error"];
        let at = flow["failed_at"].as_str().unwrap_or("");
        format!(
            "FAIL  {name}  {at}: {} {}; {captures} capture{plural} kept",
            error["code"].as_str().unwrap_or(""),
            error["message"].as_str().unwrap_or("")
        )
    }
}

/// Progress while flows run, each flow's result told once: in text output, its line
/// (`ok    login ...`) on stdout as it finishes, stderr carrying only the live step line of a
/// terminal; with `--json` (stdout holds the report alone), a line per flow on stderr. A
/// terminal's live line is cleared before anything else is printed.
struct ProgressLine {
    quiet: bool,
    json: bool,
    terminal: bool,
}

impl ProgressLine {
    fn new(quiet: bool, json: bool) -> ProgressLine {
        ProgressLine {
            quiet,
            json,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn show(&mut self, event: &Event<'_>) {
        let mut stderr = std::io::stderr().lock();
        match event {
            Event::Step {
                flow,
                index,
                total,
                label,
                captures,
            } if self.terminal && !self.quiet => {
                let _ = write!(
                    stderr,
                    "\r\x1b[2K{flow}: step {} of {total} {label} ({captures} captures)",
                    index + 1
                );
                let _ = stderr.flush();
            }
            Event::Step { .. } => {}
            Event::Finished(result) => {
                if self.terminal && !self.quiet {
                    let _ = write!(stderr, "\r\x1b[2K");
                    let _ = stderr.flush();
                }
                if !self.json {
                    let mut stdout = std::io::stdout().lock();
                    let _ = writeln!(stdout, "{}", flow_line(&result.to_json()));
                    let _ = stdout.flush();
                } else if !self.quiet {
                    let _ = writeln!(stderr, "flow {}", progress_summary(result));
                }
            }
        }
    }
}

fn progress_summary(result: &FlowResult) -> String {
    match (&result.error, result.failed_step_index) {
        (None, _) => format!(
            "{}: ok ({} steps, {} captures, {} ms)",
            result.name,
            result.steps_total,
            result.captures.len(),
            result.duration_ms
        ),
        (Some(error), Some(index)) => format!(
            "{}: failed at step {} of {}: {}",
            result.name,
            index + 1,
            result.steps_total,
            error["code"].as_str().unwrap_or("")
        ),
        (Some(error), None) => format!(
            "{}: failed: {}",
            result.name,
            error["message"].as_str().unwrap_or("")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    fn parsed(line: &str) -> Map<String, Value> {
        match parse_capture(&words(line)) {
            Ok(super::super::Command::Capture(command)) => command.arguments,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn refused(line: &str) -> String {
        match parse_capture(&words(line)) {
            Err(UsageError(message)) => message,
            other => panic!("{line} was accepted: {other:?}"),
        }
    }

    #[test]
    fn capture_flags_come_from_the_declaration() {
        let arguments = parsed(
            "http://127.0.0.1:1/ --name home --viewport 800x600 --mask #clock --mask .ad \
             --full-page --wait-until=networkidle --timeout-ms 5000",
        );
        assert_eq!(
            Value::Object(arguments),
            json!({
                "url": "http://127.0.0.1:1/",
                "name": "home",
                "viewport_width": 800,
                "viewport_height": 600,
                "mask": ["#clock", ".ad"],
                "full_page": true,
                "wait_until": "networkidle",
                "timeout_ms": 5000,
            })
        );
    }

    #[test]
    fn bad_names_and_options_are_usage_errors_naming_the_flag() {
        for name in ["../x", "/etc/passwd", "a/b", ".", "..", "a b", ""] {
            let words = ["http://127.0.0.1:1/".to_owned(), format!("--name={name}")];
            let message = match parse_capture(&words) {
                Err(UsageError(message)) => message,
                other => panic!("{name:?} was accepted: {other:?}"),
            };
            assert!(message.contains("--name"), "{name:?}: {message}");
        }
        let long = "a".repeat(200);
        assert!(refused(&format!("http://127.0.0.1:1/ --name {long}")).contains("--name"));
        assert!(refused("http://127.0.0.1:1/").contains("--name"));
        assert!(refused("--name x").contains("missing URL"));
        assert!(refused("http://127.0.0.1:1/ --name x --viewport 12").contains("--viewport"));
        assert!(refused("http://127.0.0.1:1/ --name x --format gif").contains("--format"));
        assert!(
            refused("http://127.0.0.1:1/ --name x --selector #a --full-page")
                .contains("--full-page")
        );
        assert!(refused("example.com --name x").contains("https://example.com"));
        assert!(refused("http://127.0.0.1:1/ --name x --session s").contains("--session"));
    }
}
