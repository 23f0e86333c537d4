//! The websocket transport, for browsers chromate did not start: a `ws://` or `wss://`
//! DevTools URL (a browser pool's, query and userinfo kept), or `http://host:port` resolved
//! through `/json/version`. TLS (the `tls` feature) verifies the certificate against the
//! system's roots and an optional private CA file.

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

use super::Connection;
use crate::error::{Error, Result};

/// The byte stream under the websocket: plain TCP, or TLS over it (`wss://`).
pub(crate) trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

pub(crate) type Socket = tokio_tungstenite::WebSocketStream<Box<dyn Stream>>;

/// How [`crate::Browser::connect_with`] reaches a browser (a pool's `wss://…?token=…` endpoint,
/// a private CA, an `Authorization` header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectOptions {
    /// A PEM file of CA certificates trusted for `wss://`, besides the system's roots.
    pub ca_file: Option<std::path::PathBuf>,
    /// The `Authorization` header of the websocket handshake (e.g. `Bearer …`). Without it, a
    /// URL's `user:password@` becomes `Basic` credentials.
    pub authorization: Option<String>,
    /// The viewport (CSS px) chromate's pages are set up with (1280×800 by default); `None`
    /// leaves the browser's window size.
    pub viewport: Option<(u32, u32)>,
    /// How long the browser has to answer its first command (`Browser.getVersion`), 30 s by
    /// default.
    pub startup_timeout: std::time::Duration,
    /// How long connecting may take as a whole (`/json/version`, the websocket handshake a
    /// pool holds while it queues the connection, `Browser.getVersion`), 30 s by default.
    pub connect_timeout: std::time::Duration,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            ca_file: None,
            authorization: None,
            viewport: Some(super::DEFAULT_VIEWPORT),
            startup_timeout: super::STARTUP_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }
}

/// [`ConnectOptions::connect_timeout`] by default.
pub const DEFAULT_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The parts of a `ws://` or `wss://` URL chromate needs.
struct WsUrl {
    tls: bool,
    /// `host` (brackets kept for IPv6) and port, to connect to.
    host: String,
    port: u16,
    /// The URL without its userinfo: what the handshake requests (path and query kept).
    request_url: String,
    /// `user:password` of the URL, if any.
    userinfo: Option<String>,
}

fn parse_ws_url(url: &str) -> std::result::Result<WsUrl, String> {
    let (tls, rest) = if let Some(rest) = url.strip_prefix("wss://") {
        (true, rest)
    } else if let Some(rest) = url.strip_prefix("ws://") {
        (false, rest)
    } else {
        return Err(format!("not a websocket url: {url}"));
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => (Some(userinfo.to_owned()), host_port),
        None => (None, authority),
    };
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            let port = port
                .parse::<u16>()
                .map_err(|_| format!("bad port in websocket url {url}"))?;
            (host.to_owned(), port)
        }
        _ => (host_port.to_owned(), if tls { 443 } else { 80 }),
    };
    if host.is_empty() {
        return Err(format!("no host in websocket url {url}"));
    }
    let scheme = if tls { "wss" } else { "ws" };
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    Ok(WsUrl {
        tls,
        request_url: format!("{scheme}://{host_port}{path}"),
        host,
        port,
        userinfo,
    })
}

/// Connects to `endpoint` (`ws://…`, `wss://…` or `http://host:port[/][?query]`) and returns
/// the socket and the websocket URL used. Every message is free of the endpoint's secrets
/// (userinfo, query values, `token=` anywhere).
pub(crate) async fn connect_websocket(
    endpoint: &str,
    options: &ConnectOptions,
) -> Result<(Socket, String)> {
    let fail = |reason: String| Error::ConnectFailed {
        endpoint: redact_userinfo(endpoint),
        reason: redact_secrets(&reason, endpoint),
    };
    let ws_url = if endpoint.starts_with("ws://") || endpoint.starts_with("wss://") {
        endpoint.to_string()
    } else if endpoint.starts_with("http://") {
        let url = parse_http_url(endpoint).map_err(fail)?;
        let authorization = authorization(options, url.userinfo.as_deref());
        let found = browser_ws_url(&url, authorization.as_deref())
            .await
            .map_err(fail)?;
        carry_query(&found, url.query.as_deref())
    } else {
        return Err(fail(
            "only ws://, wss:// and http:// endpoints are supported".into(),
        ));
    };
    let url = parse_ws_url(&ws_url).map_err(fail)?;
    let tcp = tokio::net::TcpStream::connect((url.host.trim_matches(['[', ']']), url.port))
        .await
        .map_err(|e| fail(e.to_string()))?;
    tcp.set_nodelay(true).map_err(|e| fail(e.to_string()))?;
    let stream: Box<dyn Stream> = if url.tls {
        tls_connect(tcp, &url.host, options).await.map_err(fail)?
    } else {
        Box::new(tcp)
    };
    let mut request = url
        .request_url
        .as_str()
        .into_client_request()
        .map_err(|e| fail(e.to_string()))?;
    if let Some(authorization) = authorization(options, url.userinfo.as_deref()) {
        let value = authorization
            .parse()
            .map_err(|_| fail("the Authorization value is not a valid header value".into()))?;
        request.headers_mut().insert("authorization", value);
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(256 << 20))
        .max_frame_size(Some(256 << 20));
    let (socket, _) = tokio_tungstenite::client_async_with_config(request, stream, Some(config))
        .await
        .map_err(|e| match e {
            tokio_tungstenite::tungstenite::Error::Http(response) => {
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|value| value.to_str().ok());
                let body = response
                    .body()
                    .as_deref()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default();
                fail(format!(
                    "the endpoint refused the websocket: {}",
                    refusal(response.status().as_u16(), retry_after, &body)
                ))
            }
            other => fail(other.to_string()),
        })?;
    Ok((socket, redact_userinfo(&ws_url)))
}

/// The `Authorization` header: `--cdp-authorization`'s, else the URL's `user:password` as
/// `Basic` credentials.
fn authorization(options: &ConnectOptions, userinfo: Option<&str>) -> Option<String> {
    options.authorization.clone().or_else(|| {
        userinfo.map(|userinfo| {
            use base64::Engine as _;
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(userinfo)
            )
        })
    })
}

/// What an endpoint's refusal (`status`, its `Retry-After`, its body) means, in words: a
/// bad token, a full pool (retry after N s), or the status and what the endpoint said.
pub(crate) fn refusal(status: u16, retry_after: Option<&str>, body: &str) -> String {
    let meaning = match status {
        401 => "HTTP 401 Unauthorized: the endpoint refused the token (the URL's token= or --cdp-authorization)".to_owned(),
        403 => "HTTP 403 Forbidden: the endpoint refused the token or this client".to_owned(),
        429 => "HTTP 429 Too Many Requests: the browser pool is full (every browser busy and its queue full)".to_owned(),
        503 => "HTTP 503 Service Unavailable: the endpoint has no browser to give now".to_owned(),
        _ => format!("HTTP {status}"),
    };
    let retry = retry_after
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(|value| match value.parse::<u64>() {
            Ok(seconds) => format!("; retry after {seconds} s"),
            Err(_) => format!("; retry after {}", one_line(value, 64)),
        })
        .unwrap_or_default();
    let said = one_line(body, 200);
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(" (the endpoint said: {said})")
    };
    format!("{meaning}{retry}{said}")
}

/// `text` on one line, its runs of whitespace made one space, at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match words.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &words[..cut]),
        None => words,
    }
}

/// `text` without `endpoint`'s secrets: its query values and userinfo become `***`, and so
/// does the value of any `token=` (an endpoint's answer may echo a URL).
pub(crate) fn redact_secrets(text: &str, endpoint: &str) -> String {
    let mut text = text.to_owned();
    if let Some((_, rest)) = endpoint.split_once("://") {
        let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
        let mut secrets: Vec<&str> = Vec::new();
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            secrets.push(userinfo);
            secrets.extend(userinfo.split_once(':').map(|(_, password)| password));
        }
        if let Some((_, query)) = rest.split_once('?') {
            let query = query.split('#').next().unwrap_or_default();
            secrets.extend(
                query
                    .split('&')
                    .filter_map(|pair| pair.split_once('=').map(|(_, value)| value)),
            );
        }
        for secret in secrets.into_iter().filter(|secret| secret.len() >= 3) {
            text = text.replace(secret, "***");
        }
    }
    redact_token_values(&text)
}

/// Every `token=VALUE` in `text` as `token=***` (the name in any case).
fn redact_token_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = lower[at..].find("token=") {
        let value_start = at + found + "token=".len();
        out.push_str(&text[at..value_start]);
        let value_len = text[value_start..]
            .find(|c: char| c == '&' || c == '#' || c == '"' || c == '\'' || c.is_whitespace())
            .unwrap_or(text.len() - value_start);
        if value_len > 0 {
            out.push_str("***");
        }
        at = value_start + value_len;
    }
    out.push_str(&text[at..]);
    out
}

/// `endpoint` for messages: a `user:password@` becomes `***@` and a query `?***` (a pool's
/// token travels there); the rest is kept.
pub(crate) fn redact_userinfo(endpoint: &str) -> String {
    let Some((scheme, rest)) = endpoint.split_once("://") else {
        return endpoint.to_owned();
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, _)) => (rest, "?***"),
        None => (rest, ""),
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_owned(),
    };
    format!("{scheme}://{authority}{path}{query}")
}

#[cfg(feature = "tls")]
async fn tls_connect(
    tcp: tokio::net::TcpStream,
    host: &str,
    options: &ConnectOptions,
) -> std::result::Result<Box<dyn Stream>, String> {
    use std::sync::Arc;
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = &options.ca_file {
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| format!("--cdp-ca {}: {e}", path.display()))?;
        let mut added = 0;
        for cert in certs {
            let cert = cert.map_err(|e| format!("--cdp-ca {}: {e}", path.display()))?;
            roots
                .add(cert)
                .map_err(|e| format!("--cdp-ca {}: {e}", path.display()))?;
            added += 1;
        }
        if added == 0 {
            return Err(format!(
                "--cdp-ca {}: no certificate in the file",
                path.display()
            ));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned())
        .map_err(|e| format!("TLS: bad server name {host}: {e}"))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let stream = connector
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS handshake failed: {e}"))?;
    Ok(Box::new(stream))
}

#[cfg(not(feature = "tls"))]
async fn tls_connect(
    _tcp: tokio::net::TcpStream,
    _host: &str,
    _options: &ConnectOptions,
) -> std::result::Result<Box<dyn Stream>, String> {
    Err("this build of chromate has no TLS (the npm package and release archives have it; for wss:// install with `cargo install chromate-mcp --features tls`)".into())
}

/// The parts of an `http://` endpoint chromate needs to read its `/json/version`.
#[derive(Debug)]
struct HttpUrl {
    /// `host:port` (port 80 when not given), to connect to and for the `Host` header.
    host_port: String,
    /// The path before `/json/version`, without a trailing `/` (`""` for the root).
    path: String,
    /// The query, without `?` (a pool's `token=…`): sent with `/json/version` and carried to
    /// the websocket URL it answers.
    query: Option<String>,
    /// `user:password` of the URL, if any.
    userinfo: Option<String>,
}

fn parse_http_url(url: &str) -> std::result::Result<HttpUrl, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| "not an http url".to_owned())?;
    let rest = rest.split('#').next().unwrap_or_default();
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path_query) = rest.split_at(authority_end);
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => (Some(userinfo.to_owned()), host_port),
        None => (None, authority),
    };
    let host_port = match host_port.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            port.parse::<u16>()
                .map_err(|_| format!("bad port {port:?} in the endpoint"))?;
            if host.is_empty() {
                return Err("no host in the endpoint".into());
            }
            host_port.to_owned()
        }
        _ if host_port.is_empty() => return Err("no host in the endpoint".into()),
        _ => format!("{host_port}:80"),
    };
    let (path, query) = match path_query.split_once('?') {
        Some((path, query)) => (path, (!query.is_empty()).then(|| query.to_owned())),
        None => (path_query, None),
    };
    Ok(HttpUrl {
        host_port,
        path: path.trim_end_matches('/').to_owned(),
        query,
        userinfo,
    })
}

/// The websocket URL `found` with the endpoint's query when it has none of its own: a pool
/// answers `/json/version` with its bare address, and the token must go along.
fn carry_query(found: &str, query: Option<&str>) -> String {
    match query {
        Some(query) if !found.contains('?') => {
            let (base, fragment) = match found.split_once('#') {
                Some((base, fragment)) => (base, format!("#{fragment}")),
                None => (found, String::new()),
            };
            let authority_only = base
                .split_once("://")
                .is_some_and(|(_, rest)| !rest.contains('/'));
            let slash = if authority_only { "/" } else { "" };
            format!("{base}{slash}?{query}{fragment}")
        }
        _ => found.to_owned(),
    }
}

/// How long `/json/version` has to answer.
const JSON_VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads `webSocketDebuggerUrl` from the endpoint's `/json/version` with a minimal HTTP/1.1
/// request (no HTTP client dependency for one GET): the query and `Authorization` go along,
/// a refusal (401, 429, …) is said in words, and a chunked answer is read whole.
async fn browser_ws_url(
    url: &HttpUrl,
    authorization: Option<&str>,
) -> std::result::Result<String, String> {
    let target = match &url.query {
        Some(query) => format!("{}/json/version?{query}", url.path),
        None => format!("{}/json/version", url.path),
    };
    let fetch = async {
        let mut stream = tokio::net::TcpStream::connect(url.host_port.as_str())
            .await
            .map_err(|e| e.to_string())?;
        let mut request = format!(
            "GET {target} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\nConnection: close\r\n",
            url.host_port
        );
        if let Some(authorization) = authorization {
            if authorization.contains(['\r', '\n']) {
                return Err("the Authorization value is not a valid header value".into());
            }
            request.push_str(&format!("Authorization: {authorization}\r\n"));
        }
        request.push_str("\r\n");
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        read_http_response(&mut stream).await
    };
    let response = tokio::time::timeout(JSON_VERSION_TIMEOUT, fetch)
        .await
        .map_err(|_| {
            format!(
                "no answer from /json/version within {} s",
                JSON_VERSION_TIMEOUT.as_secs()
            )
        })??;
    if response.status != 200 {
        return Err(format!(
            "/json/version: {}",
            refusal(
                response.status,
                response.retry_after.as_deref(),
                &response.body
            )
        ));
    }
    let version: serde_json::Value = serde_json::from_str(response.body.trim()).map_err(|e| {
        format!(
            "/json/version is not json ({e}): {}",
            one_line(&response.body, 200)
        )
    })?;
    version
        .get("webSocketDebuggerUrl")
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .ok_or_else(|| "/json/version has no webSocketDebuggerUrl".to_string())
}

/// One HTTP/1.1 response: its status, `Retry-After` and body (text).
#[derive(Debug, PartialEq, Eq)]
struct HttpResponse {
    status: u16,
    retry_after: Option<String>,
    body: String,
}

/// The most of an HTTP response chromate reads.
const MAX_RESPONSE: usize = 1 << 20;

/// Reads one HTTP/1.1 response, its body by `Content-Length` when given (Chromium keeps the
/// connection open), chunked (`Transfer-Encoding: chunked`), else to the end; at most 1 MiB.
async fn read_http_response<R: AsyncRead + Unpin>(
    stream: &mut R,
) -> std::result::Result<HttpResponse, String> {
    let mut response = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n_read = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        response.extend_from_slice(&chunk[..n_read]);
        if response.len() > MAX_RESPONSE {
            return Err("http response over 1 MiB".into());
        }
        if let Some(parsed) = parse_http_response(&response, n_read == 0)? {
            return Ok(parsed);
        }
        if n_read == 0 {
            return Err("the connection closed before the response was complete".into());
        }
    }
}

/// `bytes` as a whole response, `None` while more is needed (`ended`: nothing more comes).
fn parse_http_response(
    bytes: &[u8],
    ended: bool,
) -> std::result::Result<Option<HttpResponse>, String> {
    let Some(head_end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]);
    let body = &bytes[head_end + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| format!("not an HTTP response: {}", one_line(status_line, 80)))?;
    let mut length = None;
    let mut chunked = false;
    let mut retry_after = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| format!("bad Content-Length {value:?}"))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.eq_ignore_ascii_case("retry-after") {
            retry_after = Some(value.to_owned());
        }
    }
    let body = if chunked {
        match dechunk(body)? {
            Some(body) => body,
            None if ended => return Err("the connection closed inside a chunked body".into()),
            None => return Ok(None),
        }
    } else if let Some(length) = length {
        if body.len() < length {
            return Ok(None);
        }
        body[..length].to_vec()
    } else if ended {
        body.to_vec()
    } else {
        return Ok(None);
    };
    Ok(Some(HttpResponse {
        status,
        retry_after,
        body: String::from_utf8_lossy(&body).into_owned(),
    }))
}

/// A chunked body decoded, `None` while its last (empty) chunk has not come.
fn dechunk(mut bytes: &[u8]) -> std::result::Result<Option<Vec<u8>>, String> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = bytes.windows(2).position(|window| window == b"\r\n") else {
            return Ok(None);
        };
        let size_line = String::from_utf8_lossy(&bytes[..line_end]);
        let size_text = size_line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size {:?}", one_line(size_text, 20)))?;
        bytes = &bytes[line_end + 2..];
        if size == 0 {
            return Ok(Some(body));
        }
        if size > MAX_RESPONSE || bytes.len() < size + 2 {
            return Ok(None);
        }
        if bytes.get(size..size + 2) != Some(b"\r\n".as_slice()) {
            return Err("a chunk longer than its size".into());
        }
        body.extend_from_slice(&bytes[..size]);
        bytes = &bytes[size + 2..];
    }
}

/// How long closing the websocket waits for the peer to take the close frame.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

pub(super) fn spawn(
    socket: Socket,
    conn: Connection,
    mut outgoing: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    let (mut sink, mut stream) = socket.split();
    let write_conn = conn.clone();
    // The writer ends when the connection closes, whoever closed it: once the peer hung up
    // (a pool that ended the session) the reader ends, and the socket, whose halves are the
    // reader's and the writer's, is dropped and so closed at once, not left half-closed
    // (CLOSE-WAIT) until chromate exits.
    crate::rt::spawn(async move {
        loop {
            let frame = tokio::select! {
                frame = outgoing.recv() => frame,
                _ = write_conn.closed() => None,
            };
            let Some(frame) = frame else { break };
            let text = match String::from_utf8(frame) {
                Ok(text) => text,
                Err(_) => continue,
            };
            if let Err(err) = sink.send(Message::text(text)).await {
                write_conn.close(&format!("websocket write failed: {err}"));
                break;
            }
        }
        // A close frame if the peer still reads, bounded: a peer that is gone never answers.
        let _ = tokio::time::timeout(CLOSE_GRACE, sink.close()).await;
    });
    crate::rt::spawn(async move {
        loop {
            // Closed from this side (chromate let go of the browser): the writer sends the
            // close frame; a peer that never answers it must not keep the socket open.
            let message = tokio::select! {
                message = stream.next() => message,
                _ = conn.closed() => return,
            };
            let Some(message) = message else { break };
            match message {
                Ok(Message::Text(text)) => conn.dispatch(text.as_bytes()),
                Ok(Message::Binary(bytes)) => conn.dispatch(&bytes),
                Ok(Message::Close(_)) => break,
                Ok(_) => {}
                Err(err) => {
                    conn.close(&format!("websocket read failed: {err}"));
                    return;
                }
            }
        }
        conn.close("the browser closed the websocket");
    });
}

#[cfg(test)]
mod tests;
