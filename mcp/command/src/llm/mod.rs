//! Model providers: the one client every model-backed tool calls (docs/llm.md).
//!
//! Owns: choosing the provider and model ([`Provider::resolve`]: arguments, else
//! `CHROMATE_LLM_PROVIDER` / `CHROMATE_LLM_MODEL`, else the first provider whose key is set,
//! else Ollama; each provider's default model), the request and answer every feature speaks
//! ([`Request`], [`Response`], native tool calls), retries of transient failures (429 with
//! `Retry-After`, 5xx, connection failures and timeouts: twice, with bounded backoff), JSON
//! answers checked against a schema with one repair turn ([`Provider::complete_json`]), and
//! [`LlmError`], which never carries the key: the key lives in a [`Secret`] that neither
//! `Debug` nor any message prints, and the provider's own messages are scrubbed of it.
//! Does not own the wire formats (`wire.rs`), HTTP (`http.rs`) or what a feature asks.

pub mod http;
pub mod json_check;
pub mod wire;

use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{ToolError, ToolErrorCode};

/// The provider when no argument names one: `anthropic`, `openai` or `ollama`.
pub const PROVIDER_ENV: &str = "CHROMATE_LLM_PROVIDER";
/// The model when no argument names one.
pub const MODEL_ENV: &str = "CHROMATE_LLM_MODEL";
/// The provider's base URL (any OpenAI-compatible server for `openai`; a remote Ollama).
pub const BASE_URL_ENV: &str = "CHROMATE_LLM_BASE_URL";
/// Each attempt's time limit in milliseconds ([`DEFAULT_TIMEOUT`] when unset).
pub const TIMEOUT_ENV: &str = "CHROMATE_LLM_TIMEOUT_MS";
/// Anthropic's key.
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// OpenAI's key (or the OpenAI-compatible server's, when it wants one).
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";

/// One attempt's time limit when `CHROMATE_LLM_TIMEOUT_MS` is unset.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Transient failures retried this many times after the first attempt.
pub const RETRIES: u32 = 2;
/// The wait before the first retry; it doubles for the next.
pub const BACKOFF: Duration = Duration::from_millis(500);
/// The longest `Retry-After` honoured: a provider asking for more fails at once.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    OpenAi,
    Ollama,
}

impl ProviderKind {
    /// Every provider, in the order the default is chosen.
    pub const ALL: [ProviderKind; 3] = [
        ProviderKind::Anthropic,
        ProviderKind::OpenAi,
        ProviderKind::Ollama,
    ];

    pub fn parse(text: &str) -> Option<ProviderKind> {
        ProviderKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(text.trim()))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Ollama => "ollama",
        }
    }

    /// The model used when neither an argument nor `CHROMATE_LLM_MODEL` names one: each a
    /// model that takes images and tool calls.
    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::OpenAi => "gpt-4.1-mini",
            ProviderKind::Ollama => "qwen2.5vl:7b",
        }
    }

    /// The base URL when `CHROMATE_LLM_BASE_URL` is unset.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Ollama => "http://127.0.0.1:11434",
        }
    }

    /// The variable holding its key; Ollama takes none.
    pub fn key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::Anthropic => Some(ANTHROPIC_KEY_ENV),
            ProviderKind::OpenAi => Some(OPENAI_KEY_ENV),
            ProviderKind::Ollama => None,
        }
    }
}

/// An API key. `Debug` prints `***`; the value leaves only in the request's header.
#[derive(Clone)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl Secret {
    /// `text` with the key, and any word sharing its first twelve characters (a provider
    /// echoing it half masked), replaced by `***`.
    pub fn scrub(&self, text: &str) -> String {
        scrub_key(text, &self.0)
    }
}

fn scrub_key(text: &str, key: &str) -> String {
    if key.len() < 4 {
        return text.to_owned();
    }
    let text = text.replace(key, "***");
    let prefix: String = key.chars().take(12).collect();
    if prefix.chars().count() < 8 {
        return text;
    }
    text.split_inclusive(|c: char| c.is_whitespace() || c == '"' || c == '\'')
        .map(|word| {
            if word.contains(prefix.as_str()) {
                let end =
                    word.trim_end_matches(|c: char| c.is_whitespace() || c == '"' || c == '\'');
                format!("***{}", &word[end.len()..])
            } else {
                word.to_owned()
            }
        })
        .collect()
}

/// A model provider resolved for one call: kind, model, where, the key, the limits.
#[derive(Debug, Clone)]
pub struct Provider {
    pub kind: ProviderKind,
    pub model: String,
    /// Without a trailing `/`.
    pub base_url: String,
    key: Option<Secret>,
    /// One attempt's time limit.
    pub timeout: Duration,
}

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// An image sent to the model: PNG or JPEG, base64.
#[derive(Debug, Clone)]
pub struct Image {
    pub media_type: &'static str,
    pub base64: String,
}

/// A tool call the model asked for, in any provider's format.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id (Ollama's calls have none: `call_N`).
    pub id: String,
    pub name: String,
    /// The arguments as a JSON object.
    pub arguments: Value,
}

/// What a tool call did, sent back to the model.
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
}

/// One part of a message.
#[derive(Debug, Clone)]
pub enum Part {
    Text(String),
    Image(Image),
    ToolCall(ToolCall),
    ToolResult(ToolResult),
}

/// One turn of the conversation.
#[derive(Debug, Clone)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

impl Message {
    pub fn user(parts: Vec<Part>) -> Message {
        Message {
            role: Role::User,
            parts,
        }
    }
}

/// A tool the model may call: its name, what it does, its arguments' JSON schema.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A chat request in chromate's terms, which `wire.rs` writes in each provider's format.
#[derive(Debug, Clone)]
pub struct Request {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// The schema a JSON answer must match (set by [`Provider::complete_json`]).
    pub json_schema: Option<Value>,
    pub max_tokens: u32,
}

impl Request {
    pub fn new(system: impl Into<String>, messages: Vec<Message>) -> Request {
        Request {
            system: system.into(),
            messages,
            tools: Vec::new(),
            json_schema: None,
            max_tokens: 2048,
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    End,
    ToolUse,
    MaxTokens,
    Refusal,
}

/// The model's answer: its text and the tool calls it asked for.
#[derive(Debug, Clone)]
pub struct Response {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub stop: Stop,
}

/// A provider failure, as `LLM_PROVIDER_ERROR` (docs/error-codes.md) says it: the provider's
/// own message (scrubbed of the key), the HTTP status, a hint, the attempts made.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmError {
    /// `config`, `http`, `unreachable`, `timeout`, `malformed-response`, `refused`,
    /// `invalid-json`.
    pub reason: &'static str,
    pub message: String,
    pub status: Option<u16>,
    pub hint: String,
    pub attempts: u32,
    pub provider: &'static str,
    pub model: String,
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(status) = self.status {
            write!(f, " (HTTP {status})")?;
        }
        Ok(())
    }
}

impl LlmError {
    fn config(message: String, hint: String) -> LlmError {
        LlmError {
            reason: "config",
            message,
            status: None,
            hint,
            attempts: 0,
            provider: "",
            model: String::new(),
        }
    }

    /// The tool error of `verb` (`describe: …`).
    pub fn to_tool_error(&self, verb: &str) -> ToolError {
        let mut message = format!("{verb}: {} {}", self.provider, self.message);
        if let Some(status) = self.status {
            message.push_str(&format!(" (HTTP {status})"));
        }
        ToolError::new(ToolErrorCode::LlmProviderError, message.trim().to_owned())
            .with_hint(self.hint.clone())
            .with_detail(json!({
                "provider": self.provider,
                "model": self.model,
                "status": self.status,
                "reason": self.reason,
                "attempts": self.attempts,
            }))
    }
}

impl Provider {
    /// The provider of a call: `provider` and `model` from its arguments, else the
    /// environment, else the defaults (docs/llm.md#choosing-a-provider).
    pub fn resolve(provider: Option<&str>, model: Option<&str>) -> Result<Provider, LlmError> {
        Provider::resolve_with(provider, model, &|name| std::env::var(name).ok())
    }

    /// [`Provider::resolve`] reading variables through `env`.
    pub fn resolve_with(
        provider: Option<&str>,
        model: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Provider, LlmError> {
        let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let named = provider.map(str::to_owned).or_else(|| set(PROVIDER_ENV));
        let kind = match named {
            Some(name) => ProviderKind::parse(&name).ok_or_else(|| {
                LlmError::config(
                    format!("unknown provider `{name}`"),
                    "use anthropic, openai or ollama (--provider or CHROMATE_LLM_PROVIDER)".into(),
                )
            })?,
            None => ProviderKind::ALL
                .into_iter()
                .find(|kind| kind.key_env().is_some_and(|var| set(var).is_some()))
                .unwrap_or(ProviderKind::Ollama),
        };
        let key = kind.key_env().and_then(&set).map(Secret);
        if key.is_none() && kind == ProviderKind::Anthropic {
            return Err(LlmError {
                provider: kind.as_str(),
                ..LlmError::config(
                    "needs an API key".into(),
                    format!("set {ANTHROPIC_KEY_ENV}, or choose another provider"),
                )
            });
        }
        let model = model
            .map(str::to_owned)
            .or_else(|| set(MODEL_ENV))
            .unwrap_or_else(|| kind.default_model().to_owned());
        let base_url = set(BASE_URL_ENV)
            .unwrap_or_else(|| kind.default_base_url().to_owned())
            .trim()
            .trim_end_matches('/')
            .to_owned();
        let timeout = set(TIMEOUT_ENV)
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let provider = Provider {
            kind,
            model,
            base_url,
            key,
            timeout,
        };
        provider.uri().map_err(|message| {
            provider.error("config", message, None, 0, format!("fix {BASE_URL_ENV}"))
        })?;
        Ok(provider)
    }

    fn uri(&self) -> Result<hyper::Uri, String> {
        let url = format!("{}{}", self.base_url, wire::endpoint(self.kind));
        let uri: hyper::Uri = url
            .parse()
            .map_err(|err| format!("bad base URL {}: {err}", self.base_url))?;
        match (uri.scheme_str(), uri.host()) {
            (Some("http" | "https"), Some(_)) => Ok(uri),
            _ => Err(format!(
                "bad base URL {}: expected http:// or https:// and a host",
                self.base_url
            )),
        }
    }

    fn error(
        &self,
        reason: &'static str,
        message: String,
        status: Option<u16>,
        attempts: u32,
        hint: String,
    ) -> LlmError {
        let scrub = |text: &str| match &self.key {
            Some(key) => key.scrub(text),
            None => text.to_owned(),
        };
        LlmError {
            reason,
            message: scrub(&message),
            status,
            hint: scrub(&hint),
            attempts,
            provider: self.kind.as_str(),
            model: self.model.clone(),
        }
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        match (self.kind, &self.key) {
            (ProviderKind::Anthropic, Some(key)) => {
                headers.push(("x-api-key", key.0.clone()));
                headers.push(("anthropic-version", "2023-06-01".to_owned()));
            }
            (ProviderKind::Anthropic, None) => {
                headers.push(("anthropic-version", "2023-06-01".to_owned()));
            }
            (_, Some(key)) => headers.push(("authorization", format!("Bearer {}", key.0))),
            (_, None) => {}
        }
        headers
    }

    /// The hint for a provider's refusal by HTTP status.
    fn status_hint(&self, status: u16) -> String {
        let key = self.kind.key_env().unwrap_or("the server's key");
        match status {
            401 | 403 => format!(
                "the provider refused the API key: check {key} (chromate never prints it)"
            ),
            404 => format!(
                "unknown model `{}` or wrong base URL {}: choose one with --model or {MODEL_ENV}{}",
                self.model,
                self.base_url,
                if self.kind == ProviderKind::Ollama {
                    format!(" (or `ollama pull {}`)", self.model)
                } else {
                    String::new()
                }
            ),
            429 => "rate limited: retried with backoff and still refused; wait, or lower the request rate".into(),
            400 | 413 | 422 => format!(
                "the provider rejected the request: check that model `{}` takes images (and tools), and the image's size",
                self.model
            ),
            _ if status >= 500 => "the provider is failing: retried twice; try again later or another provider".into(),
            _ => "see the provider's message".into(),
        }
    }

    /// One chat turn, transient failures retried ([`RETRIES`], backoff from [`BACKOFF`] or the
    /// provider's `Retry-After` up to [`MAX_RETRY_AFTER`]). Boxed where it is made, so that its
    /// state machine and the HTTP exchange's exist once (crate::Boxed).
    pub fn complete<'a>(
        &'a self,
        request: &'a Request,
    ) -> crate::Boxed<'a, Result<Response, LlmError>> {
        Box::pin(self.complete_unboxed(request))
    }

    async fn complete_unboxed(&self, request: &Request) -> Result<Response, LlmError> {
        let uri = self.uri().map_err(|message| {
            self.error("config", message, None, 0, format!("fix {BASE_URL_ENV}"))
        })?;
        let body =
            serde_json::to_vec(&wire::body(self.kind, &self.model, request)).map_err(|err| {
                self.error("config", format!("request: {err}"), None, 0, String::new())
            })?;
        let headers = self.headers();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let outcome = http::post_json(&uri, &headers, body.clone(), self.timeout).await;
            let (wait, failure) = match outcome {
                Ok(reply) if (200..300).contains(&reply.status) => {
                    return self.read_answer(&reply.body, attempt);
                }
                Ok(reply) => {
                    let message = wire::error_message(&reply.body);
                    let transient = reply.status == 429 || reply.status >= 500;
                    let error = self.error(
                        "http",
                        message,
                        Some(reply.status),
                        attempt,
                        self.status_hint(reply.status),
                    );
                    if !transient {
                        return Err(error);
                    }
                    match reply.retry_after {
                        Some(after) if after > MAX_RETRY_AFTER => {
                            let mut error = error;
                            error.hint = format!(
                                "the provider asked to wait {} s (more than chromate waits, {} s); try again later",
                                after.as_secs(),
                                MAX_RETRY_AFTER.as_secs()
                            );
                            return Err(error);
                        }
                        Some(after) => (after, error),
                        None => (BACKOFF * 2u32.pow(attempt - 1), error),
                    }
                }
                Err(http::HttpFailure::Fatal(message)) => {
                    let hint = if message.contains("no TLS") {
                        "use a build with TLS, or an http:// base URL on this machine".into()
                    } else if message.contains("TLS") {
                        "the provider's certificate is not trusted: chromate trusts the system's store; add its CA there, or name a PEM file with SSL_CERT_FILE".into()
                    } else {
                        format!("fix {BASE_URL_ENV}")
                    };
                    return Err(self.error("config", message, None, attempt, hint));
                }
                Err(http::HttpFailure::Transient(message)) => {
                    let timed_out = message.starts_with("no answer within");
                    let (reason, hint) = if timed_out {
                        (
                            "timeout",
                            format!(
                                "the model did not answer in time: raise {TIMEOUT_ENV} (now {} ms) or use a faster model",
                                self.timeout.as_millis()
                            ),
                        )
                    } else {
                        (
                            "unreachable",
                            format!(
                                "is the provider reachable at {}? ({BASE_URL_ENV})",
                                self.base_url
                            ),
                        )
                    };
                    (
                        BACKOFF * 2u32.pow(attempt - 1),
                        self.error(reason, message, None, attempt, hint),
                    )
                }
            };
            if attempt > RETRIES {
                return Err(failure);
            }
            tracing::debug!(
                "{} answered {failure}; retry {attempt} of {RETRIES} in {} ms",
                self.kind.as_str(),
                wait.as_millis()
            );
            tokio::time::sleep(wait).await;
        }
    }

    fn read_answer(&self, body: &[u8], attempts: u32) -> Result<Response, LlmError> {
        let response = wire::parse(self.kind, body).map_err(|message| {
            self.error(
                "malformed-response",
                message,
                Some(200),
                attempts,
                format!(
                    "the server at {} does not speak {}'s API",
                    self.base_url,
                    self.kind.as_str()
                ),
            )
        })?;
        if response.stop == Stop::Refusal {
            return Err(self.error(
                "refused",
                format!("refused: {}", response.text.trim()),
                Some(200),
                attempts,
                "the model declined the request; rephrase the prompt or use another model".into(),
            ));
        }
        Ok(response)
    }

    /// A JSON answer matching `schema`: the schema goes into the system prompt (and the
    /// provider's JSON mode where it has one); an answer that does not parse or match is sent
    /// back once with what is wrong, then the second failure is the error.
    pub async fn complete_json(
        &self,
        request: &Request,
        schema: &Value,
    ) -> Result<Value, LlmError> {
        let mut request = request.clone();
        request.json_schema = Some(schema.clone());
        let instruction = format!(
            "Answer with one JSON object only, no prose and no code fence, matching this JSON schema:\n{schema}"
        );
        request.system = if request.system.is_empty() {
            instruction
        } else {
            format!("{}\n\n{instruction}", request.system)
        };
        let mut repaired = false;
        loop {
            let response = self.complete(&request).await?;
            let problem = match json_check::extract(&response.text) {
                Ok(value) => match json_check::check(&value, schema) {
                    Ok(()) => return Ok(value),
                    Err(problem) => problem,
                },
                Err(problem) => problem,
            };
            if repaired {
                return Err(self.error(
                    "invalid-json",
                    format!("answered JSON that does not match the schema twice: {problem}"),
                    None,
                    2,
                    "use a stronger model, or --text for a plain description".into(),
                ));
            }
            repaired = true;
            request.messages.push(Message {
                role: Role::Assistant,
                parts: vec![Part::Text(response.text)],
            });
            request.messages.push(Message::user(vec![Part::Text(format!(
                "That answer is not valid: {problem}. Answer again with only the corrected JSON object."
            ))]));
        }
    }
}

#[cfg(test)]
mod tests;
