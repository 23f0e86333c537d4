//! The flow file: `[[flow]]` tables of named flows, each a list of `[[flow.step]]` tables that
//! are either an ordinary tool call (`tool = "browser_fill"` and that tool's own arguments as
//! keys) or a capture (`capture = "after-fill"` and the capture options).
//!
//! Owns: finding the file (`--config`, else `CHROMATE_FLOWS`, else `./chromate.toml`), reading
//! it with spans (the `toml` crate's spanned tables), and checking all of it before anything
//! runs: each tool step against that tool's declaration with the tools' own validator and
//! cross-argument rule (no second language, as browser_batch), each capture step against the
//! capture declaration, relative URLs resolved against the flow's `base_url` (or the run's
//! `--base-url`, which replaces every flow's). Every error names the file, the line and the key.
//! Does not own running the steps (`mod.rs`).
//!
//! Environment variables: after the TOML is parsed (quoting stays TOML's) and before a step is
//! validated, `${VAR}` and `${VAR:-default}` are replaced in `base_url` and in every string of a
//! step's arguments, nested ones included ([`interpolate`]). Names (the flow's `name`, `tool`,
//! `capture`) are not: they name directories and baselines, which must not move with the
//! environment. `$${` is a literal `${`; a `$` not followed by `{` is itself.
//!
//! ```toml
//! [[flow]]
//! name = "login"                              # ^[A-Za-z0-9._-]+$
//! base_url = "http://127.0.0.1:8080"          # optional; relative URLs resolve against it
//! viewport = { width = 1280, height = 720 }   # optional, per flow
//! video = false                               # optional
//! vision_describe = false                     # optional: describe each PNG capture (docs/llm.md)
//! [[flow.step]]
//! tool = "browser_navigate"
//! url = "/login.html"
//! [[flow.step]]
//! capture = "after-fill"
//! selector = "#login-form"
//! mask = ["#clock"]
//! ```

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::baseline::Tolerance;
use super::capture::{name_is_valid, CaptureArgs, Format};
use chromate_command::config::Config;
use chromate_command::session::ToolSession;
use chromate_command::tools::{self, ToolCall, ToolDecl};

/// The file used when neither `--config` nor `CHROMATE_FLOWS` names one.
pub const DEFAULT_FILE: &str = "chromate.toml";

/// Most `retries` a flow or a step may ask for.
pub const MAX_RETRIES: u32 = 10;

/// Names a flow may not have: the files a run writes beside the flow directories.
const RESERVED_FLOW_NAMES: &[&str] = &["report.html", "junit.xml"];

/// A checked flow file.
#[derive(Debug)]
pub struct FlowFile {
    pub path: PathBuf,
    pub flows: Vec<Flow>,
}

impl FlowFile {
    /// The flow called `name`.
    pub fn flow(&self, name: &str) -> Option<&Flow> {
        self.flows.iter().find(|flow| flow.name == name)
    }

    /// The names, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.flows.iter().map(|flow| flow.name.as_str()).collect()
    }
}

/// One flow.
#[derive(Debug)]
pub struct Flow {
    pub name: String,
    pub base_url: Option<String>,
    pub viewport: Option<(u32, u32)>,
    pub video: bool,
    /// `vision_describe`: each PNG capture described by a vision model into its sidecar.
    pub vision_describe: bool,
    /// `retries`: how many times a failed step is tried again, for steps without their own.
    pub retries: u32,
    pub steps: Vec<Step>,
    /// The line of its `[[flow]]`.
    pub line: usize,
}

/// One step, checked.
#[derive(Debug)]
pub struct Step {
    pub line: usize,
    pub kind: StepKind,
    /// A capture step's `threshold` and `max_diff_pixels` against the baseline.
    pub tolerance: Tolerance,
    /// The step's own `retries`, replacing its flow's.
    pub retries: Option<u32>,
    /// A capture step's `wait_for`: the browser_wait call (selector visible, the capture's
    /// `timeout_ms`) that runs after its page loaded and before it is taken.
    pub wait_for: Option<(&'static ToolDecl, Map<String, Value>)>,
}

#[derive(Debug)]
pub enum StepKind {
    /// A tool call: its arguments as the validator returned them (defaults filled).
    Tool {
        decl: &'static ToolDecl,
        arguments: Map<String, Value>,
    },
    Capture(Box<CaptureArgs>),
}

impl Step {
    /// How reports name the step: `browser_fill`, `capture after-fill`.
    pub fn label(&self) -> String {
        match &self.kind {
            StepKind::Tool { decl, .. } => decl.name.to_owned(),
            StepKind::Capture(args) => format!("capture {}", args.name),
        }
    }
}

/// What is wrong with a flow file, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct FileError {
    pub path: PathBuf,
    /// 1-based; 0 when the file could not be read at all.
    pub line: usize,
    /// The key at fault, if one is.
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
        }
    }
}

/// `--config FILE`, else `CHROMATE_FLOWS`, else `./chromate.toml`.
pub fn locate(config: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let chosen = config
        .map(str::to_owned)
        .or_else(|| env("CHROMATE_FLOWS").filter(|value| !value.is_empty()))
        .unwrap_or_else(|| DEFAULT_FILE.to_owned());
    PathBuf::from(chosen)
}

/// What a flow file is read against besides its text: where `${VAR}` looks variables up, and a
/// `base_url` that replaces every flow's (`chromate flows run --base-url URL`).
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub base_url: Option<&'a str>,
}

impl Inputs<'_> {
    /// This process's environment, and no `base_url` override.
    pub fn process() -> Inputs<'static> {
        Inputs {
            env: &process_env,
            base_url: None,
        }
    }
}

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Reads and checks the file at `path`, against this process's environment.
pub fn load(path: &Path, config: &Config) -> Result<FlowFile, FileError> {
    load_with(path, config, Inputs::process())
}

/// Reads and checks the file at `path` against `inputs`.
pub fn load_with(path: &Path, config: &Config, inputs: Inputs<'_>) -> Result<FlowFile, FileError> {
    let text = std::fs::read_to_string(path).map_err(|err| FileError {
        path: path.to_path_buf(),
        line: 0,
        key: None,
        message: if err.kind() == std::io::ErrorKind::NotFound {
            "no such flow file (give --config FILE or set CHROMATE_FLOWS)".to_owned()
        } else {
            format!("cannot read the flow file: {err}")
        },
    })?;
    parse_with(path, &text, config, inputs)
}

/// Checks the text of a flow file, against this process's environment.
pub fn parse(path: &Path, text: &str, config: &Config) -> Result<FlowFile, FileError> {
    parse_with(path, text, config, Inputs::process())
}

/// Checks the text of a flow file against `inputs`.
pub fn parse_with(
    path: &Path,
    text: &str,
    config: &Config,
    inputs: Inputs<'_>,
) -> Result<FlowFile, FileError> {
    if let Some(url) = inputs.base_url {
        if !tools::url_is_navigable(url) {
            return Err(FileError {
                path: path.to_path_buf(),
                line: 0,
                key: Some("base_url".to_owned()),
                message: format!(
                    "the base URL {url:?} given for every flow is not an absolute http, https or file URL"
                ),
            });
        }
    }
    let reader = Reader {
        path,
        text,
        config,
        inputs,
        checker: ToolSession::new(config.clone()),
    };
    reader.file()
}

/// `text` with `${VAR}` replaced by the variable's value and `${VAR:-default}` by its value, or
/// `default` when it is unset or empty; `$${` is a literal `${`. A replacement is not scanned
/// again. An unset variable without a default, or a `${` that is no reference, is an error (the
/// message, for the caller to place).
pub fn interpolate(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
            continue;
        }
        let Some(after) = tail.strip_prefix("${") else {
            out.push('$');
            rest = &tail[1..];
            continue;
        };
        let Some(end) = after.find('}') else {
            return Err("\"${\" without its closing \"}\" (write $${ for a literal ${)".to_owned());
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "\"${{{inner}}}\" is not ${{NAME}} or ${{NAME:-default}} (NAME is letters, digits \
                 and _; write $${{ for a literal ${{)"
            ));
        }
        match (env(name), default) {
            (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "environment variable {name} is not set (set it, or give a default: \
                     ${{{name}:-VALUE}})"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

struct Reader<'a> {
    path: &'a Path,
    text: &'a str,
    config: &'a Config,
    inputs: Inputs<'a>,
    /// The session the tools' cross-argument rules look at (none of them needs a browser).
    checker: ToolSession,
}

type Table<'i> = DeTable<'i>;

impl Reader<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    fn error(&self, span: &Range<usize>, key: Option<&str>, message: String) -> FileError {
        FileError {
            path: self.path.to_path_buf(),
            line: self.line(span),
            key: key.map(str::to_owned),
            message,
        }
    }

    fn file(&self) -> Result<FlowFile, FileError> {
        let root = DeTable::parse(self.text).map_err(|err| {
            let span = err.span().unwrap_or(0..0);
            self.error(
                &span,
                None,
                format!("not valid TOML: {}", err.message().trim()),
            )
        })?;
        let mut flows = Vec::new();
        let mut found = false;
        for (key, value) in root.get_ref().iter() {
            if key.get_ref() != "flow" {
                return Err(self.error(
                    &key.span(),
                    Some(key.get_ref()),
                    format!(
                        "unknown key {:?}: a flow file holds [[flow]] tables only",
                        key.get_ref()
                    ),
                ));
            }
            found = true;
            let Some(items) = value.get_ref().as_array() else {
                return Err(self.error(
                    &value.span(),
                    Some("flow"),
                    "\"flow\" must be [[flow]] tables".to_owned(),
                ));
            };
            for item in items.iter() {
                let Some(table) = item.get_ref().as_table() else {
                    return Err(self.error(
                        &item.span(),
                        Some("flow"),
                        "each \"flow\" must be a [[flow]] table".to_owned(),
                    ));
                };
                let flow = self.flow(table, &item.span())?;
                if flows.iter().any(|known: &Flow| known.name == flow.name) {
                    return Err(self.error(
                        &item.span(),
                        Some("name"),
                        format!("a second flow named {:?}", flow.name),
                    ));
                }
                flows.push(flow);
            }
        }
        if !found || flows.is_empty() {
            return Err(self.error(&(0..0), None, "no [[flow]] in the file".to_owned()));
        }
        Ok(FlowFile {
            path: self.path.to_path_buf(),
            flows,
        })
    }

    fn flow(&self, table: &Table<'_>, span: &Range<usize>) -> Result<Flow, FileError> {
        const KEYS: &[&str] = &[
            "name",
            "base_url",
            "viewport",
            "video",
            "vision_describe",
            "retries",
            "step",
        ];
        for (key, _) in table.iter() {
            if !KEYS.contains(&key.get_ref().as_ref()) {
                return Err(self.error(
                    &key.span(),
                    Some(key.get_ref()),
                    format!(
                        "unknown key {:?} in [[flow]] (allowed: {})",
                        key.get_ref(),
                        KEYS.join(", ")
                    ),
                ));
            }
        }
        let name = match table.get("name") {
            None => {
                return Err(self.error(span, Some("name"), "a [[flow]] needs a name".to_owned()))
            }
            Some(value) => match value.get_ref().as_str() {
                Some(name) if name_is_valid(name) && name.len() <= 128 => name.to_owned(),
                _ => {
                    return Err(self.error(
                        &value.span(),
                        Some("name"),
                        "\"name\" must be a string matching ^[A-Za-z0-9._-]+$ (not . or .., at most 128 characters)"
                            .to_owned(),
                    ))
                }
            },
        };
        if RESERVED_FLOW_NAMES.contains(&name.as_str()) {
            return Err(self.error(
                span,
                Some("name"),
                format!(
                    "{name:?} is the name of a file every run writes; call the flow something else"
                ),
            ));
        }
        let context = format!("flow {name:?}");
        // --base-url replaces the file's, which is then not read at all (an unset variable
        // in it is no error).
        let base_url = match (self.inputs.base_url, table.get("base_url")) {
            (Some(url), _) => Some(url.to_owned()),
            (None, None) => None,
            (None, Some(value)) => {
                let url = match value.get_ref().as_str() {
                    Some(url) => interpolate(url, self.inputs.env).map_err(|why| {
                        self.error(
                            &value.span(),
                            Some("base_url"),
                            format!("{context}: \"base_url\": {why}"),
                        )
                    })?,
                    None => String::new(),
                };
                if !tools::url_is_navigable(&url) {
                    return Err(self.error(
                        &value.span(),
                        Some("base_url"),
                        format!(
                            "{context}: \"base_url\" must be an absolute http, https or file URL"
                        ),
                    ));
                }
                Some(url)
            }
        };
        let viewport = match table.get("viewport") {
            None => None,
            Some(value) => Some(self.viewport(value, &context)?),
        };
        let retries = self.retries(table, &context)?.unwrap_or(0);
        let video = match table.get("video") {
            None => false,
            Some(value) => value.get_ref().as_bool().ok_or_else(|| {
                self.error(
                    &value.span(),
                    Some("video"),
                    format!("{context}: \"video\" must be true or false"),
                )
            })?,
        };
        let vision_describe = match table.get("vision_describe") {
            None => false,
            Some(value) => value.get_ref().as_bool().ok_or_else(|| {
                self.error(
                    &value.span(),
                    Some("vision_describe"),
                    format!("{context}: \"vision_describe\" must be true or false"),
                )
            })?,
        };
        let items = match table.get("step") {
            None => {
                return Err(self.error(
                    span,
                    Some("step"),
                    format!("{context} has no [[flow.step]]"),
                ))
            }
            Some(value) => value.get_ref().as_array().ok_or_else(|| {
                self.error(
                    &value.span(),
                    Some("step"),
                    format!("{context}: \"step\" must be [[flow.step]] tables"),
                )
            })?,
        };
        let mut steps = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let step_context = format!("{context} step {}", index + 1);
            let Some(table) = item.get_ref().as_table() else {
                return Err(self.error(
                    &item.span(),
                    Some("step"),
                    format!("{step_context} must be a [[flow.step]] table"),
                ));
            };
            steps.push(self.step(table, &item.span(), &step_context, base_url.as_deref())?);
        }
        let mut captures: Vec<&str> = Vec::new();
        for step in &steps {
            if let StepKind::Capture(args) = &step.kind {
                if captures.contains(&args.name.as_str()) {
                    return Err(FileError {
                        path: self.path.to_path_buf(),
                        line: step.line,
                        key: Some("capture".to_owned()),
                        message: format!("{context}: a second capture named {:?}", args.name),
                    });
                }
                captures.push(&args.name);
            }
        }
        Ok(Flow {
            name,
            base_url,
            viewport,
            video,
            vision_describe,
            retries,
            steps,
            line: self.line(span),
        })
    }

    fn viewport(
        &self,
        value: &Spanned<DeValue<'_>>,
        context: &str,
    ) -> Result<(u32, u32), FileError> {
        let bad = || {
            self.error(
                &value.span(),
                Some("viewport"),
                format!(
                    "{context}: \"viewport\" must be {{ width = W, height = H }} in CSS px, 1 to 16384"
                ),
            )
        };
        let table = value.get_ref().as_table().ok_or_else(bad)?;
        for (key, _) in table.iter() {
            if key.get_ref() != "width" && key.get_ref() != "height" {
                return Err(self.error(
                    &key.span(),
                    Some(key.get_ref()),
                    format!(
                        "{context}: unknown key {:?} in \"viewport\" (allowed: width, height)",
                        key.get_ref()
                    ),
                ));
            }
        }
        let side = |key: &str| -> Option<u32> {
            let number = table.get(key)?.get_ref().as_integer()?;
            i64::from_str_radix(number.as_str(), number.radix())
                .ok()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=16_384).contains(n))
        };
        match (side("width"), side("height")) {
            (Some(width), Some(height)) => Ok((width, height)),
            _ => Err(bad()),
        }
    }

    fn step(
        &self,
        table: &Table<'_>,
        span: &Range<usize>,
        context: &str,
        base_url: Option<&str>,
    ) -> Result<Step, FileError> {
        let line = self.line(span);
        match (table.get("tool"), table.get("capture")) {
            (Some(_), Some(capture)) => Err(self.error(
                &capture.span(),
                Some("capture"),
                format!("{context}: a step is either a tool or a capture, not both"),
            )),
            (None, None) => Err(self.error(
                span,
                None,
                format!("{context}: a step needs tool = \"<tool name>\" or capture = \"<name>\""),
            )),
            (Some(tool), None) => {
                let name = tool.get_ref().as_str().unwrap_or_default();
                let decl = tools::find(name).ok_or_else(|| {
                    self.error(
                        &tool.span(),
                        Some("tool"),
                        format!(
                            "{context}: unknown tool {name:?} (tools: {})",
                            tools::TOOLS
                                .iter()
                                .map(|decl| decl.name)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })?;
                let context = format!("{context} ({name})");
                let retries = self.retries(table, &context)?;
                let mut arguments = self.arguments(table, &["tool", "retries"], &context)?;
                resolve_url(&mut arguments, base_url);
                let defaults = tools::Defaults {
                    agent_timeout_ms: self.config.agent_timeout_ms,
                };
                let validated =
                    tools::validate(decl, Some(&Value::Object(arguments.clone())), &defaults)
                        .map_err(|error| {
                            self.argument_error(
                                table,
                                span,
                                &context,
                                &error.argument,
                                &error.message,
                            )
                        })?;
                let call = ToolCall::from_validated(decl, validated.clone()).map_err(|error| {
                    self.error(span, None, format!("{context}: {}", error.message))
                })?;
                call.check(&self.checker).map_err(|error| {
                    let argument = error
                        .detail
                        .as_ref()
                        .and_then(|detail| detail.get("argument"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    self.argument_error(table, span, &context, &argument, &error.message)
                })?;
                Ok(Step {
                    line,
                    kind: StepKind::Tool {
                        decl,
                        arguments: validated,
                    },
                    tolerance: Tolerance::default(),
                    retries,
                    wait_for: None,
                })
            }
            (None, Some(capture)) => {
                let Some(name) = capture.get_ref().as_str() else {
                    return Err(self.error(
                        &capture.span(),
                        Some("capture"),
                        format!("{context}: \"capture\" is the capture's name, a string"),
                    ));
                };
                let context = format!("{context} (capture {name:?})");
                for forbidden in ["name", "output_dir"] {
                    if let Some((key, _)) = table.get_key_value(forbidden) {
                        let why = if forbidden == "name" {
                            "the capture's name is the value of \"capture\""
                        } else {
                            "a flow's captures go to its directory in the run's --output-dir"
                        };
                        return Err(self.error(
                            &key.span(),
                            Some(forbidden),
                            format!("{context}: {forbidden:?} is not a capture step key: {why}"),
                        ));
                    }
                }
                let tolerance = self.tolerance(table, &context)?;
                let retries = self.retries(table, &context)?;
                let mut arguments = self.arguments(
                    table,
                    &[
                        "capture",
                        "viewport",
                        "threshold",
                        "max_diff_pixels",
                        "wait_for",
                        "retries",
                    ],
                    &context,
                )?;
                arguments.insert("name".to_owned(), json!(name));
                if let Some(value) = table.get("viewport") {
                    let (width, height) = self.viewport(value, &context)?;
                    arguments.insert("viewport_width".to_owned(), json!(width));
                    arguments.insert("viewport_height".to_owned(), json!(height));
                }
                resolve_url(&mut arguments, base_url);
                let args = super::capture_args(&arguments).map_err(|error| {
                    let argument = error
                        .detail
                        .as_ref()
                        .and_then(|detail| detail.get("argument"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    let argument = if argument == "name" {
                        "capture".to_owned()
                    } else {
                        argument
                    };
                    let message = error
                        .message
                        .replace("argument \"name\"", "\"capture\"")
                        .replace("\"name\"", "\"capture\"");
                    self.argument_error(table, span, &context, &argument, &message)
                })?;
                if args.format == Format::Pdf && tolerance != Tolerance::default() {
                    let key = if tolerance.threshold.is_some() {
                        "threshold"
                    } else {
                        "max_diff_pixels"
                    };
                    let span = table
                        .get_key_value(key)
                        .map_or_else(|| span.clone(), |(key, _)| key.span());
                    return Err(self.error(
                        &span,
                        Some(key),
                        format!(
                            "{context}: {key:?} applies to PNG captures (compared with a baseline); this one is a PDF"
                        ),
                    ));
                }
                let wait_for = match table.get("wait_for") {
                    Some(value) => Some(self.wait_for(value, &args, &context)?),
                    None => None,
                };
                Ok(Step {
                    line,
                    kind: StepKind::Capture(Box::new(args)),
                    tolerance,
                    retries,
                    wait_for,
                })
            }
        }
    }

    /// `retries = N` of a flow or a step: a whole number from 0 to [`MAX_RETRIES`].
    fn retries(&self, table: &Table<'_>, context: &str) -> Result<Option<u32>, FileError> {
        let Some(value) = table.get("retries") else {
            return Ok(None);
        };
        let number = match value.get_ref() {
            DeValue::Integer(number) => i64::from_str_radix(number.as_str(), number.radix())
                .ok()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n <= MAX_RETRIES),
            _ => None,
        };
        number.map(Some).ok_or_else(|| {
            self.error(
                &value.span(),
                Some("retries"),
                format!(
                    "{context}: \"retries\" must be a whole number from 0 to {MAX_RETRIES} (how \
                     many times a failed step is tried again)"
                ),
            )
        })
    }

    /// A capture step's `wait_for = "SELECTOR"`, checked as the browser_wait call it becomes:
    /// the selector visible, within the capture's `timeout_ms`.
    fn wait_for(
        &self,
        value: &Spanned<DeValue<'_>>,
        args: &CaptureArgs,
        context: &str,
    ) -> Result<(&'static ToolDecl, Map<String, Value>), FileError> {
        let bad = |why: String| {
            self.error(
                &value.span(),
                Some("wait_for"),
                format!("{context}: \"wait_for\": {why}"),
            )
        };
        let selector = match self.json(value) {
            Ok(Value::String(selector)) if !selector.is_empty() => selector,
            Ok(_) => {
                return Err(bad(
                    "must be a selector, a non-empty string (the element to wait for)".to_owned(),
                ))
            }
            Err((_, why)) => return Err(bad(why)),
        };
        if let Err(err) = chromate::Selector::parse(&selector) {
            return Err(bad(format!("not a selector: {err}")));
        }
        let decl = tools::find("browser_wait")
            .ok_or_else(|| bad("this build has no browser_wait tool".to_owned()))?;
        let arguments = json!({
            "selector": selector,
            "state": "visible",
            "timeout_ms": args.timeout_ms,
        });
        let defaults = tools::Defaults {
            agent_timeout_ms: self.config.agent_timeout_ms,
        };
        let validated = tools::validate(decl, Some(&arguments), &defaults)
            .map_err(|error| bad(strip_tool_prefix(&error.message).to_owned()))?;
        let call = ToolCall::from_validated(decl, validated.clone())
            .map_err(|error| bad(strip_tool_prefix(&error.message).to_owned()))?;
        call.check(&self.checker)
            .map_err(|error| bad(strip_tool_prefix(&error.message).to_owned()))?;
        Ok((decl, validated))
    }

    /// A capture step's `threshold` (a number from 0 to 1) and `max_diff_pixels` (an integer,
    /// 0 or more).
    fn tolerance(&self, table: &Table<'_>, context: &str) -> Result<Tolerance, FileError> {
        let mut tolerance = Tolerance::default();
        if let Some(value) = table.get("threshold") {
            let number = match value.get_ref() {
                DeValue::Float(number) => number.as_str().replace('_', "").parse::<f64>().ok(),
                DeValue::Integer(number) => i64::from_str_radix(number.as_str(), number.radix())
                    .ok()
                    .map(|n| n as f64),
                _ => None,
            };
            match number {
                Some(number) if (0.0..=1.0).contains(&number) => tolerance.threshold = Some(number),
                _ => {
                    return Err(self.error(
                        &value.span(),
                        Some("threshold"),
                        format!(
                            "{context}: \"threshold\" must be a number from 0 to 1 (the colour \
                             distance at which a pixel counts as different; default 0.1)"
                        ),
                    ))
                }
            }
        }
        if let Some(value) = table.get("max_diff_pixels") {
            let number = match value.get_ref() {
                DeValue::Integer(number) => i64::from_str_radix(number.as_str(), number.radix())
                    .ok()
                    .and_then(|n| u64::try_from(n).ok()),
                _ => None,
            };
            match number {
                Some(number) => tolerance.max_diff_pixels = Some(number),
                None => {
                    return Err(self.error(
                        &value.span(),
                        Some("max_diff_pixels"),
                        format!(
                            "{context}: \"max_diff_pixels\" must be a whole number of pixels, 0 \
                             or more"
                        ),
                    ))
                }
            }
        }
        Ok(tolerance)
    }

    /// The step's keys (but `skip`) as a JSON argument map.
    fn arguments(
        &self,
        table: &Table<'_>,
        skip: &[&str],
        context: &str,
    ) -> Result<Map<String, Value>, FileError> {
        let mut arguments = Map::new();
        for (key, value) in table.iter() {
            let name = key.get_ref().as_ref();
            if skip.contains(&name) {
                continue;
            }
            let json = self.json(value).map_err(|(span, why)| {
                self.error(&span, Some(name), format!("{context}: {name:?}: {why}"))
            })?;
            arguments.insert(name.to_owned(), json);
        }
        Ok(arguments)
    }

    /// A TOML value as JSON, its strings interpolated ([`interpolate`]); a datetime, a
    /// non-finite float or a string that does not interpolate is refused with its span.
    fn json(&self, value: &Spanned<DeValue<'_>>) -> Result<Value, (Range<usize>, String)> {
        Ok(match value.get_ref() {
            DeValue::String(text) => {
                json!(interpolate(text, self.inputs.env).map_err(|why| (value.span(), why))?)
            }
            DeValue::Boolean(flag) => json!(flag),
            DeValue::Integer(number) => {
                match i64::from_str_radix(number.as_str(), number.radix()) {
                    Ok(number) => json!(number),
                    Err(_) => return Err((value.span(), "the integer is out of range".to_owned())),
                }
            }
            DeValue::Float(number) => match number.as_str().replace('_', "").parse::<f64>() {
                Ok(number) if number.is_finite() => json!(number),
                _ => return Err((value.span(), "a float must be finite".to_owned())),
            },
            DeValue::Datetime(_) => {
                return Err((
                    value.span(),
                    "a date or time is no argument value".to_owned(),
                ))
            }
            DeValue::Array(items) => {
                let mut list = Vec::new();
                for item in items.iter() {
                    list.push(self.json(item)?);
                }
                Value::Array(list)
            }
            DeValue::Table(table) => {
                let mut map = Map::new();
                for (key, item) in table.iter() {
                    map.insert(key.get_ref().to_string(), self.json(item)?);
                }
                Value::Object(map)
            }
        })
    }

    /// A validator's complaint about `argument` (a path like `steps[2].arguments.value`), at
    /// the line of its top-level key, or the step's line when the key is missing.
    fn argument_error(
        &self,
        table: &Table<'_>,
        step_span: &Range<usize>,
        context: &str,
        argument: &str,
        message: &str,
    ) -> FileError {
        let key = argument
            .split(['.', '['])
            .next()
            .filter(|key| !key.is_empty());
        let span = key
            .and_then(|key| {
                let key = match key {
                    "viewport_width" | "viewport_height" if table.get("viewport").is_some() => {
                        "viewport"
                    }
                    other => other,
                };
                table.get_key_value(key).map(|(key, _)| key.span())
            })
            .unwrap_or_else(|| step_span.clone());
        let message = message
            .split_once(": ")
            .filter(|(prefix, _)| {
                tools::TOOLS
                    .iter()
                    .any(|decl| decl.name == *prefix || decl.verb == *prefix)
                    || *prefix == "capture_url"
                    || *prefix == "capture"
            })
            .map_or(message, |(_, rest)| rest);
        self.error(&span, key, format!("{context}: {message}"))
    }
}

/// `message` without a leading `browser_wait: `.
fn strip_tool_prefix(message: &str) -> &str {
    message
        .split_once(": ")
        .filter(|(prefix, _)| {
            tools::TOOLS
                .iter()
                .any(|decl| decl.name == *prefix || decl.verb == *prefix)
        })
        .map_or(message, |(_, rest)| rest)
}

/// A relative `url` argument resolved against `base_url` (`/login.html` against
/// `http://127.0.0.1:8080/app/` is `http://127.0.0.1:8080/login.html`; `next.html`, its
/// sibling).
fn resolve_url(arguments: &mut Map<String, Value>, base_url: Option<&str>) {
    let (Some(base), Some(Value::String(url))) = (base_url, arguments.get("url")) else {
        return;
    };
    if let Some(resolved) = join_url(base, url) {
        arguments.insert("url".to_owned(), json!(resolved));
    }
}

/// `relative` against `base`, if `relative` has no scheme of its own.
pub fn join_url(base: &str, relative: &str) -> Option<String> {
    let has_scheme = relative.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if has_scheme {
        return None;
    }
    let (scheme, rest) = base.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let origin = format!("{scheme}://{}", &rest[..authority_end]);
    let path = &rest[authority_end..];
    if let Some(rest) = relative.strip_prefix("//") {
        return Some(format!("{scheme}://{rest}"));
    }
    if relative.starts_with('/') {
        return Some(format!("{origin}{relative}"));
    }
    let path = path.split(['?', '#']).next().unwrap_or("");
    if relative.starts_with('?') || relative.starts_with('#') || relative.is_empty() {
        let path = if path.is_empty() { "/" } else { path };
        return Some(format!("{origin}{path}{relative}"));
    }
    let directory = match path.rfind('/') {
        Some(at) => &path[..=at],
        None => "/",
    };
    Some(format!("{origin}{directory}{relative}"))
}

#[cfg(test)]
mod tests;
