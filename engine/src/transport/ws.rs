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
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            ca_file: None,
            authorization: None,
            viewport: Some(super::DEFAULT_VIEWPORT),
            startup_timeout: super::STARTUP_TIMEOUT,
        }
    }
}

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

/// Connects to `endpoint` (`ws://…`, `wss://…` or `http://host:port`) and returns the socket
/// and the websocket URL used.
pub(crate) async fn connect_websocket(
    endpoint: &str,
    options: &ConnectOptions,
) -> Result<(Socket, String)> {
    let fail = |reason: String| Error::ConnectFailed {
        endpoint: redact_userinfo(endpoint),
        reason,
    };
    let ws_url = if endpoint.starts_with("ws://") || endpoint.starts_with("wss://") {
        endpoint.to_string()
    } else if let Some(rest) = endpoint.strip_prefix("http://") {
        let host_port = rest.trim_end_matches('/');
        browser_ws_url(host_port).await.map_err(fail)?
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
    let authorization = options.authorization.clone().or_else(|| {
        url.userinfo.as_ref().map(|userinfo| {
            use base64::Engine as _;
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(userinfo)
            )
        })
    });
    if let Some(authorization) = authorization {
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
            tokio_tungstenite::tungstenite::Error::Http(response) => fail(format!(
                "the endpoint refused the websocket: HTTP {}{}",
                response.status(),
                match response.status().as_u16() {
                    401 | 403 => " (check the endpoint's token or the Authorization header)",
                    _ => "",
                }
            )),
            other => fail(other.to_string()),
        })?;
    Ok((socket, redact_userinfo(&ws_url)))
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
    Err("this build of chromate has no TLS (the npm package and release archives are built without it; for wss:// install with `cargo install chromate-mcp --features tls`)".into())
}

/// Reads `webSocketDebuggerUrl` from `http://host_port/json/version` with a minimal
/// HTTP/1.1 request (no HTTP client dependency for one GET).
async fn browser_ws_url(host_port: &str) -> std::result::Result<String, String> {
    let fetch = async {
        let mut stream = tokio::net::TcpStream::connect(host_port)
            .await
            .map_err(|e| e.to_string())?;
        let request =
            format!("GET /json/version HTTP/1.1\r\nHost: {host_port}\r\nConnection: close\r\n\r\n");
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        read_http_body(&mut stream).await
    };
    let body = tokio::time::timeout(std::time::Duration::from_secs(10), fetch)
        .await
        .map_err(|_| "no answer from /json/version within 10s".to_string())??;
    let version: serde_json::Value =
        serde_json::from_str(body.trim()).map_err(|e| format!("/json/version is not json: {e}"))?;
    version
        .get("webSocketDebuggerUrl")
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .ok_or_else(|| "/json/version has no webSocketDebuggerUrl".to_string())
}

/// Reads one HTTP/1.1 response body, by `Content-Length` when given (Chromium keeps the
/// connection open), else to the end; at most 1 MiB.
async fn read_http_body(stream: &mut tokio::net::TcpStream) -> std::result::Result<String, String> {
    let mut response = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n_read = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        response.extend_from_slice(&chunk[..n_read]);
        if response.len() > 1 << 20 {
            return Err("http response over 1 MiB".into());
        }
        let text = String::from_utf8_lossy(&response);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            });
            if length.is_some_and(|len| body.len() >= len) || (n_read == 0 && length.is_none()) {
                return Ok(body.to_string());
            }
        }
        if n_read == 0 {
            return Err("the connection closed before the response was complete".into());
        }
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
        while let Some(message) = stream.next().await {
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
