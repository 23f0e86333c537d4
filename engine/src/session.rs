//! `Session`: one CDP session (the browser's, a page's, a frame's or a worker's) — typed
//! commands, raw commands, and typed event streams.
//!
//! Owns nothing but the session id and a connection handle; cheap to clone. Every command
//! leaves through `Session::call_json`, the one place where a command is bounded by the
//! deadline of the call that sends it (`wait::command_bound`): a command that runs out of that
//! deadline fails [`Error::NoAnswer`]; the per-command timeout (30 s) stays the outer bound.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::broadcast;

use crate::cdp::{Command, Event};
use crate::error::{Error, Result};
use crate::transport::Connection;

pub use crate::transport::{EventMessage, EVENT_QUEUE};

/// The default time a command may take before it fails with `CommandTimeout`.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// A CDP session handle.
#[derive(Clone)]
pub struct Session {
    pub(crate) conn: Connection,
    pub(crate) id: Option<Arc<str>>,
    pub(crate) timeout: Duration,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.id).finish()
    }
}

impl Session {
    pub(crate) fn new(conn: Connection, id: Option<&str>) -> Self {
        Self {
            conn,
            id: id.map(Arc::from),
            timeout: DEFAULT_COMMAND_TIMEOUT,
        }
    }

    /// The CDP session id (`None` for the browser session).
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Sends a typed command and decodes its typed answer. The params are serialised at once,
    /// so the returned future borrows nothing and many commands can be in flight together.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// use chromate::cdp::runtime::EvaluateParams;
    /// let answer = page.session().send(&EvaluateParams::new("1 + 1")).await?;
    /// assert_eq!(answer.result.value, Some(serde_json::json!(2)));
    /// # Ok(()) }
    /// ```
    pub fn send<C: Command>(
        &self,
        command: &C,
    ) -> impl std::future::Future<Output = Result<C::Returns>> + Send + 'static
    where
        C::Returns: Send + 'static,
    {
        self.send_with_timeout(command, self.timeout)
    }

    /// [`send`](Self::send) with its own timeout.
    pub fn send_with_timeout<C: Command>(
        &self,
        command: &C,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Result<C::Returns>> + Send + 'static
    where
        C::Returns: Send + 'static,
    {
        // Only the decoding of the answer is per command type; the call itself is one future
        // type for every command (this function is instantiated for each command used).
        let params = serde_json::value::to_raw_value(command);
        self.call_json(C::METHOD, params, timeout)
            .map(|raw| decode_reply(C::METHOD, &raw?))
    }

    /// Sends `method` with params already serialised (or the error serialising them), within
    /// `timeout` or what is left of the running call's deadline, whichever ends first.
    fn call_json(
        &self,
        method: &str,
        params: serde_json::Result<Box<RawValue>>,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Result<Box<RawValue>>> + Send + 'static {
        let conn = self.conn.clone();
        let id = self.id.clone();
        let method = method.to_string();
        let (timeout, deadline) = crate::wait::command_bound(timeout);
        async move {
            let params = params.map_err(|source| Error::Decode {
                method: method.clone(),
                source,
            })?;
            match conn.call(id.as_deref(), &method, &params, timeout).await {
                Err(Error::CommandTimeout { .. }) if deadline.is_some() => Err(Error::NoAnswer {
                    method,
                    timeout: deadline.map_or(timeout, |d| d.timeout()),
                }),
                other => other,
            }
        }
    }

    /// The escape hatch: any method with JSON params, answered with JSON.
    pub async fn send_raw(
        &self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value> {
        let raw = self.send_raw_value(method, &params).await?;
        decode_reply(method, &raw)
    }

    pub(crate) async fn send_raw_value<P: Serialize>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<Box<RawValue>> {
        let params = serde_json::value::to_raw_value(params);
        self.call_json(method, params, self.timeout).await
    }

    /// A stream of one event type on this session. A subscriber that falls more than
    /// [`crate::transport::EVENT_QUEUE`] events behind loses the oldest and is told how many.
    pub fn events<E: Event>(&self) -> EventStream<E> {
        EventStream {
            conn: self.conn.clone(),
            rx: self.conn.subscribe(),
            session: self.id.clone(),
            _event: PhantomData,
        }
    }

    /// Every event of this session, undecoded.
    pub fn raw_events(&self) -> RawEventStream {
        RawEventStream {
            conn: self.conn.clone(),
            rx: self.conn.subscribe(),
            session: Some(self.id.clone()),
        }
    }
}

/// Typed events of one kind from one session.
pub struct EventStream<E> {
    conn: Connection,
    rx: broadcast::Receiver<Arc<EventMessage>>,
    session: Option<Arc<str>>,
    _event: PhantomData<fn() -> E>,
}

/// What an event stream yields instead of an event.
#[derive(Debug, thiserror::Error)]
pub enum EventStreamError {
    /// The subscriber fell behind and this many events were dropped for it.
    #[error("the subscriber fell behind and lost {0} events")]
    Lagged(u64),
    /// An event arrived that does not decode into the expected type.
    #[error("cannot decode {method}: {message}")]
    Decode {
        /// The event method.
        method: String,
        /// The decoding error.
        message: String,
    },
}

impl<E: Event> EventStream<E> {
    /// The next event; `None` once the connection is closed.
    pub async fn recv(&mut self) -> Option<std::result::Result<E, EventStreamError>> {
        loop {
            match next_message(&mut self.rx, &self.conn).await {
                Ok(message) => {
                    if message.method != E::METHOD
                        || message.session_id.as_deref() != self.session.as_deref()
                    {
                        continue;
                    }
                    return Some(serde_json::from_str(message.params.get()).map_err(|err| {
                        EventStreamError::Decode {
                            method: message.method.clone(),
                            message: err.to_string(),
                        }
                    }));
                }
                Err(broadcast::error::RecvError::Lagged(n_missed)) => {
                    return Some(Err(EventStreamError::Lagged(n_missed)))
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The same events as a `futures::Stream`.
    pub fn into_stream(
        self,
    ) -> impl futures::Stream<Item = std::result::Result<E, EventStreamError>> {
        futures::stream::unfold(self, |mut stream| async move {
            stream.recv().await.map(|item| (item, stream))
        })
    }
}

/// Every event of one session (or of the whole connection), as received.
pub struct RawEventStream {
    conn: Connection,
    rx: broadcast::Receiver<Arc<EventMessage>>,
    /// `None` = every session of the connection.
    session: Option<Option<Arc<str>>>,
}

impl RawEventStream {
    pub(crate) fn all(conn: &crate::transport::Connection) -> Self {
        RawEventStream {
            conn: conn.clone(),
            rx: conn.subscribe(),
            session: None,
        }
    }

    /// The next event; `None` once the connection is closed; `Err(n)` after losing `n` events.
    pub async fn recv(&mut self) -> Option<std::result::Result<Arc<EventMessage>, u64>> {
        loop {
            match next_message(&mut self.rx, &self.conn).await {
                Ok(message)
                    if self
                        .session
                        .as_ref()
                        .is_none_or(|s| message.session_id.as_deref() == s.as_deref()) =>
                {
                    return Some(Ok(message))
                }
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Lagged(n_missed)) => return Some(Err(n_missed)),
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// The next queued event; once the connection has closed, what is still queued and then
/// `Closed`, so streams end instead of waiting forever.
async fn next_message(
    rx: &mut broadcast::Receiver<Arc<EventMessage>>,
    conn: &Connection,
) -> Result<Arc<EventMessage>, broadcast::error::RecvError> {
    tokio::select! {
        biased;
        message = rx.recv() => message,
        _ = conn.closed() => match rx.try_recv() {
            Ok(message) => Ok(message),
            Err(broadcast::error::TryRecvError::Lagged(n)) => Err(broadcast::error::RecvError::Lagged(n)),
            Err(_) => Err(broadcast::error::RecvError::Closed),
        },
    }
}

/// The typed answer of `method` from its raw JSON.
fn decode_reply<T: serde::de::DeserializeOwned>(method: &str, raw: &RawValue) -> Result<T> {
    serde_json::from_str(raw.get()).map_err(|source| Error::Decode {
        method: method.to_string(),
        source,
    })
}
