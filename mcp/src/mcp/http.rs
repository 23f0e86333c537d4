//! The MCP Streamable HTTP front end (`chromate mcp --http [ADDR]`; docs/mcp.md, "Streamable
//! HTTP"), in both eras the server speaks.
//!
//! - **2025-11-25** (and the earlier Streamable HTTP revisions): `initialize` opens a session,
//!   whose id goes back in `MCP-Session-Id`; every later request names it; `DELETE` ends it.
//!   Each session is a [`Core`] of its own whose dispatcher session is a browser context in one
//!   shared browser (with `--cdp-endpoint`, in a connection of its own to the endpoint: one pool
//!   session each), so cookies, storage, cache, tabs, refs, journal, mocks and traces never
//!   cross sessions. A session without requests for `--session-idle-timeout` ends the same way.
//! - **2026-07-28** (stateless): no session; `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
//!   must match the body (else 400 with `HeaderMismatch`, -32020). The revision has no session
//!   to tell clients apart, so they are told apart by their credentials: the requests sent with
//!   one token share one stateless `Core` (one browser context), each token has its own (one
//!   under `--no-auth`); closing a request's SSE stream cancels it.
//!
//! Every request: on a loopback address, `Host` must be a loopback name or one of
//! `--allowed-hosts` (else 403; DNS rebinding); `Origin`, when present, must be a loopback
//! origin or one of `--allowed-hosts` (else 403); unless `--no-auth`, `Authorization: Bearer
//! <token>` names one of the tokens (`--auth-token`, else the one generated at start; else
//! 401; `http/auth.rs`); bodies are bounded as stdio frames are (413). A `tools/call`
//! whose client accepts `text/event-stream` is answered as an SSE stream (its progress, then
//! its result); everything else as one JSON object.
//!
//! Owns: HTTP (hyper), the sessions map, the id rewriting that lets many clients share one
//! outbox (each request's id and progress token become `h<n>` inside and are restored on the
//! way out), expiry and the shutdown of every session and the shared browser. Does not own
//! the method table, scheduling or tool results (`server.rs`), or any browser semantics.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming as Body};
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::mcp::era::{self, MODERN_VERSIONS, PROTOCOL_VERSION_KEY};
use crate::mcp::jsonrpc::{self, Incoming, RpcError, MAX_FRAME_BYTES};
use crate::mcp::server::{Core, CoreOptions, Outbox, PROTOCOL_VERSIONS};
use chromate_command::config::{Config, HttpFlags};
use chromate_command::session::ToolSession;
use chromate_command::shared::SharedBrowser;
use chromate_command::sync::lock;

mod accept;
mod auth;
mod modern;
mod router;

use modern::{check_modern_body, check_modern_headers, is_modern};
use router::Router;

pub(crate) use auth::{running_servers, RunningServer};

/// The MCP endpoint's path.
const ENDPOINT: &str = "/mcp";
/// How often sessions are checked for expiry.
const REAP_EVERY: Duration = Duration::from_millis(250);
/// How long stopping one session (its calls, its context) may take at exit.
const STOP_GRACE: Duration = Duration::from_secs(5);

type HttpBody = BoxBody<Bytes, Infallible>;

/// One MCP session (or the stateless one): its server and the requests waiting for answers.
struct HttpSession {
    core: Mutex<Option<Core>>,
    router: Arc<Router>,
    last_used: Mutex<Instant>,
    /// HTTP requests of this session being answered now (a session with one never expires).
    open_requests: AtomicUsize,
    /// The client's request ids of the requests in flight, by the `h<n>` id they run under.
    inflight: Mutex<HashMap<String, Value>>,
    /// The session directory, removed when the session ends unless it holds files the client
    /// was told about (docs/mcp.md#streamable-http).
    dir: std::path::PathBuf,
    /// The token that opened the session (its index in `--auth-token`s; `None` without
    /// tokens): only a request with the same token finds the session by its id.
    principal: Option<usize>,
}

impl HttpSession {
    fn start(session: ToolSession, flows: bool, principal: Option<usize>) -> Arc<HttpSession> {
        let dir = session.artifacts.dir().to_path_buf();
        let (outbox, mut messages) = Outbox::channel();
        let router = Arc::new(Router::default());
        let core = Core::new(
            session,
            outbox,
            CoreOptions {
                flows,
                ask_roots: false,
            },
        );
        let routing = router.clone();
        tokio::spawn(async move {
            while let Some(message) = messages.recv().await {
                routing.deliver(&message);
            }
        });
        Arc::new(HttpSession {
            core: Mutex::new(Some(core)),
            router,
            last_used: Mutex::new(Instant::now()),
            open_requests: AtomicUsize::new(0),
            inflight: Mutex::new(HashMap::new()),
            dir,
            principal,
        })
    }

    /// Hands a message to the server; false once the session ended.
    fn incoming(&self, incoming: Incoming) -> bool {
        match lock(&self.core).as_mut() {
            Some(core) => {
                core.incoming(incoming);
                true
            }
            None => false,
        }
    }

    fn idle_for(&self) -> Option<Duration> {
        if self.open_requests.load(Ordering::SeqCst) > 0 {
            return None;
        }
        if lock(&self.core).as_ref().is_none_or(Core::busy) {
            return None;
        }
        Some(lock(&self.last_used).elapsed())
    }

    /// Ends the session: its calls are cancelled, its browser context disposed of, and its
    /// directory removed unless it holds files the client was told about (then stderr says
    /// where they stay).
    async fn stop(&self) {
        let core = lock(&self.core).take();
        if let Some(core) = core {
            let _ = tokio::time::timeout(STOP_GRACE, core.stop()).await;
            if !chromate_command::artifacts::remove_if_untold(&self.dir) {
                eprintln!(
                    "chromate: a session ended; its files stay in {}",
                    self.dir.display()
                );
            }
        }
        lock(&self.router.waiters).clear();
        self.router.stop_listening();
    }
}

/// Counts an HTTP request as open on its session while it lives.
struct OpenRequest(Arc<HttpSession>);

impl OpenRequest {
    fn new(session: &Arc<HttpSession>) -> OpenRequest {
        session.open_requests.fetch_add(1, Ordering::SeqCst);
        *lock(&session.last_used) = Instant::now();
        OpenRequest(session.clone())
    }
}

impl Drop for OpenRequest {
    fn drop(&mut self) {
        *lock(&self.0.last_used) = Instant::now();
        self.0.open_requests.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The server's state, shared by every connection.
struct Server {
    config: Config,
    flags: HttpFlags,
    flows: bool,
    browser: SharedBrowser,
    /// The bound address (its port chosen when `--http` named port 0).
    local: std::net::SocketAddr,
    sessions: Mutex<HashMap<String, Arc<HttpSession>>>,
    /// The 2026-07-28 requests' sessions, one per principal (the index of the token the
    /// request was sent with; `None` under `--no-auth`), each made at its first request.
    stateless: Mutex<HashMap<Option<usize>, Arc<HttpSession>>>,
    next_id: AtomicU64,
    closing: std::sync::atomic::AtomicBool,
}

impl Server {
    fn new_session(&self, principal: Option<usize>) -> Arc<HttpSession> {
        let mut session = ToolSession::new(self.config.clone());
        if self.config.cdp_endpoint.is_some() {
            // On a remote endpoint (a pool), each session connects on its own: one pool
            // session each, its browser context in it; a launched browser is shared.
            session.browser.shared = Some(SharedBrowser::default());
            session.browser.owns_connection = true;
        } else {
            session.browser.shared = Some(self.browser.clone());
        }
        // Traces under CHROMATE_TRACE_DIR and saved states are this session's alone
        // (docs/mcp.md#streamable-http): a directory named as its session directory.
        session.namespace = session
            .artifacts
            .dir()
            .file_name()
            .map(|name| name.to_string_lossy().into_owned());
        HttpSession::start(session, self.flows, principal)
    }

    /// The session named `id`, if it is one that a request with `principal`'s token opened:
    /// another token's session answers as an unknown one does, so a leaked id is of no use
    /// without its token and nothing tells the caller that it exists.
    fn session(&self, id: &str, principal: Option<usize>) -> Option<Arc<HttpSession>> {
        lock(&self.sessions)
            .get(id)
            .filter(|session| session.principal == principal)
            .cloned()
    }

    fn stateless(&self, principal: Option<usize>) -> Arc<HttpSession> {
        lock(&self.stateless)
            .entry(principal)
            .or_insert_with(|| self.new_session(principal))
            .clone()
    }
}

/// Runs the HTTP server until a signal; returns the exit status.
pub(crate) async fn serve(config: Config, mut flags: HttpFlags, flows: bool) -> i32 {
    if !flags.addr.ip().is_loopback() && flags.auth_tokens.is_empty() {
        eprintln!(
            "chromate: mcp --http {}: refusing to listen on an address that is not loopback without --auth-token (or CHROMATE_MCP_AUTH_TOKEN)",
            flags.addr
        );
        return 2;
    }
    let listener = match tokio::net::TcpListener::bind(flags.addr).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("chromate: mcp --http {}: cannot listen: {err}", flags.addr);
            return 1;
        }
    };
    let local = listener.local_addr().unwrap_or(flags.addr);
    let url = format!("http://{local}{ENDPOINT}");
    // The one line a supervisor (or a test) reads to learn the port of `--http 127.0.0.1:0`.
    eprintln!("chromate: MCP Streamable HTTP on {url}");
    // Kept while the server runs; the file goes with it.
    let mut _token_file = None;
    if flags.auth_tokens.is_empty() && !flags.no_auth {
        let token = match auth::generate_token() {
            Ok(token) => token,
            Err(err) => {
                eprintln!("chromate: mcp --http: cannot generate an auth token: {err}; pass --auth-token (or --no-auth)");
                return 1;
            }
        };
        let kept = crate::daemon::runtime_dir()
            .and_then(|dir| auth::TokenFile::write(&dir, local, &url, &token));
        let where_kept = match &kept {
            Ok(file) => format!(
                "kept in {} for `chromate init --mcp`",
                file.path().display()
            ),
            Err(err) => format!("not kept for `chromate init --mcp`: {err}"),
        };
        // Printed this once: clients send `Authorization: Bearer <token>`.
        eprintln!(
            "chromate: auth token (generated; --auth-token sets one, --no-auth turns auth off): {token} ({where_kept})"
        );
        _token_file = kept.ok();
        flags.auth_tokens.push(token);
    } else if flags.no_auth {
        eprintln!("chromate: --no-auth: any local process can drive this server's browser");
    }
    let server = Arc::new(Server {
        config,
        flags,
        local,
        flows,
        browser: SharedBrowser::default(),
        sessions: Mutex::new(HashMap::new()),
        stateless: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
        closing: std::sync::atomic::AtomicBool::new(false),
    });
    let (limits, warnings) =
        accept::Limits::from_env(&|name| std::env::var(name).ok(), accept::fd_limit());
    for warning in warnings {
        eprintln!("chromate: {warning}");
    }
    let sockets = accept::Connections::default();
    let gate = accept::Gate::new(&limits);
    let mut backoff = accept::Backoff::default();
    let mut paused_until: Option<tokio::time::Instant> = None;
    let mut reaper = tokio::time::interval(REAP_EVERY);
    reaper.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut signals = crate::signals::Signals::new();
    loop {
        tokio::select! {
            accepted = listener.accept(), if paused_until.is_none() => match accepted {
                Ok((stream, _)) => {
                    backoff.accepted();
                    // The place among the connections first, which may evict the oldest
                    // half-open one (`http/accept.rs`); then a socket under the hard bound,
                    // waiting briefly for evicted connections to close when it is reached.
                    let Some(admission) = gate.admit() else {
                        accept::refuse(&stream);
                        continue;
                    };
                    let socket = match sockets.take(limits.max_sockets()) {
                        Some(socket) => socket,
                        None => match sockets
                            .take_within(limits.max_sockets(), accept::SOCKET_WAIT)
                            .await
                        {
                            Some(socket) => socket,
                            None => {
                                accept::refuse(&stream);
                                continue;
                            }
                        },
                    };
                    let server = server.clone();
                    tokio::spawn(async move {
                        let _socket = socket;
                        let admission = Arc::new(admission);
                        let watched = admission.clone();
                        let io = hyper_util::rt::TokioIo::new(stream);
                        let service = hyper::service::service_fn(move |request| {
                            let server = server.clone();
                            let established = admission.headers_complete();
                            async move {
                                if !established {
                                    return Ok::<_, Infallible>(evicted_answer());
                                }
                                let mut response = handle(&server, request).await;
                                // A request turned away before its token or its session was
                                // checked may not keep an established connection open.
                                if matches!(
                                    response.status(),
                                    StatusCode::UNAUTHORIZED
                                        | StatusCode::FORBIDDEN
                                        | StatusCode::NOT_FOUND
                                ) {
                                    response.headers_mut().insert(
                                        "connection",
                                        HeaderValue::from_static("close"),
                                    );
                                }
                                Ok::<_, Infallible>(response)
                            }
                        });
                        // A connection that has not sent a request's headers in time is closed,
                        // so connections that never finish cannot hold the server's descriptors;
                        // one still half-open is closed sooner when newer ones need its place.
                        let connection = hyper::server::conn::http1::Builder::new()
                            .timer(hyper_util::rt::TokioTimer::new())
                            .header_read_timeout(limits.header_timeout)
                            .serve_connection(io, service);
                        tokio::select! {
                            _ = connection => {}
                            () = watched.evicted() => {}
                        }
                    });
                }
                Err(err) => {
                    let (pause, line) = backoff.failed(&err, Instant::now());
                    if let Some(line) = line {
                        eprintln!("{line}");
                    }
                    paused_until = Some(tokio::time::Instant::now() + pause);
                }
            },
            () = accept::paused(paused_until) => paused_until = None,
            _ = reaper.tick() => reap(&server).await,
            () = signals.recv() => break,
        }
    }
    shutdown(&server).await;
    0
}

/// The answer to a request whose headers completed just as its connection was evicted to make
/// room for a newer one: try again, on a new connection.
fn evicted_answer() -> Response<HttpBody> {
    let mut response = plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "too many connections still sending their headers; retry in a moment",
    );
    let headers = response.headers_mut();
    headers.insert("retry-after", HeaderValue::from_static("1"));
    headers.insert("connection", HeaderValue::from_static("close"));
    response
}

/// Ends the sessions idle longer than the timeout.
async fn reap(server: &Server) {
    let idle = server.flags.idle_timeout;
    let expired: Vec<Arc<HttpSession>> = {
        let mut sessions = lock(&server.sessions);
        let ids: Vec<String> = sessions
            .iter()
            .filter(|(_, session)| session.idle_for().is_some_and(|since| since >= idle))
            .map(|(id, _)| id.clone())
            .collect();
        ids.iter().filter_map(|id| sessions.remove(id)).collect()
    };
    for session in expired {
        session.stop().await;
    }
}

/// Every session ends (contexts disposed of), then the shared browser closes.
async fn shutdown(server: &Server) {
    server.closing.store(true, Ordering::SeqCst);
    let mut all: Vec<Arc<HttpSession>> = lock(&server.sessions).drain().map(|(_, s)| s).collect();
    all.extend(lock(&server.stateless).drain().map(|(_, s)| s));
    futures::future::join_all(all.iter().map(|session| session.stop())).await;
    let _ = tokio::time::timeout(STOP_GRACE, server.browser.close()).await;
}

async fn handle(server: &Server, request: Request<Body>) -> Response<HttpBody> {
    if request.uri().path() != ENDPOINT {
        return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
    }
    let headers = request.headers();
    let host = header(headers, "host");
    if !auth::host_allowed(host, server.local, &server.flags.allowed_hosts) {
        return rpc_status(
            StatusCode::FORBIDDEN,
            &RpcError::new(
                Value::Null,
                jsonrpc::INVALID_REQUEST,
                format!(
                    "forbidden: Host {:?} is not a loopback name (localhost, 127.0.0.1, [::1]) nor one of --allowed-hosts",
                    host.unwrap_or_default()
                ),
            ),
        );
    }
    if let Some(origin) = headers.get(hyper::header::ORIGIN) {
        if !origin_allowed(origin, &server.flags.allowed_hosts) {
            return rpc_status(
                StatusCode::FORBIDDEN,
                &RpcError::new(
                    Value::Null,
                    jsonrpc::INVALID_REQUEST,
                    "forbidden: this Origin may not use the server (see --allowed-hosts)",
                ),
            );
        }
    }
    let principal = if server.flags.auth_tokens.is_empty() {
        None
    } else {
        let Some(index) = auth::bearer_index(headers, &server.flags.auth_tokens) else {
            let mut response = rpc_status(
                StatusCode::UNAUTHORIZED,
                &RpcError::new(
                    Value::Null,
                    jsonrpc::INVALID_REQUEST,
                    "unauthorized: send Authorization: Bearer <the server's token> (--auth-token, or the one it printed at start)",
                ),
            );
            response
                .headers_mut()
                .insert("www-authenticate", HeaderValue::from_static("Bearer"));
            return response;
        };
        Some(index)
    };
    if server.closing.load(Ordering::SeqCst) {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        );
    }
    match *request.method() {
        Method::POST => post(server, request, principal).await,
        Method::DELETE => delete(server, request.headers(), principal).await,
        Method::GET if accepts_sse(request.headers()) => {
            router::listen(server, request.headers(), principal)
        }
        _ => method_not_allowed(
            "method not allowed: POST a JSON-RPC message (DELETE ends a session; GET with Accept: text/event-stream listens)",
            "GET, POST, DELETE",
        ),
    }
}

async fn delete(
    server: &Server,
    headers: &HeaderMap,
    principal: Option<usize>,
) -> Response<HttpBody> {
    let Some(id) = header(headers, "mcp-session-id") else {
        return plain(
            StatusCode::BAD_REQUEST,
            "DELETE needs an MCP-Session-Id header",
        );
    };
    let session = server
        .session(id, principal)
        .and_then(|_| lock(&server.sessions).remove(id));
    match session {
        Some(session) => {
            session.stop().await;
            empty(StatusCode::NO_CONTENT)
        }
        None => plain(
            StatusCode::NOT_FOUND,
            "no such session (it ended or expired)",
        ),
    }
}

async fn post(
    server: &Server,
    request: Request<Body>,
    principal: Option<usize>,
) -> Response<HttpBody> {
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let bytes = match Limited::new(body, MAX_FRAME_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) => {
            if err
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return rpc_status(StatusCode::PAYLOAD_TOO_LARGE, &RpcError::frame_too_large());
            }
            return plain(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        }
    };
    let incoming = match jsonrpc::parse_message(&bytes) {
        Ok(jsonrpc::Message::One(incoming)) => incoming,
        Ok(jsonrpc::Message::Batch(items)) => {
            return batch(server, &headers, items, principal).await
        }
        Err(error) => return rpc_status(StatusCode::BAD_REQUEST, &error),
    };
    let modern = is_modern(&incoming);
    if let Err(error) = check_modern_body(&headers, &incoming, modern) {
        return rpc_status(StatusCode::BAD_REQUEST, &error);
    }
    if modern {
        if let Err(error) = check_modern_headers(&headers, &incoming) {
            return rpc_status(StatusCode::BAD_REQUEST, &error);
        }
    } else if let Some(version) = header(&headers, "mcp-protocol-version") {
        if !PROTOCOL_VERSIONS.contains(&version) && !MODERN_VERSIONS.contains(&version) {
            let error = RpcError::new(
                request_id(&incoming),
                era::UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version: {version}"),
            )
            .with_data(json!({ "supported": era::supported_versions(), "requested": version }));
            return rpc_status(StatusCode::BAD_REQUEST, &error);
        }
    }
    let initialize =
        matches!(&incoming, Incoming::Request { method, .. } if method == "initialize");
    let (session, new_id) = if modern {
        (server.stateless(principal), None)
    } else if initialize {
        let mut sessions = lock(&server.sessions);
        if sessions.len() >= server.flags.max_sessions {
            let max = server.flags.max_sessions;
            let error = RpcError::new(
                request_id(&incoming),
                jsonrpc::INTERNAL_ERROR,
                format!("too many sessions: this server serves at most {max} at once (--max-sessions); end one with DELETE or retry later"),
            )
            .with_data(json!({ "maxSessions": max }));
            drop(sessions);
            let mut response = rpc_status(StatusCode::SERVICE_UNAVAILABLE, &error);
            response
                .headers_mut()
                .insert("retry-after", HeaderValue::from_static("5"));
            return response;
        }
        // 128 bits from the OS's random source; behind a load balancer (`--node NAME`) the
        // server's name goes first, for the balancer's sticky route, and adds nothing to guess.
        let random = format!(
            "{}{}",
            chromate_command::private_fs::random_suffix(),
            chromate_command::private_fs::random_suffix()
        );
        let id = match &server.flags.node {
            Some(node) => format!("{node}.{random}"),
            None => random,
        };
        let session = server.new_session(principal);
        sessions.insert(id.clone(), session.clone());
        (session, Some(id))
    } else {
        let Some(id) = header(&headers, "mcp-session-id") else {
            return rpc_status(
                StatusCode::BAD_REQUEST,
                &RpcError::new(
                    request_id(&incoming),
                    jsonrpc::INVALID_REQUEST,
                    "bad request: missing MCP-Session-Id (send initialize first, or name the 2026-07-28 revision in _meta)",
                ),
            );
        };
        match server.session(id, principal) {
            Some(session) => (session, None),
            None => {
                return rpc_status(
                    StatusCode::NOT_FOUND,
                    &RpcError::new(
                        request_id(&incoming),
                        jsonrpc::INVALID_REQUEST,
                        not_found_message(server.flags.node.as_deref(), id),
                    ),
                )
            }
        }
    };
    let open = OpenRequest::new(&session);
    let mut response = match incoming {
        Incoming::Request { id, method, params } => {
            let sse = method == "tools/call" && accepts_sse(&headers);
            answer(server, open, id, method, params, modern, sse).await
        }
        Incoming::Notification { method, params } => {
            if !notify(&session, method, params) {
                return plain(StatusCode::NOT_FOUND, "the session ended");
            }
            drop(open);
            empty(StatusCode::ACCEPTED)
        }
        Incoming::Response { .. } => {
            // This front end sends no requests of its own, so no response can be for us.
            drop(open);
            empty(StatusCode::ACCEPTED)
        }
    };
    if let Some(id) = new_id {
        if let Ok(value) = HeaderValue::from_str(&id) {
            response.headers_mut().insert("mcp-session-id", value);
        }
    }
    response
}

/// Why a session id is unknown here. Behind a load balancer (`--node`), an id that another
/// server made means the balancer routed it wrong: said so, with the rule to check.
fn not_found_message(node: Option<&str>, id: &str) -> String {
    let theirs = id.split_once('.').map(|(prefix, _)| prefix);
    match (node, theirs) {
        (Some(ours), Some(theirs)) if ours != theirs && is_node_name(theirs) => format!(
            "session not found: its id was made by the server named {theirs:?}, and this is {ours:?}; the load balancer must route by the id's prefix (docs/mcp.md#several-servers-behind-a-load-balancer)"
        ),
        _ => "session not found: it ended or expired; send initialize again".to_owned(),
    }
}

/// A `--node` name: 1 to 32 of a-z, 0-9 and `-` (the rule `chromate mcp` parses it with).
pub(crate) fn is_node_name(text: &str) -> bool {
    (1..=32).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Hands a notification to its session; false once the session ended.
fn notify(session: &Arc<HttpSession>, method: String, mut params: Option<Value>) -> bool {
    let mut cancelled = None;
    if method == "notifications/cancelled" {
        // The client names its own id; the call runs under ours.
        if let Some(params) = params.as_mut() {
            let theirs = params.get("requestId").cloned();
            let ours = theirs.and_then(|theirs| {
                lock(&session.inflight)
                    .iter()
                    .find(|(_, client)| **client == theirs)
                    .map(|(ours, _)| ours.clone())
            });
            params["requestId"] = ours.clone().map_or(Value::Null, Value::String);
            cancelled = ours;
        }
    }
    if !session.incoming(Incoming::Notification { method, params }) {
        return false;
    }
    if let Some(ours) = cancelled {
        // A cancelled request gets no response (2025-11-25, cancellation): its waiter
        // goes, so the HTTP request that carried it ends now instead of staying open.
        lock(&session.router.waiters).remove(&ours);
    }
    true
}

/// A JSON-RPC batch: only on a session that negotiated 2025-03-26 (named by its
/// `MCP-Session-Id`), whose items run as single messages would and whose responses come back
/// as one JSON array (202 and no body when it held only notifications); anywhere else the
/// whole batch is refused and nothing in it runs.
async fn batch(
    server: &Server,
    headers: &HeaderMap,
    items: Vec<Result<Incoming, RpcError>>,
    principal: Option<usize>,
) -> Response<HttpBody> {
    let session = header(headers, "mcp-session-id").and_then(|id| server.session(id, principal));
    let takes = session.as_ref().is_some_and(|session| {
        lock(&session.core)
            .as_ref()
            .is_some_and(Core::takes_batches)
    });
    let Some(session) = session.filter(|_| takes) else {
        return rpc_status(StatusCode::BAD_REQUEST, &jsonrpc::batch_refused());
    };
    let open = OpenRequest::new(&session);
    let mut answers = Vec::new();
    for item in items {
        match item {
            Ok(Incoming::Request { id, method, params }) => {
                let open = OpenRequest::new(&session);
                answers.push(futures::future::Either::Left(answer(
                    server, open, id, method, params, false, false,
                )));
            }
            Ok(Incoming::Notification { method, params }) => {
                if !notify(&session, method, params) {
                    return plain(StatusCode::NOT_FOUND, "the session ended");
                }
            }
            Ok(Incoming::Response { .. }) => {}
            Err(error) => {
                let response = rpc_status(StatusCode::OK, &error);
                answers.push(futures::future::Either::Right(std::future::ready(response)));
            }
        }
    }
    let mut responses = Vec::new();
    for response in futures::future::join_all(answers).await {
        if response.status() == StatusCode::ACCEPTED {
            continue; // cancelled: no response
        }
        let Ok(body) = response.into_body().collect().await;
        if let Ok(message) = serde_json::from_slice::<Value>(&body.to_bytes()) {
            if message.is_object() {
                responses.push(message);
            }
        }
    }
    drop(open);
    if responses.is_empty() {
        return empty(StatusCode::ACCEPTED);
    }
    json_response(StatusCode::OK, &Value::Array(responses))
}

/// Runs one request on its session and answers it as JSON or as an SSE stream.
async fn answer(
    server: &Server,
    open: OpenRequest,
    id: Value,
    method: String,
    mut params: Option<Value>,
    modern: bool,
    sse: bool,
) -> Response<HttpBody> {
    let session = open.0.clone();
    let ours = format!("h{}", server.next_id.fetch_add(1, Ordering::SeqCst));
    let token = params
        .as_mut()
        .and_then(|params| params.pointer_mut("/_meta/progressToken"))
        .map(|token| std::mem::replace(token, Value::String(ours.clone())));
    let (sender, mut receiver) = mpsc::unbounded_channel();
    lock(&session.router.waiters).insert(ours.clone(), sender);
    lock(&session.inflight).insert(ours.clone(), id.clone());
    let guard = InFlight {
        session: session.clone(),
        ours: ours.clone(),
        cancel_on_drop: modern,
        answered: false,
    };
    let status_of = move |message: &Value| -> StatusCode {
        let code = message.pointer("/error/code").and_then(Value::as_i64);
        match code {
            Some(jsonrpc::METHOD_NOT_FOUND) if modern => StatusCode::NOT_FOUND,
            Some(era::UNSUPPORTED_PROTOCOL_VERSION) => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        }
    };
    if !session.incoming(Incoming::Request {
        id: Value::String(ours.clone()),
        method,
        params,
    }) {
        return plain(StatusCode::NOT_FOUND, "the session ended");
    }
    let restore = move |mut message: Value| -> Value {
        if message.get("method").is_none() {
            message["id"] = id.clone();
        } else if let (Some(slot), Some(token)) =
            (message.pointer_mut("/params/progressToken"), token.as_ref())
        {
            *slot = token.clone();
        }
        message
    };
    if !sse {
        let mut guard = guard;
        loop {
            let Some(message) = receiver.recv().await else {
                // The waiter went: the client cancelled the request (no response is sent for
                // it, so the exchange ends with 202 and no body, which clients take as a
                // message without an answer), or the session ended.
                if lock(&session.core).is_some() {
                    return empty(StatusCode::ACCEPTED);
                }
                return plain(StatusCode::SERVICE_UNAVAILABLE, "the session ended");
            };
            if message.get("method").is_none() {
                guard.answered = true;
                drop(guard);
                drop(open);
                let status = status_of(&message);
                return json_response(status, &restore(message));
            }
        }
    }
    let events = futures::stream::unfold(
        (receiver, guard, open, false),
        move |(mut receiver, mut guard, open, done)| {
            let restore = restore.clone();
            async move {
                if done {
                    return None;
                }
                let message = receiver.recv().await?;
                let last = message.get("method").is_none();
                if last {
                    guard.answered = true;
                }
                let event = format!("event: message\ndata: {}\n\n", restore(message));
                Some((
                    Ok::<_, Infallible>(Frame::data(Bytes::from(event))),
                    (receiver, guard, open, last),
                ))
            }
        },
    );
    sse_response(events)
}

/// An SSE answer whose events are `events`' frames, unbuffered on the way (a proxy's too).
fn sse_response(
    events: impl futures::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + Sync + 'static,
) -> Response<HttpBody> {
    let mut response = Response::new(StreamBody::new(events).boxed());
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// A request in flight: when its HTTP exchange goes before its answer, its waiter goes, and
/// (2026-07-28, where closing the stream is the cancellation) the call is cancelled.
struct InFlight {
    session: Arc<HttpSession>,
    ours: String,
    cancel_on_drop: bool,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.session.inflight).remove(&self.ours);
        if self.answered {
            return;
        }
        lock(&self.session.router.waiters).remove(&self.ours);
        if self.cancel_on_drop {
            self.session.incoming(Incoming::Notification {
                method: "notifications/cancelled".to_owned(),
                params: Some(
                    json!({ "requestId": self.ours, "reason": "the client closed the stream" }),
                ),
            });
        }
    }
}

/// Whether an `Origin` may use the server: a loopback host (any port), or one of
/// `--allowed-hosts` (a `host` entry allows any port; `host:port` that port only).
pub(crate) fn origin_allowed(origin: &HeaderValue, allowed: &[String]) -> bool {
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some((_, authority)) = origin.split_once("://") else {
        return false;
    };
    let authority = authority.trim_end_matches('/').to_ascii_lowercase();
    if authority.contains(['/', '@', '?', '#']) {
        return false;
    }
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().map(|ip6| format!("[{ip6}]")),
        None => authority.split(':').next().map(str::to_owned),
    };
    let Some(host) = host else {
        return false;
    };
    if ["localhost", "127.0.0.1", "[::1]"].contains(&host.as_str()) {
        return true;
    }
    allowed
        .iter()
        .any(|entry| *entry == host || *entry == authority)
}

fn accepts_sse(headers: &HeaderMap) -> bool {
    header(headers, "accept").is_some_and(|accept| accept.contains("text/event-stream"))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn request_id(incoming: &Incoming) -> Value {
    match incoming {
        Incoming::Request { id, .. } => id.clone(),
        _ => Value::Null,
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response<HttpBody> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    response
}

fn rpc_status(status: StatusCode, error: &RpcError) -> Response<HttpBody> {
    json_response(status, &error.to_json())
}

fn plain(status: StatusCode, text: &'static str) -> Response<HttpBody> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// 405 with `text` and the methods `allow` names.
fn method_not_allowed(text: &'static str, allow: &'static str) -> Response<HttpBody> {
    let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, text);
    response
        .headers_mut()
        .insert("allow", HeaderValue::from_static(allow));
    response
}

fn empty(status: StatusCode) -> Response<HttpBody> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests;
