//! The connection to the browser: one task reads, one writes; responses are matched to
//! requests by id, events are routed to the engine's own state handlers and to subscribers.
//!
//! Owns: message ids, the pending-command table, the event fan-out, and the "connection
//! closed" state that fails every pending command at once. Does not own: what a session or
//! page does with its events (`session.rs`, `page/`), nor how the browser is started
//! (`launch/`).
//!
//! Events reach two kinds of consumers:
//! - **state handlers** (one per CDP session, installed by the engine) run on the reader task
//!   and must not block; they keep frames, lifecycle and dialogs current, so no event the
//!   engine depends on can be lost;
//! - **subscribers** get events through a bounded broadcast queue (capacity
//!   [`EVENT_QUEUE`]); a subscriber that falls behind loses the oldest events and is told how
//!   many it missed, so a slow consumer can neither stall the connection nor grow memory.

mod pipe;
mod surrogates;
mod ws;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::error::{Error, Result};
use crate::rt::lock;

pub(crate) use pipe::PipeEnds;
pub(crate) use surrogates::replace_lone_surrogates_str;

/// The viewport (CSS px) of a browser's pages unless its options say otherwise, launched
/// (`launch/`) or connected ([`ConnectOptions`]). Here, below `launch/`, so that both ways of
/// reaching a browser share it without the transport importing the launcher.
pub(crate) const DEFAULT_VIEWPORT: (u32, u32) = (1280, 800);
/// How long a browser has to answer its first command, launched or connected.
pub(crate) const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How many events a subscriber may fall behind before it loses the oldest.
pub const EVENT_QUEUE: usize = 4096;

/// An event as received: its session, method and raw parameters.
#[derive(Debug)]
pub struct EventMessage {
    /// The CDP session the event belongs to (`None` for the browser session).
    pub session_id: Option<String>,
    /// The protocol method (`Page.loadEventFired`).
    pub method: String,
    /// The parameters, undecoded.
    pub params: Box<RawValue>,
}

/// A state handler: runs on the reader task for every event of one session.
pub(crate) type StateHandler = Arc<dyn Fn(&str, &RawValue) + Send + Sync>;

type Reply = std::result::Result<Box<RawValue>, ErrorBody>;

#[derive(Debug, Deserialize)]
struct ErrorBody {
    code: i64,
    message: String,
    #[serde(default)]
    data: Option<String>,
}

#[derive(Deserialize)]
struct Incoming<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    error: Option<ErrorBody>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
}

#[derive(Serialize)]
struct Outgoing<'a, P: Serialize> {
    id: u64,
    method: &'a str,
    params: &'a P,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

/// A cheap handle on one connection; clones share it.
#[derive(Clone)]
pub(crate) struct Connection {
    inner: Arc<Inner>,
}

struct Inner {
    next_id: AtomicU64,
    pending: Mutex<Pending>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    events: broadcast::Sender<Arc<EventMessage>>,
    handlers: Mutex<HashMap<Option<String>, StateHandler>>,
    closed_tx: tokio::sync::watch::Sender<Option<String>>,
}

struct Pending {
    waiting: HashMap<u64, (String, oneshot::Sender<Reply>)>,
    /// Per page session, how many answers it has sent, the answers of commands whose caller
    /// gave up included: a page still working through a queue of commands (a long run of key
    /// events) answers them one by one, which tells it from a page that answers nothing.
    answered: HashMap<Box<str>, u64>,
    /// Set once the connection is gone; new commands fail at once with this reason.
    closed: Option<String>,
}

/// What the transport reads from and writes to.
pub(crate) enum Wire {
    /// `--remote-debugging-pipe`: NUL-separated JSON on two pipes.
    Pipe(PipeEnds),
    /// A websocket to a browser's DevTools endpoint.
    WebSocket(Box<ws::Socket>),
}

impl Connection {
    /// Starts the reader and writer tasks on `wire`.
    pub(crate) fn start(wire: Wire) -> Self {
        let (outgoing, outgoing_rx) = mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(EVENT_QUEUE);
        let (closed_tx, _) = tokio::sync::watch::channel(None);
        let inner = Arc::new(Inner {
            next_id: AtomicU64::new(1),
            pending: Mutex::new(Pending {
                waiting: HashMap::new(),
                answered: HashMap::new(),
                closed: None,
            }),
            outgoing,
            events,
            handlers: Mutex::new(HashMap::new()),
            closed_tx,
        });
        let conn = Connection { inner };
        match wire {
            Wire::Pipe(ends) => pipe::spawn(ends, conn.clone(), outgoing_rx),
            Wire::WebSocket(socket) => ws::spawn(*socket, conn.clone(), outgoing_rx),
        }
        conn
    }

    /// Sends `method` with `params` on `session` and waits for the raw answer.
    pub(crate) async fn call<P: Serialize>(
        &self,
        session_id: Option<&str>,
        method: &str,
        params: &P,
        timeout: Duration,
    ) -> Result<Box<RawValue>> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = serde_json::to_vec(&Outgoing {
            id,
            method,
            params,
            session_id,
        })
        .map_err(|source| Error::Decode {
            method: method.to_string(),
            source,
        })?;
        let (reply_tx, reply_rx) = oneshot::channel();
        {
            let mut pending = lock(&self.inner.pending);
            if let Some(reason) = &pending.closed {
                return Err(Error::ConnectionClosed {
                    reason: reason.clone(),
                });
            }
            pending.waiting.insert(id, (method.to_string(), reply_tx));
        }
        if self.inner.outgoing.send(frame).is_err() {
            lock(&self.inner.pending).waiting.remove(&id);
            return Err(Error::ConnectionClosed {
                reason: "the writer task ended".into(),
            });
        }
        match tokio::time::timeout(timeout, reply_rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(body))) => {
                let message = match body.data {
                    Some(data) if !data.is_empty() => format!("{}: {data}", body.message),
                    _ => body.message,
                };
                Err(Error::Protocol {
                    method: method.to_string(),
                    code: body.code,
                    message,
                })
            }
            Ok(Err(_)) => Err(Error::ConnectionClosed {
                reason: self.closed_reason(),
            }),
            Err(_) => {
                lock(&self.inner.pending).waiting.remove(&id);
                Err(Error::CommandTimeout {
                    method: method.to_string(),
                    timeout,
                })
            }
        }
    }

    /// Installs the state handler for a session (`None` = the browser session).
    pub(crate) fn set_handler(&self, session_id: Option<String>, handler: StateHandler) {
        lock(&self.inner.handlers).insert(session_id, handler);
    }

    /// Removes a session's state handler (the session is gone) and its count of answers.
    pub(crate) fn remove_handler(&self, session_id: &str) {
        lock(&self.inner.handlers).remove(&Some(session_id.to_string()));
        lock(&self.inner.pending).answered.remove(session_id);
    }

    /// How many answers the page session `session_id` has sent so far (see `Pending`).
    pub(crate) fn answers(&self, session_id: &str) -> u64 {
        lock(&self.inner.pending)
            .answered
            .get(session_id)
            .copied()
            .unwrap_or(0)
    }

    /// A new subscriber to every event of the connection.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<EventMessage>> {
        self.inner.events.subscribe()
    }

    /// Resolves once the connection is closed, with the reason.
    pub(crate) async fn closed(&self) -> String {
        let mut rx = self.inner.closed_tx.subscribe();
        loop {
            if let Some(reason) = rx.borrow_and_update().clone() {
                return reason;
            }
            if rx.changed().await.is_err() {
                return "the connection was dropped".into();
            }
        }
    }

    /// Whether the connection has closed.
    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.inner.pending).closed.is_some()
    }

    pub(crate) fn closed_reason(&self) -> String {
        lock(&self.inner.pending)
            .closed
            .clone()
            .unwrap_or_else(|| "connection lost".into())
    }

    /// Marks the connection closed and fails every pending command at once.
    pub(crate) fn close(&self, reason: &str) {
        let waiting = {
            let mut pending = lock(&self.inner.pending);
            if pending.closed.is_none() {
                pending.closed = Some(reason.to_string());
            }
            std::mem::take(&mut pending.waiting)
        };
        // Dropping the reply senders wakes every waiter with "connection closed".
        drop(waiting);
        // State handlers hold page state that holds connection handles: break the cycle.
        lock(&self.inner.handlers).clear();
        self.inner.closed_tx.send_replace(Some(reason.to_string()));
    }

    /// Routes one frame from the browser. Malformed frames are logged (`tracing`) and
    /// skipped; they never take the connection down. A lone UTF-16 surrogate in page text
    /// becomes U+FFFD first, so one odd character never loses a whole message.
    pub(crate) fn dispatch(&self, frame: &[u8]) {
        let frame = surrogates::replace_lone_surrogates(frame);
        let incoming: Incoming<'_> = match serde_json::from_slice(&frame) {
            Ok(incoming) => incoming,
            Err(err) => {
                ::tracing::warn!(error = %err, "ignoring a malformed cdp message");
                return;
            }
        };
        if let Some(id) = incoming.id {
            let waiter = {
                let mut pending = lock(&self.inner.pending);
                if let Some(session) = incoming.session_id.as_deref() {
                    match pending.answered.get_mut(session) {
                        Some(count) => *count += 1,
                        None => {
                            pending.answered.insert(session.into(), 1);
                        }
                    }
                }
                pending.waiting.remove(&id)
            };
            if let Some((_, reply)) = waiter {
                let outcome = match (incoming.error, incoming.result) {
                    (Some(body), _) => Err(body),
                    (None, Some(result)) => Ok(result.to_owned()),
                    (None, None) => Ok(empty_object()),
                };
                // The caller may have timed out and gone; nothing to do then.
                let _ = reply.send(outcome);
            }
            return;
        }
        let Some(method) = incoming.method else {
            return;
        };
        let params = incoming.params.unwrap_or_else(|| empty_object_ref());
        let session_id = incoming.session_id.map(Cow::into_owned);
        let handler = lock(&self.inner.handlers).get(&session_id).cloned();
        if let Some(handler) = handler {
            handler(&method, params);
        }
        if self.inner.events.receiver_count() > 0 {
            let message = EventMessage {
                session_id,
                method: method.into_owned(),
                params: params.to_owned(),
            };
            // No receiver left between the check and the send is fine.
            let _ = self.inner.events.send(Arc::new(message));
        }
    }
}

fn empty_object() -> Box<RawValue> {
    empty_object_ref().to_owned()
}

fn empty_object_ref() -> &'static RawValue {
    static EMPTY: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| RawValue::from_string("{}".to_string()).unwrap_or_else(|_| unreachable!()))
}

pub(crate) use ws::{connect_websocket, redact_userinfo};
pub use ws::{ConnectOptions, DEFAULT_CONNECT_TIMEOUT};
