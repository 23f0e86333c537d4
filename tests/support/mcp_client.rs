//! A test client for `chromate mcp` over stdio, shared by the MCP crate's wire tests and the
//! end-to-end tests.
//!
//! Owns spawning the binary (with its own artifacts and state directories and the caller's
//! `CHROMATE_*` variables scrubbed). The client underneath is `chromate-mcp-client`'s
//! `StdioClient`, the one `chromate bench-snapshot` drives peers with: a reader thread that
//! turns each stdout line into a JSON value, and JSON-RPC requests matched to their responses
//! by id, here with every other message kept for the test to look at ([`Others::Keep`]).
//! Every read has a deadline, so a misbehaving server fails a test instead of hanging it
//! (here a panic, which fails the test); nothing sleeps. Dropping the client kills and reaps
//! the server by its own process handle.
//!
//! It knows the tools only as far as the result shape every tool shares (`docs/mcp.md#results`):
//! [`McpClient::ok`] and [`McpClient::err`] check a success or a tool error strictly, for the
//! wire tests and the end-to-end tests alike. What each tool returns is each test's business.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use chromate_mcp_client::{ClientError, Others, StdioClient};
use serde_json::{json, Value};

/// The first request id [`McpClient::fresh_id`] hands out; well above the small ids tests
/// write by hand, so the two never meet.
const FIRST_ID: i64 = 1001;

/// A `Command` for `binary` without the caller's `CHROMATE_*` variables, except those named in
/// `kept`, so the developer's settings do not leak into a test.
///
/// ```no_run
/// let command = chromate_tests::mcp_client::scrubbed_command("target/debug/chromate", &[]);
/// ```
pub fn scrubbed_command(binary: impl AsRef<Path>, kept: &[&str]) -> Command {
    let mut command = Command::new(binary.as_ref());
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CHROMATE_") && !kept.contains(&name) {
            command.env_remove(name);
        }
    }
    command
}

/// How to start `chromate mcp`: the binary, extra arguments and variables, which `CHROMATE_*`
/// variables of the caller to keep, and the read deadline.
///
/// ```no_run
/// use std::time::Duration;
/// use chromate_tests::McpCommand;
///
/// let mut client = McpCommand::new("target/debug/chromate")
///     .args(&["--headed"])
///     .envs(&[("CHROMATE_MCP_SPILL_BYTES", "200")])
///     .keep_env("CHROMATE_BROWSER")
///     .deadline(Duration::from_secs(60))
///     .spawn();
/// let status = client.call("browser_status", serde_json::json!({}));
/// ```
#[derive(Debug, Clone)]
pub struct McpCommand {
    binary: PathBuf,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    kept_env: Vec<String>,
    deadline: Duration,
    label: String,
    current_dir: Option<PathBuf>,
}

impl McpCommand {
    /// `binary mcp`, every `CHROMATE_*` variable scrubbed, reads waiting 30 s at most.
    pub fn new(binary: impl Into<PathBuf>) -> Self {
        McpCommand {
            binary: binary.into(),
            args: Vec::new(),
            envs: Vec::new(),
            kept_env: Vec::new(),
            deadline: Duration::from_secs(30),
            label: "mcp".to_owned(),
            current_dir: None,
        }
    }

    /// Arguments after `mcp`.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(OsString::from));
        self
    }

    /// Variables to set; they are applied last, so they override the directories the client
    /// picks.
    pub fn envs(mut self, envs: &[(&str, &str)]) -> Self {
        self.envs.extend(
            envs.iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value))),
        );
        self
    }

    /// Keeps the caller's value of one `CHROMATE_*` variable (`CHROMATE_BROWSER`, say).
    pub fn keep_env(mut self, name: &str) -> Self {
        self.kept_env.push(name.to_owned());
        self
    }

    /// How long one read (one message, one response, the exit) may take.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// A word in the name of the artifacts directory, to tell servers apart when debugging.
    pub fn label(mut self, label: &str) -> Self {
        label.clone_into(&mut self.label);
        self
    }

    /// The server's working directory (else the test's): where relative paths resolve and
    /// what browser_upload may read from.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// Starts the server with a fresh temporary directory as `CHROMATE_MCP_ARTIFACTS_DIR`
    /// (and its `state/` as `CHROMATE_STATE_DIR`), stdin and stdout piped, stderr discarded.
    /// Panics if it cannot.
    pub fn spawn(self) -> McpClient {
        let artifacts = match tempfile::Builder::new()
            .prefix(&format!("chromate-mcp-test-{}-", self.label))
            .tempdir()
        {
            Ok(dir) => dir,
            Err(err) => panic!("cannot create an artifacts dir: {err}"),
        };
        let structured = self.args.iter().any(|arg| arg == "--structured-content")
            || self
                .envs
                .iter()
                .any(|(name, value)| name == "CHROMATE_MCP_STRUCTURED_CONTENT" && value == "1");
        let kept: Vec<&str> = self.kept_env.iter().map(String::as_str).collect();
        let mut command = scrubbed_command(&self.binary, &kept);
        command
            .arg("mcp")
            .args(&self.args)
            .env("CHROMATE_MCP_ARTIFACTS_DIR", artifacts.path())
            .env("CHROMATE_STATE_DIR", artifacts.path().join("state"))
            .envs(self.envs.iter().map(|(name, value)| (name, value)))
            .stderr(Stdio::null());
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        let inner = match StdioClient::spawn(&mut command, FIRST_ID, Others::Keep) {
            Ok(inner) => inner,
            Err(ClientError::Spawn(err)) => {
                panic!("cannot start {} mcp: {err}", self.binary.display())
            }
            Err(ClientError::NoStdio) => panic!("chromate mcp has no stdout"),
            Err(err) => panic!("chromate mcp: {err}"),
        };
        McpClient {
            inner,
            deadline: self.deadline,
            artifacts,
            structured,
        }
    }
}

/// A running `chromate mcp`, read with a deadline. Start one with [`McpCommand::spawn`].
#[derive(Debug)]
pub struct McpClient {
    /// First, so that the server is ended before its artifacts directory is removed.
    inner: StdioClient,
    deadline: Duration,
    artifacts: tempfile::TempDir,
    /// Started with `--structured-content` (or its variable): successes carry
    /// `structuredContent {result, observation}` as well as their text blocks.
    structured: bool,
}

impl McpClient {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.inner.pid()
    }

    /// The directory given as `CHROMATE_MCP_ARTIFACTS_DIR`; removed when the client drops.
    pub fn artifacts_dir(&self) -> &Path {
        self.artifacts.path()
    }

    /// Writes `bytes` to the server's stdin as they are; panics once stdin is closed.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let res = self.inner.send_raw(bytes);
        self.or_panic(res)
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: &Value) {
        let res = self.inner.send(message);
        self.or_panic(res)
    }

    /// The next message: the oldest stashed one, else the next line on stdout within the
    /// deadline. Panics at the deadline or when stdout closes.
    pub fn recv(&mut self) -> Value {
        let res = self.inner.recv(self.deadline);
        self.or_panic(res)
    }

    /// The response (a message with `id` and no `method`) to request `id`, within one deadline;
    /// everything read before it is stashed.
    pub fn response(&mut self, id: &Value) -> Value {
        let res = self.inner.response(id, self.deadline);
        self.or_panic(res)
    }

    /// A request id not used before by this client.
    pub fn fresh_id(&mut self) -> i64 {
        self.inner.fresh_id()
    }

    /// Sends a request with a fresh id and returns the whole response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let res = self.inner.request(method, params, self.deadline);
        self.or_panic(res)
    }

    /// `tools/call` of `tool` with `arguments`; the whole response.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let res = self.inner.call(tool, arguments, self.deadline);
        self.or_panic(res)
    }

    /// What a write or read gave, or the panic that fails the test.
    fn or_panic<T>(&self, res: Result<T, ClientError>) -> T {
        match res {
            Ok(value) => value,
            Err(ClientError::StdinClosed) => panic!("stdin already closed"),
            Err(ClientError::Write(err)) => panic!("cannot write to chromate mcp: {err}"),
            Err(ClientError::Closed { awaited }) => {
                panic!("chromate mcp closed stdout while the test waited for a {awaited}")
            }
            Err(ClientError::Timeout { awaited }) => {
                panic!("chromate mcp sent no {awaited} within {:?}", self.deadline)
            }
            Err(err) => panic!("chromate mcp: {err}"),
        }
    }

    /// The whole `tools/call` result of `tool`, after checking it is no JSON-RPC error.
    pub fn call_result(&mut self, tool: &str, arguments: Value) -> Value {
        let message = self.call(tool, arguments);
        assert!(message.get("error").is_none(), "{tool}: {message}");
        message["result"].clone()
    }

    /// A successful call of `tool`: its result JSON and its observation text, if any.
    ///
    /// Checks the success shape: no `isError`, the observation as the second text block, and
    /// `structuredContent` exactly when the server was started with `--structured-content`
    /// (hosts that find one show the model only that). The result JSON is then
    /// `structuredContent.result`; by default it is the first text block, which must parse.
    pub fn ok(&mut self, tool: &str, arguments: Value) -> (Value, Option<String>) {
        let result = self.call_result(tool, arguments);
        assert!(result.get("isError").is_none(), "{tool} failed: {result}");
        let observation = result["content"][1]["text"].as_str().map(str::to_owned);
        let value = match result.get("structuredContent") {
            Some(structured) => {
                assert!(
                    self.structured,
                    "{tool}: structuredContent without --structured-content: {result}"
                );
                assert!(structured.get("result").is_some(), "{tool}: {result}");
                structured["result"].clone()
            }
            None => {
                assert!(
                    !self.structured,
                    "{tool}: no structuredContent with --structured-content: {result}"
                );
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                match serde_json::from_str(text) {
                    Ok(value) => value,
                    Err(err) => {
                        panic!("{tool}: content[0] is not the result JSON ({err}): {result}")
                    }
                }
            }
        };
        (value, observation)
    }

    /// A failed call of `tool`: its `structuredContent.error`, after checking the error shape
    /// (`isError`, one text block `error: <message>\ncode:  <code>…`, a hint).
    pub fn err(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call_result(tool, arguments);
        assert_eq!(result["isError"], json!(true), "{tool} succeeded: {result}");
        assert_eq!(
            result["content"].as_array().map(Vec::len),
            Some(1),
            "errors carry no observation: {result}"
        );
        let error = result["structuredContent"]["error"].clone();
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let code = error["code"].as_str().unwrap_or_default();
        assert!(
            text.starts_with(&format!(
                "error: {}\ncode:  {code}",
                error["message"].as_str().unwrap_or_default()
            )),
            "{text}"
        );
        assert!(error["hint"].is_string(), "every error has a hint: {error}");
        error
    }

    /// The browser's pid, from `browser_status` (which launches nothing).
    pub fn browser_pid(&mut self) -> Option<u32> {
        let (status, _) = self.ok("browser_status", json!({}));
        status["browserPid"]
            .as_u64()
            .and_then(|pid| u32::try_from(pid).ok())
    }

    /// Removes and returns the stashed messages, oldest first.
    pub fn take_stashed(&mut self) -> Vec<Value> {
        self.inner.take_stashed()
    }

    /// Closes the server's stdin (EOF); later sends panic.
    pub fn close_stdin(&mut self) {
        self.inner.close_stdin();
    }

    /// Waits for the server to exit, `within` at most, and reaps it; panics at the deadline.
    /// Then stashes what it wrote before its stdout closed (waiting no longer than the rest
    /// of `within` for that).
    pub fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        match self.inner.wait_exit(within) {
            Ok(status) => status,
            Err(ClientError::Reap(err)) => panic!("cannot reap chromate mcp: {err}"),
            Err(ClientError::NotExited { .. }) => {
                panic!("chromate mcp did not exit within {within:?}")
            }
            Err(ClientError::Wait(err)) => panic!("cannot wait for chromate mcp: {err}"),
            Err(err) => panic!("cannot wait for chromate mcp: {err}"),
        }
    }
}
