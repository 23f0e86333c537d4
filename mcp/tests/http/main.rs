//! End-to-end tests of `chromate mcp --http` (docs/mcp.md, "Streamable HTTP"): the real binary,
//! real headless Chromium, a fixture origin on 127.0.0.1, and HTTP spoken by the small client
//! below (one request per connection, `Connection: close`, the answer read to its end, chunked
//! bodies decoded; SSE answers are parsed into their `data:` messages).
//!
//! Every read has a deadline; every browser is checked gone by PID (or by profile directory)
//! when its server ends; contexts are checked through the browser's own
//! `Target.getBrowserContexts`.
//!
//! This file holds what the tests share (the server, the HTTP client, the fixtures); the tests
//! are in one module per concern, each `use super::*`.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use chromate_tests::mcp_client::scrubbed_command;
use chromate_tests::procs::{chrome_processes_with_profile_under, is_alive};
use chromate_tests::tls::TlsCert;
use chromate_tests::{ExternalChromium, FixtureServer, Response};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const DEADLINE: Duration = Duration::from_secs(60);

/// A running `chromate mcp --http`, ended (SIGTERM, then waited for) when dropped.
struct HttpServer {
    child: Child,
    port: u16,
    /// The token the server generated and printed (none with `--no-auth` or `--auth-token`).
    token: Option<String>,
    /// Every line the server wrote on stderr so far.
    stderr: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    _tmp: tempfile::TempDir,
    tmp_path: std::path::PathBuf,
}

impl HttpServer {
    fn start(args: &[&str]) -> HttpServer {
        HttpServer::start_with(args, &[], |_| {})
    }

    /// [`HttpServer::start`] with more environment, each value a path relative to the
    /// server's temp directory, and the command adjusted last (environment, limits).
    fn start_with(
        args: &[&str],
        envs: &[(&str, &str)],
        adjust: impl FnOnce(&mut std::process::Command),
    ) -> HttpServer {
        let tmp = tempfile::tempdir().unwrap();
        let tmp_path = tmp.path().to_owned();
        let runtime = tmp.path().join("runtime");
        let mut command = scrubbed_command(env!("CARGO_BIN_EXE_chromate"), &["CHROMATE_BROWSER"]);
        command
            .arg("mcp")
            .args(args)
            .envs(
                envs.iter()
                    .map(|(name, value)| (*name, tmp.path().join(value))),
            )
            .env("TMPDIR", tmp.path())
            .env("CHROMATE_RUNTIME_DIR", &runtime)
            .env("CHROMATE_MCP_ARTIFACTS_DIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        adjust(&mut command);
        let mut child = command.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = lines.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                kept.lock().unwrap().push(line.clone());
                let port = ["http://127.0.0.1:", "http://0.0.0.0:"]
                    .iter()
                    .find_map(|prefix| line.split(prefix).nth(1))
                    .and_then(|rest| rest.split('/').next())
                    .and_then(|port| port.parse::<u16>().ok());
                if let Some(port) = port {
                    let _ = tx.send(Ok(port));
                } else if let Some(rest) = line.split("auth token (generated").nth(1) {
                    let token = rest.split("): ").nth(1).and_then(|t| t.split(' ').next());
                    let _ = tx.send(Err(token.map(str::to_owned)));
                }
            }
        });
        let generates = !args
            .iter()
            .any(|arg| ["--no-auth", "--auth-token"].contains(arg));
        let (mut port, mut token) = (None, None);
        while port.is_none() || (generates && token.is_none()) {
            match rx.recv_timeout(Duration::from_secs(20)) {
                Ok(Ok(found)) => port = Some(found),
                Ok(Err(found)) => token = Some(found.expect("a token line without a token")),
                Err(err) => panic!(
                    "the server printed no address (or no token): {err}; stderr: {:?}",
                    lines.lock().unwrap()
                ),
            }
        }
        HttpServer {
            child,
            port: port.unwrap(),
            token,
            stderr: lines,
            _tmp: tmp,
            tmp_path,
        }
    }

    /// The server's stderr so far, one string.
    fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Waits (10 s at most) until the server's stderr contains `needle`.
    fn wait_for_stderr(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.stderr_text().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "no {needle:?} on stderr: {}",
                self.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then the exit status; panics if it takes longer than 10 s.
    fn stop(&mut self) -> std::process::ExitStatus {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) on the PID of our own child, which has not been reaped yet.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body);
        if self.headers.get("content-type").map(String::as_str) == Some("text/event-stream") {
            // The last `data:` message is the response.
            let last = text
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .next_back()
                .unwrap_or_else(|| panic!("no data in the stream: {text}"));
            return serde_json::from_str(last).unwrap();
        }
        serde_json::from_str(&text).unwrap_or_else(|err| panic!("not JSON ({err}): {text}"))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// Sends one request to 127.0.0.1:`port` and reads the whole answer.
async fn http(port: u16, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.unwrap();
        parse_answer(&raw)
    };
    tokio::time::timeout(DEADLINE, exchange)
        .await
        .expect("the HTTP exchange timed out")
}

fn parse_answer(raw: &[u8]) -> Answer {
    let split = raw
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .expect("no end of headers");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .expect("no status");
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        let mut decoded = Vec::new();
        let mut rest = &body[..];
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16)
                .unwrap();
            rest = &rest[line_end + 2..];
            if size == 0 {
                break;
            }
            decoded.extend_from_slice(&rest[..size]);
            rest = &rest[size + 2..];
        }
        body = decoded;
    }
    Answer {
        status,
        headers,
        body,
    }
}

const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");

const JSON: (&str, &str) = ("Content-Type", "application/json");

/// A legacy-era (2025-11-25) client session.
struct Client {
    port: u16,
    session: String,
    next: u64,
    extra: Vec<(String, String)>,
}

impl Client {
    async fn connect(port: u16) -> Client {
        Client::connect_with(port, &[]).await
    }

    async fn connect_with(port: u16, extra: &[(&str, &str)]) -> Client {
        let extra: Vec<(String, String)> = extra
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        let mut headers: Vec<(&str, &str)> = vec![ACCEPT, JSON];
        headers.extend(extra.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"http-test","version":"1"}}});
        let answer = http(port, "POST", &headers, &init.to_string()).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(answer.json()["result"]["protocolVersion"], "2025-11-25");
        let session = answer
            .header("mcp-session-id")
            .expect("initialize answered without MCP-Session-Id")
            .to_owned();
        let client = Client {
            port,
            session,
            next: 1,
            extra,
        };
        let notified = client
            .post(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
        assert_eq!(notified.status, 202);
        client
    }

    async fn post(&self, message: &Value) -> Answer {
        let mut headers: Vec<(&str, &str)> = vec![
            ACCEPT,
            JSON,
            ("MCP-Session-Id", &self.session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        headers.extend(self.extra.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        http(self.port, "POST", &headers, &message.to_string()).await
    }

    /// A tool call's result (the JSON-RPC `result`).
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.next += 1;
        let message = json!({"jsonrpc":"2.0","id":self.next,"method":"tools/call",
            "params":{"name":tool,"arguments":arguments}});
        let answer = self.post(&message).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        let response = answer.json();
        assert_eq!(response["id"], json!(self.next), "{response}");
        response["result"].clone()
    }

    /// The text blocks of a successful call, joined.
    async fn call_text(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await;
        success_text(tool, &result)
    }

    async fn delete(&self) -> Answer {
        http(
            self.port,
            "DELETE",
            &[("MCP-Session-Id", &self.session)],
            "",
        )
        .await
    }
}

/// The fixture origin's login and who-am-I pages: `/login?user=N` sets the cookie `user=N`;
/// `/whoami` shows the cookies it was sent.
fn cookie_fixture() -> FixtureServer {
    let fixture = FixtureServer::start_detached().unwrap();
    fixture.route("/login", |request| {
        let user = request.query_param("user").unwrap_or_default();
        Response::html(format!("<h1>logged in as {user}</h1>"))
            .header("Set-Cookie", format!("user={user}; Path=/"))
    });
    fixture.route("/whoami", |request| {
        let cookie = request.header("cookie").unwrap_or("none").to_owned();
        Response::html(format!("<h1>cookie [{cookie}]</h1>"))
    });
    fixture
}

/// Chromium processes whose profile is under the server's temp directory.
fn browsers_of(server: &HttpServer) -> Vec<u32> {
    chrome_processes_with_profile_under(&server.tmp_path)
}

/// The contexts the browser itself knows of.
async fn browser_contexts(browser: &chromate::Browser) -> Vec<String> {
    let answer = browser
        .session()
        .send_raw("Target.getBrowserContexts", json!({}))
        .await
        .unwrap();
    answer["browserContextIds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The observation and result text of a stdio tools/call response.
fn stdio_text(response: &Value) -> String {
    assert_ne!(response["result"]["isError"], json!(true), "{response}");
    response["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {response}"))
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

mod auth; // Origin, tokens, the non-loopback bind, the Host check
mod browsers; // The shared browser: pools, crash, expiry, wss:// through a TLS front
mod connections; // The accept loop: half-open connections, the cap, out of descriptors
mod isolation; // What each session keeps its own
mod revisions; // Cancellation, 2025-03-26 batches, the stateless revision

/// The text blocks of `tool`'s successful result, joined; a tool error fails the test.
fn success_text(tool: &str, result: &Value) -> String {
    assert_ne!(result["isError"], json!(true), "{tool}: {result}");
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
