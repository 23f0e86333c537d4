//! The test model provider: Anthropic's `/v1/messages`, OpenAI's `/v1/chat/completions` and
//! Ollama's `/api/chat` on one `127.0.0.1` fixture server, answering from a script and
//! recording every request, for the tests of chromate's model-backed tools (docs/llm.md).
//!
//! Owns: the script ([`Step`]: text, a tool call or several, a status with `Retry-After`, a hang, a body
//! that is not JSON, a refusal), each answer written in the format of the endpoint asked,
//! plain HTTP or HTTPS with a test CA ([`ProviderServer::start_tls`]), the key check (a wrong
//! key gets a 401 whose message echoes the key it was sent, as OpenAI's
//! does, so tests prove chromate scrubs it) and the request log. When the script runs out the
//! server answers 500 `script exhausted`, which the tests see as a failure, never a hang.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};

use crate::server::{FixtureServer, Request, Response};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Step {
    /// A text answer.
    Say(String),
    /// A tool call (`name`, arguments object).
    Call(String, Value),
    /// Several tool calls in one answer, in order (a model acting, then ending its step).
    Calls(Vec<(String, Value)>),
    /// An error status with the provider's message, and `Retry-After` seconds when given.
    Fail {
        status: u16,
        retry_after: Option<u64>,
        message: String,
    },
    /// Headers at once, the body a minute later: the client's timeout ends it.
    Hang,
    /// A 200 whose body is not JSON.
    Garbage,
    /// The model declines (Anthropic `stop_reason: refusal`, OpenAI `refusal`).
    Refuse(String),
}

impl Step {
    pub fn say(text: impl Into<String>) -> Step {
        Step::Say(text.into())
    }

    /// A tool call.
    pub fn call(name: &str, arguments: Value) -> Step {
        Step::Call(name.to_owned(), arguments)
    }

    pub fn fail(status: u16, retry_after: Option<u64>) -> Step {
        Step::Fail {
            status,
            retry_after,
            message: format!("scripted failure {status}"),
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `/v1/messages`, `/v1/chat/completions` or `/api/chat`.
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The request body as JSON (`null` if it was not JSON).
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Step>,
    requests: Vec<Recorded>,
    /// The key requests must carry (`x-api-key` or `Bearer`), when set.
    key: Option<String>,
    /// Answers so far: each tool call's id is `…_<answer>_<n>`, unique in a conversation.
    answers: usize,
}

/// A running test provider; dropping it stops its server.
pub struct ProviderServer {
    server: FixtureServer,
    state: Arc<Mutex<State>>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

const PATHS: [&str; 3] = ["/v1/messages", "/v1/chat/completions", "/api/chat"];

impl ProviderServer {
    /// Starts on a thread of its own (usable from sync and async tests alike).
    pub fn start(script: Vec<Step>) -> io::Result<ProviderServer> {
        ProviderServer::serving(FixtureServer::start_detached()?, script)
    }

    /// [`ProviderServer::start`] over HTTPS with `cert`'s leaf (a client trusts its CA), as a
    /// hosted provider answers.
    pub fn start_tls(script: Vec<Step>, cert: &crate::tls::TlsCert) -> io::Result<ProviderServer> {
        let server = FixtureServer::start_detached_tls_serving(crate::server::pages_dir(), cert)?;
        ProviderServer::serving(server, script)
    }

    fn serving(server: FixtureServer, script: Vec<Step>) -> io::Result<ProviderServer> {
        let state = Arc::new(Mutex::new(State {
            script: script.into(),
            ..State::default()
        }));
        for path in PATHS {
            let state = state.clone();
            server.route(path, move |request| answer(&state, request));
        }
        Ok(ProviderServer { server, state })
    }

    /// Requests must carry `key`; others get a 401 that echoes what they sent.
    pub fn require_key(&self, key: &str) {
        lock(&self.state).key = Some(key.to_owned());
    }

    /// The base URL for `provider` (`CHROMATE_LLM_BASE_URL`): the origin, or `…/v1` for
    /// OpenAI, whose paths start after it.
    pub fn base_url(&self, provider: &str) -> String {
        match provider {
            "openai" => format!("{}/v1", self.server.origin()),
            _ => self.server.origin(),
        }
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.state).requests.clone()
    }

    /// Appends steps to the script.
    pub fn push(&self, steps: impl IntoIterator<Item = Step>) {
        lock(&self.state).script.extend(steps);
    }

    /// Script steps not yet used.
    pub fn remaining(&self) -> usize {
        lock(&self.state).script.len()
    }
}

fn answer(state: &Mutex<State>, request: &Request) -> Response {
    let body = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let mut state = lock(state);
    state.requests.push(Recorded {
        path: request.path.clone(),
        headers: request.headers.clone(),
        body,
    });
    if let Some(key) = state.key.clone() {
        let sent = request
            .header("x-api-key")
            .map(str::to_owned)
            .or_else(|| {
                request
                    .header("authorization")
                    .and_then(|value| value.strip_prefix("Bearer "))
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        if sent != key {
            return error(
                &request.path,
                401,
                None,
                &format!("Incorrect API key provided: {sent}. You can find your API key in your account settings."),
            );
        }
    }
    let Some(step) = state.script.pop_front() else {
        return error(&request.path, 500, None, "script exhausted");
    };
    state.answers += 1;
    let answer = state.answers;
    drop(state);
    match step {
        Step::Say(text) => success(&request.path, &text, Vec::new(), answer),
        Step::Call(name, arguments) => success(&request.path, "", vec![(name, arguments)], answer),
        Step::Calls(calls) => success(&request.path, "", calls, answer),
        Step::Fail {
            status,
            retry_after,
            message,
        } => error(&request.path, status, retry_after, &message),
        Step::Hang => Response::json(&json!({})).body_after(Duration::from_secs(60)),
        Step::Garbage => Response::new(200)
            .header("Content-Type", "application/json")
            .body("{\"choices\": [ this is not json"),
        Step::Refuse(text) => refusal(&request.path, &text),
    }
}

fn success(path: &str, text: &str, calls: Vec<(String, Value)>, answer: usize) -> Response {
    let body = match path {
        "/v1/messages" => {
            let mut content = Vec::new();
            if !text.is_empty() {
                content.push(json!({ "type": "text", "text": text }));
            }
            for (n, (name, arguments)) in calls.iter().enumerate() {
                content.push(json!({ "type": "tool_use", "id": format!("toolu_{answer}_{n}"), "name": name, "input": arguments }));
            }
            let stop = if calls.is_empty() {
                "end_turn"
            } else {
                "tool_use"
            };
            json!({ "id": "msg_1", "type": "message", "role": "assistant", "content": content, "stop_reason": stop })
        }
        "/v1/chat/completions" => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(n, (name, arguments))| {
                    json!({ "id": format!("call_{answer}_{n}"), "type": "function", "function": { "name": name, "arguments": arguments.to_string() } })
                })
                .collect();
            let finish = if tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            };
            let mut message = json!({ "role": "assistant", "content": text });
            if !tool_calls.is_empty() {
                message["tool_calls"] = json!(tool_calls);
            }
            json!({ "id": "chatcmpl-1", "object": "chat.completion", "choices": [{ "index": 0, "message": message, "finish_reason": finish }] })
        }
        _ => {
            let mut message = json!({ "role": "assistant", "content": text });
            if !calls.is_empty() {
                // Ollama's tool calls carry no id and their arguments as an object.
                let tool_calls: Vec<Value> = calls
                    .iter()
                    .map(|(name, arguments)| json!({ "function": { "name": name, "arguments": arguments } }))
                    .collect();
                message["tool_calls"] = json!(tool_calls);
            }
            json!({ "model": "test", "message": message, "done": true, "done_reason": "stop" })
        }
    };
    Response::json(&body)
}

fn refusal(path: &str, text: &str) -> Response {
    let body = match path {
        "/v1/messages" => json!({
            "content": [{ "type": "text", "text": text }], "stop_reason": "refusal",
        }),
        "/v1/chat/completions" => json!({
            "choices": [{ "message": { "role": "assistant", "content": null, "refusal": text }, "finish_reason": "stop" }],
        }),
        _ => json!({ "message": { "role": "assistant", "content": text }, "done": true }),
    };
    Response::json(&body)
}

fn error(path: &str, status: u16, retry_after: Option<u64>, message: &str) -> Response {
    let body = match path {
        "/v1/messages" => {
            json!({ "type": "error", "error": { "type": "api_error", "message": message } })
        }
        "/v1/chat/completions" => {
            json!({ "error": { "message": message, "type": "invalid_request_error", "code": null } })
        }
        _ => json!({ "error": message }),
    };
    let mut response = Response::json(&body).status(status);
    if let Some(seconds) = retry_after {
        response = response.header("Retry-After", seconds.to_string());
    }
    response
}
