//! The logs journal: console calls, uncaught errors, network summaries and finished downloads of
//! every page of a browser, in two bounded ring buffers, numbered by one counter that never
//! resets.
//!
//! Owns: the [`Journal`] (entries, the `seq` counter, eviction bookkeeping, waiters), the
//! decoding of the events it journals (`console.rs`: `Runtime.consoleAPICalled`,
//! `Runtime.exceptionThrown`; `network.rs`: `Network.*`), and the filters a logs query takes.
//! Events reach it from the page state handlers on the transport's reader task, so capture
//! starts before a page is resumed and nothing a page logs during its first load is missed.
//!
//! Does not own: bodies, headers or cookies (never read), `Log.entryAdded` (its browser
//! notices, such as failed-resource messages, repeat what network rows already say, so none is
//! journalled), nor any output shape (the command layer serialises entries itself).
//!
//! Buffers: console and error entries keep the newest 500 within 256 KiB, network entries the
//! newest 1000 within 256 KiB (an entry weighs its text + url + 128 bytes), so network traffic
//! never evicts an error. Download entries (pushed by `downloads.rs` when a download ends) share
//! the console buffer: they are few, and like errors they are outcomes an agent must see, so a
//! page's network traffic never evicts them either. Evictions are counted per kind, and a compact record of each evicted
//! entry (seq, kind, level) is kept so `dropped` can say how many evicted entries a filter would
//! have matched; `contains` cannot be checked on an evicted entry, so for it `dropped` counts
//! every evicted entry of the right kind and level (an upper bound).

mod console;
mod network;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::value::RawValue;
use tokio::sync::watch;

use crate::rt::lock;

/// Console and error entries kept at most.
pub(crate) const CONSOLE_CAPACITY: usize = 500;
/// Network entries kept at most.
pub(crate) const NETWORK_CAPACITY: usize = 1000;
/// Bytes each buffer may hold (an entry weighs text + url + 128).
pub(crate) const BUFFER_BYTES: usize = 256 * 1024;
/// `text` is cut after this many characters.
pub(crate) const MAX_TEXT_CHARS: usize = 2000;
/// `url` is cut after this many characters.
pub(crate) const MAX_URL_CHARS: usize = 2048;
/// Records of evicted entries kept for `dropped`; older ones are folded into totals.
const EVICTED_RECORDS: usize = 65_536;
/// Requests in flight remembered per journal (for the method of their response).
const REQUESTS_IN_FLIGHT: usize = 4096;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogKind {
    /// A console call.
    Console,
    /// An uncaught exception or unhandled rejection.
    Error,
    /// A request was sent.
    Request,
    /// A response arrived.
    Response,
    /// A request failed at network level.
    RequestFailed,
    /// A download ended (completed, canceled or failed).
    Download,
}

impl LogKind {
    /// Every kind, in the contract's order.
    pub const ALL: [LogKind; 6] = [
        LogKind::Console,
        LogKind::Error,
        LogKind::Request,
        LogKind::Response,
        LogKind::RequestFailed,
        LogKind::Download,
    ];

    /// The contract's name (`requestfailed`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogKind::Console => "console",
            LogKind::Error => "error",
            LogKind::Request => "request",
            LogKind::Response => "response",
            LogKind::RequestFailed => "requestfailed",
            LogKind::Download => "download",
        }
    }

    /// Parses a contract name.
    pub fn parse(name: &str) -> Option<LogKind> {
        LogKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    fn is_network(self) -> bool {
        matches!(
            self,
            LogKind::Request | LogKind::Response | LogKind::RequestFailed
        )
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Severity of a console or error entry; ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `console.debug`.
    Debug,
    /// `console.log`, `info` and the other methods.
    Info,
    /// `console.warn`.
    Warn,
    /// `console.error`, a failed `console.assert`, uncaught errors.
    Error,
}

impl LogLevel {
    /// The contract's name (`warn`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }

    /// Parses a contract name.
    pub fn parse(name: &str) -> Option<LogLevel> {
        [
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warn,
            LogLevel::Error,
        ]
        .into_iter()
        .find(|level| level.as_str() == name)
    }
}

/// How a download ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DownloadState {
    /// Saved in full.
    Completed,
    /// Canceled: over the size limit, or by the browser or the page.
    Canceled,
    /// The browser finished it but it could not be saved where it belongs.
    Failed,
}

impl DownloadState {
    /// The contract's name (`completed`, `canceled`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            DownloadState::Completed => "completed",
            DownloadState::Canceled => "canceled",
            DownloadState::Failed => "failed",
        }
    }
}

/// What an entry says, by kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogData {
    /// A console call.
    Console {
        /// The level the method maps to.
        level: LogLevel,
        /// The console method (`log`, `warn`, `assert`, ...).
        method: String,
        /// The arguments formatted as the console does.
        text: String,
        /// The calling frame, `url:line:column`.
        origin: Option<String>,
    },
    /// An uncaught exception (`method` `exception`) or unhandled rejection
    /// (`unhandledrejection`); always level error.
    Error {
        /// `exception` or `unhandledrejection`.
        method: String,
        /// The first line of the error, or `Unhandled promise rejection: <reason>`.
        text: String,
        /// Where it was thrown, `url:line:column`.
        origin: Option<String>,
        /// The stack as the page would print it (`Error: …\n    at f (url:1:2)`), when the
        /// error carried one.
        stack: Option<String>,
    },
    /// A request was sent.
    Request {
        /// The request URL.
        url: String,
        /// The HTTP method.
        method: String,
        /// `Document`, `Fetch`, `Image`, ...
        resource_type: String,
    },
    /// A response arrived (any status).
    Response {
        /// The response URL.
        url: String,
        /// The HTTP method of its request.
        method: String,
        /// The HTTP status.
        status: u16,
        /// The response MIME type.
        mime_type: String,
        /// Whether a mock answered it.
        mocked: bool,
    },
    /// A request failed at network level.
    RequestFailed {
        /// The request URL.
        url: String,
        /// The HTTP method.
        method: String,
        /// `net::ERR_…`.
        failure: String,
        /// `origin-policy` or `mock` when chromate blocked it.
        blocked_by: Option<String>,
    },
    /// A download ended.
    Download {
        /// The URL downloaded.
        url: String,
        /// The saved file's name (after numbering), else the browser's suggested name made bare.
        name: String,
        /// How it ended.
        state: DownloadState,
        /// Bytes received, when the browser reported them.
        bytes: Option<u64>,
        /// The saved file (`completed` only).
        path: Option<std::path::PathBuf>,
        /// Why it was not saved (`canceled` by the size limit, `failed`), in words.
        reason: Option<String>,
    },
}

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// Position in the journal; never reused.
    pub seq: u64,
    /// When chromate received it.
    pub time: SystemTime,
    /// The tab's target id.
    pub page: String,
    /// What it says.
    pub data: LogData,
}

impl LogEntry {
    /// The entry's kind.
    pub fn kind(&self) -> LogKind {
        match self.data {
            LogData::Console { .. } => LogKind::Console,
            LogData::Error { .. } => LogKind::Error,
            LogData::Request { .. } => LogKind::Request,
            LogData::Response { .. } => LogKind::Response,
            LogData::RequestFailed { .. } => LogKind::RequestFailed,
            LogData::Download { .. } => LogKind::Download,
        }
    }

    /// The level of a console or error entry.
    pub fn level(&self) -> Option<LogLevel> {
        match self.data {
            LogData::Console { level, .. } => Some(level),
            LogData::Error { .. } => Some(LogLevel::Error),
            _ => None,
        }
    }

    /// The text of a console or error entry, the file name of a download.
    pub fn text(&self) -> Option<&str> {
        match &self.data {
            LogData::Console { text, .. } | LogData::Error { text, .. } => Some(text),
            LogData::Download { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The URL of a network or download entry.
    pub fn url(&self) -> Option<&str> {
        match &self.data {
            LogData::Request { url, .. }
            | LogData::Response { url, .. }
            | LogData::RequestFailed { url, .. }
            | LogData::Download { url, .. } => Some(url),
            _ => None,
        }
    }

    /// Whether this is an error entry in the contract's sense: kind `error`, or a console
    /// entry at level error.
    pub fn is_error(&self) -> bool {
        self.level() == Some(LogLevel::Error)
    }

    fn weight(&self) -> usize {
        self.text().map_or(0, str::len) + self.url().map_or(0, str::len) + 128
    }
}

/// Which entries a list, wait or count selects. The default selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    /// Kinds to keep (empty = all); `Error` also keeps console entries at level error.
    pub kinds: Vec<LogKind>,
    /// That level or more severe; network entries have no level and never pass.
    pub level: Option<LogLevel>,
    /// A case-insensitive substring of the text or the url.
    pub contains: Option<String>,
}

impl LogFilter {
    /// Error entries only (kind `error` and console errors).
    pub fn errors() -> LogFilter {
        LogFilter {
            kinds: vec![LogKind::Error],
            ..LogFilter::default()
        }
    }

    /// Whether `entry` passes.
    pub fn matches(&self, entry: &LogEntry) -> bool {
        if !self.matches_class(entry.kind(), entry.level()) {
            return false;
        }
        match &self.contains {
            None => true,
            Some(needle) => {
                let needle = needle.to_lowercase();
                [entry.text(), entry.url()]
                    .into_iter()
                    .flatten()
                    .any(|hay| hay.to_lowercase().contains(&needle))
            }
        }
    }

    /// The kind and level part of the filter (all that an evicted record can be checked on).
    fn matches_class(&self, kind: LogKind, level: Option<LogLevel>) -> bool {
        let kind_ok = self.kinds.is_empty()
            || self.kinds.contains(&kind)
            || (self.kinds.contains(&LogKind::Error) && level == Some(LogLevel::Error));
        let level_ok = match self.level {
            None => true,
            Some(min) => level.is_some_and(|level| level >= min),
        };
        kind_ok && level_ok
    }
}

/// What [`Journal::list`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogList {
    /// The newest `limit` matches, oldest first.
    pub entries: Vec<LogEntry>,
    /// The highest `seq` issued so far.
    pub cursor: u64,
    /// Evicted entries with `seq > since` the filter would have matched.
    pub dropped: u64,
    /// Whether more entries matched than `limit`.
    pub truncated: bool,
}

/// The logs journal of a browser (or of a command-layer session across browsers). Cheap to clone.
///
/// ```no_run
/// # async fn demo() -> chromate::Result<()> {
/// use std::time::Duration;
/// let browser = chromate::Browser::launch(chromate::LaunchOptions::default()).await?;
/// let page = browser.new_page("data:text/html,<script>console.log('hi')</script>").await?;
/// let journal = browser.journal();
/// let filter = chromate::journal::LogFilter { contains: Some("hi".into()), ..Default::default() };
/// let entry = journal.wait_for(&filter, 0, Duration::from_secs(5)).await;
/// assert_eq!(entry.and_then(|e| e.text().map(str::to_owned)).as_deref(), Some("hi"));
/// # drop(page); browser.close().await; Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct Journal {
    inner: Arc<JournalInner>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("cursor", &self.cursor())
            .finish_non_exhaustive()
    }
}

struct JournalInner {
    state: Mutex<State>,
    /// The cursor after every push: waiters watch it.
    pushed: watch::Sender<u64>,
    capturing: AtomicBool,
}

impl Default for JournalInner {
    fn default() -> Self {
        JournalInner {
            state: Mutex::new(State::default()),
            pushed: watch::channel(0).0,
            capturing: AtomicBool::new(false),
        }
    }
}

#[derive(Default)]
struct State {
    cursor: u64,
    console: Ring,
    network: Ring,
    evicted_by_kind: [u64; LogKind::ALL.len()],
    evicted: VecDeque<Evicted>,
    /// Evicted records folded away when `evicted` was full: count per class, highest seq.
    folded: HashMap<(LogKind, Option<LogLevel>), u64>,
    folded_max_seq: u64,
    /// Requests in flight: (page, request id) → (url, method), for their responses.
    requests: HashMap<(String, String), (String, String)>,
    /// What request interception did, by network request id, until the request's outcome is
    /// journalled (`intercept/` notes it before the outcome events arrive).
    interceptions: HashMap<String, crate::policy::Interception>,
}

#[derive(Debug, Clone, Copy)]
struct Evicted {
    seq: u64,
    kind: LogKind,
    level: Option<LogLevel>,
}

#[derive(Default)]
struct Ring {
    entries: VecDeque<LogEntry>,
    bytes: usize,
}

impl Ring {
    /// Appends `entry`, then evicts the oldest until within `max_len` and `max_bytes` (the
    /// newest entry always stays).
    fn push(&mut self, entry: LogEntry, max_len: usize, max_bytes: usize) -> Vec<LogEntry> {
        self.bytes += entry.weight();
        self.entries.push_back(entry);
        let mut evicted = Vec::new();
        while self.entries.len() > 1 && (self.entries.len() > max_len || self.bytes > max_bytes) {
            if let Some(old) = self.entries.pop_front() {
                self.bytes = self.bytes.saturating_sub(old.weight());
                evicted.push(old);
            }
        }
        evicted
    }
}

impl State {
    fn record_evicted(&mut self, entry: &LogEntry) {
        let kind = entry.kind();
        self.evicted_by_kind[kind.index()] += 1;
        if self.evicted.len() >= EVICTED_RECORDS {
            if let Some(old) = self.evicted.pop_front() {
                *self.folded.entry((old.kind, old.level)).or_default() += 1;
                self.folded_max_seq = self.folded_max_seq.max(old.seq);
            }
        }
        self.evicted.push_back(Evicted {
            seq: entry.seq,
            kind,
            level: entry.level(),
        });
    }

    fn evicted_matching(&self, filter: &LogFilter, since: u64) -> u64 {
        let recent = self
            .evicted
            .iter()
            .filter(|e| e.seq > since && filter.matches_class(e.kind, e.level))
            .count() as u64;
        let folded: u64 = if since < self.folded_max_seq {
            self.folded
                .iter()
                .filter(|((kind, level), _)| filter.matches_class(*kind, *level))
                .map(|(_, n)| *n)
                .sum()
        } else {
            0
        };
        recent + folded
    }

    fn entries(&self) -> impl Iterator<Item = &LogEntry> {
        merge_by_seq(self.console.entries.iter(), self.network.entries.iter())
    }
}

/// Two seq-ordered iterators merged into one.
fn merge_by_seq<'a>(
    a: impl Iterator<Item = &'a LogEntry>,
    b: impl Iterator<Item = &'a LogEntry>,
) -> impl Iterator<Item = &'a LogEntry> {
    let mut a = a.peekable();
    let mut b = b.peekable();
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) => {
            if x.seq <= y.seq {
                a.next()
            } else {
                b.next()
            }
        }
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

impl Journal {
    /// An empty journal (cursor 0, not capturing).
    pub fn new() -> Journal {
        Journal::default()
    }

    /// The highest `seq` issued (0 before the first entry).
    pub fn cursor(&self) -> u64 {
        lock(&self.inner.state).cursor
    }

    /// Whether a browser has captured into this journal.
    pub fn capturing(&self) -> bool {
        self.inner.capturing.load(Ordering::Relaxed)
    }

    pub(crate) fn mark_capturing(&self) {
        self.inner.capturing.store(true, Ordering::Relaxed);
    }

    /// Evictions so far of entries of `kind`.
    pub fn evicted(&self, kind: LogKind) -> u64 {
        lock(&self.inner.state).evicted_by_kind[kind.index()]
    }

    /// The newest `limit` entries with `seq > since` that pass `filter`, oldest first.
    pub fn list(&self, filter: &LogFilter, since: u64, limit: usize) -> LogList {
        let state = lock(&self.inner.state);
        let matching: Vec<&LogEntry> = state
            .entries()
            .filter(|e| e.seq > since && filter.matches(e))
            .collect();
        let skip = matching.len().saturating_sub(limit);
        LogList {
            entries: matching[skip..].iter().map(|e| (*e).clone()).collect(),
            cursor: state.cursor,
            dropped: state.evicted_matching(filter, since),
            truncated: skip > 0,
        }
    }

    /// The first entry with `seq > since` that passes `filter`: one already buffered, else the
    /// next to arrive within `timeout`. `None` when nothing matched in time.
    pub async fn wait_for(
        &self,
        filter: &LogFilter,
        since: u64,
        timeout: Duration,
    ) -> Option<LogEntry> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut pushed = self.inner.pushed.subscribe();
        let mut seen = since;
        let waited = crate::wait::changes::until(&mut pushed, deadline, || {
            let state = lock(&self.inner.state);
            if let Some(entry) = state.entries().find(|e| e.seq > seen && filter.matches(e)) {
                return crate::wait::changes::Check::Done(entry.clone());
            }
            // Entries already looked at need no second look.
            seen = seen.max(state.cursor);
            crate::wait::changes::Check::Pending
        })
        .await;
        match waited {
            crate::wait::changes::Waited::Done(entry) => Some(entry),
            // The sender lives as long as the journal, which `self` holds.
            crate::wait::changes::Waited::TimedOut | crate::wait::changes::Waited::Gone => None,
        }
    }

    /// Empties both buffers (and forgets evictions); `seq` continues. Returns how many entries
    /// were removed.
    pub fn clear(&self) -> u64 {
        let mut state = lock(&self.inner.state);
        let cleared = state.console.entries.len() + state.network.entries.len();
        state.console = Ring::default();
        state.network = Ring::default();
        state.evicted.clear();
        state.folded.clear();
        state.folded_max_seq = 0;
        cleared as u64
    }

    /// For the observation tripwire: error entries with `seq > cursor` still buffered, and how
    /// many error entries with `seq > cursor` were evicted.
    pub fn errors_since(&self, cursor: u64) -> (u64, u64) {
        let filter = LogFilter::errors();
        let state = lock(&self.inner.state);
        let buffered = state
            .console
            .entries
            .iter()
            .filter(|e| e.seq > cursor && e.is_error())
            .count() as u64;
        (buffered, state.evicted_matching(&filter, cursor))
    }

    /// The download entries with `seq > cursor` still buffered, oldest first: the downloads
    /// that ended since `cursor` (an observation after an action reports them).
    pub fn downloads_since(&self, cursor: u64) -> Vec<LogEntry> {
        let state = lock(&self.inner.state);
        state
            .console
            .entries
            .iter()
            .filter(|e| e.seq > cursor && e.kind() == LogKind::Download)
            .cloned()
            .collect()
    }

    /// Appends an entry with the next `seq`, evicting the oldest of its buffer if needed.
    pub(crate) fn push(&self, page: &str, data: LogData) {
        let cursor = {
            let mut state = lock(&self.inner.state);
            state.cursor += 1;
            let entry = LogEntry {
                seq: state.cursor,
                time: SystemTime::now(),
                page: page.to_owned(),
                data,
            };
            let evicted = if entry.kind().is_network() {
                state.network.push(entry, NETWORK_CAPACITY, BUFFER_BYTES)
            } else {
                state.console.push(entry, CONSOLE_CAPACITY, BUFFER_BYTES)
            };
            for old in &evicted {
                state.record_evicted(old);
            }
            state.cursor
        };
        self.inner.pushed.send_replace(cursor);
    }

    /// Journals one event of a page's session (or of one of its frames' sessions). Runs on the
    /// transport's reader task: decodes only what it journals, never blocks.
    pub(crate) fn handle_event(&self, page: &str, method: &str, params: &RawValue) {
        match method {
            "Runtime.consoleAPICalled" => {
                if let Some(data) = console::console_called(params) {
                    self.push(page, data);
                }
            }
            "Runtime.exceptionThrown" => {
                if let Some(data) = console::exception_thrown(params) {
                    self.push(page, data);
                }
            }
            "Network.requestWillBeSent"
            | "Network.responseReceived"
            | "Network.loadingFinished"
            | "Network.loadingFailed" => {
                for data in network::network_event(self, page, method, params) {
                    self.push(page, data);
                }
            }
            _ => {}
        }
    }

    /// Remembers a request in flight, so its response can name its method.
    fn remember_request(&self, page: &str, request_id: &str, url: &str, method: &str) {
        let mut state = lock(&self.inner.state);
        if state.requests.len() >= REQUESTS_IN_FLIGHT {
            // Requests that never finished (hung, or whose tab went away): start afresh.
            state.requests.clear();
        }
        state.requests.insert(
            (page.to_owned(), request_id.to_owned()),
            (url.to_owned(), method.to_owned()),
        );
    }

    /// Notes what interception did to network request `request_id` (a mock answered it or a
    /// rule or the origin policy blocked it), for `mocked` and `blockedBy`.
    pub(crate) fn note_interception(&self, request_id: &str, what: crate::policy::Interception) {
        let mut state = lock(&self.inner.state);
        if state.interceptions.len() >= REQUESTS_IN_FLIGHT {
            state.interceptions.clear();
        }
        state.interceptions.insert(request_id.to_owned(), what);
    }

    /// What interception did to `request_id`, forgotten once read.
    fn take_interception(&self, request_id: &str) -> Option<crate::policy::Interception> {
        lock(&self.inner.state).interceptions.remove(request_id)
    }

    /// The url and method of a request in flight; `finished` forgets it.
    fn request(&self, page: &str, request_id: &str, finished: bool) -> Option<(String, String)> {
        let mut state = lock(&self.inner.state);
        let key = (page.to_owned(), request_id.to_owned());
        if finished {
            state.requests.remove(&key)
        } else {
            state.requests.get(&key).cloned()
        }
    }
}

impl crate::Page {
    /// An ordering round trip through the page's renderer: once it returns, every event the
    /// page sent before (console calls, errors) is in the journal. A page blocked by a dialog
    /// (or gone) returns at once, after at most `timeout`.
    pub async fn sync_events(&self, timeout: Duration) {
        if self.dialog().is_some() || self.is_closed() {
            return;
        }
        let params = crate::cdp::runtime::EvaluateParams::new("0");
        let round_trip = self.unless_dialog(self.session.send_with_timeout(&params, timeout));
        let _ = round_trip.await;
    }
}

/// Cuts `text` after [`MAX_TEXT_CHARS`] characters, saying how many were cut.
pub(crate) fn cut_text(text: String) -> String {
    let total = text.chars().count();
    if total <= MAX_TEXT_CHARS {
        return text;
    }
    let kept: String = text.chars().take(MAX_TEXT_CHARS).collect();
    format!("{kept}… ({} more chars)", total - MAX_TEXT_CHARS)
}

/// Cuts a URL after [`MAX_URL_CHARS`] characters.
pub(crate) fn cut_url(url: &str) -> String {
    match url.char_indices().nth(MAX_URL_CHARS) {
        Some((end, _)) => url[..end].to_owned(),
        None => url.to_owned(),
    }
}
