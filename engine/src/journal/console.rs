//! Console calls and uncaught errors → journal entries: `Runtime.consoleAPICalled` formatted as
//! the DevTools console formats its arguments (`%s %d %i %f %o %O %c`, objects as compact
//! previews from the RemoteObject `preview`, never `[object Object]`), and
//! `Runtime.exceptionThrown` as `exception` (first line) or `unhandledrejection`.
//!
//! Does not evaluate anything in the page: everything comes from the event's own remote
//! objects, so formatting never costs a round trip and works while a dialog blocks the page.

use serde_json::value::RawValue;
use serde_json::Value;

use super::{cut_text, cut_url, LogData, LogLevel};
use crate::cdp::decode_event;
use crate::cdp::runtime::{
    EventConsoleAPICalled, EventConsoleAPICalledType, EventExceptionThrown, ObjectPreview,
    ObjectPreviewSubtype as PreviewSub, ObjectPreviewType, PropertyPreview, PropertyPreviewSubtype,
    PropertyPreviewType, RemoteObject, RemoteObjectSubtype, RemoteObjectType, StackTrace,
};

/// `url:line:column` with 1-based line and column; `None` without a URL.
fn origin(url: &str, line: i64, column: i64) -> Option<String> {
    (!url.is_empty()).then(|| format!("{}:{}:{}", cut_url(url), line + 1, column + 1))
}

fn top_frame(stack: Option<&StackTrace>) -> Option<String> {
    let frame = stack?.call_frames.first()?;
    origin(&frame.url, frame.line_number, frame.column_number)
}

/// `Runtime.consoleAPICalled` → a console entry.
pub(crate) fn console_called(params: &RawValue) -> Option<LogData> {
    let event: EventConsoleAPICalled = decode_event(params)?;
    let (method, level) = console_method(event.r#type.as_str());
    let mut text = format_args(&event.args);
    if event.r#type == EventConsoleAPICalledType::Assert {
        text = if text.is_empty() {
            "Assertion failed".to_owned()
        } else {
            format!("Assertion failed: {text}")
        };
    }
    Some(LogData::Console {
        level,
        method: method.to_owned(),
        text: cut_text(text),
        origin: top_frame(event.stack_trace.as_ref()),
    })
}

/// The console method a `consoleAPICalled` type comes from, and its level.
pub(crate) fn console_method(kind: &str) -> (&str, LogLevel) {
    match kind {
        "debug" => ("debug", LogLevel::Debug),
        "warning" => ("warn", LogLevel::Warn),
        "error" => ("error", LogLevel::Error),
        "assert" => ("assert", LogLevel::Error),
        "startGroup" => ("group", LogLevel::Info),
        "startGroupCollapsed" => ("groupCollapsed", LogLevel::Info),
        "endGroup" => ("groupEnd", LogLevel::Info),
        other => (other, LogLevel::Info),
    }
}

/// `Runtime.exceptionThrown` → an error entry.
pub(crate) fn exception_thrown(params: &RawValue) -> Option<LogData> {
    let details = decode_event::<EventExceptionThrown>(params)?.exception_details;
    let origin = top_frame(details.stack_trace.as_ref()).or_else(|| {
        details
            .url
            .as_deref()
            .and_then(|url| origin(url, details.line_number, details.column_number))
    });
    let rejection = details.text.starts_with("Uncaught (in promise)");
    let reason = details.exception.as_ref().map(|exception| {
        if exception.subtype == Some(RemoteObjectSubtype::Error) {
            first_line(exception.description.as_deref().unwrap_or_default()).to_owned()
        } else {
            format_value(exception)
        }
    });
    let (method, text) = if rejection {
        let reason = reason.unwrap_or_else(|| {
            details
                .text
                .trim_start_matches("Uncaught (in promise)")
                .trim()
                .to_owned()
        });
        (
            "unhandledrejection",
            format!("Unhandled promise rejection: {reason}"),
        )
    } else {
        let text = reason.unwrap_or_else(|| first_line(&details.text).to_owned());
        ("exception", text)
    };
    let stack = details
        .exception
        .as_ref()
        .and_then(|exception| exception.description.as_deref())
        .filter(|description| description.lines().nth(1).is_some())
        .map(str::to_owned)
        .or_else(|| stack_text(details.stack_trace.as_ref()));
    Some(LogData::Error {
        method: method.to_owned(),
        text: cut_text(text),
        origin,
        stack: stack.map(cut_text),
    })
}

/// A stack trace as V8 prints it: one `    at function (url:line:column)` line per frame.
fn stack_text(stack: Option<&StackTrace>) -> Option<String> {
    let frames = &stack?.call_frames;
    if frames.is_empty() {
        return None;
    }
    let lines: Vec<String> = frames
        .iter()
        .map(|frame| {
            let place = format!(
                "{}:{}:{}",
                cut_url(&frame.url),
                frame.line_number + 1,
                frame.column_number + 1
            );
            if frame.function_name.is_empty() {
                format!("    at {place}")
            } else {
                format!("    at {} ({place})", frame.function_name)
            }
        })
        .collect();
    Some(lines.join("\n"))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// Console arguments as the console prints them: format specifiers in a leading string are
/// substituted, remaining arguments are appended, space-separated.
pub(crate) fn format_args(args: &[RemoteObject]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut rest = args.iter();
    if let Some(first) = args
        .first()
        .filter(|a| a.r#type == RemoteObjectType::String)
    {
        rest.next();
        let template = first.value.as_ref().and_then(Value::as_str).unwrap_or("");
        parts.push(substitute(template, &mut rest));
    }
    parts.extend(rest.map(format_value));
    parts.join(" ")
}

/// Applies `%s %d %i %f %o %O %c %%` of `template`, taking arguments from `args`.
fn substitute<'a>(template: &str, args: &mut impl Iterator<Item = &'a RemoteObject>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(&spec) = chars.peek() else {
            out.push('%');
            break;
        };
        if spec == '%' {
            chars.next();
            out.push('%');
            continue;
        }
        if !matches!(spec, 's' | 'd' | 'i' | 'f' | 'o' | 'O' | 'c') {
            out.push('%');
            continue;
        }
        // A specifier without an argument stays as written, as in the console.
        let Some(arg) = args.next() else {
            out.push('%');
            continue;
        };
        chars.next();
        match spec {
            's' | 'o' | 'O' => out.push_str(&format_value(arg)),
            'd' | 'i' => out.push_str(&match number(arg) {
                Some(n) if n.is_finite() => format!("{}", n.trunc() as i64),
                _ => "NaN".to_owned(),
            }),
            'f' => out.push_str(&match number(arg) {
                Some(n) => format_number(n),
                None => "NaN".to_owned(),
            }),
            // `%c` takes a CSS argument and prints nothing.
            _ => {}
        }
    }
    out
}

fn number(arg: &RemoteObject) -> Option<f64> {
    match arg.value.as_ref() {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}

fn format_number(n: f64) -> String {
    // Rust prints integral floats without a fraction and never in exponent form, as
    // JavaScript does below 1e21.
    format!("{n}")
}

/// One argument as the console prints it at top level (strings unquoted).
pub(crate) fn format_value(arg: &RemoteObject) -> String {
    match arg.r#type {
        RemoteObjectType::String => match &arg.value {
            Some(Value::String(s)) => s.clone(),
            _ => arg.description.clone().unwrap_or_default(),
        },
        RemoteObjectType::Undefined => "undefined".to_owned(),
        RemoteObjectType::Number | RemoteObjectType::Boolean | RemoteObjectType::Bigint => {
            if let Some(unserializable) = &arg.unserializable_value {
                return unserializable.0.clone();
            }
            match &arg.value {
                // JavaScript prints integral numbers without a fraction (`-7`, not `-7.0`).
                Some(Value::Number(n)) => n.as_f64().map_or_else(|| n.to_string(), format_number),
                Some(value) => value.to_string(),
                None => arg.description.clone().unwrap_or_default(),
            }
        }
        RemoteObjectType::Symbol | RemoteObjectType::Function => {
            arg.description.clone().unwrap_or_default()
        }
        _ => {
            if arg.subtype == Some(RemoteObjectSubtype::Null) {
                return "null".to_owned();
            }
            if arg.subtype == Some(RemoteObjectSubtype::Error) {
                return arg.description.clone().unwrap_or_default();
            }
            match &arg.preview {
                Some(preview) => format_preview(preview),
                None => arg
                    .description
                    .clone()
                    .or_else(|| arg.class_name.clone())
                    .unwrap_or_else(|| "Object".to_owned()),
            }
        }
    }
}

/// An object preview, compact: `{user: "ann", role: "admin"}`, `[1, 2]`, `Map(1) {"a" => 1}`.
pub(crate) fn format_preview(preview: &ObjectPreview) -> String {
    let description = preview.description.as_deref().unwrap_or("");
    let more = |items: &mut Vec<String>| {
        if preview.overflow {
            items.push("…".to_owned());
        }
    };
    match &preview.subtype {
        Some(PreviewSub::Array | PreviewSub::Typedarray | PreviewSub::Arraybuffer) => {
            let mut items: Vec<String> = preview
                .properties
                .iter()
                .map(|p| {
                    if p.name.parse::<u64>().is_ok() {
                        property_value(p)
                    } else {
                        format!("{}: {}", p.name, property_value(p))
                    }
                })
                .collect();
            more(&mut items);
            format!("[{}]", items.join(", "))
        }
        Some(PreviewSub::Map | PreviewSub::Set | PreviewSub::Weakmap | PreviewSub::Weakset) => {
            let mut items: Vec<String> = preview
                .entries
                .iter()
                .flatten()
                .map(|entry| {
                    // The protocol always sends `value`; the generated type has it optional
                    // because `EntryPreview` is experimental.
                    let value = entry.value.as_ref().map(nested_preview).unwrap_or_default();
                    match &entry.key {
                        Some(key) => format!("{} => {value}", nested_preview(key)),
                        None => value,
                    }
                })
                .collect();
            more(&mut items);
            format!("{description} {{{}}}", items.join(", "))
        }
        Some(PreviewSub::Null) => "null".to_owned(),
        Some(
            PreviewSub::Node
            | PreviewSub::Error
            | PreviewSub::Regexp
            | PreviewSub::Date
            | PreviewSub::Promise
            | PreviewSub::Proxy,
        ) => description.to_owned(),
        _ if preview.r#type == ObjectPreviewType::Function => description.to_owned(),
        _ => {
            let mut items: Vec<String> = preview
                .properties
                .iter()
                .map(|p| format!("{}: {}", p.name, property_value(p)))
                .collect();
            more(&mut items);
            let body = format!("{{{}}}", items.join(", "));
            if description.is_empty() || description == "Object" {
                body
            } else {
                format!("{description} {body}")
            }
        }
    }
}

/// A preview nested in another (map entries): strings quoted like property values.
fn nested_preview(preview: &ObjectPreview) -> String {
    match preview.r#type {
        ObjectPreviewType::Object if preview.subtype != Some(PreviewSub::Null) => {
            format_preview(preview)
        }
        ObjectPreviewType::String => quote(preview.description.as_deref().unwrap_or("")),
        _ => preview.description.clone().unwrap_or_default(),
    }
}

/// A property's value inside a preview: strings quoted, nested objects previewed.
fn property_value(property: &PropertyPreview) -> String {
    if let Some(nested) = &property.value_preview {
        return format_preview(nested);
    }
    let value = property.value.as_deref().unwrap_or("");
    match property.r#type {
        PropertyPreviewType::String => quote(value),
        PropertyPreviewType::Function => "ƒ".to_owned(),
        PropertyPreviewType::Accessor => "(...)".to_owned(),
        PropertyPreviewType::Undefined => "undefined".to_owned(),
        _ if property.subtype == Some(PropertyPreviewSubtype::Null) => "null".to_owned(),
        _ => value.to_owned(),
    }
}

fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}
