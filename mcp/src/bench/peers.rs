//! The tools a `bench-snapshot` run compares, each driven as a user's agent drives it: chromate
//! (its own binary, `chromate mcp`), Playwright MCP and chrome-devtools-mcp over MCP stdio (a
//! minimal newline-delimited JSON-RPC client: the server's own framing in `crate::mcp` is
//! shaped for answering, with a 1 MiB frame limit that a peer's snapshot of a large page
//! exceeds), and agent-browser through its CLI, one process per command.
//!
//! A peer is named with `--peer KIND=CMD` (`--peer KIND=off` leaves it out) or found by its
//! command's name in `--peers-dir DIR/node_modules/.bin`, on `PATH`, or in `node_modules/.bin`
//! of the working directory and its parents (where `npx --no-install` looks). One that is not
//! found, or does not start, is reported as skipped.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use chromate::oracle::Controls;
use chromate_mcp_client::{ClientError, Others, StdioClient};
use serde_json::{json, Value};
use tokio::process::Command;
use tokio::task::block_in_place;

use super::{tokens, BenchArgs, Measured};

/// How long one call (or one CLI command) may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The kinds of tool, by the name `--peer` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Chromate,
    Playwright,
    DevTools,
    AgentBrowser,
}

impl Kind {
    pub(crate) const PEERS: [Kind; 3] = [Kind::Playwright, Kind::DevTools, Kind::AgentBrowser];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Chromate => "chromate",
            Kind::Playwright => "playwright-mcp",
            Kind::DevTools => "chrome-devtools-mcp",
            Kind::AgentBrowser => "agent-browser",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Kind> {
        [
            Kind::Chromate,
            Kind::Playwright,
            Kind::DevTools,
            Kind::AgentBrowser,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// The command an npm install puts in `node_modules/.bin` (and on `PATH`).
    fn bin(self) -> &'static str {
        match self {
            Kind::Chromate => "chromate",
            Kind::Playwright => "playwright-mcp",
            Kind::DevTools => "chrome-devtools-mcp",
            Kind::AgentBrowser => "agent-browser",
        }
    }
}

/// A tool to start: what it is and how.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub(crate) name: String,
    kind: Kind,
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// The tool's own directory (its working directory, artifacts, sockets).
    dir: PathBuf,
}

/// What the report says about a measured tool.
#[derive(Debug, Clone)]
pub(crate) struct ToolInfo {
    pub(crate) name: String,
    pub(crate) kind: &'static str,
    /// The command as started.
    pub(crate) command: String,
    /// The version the tool reports (MCP `serverInfo`, or `--version`).
    pub(crate) version: Option<String>,
}

/// The tools found, and the peers that were not.
pub(crate) struct Found {
    pub(crate) specs: Vec<Spec>,
    pub(crate) skipped: Vec<(String, String)>,
}

/// chromate (this binary), then each peer named or found.
pub(crate) fn find(args: &BenchArgs, browser: &Path, work: &Path) -> Found {
    let mut specs = Vec::new();
    let mut skipped = Vec::new();
    match std::env::current_exe() {
        Ok(exe) => specs.push(spec(
            "chromate",
            Kind::Chromate,
            exe,
            vec!["mcp".into()],
            browser,
            work,
        )),
        Err(e) => skipped.push((
            "chromate".into(),
            format!("cannot find its own binary: {e}"),
        )),
    }
    for (kind_name, command) in &args.peers {
        let Some(kind) = Kind::parse(kind_name) else {
            continue;
        };
        if kind != Kind::Chromate || command == "off" {
            continue;
        }
        let mut words = command.split_whitespace().map(str::to_string);
        if let Some(program) = words.next() {
            specs.push(spec(
                "chromate-peer",
                kind,
                program_path(&program),
                words.collect(),
                browser,
                work,
            ));
        }
    }
    for kind in Kind::PEERS {
        let named = args
            .peers
            .iter()
            .rev()
            .find(|(k, _)| k == kind.name())
            .map(|(_, c)| c.as_str());
        let (program, rest) = match named {
            Some("off") => continue,
            Some(command) => {
                let mut words = command.split_whitespace().map(str::to_string);
                let Some(program) = words.next() else {
                    continue;
                };
                (program_path(&program), words.collect())
            }
            None if args.no_peers => continue,
            None => match locate(kind, args.peers_dir.as_deref()) {
                Some(program) => (program, Vec::new()),
                None => {
                    skipped.push((
                        kind.name().to_string(),
                        format!(
                            "not installed: no `{}` on PATH or in node_modules/.bin \
                             (name it with --peer {}=CMD)",
                            kind.bin(),
                            kind.name()
                        ),
                    ));
                    continue;
                }
            },
        };
        specs.push(spec(kind.name(), kind, program, rest, browser, work));
    }
    Found { specs, skipped }
}

/// The command of `kind`: in `peers_dir/node_modules/.bin`, on `PATH`, or in
/// `node_modules/.bin` of the working directory or a parent. agent-browser's npm wrapper is
/// replaced by the native binary beside it, as a global install links it (the wrapper adds a
/// Node start to every command).
fn locate(kind: Kind, peers_dir: Option<&Path>) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = peers_dir {
        dirs.push(dir.join("node_modules").join(".bin"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    if let Ok(cwd) = std::env::current_dir() {
        dirs.extend(cwd.ancestors().map(|d| d.join("node_modules").join(".bin")));
    }
    let found = dirs
        .into_iter()
        .map(|d| d.join(kind.bin()))
        .find(|p| is_executable(p))?;
    // Absolute: the tool runs in a working directory of its own.
    let found = std::path::absolute(&found).unwrap_or(found);
    if kind == Kind::AgentBrowser {
        if let Ok(real) = std::fs::canonicalize(&found) {
            let os = if cfg!(target_os = "macos") {
                "darwin"
            } else {
                std::env::consts::OS
            };
            let arch = match std::env::consts::ARCH {
                "x86_64" => "x64",
                "aarch64" => "arm64",
                other => other,
            };
            let native = real.with_file_name(format!("agent-browser-{os}-{arch}"));
            if real.extension().is_some_and(|e| e == "js") && is_executable(&native) {
                return Some(native);
            }
        }
    }
    Some(found)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn running_as_root() -> bool {
    chromate_command::private_fs::effective_uid() == 0
}

/// A program named with a directory part, made absolute (the tool runs in a directory of its
/// own); a bare name is left for `PATH`.
fn program_path(program: &str) -> PathBuf {
    let path = PathBuf::from(program);
    if program.contains('/') {
        std::path::absolute(&path).unwrap_or(path)
    } else {
        path
    }
}

/// The spec of one tool, with the options that make every tool comparable: the same browser,
/// headless, a fresh profile, a 1280×800 viewport, and large replies inline.
fn spec(
    name: &str,
    kind: Kind,
    program: PathBuf,
    mut args: Vec<String>,
    browser: &Path,
    work: &Path,
) -> Spec {
    let dir = work.join(name);
    let browser = browser.display().to_string();
    let mut env = Vec::new();
    let own = |s: &str| s.to_string();
    match kind {
        Kind::Chromate => {
            args.extend([
                own("--browser"),
                browser,
                own("--artifacts-dir"),
                dir.join("artifacts").display().to_string(),
            ]);
            // The full view inline, not spilled to a file.
            env.push((own("CHROMATE_MCP_SPILL_BYTES"), u32::MAX.to_string()));
            env.push((own("CHROMATE_MCP_MAX_RESPONSE_BYTES"), u32::MAX.to_string()));
        }
        Kind::Playwright => {
            args.extend([
                own("--browser"),
                own("chromium"),
                own("--executable-path"),
                browser,
                own("--headless"),
                own("--isolated"),
                own("--viewport-size"),
                own("1280x800"),
                own("--output-dir"),
                dir.join("output").display().to_string(),
            ]);
            if running_as_root() {
                args.push(own("--no-sandbox"));
            }
        }
        Kind::DevTools => {
            args.extend([
                own("--headless"),
                own("--isolated"),
                own("--executablePath"),
                browser,
                own("--chromeArg=--disable-gpu"),
                own("--usageStatistics=false"),
                own("--viewport"),
                own("1280x800"),
                own("--no-page-id-routing"),
            ]);
            if running_as_root() {
                args.push(own("--chromeArg=--no-sandbox"));
            }
            env.push((own("CI"), own("1")));
        }
        Kind::AgentBrowser => {
            env.extend([
                (own("AGENT_BROWSER_EXECUTABLE_PATH"), browser),
                (own("AGENT_BROWSER_NO_VERSION_CHECK"), own("1")),
                (
                    own("AGENT_BROWSER_SOCKET_DIR"),
                    dir.join("sockets").display().to_string(),
                ),
                (
                    own("AGENT_BROWSER_SCREENSHOT_DIR"),
                    dir.join("screenshots").display().to_string(),
                ),
                // A safety net: the run closes its session itself.
                (own("AGENT_BROWSER_IDLE_TIMEOUT_MS"), own("900000")),
            ]);
        }
    }
    Spec {
        name: name.to_string(),
        kind,
        program,
        args,
        env,
        dir,
    }
}

/// A started tool.
pub(crate) struct Tool {
    pub(crate) info: ToolInfo,
    kind: Kind,
    driver: Driver,
}

enum Driver {
    Mcp(Box<McpClient>),
    Cli(Cli),
}

/// What one page gave: the figures and the full view's controls (to score).
pub(crate) struct PageFigures {
    pub(crate) measured: Measured,
    pub(crate) full_controls: Controls,
}

impl Tool {
    /// Starts the tool and waits until it answers (MCP `initialize`, or a first command).
    pub(crate) async fn start(spec: &Spec) -> Result<Tool, String> {
        std::fs::create_dir_all(&spec.dir)
            .map_err(|e| format!("cannot create {}: {e}", spec.dir.display()))?;
        let command_line = std::iter::once(spec.program.display().to_string())
            .chain(spec.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        let (driver, version) = if spec.kind == Kind::AgentBrowser {
            let cli = Cli {
                program: spec.program.clone(),
                args: spec.args.clone(),
                env: spec.env.clone(),
                dir: spec.dir.clone(),
                session: format!("bench{}", std::process::id()),
            };
            std::fs::create_dir_all(spec.dir.join("sockets"))
                .map_err(|e| format!("cannot create its socket dir: {e}"))?;
            let version = cli.plain(&["--version"]).await.ok();
            cli.run(&["set", "viewport", "1280", "800"]).await?;
            (Driver::Cli(cli), version.map(|v| v.trim().to_string()))
        } else {
            let mut client = McpClient::spawn(spec)?;
            let version = match client.initialize() {
                Ok(v) => v,
                Err(e) => {
                    client.stop();
                    return Err(e);
                }
            };
            (Driver::Mcp(Box::new(client)), version)
        };
        Ok(Tool {
            info: ToolInfo {
                name: spec.name.clone(),
                kind: spec.kind.name(),
                command: command_line,
                version,
            },
            kind: spec.kind,
            driver,
        })
    }

    /// Loads `url`, waits `wait_ms` as every tool does, times `repeat` default-view snapshots
    /// and reads the full view once.
    pub(crate) async fn measure(
        &mut self,
        url: &str,
        repeat: usize,
        wait_ms: u64,
    ) -> Result<PageFigures, String> {
        let kind = self.kind;
        match &mut self.driver {
            Driver::Mcp(client) => {
                let (navigate, arguments) = match kind {
                    Kind::DevTools => ("navigate_page", json!({"type": "url", "url": url})),
                    _ => ("browser_navigate", json!({ "url": url })),
                };
                client.call(navigate, arguments)?;
                super::wait_after_navigation(wait_ms).await;
                let snapshot = match kind {
                    Kind::DevTools => "take_snapshot",
                    _ => "browser_snapshot",
                };
                let mut samples = Vec::with_capacity(repeat);
                let mut text = String::new();
                for _ in 0..repeat.max(1) {
                    let started = Instant::now();
                    text = client.call(snapshot, json!({}))?;
                    samples.push(started.elapsed().as_secs_f64() * 1e3);
                }
                let full = if kind == Kind::Chromate {
                    chromate_full_view(client)?
                } else {
                    text.clone()
                };
                Ok(figures(samples, &text, &full))
            }
            Driver::Cli(cli) => {
                cli.run(&["open", url]).await?;
                super::wait_after_navigation(wait_ms).await;
                let mut samples = Vec::with_capacity(repeat);
                let mut text = String::new();
                for _ in 0..repeat.max(1) {
                    let started = Instant::now();
                    text = cli.run(&["snapshot"]).await?;
                    samples.push(started.elapsed().as_secs_f64() * 1e3);
                }
                let full = text.clone();
                Ok(figures(samples, &text, &full))
            }
        }
    }

    /// Ends the tool and waits for it (its browser ends with it).
    pub(crate) async fn stop(self) {
        match self.driver {
            Driver::Mcp(mut client) => {
                if self.kind == Kind::Playwright {
                    let _ = client.call("browser_close", json!({}));
                }
                (*client).stop();
            }
            Driver::Cli(cli) => {
                let _ = cli.run(&["close"]).await;
            }
        }
    }
}

/// chromate's full view: `max_lines` 5000, paged with `after` until the page is done.
fn chromate_full_view(client: &mut McpClient) -> Result<String, String> {
    let mut full = String::new();
    let mut after: Option<String> = None;
    for _ in 0..100 {
        let mut arguments = json!({ "max_lines": 5000 });
        if let Some(after) = &after {
            arguments["after"] = json!(after);
        }
        let text = client.call("browser_snapshot", arguments)?;
        let next = text.split("continue with after=").nth(1).map(|rest| {
            rest.chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect::<String>()
        });
        full.push_str(&text);
        full.push('\n');
        match next {
            Some(next) if !next.is_empty() && after.as_deref() != Some(next.as_str()) => {
                after = Some(next);
            }
            _ => break,
        }
    }
    Ok(full)
}

fn figures(samples: Vec<f64>, text: &str, full: &str) -> PageFigures {
    let full_controls = Controls::from_text(full).ignoring_whitespace();
    PageFigures {
        measured: Measured {
            samples_ms: samples,
            bytes: text.len(),
            tokens: tokens::count(text),
            controls: Controls::from_text(text).len(),
            full_bytes: full.len(),
            score: chromate::oracle::Score::default(),
            missing: Vec::new(),
            extra: Vec::new(),
        },
        full_controls,
    }
}

/// A peer over MCP stdio: `chromate-mcp-client`'s `StdioClient`, the client chromate's tests
/// drive `chromate mcp` with, here answering a request of the server's own as not offered and
/// dropping other messages ([`Others::Refuse`]). Its waits block, so each runs in
/// `block_in_place`: the runtime's other tasks (the pages served on 127.0.0.1) go on meanwhile.
struct McpClient {
    inner: StdioClient,
    name: String,
}

impl McpClient {
    fn spawn(spec: &Spec) -> Result<McpClient, String> {
        let stderr = std::fs::File::create(spec.dir.join("stderr.log"))
            .map_err(|e| format!("cannot create its log: {e}"))?;
        let mut command = std::process::Command::new(&spec.program);
        command
            .args(&spec.args)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&spec.dir)
            .stderr(Stdio::from(stderr));
        let inner = StdioClient::spawn(&mut command, 1, Others::Refuse).map_err(|e| match e {
            ClientError::Spawn(e) => format!("cannot start {}: {e}", spec.program.display()),
            other => other.to_string(),
        })?;
        Ok(McpClient {
            inner,
            name: spec.name.clone(),
        })
    }

    /// `initialize` and `notifications/initialized`; the server's name and version.
    fn initialize(&mut self) -> Result<Option<String>, String> {
        let client_info =
            json!({"name": "chromate-bench-snapshot", "version": env!("CARGO_PKG_VERSION")});
        let response = block_in_place(|| {
            self.inner
                .initialize("2025-06-18", client_info, CALL_TIMEOUT)
        });
        let result = self.result("initialize", response)?;
        let info = &result["serverInfo"];
        Ok(info["version"]
            .as_str()
            .map(|v| match info["name"].as_str() {
                Some(name) => format!("{name} {v}"),
                None => v.to_string(),
            }))
    }

    /// `tools/call`: the text of the result's content, or the error.
    fn call(&mut self, tool: &str, arguments: Value) -> Result<String, String> {
        let response = block_in_place(|| self.inner.call(tool, arguments, CALL_TIMEOUT));
        let result = self.result("tools/call", response)?;
        let text = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if result["isError"].as_bool() == Some(true) {
            let cut: String = text.chars().take(300).collect();
            return Err(format!("{tool} failed: {cut}"));
        }
        Ok(text)
    }

    /// The `result` of the response to `method`, or what went wrong, in words.
    fn result(&self, method: &str, response: Result<Value, ClientError>) -> Result<Value, String> {
        let name = &self.name;
        let message = response.map_err(|e| match e {
            ClientError::Timeout { .. } => {
                format!("{name}: no answer to {method} within {CALL_TIMEOUT:?}")
            }
            ClientError::Closed { .. } => format!("{name}: exited before answering {method}"),
            ClientError::StdinClosed => "stdin closed".to_string(),
            other => format!("{name}: {other}"),
        })?;
        if let Some(error) = message.get("error") {
            return Err(format!("{name}: {method}: {error}"));
        }
        Ok(message["result"].clone())
    }

    /// Closes stdin (a stdio MCP server ends then, its browser with it) and waits; kills the
    /// process if it has not ended within 15 s.
    fn stop(self) {
        block_in_place(|| self.inner.shutdown(Duration::from_secs(15)));
    }
}

/// agent-browser's CLI, one process per command on one named session.
struct Cli {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    dir: PathBuf,
    session: String,
}

impl Cli {
    /// One command on the session: its stdout, or the error it printed.
    async fn run(&self, words: &[&str]) -> Result<String, String> {
        let mut all: Vec<&str> = vec!["--session", &self.session];
        all.extend(words);
        self.plain(&all).await
    }

    /// One command as given.
    async fn plain(&self, words: &[&str]) -> Result<String, String> {
        let output = Command::new(&self.program)
            .args(&self.args)
            .args(words)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = tokio::time::timeout(CALL_TIMEOUT, output)
            .await
            .map_err(|_| format!("agent-browser {}: no answer within 120 s", words.join(" ")))?
            .map_err(|e| format!("cannot start {}: {e}", self.program.display()))?;
        if !output.status.success() {
            let err = String::from_utf8_lossy(&output.stderr);
            let cut: String = err.trim().chars().take(300).collect();
            return Err(format!("agent-browser {} failed: {cut}", words.join(" ")));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}
