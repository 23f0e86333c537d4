//! The websocket transport, for browsers chromate did not start: a `ws://` DevTools URL, or
//! `http://host:port` resolved through `/json/version`.

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

use super::Connection;
use crate::error::{Error, Result};

pub(crate) type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// Connects to `endpoint` (`ws://…` or `http://host:port`) and returns the socket and the
/// websocket URL used.
pub(crate) async fn connect_websocket(endpoint: &str) -> Result<(Socket, String)> {
    let fail = |reason: String| Error::ConnectFailed {
        endpoint: endpoint.to_string(),
        reason,
    };
    let ws_url = if endpoint.starts_with("ws://") {
        endpoint.to_string()
    } else if let Some(rest) = endpoint.strip_prefix("http://") {
        let host_port = rest.trim_end_matches('/');
        browser_ws_url(host_port).await.map_err(fail)?
    } else {
        return Err(fail(
            "only ws:// and http:// endpoints are supported".into(),
        ));
    };
    let host_port = ws_url
        .strip_prefix("ws://")
        .and_then(|rest| rest.split('/').next())
        .ok_or_else(|| fail(format!("bad websocket url {ws_url}")))?
        .to_string();
    let stream = tokio::net::TcpStream::connect(&host_port)
        .await
        .map_err(|e| fail(e.to_string()))?;
    stream.set_nodelay(true).map_err(|e| fail(e.to_string()))?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(256 << 20))
        .max_frame_size(Some(256 << 20));
    let (socket, _) =
        tokio_tungstenite::client_async_with_config(ws_url.as_str(), stream, Some(config))
            .await
            .map_err(|e| fail(e.to_string()))?;
    Ok((socket, ws_url))
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

pub(super) fn spawn(
    socket: Socket,
    conn: Connection,
    mut outgoing: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    let (mut sink, mut stream) = socket.split();
    let write_conn = conn.clone();
    crate::spawn(async move {
        while let Some(frame) = outgoing.recv().await {
            let text = match String::from_utf8(frame) {
                Ok(text) => text,
                Err(_) => continue,
            };
            if let Err(err) = sink.send(Message::text(text)).await {
                write_conn.close(&format!("websocket write failed: {err}"));
                break;
            }
        }
        let _ = sink.close().await;
    });
    crate::spawn(async move {
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
