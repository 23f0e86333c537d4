//! What the HTTP server's accept loop bounds (docs/mcp.md#streamable-http, "Connections"): the
//! time a connection may take to send its request headers, the number of connections open at
//! once, and what happens when `accept` fails (no more file descriptors): a pause that grows,
//! and one line on stderr, not one per error.
//!
//! A connection is *half-open* until the headers of its first request are complete, and
//! *established* after. The two are kept apart so that connections which never finish their
//! headers cannot lock real clients out: half-open ones have a budget of their own (half the
//! cap), and a new connection that finds the budget (or the cap) full evicts the oldest
//! half-open one instead of being refused. Only when established connections fill the cap is a
//! new one answered 503. Sockets are bounded apart from that bookkeeping (the cap and the
//! budget together, under the descriptor limit), so an evicted connection that has not closed
//! yet still counts; at that bound a new connection waits up to [`SOCKET_WAIT`] for one to
//! close before it is answered 503.
//!
//! Owns: the limits (defaults, the test knobs `CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS` and
//! `CHROMATE_MCP_HTTP_MAX_CONNECTIONS`, the cap kept under half the descriptor limit), the count
//! of open sockets, the half-open and established connections ([`Gate`]), the 503 written to a
//! connection over the cap, and the backoff. Does not own HTTP itself (`http.rs`, hyper).

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chromate_command::sync::lock;
use std::time::{Duration, Instant};

/// How long a connection may take to send a request's headers, by default.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections open at once, by default (and at most half the descriptor limit).
const MAX_CONNECTIONS: usize = 512;
/// The first pause after a failed accept; each failure in a row doubles it, up to the most.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const MOST_PAUSE: Duration = Duration::from_secs(1);
/// How long a new connection may wait for an evicted one to close when sockets are at their
/// bound.
pub(crate) const SOCKET_WAIT: Duration = Duration::from_secs(1);
/// At most one line about failed accepts this often.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The limits of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) header_timeout: Duration,
    pub(crate) max_connections: usize,
}

impl Limits {
    /// The defaults, or the test knobs when set: `CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS` (1 to
    /// 600000) and `CHROMATE_MCP_HTTP_MAX_CONNECTIONS` (1 to 100000; taken as given, so a test
    /// can reach the descriptor limit). A value that does not parse is ignored with a warning.
    pub(crate) fn from_env(
        env: &dyn Fn(&str) -> Option<String>,
        fd_limit: Option<u64>,
    ) -> (Limits, Vec<String>) {
        let mut warnings = Vec::new();
        let mut knob = |name: &str, range: std::ops::RangeInclusive<u64>| {
            let text = env(name)?;
            let value = text
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|v| range.contains(v));
            if value.is_none() {
                warnings.push(format!(
                    "{name}={text:?} ignored: a whole number from {} to {}",
                    range.start(),
                    range.end()
                ));
            }
            value
        };
        let header_timeout = knob("CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS", 1..=600_000)
            .map_or(HEADER_TIMEOUT, Duration::from_millis);
        let max_connections = match knob("CHROMATE_MCP_HTTP_MAX_CONNECTIONS", 1..=100_000) {
            Some(max) => usize::try_from(max).unwrap_or(MAX_CONNECTIONS),
            None => {
                let half = fd_limit
                    .map(|limit| usize::try_from(limit / 2).unwrap_or(usize::MAX))
                    .unwrap_or(MAX_CONNECTIONS);
                MAX_CONNECTIONS.min(half).max(8)
            }
        };
        (
            Limits {
                header_timeout,
                max_connections,
            },
            warnings,
        )
    }

    /// How many connections may be half-open (headers not complete) at once: half the cap.
    pub(crate) fn max_half_open(&self) -> usize {
        (self.max_connections / 2).max(1)
    }

    /// How many sockets may be open at once: the cap, plus room for the evicted half-open
    /// connections that have not closed yet (at most the half-open budget's worth).
    pub(crate) fn max_sockets(&self) -> usize {
        self.max_connections + self.max_half_open()
    }
}

/// This process's soft limit of open files, when it has one.
#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) fn fd_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit struct, which `limit` is, and touches nothing else.
    let status = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (status == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

#[cfg(not(unix))]
pub(crate) fn fd_limit() -> Option<u64> {
    None
}

/// The sockets open now, each counted while its [`Slot`] lives.
#[derive(Debug, Default, Clone)]
pub(crate) struct Connections(Arc<SocketCount>);

#[derive(Debug, Default)]
pub(crate) struct SocketCount {
    open: AtomicUsize,
    /// Told each time a slot is freed.
    freed: tokio::sync::Notify,
}

impl Connections {
    /// A slot for one more connection, unless `max` are open.
    pub(crate) fn take(&self, max: usize) -> Option<Slot> {
        self.0
            .open
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |open| {
                (open < max).then_some(open + 1)
            })
            .ok()
            .map(|_| Slot(self.0.clone()))
    }

    /// [`Connections::take`], waiting up to `within` for a slot to be freed when `max` are
    /// open: connections just evicted still hold their sockets until their tasks run.
    pub(crate) async fn take_within(&self, max: usize, within: Duration) -> Option<Slot> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let freed = self.0.freed.notified();
            tokio::pin!(freed);
            // Registered before the check, so a slot freed in between is not missed.
            freed.as_mut().enable();
            if let Some(slot) = self.take(max) {
                return Some(slot);
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return None;
            }
        }
    }
}

/// One open socket; dropping it frees its place.
pub(crate) struct Slot(Arc<SocketCount>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.freed.notify_waiters();
    }
}

/// The connections admitted now: the half-open ones in the order they came, and the count of
/// established ones. Shared by the accept loop and every connection's task.
#[derive(Debug)]
pub(crate) struct Gate {
    state: Mutex<GateState>,
    max_connections: usize,
    max_half_open: usize,
}

#[derive(Debug, Default)]
struct GateState {
    /// The half-open connections by admission number (oldest first), each with the signal that
    /// evicts it.
    half_open: BTreeMap<u64, Arc<tokio::sync::Notify>>,
    established: usize,
    next_id: u64,
}

impl Gate {
    pub(crate) fn new(limits: &Limits) -> Arc<Gate> {
        Arc::new(Gate {
            state: Mutex::new(GateState::default()),
            max_connections: limits.max_connections,
            max_half_open: limits.max_half_open(),
        })
    }

    /// Admits one new connection as half-open, evicting the oldest half-open connection when
    /// the half-open budget or the cap is full; `None` when established connections alone fill
    /// the cap (the caller answers 503).
    pub(crate) fn admit(self: &Arc<Gate>) -> Option<Admission> {
        let mut state = lock(&self.state);
        if state.half_open.len() >= self.max_half_open {
            state.evict_oldest();
        }
        if state.established + state.half_open.len() >= self.max_connections
            && !state.evict_oldest()
        {
            return None;
        }
        let id = state.next_id;
        state.next_id += 1;
        let evicted = Arc::new(tokio::sync::Notify::new());
        state.half_open.insert(id, evicted.clone());
        Some(Admission {
            gate: self.clone(),
            id,
            evicted,
            established: AtomicBool::new(false),
        })
    }

    /// The half-open and the established connections now.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        let state = lock(&self.state);
        (state.half_open.len(), state.established)
    }
}

impl GateState {
    /// Signals the oldest half-open connection to close; false when there is none.
    fn evict_oldest(&mut self) -> bool {
        match self.half_open.pop_first() {
            Some((_, evicted)) => {
                // A permit is stored when its task is not waiting yet, so none is lost.
                evicted.notify_one();
                true
            }
            None => false,
        }
    }
}

/// One admitted connection, half-open until [`Admission::headers_complete`]; dropping it
/// frees its place.
#[derive(Debug)]
pub(crate) struct Admission {
    gate: Arc<Gate>,
    id: u64,
    evicted: Arc<tokio::sync::Notify>,
    established: AtomicBool,
}

impl Admission {
    /// The connection's request headers are complete: it becomes established (once). False
    /// when it was evicted first, and is closing.
    pub(crate) fn headers_complete(&self) -> bool {
        if self.established.load(Ordering::SeqCst) {
            return true;
        }
        let mut state = lock(&self.gate.state);
        if state.half_open.remove(&self.id).is_none() {
            return false;
        }
        state.established += 1;
        self.established.store(true, Ordering::SeqCst);
        true
    }

    /// Returns when the connection has been evicted (never once it is established).
    pub(crate) async fn evicted(&self) {
        self.evicted.notified().await;
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut state = lock(&self.gate.state);
        if self.established.load(Ordering::SeqCst) {
            state.established -= 1;
        } else {
            state.half_open.remove(&self.id);
        }
    }
}

/// What a connection over the cap gets before it is closed, if its socket takes it at once.
pub(crate) fn refuse(stream: &tokio::net::TcpStream) {
    const BODY: &str = "too many open connections to this server; retry in a moment\n";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Retry-After: 1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    // Never waits: a client that does not read gets the close alone.
    let _ = stream.try_write(answer.as_bytes());
}

/// The accept loop's state after failures: how long to pause, and what was said.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    /// The pause after the latest failure (none since the last accept that worked).
    pause: Option<Duration>,
    /// When the last line was written, and the failures since.
    logged_at: Option<Instant>,
    unlogged: u64,
}

impl Backoff {
    /// An accept worked: the next failure starts a new burst at the shortest pause.
    pub(crate) fn accepted(&mut self) {
        self.pause = None;
    }

    /// An accept failed: the pause before the next one, and the line to write, if it is time
    /// for one (the first failure, then at most one every 10 s with the count since).
    pub(crate) fn failed(&mut self, err: &io::Error, now: Instant) -> (Duration, Option<String>) {
        let pause = self
            .pause
            .map_or(FIRST_PAUSE, |pause| (pause * 2).min(MOST_PAUSE));
        self.pause = Some(pause);
        let due = self
            .logged_at
            .is_none_or(|at| now.duration_since(at) >= LOG_EVERY);
        if !due {
            self.unlogged += 1;
            return (pause, None);
        }
        let earlier = match std::mem::take(&mut self.unlogged) {
            0 => String::new(),
            n => format!(" ({n} more failures since the last such line)"),
        };
        self.logged_at = Some(now);
        let line = format!(
            "chromate: mcp --http: accept failed: {err}{earlier}; pausing new connections (up to 1 s at a time) until it works, and saying so at most every 10 s"
        );
        (pause, Some(line))
    }
}

/// Waits until `until`, or forever when there is no pause (a `select!` branch).
pub(crate) async fn paused(until: Option<tokio::time::Instant>) {
    match until {
        Some(until) => tokio::time::sleep_until(until).await,
        None => std::future::pending().await,
    }
}
