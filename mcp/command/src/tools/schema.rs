//! The declaration model of a tool's arguments, and the two things made from
//! one declaration: the `inputSchema` JSON and the runtime validator (docs/mcp.md#errors).
//!
//! Owns: [`ToolDecl`]/[`Arg`]/[`Kind`], schema generation, validation in the
//! contract's order with its exact messages, default filling, and the nested
//! validation of browser_batch steps. Does not own the list of tools
//! (`tools/mod.rs`), cross-argument rules (each tool's `check`), or the
//! JSON-RPC error envelope (`jsonrpc.rs` turns [`ArgError`] into -32602).

use std::future::Future;
use std::pin::Pin;

use serde_json::{json, Map, Value};

use crate::call::{Cancel, Progress};
use crate::config::Config;
use crate::reply::Reply;

/// Declares the Rust enum of an enum argument and, from the same list, the values its
/// schema advertises (`VALUES`, passed to [`Arg::one_of`]): the schema's `enum` and the
/// variants cannot drift apart. The enum decodes and serialises as those strings. Exported:
/// the flows' capture declares its enum arguments with it too.
#[macro_export]
macro_rules! arg_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, ::serde::Deserialize, ::serde::Serialize)]
        $vis enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// The schema's `enum`, in declaration order.
            $vis const VALUES: &'static [&'static str] = &[$($text),*];

            /// The argument's spelling (`dblclick`).
            #[allow(dead_code, reason = "not every enum's spelling is read back")]
            $vis fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }
    };
}
pub use crate::arg_enum;

/// Declares a tool's arguments once: each field of its typed arguments struct beside the
/// [`Arg`] the schema and the validator are made from, in schema order. The struct decodes a
/// validated map (unknown fields refused); `ARGS` goes into the tool's [`ToolDecl`]. A unit
/// test checks each field is named as its argument.
macro_rules! tool_args {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $($(#[$fmeta:meta])* $field:ident : $ty:ty = $arg:expr,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        $vis struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $name {
            /// The declared arguments, in schema order.
            pub const ARGS: &'static [Arg] = &[$($arg),*];

            /// The field names, in the same order.
            #[cfg(test)]
            pub const FIELDS: &'static [&'static str] = &[$(stringify!($field)),*];
        }
    };
}
pub(crate) use tool_args;

/// Default `maxLength` of a string argument (docs/tools.md).
pub const DEFAULT_MAX_LEN: u32 = 8192;
/// Largest integer a declaration may allow (2^53 - 1: exact in a double).
pub const MAX_SAFE_INT: i64 = 9_007_199_254_740_991;

/// The hint combinations of docs/tools.md (readOnly/destructive/idempotent/openWorld).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hints {
    /// Acts on the page: F/F/F/T.
    A,
    /// Can discard state: F/T/F/T.
    D,
    /// Reads, repeatable: T/F/T/T.
    R,
    /// Reads, not repeatable (a new file each time): T/F/F/T.
    S,
    /// Local read: T/F/T/F.
    L,
    /// Local, not read-only: F/F/F/F.
    T,
}

impl Hints {
    /// `[readOnly, destructive, idempotent, openWorld]`.
    pub fn flags(self) -> [bool; 4] {
        match self {
            Hints::A => [false, false, false, true],
            Hints::D => [false, true, false, true],
            Hints::R => [true, false, true, true],
            Hints::S => [true, false, false, true],
            Hints::L => [true, false, true, false],
            Hints::T => [false, false, false, false],
        }
    }
}

/// The capability a tool belongs to: the 28 are always offered, the others when a front end
/// asks for them (`chromate mcp --caps audit,flows`; the command line offers every one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// The 28 tools of docs/tools.md.
    Core,
    /// `--caps audit`: qa_audit_url, qa_get_runtime_errors and qa_execute_user_flow.
    Audit,
    /// `--caps flows`: captures and flows, each in a browser of its own.
    Flows,
    /// `--caps webmcp`: browser_webmcp (docs/mcp.md#webmcp).
    WebMcp,
    /// `--caps vision`: describe_screenshot, a vision model's description (docs/llm.md).
    Vision,
}

/// A call of a tool that runs in browsers of its own, from the configuration alone.
pub type DetachedRun = for<'a> fn(
    &'a Config,
    Map<String, Value>,
    &'a Cancel,
    &'a Progress,
) -> Pin<Box<dyn Future<Output = Reply> + Send + 'a>>;

/// Where a tool's handler runs.
#[derive(Clone, Copy)]
pub enum Runs {
    /// On the caller's session, typed and checked through the registry's `ToolCall`; a tool
    /// that `observes` gets the page's observation added after it.
    Session,
    /// On the caller's session, running other tools as its steps (browser_batch): it makes
    /// its own observation, and a trace records its steps rather than it.
    Steps,
    /// In browsers of its own, from the configuration alone (the flows tools): never on the
    /// caller's session, nor forwarded to the session daemon a server is attached to.
    Detached(DetachedRun),
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Runs::Session => "Session",
            Runs::Steps => "Steps",
            Runs::Detached(_) => "Detached",
        })
    }
}

/// One tool, declared once.
#[derive(Debug)]
pub struct ToolDecl {
    pub name: &'static str,
    pub title: &'static str,
    /// The verb error messages start with (`click`, `page`, `eval`).
    pub verb: &'static str,
    /// One line; the first sentence is the purpose.
    pub description: &'static str,
    pub hints: Hints,
    /// Returns a post-action observation (docs/mcp.md#observations) on success.
    pub observes: bool,
    /// The command line's name and positional arguments for this tool.
    pub cli: Cli,
    pub args: &'static [Arg],
    /// The capability that offers it.
    pub capability: Capability,
    /// Where its handler runs.
    pub runs: Runs,
    /// The name its text is spilled under past the limit (docs/mcp.md#spilling); `None`:
    /// `<name>.json`, its result object.
    pub spill: Option<&'static str>,
    /// Whether a successful answer is one a script treats as a failed assertion, though it is
    /// a success over MCP (`exists` that found nothing, `a11y check:true` that did not pass).
    pub negative: Option<fn(&Value) -> bool>,
}

impl ToolDecl {
    /// The name its text is spilled under past the limit.
    pub fn spill_label(&self) -> String {
        match self.spill {
            Some(label) => label.to_owned(),
            None => format!("{}.json", self.name),
        }
    }
}

/// How `chromate <command>` spells a tool: its main arguments by position, the rest as
/// `--flags` named after the arguments (`max_lines` is `--max-lines`). Parsing, each
/// command's `--help` and `docs/cli.md` all read this, so no flag exists on one side only.
#[derive(Debug)]
pub struct Cli {
    pub command: &'static str,
    /// Arguments taken by position, in order. A list argument takes every remaining word.
    pub positional: &'static [Slot],
    /// The argument `--file PATH` fills from a file (`-`: standard input): eval's `js`. An
    /// argument of kind [`Kind::Steps`] always reads its JSON from a file or standard input.
    pub file: Option<&'static str>,
    /// The command starts the browser together with the session daemon that runs it: the call
    /// needs one at once (a navigation). Commands that may never need one (`status`, `page
    /// list`, `mock add`, `logs`) leave the launch to the call.
    pub launches: bool,
}

impl Cli {
    pub const fn new(command: &'static str, positional: &'static [Slot]) -> Cli {
        Cli {
            command,
            positional,
            file: None,
            launches: false,
        }
    }

    pub const fn launching(mut self) -> Cli {
        self.launches = true;
        self
    }

    pub const fn file(mut self, argument: &'static str) -> Cli {
        self.file = Some(argument);
        self
    }
}

/// One positional place: the argument it fills, only while another argument has a value
/// (`page open URL` fills `url`, `page select 2` fills `target`).
#[derive(Debug)]
pub struct Slot {
    pub arg: &'static str,
    pub when: Option<(&'static str, &'static str)>,
}

impl Slot {
    pub const fn arg(arg: &'static str) -> Slot {
        Slot { arg, when: None }
    }

    pub const fn when(mut self, arg: &'static str, value: &'static str) -> Slot {
        self.when = Some((arg, value));
        self
    }
}

/// A string pattern: its regex source (advertised) and the matcher that
/// enforces it (hand-written, so the crate needs no regex engine).
#[derive(Debug)]
pub struct Pattern {
    pub source: &'static str,
    pub matches: fn(&str) -> bool,
}

/// `1280x800` → `(1280, 800)`: how the command line spells a [`Kind::Size`] (`X` too). Only
/// the shape is checked here; the validator checks the range.
pub fn parse_size(text: &str) -> Option<(u32, u32)> {
    let (width, height) = text.trim().split_once(['x', 'X'])?;
    let side = |text: &str| {
        (!text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()))
            .then(|| text.parse::<u32>().ok())
            .flatten()
    };
    Some((side(width)?, side(height)?))
}

/// How an integer default is found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IntDefault {
    Value(i64),
    /// `CHROMATE_AGENT_TIMEOUT` (5000 unless set).
    AgentTimeout,
}

/// The type and constraints of one argument.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Str {
        min_len: u32,
        max_len: u32,
        pattern: Option<&'static Pattern>,
    },
    Enum {
        values: &'static [&'static str],
        default: Option<&'static str>,
    },
    Int {
        min: i64,
        max: i64,
        default: Option<IntDefault>,
    },
    Num {
        min: f64,
        max: f64,
        default: Option<f64>,
    },
    Bool,
    /// An array of strings.
    StrList {
        min_items: u32,
        max_items: u32,
        item_min_len: u32,
        item_max_len: u32,
    },
    /// A size in CSS px: `{width, height}`, each a whole number from `min` to `max`. The command
    /// line spells it `WxH` ([`parse_size`]) and hands the validator the object.
    Size {
        min: u32,
        max: u32,
    },
    /// browser_batch `steps`: `{tool, arguments}` items.
    Steps {
        min_items: u32,
        max_items: u32,
    },
    /// Any JSON object of at most `max_bytes` as compact JSON (browser_webmcp `arguments`,
    /// which the page's own schema governs). The command line spells it as JSON text.
    Object {
        max_bytes: u32,
    },
}

/// One declared argument.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    pub name: &'static str,
    /// One line.
    pub description: &'static str,
    pub required: bool,
    pub kind: Kind,
}

impl Arg {
    /// A string of at most 8192 characters.
    pub const fn string(name: &'static str, description: &'static str) -> Arg {
        Arg {
            name,
            description,
            required: false,
            kind: Kind::Str {
                min_len: 0,
                max_len: DEFAULT_MAX_LEN,
                pattern: None,
            },
        }
    }

    pub const fn one_of(
        name: &'static str,
        description: &'static str,
        values: &'static [&'static str],
    ) -> Arg {
        Arg {
            name,
            description,
            required: false,
            kind: Kind::Enum {
                values,
                default: None,
            },
        }
    }

    pub const fn int(name: &'static str, description: &'static str, min: i64, max: i64) -> Arg {
        Arg {
            name,
            description,
            required: false,
            kind: Kind::Int {
                min,
                max,
                default: None,
            },
        }
    }

    pub const fn num(name: &'static str, description: &'static str, min: f64, max: f64) -> Arg {
        Arg {
            name,
            description,
            required: false,
            kind: Kind::Num {
                min,
                max,
                default: None,
            },
        }
    }

    pub const fn boolean(name: &'static str, description: &'static str) -> Arg {
        Arg {
            name,
            description,
            required: false,
            kind: Kind::Bool,
        }
    }

    pub const fn kind(name: &'static str, description: &'static str, kind: Kind) -> Arg {
        Arg {
            name,
            description,
            required: false,
            kind,
        }
    }

    pub const fn required(mut self) -> Arg {
        self.required = true;
        self
    }

    /// Sets `maxLength` (and keeps any other string constraint).
    pub const fn max_len(mut self, max: u32) -> Arg {
        if let Kind::Str {
            min_len, pattern, ..
        } = self.kind
        {
            self.kind = Kind::Str {
                min_len,
                max_len: max,
                pattern,
            };
        }
        self
    }

    pub const fn min_len(mut self, min: u32) -> Arg {
        if let Kind::Str {
            max_len, pattern, ..
        } = self.kind
        {
            self.kind = Kind::Str {
                min_len: min,
                max_len,
                pattern,
            };
        }
        self
    }

    pub const fn pattern(mut self, pattern: &'static Pattern) -> Arg {
        if let Kind::Str {
            min_len, max_len, ..
        } = self.kind
        {
            self.kind = Kind::Str {
                min_len,
                max_len,
                pattern: Some(pattern),
            };
        }
        self
    }

    pub const fn default_str(mut self, value: &'static str) -> Arg {
        if let Kind::Enum { values, .. } = self.kind {
            self.kind = Kind::Enum {
                values,
                default: Some(value),
            };
        }
        self
    }

    pub const fn default_int(mut self, value: IntDefault) -> Arg {
        if let Kind::Int { min, max, .. } = self.kind {
            self.kind = Kind::Int {
                min,
                max,
                default: Some(value),
            };
        }
        self
    }

    pub const fn default_num(mut self, value: f64) -> Arg {
        if let Kind::Num { min, max, .. } = self.kind {
            self.kind = Kind::Num {
                min,
                max,
                default: Some(value),
            };
        }
        self
    }
}

/// Values the schema and the validator need from the configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Defaults {
    pub agent_timeout_ms: u64,
}

impl IntDefault {
    fn resolve(self, defaults: &Defaults) -> i64 {
        match self {
            IntDefault::Value(value) => value,
            IntDefault::AgentTimeout => defaults.agent_timeout_ms as i64,
        }
    }
}

// ---------------------------------------------------------------------------
// Schema generation
// ---------------------------------------------------------------------------

/// The `inputSchema` of a tool. `batch_tools` is the enum of step tools.
pub fn input_schema(decl: &ToolDecl, defaults: &Defaults, batch_tools: &[&str]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for arg in decl.args {
        properties.insert(arg.name.to_owned(), arg_schema(arg, defaults, batch_tools));
        if arg.required {
            required.push(json!(arg.name));
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    Value::Object(schema)
}

fn arg_schema(arg: &Arg, defaults: &Defaults, batch_tools: &[&str]) -> Value {
    let mut schema = Map::new();
    let mut put = |key: &str, value: Value| {
        schema.insert(key.to_owned(), value);
    };
    match arg.kind {
        Kind::Str {
            min_len,
            max_len,
            pattern,
        } => {
            put("type", json!("string"));
            put("description", json!(arg.description));
            if min_len > 0 {
                put("minLength", json!(min_len));
            }
            put("maxLength", json!(max_len));
            if let Some(pattern) = pattern {
                put("pattern", json!(pattern.source));
            }
        }
        Kind::Enum { values, default } => {
            put("type", json!("string"));
            put("description", json!(arg.description));
            put("enum", json!(values));
            if let Some(default) = default {
                put("default", json!(default));
            }
        }
        Kind::Int { min, max, default } => {
            put("type", json!("integer"));
            put("description", json!(arg.description));
            put("minimum", json!(min));
            put("maximum", json!(max));
            if let Some(default) = default {
                put("default", json!(default.resolve(defaults)));
            }
        }
        Kind::Num { min, max, default } => {
            put("type", json!("number"));
            put("description", json!(arg.description));
            put("minimum", json!(min));
            put("maximum", json!(max));
            if let Some(default) = default {
                put("default", json!(default));
            }
        }
        Kind::Bool => {
            put("type", json!("boolean"));
            put("description", json!(arg.description));
        }
        Kind::StrList {
            min_items,
            max_items,
            item_min_len,
            item_max_len,
        } => {
            put("type", json!("array"));
            put("description", json!(arg.description));
            let mut item = json!({ "type": "string", "maxLength": item_max_len });
            if item_min_len > 0 {
                item["minLength"] = json!(item_min_len);
            }
            put("items", item);
            if min_items > 0 {
                put("minItems", json!(min_items));
            }
            put("maxItems", json!(max_items));
        }
        Kind::Size { min, max } => {
            put("type", json!("object"));
            put("description", json!(arg.description));
            let side = json!({ "type": "integer", "minimum": min, "maximum": max });
            put(
                "properties",
                json!({ "width": side.clone(), "height": side }),
            );
            put("required", json!(["width", "height"]));
            put("additionalProperties", json!(false));
        }
        Kind::Steps {
            min_items,
            max_items,
        } => {
            put("type", json!("array"));
            put("description", json!(arg.description));
            put(
                "items",
                json!({
                    "type": "object",
                    "properties": {
                        "tool": { "type": "string", "enum": batch_tools },
                        "arguments": { "type": "object" },
                    },
                    "required": ["tool"],
                    "additionalProperties": false,
                }),
            );
            put("minItems", json!(min_items));
            put("maxItems", json!(max_items));
        }
        Kind::Object { .. } => {
            put("type", json!("object"));
            put("description", json!(arg.description));
        }
    }
    Value::Object(schema)
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

/// A failed check (docs/mcp.md#errors). Becomes -32602 `<tool>: <message>` with
/// `data {tool, argument, ...extra}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgError {
    /// The tool the caller called (browser_batch for a step).
    pub tool: &'static str,
    /// Without the `<tool>: ` prefix.
    pub message: String,
    /// A path: `files[3]`, `steps[2].arguments.value`; `""` for the whole object.
    pub argument: String,
    pub extra: Map<String, Value>,
}

impl ArgError {
    /// The full message, `<tool>: <message>`.
    pub fn full_message(&self) -> String {
        format!("{}: {}", self.tool, self.message)
    }

    /// The INVALID_ARGUMENT tool error the model reads and corrects its call from (docs/mcp.md#errors):
    /// the same message, [`ArgError::data`] as `detail`.
    pub fn to_tool_error(&self) -> crate::error::ToolError {
        let hint = if self.extra.contains_key("unknown") {
            "remove the unknown argument; detail.allowed lists the declared ones".to_owned()
        } else if self.extra.contains_key("allowed") {
            "use one of the values in detail.allowed".to_owned()
        } else {
            format!(
                "correct the arguments and call {} again; its inputSchema in tools/list lists every constraint",
                self.tool
            )
        };
        crate::error::ToolError::new(
            crate::error::ToolErrorCode::InvalidArgument,
            self.full_message(),
        )
        .with_hint(hint)
        .with_detail(self.data())
    }

    /// The error's `detail`: `{tool, argument, ...}`.
    pub fn data(&self) -> Value {
        let mut data = Map::new();
        data.insert("tool".into(), json!(self.tool));
        data.insert("argument".into(), json!(self.argument));
        for (key, value) in &self.extra {
            data.insert(key.clone(), value.clone());
        }
        Value::Object(data)
    }
}

/// Validates `arguments` against `decl`; returns only declared, non-null keys
/// with defaults filled in and integers normalised (`5.0` → `5`).
/// `lookup` finds a step's declaration by name (browser_batch only).
pub fn validate(
    decl: &'static ToolDecl,
    arguments: Option<&Value>,
    defaults: &Defaults,
    lookup: &dyn Fn(&str) -> Option<&'static ToolDecl>,
) -> Result<Map<String, Value>, ArgError> {
    let mut validator = Validator {
        tool: decl.name,
        message_prefix: String::new(),
        path_prefix: String::new(),
        defaults,
        lookup,
        extra_data: Map::new(),
    };
    validator.object(decl, arguments)
}

struct Validator<'a> {
    tool: &'static str,
    message_prefix: String,
    path_prefix: String,
    defaults: &'a Defaults,
    lookup: &'a dyn Fn(&str) -> Option<&'static ToolDecl>,
    extra_data: Map<String, Value>,
}

impl Validator<'_> {
    fn fail(&self, argument: &str, message: String) -> ArgError {
        ArgError {
            tool: self.tool,
            message: format!("{}{message}", self.message_prefix),
            argument: format!("{}{argument}", self.path_prefix),
            extra: self.extra_data.clone(),
        }
    }

    fn fail_with(&self, argument: &str, message: String, key: &str, value: Value) -> ArgError {
        let mut error = self.fail(argument, message);
        error.extra.insert(key.to_owned(), value);
        error
    }

    fn object(
        &mut self,
        decl: &'static ToolDecl,
        arguments: Option<&Value>,
    ) -> Result<Map<String, Value>, ArgError> {
        // 1. `arguments` is an object (absent/null = {}).
        let empty = Map::new();
        let given = match arguments {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(self.fail(
                    "",
                    format!("arguments must be object, got {}", type_name(other)),
                ))
            }
        };
        // 2. No undeclared key (null counts as absent).
        let unknown: Vec<&String> = given
            .iter()
            .filter(|(key, value)| {
                !value.is_null() && !decl.args.iter().any(|arg| arg.name == key.as_str())
            })
            .map(|(key, _)| key)
            .collect();
        if let Some(first) = unknown.first() {
            let allowed: Vec<&str> = decl.args.iter().map(|arg| arg.name).collect();
            let mut error = self.fail(first, format!("unknown argument \"{first}\""));
            error.extra.insert("unknown".into(), json!(unknown));
            error.extra.insert("allowed".into(), json!(allowed));
            return Err(error);
        }
        // 3. Each property in declaration order.
        let mut valid = Map::new();
        for arg in decl.args {
            match given.get(arg.name) {
                None | Some(Value::Null) => {
                    if let Some(default) = self.default_of(arg) {
                        valid.insert(arg.name.to_owned(), default);
                    }
                }
                Some(value) => {
                    let checked = self.value(arg, arg.name, value)?;
                    valid.insert(arg.name.to_owned(), checked);
                }
            }
        }
        // 4. Required present.
        for arg in decl.args {
            if arg.required && !valid.contains_key(arg.name) {
                return Err(self.fail(
                    arg.name,
                    format!("missing required argument \"{}\"", arg.name),
                ));
            }
        }
        Ok(valid)
    }

    fn default_of(&self, arg: &Arg) -> Option<Value> {
        match arg.kind {
            Kind::Enum {
                default: Some(value),
                ..
            } => Some(json!(value)),
            Kind::Int {
                default: Some(value),
                ..
            } => Some(json!(value.resolve(self.defaults))),
            Kind::Num {
                default: Some(value),
                ..
            } => Some(json!(value)),
            _ => None,
        }
    }

    fn value(&mut self, arg: &Arg, path: &str, value: &Value) -> Result<Value, ArgError> {
        let name = path;
        match arg.kind {
            Kind::Str {
                min_len,
                max_len,
                pattern,
            } => {
                let text = self.expect_string(name, value)?;
                self.check_length(name, text, min_len, max_len)?;
                if let Some(pattern) = pattern {
                    if !(pattern.matches)(text) {
                        return Err(self.fail_with(
                            name,
                            format!("argument \"{name}\" must match {}", pattern.source),
                            "pattern",
                            json!(pattern.source),
                        ));
                    }
                }
                Ok(value.clone())
            }
            Kind::Enum { values, .. } => {
                let text = self.expect_string(name, value)?;
                if !values.contains(&text) {
                    return Err(self.fail_with(
                        name,
                        format!("argument \"{name}\" must be one of: {}", values.join(", ")),
                        "allowed",
                        json!(values),
                    ));
                }
                Ok(value.clone())
            }
            Kind::Int { min, max, .. } => {
                let number = self.expect_finite(name, value, "integer")?;
                if number.fract() != 0.0 {
                    return Err(self.fail(
                        name,
                        format!("argument \"{name}\" must be integer, got {value}"),
                    ));
                }
                if number < min as f64 || number > max as f64 {
                    return Err(self.range_error(name, &min.to_string(), &max.to_string(), value));
                }
                Ok(json!(number as i64))
            }
            Kind::Num { min, max, .. } => {
                let number = self.expect_finite(name, value, "number")?;
                if number < min || number > max {
                    return Err(self.range_error(name, &min.to_string(), &max.to_string(), value));
                }
                Ok(value.clone())
            }
            Kind::Bool => match value {
                Value::Bool(_) => Ok(value.clone()),
                other => Err(self.type_error(name, "boolean", other)),
            },
            Kind::StrList {
                min_items,
                max_items,
                item_min_len,
                item_max_len,
            } => {
                let items = self.expect_array(name, value, min_items, max_items)?;
                for (idx, item) in items.iter().enumerate() {
                    let item_path = format!("{name}[{idx}]");
                    let text = self.expect_string(&item_path, item)?;
                    self.check_length(&item_path, text, item_min_len, item_max_len)?;
                }
                Ok(value.clone())
            }
            Kind::Object { max_bytes } => {
                if !value.is_object() {
                    return Err(self.type_error(name, "object", value));
                }
                if value.to_string().len() > max_bytes as usize {
                    return Err(self.fail(
                        name,
                        format!("argument \"{name}\" is larger than {max_bytes} bytes of JSON"),
                    ));
                }
                Ok(value.clone())
            }
            Kind::Size { min, max } => {
                let Value::Object(map) = value else {
                    return Err(self.type_error(name, "object {width, height}", value));
                };
                if let Some(unknown) = map
                    .iter()
                    .find(|(key, value)| {
                        !value.is_null() && !matches!(key.as_str(), "width" | "height")
                    })
                    .map(|(key, _)| key)
                {
                    let path = format!("{name}.{unknown}");
                    return Err(self.fail(&path, format!("unknown argument \"{path}\"")));
                }
                let mut size = Map::new();
                for side in ["width", "height"] {
                    let path = format!("{name}.{side}");
                    let Some(given) = map.get(side).filter(|given| !given.is_null()) else {
                        return Err(
                            self.fail(&path, format!("missing required argument \"{path}\""))
                        );
                    };
                    let number = self.expect_finite(&path, given, "integer")?;
                    if number.fract() != 0.0 {
                        return Err(self.fail(
                            &path,
                            format!("argument \"{path}\" must be integer, got {given}"),
                        ));
                    }
                    if number < f64::from(min) || number > f64::from(max) {
                        return Err(self.range_error(
                            &path,
                            &min.to_string(),
                            &max.to_string(),
                            given,
                        ));
                    }
                    size.insert(side.to_owned(), json!(number as i64));
                }
                Ok(Value::Object(size))
            }
            Kind::Steps {
                min_items,
                max_items,
            } => {
                let items = self.expect_array(name, value, min_items, max_items)?;
                let mut steps = Vec::new();
                for (idx, item) in items.iter().enumerate() {
                    steps.push(self.step(name, idx, item)?);
                }
                Ok(Value::Array(steps))
            }
        }
    }

    fn step(&mut self, name: &str, idx: usize, item: &Value) -> Result<Value, ArgError> {
        let item_path = format!("{name}[{idx}]");
        let Value::Object(map) = item else {
            return Err(self.type_error(&item_path, "object", item));
        };
        let unknown: Vec<&String> = map
            .iter()
            .filter(|(key, value)| {
                !value.is_null() && !matches!(key.as_str(), "tool" | "arguments")
            })
            .map(|(key, _)| key)
            .collect();
        if let Some(first) = unknown.first() {
            let path = format!("{item_path}.{first}");
            let mut error = self.fail(&path, format!("unknown argument \"{path}\""));
            error.extra.insert("unknown".into(), json!(unknown));
            error
                .extra
                .insert("allowed".into(), json!(["tool", "arguments"]));
            return Err(error);
        }
        let tool_path = format!("{item_path}.tool");
        let tool_name = match map.get("tool") {
            None | Some(Value::Null) => {
                return Err(self.fail(
                    &tool_path,
                    format!("missing required argument \"{tool_path}\""),
                ))
            }
            Some(value) => self.expect_string(&tool_path, value)?,
        };
        if tool_name == self.tool {
            return Err(self.fail(
                &tool_path,
                format!("{item_path} ({tool_name}): {tool_name} cannot be nested"),
            ));
        }
        let Some(step_decl) = (self.lookup)(tool_name) else {
            let mut allowed: Vec<&str> = Vec::new();
            // The enum is every tool but the batch itself.
            for candidate in crate::tools::TOOLS {
                if candidate.name != self.tool {
                    allowed.push(candidate.name);
                }
            }
            return Err(self.fail_with(
                &tool_path,
                format!(
                    "argument \"{tool_path}\" must be one of: {}",
                    allowed.join(", ")
                ),
                "allowed",
                json!(allowed),
            ));
        };
        let arguments = match map.get("arguments") {
            None | Some(Value::Null) => None,
            Some(value @ Value::Object(_)) => Some(value),
            Some(other) => {
                return Err(self.type_error(&format!("{item_path}.arguments"), "object", other))
            }
        };
        let mut nested = Validator {
            tool: self.tool,
            message_prefix: format!("{item_path} ({tool_name}): "),
            path_prefix: format!("{item_path}.arguments."),
            defaults: self.defaults,
            lookup: self.lookup,
            extra_data: {
                let mut extra = Map::new();
                extra.insert("step".into(), json!(idx));
                extra.insert("stepTool".into(), json!(tool_name));
                extra
            },
        };
        let valid = nested.object(step_decl, arguments)?;
        Ok(json!({ "tool": step_decl.name, "arguments": valid }))
    }

    fn type_error(&self, name: &str, expected: &str, value: &Value) -> ArgError {
        self.fail_with(
            name,
            format!(
                "argument \"{name}\" must be {expected}, got {}",
                type_name(value)
            ),
            "expected",
            json!(expected),
        )
    }

    fn range_error(&self, name: &str, min: &str, max: &str, value: &Value) -> ArgError {
        self.fail(
            name,
            format!("argument \"{name}\" must be between {min} and {max}, got {value}"),
        )
    }

    fn expect_string<'v>(&self, name: &str, value: &'v Value) -> Result<&'v str, ArgError> {
        match value {
            Value::String(text) if overflow_literal(value).is_none() => Ok(text),
            other => Err(self.type_error(name, "string", other)),
        }
    }

    fn expect_finite(&self, name: &str, value: &Value, expected: &str) -> Result<f64, ArgError> {
        if let Some(literal) = overflow_literal(value) {
            return Err(self.fail(
                name,
                format!("argument \"{name}\" must be a finite number, got {literal}"),
            ));
        }
        match value {
            Value::Number(number) => match number.as_f64() {
                Some(float) if float.is_finite() => Ok(float),
                _ => Err(self.fail(
                    name,
                    format!("argument \"{name}\" must be a finite number, got {value}"),
                )),
            },
            other => Err(self.type_error(name, expected, other)),
        }
    }

    fn expect_array<'v>(
        &self,
        name: &str,
        value: &'v Value,
        min_items: u32,
        max_items: u32,
    ) -> Result<&'v Vec<Value>, ArgError> {
        let Value::Array(items) = value else {
            return Err(self.type_error(name, "array", value));
        };
        if items.len() < min_items as usize {
            return Err(self.fail(
                name,
                format!(
                    "argument \"{name}\" has too few items ({}; at least {min_items})",
                    items.len()
                ),
            ));
        }
        if items.len() > max_items as usize {
            return Err(self.fail(
                name,
                format!(
                    "argument \"{name}\" has too many items ({}; at most {max_items})",
                    items.len()
                ),
            ));
        }
        Ok(items)
    }

    fn check_length(&self, name: &str, text: &str, min: u32, max: u32) -> Result<(), ArgError> {
        let n_chars = text.chars().count();
        if n_chars < min as usize {
            return Err(self.fail(
                name,
                if min == 1 {
                    format!("argument \"{name}\" must not be empty")
                } else {
                    format!(
                        "argument \"{name}\" is too short ({n_chars} characters; at least {min})"
                    )
                },
            ));
        }
        if n_chars > max as usize {
            return Err(self.fail(
                name,
                format!("argument \"{name}\" is too long ({n_chars} characters; at most {max})"),
            ));
        }
        Ok(())
    }
}

/// The JSON type of a value as messages print it; an overflow literal is a number.
pub fn type_name(value: &Value) -> &'static str {
    if overflow_literal(value).is_some() {
        return "number";
    }
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests;

/// How a front end's JSON reader marks a number literal too large for `f64` (`1e400`): a
/// string with this prefix, so the validator can name the literal instead of a rounded value.
pub const OVERFLOW_MARKER: &str = "\u{0}chromate-overflow-number:";

/// The original literal if `value` is a rewritten overflow number.
pub fn overflow_literal(value: &Value) -> Option<&str> {
    value.as_str()?.strip_prefix(OVERFLOW_MARKER)
}
