//! JSON-RPC 2.0 over newline-delimited stdio (docs/mcp.md#run), written by hand.
//!
//! Owns: cutting the byte stream into frames ([`FrameDecoder`], including the
//! 1 MiB limit detected before the newline arrives), parsing a frame with the
//! nesting limit and overflow-literal handling ([`parse_message`]), classifying
//! it as request, notification or response (a batch array item by item), and the protocol error envelope
//! ([`RpcError`]). Does not own method dispatch or scheduling (`server.rs`).
//!
//! Overflow literals (`1e400`): serde_json (without `arbitrary_precision`,
//! which would change number handling for the whole workspace through
//! feature unification) refuses them outright, but the contract says they
//! parse and are rejected where used. So [`parse_json`] scans the frame
//! first; each number literal whose value is not a finite double is rewritten
//! into a string `"\u0000chromate-overflow-number:<literal>"` before serde
//! parses it. [`overflow_literal`] recognises that marker, the validator
//! reports it as a non-finite number, and `id` checks reject it. A client
//! could forge the marker by sending that exact string; the only effect is
//! that its string is treated as an overflowing number and rejected.
//!
//! Nesting: the same scan counts `[`/`{` outside strings and rejects more
//! than 128 levels; serde_json's built-in limit (127) is disabled through
//! its additive `unbounded_depth` feature so exactly 128 parses.

use serde_json::{json, Map, Value};

/// Frame size limit in bytes, terminator excluded (docs/mcp.md#sizes).
pub(crate) const MAX_FRAME_BYTES: usize = 1_048_576;
/// Deepest nesting of arrays/objects accepted (docs/mcp.md#sizes).
pub(crate) const MAX_DEPTH: usize = 128;

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;

pub(crate) use chromate_command::tools::schema::{overflow_literal, OVERFLOW_MARKER};

/// What the decoder produced from the byte stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FrameEvent {
    /// One complete line, terminator and a trailing `\r` removed; never blank.
    Frame(Vec<u8>),
    /// A line crossed [`MAX_FRAME_BYTES`]; the rest of it will be discarded.
    TooLarge,
}

/// Splits stdin bytes into frames.
#[derive(Debug)]
pub(crate) struct FrameDecoder {
    buf: Vec<u8>,
    discarding: bool,
    limit: usize,
}

impl Default for FrameDecoder {
    fn default() -> FrameDecoder {
        FrameDecoder::with_limit(MAX_FRAME_BYTES)
    }
}

impl FrameDecoder {
    pub(crate) fn with_limit(limit: usize) -> FrameDecoder {
        FrameDecoder {
            buf: Vec::new(),
            discarding: false,
            limit,
        }
    }

    /// Feeds bytes; complete frames and limit crossings are appended to `out`.
    pub(crate) fn push(&mut self, mut chunk: &[u8], out: &mut Vec<FrameEvent>) {
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&byte| byte == b'\n');
            let (segment, rest) = match newline {
                Some(idx) => (&chunk[..idx], Some(&chunk[idx + 1..])),
                None => (chunk, None),
            };
            if !self.discarding {
                self.buf.extend_from_slice(segment);
                if self.over_limit() {
                    out.push(FrameEvent::TooLarge);
                    self.buf = Vec::new();
                    self.discarding = true;
                }
            }
            match rest {
                Some(rest) => {
                    if self.discarding {
                        self.discarding = false;
                    } else {
                        self.end_frame(out);
                    }
                    chunk = rest;
                }
                None => chunk = &[],
            }
        }
    }

    /// End of input: a last line without `\n` still counts.
    pub(crate) fn finish(&mut self, out: &mut Vec<FrameEvent>) {
        if !self.discarding {
            self.end_frame(out);
        }
        self.discarding = false;
    }

    fn over_limit(&self) -> bool {
        // A `\r` right at the limit may still be the first half of `\r\n`.
        self.buf.len() > self.limit
            && !(self.buf.len() == self.limit + 1 && self.buf.last() == Some(&b'\r'))
    }

    fn end_frame(&mut self, out: &mut Vec<FrameEvent>) {
        let mut frame = std::mem::take(&mut self.buf);
        if frame.last() == Some(&b'\r') {
            frame.pop();
        }
        if frame.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        out.push(FrameEvent::Frame(frame));
    }
}

/// A protocol error response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    pub(crate) id: Value,
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(id: Value, code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            id,
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// The frame-limit error of docs/mcp.md#sizes.
    pub(crate) fn frame_too_large() -> RpcError {
        RpcError::new(
            Value::Null,
            PARSE_ERROR,
            format!("input frame exceeds {MAX_FRAME_BYTES}-byte limit"),
        )
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), json!(self.code));
        error.insert("message".into(), json!(self.message));
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        json!({ "jsonrpc": "2.0", "id": self.id, "error": error })
    }
}

/// A successful response envelope.
pub(crate) fn response(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// A notification envelope.
pub(crate) fn notification(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// A classified incoming message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming {
    /// `method` + `id`. `params` is `None` when absent or `null`.
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    /// `method` without `id`: never answered.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// No `method`: a response to a request of ours (`roots/list`); `result` is `None` for
    /// an error response.
    Response { id: Value, result: Option<Value> },
}

/// Parses and classifies one frame; a batch is refused ([`batch_refused`]).
#[cfg(test)]
pub(crate) fn parse_frame(frame: &[u8]) -> Result<Incoming, RpcError> {
    match parse_message(frame)? {
        Message::One(incoming) => Ok(incoming),
        Message::Batch(_) => Err(batch_refused()),
    }
}

/// One frame: a single message, or a JSON-RPC batch (2025-03-26 only; the caller decides).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Message {
    One(Incoming),
    /// The batch's items in order, each classified on its own (an invalid item is its error
    /// response); never empty.
    Batch(Vec<Result<Incoming, RpcError>>),
}

/// Parses one frame, a batch array included. An empty array is an invalid request.
pub(crate) fn parse_message(frame: &[u8]) -> Result<Message, RpcError> {
    let value = parse_json(frame)
        .map_err(|why| RpcError::new(Value::Null, PARSE_ERROR, format!("parse error: {why}")))?;
    match value {
        Value::Array(items) if items.is_empty() => Err(RpcError::new(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: an empty batch",
        )),
        Value::Array(items) => Ok(Message::Batch(items.into_iter().map(classify).collect())),
        value => classify(value).map(Message::One),
    }
}

/// The answer to a batch from a session whose revision has none (every revision but
/// 2025-03-26).
pub(crate) fn batch_refused() -> RpcError {
    RpcError::new(
        Value::Null,
        INVALID_REQUEST,
        "invalid request: batch arrays are not supported",
    )
}

/// Frame bytes → JSON value, enforcing UTF-8, the nesting limit and the
/// overflow-literal rewrite described in the module docs.
pub(crate) fn parse_json(frame: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(frame).map_err(|err| format!("invalid utf-8: {err}"))?;
    let scan = scan(text)?;
    let rewritten;
    let text = if scan.overflows.is_empty() {
        text
    } else {
        let mut out = String::with_capacity(text.len() + scan.overflows.len() * 40);
        let mut last = 0;
        for (start, end) in &scan.overflows {
            out.push_str(&text[last..*start]);
            out.push('"');
            out.push_str("\\u0000");
            out.push_str(&OVERFLOW_MARKER[1..]);
            out.push_str(&text[*start..*end]);
            out.push('"');
            last = *end;
        }
        out.push_str(&text[last..]);
        rewritten = out;
        &rewritten
    };
    // serde_json's own limit stops at 127 levels; the scan above already
    // bounds nesting at 128, so its limit is switched off (`unbounded_depth`).
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = <Value as serde::Deserialize>::deserialize(&mut deserializer)
        .map_err(|err| err.to_string())?;
    deserializer.end().map_err(|err| err.to_string())?;
    Ok(value)
}

struct Scan {
    /// Byte ranges of number literals that overflow a double.
    overflows: Vec<(usize, usize)>,
}

/// One pass over the text outside strings: nesting depth and number literals.
fn scan(text: &str) -> Result<Scan, String> {
    let bytes = text.as_bytes();
    let mut overflows = Vec::new();
    let mut depth = 0usize;
    let mut idx = 0;
    while idx < bytes.len() {
        match bytes[idx] {
            b'"' => {
                idx += 1;
                while idx < bytes.len() {
                    match bytes[idx] {
                        b'\\' => idx += 2,
                        b'"' => break,
                        _ => idx += 1,
                    }
                }
                idx += 1;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!("nesting deeper than {MAX_DEPTH} levels"));
                }
                idx += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                idx += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = idx;
                while idx < bytes.len()
                    && matches!(bytes[idx], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    idx += 1;
                }
                let literal = &text[start..idx];
                if let Ok(number) = literal.parse::<f64>() {
                    if !number.is_finite() {
                        overflows.push((start, idx));
                    }
                }
            }
            _ => idx += 1,
        }
    }
    Ok(Scan { overflows })
}

fn classify(value: Value) -> Result<Incoming, RpcError> {
    let Value::Object(mut map) = value else {
        if value.is_array() {
            return Err(batch_refused());
        }
        return Err(RpcError::new(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: not an object",
        ));
    };
    if !map.contains_key("method") {
        return Ok(Incoming::Response {
            id: map.remove("id").unwrap_or(Value::Null),
            result: map.remove("result"),
        });
    }
    let id = map.remove("id");
    let id_valid = match &id {
        None => true,
        Some(id @ Value::String(_)) => overflow_literal(id).is_none(),
        Some(Value::Number(number)) => number.is_i64() || number.is_u64(),
        Some(_) => false,
    };
    let error_id = if id_valid {
        id.clone().unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let invalid = |why: &str| {
        Err(RpcError::new(
            error_id.clone(),
            INVALID_REQUEST,
            format!("invalid request: {why}"),
        ))
    };
    if map.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    let method = match map.remove("method") {
        Some(Value::String(method)) => method,
        _ => return invalid("\"method\" must be a string"),
    };
    if !id_valid {
        return invalid("\"id\" must be a string or an integer");
    }
    let params = match map.remove("params") {
        None | Some(Value::Null) => None,
        Some(params) => Some(params),
    };
    Ok(match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    })
}

#[cfg(test)]
mod tests;
