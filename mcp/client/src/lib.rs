//! A client for an MCP server over stdio: newline-delimited JSON-RPC, one message a line.
//!
//! Two users share it: `chromate bench-snapshot`, which drives peer MCP servers (Playwright
//! MCP, chrome-devtools-mcp, chromate itself) the way an agent does, and chromate's tests and
//! benches, which drive `chromate mcp` and look at everything it writes
//! (`tests/support/mcp_client.rs` wraps it with the checks a test makes).
//!
//! [`StdioClient::spawn`] starts the server from a `Command` the caller prepared (arguments,
//! environment, working directory, stderr), with stdin and stdout piped. A thread of the
//! client reads stdout line by line; each line that parses is a message. Every wait has a
//! deadline, so a server that hangs fails the call instead of the caller. What happens to a
//! message that is not the awaited response is the [`Others`] chosen at spawn: kept in order
//! for the caller to look at, or, for a driver, a request of the server's own answered as not
//! offered and the rest dropped.
//!
//! The client ends what it started: [`StdioClient::shutdown`] closes stdin (a stdio server
//! ends then), waits, and kills the server past its time; dropping the client kills and reaps
//! it by its own process handle, which never signals a reused PID.

use std::collections::VecDeque;
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// What the client does with a message that is not the response it waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Others {
    /// Keeps every one, oldest first ([`StdioClient::recv`], [`StdioClient::take_stashed`]),
    /// a line that does not parse as `{"unparsable stdout line": LINE, "error": WHY}` and a
    /// failed read of stdout as `{"unreadable stdout": WHY}`: a test sees all the server wrote.
    Keep,
    /// Answers a request of the server's own (roots, sampling, …) with JSON-RPC error -32601
    /// "not offered" and drops notifications, other responses and lines that do not parse; a
    /// failed read of stdout fails the call ([`ClientError::Unreadable`]).
    Refuse,
}

/// Why a call of the client failed.
#[derive(Debug)]
pub enum ClientError {
    /// The server could not be started.
    Spawn(std::io::Error),
    /// The server's stdin or stdout could not be piped.
    NoStdio,
    /// Stdin was closed before ([`StdioClient::close_stdin`]).
    StdinClosed,
    /// Writing to the server failed.
    Write(std::io::Error),
    /// Nothing awaited came within the deadline; `awaited` names it (`response to id 3`).
    Timeout { awaited: String },
    /// The server closed stdout before what was awaited came.
    Closed { awaited: String },
    /// Reading the server's stdout failed ([`Others::Refuse`]).
    Unreadable(String),
    /// Waiting for the server's exit failed.
    Wait(std::io::Error),
    /// Reaping the exited server failed.
    Reap(std::io::Error),
    /// The server did not exit within the time given.
    NotExited { within: Duration },
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Spawn(err) => write!(f, "cannot start it: {err}"),
            ClientError::NoStdio => f.write_str("no stdio"),
            ClientError::StdinClosed => f.write_str("stdin closed"),
            ClientError::Write(err) => write!(f, "cannot write to it: {err}"),
            ClientError::Timeout { awaited } => write!(f, "no {awaited} in time"),
            ClientError::Closed { awaited } => write!(f, "stdout closed before the {awaited}"),
            ClientError::Unreadable(err) => f.write_str(err),
            ClientError::Wait(err) => write!(f, "cannot wait for it: {err}"),
            ClientError::Reap(err) => write!(f, "cannot reap it: {err}"),
            ClientError::NotExited { within } => write!(f, "it did not exit within {within:?}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// What the reader thread hands over: a line that parsed, one that did not, or a failed read.
enum Incoming {
    Message(Value),
    Unparsable(Value),
    Unreadable(String),
}

/// A running MCP server over stdio. Start one with [`StdioClient::spawn`].
#[derive(Debug)]
pub struct StdioClient {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Incoming>,
    others: Others,
    /// Messages read while looking for another one, oldest first ([`Others::Keep`]).
    stash: VecDeque<Value>,
    next_id: i64,
}

impl StdioClient {
    /// Starts `command` with stdin and stdout piped (its arguments, environment, working
    /// directory and stderr are the caller's) and a thread reading its stdout. Request ids
    /// count up from `first_id`.
    pub fn spawn(
        command: &mut Command,
        first_id: i64,
        others: Others,
    ) -> Result<StdioClient, ClientError> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(ClientError::Spawn)?;
        let stdin = child.stdin.take();
        let Some(stdout) = child.stdout.take() else {
            // Not started for the caller: ended here.
            let _ = child.kill();
            let _ = child.wait();
            return Err(ClientError::NoStdio);
        };
        let (sender, incoming) = mpsc::channel();
        // The sender is dropped at EOF, which the client sees as a disconnected channel.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let message = match line {
                    Ok(line) => match serde_json::from_str::<Value>(&line) {
                        Ok(value) => Incoming::Message(value),
                        Err(err) => Incoming::Unparsable(
                            json!({ "unparsable stdout line": line, "error": err.to_string() }),
                        ),
                    },
                    Err(err) => {
                        let _ = sender.send(Incoming::Unreadable(err.to_string()));
                        return;
                    }
                };
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        Ok(StdioClient {
            child,
            stdin,
            incoming,
            others,
            stash: VecDeque::new(),
            next_id: first_id,
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes `bytes` to the server's stdin as they are.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        let stdin = self.stdin.as_mut().ok_or(ClientError::StdinClosed)?;
        stdin
            .write_all(bytes)
            .and_then(|()| stdin.flush())
            .map_err(ClientError::Write)
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: &Value) -> Result<(), ClientError> {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line)
    }

    /// The next message: the oldest kept one, else the next one the server writes within
    /// `timeout` (with [`Others::Refuse`], a line that does not parse is skipped).
    pub fn recv(&mut self, timeout: Duration) -> Result<Value, ClientError> {
        if let Some(message) = self.stash.pop_front() {
            return Ok(message);
        }
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(message) = self.next_message(deadline, "message")? {
                return Ok(message);
            }
        }
    }

    /// One line from the reader within `deadline`: a message, or `None` for a line
    /// [`Others::Refuse`] skips.
    fn next_message(
        &mut self,
        deadline: Instant,
        awaited: &str,
    ) -> Result<Option<Value>, ClientError> {
        let incoming = self
            .incoming
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .map_err(|err| match err {
                RecvTimeoutError::Disconnected => ClientError::Closed {
                    awaited: awaited.to_owned(),
                },
                RecvTimeoutError::Timeout => ClientError::Timeout {
                    awaited: awaited.to_owned(),
                },
            })?;
        match (incoming, self.others) {
            (Incoming::Message(message), _) => Ok(Some(message)),
            (Incoming::Unparsable(marker), Others::Keep) => Ok(Some(marker)),
            (Incoming::Unparsable(_), Others::Refuse) => Ok(None),
            (Incoming::Unreadable(err), Others::Keep) => {
                Ok(Some(json!({ "unreadable stdout": err })))
            }
            (Incoming::Unreadable(err), Others::Refuse) => Err(ClientError::Unreadable(err)),
        }
    }

    /// The response (a message with `id` and no `method`) to request `id`, within `timeout`;
    /// what comes before it is kept or refused as [`Others`] says.
    pub fn response(&mut self, id: &Value, timeout: Duration) -> Result<Value, ClientError> {
        let is_response = |message: &Value| &message["id"] == id && message.get("method").is_none();
        if let Some(pos) = self.stash.iter().position(is_response) {
            if let Some(message) = self.stash.remove(pos) {
                return Ok(message);
            }
        }
        let deadline = Instant::now() + timeout;
        let awaited = format!("response to id {id}");
        loop {
            let Some(message) = self.next_message(deadline, &awaited)? else {
                continue;
            };
            if is_response(&message) {
                return Ok(message);
            }
            match self.others {
                Others::Keep => self.stash.push_back(message),
                Others::Refuse => {
                    if let (Some(_), Some(their_id)) = (message.get("method"), message.get("id")) {
                        let answer = json!({"jsonrpc": "2.0", "id": their_id,
                            "error": {"code": -32601, "message": "not offered"}});
                        self.send(&answer)?;
                    }
                }
            }
        }
    }

    /// A request id not used before by this client.
    pub fn fresh_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends a request with a fresh id; its whole response (a `result` or an `error`) within
    /// `timeout` of sending it.
    pub fn request(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        let id = self.fresh_id();
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        self.response(&json!(id), timeout)
    }

    /// `initialize` with `protocol_version` and `client_info`, then
    /// `notifications/initialized`: the whole `initialize` response.
    pub fn initialize(
        &mut self,
        protocol_version: &str,
        client_info: Value,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        let response = self.request(
            "initialize",
            json!({
                "protocolVersion": protocol_version,
                "capabilities": {},
                "clientInfo": client_info,
            }),
            timeout,
        )?;
        if response.get("error").is_none() {
            self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        }
        Ok(response)
    }

    /// `tools/call` of `tool` with `arguments`: the whole response.
    pub fn call(
        &mut self,
        tool: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
            timeout,
        )
    }

    /// Removes and returns the kept messages, oldest first.
    pub fn take_stashed(&mut self) -> Vec<Value> {
        self.stash.drain(..).collect()
    }

    /// Closes the server's stdin (EOF); later sends fail.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the server to exit, `within` at most, and reaps it. Then, with
    /// [`Others::Keep`], keeps what it wrote before its stdout closed (waiting no longer than
    /// the rest of `within` for that).
    pub fn wait_exit(&mut self, within: Duration) -> Result<ExitStatus, ClientError> {
        let deadline = Instant::now() + within;
        let status = match self.child.try_wait().map_err(ClientError::Wait)? {
            Some(status) => status,
            None => match exit_notice(self.child.id()).recv_timeout(within) {
                Ok(Ok(())) => self.child.wait().map_err(ClientError::Reap)?,
                Ok(Err(err)) => return Err(ClientError::Wait(err)),
                Err(_) => return Err(ClientError::NotExited { within }),
            },
        };
        if self.others == Others::Keep {
            while let Ok(incoming) = self
                .incoming
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                self.stash.push_back(match incoming {
                    Incoming::Message(value) | Incoming::Unparsable(value) => value,
                    Incoming::Unreadable(err) => json!({ "unreadable stdout": err }),
                });
            }
        }
        Ok(status)
    }

    /// Ends the server: closes its stdin (a stdio MCP server ends then, its browser with it)
    /// and waits `within` at most, then kills it. Its exit status if it ended by itself.
    pub fn shutdown(mut self, within: Duration) -> Option<ExitStatus> {
        self.close_stdin();
        self.wait_exit(within).ok()
        // Dropped here: killed and reaped if it has not exited.
    }
}

/// A channel that hears once the child `pid` has exited, without reaping it.
///
/// `waitid` with `WNOWAIT` blocks a helper thread until the exit but leaves the child a zombie,
/// so the `Child` handle still owns it: the client reaps it (or, past the deadline, kills and
/// reaps it on drop), and its PID cannot be reused in between.
fn exit_notice(pid: u32) -> Receiver<std::io::Result<()>> {
    let (sender, exited) = mpsc::channel();
    std::thread::spawn(move || loop {
        let res = wait_without_reaping(pid);
        if !matches!(&res, Err(err) if err.kind() == std::io::ErrorKind::Interrupted) {
            // Nobody may listen any more (the caller gave up): that is fine.
            let _ = sender.send(res);
            return;
        }
    });
    exited
}

/// `waitid(P_PID, pid, WEXITED | WNOWAIT)`: blocks until `pid` has exited and leaves it unreaped.
#[expect(unsafe_code, reason = "waitid(2) through libc")]
fn wait_without_reaping(pid: u32) -> std::io::Result<()> {
    // SAFETY: `siginfo_t` is plain data for which all zeroes is a valid value, and `waitid`
    // only writes into the one we pass, which lives across the call.
    let rc = unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        self.stdin = None;
        // The server (and, through it, a browser) must not outlive the client. `kill` does
        // nothing once the child is reaped, so it never signals a reused PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
