//! The command line end to end: the real `chromate` binary's session commands (one tool per
//! command, on a persistent session daemon) against real headless Chromium and the fixture
//! server, as a shell script would run them.
//!
//! Every test gets its own [`Cli`]: a fresh runtime directory (`CHROMATE_RUNTIME_DIR`, so its
//! sessions are its own), artifacts, state and trace directories, and a working directory
//! that every command — and so every daemon it starts — runs in. A daemon is found by its
//! pid (`status --json` → `serverPid`) and, to prove none is left, by `/proc`: a `chromate
//! daemon` process whose working directory is the test's. Every test ends with
//! [`Cli::finish`], which closes the test's sessions and proves by PID that every daemon and
//! browser is gone; a test that fails midway kills what is left when its `Cli` drops.
//!
//! Commands run with a deadline, and every wait polls (`/proc`, the socket table, `chromate
//! sessions`) every 20 ms until its condition holds or its deadline passes: no fixed sleep
//! stands in for an event. All traffic goes to the fixture server on 127.0.0.1.

use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use chromate_tests::{procs, Response};
use serde_json::{json, Value};

use crate::util::{chromate_binary, closed_port, fixtures, ref_of};

/// How long one command may take (navigations wait 30 s at most).
const DEADLINE: Duration = Duration::from_secs(60);
/// How long a daemon and its browser may take to be gone once they should end.
const GONE: Duration = Duration::from_secs(10);

/// How one command ended and what it printed.
#[derive(Debug)]
pub(crate) struct Out {
    /// The exit status; `None` if a signal ended it.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Out {
    /// The first stdout line as JSON (the result line of the text output).
    pub(crate) fn result(&self) -> Value {
        let line = self.stdout.lines().next().unwrap_or_default();
        serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("the result line is not JSON ({err}): {self:?}"))
    }

    /// The whole stdout as exactly one JSON document (`--json`).
    pub(crate) fn document(&self) -> Value {
        let mut documents = serde_json::Deserializer::from_str(&self.stdout).into_iter::<Value>();
        let first = match documents.next() {
            Some(Ok(value)) => value,
            other => panic!("stdout is not a JSON document ({other:?}): {self:?}"),
        };
        assert!(
            documents.next().is_none(),
            "stdout holds more than one JSON document: {self:?}"
        );
        assert!(
            self.stdout.ends_with('\n') && self.stdout.trim_end().lines().count() == 1,
            "one document on one line: {self:?}"
        );
        first
    }

    /// The `code:` of a tool error printed on stderr, after checking its three lines.
    pub(crate) fn error_code(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert!(
            lines.len() >= 3
                && lines[0].starts_with("error: ")
                && lines[1].starts_with("code:  ")
                && lines[2].starts_with("hint:  "),
            "a tool error is error:/code:/hint: on stderr: {self:?}"
        );
        lines[1].trim_start_matches("code:  ").to_owned()
    }
}

/// A command started with [`Cli::spawn`]; its output is collected by a thread.
pub(crate) struct Running {
    pid: u32,
    label: String,
    done: mpsc::Receiver<std::io::Result<std::process::Output>>,
}

impl Running {
    /// The command's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Waits (bounded) for the command to end.
    pub(crate) fn wait(self) -> Out {
        self.wait_within(DEADLINE)
    }

    /// Waits for the command to end; it must within `limit`.
    pub(crate) fn wait_within(self, limit: Duration) -> Out {
        match self.done.recv_timeout(limit) {
            Ok(Ok(output)) => Out {
                code: output.status.code(),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            },
            Ok(Err(err)) => panic!("{}: cannot collect its output: {err}", self.label),
            Err(_) => {
                procs::kill(self.pid);
                panic!("{} did not end within {limit:?}", self.label);
            }
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        procs::is_alive(self.pid)
    }
}

/// One daemon as its `status` reports it, with every process of its tree.
#[derive(Debug, Clone)]
pub(crate) struct Pids {
    pub(crate) daemon: u32,
    pub(crate) browser: Option<u32>,
    /// The daemon and all its descendants (the browser and its helpers).
    pub(crate) tree: Vec<u32>,
}

/// The per-test world of the command line: runtime, artifacts, state, trace and working
/// directories under one temporary directory.
pub(crate) struct Cli {
    /// The temporary directory, removed when the test ends.
    _base: tempfile::TempDir,
    /// Its canonical path: `artifacts/`, `state/` and `traces/` go here.
    root: PathBuf,
    /// `CHROMATE_RUNTIME_DIR`: `root/run`, made by chromate itself.
    pub(crate) runtime: PathBuf,
    /// Every command's working directory, so every daemon's: uploads read under it.
    pub(crate) work: PathBuf,
}

impl Cli {
    pub(crate) fn new() -> Cli {
        let base = tempfile::Builder::new()
            .prefix("chromate-cli-test-")
            .tempdir()
            .unwrap_or_else(|err| panic!("cannot create a temp dir: {err}"));
        // `/proc/<pid>/cwd` is canonical: so is the path it is compared with.
        let root = base.path().canonicalize().expect("canonical temp dir");
        let work = root.join("work");
        std::fs::create_dir(&work).expect("the work dir");
        Cli {
            runtime: root.join("run"),
            work,
            root,
            _base: base,
        }
    }

    /// `root/name`: outside the working directory.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    pub(crate) fn socket(&self, session: &str) -> PathBuf {
        self.runtime.join(format!("{session}.sock"))
    }

    /// `chromate ARGS` with the caller's `CHROMATE_*` scrubbed (but `CHROMATE_BROWSER`) and
    /// this test's directories set.
    pub(crate) fn command(&self, args: &[&str], envs: &[(&str, &str)]) -> Command {
        let mut command =
            chromate_tests::mcp_client::scrubbed_command(chromate_binary(), &["CHROMATE_BROWSER"]);
        command
            .args(args)
            .env("CHROMATE_RUNTIME_DIR", &self.runtime)
            .env("CHROMATE_MCP_ARTIFACTS_DIR", self.path("artifacts"))
            .env("CHROMATE_STATE_DIR", self.path("state"))
            .env("CHROMATE_TRACE_DIR", self.path("traces"))
            .envs(envs.iter().copied())
            .current_dir(&self.work)
            // Its own process group, as a shell's job: a signal to the group is the
            // command's alone.
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A shell with job control starts its jobs with SIGINT and SIGQUIT at their default
        // action; a test started in the background of a script inherits them ignored (as
        // `.ci/run` under `&` does), which would make a Ctrl-C test hang on its wait.
        #[allow(unsafe_code)]
        // SAFETY: signal(2) is async-signal-safe; between fork and exec it only sets this
        // child's own dispositions, and the closure touches nothing else.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                Ok(())
            });
        }
        command
    }

    pub(crate) fn spawn_with(
        &self,
        args: &[&str],
        envs: &[(&str, &str)],
        input: Option<&str>,
    ) -> Running {
        self.spawn_command(self.command(args, envs), args, input)
    }

    pub(crate) fn spawn_command(
        &self,
        mut command: Command,
        args: &[&str],
        input: Option<&str>,
    ) -> Running {
        command.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let label = format!("chromate {}", args.join(" "));
        let mut child = command
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {label}: {err}"));
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // chromate reads standard input whole before it prints anything.
            stdin.write_all(input.as_bytes()).expect("write stdin");
        }
        let pid = child.id();
        let (sender, done) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(child.wait_with_output());
        });
        Running { pid, label, done }
    }

    pub(crate) fn spawn(&self, args: &[&str]) -> Running {
        self.spawn_with(args, &[], None)
    }

    pub(crate) fn run(&self, args: &[&str]) -> Out {
        self.spawn(args).wait()
    }

    pub(crate) fn run_env(&self, args: &[&str], envs: &[(&str, &str)]) -> Out {
        self.spawn_with(args, envs, None).wait()
    }

    /// `run` from another working directory than the test's.
    pub(crate) fn run_in(&self, dir: &Path, args: &[&str]) -> Out {
        let mut command = self.command(args, &[]);
        command.current_dir(dir);
        self.spawn_command(command, args, None).wait()
    }

    pub(crate) fn run_stdin(&self, args: &[&str], input: &str) -> Out {
        self.spawn_with(args, &[], Some(input)).wait()
    }

    /// A command that must succeed (exit 0, nothing on stderr); its stdout.
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_ok(&out, args);
        out.stdout
    }

    /// A command with `--json` that must succeed; its one JSON document.
    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        let out = self.run(&args);
        assert_ok(&out, &args);
        out.document()
    }

    /// The result line of a command that must succeed (the text output's first line).
    pub(crate) fn result_of(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert_ok(&out, args);
        out.result()
    }

    /// The value of `eval JS` on the default session.
    pub(crate) fn eval(&self, js: &str) -> Value {
        self.json(&["eval", js])["result"].clone()
    }

    /// A command that must fail as a tool error (exit 1); its output.
    pub(crate) fn fails(&self, args: &[&str]) -> Out {
        let out = self.run(args);
        assert_eq!(out.code, Some(1), "chromate {}: {out:?}", args.join(" "));
        out
    }

    /// A tool error's code, from the text output (stderr) and from `--json` (stdout).
    pub(crate) fn error(&self, args: &[&str]) -> String {
        let out = self.fails(args);
        assert!(
            out.stdout.is_empty(),
            "a tool error prints no result: {out:?}"
        );
        let code = out.error_code();
        let mut json_args = args.to_vec();
        json_args.push("--json");
        let out = self.fails(&json_args);
        assert!(out.stderr.is_empty(), "--json errors go to stdout: {out:?}");
        let error = out.document();
        assert_eq!(error["error"]["code"], json!(code), "{error}");
        assert!(error["error"]["hint"].is_string(), "{error}");
        code
    }

    /// The daemon and browser of `session` (which must be running: `status` would start it).
    pub(crate) fn pids(&self, session: &str) -> Pids {
        let status = self.json(&["status", "--session", session]);
        let daemon = pid_of(&status["serverPid"]).unwrap_or_else(|| panic!("{status}"));
        let browser = pid_of(&status["browserPid"]);
        let mut tree = procs::descendants(daemon);
        if let Some(browser) = browser {
            assert!(
                tree.contains(&browser),
                "the browser {browser} is the daemon's child: {tree:?}"
            );
        }
        tree.push(daemon);
        Pids {
            daemon,
            browser,
            tree,
        }
    }

    /// Every live `chromate daemon` of this test (its working directory is ours).
    pub(crate) fn daemons(&self) -> Vec<u32> {
        procs::all_processes()
            .into_iter()
            .filter(|info| {
                info.is_alive() && info.cmdline.get(1).map(String::as_str) == Some("daemon")
            })
            .filter(|info| {
                std::fs::read_link(format!("/proc/{}/cwd", info.pid))
                    .is_ok_and(|cwd| cwd == self.work)
            })
            .map(|info| info.pid)
            .collect()
    }

    /// `chromate close --session NAME` of a running session: it says so, exits 0, its daemon
    /// and browser are gone and so is its socket.
    pub(crate) fn close(&self, session: &str) {
        let pids = self.pids(session);
        let out = self.run(&["close", "--session", session]);
        assert_ok(&out, &["close", session]);
        assert_eq!(out.stdout, format!("closed session {session}\n"));
        // Gone before `close` returned, so the next command starts a new session.
        assert!(
            !self.socket(session).exists(),
            "close answers once the socket of {session} is gone"
        );
        assert_gone(&pids.tree, "after close");
        assert!(
            !self.socket(session).exists(),
            "close removes the socket of {session}"
        );
    }

    /// Closes every session this test left running and proves no daemon or browser is left.
    pub(crate) fn finish(self) {
        let listed = self.json_sessions();
        for row in listed.as_array().into_iter().flatten() {
            if let Some(session) = row["session"].as_str() {
                self.close(session);
            }
        }
        eventually(|| self.daemons().is_empty());
        assert_eq!(
            self.daemons(),
            Vec::<u32>::new(),
            "no daemon of this test is left"
        );
    }

    /// `sessions --json` → its `sessions` array.
    pub(crate) fn json_sessions(&self) -> Value {
        let out = self.run(&["sessions", "--json"]);
        assert_ok(&out, &["sessions", "--json"]);
        out.document()["sessions"].clone()
    }
}

impl Drop for Cli {
    fn drop(&mut self) {
        // Only after a failure is anything left: end it by pid (the browser follows its daemon
        // through its parent-death signal).
        for pid in self.daemons() {
            procs::kill(pid);
        }
    }
}

pub(crate) fn assert_ok(out: &Out, args: &[&str]) {
    assert_eq!(out.code, Some(0), "chromate {}: {out:?}", args.join(" "));
    assert!(
        out.stderr.is_empty(),
        "chromate {}: nothing on stderr: {out:?}",
        args.join(" ")
    );
}

fn pid_of(value: &Value) -> Option<u32> {
    value.as_u64().and_then(|pid| u32::try_from(pid).ok())
}

pub(crate) fn assert_gone(pids: &[u32], when: &str) {
    if let Err(alive) = procs::wait_until_gone_blocking(pids, Instant::now() + GONE) {
        panic!("processes still alive {when}: {alive:?}");
    }
}

/// Polls `condition` every 20 ms (as `procs` polls `/proc`) until it holds or [`GONE`]
/// passes; whether it held.
pub(crate) fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + GONE;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The observation of a text reply: its lines after the result line.
fn observation(stdout: &str) -> Vec<&str> {
    stdout.lines().skip(1).collect()
}

/// The permission bits of a file, not following a symlink.
fn mode_of(path: &Path) -> u32 {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o7777,
        Err(err) => panic!("no {}: {err}", path.display()),
    }
}

/// This process's effective uid: the owner of its `/proc` directory.
fn effective_uid() -> u32 {
    std::fs::metadata("/proc/self").expect("/proc/self").uid()
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
}

/// How many connections the daemon's socket has (`/proc/net/unix`: the daemon's end of each
/// connection carries the socket's path, state 03 = connected; the listener is state 01).
fn connections(socket: &Path) -> usize {
    let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    let path = socket.display().to_string();
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.len() == 8 && fields[5] == "03" && fields[7] == path
        })
        .count()
}

/// Whether the session reports a running call (`sessions --json`, which never queues).
fn busy(cli: &Cli) -> bool {
    cli.json_sessions()[0]["busy"] == json!(true)
}

mod commands;
mod robustness;
mod sessions;
mod tabs;
