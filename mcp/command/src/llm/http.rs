//! The providers' HTTP client: one JSON `POST` over hyper's HTTP/1.1 client connection, plain
//! TCP for `http://` and rustls (ring, the system's trust store) for `https://` behind the
//! `tls` feature.
//!
//! Owns: connecting (bounded by the caller's deadline with everything else), the request, the
//! status, `Retry-After` and the body read up to [`MAX_BODY_BYTES`]. Does not own retries,
//! provider formats or what an error means (`llm/mod.rs`). One connection per request: a
//! model call takes seconds, a pool would save nothing worth its code.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Uri;
use hyper_util::rt::TokioIo;

/// The largest provider answer read; a larger one is an error, not an allocation.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// A provider's answer: its status, the `Retry-After` it asked for, and its body.
#[derive(Debug)]
pub struct HttpReply {
    pub status: u16,
    pub retry_after: Option<Duration>,
    pub body: Bytes,
}

/// Why no answer came: transient (worth a retry) or not.
#[derive(Debug)]
pub enum HttpFailure {
    /// The connection failed, was reset or hung past its time: worth another attempt.
    Transient(String),
    /// Nothing another attempt would change (a bad URL, no TLS in this build).
    Fatal(String),
}

/// `POST`s `body` to `url` with `headers`, the whole exchange bounded by `timeout`.
pub async fn post_json(
    url: &Uri,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
    timeout: Duration,
) -> Result<HttpReply, HttpFailure> {
    match tokio::time::timeout(timeout, exchange(url, headers, body)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(HttpFailure::Transient(format!(
            "no answer within {} ms",
            timeout.as_millis()
        ))),
    }
}

async fn exchange(
    url: &Uri,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
) -> Result<HttpReply, HttpFailure> {
    let tls = match url.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        _ => return Err(HttpFailure::Fatal(format!("{url}: not an http(s) URL"))),
    };
    let host = url
        .host()
        .ok_or_else(|| HttpFailure::Fatal(format!("{url}: no host")))?;
    let port = url.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let bare_host = host.trim_matches(['[', ']']);
    let tcp = tokio::net::TcpStream::connect((bare_host, port))
        .await
        .map_err(|err| HttpFailure::Transient(format!("connect {host}:{port}: {err}")))?;
    let _ = tcp.set_nodelay(true);
    let authority = match url.port_u16() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let path = url.path_and_query().map_or("/", |path| path.as_str());
    let mut request = hyper::Request::post(path)
        .header("host", authority)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header(
            "user-agent",
            concat!("chromate/", env!("CARGO_PKG_VERSION")),
        );
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|err| HttpFailure::Fatal(format!("request: {err}")))?;
    if tls {
        let stream = tls_connect(tcp, bare_host).await?;
        send(stream, request).await
    } else {
        send(tcp, request).await
    }
}

async fn send<S>(stream: S, request: hyper::Request<Full<Bytes>>) -> Result<HttpReply, HttpFailure>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|err| HttpFailure::Transient(format!("HTTP handshake: {err}")))?;
    // The connection is driven beside the request and dropped with it: when the caller's
    // deadline drops this future, the socket closes.
    let driver = async move {
        let _ = connection.await;
    };
    let exchange = async move {
        let response = sender
            .send_request(request)
            .await
            .map_err(|err| HttpFailure::Transient(format!("HTTP: {err}")))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = Limited::new(response.into_body(), MAX_BODY_BYTES)
            .collect()
            .await
            .map_err(|err| {
                HttpFailure::Transient(format!(
                    "reading the answer (at most {MAX_BODY_BYTES} bytes): {err}"
                ))
            })?
            .to_bytes();
        Ok(HttpReply {
            status,
            retry_after,
            body,
        })
    };
    tokio::pin!(driver);
    tokio::pin!(exchange);
    tokio::select! {
        outcome = &mut exchange => outcome,
        // The connection ended: the exchange finishes (or fails) with what it has.
        () = &mut driver => exchange.await,
    }
}

#[cfg(feature = "tls")]
async fn tls_connect(
    tcp: tokio::net::TcpStream,
    host: &str,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, HttpFailure> {
    use std::sync::Arc;
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::ServerName;

    // The system's trust store (rustls-native-certs: the platform's roots, `SSL_CERT_FILE`
    // and `SSL_CERT_DIR` when set), as `wss://` browser pools use.
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        return Err(HttpFailure::Fatal(
            "TLS: no trusted root certificate found on this system (install ca-certificates or set SSL_CERT_FILE)".into(),
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| HttpFailure::Fatal(format!("TLS: {err}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from(host.to_owned())
        .map_err(|err| HttpFailure::Fatal(format!("TLS: bad server name {host}: {err}")))?;
    // A certificate the trust store does not vouch for is not worth another attempt.
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|err| {
            let message = format!("TLS handshake with {host} failed: {err}");
            if err.to_string().to_lowercase().contains("certificate") {
                HttpFailure::Fatal(message)
            } else {
                HttpFailure::Transient(message)
            }
        })
}

#[cfg(not(feature = "tls"))]
async fn tls_connect(
    _tcp: tokio::net::TcpStream,
    host: &str,
) -> Result<tokio::net::TcpStream, HttpFailure> {
    Err(HttpFailure::Fatal(format!(
        "https://{host}: this build of chromate has no TLS (the release archives and npm packages have it; `cargo install chromate-mcp --features tls`)"
    )))
}
