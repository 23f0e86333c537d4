//! The MCP server loop over stdio: reading frames, dispatching methods,
//! scheduling tool calls, progress, cancellation and shutdown (docs/mcp.md#protocol-eras).
//!
//! Owns: the stdin reader thread, the stdout writer thread, the method
//! table of docs/mcp.md#protocol-eras, the tool-call queue and its worker (`server/worker.rs`:
//! calls without `tab` one at a time, calls on different tabs side by side),
//! `notifications/cancelled`, `notifications/progress`, turning tool results
//! into MCP results (spilling and the response cap applied), and the
//! shutdown sequence. Does not own argument rules (`tools/`), framing and
//! JSON-RPC shapes (`jsonrpc.rs`) or browser state (`chromate-command`'s `session/`).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, watch, Notify};

use crate::mcp::era::{self, Era};
use crate::mcp::jsonrpc::{self, FrameDecoder, FrameEvent, Incoming, Message, RpcError};
use crate::mcp::resources::{self, ReadError};
use chromate_command::artifacts::{cap_response, WriteError};
use chromate_command::config::Config;
use chromate_command::session::ToolSession;
use chromate_command::tools::{
    Cancel, Caps, Defaults, Progress, Registry, Runs, ToolDecl, Unprepared,
};
use chromate_command::Reply;

/// Protocol versions we speak; the last is the default (docs/mcp.md#protocol-eras).
pub(crate) const PROTOCOL_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const LATEST_VERSION: &str = "2025-11-25";
/// The one revision whose sessions send JSON-RPC batches.
const BATCH_VERSION: &str = "2025-03-26";
/// The legacy revisions' "Resource not found" error code.
const RESOURCE_NOT_FOUND: i64 = -32002;

/// The `instructions` of the initialize result (docs/mcp.md#protocol-eras), verbatim.
pub(crate) const INSTRUCTIONS: &str = "One browser per session. Page-changing tools add a text block: the page as numbered lines (`e7: button \"Save\" #save`), later only +/- changes. Pass `ref=e7` (or `e7`) as the next selector. Refs are session state: never put them in tests; browser_locators gives durable selectors. A removed element or a navigation makes a ref STALE_REF; the error carries a recovery snapshot with current refs. Probe guesses with browser_exists; branch on structuredContent.error.code.";

/// How long a running call gets to stop after shutdown cancels it; then its
/// task is aborted so the shutdown hook can take the session.
const SHUTDOWN_CALL_GRACE: Duration = Duration::from_millis(1500);
/// How long taking the session may take once the call is gone.
const SHUTDOWN_LOCK_GRACE: Duration = Duration::from_millis(300);
/// How long the backend's shutdown hook gets (it kills the browser after 2 s).
const SHUTDOWN_HOOK_GRACE: Duration = Duration::from_millis(2500);
/// How long the writer gets to flush what is already queued.
const SHUTDOWN_FLUSH_GRACE: Duration = Duration::from_millis(300);
const PROGRESS_DELAY: Duration = Duration::from_secs(1);
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
const STDIN_CHUNK: usize = 64 * 1024;

/// The stdout writer's handle: every message goes through here, one per line.
#[derive(Debug, Clone)]
pub(crate) struct Outbox {
    sender: mpsc::UnboundedSender<String>,
    /// The JSON-RPC batches (2025-03-26) whose responses are still being gathered.
    batches: Arc<Mutex<Vec<PendingBatch>>>,
}

/// A batch being answered: the ids of its requests not yet answered, and the responses so far.
/// Once every request is answered (or cancelled) the responses go out as one array.
#[derive(Debug)]
struct PendingBatch {
    waiting: Vec<Value>,
    responses: Vec<Value>,
}

/// What [`Outbox::close`] queues: never a message (every message is a JSON document), so the
/// writer reads it as "flush what came before and stop".
const CLOSE: &str = "";

impl Outbox {
    /// An outbox and the receiving end its messages arrive at, one serialised message each.
    pub(crate) fn channel() -> (Outbox, mpsc::UnboundedReceiver<String>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let batches = Arc::new(Mutex::new(Vec::new()));
        (Outbox { sender, batches }, receiver)
    }

    pub(crate) fn send(&self, message: &Value) {
        let is_response = message.get("method").is_none();
        let message = match message.get("id") {
            Some(id) if is_response => match self.gather(id, Some(message)) {
                Gathered::NotInBatch => message.clone(),
                Gathered::Held => return,
                Gathered::Complete(responses) => Value::Array(responses),
            },
            _ => message.clone(),
        };
        // A closed writer means stdout is gone; there is no one left to tell.
        let _ = self.sender.send(message.to_string());
    }

    fn batches(&self) -> std::sync::MutexGuard<'_, Vec<PendingBatch>> {
        chromate_command::sync::lock(&self.batches)
    }

    /// Starts gathering the responses of a batch: `waiting` holds its requests' ids,
    /// `responses` the answers already known (its invalid items'). With nothing to wait for,
    /// the answers go out at once (none at all for a batch of notifications).
    fn open_batch(&self, waiting: Vec<Value>, responses: Vec<Value>) {
        if waiting.is_empty() {
            if !responses.is_empty() {
                let _ = self.sender.send(Value::Array(responses).to_string());
            }
            return;
        }
        self.batches().push(PendingBatch { waiting, responses });
    }

    /// A request of a batch that will get no response (it was cancelled): the batch stops
    /// waiting for it.
    fn forget(&self, id: &Value) {
        if let Gathered::Complete(responses) = self.gather(id, None) {
            if !responses.is_empty() {
                let _ = self.sender.send(Value::Array(responses).to_string());
            }
        }
    }

    /// Files the response to `id` (or its absence) with the batch waiting for it.
    fn gather(&self, id: &Value, response: Option<&Value>) -> Gathered {
        let mut batches = self.batches();
        let Some(index) = batches.iter().position(|batch| batch.waiting.contains(id)) else {
            return Gathered::NotInBatch;
        };
        let batch = &mut batches[index];
        if let Some(at) = batch.waiting.iter().position(|waiting| waiting == id) {
            batch.waiting.remove(at);
        }
        if let Some(response) = response {
            batch.responses.push(response.clone());
        }
        if !batch.waiting.is_empty() {
            return Gathered::Held;
        }
        Gathered::Complete(batches.remove(index).responses)
    }

    /// Tells the writer to flush what is queued and stop.
    fn close(&self) {
        let _ = self.sender.send(CLOSE.to_owned());
    }
}

/// Where [`Outbox::gather`] put a response.
enum Gathered {
    NotInBatch,
    Held,
    Complete(Vec<Value>),
}

/// A tool call waiting for the worker.
struct QueuedCall {
    id: Value,
    decl: &'static ToolDecl,
    arguments: Map<String, Value>,
    progress: Progress,
    /// The era its request came in; its result is decorated for it.
    era: Era,
}

/// A call the worker took from the queue (waiting for its tab or running), its id and its
/// cancellation switch.
struct RunningCall {
    /// Unique among the calls of this server (JSON-RPC ids are the client's).
    seq: u64,
    id: Value,
    cancel: watch::Sender<bool>,
    /// Set once the call's task is spawned; shutdown aborts a call that
    /// ignores cancellation.
    abort: Option<tokio::task::AbortHandle>,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<QueuedCall>,
    running: Vec<RunningCall>,
    /// The next [`RunningCall::seq`].
    next_seq: u64,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    wake: Notify,
    outbox: Outbox,
    session: tokio::sync::Mutex<ToolSession>,
    /// Calls without `tab` hold it exclusively, calls on a tab shared (`server/worker.rs`).
    gate: Arc<tokio::sync::RwLock<()>>,
    /// The end of the last call taken for each tab: the next call on that tab waits for it.
    tails: Mutex<std::collections::HashMap<String, tokio::sync::oneshot::Receiver<()>>>,
    defaults: Defaults,
    /// The tools this session offers: the 28 and those of the capabilities asked for
    /// (`--caps audit,flows`).
    registry: Registry,
    /// Where resources/list and resources/read look; fixed at start, so they never wait
    /// for the session lock.
    roots: resources::Roots,
    /// `--session NAME`: tool calls go to that CLI session's daemon.
    attached: Option<Attached>,
    /// `--caps webmcp`: the active page's tools as `webmcp_<name>` tools (`server/webmcp.rs`).
    webmcp: Option<webmcp::PageTools>,
    /// The client's roots as directories (uploads may read there); the session holds the
    /// same list.
    client_roots: Arc<Mutex<Vec<std::path::PathBuf>>>,
}

impl Shared {
    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        chromate_command::sync::lock(&self.queue)
    }
}

/// Why the read loop ended.
enum Input {
    Event(FrameEvent),
    Eof,
}

/// Runs the server until stdin closes or a signal arrives; returns the exit status. With
/// `attach`, tool calls run in that CLI session's daemon (started now if none runs), whose
/// directories resources are served from.
pub(crate) async fn serve(config: Config, attach: Option<String>, flows: bool) -> i32 {
    let (outbox, out_rx) = Outbox::channel();
    let Some(writer) = start_stdout_writer(out_rx) else {
        eprintln!("chromate: cannot start the stdout writer");
        return 1;
    };
    let mut session = ToolSession::new(config);
    let shared_browser = if session.config.isolated {
        let shared = chromate_command::shared::SharedBrowser::default();
        session.browser.shared = Some(shared.clone());
        Some(shared)
    } else {
        None
    };
    let mut roots = None;
    let attached = match attach {
        None => None,
        Some(name) => match attach_session(&name).await {
            Ok((attached, info)) => {
                roots = Some(resources::Roots {
                    traces: info.session_dir.join("traces"),
                    downloads: info.session_dir.join("downloads"),
                    session: info.session_dir,
                });
                Some(attached)
            }
            Err(message) => {
                eprintln!("chromate: mcp --session {name}: {message}");
                return 1;
            }
        },
    };
    let options = CoreOptions {
        flows,
        ask_roots: true,
    };
    let mut core = Core::start(session, outbox.clone(), attached, roots, options);

    let (in_tx, mut in_rx) = mpsc::channel::<Input>(64);
    // A plain thread: a blocking stdin read cannot be cancelled, and the
    // process exits without joining it.
    let spawned = std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || read_stdin(in_tx));
    if let Err(err) = spawned {
        eprintln!("chromate: cannot start the stdin reader: {err}");
        return 1;
    }

    let mut signals = crate::signals::Signals::new();
    loop {
        tokio::select! {
            input = in_rx.recv() => match input {
                Some(Input::Event(FrameEvent::Frame(frame))) => core.frame(&frame),
                Some(Input::Event(FrameEvent::TooLarge)) => {
                    outbox.send(&RpcError::frame_too_large().to_json());
                }
                Some(Input::Eof) | None => break,
            },
            () = signals.recv() => break,
        }
    }
    core.stop().await;
    if let Some(shared) = shared_browser {
        let _ = tokio::time::timeout(SHUTDOWN_HOOK_GRACE, shared.close()).await;
    }
    outbox.close();
    let _ = tokio::time::timeout(SHUTDOWN_FLUSH_GRACE, writer).await;
    0
}

/// How a [`Core`] serves its client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CoreOptions {
    /// `--caps flows`: the flows tools are offered beside the 28.
    pub(crate) flows: bool,
    /// Ask a client that declares roots for them (stdio; never on HTTP, where a request of the
    /// server's own has no stream to go on).
    pub(crate) ask_roots: bool,
}

/// One MCP session's server: its method table, its tool-call queue and worker, and its
/// dispatcher session. The stdio front end runs one; the HTTP front end one per MCP session
/// (and one for the stateless 2026-07-28 requests). Every message it sends goes to its
/// [`Outbox`].
pub(crate) struct Core {
    shared: Arc<Shared>,
    dispatcher: Dispatcher,
    worker: tokio::task::JoinHandle<()>,
    /// `--caps webmcp`: the task that keeps the page's tools projected (`server/webmcp.rs`).
    watcher: Option<tokio::task::JoinHandle<()>>,
}

impl Core {
    /// Starts the worker of `session`; with `attached`, tool calls go to that CLI session's
    /// daemon, and `roots` (its directories) replaces the session's own.
    fn start(
        session: ToolSession,
        outbox: Outbox,
        attached: Option<Attached>,
        roots: Option<resources::Roots>,
        options: CoreOptions,
    ) -> Core {
        let defaults = Defaults {
            agent_timeout_ms: session.config.agent_timeout_ms,
        };
        let caps = Caps {
            audit: session.config.caps_audit,
            flows: options.flows,
            webmcp: session.config.caps_webmcp,
            vision: session.config.caps_vision,
        };
        // Under `--caps webmcp` (docs/mcp.md#webmcp); attached to a `--session`, the daemon's.
        let (webmcp, watcher) = if caps.webmcp {
            let (projection, task) = webmcp::start(outbox.clone(), attached.as_ref());
            (Some(projection), Some(task))
        } else {
            (None, None)
        };
        let client_roots = session.client_roots.clone();
        let roots = roots.unwrap_or_else(|| resources::Roots::of(&session));
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            wake: Notify::new(),
            outbox,
            roots,
            attached,
            client_roots,
            session: tokio::sync::Mutex::new(session),
            gate: Arc::new(tokio::sync::RwLock::new(())),
            tails: Mutex::default(),
            defaults,
            registry: Registry::new(chromate_flows::tools::FLOW_TOOLS, caps),
            webmcp,
        });
        let worker = tokio::spawn(run_worker(shared.clone()));
        let dispatcher = Dispatcher {
            shared: shared.clone(),
            initialized: false,
            era: Era::Legacy,
            client_has_roots: false,
            ask_roots: options.ask_roots,
            roots_request: None,
            version: None,
            requests_sent: 0,
        };
        Core {
            shared,
            dispatcher,
            worker,
            watcher,
        }
    }

    /// A server for `session` of its own (the HTTP front end's sessions).
    pub(crate) fn new(session: ToolSession, outbox: Outbox, options: CoreOptions) -> Core {
        Core::start(session, outbox, None, None, options)
    }

    /// Handles one raw frame: parse errors are answered through the outbox.
    pub(crate) fn frame(&mut self, frame: &[u8]) {
        match jsonrpc::parse_message(frame) {
            Err(error) => self.shared.outbox.send(&error.to_json()),
            Ok(Message::One(incoming)) => self.dispatcher.incoming(incoming),
            Ok(Message::Batch(items)) => self.batch(items),
        }
    }

    /// Whether this session negotiated 2025-03-26, the one revision with JSON-RPC batches.
    pub(crate) fn takes_batches(&self) -> bool {
        self.dispatcher.version == Some(BATCH_VERSION)
    }

    /// A JSON-RPC batch: on a 2025-03-26 session each item is handled in order and the
    /// responses go out as one array once every request is answered (none for
    /// notifications); any other session refuses it whole, running nothing.
    fn batch(&mut self, items: Vec<Result<Incoming, RpcError>>) {
        if !self.takes_batches() {
            self.shared.outbox.send(&jsonrpc::batch_refused().to_json());
            return;
        }
        let mut waiting = Vec::new();
        let mut responses = Vec::new();
        let mut valid = Vec::new();
        for item in items {
            match item {
                Ok(Incoming::Request { id, method, params }) => {
                    waiting.push(id.clone());
                    valid.push(Incoming::Request { id, method, params });
                }
                Ok(other) => valid.push(other),
                Err(error) => responses.push(error.to_json()),
            }
        }
        self.shared.outbox.open_batch(waiting, responses);
        for incoming in valid {
            self.dispatcher.incoming(incoming);
        }
    }

    /// Handles one parsed message; its answer (if any) goes through the outbox, now or once
    /// its tool call ran.
    pub(crate) fn incoming(&mut self, incoming: Incoming) {
        self.dispatcher.incoming(incoming);
    }

    /// Whether this session's list of tools changes (`--caps webmcp`): it sends
    /// `notifications/tools/list_changed` (docs/mcp.md#webmcp).
    pub(crate) fn lists_change(&self) -> bool {
        self.shared.webmcp.is_some()
    }

    /// Whether a tool call is queued or running (an idle session may expire; a busy one not).
    pub(crate) fn busy(&self) -> bool {
        let queue = self.shared.queue();
        !queue.running.is_empty() || !queue.pending.is_empty()
    }

    /// Drops queued calls, cancels the running one and runs the session's shutdown hook
    /// (its browser, or its context, goes), all bounded.
    pub(crate) async fn stop(self) {
        if let Some(watcher) = &self.watcher {
            watcher.abort();
        }
        shutdown(self.shared, self.worker).await;
    }
}

/// Drop queued calls, cancel the running one, call the backend's shutdown hook — all bounded
/// well under 5 s.
async fn shutdown(shared: Arc<Shared>, worker: tokio::task::JoinHandle<()>) {
    {
        let mut queue = shared.queue();
        queue.closed = true;
        for call in queue.pending.drain(..) {
            call.progress.with_state(|state| state.finished = true);
        }
        for running in &queue.running {
            let _ = running.cancel.send(true);
        }
    }
    shared.wake.notify_one();
    // Every call holds the gate while it runs: having it alone means they all ended.
    let ended = async {
        let _ = worker.await;
        let _ = shared.gate.clone().write_owned().await;
    };
    if tokio::time::timeout(SHUTDOWN_CALL_GRACE, ended)
        .await
        .is_err()
    {
        for abort in shared
            .queue()
            .running
            .iter()
            .filter_map(|r| r.abort.clone())
        {
            abort.abort();
        }
    }
    if let Ok(mut session) = tokio::time::timeout(SHUTDOWN_LOCK_GRACE, shared.session.lock()).await
    {
        let _ = tokio::time::timeout(SHUTDOWN_HOOK_GRACE, session.shutdown()).await;
    }
}

fn read_stdin(sender: mpsc::Sender<Input>) {
    let mut stdin = std::io::stdin().lock();
    let mut decoder = FrameDecoder::default();
    let mut chunk = vec![0u8; STDIN_CHUNK];
    let mut events = Vec::new();
    loop {
        let n_read = match stdin.read(&mut chunk) {
            Ok(0) => break,
            Ok(n_read) => n_read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        decoder.push(&chunk[..n_read], &mut events);
        for event in events.drain(..) {
            if sender.blocking_send(Input::Event(event)).is_err() {
                return;
            }
        }
    }
    decoder.finish(&mut events);
    for event in events.drain(..) {
        if sender.blocking_send(Input::Event(event)).is_err() {
            return;
        }
    }
    let _ = sender.blocking_send(Input::Eof);
}

/// Starts the stdout writer: a thread of its own that takes each message off the outbox and
/// writes it, so an answer never waits for a runtime worker (a `ping` during a flood of page
/// events is written as soon as the read loop answers it) and a client that reads slowly never
/// stalls the runtime. The returned receiver fires once the writer has flushed and stopped (at
/// [`Outbox::close`], or when stdout is gone); `None` if the thread cannot start.
fn start_stdout_writer(
    mut receiver: mpsc::UnboundedReceiver<String>,
) -> Option<tokio::sync::oneshot::Receiver<()>> {
    let (done, stopped) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("stdout".into())
        .spawn(move || {
            let mut stdout = std::io::stdout().lock();
            while let Some(line) = receiver.blocking_recv() {
                if line == CLOSE {
                    break;
                }
                let written = stdout
                    .write_all(line.as_bytes())
                    .and_then(|()| stdout.write_all(b"\n"))
                    .and_then(|()| stdout.flush());
                if written.is_err() {
                    break;
                }
            }
            let _ = done.send(());
        });
    spawned.ok().map(|_| stopped)
}

/// Handles frames on the read loop; everything but tools/call is answered here.
struct Dispatcher {
    shared: Arc<Shared>,
    initialized: bool,
    /// The era of the request being dispatched (set per request, never
    /// carried over: modern requests are stateless).
    era: Era,
    /// The client declared the `roots` capability at initialize.
    client_has_roots: bool,
    /// Whether this front end may ask the client for its roots.
    ask_roots: bool,
    /// The id of our `roots/list` request awaiting its answer.
    roots_request: Option<Value>,
    /// The revision `initialize` negotiated.
    version: Option<&'static str>,
    /// Requests this server sent the client (ids `chromate-<n>`).
    requests_sent: u64,
}

impl Dispatcher {
    fn incoming(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Response { id, result } => self.response(&id, result),
            Incoming::Notification { method, params } => self.notification(&method, params),
            Incoming::Request { id, method, params } => {
                let reply = match params {
                    Some(params) if !params.is_object() => Err(RpcError::new(
                        id.clone(),
                        jsonrpc::INVALID_PARAMS,
                        format!("invalid params: {method} params must be an object"),
                    )),
                    params => {
                        self.request_in_era(&id, &method, params.unwrap_or_else(|| json!({})))
                    }
                };
                match reply {
                    Ok(Some(result)) => self.shared.outbox.send(&jsonrpc::response(&id, result)),
                    Ok(None) => {}
                    Err(error) => self.shared.outbox.send(&error.to_json()),
                }
            }
        }
    }

    /// Asks the client for its roots (legacy era only: a 2026-07-28 server sends no requests).
    fn ask_roots(&mut self) {
        if !self.client_has_roots || !self.ask_roots {
            return;
        }
        self.requests_sent += 1;
        let id = json!(format!("chromate-{}", self.requests_sent));
        self.roots_request = Some(id.clone());
        self.shared.outbox.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "roots/list",
        }));
    }

    /// A response to one of our requests: the `roots/list` answer becomes the directories
    /// uploads may read from. Roots that are not `file://` directories are skipped; an error
    /// answer leaves the list as it was.
    fn response(&mut self, id: &Value, result: Option<Value>) {
        if self.roots_request.as_ref() != Some(id) {
            return;
        }
        self.roots_request = None;
        let Some(roots) = result.as_ref().and_then(|result| result.get("roots")) else {
            return;
        };
        let dirs: Vec<std::path::PathBuf> = roots
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|root| root.get("uri").and_then(Value::as_str))
            .filter_map(resources::parse_file_uri)
            .collect();
        let mut shared = chromate_command::sync::lock(&self.shared.client_roots);
        *shared = dirs;
    }

    fn notification(&mut self, method: &str, params: Option<Value>) {
        if method == "notifications/initialized" || method == "notifications/roots/list_changed" {
            self.ask_roots();
            return;
        }
        if method != "notifications/cancelled" {
            // Unknown notifications are ignored.
            return;
        }
        let Some(request_id) = params.as_ref().and_then(|params| params.get("requestId")) else {
            return;
        };
        let mut queue = self.shared.queue();
        if let Some(pos) = queue.pending.iter().position(|call| &call.id == request_id) {
            if let Some(call) = queue.pending.remove(pos) {
                call.progress.with_state(|state| state.finished = true);
                self.shared.outbox.forget(request_id);
            }
        } else {
            for running in queue
                .running
                .iter()
                .filter(|running| &running.id == request_id)
            {
                let _ = running.cancel.send(true);
                self.shared.outbox.forget(request_id);
            }
        }
    }

    /// Serves a request in the era its `_meta` names (`era.rs`), then
    /// decorates the result for that era. `Ok(None)` = answered later.
    fn request_in_era(
        &mut self,
        id: &Value,
        method: &str,
        params: Value,
    ) -> Result<Option<Value>, RpcError> {
        self.era = Era::of_request(id, method, &params)?;
        let reply = match self.era.answer(id, method)? {
            Some(result) => Some(result),
            None => self.request(id, method, params)?,
        };
        Ok(reply.map(|result| self.era.decorate(method, result)))
    }

    /// `Ok(None)` = answered later (tools/call).
    fn request(
        &mut self,
        id: &Value,
        method: &str,
        params: Value,
    ) -> Result<Option<Value>, RpcError> {
        let invalid_params =
            |message: String| RpcError::new(id.clone(), jsonrpc::INVALID_PARAMS, message);
        match method {
            "initialize" => {
                if self.initialized {
                    return Err(RpcError::new(
                        id.clone(),
                        jsonrpc::INVALID_REQUEST,
                        "invalid request: already initialized",
                    ));
                }
                self.initialized = true;
                self.client_has_roots = params
                    .get("capabilities")
                    .and_then(|capabilities| capabilities.get("roots"))
                    .is_some_and(Value::is_object);
                let requested = params.get("protocolVersion").and_then(Value::as_str);
                self.version = Some(negotiated_version(requested));
                let mut result = initialize_result(requested);
                // Only under `--caps webmcp` does the list change (docs/mcp.md#webmcp).
                if self.shared.webmcp.is_some() {
                    result["capabilities"]["tools"]["listChanged"] = json!(true);
                }
                Ok(Some(result))
            }
            "ping" => Ok(Some(json!({}))),
            "tools/list" => {
                if params.get("cursor").is_some_and(|cursor| !cursor.is_null()) {
                    return Err(invalid_params(
                        "invalid params: tools/list has a single page; no cursor".to_owned(),
                    ));
                }
                let mut list = self.shared.registry.list(&self.shared.defaults);
                if let (Some(projection), Some(tools)) = (
                    &self.shared.webmcp,
                    list.get_mut("tools").and_then(Value::as_array_mut),
                ) {
                    tools.extend(projection.entries());
                }
                Ok(Some(list))
            }
            "resources/list" => Ok(Some(self.shared.roots.list())),
            "resources/read" => {
                let uri = match params.get("uri") {
                    Some(Value::String(uri)) => uri,
                    _ => {
                        return Err(invalid_params(
                            "invalid params: resources/read needs a \"uri\" string".to_owned(),
                        ))
                    }
                };
                // The legacy revisions name a missing resource -32002 (2025-11-25,
                // "Resource not found"); the 2026-07-28 requests keep invalid params.
                let era = self.era;
                self.shared.roots.read(uri).map(Some).map_err(|error| {
                    let code = match (&error, era) {
                        (ReadError::Unknown(_), Era::Legacy) => RESOURCE_NOT_FOUND,
                        _ => jsonrpc::INVALID_PARAMS,
                    };
                    RpcError::new(id.clone(), code, error.message())
                        .with_data(json!({ "uri": uri }))
                })
            }
            "resources/templates/list" => Ok(Some(json!({ "resourceTemplates": [] }))),
            "tools/call" => self.tools_call(id, &params),
            other => Err(RpcError::new(
                id.clone(),
                jsonrpc::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        }
    }

    /// Validates at arrival (docs/mcp.md#errors: validation never waits for the browser),
    /// then queues the call for the worker (`Ok(None)`: answered later).
    fn tools_call(&mut self, id: &Value, params: &Value) -> Result<Option<Value>, RpcError> {
        let arrived = Instant::now();
        let invalid_params =
            |message: String| RpcError::new(id.clone(), jsonrpc::INVALID_PARAMS, message);
        let name = match params.get("name") {
            None | Some(Value::Null) => {
                return Err(invalid_params("tools/call: missing \"name\"".to_owned()))
            }
            Some(Value::String(name)) => name.as_str(),
            Some(_) => {
                return Err(invalid_params(
                    "tools/call: \"name\" must be a string".to_owned(),
                ))
            }
        };
        // A rejected argument is a tool error the model reads (docs/mcp.md#errors), answered at
        // once: it never waits for the browser or for the calls queued before it.
        // A page's tool (`webmcp_<name>`, docs/mcp.md#webmcp) is a browser_webmcp call; one
        // gone since tools/list gets browser_webmcp's error naming the tools there are now.
        let projected = (self.shared.webmcp.is_some()
            && name.starts_with(chromate_command::webmcp::PREFIX)
            && self.shared.registry.find(name).is_none())
        .then(|| {
            let arguments = params
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| json!({}));
            json!({ "action": "call", "name": name, "arguments": arguments })
        });
        let (name, arguments) = match &projected {
            Some(call) => ("browser_webmcp", Some(call)),
            None => (name, params.get("arguments")),
        };
        let prepared = match self
            .shared
            .registry
            .prepare(name, arguments, &self.shared.defaults)
        {
            Ok(prepared) => prepared,
            Err(Unprepared::Unknown) => {
                return Err(invalid_params(format!("unknown tool \"{name}\""))
                    .with_data(json!({ "tool": name })))
            }
            Err(Unprepared::Invalid(error)) => {
                return Ok(Some(error.to_tool_error().to_call_result(None)))
            }
        };
        let (decl, arguments) = (prepared.decl, prepared.arguments);
        let progress = Progress::new("queued behind another tool call", arrived);
        let token = params
            .get("_meta")
            .and_then(|meta| meta.get("progressToken"))
            .filter(|token| token.is_string() || token.is_i64() || token.is_u64())
            .cloned();
        if let Some(token) = token {
            tokio::spawn(report_progress(
                progress.clone(),
                token,
                self.shared.outbox.clone(),
            ));
        }
        let mut queue = self.shared.queue();
        queue.pending.push_back(QueuedCall {
            id: id.clone(),
            decl,
            arguments,
            progress,
            era: self.era,
        });
        drop(queue);
        self.shared.wake.notify_one();
        Ok(None)
    }
}

/// The initialize result for the client's requested version.
pub(crate) fn initialize_result(requested: Option<&str>) -> Value {
    let version = negotiated_version(requested);
    json!({
        "protocolVersion": version,
        "capabilities": era::server_capabilities(),
        "serverInfo": era::server_info(),
        "instructions": INSTRUCTIONS,
    })
}

/// The revision `initialize` answers for the client's requested one.
fn negotiated_version(requested: Option<&str>) -> &'static str {
    PROTOCOL_VERSIONS
        .iter()
        .copied()
        .find(|version| Some(*version) == requested)
        .unwrap_or(LATEST_VERSION)
}

/// Sends `notifications/progress` once the call is 1 s old, then about every
/// second, until the call's progress state is finished.
async fn report_progress(progress: Progress, token: Value, outbox: Outbox) {
    let mut next = progress.started() + PROGRESS_DELAY;
    loop {
        tokio::time::sleep_until(next.into()).await;
        let elapsed = progress.started().elapsed().as_secs();
        let sent = progress.with_state(|state| {
            if state.finished {
                return false;
            }
            let mut params = json!({ "progressToken": token, "message": state.phase });
            match state.steps {
                Some((done, total)) => {
                    params["progress"] = json!(done);
                    params["total"] = json!(total);
                }
                None => params["progress"] = json!(elapsed),
            }
            outbox.send(&jsonrpc::notification("notifications/progress", params));
            true
        });
        if !sent {
            return;
        }
        next += PROGRESS_EVERY;
    }
}

/// A [`Reply`] → the `tools/call` result of docs/mcp.md#results.
///
/// Success: `content[0]` is the result's compact JSON (or the tool's own text), `content[1]`
/// the observation, then one `resource_link` per file the result hands back. No
/// `structuredContent` unless the session runs with `--structured-content`: hosts that find
/// one show the model only its serialised form and drop the text blocks, which would hide the
/// observation. A failed browser_batch keeps `structuredContent.result` in both modes.
pub(crate) fn call_result(reply: &Reply, structured_content: bool) -> Value {
    let done = match reply {
        Reply::Failed(failed) => {
            return json!({
                "isError": true,
                "content": [{ "type": "text", "text": failed.text }],
                "structuredContent": { "error": failed.error },
            })
        }
        Reply::Done(done) => done,
    };
    let mut content = vec![json!({ "type": "text", "text": done.text })];
    if let Some(observation) = &done.observation {
        content.push(json!({ "type": "text", "text": observation }));
    }
    content.extend(done.links.iter().filter_map(|path| resources::link(path)));
    let mut result = json!({ "content": content });
    if structured_content {
        let mut structured = json!({ "result": done.result });
        if let Some(observation) = &done.observation_full {
            structured["observation"] = json!(observation);
        }
        result["structuredContent"] = structured;
    } else if done.is_error {
        result["structuredContent"] = json!({ "result": done.result });
    }
    if done.is_error {
        result["isError"] = json!(true);
    }
    result
}

mod attach;
mod webmcp;
mod worker;

use attach::{attach_session, remote, watch_page_tools, Attached};
use worker::run_worker;

#[cfg(test)]
mod tests;
