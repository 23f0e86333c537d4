//! The fixture HTTP server: a tiny hand-written HTTP/1.1 server on tokio that serves
//! `tests/fixtures/pages/` on `127.0.0.1:<ephemeral port>`, plus a few test endpoints.
//!
//! It owns request parsing, static files, the test endpoints, one-off dynamic routes and
//! the log of fetched paths; over HTTPS too, with the TLS fixture's certificate
//! ([`FixtureServer::start_detached_tls_serving`], [`crate::tls`]). It deliberately does not do
//! chunked request bodies,
//! compression, range requests, caching or directory listings: fixture pages are small and
//! every response carries `Cache-Control: no-store` so request counts stay meaningful.
//!
//! Endpoints (all paths are relative to the server's origin):
//!
//! | path | behaviour |
//! |---|---|
//! | `/<file>` | a file from `tests/fixtures/pages/` (`/` → `index.html` if present) |
//! | `/delay/<ms>/<rest>` | waits `ms`, then answers `/<rest>` (any endpoint, query kept) |
//! | `/status/<code>` | that status (200–599) and a tiny text body |
//! | `/hang` | reads the request and never answers; ends when the client or server goes |
//! | `/redirect?to=<url>` | 302 to the percent-decoded `to` |
//! | `/slow-body/<ms>` | headers at once, an HTML body after `ms` |
//! | `/echo` | `{method, path, query, target, headers, body}` as JSON, CORS echoing `Origin` |
//! | `/set-cookie?name=v[&n2=v2]` | one `Set-Cookie: name=v; Path=/` per pair, JSON body |
//! | `/attachment?name=<n>&bytes=<k>[&after=<ms>]` | `Content-Disposition: attachment; filename="<n>"`, `k` (≤ 8 MiB, =16) bytes of `0123456789` repeated, the body `ms` after the headers |
//!
//! Routes registered with [`FixtureServer::route`] take precedence over all of the above; a route
//! answering [`Response::not_http`] sends a line that is not HTTP and closes the connection.
//! Malformed requests get 400; traversal out of the pages directory gets 403.
//!
//! Dropping the [`FixtureServer`] aborts its accept task, which owns every connection task,
//! so all of them end and the port closes.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinSet};

/// Largest request head (request line plus headers) the server accepts.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Largest request body the server accepts.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Longest delay `/delay/` and `/slow-body/` accept, so a typo cannot wedge a test run.
const MAX_DELAY_MS: u64 = 120_000;

/// A parsed HTTP request, as handed to dynamic routes.
#[derive(Debug, Clone)]
pub struct Request {
    /// The method token, e.g. `GET`.
    pub method: String,
    /// The request target as received, e.g. `/echo?a=1`.
    pub target: String,
    /// The target's path, without the query, not percent-decoded.
    pub path: String,
    /// The raw query string after `?`, if any.
    pub query: Option<String>,
    /// Headers in arrival order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (`Content-Length` bytes; empty without one).
    pub body: Vec<u8>,
}

impl Request {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header_name, _)| header_name.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The first query parameter with this name, percent-decoded; `None` when absent or when
    /// its encoding is invalid.
    pub fn query_param(&self, name: &str) -> Option<String> {
        query_pairs(self.query.as_deref()?)
            .ok()?
            .into_iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }
}

/// An HTTP response, built by the server or by a dynamic route.
#[derive(Debug, Clone)]
pub struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    body_delay: Option<Duration>,
    /// Bytes sent instead of an HTTP response, then the connection is closed.
    not_http: Option<&'static [u8]>,
}

impl Response {
    /// An empty response with this status.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            body_delay: None,
            not_http: None,
        }
    }

    /// A line that is not HTTP, then the connection closes: the browser reports
    /// `net::ERR_INVALID_HTTP_RESPONSE` and, unlike an empty response, does not resend the
    /// request itself (for routes that fail on purpose, once per navigation).
    pub fn not_http() -> Self {
        Self {
            not_http: Some(b"this is not http\r\n\r\n"),
            ..Self::new(502)
        }
    }

    /// A 200 `text/html` response.
    pub fn html(body: impl Into<String>) -> Self {
        Self::new(200)
            .header("Content-Type", "text/html; charset=utf-8")
            .body(body.into())
    }

    /// A 200 `text/plain` response.
    pub fn text(body: impl Into<String>) -> Self {
        Self::new(200)
            .header("Content-Type", "text/plain; charset=utf-8")
            .body(body.into())
    }

    /// A 200 `application/json` response.
    pub fn json(value: &serde_json::Value) -> Self {
        Self::new(200)
            .header("Content-Type", "application/json")
            .body(value.to_string())
    }

    /// Replaces the status.
    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Adds a header (repeatable, e.g. for `Set-Cookie`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Replaces the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Sends the headers at once and the body only after `delay`.
    pub fn body_after(mut self, delay: Duration) -> Self {
        self.body_delay = Some(delay);
        self
    }

    /// The status code.
    pub fn status_code(&self) -> u16 {
        self.status
    }
}

type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// State shared by the handle and the server's tasks.
struct Shared {
    root: PathBuf,
    /// Paths (without query) of well-formed requests, in arrival order.
    requests: Mutex<Vec<String>>,
    routes: Mutex<HashMap<String, Handler>>,
    /// Connection tasks currently running; a drop guard in each task keeps it exact.
    live_connections: AtomicUsize,
}

impl Shared {
    fn requests(&self) -> MutexGuard<'_, Vec<String>> {
        // A panicking route must not take the request log down with it.
        self.requests
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn routes(&self) -> MutexGuard<'_, HashMap<String, Handler>> {
        self.routes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A running fixture server. Cheap to query; dropping it stops it.
///
/// Start two instances for two origins (cross-origin tests), or use
/// [`FixtureServer::localhost_url`] for a cross-site URL on the same server.
pub struct FixtureServer {
    port: u16,
    /// `http` or `https`.
    scheme: &'static str,
    shared: Arc<Shared>,
    accept_task: AbortHandle,
}

impl std::fmt::Debug for FixtureServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixtureServer")
            .field("origin", &self.origin())
            .finish_non_exhaustive()
    }
}

impl FixtureServer {
    /// Starts a server for `tests/fixtures/pages/` on the current tokio runtime.
    ///
    /// ```no_run
    /// # async fn demo() -> std::io::Result<()> {
    /// let server = chromate_tests::FixtureServer::start().await?;
    /// assert!(server.url("login.html").ends_with("/login.html"));
    /// # Ok(()) }
    /// ```
    pub async fn start() -> io::Result<Self> {
        Self::start_serving(pages_dir()).await
    }

    /// Starts a server for another directory on the current tokio runtime.
    pub async fn start_serving(root: impl Into<PathBuf>) -> io::Result<Self> {
        let (listener, listener_v6) = bind().await?;
        let port = listener.local_addr()?.port();
        let shared = new_shared(root.into());
        let accept_task = tokio::spawn(accept_loop(listener, listener_v6, shared.clone(), None));
        Ok(Self {
            port,
            scheme: "http",
            shared,
            accept_task: accept_task.abort_handle(),
        })
    }

    /// Starts a server for `tests/fixtures/pages/` on a dedicated thread with its own
    /// runtime, for callers without one (benches) or that outlive a single test's runtime.
    pub fn start_detached() -> io::Result<Self> {
        Self::start_detached_serving(pages_dir())
    }

    /// [`FixtureServer::start_detached`] for another directory.
    pub fn start_detached_serving(root: impl Into<PathBuf>) -> io::Result<Self> {
        Self::start_detached_with(root.into(), None)
    }

    /// [`FixtureServer::start_detached_serving`] over HTTPS with `cert`'s leaf: its URLs are
    /// `https://127.0.0.1:<port>/…` (and `https://localhost:<port>/…`); everything else is as
    /// over HTTP. A browser trusts it with [`crate::tls::TlsCert::chromium_arg`].
    pub fn start_detached_tls_serving(
        root: impl Into<PathBuf>,
        cert: &crate::tls::TlsCert,
    ) -> io::Result<Self> {
        Self::start_detached_with(root.into(), Some(cert.acceptor()?))
    }

    fn start_detached_with(
        root: PathBuf,
        acceptor: Option<crate::tls::TlsAcceptor>,
    ) -> io::Result<Self> {
        let scheme = if acceptor.is_some() { "https" } else { "http" };
        let (sender, receiver) = std::sync::mpsc::channel();
        let shared = new_shared(root);
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("fixture-server".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(err) => {
                        let _ = sender.send(Err(err));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let (listener, listener_v6) = match bind().await {
                        Ok(listeners) => listeners,
                        Err(err) => {
                            let _ = sender.send(Err(err));
                            return;
                        }
                    };
                    let port = match listener.local_addr() {
                        Ok(addr) => addr.port(),
                        Err(err) => {
                            let _ = sender.send(Err(err));
                            return;
                        }
                    };
                    let task =
                        tokio::spawn(accept_loop(listener, listener_v6, thread_shared, acceptor));
                    if sender.send(Ok((port, task.abort_handle()))).is_ok() {
                        // Returns once the handle is dropped and aborts the task; the runtime and
                        // this thread then end.
                        let _ = task.await;
                    }
                });
            })?;
        let (port, accept_task) = receiver
            .recv()
            .map_err(|_| io::Error::other("fixture server thread ended before binding"))??;
        Ok(Self {
            port,
            scheme,
            shared,
            accept_task,
        })
    }

    /// The ephemeral port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>` (`https://` for a TLS server).
    pub fn origin(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.port)
    }

    /// `http://localhost:<port>`: a different site from [`FixtureServer::origin`], so iframes
    /// from it run out of process.
    pub fn localhost_origin(&self) -> String {
        format!("{}://localhost:{}", self.scheme, self.port)
    }

    /// `http://127.0.0.1:<port>/<path>`; a leading `/` on `path` is optional.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.origin(), path.trim_start_matches('/'))
    }

    /// `http://localhost:<port>/<path>`; a leading `/` on `path` is optional.
    pub fn localhost_url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.localhost_origin(),
            path.trim_start_matches('/')
        )
    }

    /// Paths (without query) of every well-formed request so far, in arrival order.
    pub fn requests(&self) -> Vec<String> {
        self.shared.requests().clone()
    }

    /// How many well-formed requests asked for `path` (without query; leading `/` optional).
    pub fn request_count(&self, path: &str) -> usize {
        let wanted = format!("/{}", path.trim_start_matches('/'));
        self.shared
            .requests()
            .iter()
            .filter(|seen| **seen == wanted)
            .count()
    }

    /// Forgets the request log.
    pub fn clear_requests(&self) {
        self.shared.requests().clear();
    }

    /// Registers a dynamic route for an exact path (query ignored), taking precedence over
    /// files and built-in endpoints. Registering the same path again replaces it.
    pub fn route(
        &self,
        path: &str,
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) {
        let path = format!("/{}", path.trim_start_matches('/'));
        self.shared.routes().insert(path, Arc::new(handler));
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        // The accept task owns the JoinSet of connection tasks, so aborting it ends them all.
        self.accept_task.abort();
    }
}

/// `tests/fixtures/audit-site/` of this crate: the audit's fixture site.
pub fn audit_site_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/audit-site")
}

/// `tests/fixtures/pages/` of this crate.
pub fn pages_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("pages")
}

fn new_shared(root: PathBuf) -> Arc<Shared> {
    Arc::new(Shared {
        root,
        requests: Mutex::new(Vec::new()),
        routes: Mutex::new(HashMap::new()),
        live_connections: AtomicUsize::new(0),
    })
}

/// Binds `127.0.0.1:0`, then best-effort `[::1]` on the same port so `localhost` URLs work
/// whichever loopback address the browser tries first.
async fn bind() -> io::Result<(TcpListener, Option<TcpListener>)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let port = listener.local_addr()?.port();
    let listener_v6 = TcpListener::bind((Ipv6Addr::LOCALHOST, port)).await.ok();
    Ok((listener, listener_v6))
}

async fn accept_v6(listener: &Option<TcpListener>) -> io::Result<(TcpStream, SocketAddr)> {
    match listener {
        Some(listener) => listener.accept().await,
        None => std::future::pending().await,
    }
}

async fn accept_loop(
    listener: TcpListener,
    listener_v6: Option<TcpListener>,
    shared: Arc<Shared>,
    acceptor: Option<crate::tls::TlsAcceptor>,
) {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            accepted = accept_v6(&listener_v6) => accepted,
            Some(_) = connections.join_next() => continue,
        };
        match accepted {
            Ok((stream, _)) => {
                let shared = shared.clone();
                let acceptor = acceptor.clone();
                shared.live_connections.fetch_add(1, Ordering::SeqCst);
                connections.spawn(async move {
                    let _guard = LiveGuard(shared.clone());
                    match acceptor {
                        None => serve_connection(stream, &shared).await,
                        Some(acceptor) => {
                            if let Ok(mut stream) = crate::tls::accept(&acceptor, stream).await {
                                serve_connection(&mut stream, &shared).await;
                                // close_notify: a TLS client reads a closed connection's end
                                // as an answer cut short without it.
                                let _ = stream.shutdown().await;
                            }
                        }
                    }
                });
            }
            // Transient accept errors (e.g. too many open files) must not stop the server.
            Err(_) => tokio::task::yield_now().await,
        }
    }
}

/// Decrements the live-connection count when a connection task ends or is aborted.
struct LiveGuard(Arc<Shared>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.live_connections.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the connection loop does after a handler.
enum Outcome {
    Respond(Response),
    /// Never answer; wait for the client to go away.
    Hang,
}

async fn serve_connection<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, shared: &Shared) {
    let mut buffer = Vec::new();
    loop {
        let request = match read_request(&mut stream, &mut buffer).await {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(failure) => {
                let response = Response::new(failure.status)
                    .header("Content-Type", "text/plain")
                    .body(format!("{} {}\n", failure.status, failure.reason).into_bytes());
                let _ = write_response(&mut stream, &response, false, false).await;
                return;
            }
        };
        shared.requests().push(request.path.clone());
        let keep_alive = wants_keep_alive(&request);
        let head_only = request.method == "HEAD";
        match handle(&request, shared).await {
            Outcome::Respond(Response {
                not_http: Some(bytes),
                ..
            }) => {
                let _ = stream.write_all(bytes).await;
                let _ = stream.shutdown().await;
                return;
            }
            Outcome::Respond(response) => {
                if write_response(&mut stream, &response, keep_alive, head_only)
                    .await
                    .is_err()
                    || !keep_alive
                {
                    return;
                }
            }
            Outcome::Hang => {
                drain_until_closed(&mut stream).await;
                return;
            }
        }
    }
}

fn wants_keep_alive(request: &Request) -> bool {
    let connection = request
        .header("Connection")
        .unwrap_or("")
        .to_ascii_lowercase();
    !connection.split(',').any(|token| token.trim() == "close")
}

async fn drain_until_closed<S: AsyncRead + Unpin>(stream: &mut S) {
    let mut scratch = [0u8; 1024];
    while matches!(stream.read(&mut scratch).await, Ok(n) if n > 0) {}
}

/// Why a request was rejected before reaching a handler.
#[derive(Debug)]
struct Rejection {
    status: u16,
    reason: &'static str,
}

fn reject(status: u16, reason: &'static str) -> Rejection {
    Rejection { status, reason }
}

/// Reads one request from `stream`, keeping bytes of a pipelined next request in `buffer`.
/// `Ok(None)` means the client closed the connection cleanly between requests.
async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
    buffer: &mut Vec<u8>,
) -> Result<Option<Request>, Rejection> {
    let head_end = loop {
        if let Some(position) = find_subslice(buffer, b"\r\n\r\n") {
            if position > MAX_HEAD_BYTES {
                return Err(reject(431, "request header fields too large"));
            }
            break position;
        }
        if buffer.len() > MAX_HEAD_BYTES + 4 {
            return Err(reject(431, "request header fields too large"));
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) if buffer.is_empty() => return Ok(None),
            Ok(0) => return Err(reject(400, "connection closed mid-request")),
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            Err(_) => return Ok(None),
        }
    };
    let mut request = parse_head(&buffer[..head_end])?;
    let body_start = head_end + 4;
    let content_length = match request.header("Content-Length") {
        Some(value) => value
            .trim()
            .parse::<usize>()
            .map_err(|_| reject(400, "bad content-length"))?,
        None => 0,
    };
    if request.header("Transfer-Encoding").is_some() {
        return Err(reject(400, "chunked request bodies are not supported"));
    }
    if content_length > MAX_BODY_BYTES {
        return Err(reject(413, "request body too large"));
    }
    while buffer.len() < body_start + content_length {
        let mut chunk = [0u8; 8192];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return Err(reject(400, "connection closed mid-body")),
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    request.body = buffer[body_start..body_start + content_length].to_vec();
    buffer.drain(..body_start + content_length);
    Ok(Some(request))
}

fn find_subslice(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Parses the request line and headers (everything before the blank line).
fn parse_head(head: &[u8]) -> Result<Request, Rejection> {
    let head = std::str::from_utf8(head).map_err(|_| reject(400, "request head is not utf-8"))?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(reject(400, "malformed request line"));
    };
    let is_token = |text: &str| {
        !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    if !is_token(method) {
        return Err(reject(400, "malformed method"));
    }
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(reject(400, "unsupported http version"));
    }
    if !target.starts_with('/') || target.bytes().any(|b| b.is_ascii_control()) {
        return Err(reject(400, "malformed request target"));
    }
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(reject(400, "malformed header line"));
        };
        if !is_token(name) {
            return Err(reject(400, "malformed header name"));
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path.to_string(), Some(query.to_string())),
        None => (target.to_string(), None),
    };
    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
        path,
        query,
        headers,
        body: Vec::new(),
    })
}

async fn write_response<S: AsyncWrite + Unpin>(
    stream: &mut S,
    response: &Response,
    keep_alive: bool,
    head_only: bool,
) -> io::Result<()> {
    let bodyless = matches!(response.status, 100..=199 | 204 | 304);
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason_phrase(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !bodyless {
        head.push_str(&format!("Content-Length: {}\r\n", response.body.len()));
    }
    head.push_str("Cache-Control: no-store\r\n");
    head.push_str(if keep_alive {
        "Connection: keep-alive\r\n"
    } else {
        "Connection: close\r\n"
    });
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await?;
    if bodyless || head_only {
        return Ok(());
    }
    if let Some(delay) = response.body_delay {
        tokio::time::sleep(delay).await;
    }
    stream.write_all(&response.body).await?;
    stream.flush().await
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn plain(status: u16, body: impl Into<String>) -> Response {
    Response::new(status)
        .header("Content-Type", "text/plain; charset=utf-8")
        .body(body.into())
}

/// Dispatches a well-formed request to a route, a built-in endpoint or a file.
async fn handle(request: &Request, shared: &Shared) -> Outcome {
    let mut path = request.path.clone();
    // `/delay/<ms>/<rest>` nests, so `/delay/100/delay/100/x` waits twice.
    while let Some(rest) = path.strip_prefix("/delay/") {
        let Some((ms, rest)) = rest.split_once('/') else {
            return Outcome::Respond(plain(400, "usage: /delay/<ms>/<path>\n"));
        };
        let Some(delay) = parse_delay(ms) else {
            return Outcome::Respond(plain(400, "delay must be 0..=120000 ms\n"));
        };
        tokio::time::sleep(delay).await;
        path = format!("/{rest}");
    }
    let route = shared.routes().get(&path).cloned();
    if let Some(route) = route {
        let routed = Request {
            path,
            ..request.clone()
        };
        return Outcome::Respond(route(&routed));
    }
    Outcome::Respond(match path.as_str() {
        "/hang" => return Outcome::Hang,
        "/echo" => echo(request),
        "/redirect" => redirect(request),
        "/set-cookie" => set_cookie(request),
        "/attachment" => attachment(request),
        _ => {
            if let Some(code) = path.strip_prefix("/status/") {
                status(code)
            } else if let Some(ms) = path.strip_prefix("/slow-body/") {
                slow_body(ms)
            } else {
                static_file(request, &path, &shared.root).await
            }
        }
    })
}

fn parse_delay(ms: &str) -> Option<Duration> {
    let ms: u64 = ms.parse().ok()?;
    (ms <= MAX_DELAY_MS).then(|| Duration::from_millis(ms))
}

fn status(code: &str) -> Response {
    match code.parse::<u16>() {
        Ok(code @ 200..=599) => plain(code, format!("status {code}\n")),
        _ => plain(400, "usage: /status/<200..=599>\n"),
    }
}

fn slow_body(ms: &str) -> Response {
    match parse_delay(ms) {
        Some(delay) => Response::html(
            "<!doctype html><html lang=\"en\"><title>slow body</title>\
             <p id=\"done\">slow body done</p></html>\n",
        )
        .body_after(delay),
        None => plain(400, "usage: /slow-body/<0..=120000>\n"),
    }
}

/// Largest body `/attachment` sends.
const MAX_ATTACHMENT_BYTES: usize = 8 * 1024 * 1024;

fn attachment(request: &Request) -> Response {
    let name = request
        .query_param("name")
        .unwrap_or_else(|| "file.bin".to_owned());
    let bytes = request
        .query_param("bytes")
        .map_or(Some(16), |bytes| bytes.parse::<usize>().ok());
    let after = request
        .query_param("after")
        .map_or(Some(Duration::ZERO), |ms| parse_delay(&ms));
    let (Some(bytes), Some(after)) = (bytes, after) else {
        return plain(400, "usage: /attachment?name=<n>&bytes=<k>&after=<ms>\n");
    };
    if bytes > MAX_ATTACHMENT_BYTES || name.contains('"') {
        return plain(
            400,
            "bytes must be ≤ 8 MiB and name must not hold a quote\n",
        );
    }
    let body: Vec<u8> = b"0123456789".iter().copied().cycle().take(bytes).collect();
    let response = Response::new(200)
        .header("Content-Type", "application/octet-stream")
        .header(
            "Content-Disposition",
            format!("attachment; filename=\"{name}\""),
        )
        .body(body);
    if after.is_zero() {
        response
    } else {
        response.body_after(after)
    }
}

fn redirect(request: &Request) -> Response {
    match request.query_param("to") {
        Some(to) if !to.is_empty() && !to.contains(['\r', '\n']) => {
            plain(302, format!("redirecting to {to}\n")).header("Location", to)
        }
        _ => plain(400, "usage: /redirect?to=<url>\n"),
    }
}

/// CORS headers echoing the request's `Origin`, credentials allowed.
fn with_cors(response: Response, request: &Request) -> Response {
    match request.header("Origin") {
        Some(origin) => response
            .header("Access-Control-Allow-Origin", origin)
            .header("Access-Control-Allow-Credentials", "true")
            .header("Vary", "Origin"),
        None => response,
    }
}

fn echo(request: &Request) -> Response {
    if request.method == "OPTIONS" {
        let mut preflight = with_cors(Response::new(204), request);
        if let Some(method) = request.header("Access-Control-Request-Method") {
            preflight = preflight.header("Access-Control-Allow-Methods", method);
        }
        if let Some(headers) = request.header("Access-Control-Request-Headers") {
            preflight = preflight.header("Access-Control-Allow-Headers", headers);
        }
        return preflight;
    }
    let mut headers = serde_json::Map::new();
    for (name, value) in &request.headers {
        let name = name.to_ascii_lowercase();
        let joined = match headers.get(&name).and_then(|seen| seen.as_str()) {
            Some(seen) => format!("{seen}, {value}"),
            None => value.clone(),
        };
        headers.insert(name, joined.into());
    }
    let value = serde_json::json!({
        "method": request.method,
        "path": request.path,
        "query": request.query,
        "target": request.target,
        "headers": headers,
        "body": String::from_utf8_lossy(&request.body),
    });
    with_cors(Response::json(&value), request)
}

fn set_cookie(request: &Request) -> Response {
    let Some(Ok(pairs)) = request.query.as_deref().map(query_pairs) else {
        return plain(400, "usage: /set-cookie?name=value\n");
    };
    let is_cookie_safe = |text: &str| {
        text.bytes()
            .all(|b| b.is_ascii_graphic() && !b";,\"\\".contains(&b))
    };
    if pairs.is_empty()
        || pairs
            .iter()
            .any(|(name, value)| name.is_empty() || !is_cookie_safe(name) || !is_cookie_safe(value))
    {
        return plain(
            400,
            "usage: /set-cookie?name=value (printable, no ; , \" \\)\n",
        );
    }
    let mut set = serde_json::Map::new();
    let mut response = Response::new(200);
    for (name, value) in &pairs {
        response = response.header("Set-Cookie", format!("{name}={value}; Path=/"));
        set.insert(name.clone(), value.clone().into());
    }
    let body = serde_json::json!({ "set": set });
    with_cors(
        response
            .header("Content-Type", "application/json")
            .body(body.to_string()),
        request,
    )
}

async fn static_file(request: &Request, path: &str, root: &Path) -> Response {
    if !matches!(request.method.as_str(), "GET" | "HEAD") {
        return plain(405, "method not allowed\n").header("Allow", "GET, HEAD");
    }
    let Some(decoded) = percent_decode(path) else {
        return plain(400, "bad percent-encoding\n");
    };
    let Ok(decoded) = String::from_utf8(decoded) else {
        return plain(400, "path is not utf-8\n");
    };
    let relative = decoded.trim_start_matches('/');
    let relative = if relative.is_empty() {
        "index.html"
    } else {
        relative
    };
    let relative_path = Path::new(relative);
    // Only plain names: no `..`, no root, no `.` games, no backslashes or NULs.
    let safe = !relative.contains(['\\', '\0'])
        && relative_path
            .components()
            .all(|component| matches!(component, Component::Normal(_)));
    if !safe {
        return plain(403, "forbidden path\n");
    }
    let full = root.join(relative_path);
    // Symlinks could still point outside the root; check the resolved path too.
    let (Ok(canonical_root), Ok(canonical)) = (
        tokio::fs::canonicalize(root).await,
        tokio::fs::canonicalize(&full).await,
    ) else {
        return plain(404, format!("not found: {path}\n"));
    };
    if !canonical.starts_with(&canonical_root) {
        return plain(403, "forbidden path\n");
    }
    match tokio::fs::read(&canonical).await {
        Ok(bytes) => Response::new(200)
            .header("Content-Type", content_type(&canonical))
            .body(bytes),
        // Directories and unreadable files alike.
        Err(_) => plain(404, format!("not found: {path}\n")),
    }
}

/// The `Content-Type` for a file, by extension.
pub fn content_type(path: &Path) -> &'static str {
    let extension = path.extension().and_then(|ext| ext.to_str()).unwrap_or("");
    match extension.to_ascii_lowercase().as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "txt" => "text/plain; charset=utf-8",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "webp" => "image/webp",
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

/// Decodes `%XX` escapes; `None` on a malformed escape.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = bytes.get(index + 1..index + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    Some(decoded)
}

/// Splits a query string into decoded pairs (`+` is a space); `Err` on bad encoding.
fn query_pairs(query: &str) -> Result<Vec<(String, String)>, ()> {
    let decode = |text: &str| {
        percent_decode(&text.replace('+', " ")).and_then(|bytes| String::from_utf8(bytes).ok())
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            Ok((decode(key).ok_or(())?, decode(value).ok_or(())?))
        })
        .collect()
}

#[cfg(test)]
mod tests;
