//! `chromate qa-flow URL --step TEXT... [--expect TEXT] [--format json|text|junit] [...]`
//! (docs/llm.md#qa-flow): a user journey in plain-language steps run by a model, in a headless
//! browser this process launches and closes before it returns (no session daemon).
//!
//! Owns the command's flags (`--step` repeated is `steps`, `--expect` is `expected_outcome`,
//! `--continue-on-failure` is `stop_on_failure` false, `--allow-origin` is `allowed_origins`),
//! the report on stdout (`--format`, or `--output FILE`) and the exit status: 0 when the
//! journey completed (and its expected outcome matched), 1 when it failed, timed out or could
//! not run, 2 for a usage error. The journey itself is `qa_execute_user_flow` in the command
//! layer; its reports `chromate_command::qaflow::report`.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::UsageError;
use chromate_command::call::Progress;
use chromate_command::config::{Config, McpFlags};
use chromate_command::qaflow::{report, FlowResult, FlowStatus};
use chromate_command::session::ToolSession;
use chromate_command::tools::{self, qa, Defaults};
use chromate_command::Reply;

pub(crate) const HELP: &str = "\
usage: chromate qa-flow URL --step TEXT [--step TEXT]... [--expect TEXT]
                            [--format json|text|junit] [--output FILE]
                            [--provider anthropic|openai|ollama] [--model MODEL]
                            [--timeout-ms N] [--continue-on-failure] [--max-calls N]
                            [--allow-origin ORIGIN]... [--no-vision]
                            [--block-private-network [--allow-private ORIGIN]...]

Runs a user journey written as plain-language steps: per step a model reads the page (its
snapshot with refs) and acts through a small fixed set of tools (click, fill, select, check,
press, navigate within URL's origin, wait, expect) until it says the step is done or failed.
In a headless browser of its own, ended before the command returns. The page's text goes to
the provider. docs/llm.md#qa-flow.

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
}

/// Parses the words after `qa-flow`; `Ok(None)` for `--help`.
pub(crate) fn parse(words: &[String]) -> Result<Option<QaFlowCommand>, UsageError> {
    let mut arguments = Map::new();
    let mut steps = Vec::new();
    let mut allowed = Vec::new();
    let mut private = Vec::new();
    let mut format = None;
    let mut output = None;
    let mut url = None;
    let mut words = words.iter();
    while let Some(word) = words.next() {
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (word.as_str(), None),
        };
        let mut value = |flag: &str| {
            inline
                .clone()
                .or_else(|| words.next().cloned())
                .filter(|value| !value.is_empty())
                .ok_or_else(|| UsageError(format!("qa-flow: {flag} needs a value")))
        };
        let number = |flag: &str, text: String| {
            text.parse::<u64>()
                .map_err(|_| UsageError(format!("qa-flow: {flag} needs a number, not {text:?}")))
        };
        match name {
            "-h" | "--help" => return Ok(None),
            "--step" => steps.push(value(name)?),
            "--expect" => {
                arguments.insert("expected_outcome".into(), json!(value(name)?));
            }
            "--provider" => {
                arguments.insert("provider".into(), json!(value(name)?));
            }
            "--model" => {
                arguments.insert("model".into(), json!(value(name)?));
            }
            "--timeout-ms" => {
                let ms = number(name, value(name)?)?;
                arguments.insert("timeout_ms".into(), json!(ms));
            }
            "--max-calls" => {
                let calls = number(name, value(name)?)?;
                arguments.insert("max_model_calls_per_step".into(), json!(calls));
            }
            "--allow-origin" => allowed.push(value(name)?),
            "--allow-private" => private.push(value(name)?),
            "--continue-on-failure" if inline.is_none() => {
                arguments.insert("stop_on_failure".into(), json!(false));
            }
            "--no-vision" if inline.is_none() => {
                arguments.insert("vision".into(), json!(false));
            }
            "--block-private-network" if inline.is_none() => {
                arguments.insert("block_private_network".into(), json!(true));
            }
            "--json" if inline.is_none() => format = Some(Format::Json),
            "--format" => {
                format = Some(match value(name)?.as_str() {
                    "text" => Format::Text,
                    "json" => Format::Json,
                    "junit" => Format::Junit,
                    other => {
                        return Err(UsageError(format!(
                            "qa-flow: --format {other:?}: use text, json or junit"
                        )))
                    }
                })
            }
            "--output" => output = Some(std::path::PathBuf::from(value(name)?)),
            flag if flag.starts_with('-') && flag.len() > 1 => {
                return Err(UsageError(format!("qa-flow: unknown option {word:?}")))
            }
            _ if url.is_none() => url = Some(word.clone()),
            _ => {
                return Err(UsageError(format!(
                    "qa-flow: one URL only, not also {word:?} (each step goes after --step)"
                )))
            }
        }
    }
    let url = url.ok_or_else(|| UsageError("qa-flow: missing URL".to_owned()))?;
    if steps.is_empty() {
        return Err(UsageError(
            "qa-flow: give the journey's steps, each with --step \"…\"".to_owned(),
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
    Ok(Some(QaFlowCommand {
        arguments,
        format: format.unwrap_or(Format::Text),
        output,
    }))
}

/// Runs `chromate qa-flow`.
pub(crate) fn run(command: &QaFlowCommand) -> ExitCode {
    let reply = match on_own_browser(command) {
        Ok(reply) => reply,
        Err(message) => {
            eprintln!("chromate: qa-flow: {message}");
            return ExitCode::from(2);
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

/// The journey in a browser this process launches, ended (with everything it started) before
/// this returns.
fn on_own_browser(command: &QaFlowCommand) -> Result<Reply, String> {
    let (config, warnings) = Config::resolve(McpFlags::default(), &|name| std::env::var(name).ok());
    let config = config.for_command_line();
    for warning in warnings {
        eprintln!("chromate: {warning}");
    }
    let defaults = Defaults {
        agent_timeout_ms: config.agent_timeout_ms,
    };
    let arguments = tools::validate(
        &qa::USER_FLOW,
        Some(&Value::Object(command.arguments.clone())),
        &defaults,
    )
    .map_err(|error| error.message)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))?;
    let reply = runtime.block_on(async {
        let cancel = super::flows::watch_signals();
        let phases = Progress::new("starting", std::time::Instant::now());
        let mut session = ToolSession::new(config);
        session.call_dir = std::env::current_dir().ok();
        let reply =
            chromate_command::run(&mut session, &qa::USER_FLOW, arguments, &cancel, &phases).await;
        session.shutdown().await;
        reply
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(reply)
}
