//! `chromate qa-flow URL --step TEXT... [--expect TEXT] [--format json|text|junit] [...]`
//! (docs/llm.md#qa-flow): a user journey in plain-language steps run by a model, in a headless
//! browser this process launches and closes before it returns (no session daemon), or with
//! `--session NAME` on that session's browser (its daemon started if need be, and kept).
//!
//! Owns the command's flags (`--step` repeated is `steps`, `--expect` is `expected_outcome`,
//! `--continue-on-failure` is `stop_on_failure` false, `--allow-origin` is `allowed_origins`),
//! the progress lines on stderr (one per phase, unless `--quiet`), the report on stdout
//! (`--format`, or `--output FILE`) and the exit status: 0 when the
//! journey completed (and its expected outcome matched), 1 when it failed, timed out or could
//! not run, 2 for a usage error. The journey itself is `qa_execute_user_flow` in the command
//! layer; its reports `chromate_command::qaflow::report`.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::commands::{idle_timeout, session_name};
use super::tool_run::{self, Target};
use super::words::{Dashes, Words};
use super::UsageError;
use chromate_command::qaflow::{report, FlowResult, FlowStatus};
use chromate_command::tools::qa;
use chromate_command::Reply;

pub(crate) const HELP: &str = "\
usage: chromate qa-flow URL --step TEXT [--step TEXT]... [--expect TEXT]
                            [--format json|text|junit] [--output FILE]
                            [--provider anthropic|openai|ollama] [--model MODEL]
                            [--timeout-ms N] [--continue-on-failure] [--max-calls N]
                            [--allow-origin ORIGIN]... [--no-vision]
                            [--block-private-network [--allow-private ORIGIN]...]
                            [--quiet] [--session NAME [--idle-timeout SECONDS]]

Runs a user journey written as plain-language steps: per step a model reads the page (its
snapshot with refs) and acts through a small fixed set of tools (click, fill, select, check,
press, navigate within URL's origin, wait, expect) until it says the step is done or failed.
In a headless browser of its own, ended before the command returns, or with --session on that
session's browser. The page's text goes to the provider. docs/llm.md#qa-flow.

options:
  --step TEXT              one step, in order (repeat; at least one)
  --expect TEXT            the expected outcome, checked by the model after the last step
  --format FORMAT          text (default), json (the result) or junit (one case per step)
  --output FILE            write the report to FILE instead of stdout
  --provider NAME          anthropic, openai or ollama (else CHROMATE_LLM_PROVIDER, else the
                           first provider whose key is set, else ollama)
  --model MODEL            the model (else CHROMATE_LLM_MODEL, else the provider's default);
                           it must take tool calls
  --timeout-ms N           the whole journey's deadline (default 120000)
  --continue-on-failure    run the steps after a failed one (default: they are skipped)
  --max-calls N            model calls one step may take (1..30; default 10)
  --allow-origin ORIGIN    scheme://host[:port] the model may also navigate to (repeat)
  --no-vision              never send a screenshot (a model that takes no images)
  --block-private-network  refuse requests to loopback and private addresses, as audits do
  --allow-private ORIGIN   scheme://host[:port] that --block-private-network lets through
  --json                   same as --format json
  --quiet                  no progress lines on stderr (by default: the browser starting, the
                           page loading, each step as it starts, the expected outcome's check)
  --session NAME           run on this session's browser (its daemon is started if need be and
                           kept, as every session command does); the provider, model and keys
                           are then the daemon's environment's, the one it was started with
  --idle-timeout SECONDS   with --session: a session this command starts ends after this long
                           unused (1800)
  -h, --help               this help

environment: CHROMATE_LLM_PROVIDER, CHROMATE_LLM_MODEL, ANTHROPIC_API_KEY, OPENAI_API_KEY,
CHROMATE_LLM_BASE_URL, CHROMATE_LLM_TIMEOUT_MS.
exit status: 0 when the journey completed; 1 when a step failed, the outcome did not match,
it timed out, or the provider failed; 2 for a usage error.
";

/// The report a run prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Json,
    Junit,
}

/// `chromate qa-flow`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QaFlowCommand {
    /// `qa_execute_user_flow`'s arguments as given.
    pub(crate) arguments: Map<String, Value>,
    pub(crate) format: Format,
    pub(crate) output: Option<std::path::PathBuf>,
    /// `--quiet`: no progress lines on stderr.
    pub(crate) quiet: bool,
    /// `--session NAME`: run on that session's browser, through its daemon.
    pub(crate) session: Option<String>,
    /// `--idle-timeout`: with `--session`, how long a daemon this starts lives unused.
    pub(crate) idle: Option<Duration>,
}

/// Parses the words after `qa-flow`; `Ok(None)` for `--help`.
pub(crate) fn parse(words: &[String]) -> Result<Option<QaFlowCommand>, UsageError> {
    let usage = |message: String| UsageError(format!("qa-flow: {message}"));
    let mut arguments = Map::new();
    let mut steps = Vec::new();
    let mut allowed = Vec::new();
    let mut private = Vec::new();
    let mut format = None;
    let mut command = QaFlowCommand {
        arguments: Map::new(),
        format: Format::Text,
        output: None,
        quiet: false,
        session: None,
        idle: None,
    };
    let mut words = Words::new(words, Dashes::Any);
    let mut positional = Vec::new();
    while let Some(flag) = words.next_flag(&mut positional) {
        let name = flag.name;
        let mut value = || words.text_value(&flag).map_err(usage);
        let number = |flag: &str, text: String| {
            text.parse::<u64>()
                .map_err(|_| usage(format!("{flag} needs a number, not {text:?}")))
        };
        match name {
            "-h" | "--help" => return Ok(None),
            "--step" => steps.push(value()?),
            "--expect" => {
                arguments.insert("expected_outcome".into(), json!(value()?));
            }
            "--provider" => {
                arguments.insert("provider".into(), json!(value()?));
            }
            "--model" => {
                arguments.insert("model".into(), json!(value()?));
            }
            "--timeout-ms" => {
                let ms = number(name, value()?)?;
                arguments.insert("timeout_ms".into(), json!(ms));
            }
            "--max-calls" => {
                let calls = number(name, value()?)?;
                arguments.insert("max_model_calls_per_step".into(), json!(calls));
            }
            "--allow-origin" => allowed.push(value()?),
            "--allow-private" => private.push(value()?),
            "--continue-on-failure" if flag.is_bare() => {
                arguments.insert("stop_on_failure".into(), json!(false));
            }
            "--no-vision" if flag.is_bare() => {
                arguments.insert("vision".into(), json!(false));
            }
            "--block-private-network" if flag.is_bare() => {
                arguments.insert("block_private_network".into(), json!(true));
            }
            "--json" if flag.is_bare() => format = Some(Format::Json),
            "--format" => {
                format = Some(match value()?.as_str() {
                    "text" => Format::Text,
                    "json" => Format::Json,
                    "junit" => Format::Junit,
                    other => {
                        return Err(usage(format!(
                            "--format {other:?}: use text, json or junit"
                        )))
                    }
                })
            }
            "--output" => command.output = Some(std::path::PathBuf::from(value()?)),
            "--quiet" if flag.is_bare() => command.quiet = true,
            "--session" => command.session = Some(session_name(&value()?)?),
            "--idle-timeout" => {
                command.idle = Some(idle_timeout(&value()?).map_err(usage)?);
            }
            _ => return Err(usage(format!("unknown option {:?}", flag.written))),
        }
    }
    let mut positional = positional.into_iter();
    let url = positional
        .next()
        .ok_or_else(|| usage("missing URL".to_owned()))?;
    if let Some(word) = positional.next() {
        return Err(usage(format!(
            "one URL only, not also {word:?} (each step goes after --step)"
        )));
    }
    if steps.is_empty() {
        return Err(usage(
            "give the journey's steps, each with --step \"…\"".to_owned(),
        ));
    }
    if command.idle.is_some() && command.session.is_none() {
        return Err(usage(
            "--idle-timeout needs --session NAME: without it the journey's browser ends with the command"
                .to_owned(),
        ));
    }
    arguments.insert("url".into(), json!(url));
    arguments.insert("steps".into(), json!(steps));
    if !allowed.is_empty() {
        arguments.insert("allowed_origins".into(), json!(allowed));
    }
    if !private.is_empty() {
        arguments.insert("allow_private".into(), json!(private));
    }
    command.arguments = arguments;
    command.format = format.unwrap_or(Format::Text);
    Ok(Some(command))
}

/// Runs `chromate qa-flow`.
pub(crate) fn run(command: &QaFlowCommand) -> ExitCode {
    // A line per phase (the browser starting, the page loading, each step as it starts, the
    // expected outcome's check) on stderr, terminal or not: the lines only add up, so a CI
    // log reads them as well as a person does, and stdout keeps the report alone.
    let mut line = |phase: &str| eprintln!("chromate: {phase}");
    let on_phase = (!command.quiet).then_some(&mut line as &mut dyn FnMut(&str));
    let target = match &command.session {
        Some(name) => Target::Session {
            name,
            idle: command.idle,
        },
        None => Target::OwnBrowser(Box::default()),
    };
    let answer = tool_run::run(
        &qa::USER_FLOW,
        target,
        &command.arguments,
        &str::to_owned,
        on_phase,
    );
    let reply = match answer {
        Ok(reply) => reply,
        Err(message) => {
            eprintln!("chromate: qa-flow: {message}");
            // Arguments refused before any browser starts are a usage error; a session's
            // daemon that cannot be reached, a failure.
            return ExitCode::from(if command.session.is_some() { 1 } else { 2 });
        }
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
    let result: FlowResult = match serde_json::from_value(done.result.clone()) {
        Ok(result) => result,
        Err(err) => {
            eprintln!("chromate: qa-flow: the result did not decode: {err}");
            return ExitCode::from(1);
        }
    };
    let text = match command.format {
        Format::Text => report::text(&result),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&done.result).unwrap_or_default();
            text.push('\n');
            text
        }
        Format::Junit => report::junit(&result),
    };
    match &command.output {
        Some(path) => {
            if let Err(err) = std::fs::write(path, &text) {
                eprintln!("chromate: qa-flow: --output {}: {err}", path.display());
                return ExitCode::from(1);
            }
            print!("{}", report::text(&result));
        }
        None => print!("{text}"),
    }
    let passed = result.status == FlowStatus::Completed && result.outcome_matched != Some(false);
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
