//! Where a session's server messages go over HTTP: a response or a progress notification to
//! the request it answers; `notifications/tools/list_changed` (`--caps webmcp`,
//! docs/mcp.md#webmcp) to the session's listening stream, the SSE answer of a `GET /mcp` with
//! `Accept: text/event-stream` and the session's id (docs/mcp.md#streamable-http). One such
//! stream per session: a new GET replaces the one before. A change that comes while none is
//! open is kept (once) and sent when the next one opens, so a client that connects late or
//! reconnects never misses that its list changed. Another session's messages never reach it:
//! each session has a server, an outbox and a router of its own.

use super::*;

/// Routes what a session's server sends to the HTTP request it answers.
#[derive(Default)]
pub(super) struct Router {
    /// By internal id (`h<n>`): where its response and progress go.
    pub(super) waiters: Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>,
    /// The session's listening stream.
    listening: Mutex<Listening>,
}

/// The listening stream of one session.
#[derive(Default)]
struct Listening {
    stream: Option<mpsc::UnboundedSender<Value>>,
    /// A list change came while no stream was open.
    missed: Option<Value>,
}

impl Router {
    /// Delivers one message of the server: a response to its request's waiter (which then
    /// goes), a progress notification to the waiter of its token, a list change to the
    /// listening stream; anything else has no request to go with and is dropped (requests of
    /// the server's own are never sent here).
    pub(super) fn deliver(&self, message: &str) {
        let Ok(message) = serde_json::from_str::<Value>(message) else {
            return;
        };
        let method = message.get("method").and_then(Value::as_str);
        let is_response = method.is_none();
        if method == Some("notifications/tools/list_changed") {
            self.tell_listener(message);
            return;
        }
        let key = if is_response {
            message.get("id").and_then(Value::as_str)
        } else if method == Some("notifications/progress") {
            message
                .pointer("/params/progressToken")
                .and_then(Value::as_str)
        } else {
            None
        };
        let Some(key) = key.map(str::to_owned) else {
            return;
        };
        let mut waiters = lock(&self.waiters);
        let sender = if is_response {
            waiters.remove(&key)
        } else {
            waiters.get(&key).cloned()
        };
        if let Some(sender) = sender {
            let _ = sender.send(message);
        }
    }

    fn tell_listener(&self, message: Value) {
        let mut listening = lock(&self.listening);
        let sent = match &listening.stream {
            Some(stream) => stream.send(message.clone()).is_ok(),
            None => false,
        };
        if !sent {
            listening.stream = None;
            listening.missed = Some(message);
        }
    }

    /// A new listening stream (the one before, if any, ends); a change missed meanwhile is
    /// its first message.
    fn listen(&self) -> mpsc::UnboundedReceiver<Value> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut listening = lock(&self.listening);
        if let Some(missed) = listening.missed.take() {
            let _ = sender.send(missed);
        }
        listening.stream = Some(sender);
        receiver
    }

    /// Ends the listening stream (the session ended).
    pub(super) fn stop_listening(&self) {
        let mut listening = lock(&self.listening);
        listening.stream = None;
        listening.missed = None;
    }
}

/// `GET /mcp` with `Accept: text/event-stream`: the session's listening stream, for a session
/// whose list of tools can change (`--caps webmcp`); 405 for any other session and for the
/// 2026-07-28 requests (no session, so no stream of their own), 400 without a session id, 404
/// for an unknown one.
pub(super) fn listen(
    server: &Server,
    headers: &HeaderMap,
    principal: Option<usize>,
) -> Response<HttpBody> {
    let no_stream = || {
        method_not_allowed(
            "method not allowed: this session has nothing to send on its own (no --caps webmcp); POST a JSON-RPC message",
            "POST, DELETE",
        )
    };
    if header(headers, "mcp-protocol-version").is_some_and(|v| MODERN_VERSIONS.contains(&v)) {
        return no_stream();
    }
    let Some(id) = header(headers, "mcp-session-id") else {
        return plain(
            StatusCode::BAD_REQUEST,
            "GET needs an MCP-Session-Id header (send initialize first)",
        );
    };
    let Some(session) = server.session(id, principal) else {
        return plain(
            StatusCode::NOT_FOUND,
            "no such session (it ended or expired)",
        );
    };
    if !lock(&session.core).as_ref().is_some_and(Core::lists_change) {
        return no_stream();
    }
    *lock(&session.last_used) = Instant::now();
    let receiver = session.router.listen();
    let events = futures::stream::unfold(receiver, |mut receiver| async move {
        let message = receiver.recv().await?;
        let event = format!("event: message\ndata: {message}\n\n");
        Some((
            Ok::<_, Infallible>(Frame::data(Bytes::from(event))),
            receiver,
        ))
    });
    sse_response(events)
}
