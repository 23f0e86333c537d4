//! The tool commands of the command line: `chromate <command> POSITIONAL... [--flags]`, read
//! from the same declarations as the MCP schema (`ToolDecl::cli` and its `args`).
//!
//! Owns: turning words into a tool's argument map (positions, `--flag value`, `--flag=value`,
//! booleans, repeated list flags, `--file`, JSON steps from a file or standard input), the
//! options every command shares (`--session`, `--json`, `--idle-timeout`), each command's
//! `--help`, and the command reference `docs/cli-reference.md`. The map is checked with the tool's own
//! validator before anything is sent, so a bad argument is a usage error (exit status 2)
//! that never starts a browser. Does not own running the call (`cli/run.rs`) or what a tool
//! does (`chromate_command`).

use std::fmt::Write as _;
use std::io::Read;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::words::{Dashes, Words};
use super::UsageError;
use chromate_command::tools::schema::{Arg, IntDefault, Kind, Slot};
use chromate_command::tools::{self, Defaults, ToolDecl, TOOLS};

/// The idle timeout of a session daemon unless `--idle-timeout` says otherwise.
pub(crate) const DEFAULT_IDLE: Duration = Duration::from_secs(30 * 60);

/// The options every session command takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Common {
    /// `--session NAME`, else `CHROMATE_SESSION`, else `default` (resolved by the caller).
    pub(crate) session: Option<String>,
    /// `--json`: the result object on stdout instead of the text.
    pub(crate) json: bool,
    /// `--idle-timeout SECONDS`: how long a daemon this command starts waits for the next
    /// command before it ends.
    pub(crate) idle: Option<Duration>,
}

/// One tool command, parsed.
#[derive(Debug, Clone)]
pub(crate) struct ToolCommand {
    pub(crate) decl: &'static ToolDecl,
    /// The arguments as given (no defaults filled: the daemon fills its own).
    pub(crate) arguments: Map<String, Value>,
    pub(crate) common: Common,
}

impl PartialEq for ToolCommand {
    fn eq(&self, other: &ToolCommand) -> bool {
        self.decl.name == other.decl.name
            && self.arguments == other.arguments
            && self.common == other.common
    }
}

/// What the words after a command name asked for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Parsed {
    Run(ToolCommand),
    Help(String),
}

/// The tool a command name names.
pub(crate) fn find(command: &str) -> Option<&'static ToolDecl> {
    TOOLS
        .iter()
        .copied()
        .find(|decl| decl.cli.command == command)
}

/// Reads standard input whole (for `-` in place of a file).
pub(crate) fn read_stdin() -> std::io::Result<String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    Ok(text)
}

/// Parses the words after `chromate <command>`. `read` fetches a file's text (`-` is
/// standard input), so tests can supply their own.
pub(crate) fn parse(
    decl: &'static ToolDecl,
    words: &[String],
    read: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<Parsed, UsageError> {
    let command = decl.cli.command;
    let usage_error = |message: String| UsageError(format!("{command}: {message}"));
    let mut common = Common {
        session: None,
        json: false,
        idle: None,
    };
    let mut arguments = Map::new();
    let mut positional: Vec<String> = Vec::new();
    let mut words = Words::new(words, Dashes::Long);
    while let Some(flag) = words.next_flag(&mut positional) {
        let mut value = |what: &str| words.value(&flag, what).map_err(usage_error);
        match flag.name {
            "-h" | "--help" => return Ok(Parsed::Help(help(decl))),
            "--json" if flag.is_bare() => common.json = true,
            "--session" => common.session = Some(session_name(&value("a name")?)?),
            "--idle-timeout" => {
                common.idle =
                    Some(idle_timeout(&value("a number of seconds")?).map_err(usage_error)?);
            }
            "--file" if decl.cli.file.is_some() => {
                let path = value("a path (- for standard input)")?;
                let text = read(&path)
                    .map_err(|err| usage_error(format!("--file {path}: cannot read: {err}")))?;
                if let Some(name) = decl.cli.file {
                    arguments.insert(name.to_owned(), json!(text));
                }
            }
            name => {
                let Some(arg) = find_arg(decl.args, name) else {
                    return Err(usage_error(format!("unknown option {name}")));
                };
                let raw = match arg.kind {
                    Kind::Bool if flag.is_bare() => "true".to_owned(),
                    _ => value("a value")?,
                };
                add(&mut arguments, arg, &raw, read).map_err(usage_error)?;
            }
        }
    }
    fill_positional(decl, &mut arguments, positional, read).map_err(usage_error)?;
    let defaults = Defaults {
        agent_timeout_ms: chromate_command::config::DEFAULT_AGENT_TIMEOUT_MS,
    };
    if let Err(error) = tools::validate(decl, Some(&Value::Object(arguments.clone())), &defaults) {
        return Err(usage_error(cli_message(decl, &error.message)));
    }
    Ok(Parsed::Run(ToolCommand {
        decl,
        arguments,
        common,
    }))
}

/// `--idle-timeout SECONDS` of a session: whole seconds, one second to a week.
pub(crate) fn idle_timeout(text: &str) -> Result<Duration, String> {
    text.parse::<u64>()
        .ok()
        .filter(|seconds| (1..=7 * 24 * 3600).contains(seconds))
        .map(Duration::from_secs)
        .ok_or_else(|| format!("--idle-timeout needs whole seconds from 1 to 604800, not {text:?}"))
}

/// The declared argument a `--flag` stands for: `--max-lines` is `max_lines`.
pub(crate) fn find_arg<'a>(args: &'a [Arg], flag: &str) -> Option<&'a Arg> {
    let name = flag.strip_prefix("--")?.replace('-', "_");
    args.iter().find(|arg| arg.name == name)
}

/// A session name: what the socket's file name is made of.
pub(crate) fn session_name(name: &str) -> Result<String, UsageError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(name.to_owned())
    } else {
        Err(UsageError(format!(
            "session name {name:?}: use 1 to 64 of A-Z a-z 0-9 - _"
        )))
    }
}

/// The validator speaks of `"max_lines"`; the command line of `--max-lines`.
fn cli_message(decl: &ToolDecl, message: &str) -> String {
    let mut message = message.to_owned();
    for arg in decl.args {
        let quoted = format!("\"{}\"", arg.name);
        if message.contains(&quoted) {
            message = message.replace(&quoted, &display_name(decl, arg));
        }
    }
    message
}

/// How the help names an argument: `URL` for a positional, `--max-lines` for a flag.
fn display_name(decl: &ToolDecl, arg: &Arg) -> String {
    if decl.cli.positional.iter().any(|slot| slot.arg == arg.name) {
        metavar(arg)
    } else {
        flag_name(arg)
    }
}

pub(crate) fn flag_name(arg: &Arg) -> String {
    format!("--{}", arg.name.replace('_', "-"))
}

pub(crate) fn metavar(arg: &Arg) -> String {
    let name = arg.name.to_uppercase();
    match arg.kind {
        Kind::StrList { .. } => format!("{name}..."),
        Kind::Steps { .. } => "FILE".to_owned(),
        Kind::Size { .. } => "WxH".to_owned(),
        _ => name,
    }
}

/// Adds one word for `arg`: typed by its kind; a list grows.
pub(crate) fn add(
    arguments: &mut Map<String, Value>,
    arg: &Arg,
    raw: &str,
    read: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<(), String> {
    let name = arg.name.to_owned();
    let value = match arg.kind {
        Kind::Str { .. } | Kind::Enum { .. } => json!(raw),
        Kind::Int { .. } => match raw.parse::<i64>() {
            Ok(number) => json!(number),
            Err(_) => {
                return Err(format!(
                    "{} needs a whole number, not {raw:?}",
                    flag_name(arg)
                ))
            }
        },
        Kind::Num { .. } => match raw.parse::<f64>() {
            Ok(number) if number.is_finite() => json!(number),
            _ => return Err(format!("{} needs a number, not {raw:?}", flag_name(arg))),
        },
        Kind::Bool => match raw {
            "true" => json!(true),
            "false" => json!(false),
            _ => return Err(format!("{} is true or false, not {raw:?}", flag_name(arg))),
        },
        Kind::StrList { .. } => {
            let list = arguments.entry(name).or_insert_with(|| json!([]));
            if let Value::Array(items) = list {
                items.push(json!(raw));
            }
            return Ok(());
        }
        Kind::Size { .. } => match chromate_command::tools::schema::parse_size(raw) {
            Some((width, height)) => json!({ "width": width, "height": height }),
            None => {
                return Err(format!(
                    "{} is WxH in CSS px, e.g. 1280x800, not {raw:?}",
                    flag_name(arg)
                ))
            }
        },
        Kind::Steps { .. } => {
            let text = read(raw).map_err(|err| format!("{raw}: cannot read: {err}"))?;
            match serde_json::from_str::<Value>(&text) {
                Ok(steps @ Value::Array(_)) => steps,
                // A whole argument object: `{"steps": [...], "continue_on_error": true}`.
                Ok(Value::Object(object)) => {
                    for (key, value) in object {
                        arguments.insert(key, value);
                    }
                    return Ok(());
                }
                Ok(_) => return Err(format!("{raw}: steps are a JSON array or object")),
                Err(err) => return Err(format!("{raw}: not JSON: {err}")),
            }
        }
        Kind::Object { .. } => match serde_json::from_str::<Value>(raw) {
            Ok(object @ Value::Object(_)) => object,
            Ok(_) => return Err(format!("{} is a JSON object, not {raw:?}", flag_name(arg))),
            Err(err) => return Err(format!("{}: not JSON: {err}", flag_name(arg))),
        },
    };
    arguments.insert(name, value);
    Ok(())
}

/// Gives each positional word to the next slot that applies.
fn fill_positional(
    decl: &'static ToolDecl,
    arguments: &mut Map<String, Value>,
    words: Vec<String>,
    read: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<(), String> {
    let mut words = words.into_iter().peekable();
    for slot in decl.cli.positional {
        if words.peek().is_none() {
            break;
        }
        if !applies(slot, arguments) || arguments.contains_key(slot.arg) {
            continue;
        }
        let Some(arg) = decl.args.iter().find(|arg| arg.name == slot.arg) else {
            continue;
        };
        let is_list = matches!(arg.kind, Kind::StrList { .. });
        for word in words.by_ref() {
            if decl.cli.file == Some(arg.name) && word == "-" {
                let text = read("-").map_err(|err| format!("standard input: {err}"))?;
                arguments.insert(arg.name.to_owned(), json!(text));
            } else {
                add(arguments, arg, &word, read)?;
            }
            if !is_list {
                break;
            }
        }
    }
    match words.next() {
        Some(word) => Err(format!("unexpected argument {word:?}")),
        None => Ok(()),
    }
}

fn applies(slot: &Slot, arguments: &Map<String, Value>) -> bool {
    match slot.when {
        None => true,
        Some((arg, value)) => arguments.get(arg).and_then(Value::as_str) == Some(value),
    }
}

/// `usage: chromate click SELECTOR [--double] [--timeout-ms N]`.
pub(crate) fn usage(decl: &ToolDecl) -> String {
    let mut line = format!("usage: chromate {}", decl.cli.command);
    for slot in decl.cli.positional {
        let Some(arg) = decl.args.iter().find(|arg| arg.name == slot.arg) else {
            continue;
        };
        let name = match slot.when {
            Some((_, value)) => format!("{}({value})", metavar(arg)),
            None => metavar(arg),
        };
        if arg.required && slot.when.is_none() {
            let _ = write!(line, " {name}");
        } else {
            let _ = write!(line, " [{name}]");
        }
    }
    for arg in decl.args.iter().filter(|arg| !is_positional(decl, arg)) {
        let _ = write!(line, " [{}]", flag_with_value(arg));
    }
    if decl.cli.file.is_some() {
        line.push_str(" [--file PATH]");
    }
    line.push_str(" [--session NAME] [--json]");
    line
}

pub(crate) fn is_positional(decl: &ToolDecl, arg: &Arg) -> bool {
    decl.cli.positional.iter().any(|slot| slot.arg == arg.name)
}

pub(crate) fn flag_with_value(arg: &Arg) -> String {
    match arg.kind {
        Kind::Bool => flag_name(arg),
        Kind::Int { .. } | Kind::Num { .. } => format!("{} N", flag_name(arg)),
        _ => format!("{} {}", flag_name(arg), arg.name.to_uppercase()),
    }
}

/// The whole `chromate <command> --help`.
pub(crate) fn help(decl: &ToolDecl) -> String {
    let mut text = format!("{}\n\n{}\n", usage(decl), decl.description);
    text.push_str("\narguments:\n");
    for arg in decl.args {
        let name = if is_positional(decl, arg) {
            metavar(arg)
        } else {
            flag_with_value(arg)
        };
        let _ = writeln!(text, "  {name:<24} {}", describe(arg));
    }
    if let Some(arg) = decl.cli.file {
        let _ = writeln!(
            text,
            "  {:<24} read {} from a file (- for standard input; so does {} given as -)",
            "--file PATH",
            arg.to_uppercase(),
            arg.to_uppercase()
        );
    }
    text.push_str(COMMON_HELP);
    text
}

/// The options of every session command, as the help lists them.
pub(crate) const COMMON_HELP: &str = "\
\ncommon options:
  --session NAME           the session (else CHROMATE_SESSION, else default)
  --json                   print the result object (with `observation`) as one JSON document
  --idle-timeout SECONDS   a session this command starts ends after this long unused (1800)
  -h, --help               this help
--session and --json may also come before the command: chromate --json status
";

/// One argument's help line: its description, constraints and default.
pub(crate) fn describe(arg: &Arg) -> String {
    let mut text = arg.description.to_owned();
    let mut notes: Vec<String> = Vec::new();
    if arg.required {
        notes.push("required".to_owned());
    }
    match arg.kind {
        Kind::Enum { values, default } => {
            notes.push(values.join("|"));
            if let Some(default) = default {
                notes.push(format!("default {default}"));
            }
        }
        Kind::Int { min, max, default } => {
            notes.push(format!("{min}..{max}"));
            match default {
                Some(IntDefault::Value(value)) => notes.push(format!("default {value}")),
                Some(IntDefault::AgentTimeout) => {
                    notes.push("default CHROMATE_AGENT_TIMEOUT, 5000".to_owned());
                }
                None => {}
            }
        }
        Kind::Num { min, max, default } => {
            notes.push(format!("{min}..{max}"));
            if let Some(default) = default {
                notes.push(format!("default {default}"));
            }
        }
        Kind::StrList { .. } => notes.push("repeat the flag for more".to_owned()),
        Kind::Size { min, max } => notes.push(format!("CSS px, each side {min}..{max}")),
        Kind::Steps { .. } => {
            notes.push("a JSON file of [{tool, arguments}] (- for standard input)".to_owned());
        }
        Kind::Object { max_bytes } => {
            notes.push(format!("a JSON object, at most {max_bytes} bytes"))
        }
        Kind::Str { .. } | Kind::Bool => {}
    }
    if !notes.is_empty() {
        let _ = write!(text, " ({})", notes.join("; "));
    }
    text
}

/// `docs/cli-reference.md`: every command's usage and arguments, from the declarations.
#[cfg(test)]
pub(crate) fn reference() -> String {
    let mut text = String::from(
        "# Command reference\n\n\
         <!-- @generated by `chromate-mcp` from `mcp/command/src/tools/`; do not edit. \
         Regenerate with `UPDATE_EXPECT=1 cargo test -p chromate-mcp docs_`. -->\n\n\
         Each command runs one tool of [tools.md](tools.md) on a persistent session; the \
         guide is [cli.md](cli.md). Every command also takes the common options at the end. \
         `capture` and `flows`, which need no session, come last.\n",
    );
    for decl in TOOLS
        .iter()
        .chain([&&chromate_command::tools::webmcp::WEBMCP])
    {
        let _ = write!(
            text,
            "\n## `chromate {}`\n\nThe tool `{}`. {}\n\n```text\n{}\n```\n\n",
            decl.cli.command,
            decl.name,
            decl.description,
            usage(decl)
        );
        if decl.args.is_empty() && decl.cli.file.is_none() {
            text.push_str("No arguments.\n");
            continue;
        }
        text.push_str("| argument | meaning |\n|---|---|\n");
        for arg in decl.args {
            let name = if is_positional(decl, arg) {
                metavar(arg)
            } else {
                flag_with_value(arg)
            };
            let _ = writeln!(text, "| `{name}` | {} |", describe(arg).replace('|', "\\|"));
        }
        if let Some(arg) = decl.cli.file {
            let _ = writeln!(
                text,
                "| `--file PATH` | read {} from a file (`-`: standard input) |",
                arg.to_uppercase()
            );
        }
    }
    let _ = write!(text, "\n## Common options\n\n```text{COMMON_HELP}```\n");
    let _ = write!(
        text,
        "\n## `chromate capture`\n\nOne capture in a headless browser of its own, no session \
         ([cli.md#captures-and-flows](cli.md#captures-and-flows)).\n\n```text\n{}```\n\
         \n## `chromate flows`\n\nFlows from a TOML file, for CI \
         ([cli.md#captures-and-flows](cli.md#captures-and-flows)).\n\n```text\n{}```\n",
        super::flows::capture_help(),
        super::flows::FLOWS_HELP
    );
    text
}

#[cfg(test)]
mod tests;
