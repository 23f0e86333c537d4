//! The command line of captures and flows: `chromate capture URL --name NAME [...]` and
//! `chromate flows list|run|describe`.
//!
//! Owns: their argv (the capture flags read from the capture declaration, `--viewport WxH` as
//! its two numbers), their help, the runtime and signal watch they run under, and what reaches
//! stdout, stderr and the exit status. Does not own what a capture or a flow does
//! (`crate::dispatch::flows`): a bad argument is a usage error (exit status 2) before any
//! browser starts, a failed capture exit status 1.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::{json, Map, Value};

use super::commands::{self, describe, flag_with_value, metavar};
use super::UsageError;
use crate::config::{Config, McpFlags};
use crate::dispatch::call::Cancel;
use crate::dispatch::flows::{self, capture::CAPTURE};
use crate::dispatch::tools::schema::Kind;

/// `chromate capture ...`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaptureCommand {
    /// The capture's arguments, as the capture declaration names them.
    pub(crate) arguments: Map<String, Value>,
    /// `--json`: the capture's record instead of its path.
    pub(crate) json: bool,
}

/// `chromate capture --help`.
pub(crate) fn capture_help() -> String {
    let mut text = String::from(
        "usage: chromate capture URL --name NAME [--selector CSS] [--full-page] [--output-dir DIR]\n\
         \x20      [--wait-until load|domcontentloaded|networkidle|commit] [--timeout-ms N]\n\
         \x20      [--viewport WxH] [--animations disabled|allow] [--mask CSS]... [--mask-color COLOR]\n\
         \x20      [--format png|pdf] [--paper SIZE] [--margin-in N] [--landscape] [--json]\n\n",
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
    text.push_str("  --json                     print the capture's record as one JSON document\n");
    text.push_str("  -h, --help                 this help\n");
    text
}

/// Parses the words after `chromate capture`.
pub(crate) fn parse_capture(words: &[String]) -> Result<super::Command, UsageError> {
    let usage_error = |message: String| {
        UsageError(format!(
            "capture: {message}\n\n{}",
            capture_help()
                .lines()
                .take(4)
                .collect::<Vec<_>>()
                .join("\n")
        ))
    };
    let mut arguments = Map::new();
    let mut json = false;
    let mut positional = Vec::new();
    let mut words = words.iter();
    let never_read = |path: &str| -> std::io::Result<String> {
        Err(std::io::Error::other(format!("{path}: not a file option")))
    };
    while let Some(word) = words.next() {
        if !word.starts_with("--") && word != "-h" {
            positional.push(word.clone());
            continue;
        }
        if word == "-h" || word == "--help" {
            return Ok(super::Command::Help(capture_help()));
        }
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_owned())),
            None => (word.as_str(), None),
        };
        let mut value = |what: &str| match inline.clone().or_else(|| words.next().cloned()) {
            Some(value) => Ok(value),
            None => Err(usage_error(format!("{flag} needs {what}"))),
        };
        match flag {
            "--json" if inline.is_none() => json = true,
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
            _ => {
                let name = flag.trim_start_matches("--").replace('-', "_");
                let arg = CAPTURE
                    .args
                    .iter()
                    .find(|arg| arg.name == name && arg.name != "url")
                    .ok_or_else(|| usage_error(format!("unknown option {flag}")))?;
                let raw = match (arg.kind, &inline) {
                    (Kind::Bool, None) => "true".to_owned(),
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
    if let Err(error) = flows::capture_args(&arguments) {
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
    Ok(super::Command::Capture(CaptureCommand { arguments, json }))
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
    let Some((runtime, config)) = setup() else {
        return ExitCode::FAILURE;
    };
    let reply = runtime.block_on(async {
        let cancel = watch_signals();
        flows::capture_once(config, command.arguments.clone(), &cancel).await
    });
    super::run::print_reply(&reply, command.json)
}

/// The configuration of the environment (browser, origins) and a runtime; `None` (said on
/// stderr) if the runtime cannot start.
fn setup() -> Option<(tokio::runtime::Runtime, Config)> {
    let (config, warnings) = Config::resolve(McpFlags::default(), &|name| std::env::var(name).ok());
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
fn watch_signals() -> Cancel {
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
            let message = refused(&format!("http://127.0.0.1:1/ --name={name}"));
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
