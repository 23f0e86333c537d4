//! Sessions that outlive a command: one background daemon per session name owns one
//! dispatcher session (browser, tabs, refs and baseline, journal, mocks, trace, artifacts),
//! reached over a Unix domain socket that only this user can open.
//!
//! Owns: where sessions live ([`runtime_dir`]: `CHROMATE_RUNTIME_DIR`, else
//! `$XDG_RUNTIME_DIR/chromate`, else `chromate-<uid>` under the temp dir, each 0700 and ours),
//! the file names of one session (socket, start lock, log, pid), and the wire between client and
//! daemon: one JSON [`Request`] line, one JSON [`Response`] line (after progress lines, when the
//! request asks for them); the client keeps its end open while the call runs, and closing it
//! cancels the call. The daemon is `server.rs` (its page tools for an attached MCP server,
//! `webmcp.rs`), the
//! client (which starts a daemon when none answers) `client.rs`. Unix only: on other
//! platforms the CLI says sessions need Linux or macOS.

pub(crate) mod client;
#[cfg(unix)]
pub(crate) mod server;
#[cfg(unix)]
mod webmcp;

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use chromate_command::Reply;

/// The most a request line may hold (a batch of 25 steps is far below it).
pub(crate) const MAX_REQUEST_BYTES: u64 = 4 * 1024 * 1024;
/// The most a response line may hold (results are spilled to files past a few KiB).
pub(crate) const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;

/// What a client asks a daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Request {
    /// Run one tool; the arguments are validated by the daemon (its defaults).
    Call {
        tool: String,
        arguments: Map<String, Value>,
        /// The command's working directory (absolute): relative paths (uploads, saved state)
        /// resolve there, and uploads may read under it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
        /// Send the call's progress as [`Response::Progress`] lines before the reply.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        progress: bool,
        /// Refuse `file:` URLs in this call's navigations: sent by `chromate mcp --session`
        /// without `--allow-unrestricted-file-access`, so an MCP client attached to a CLI
        /// session gets the server's rule, not the command line's (docs/mcp.md#file-access).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        refuse_file_urls: bool,
    },
    /// Who the daemon is, without waiting for a running call.
    Info,
    /// The tools the active tab's page offers (WebMCP, docs/mcp.md#webmcp) as `webmcp_<name>`
    /// tools/list entries, answered with [`Response::PageTools`] once their generation is not
    /// `seen` (at once without one): `chromate mcp --session NAME --caps webmcp` keeps one
    /// such request open to learn when the list changes. It is no activity: it never keeps
    /// an idle session alive.
    WatchTools {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seen: Option<u64>,
    },
    /// End the session: cancel a running call, close the browser, exit.
    Close,
}

/// What a daemon answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Response {
    Reply(Reply),
    /// The running call's phase changed (asked for with `progress`); the reply follows.
    Progress(String),
    Info(Info),
    /// The page tools' entries and their generation (it grows with each change).
    PageTools {
        generation: u64,
        tools: Vec<Value>,
    },
    /// The browser is closed and the daemon is exiting.
    Closed,
    /// The request was not understood (a version skew between binaries, a bad line).
    Refused(String),
}

/// A daemon's answer to [`Request::Info`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Info {
    pub(crate) session: String,
    pub(crate) pid: u32,
    /// The browser's process, when one runs and the session was free to ask.
    pub(crate) browser_pid: Option<u32>,
    /// Whether a call was running when asked.
    pub(crate) busy: bool,
    /// The dispatcher session's directory (artifacts, spills, downloads).
    pub(crate) session_dir: PathBuf,
    pub(crate) idle_timeout_s: u64,
    /// The `chromate` version that runs the daemon.
    pub(crate) version: String,
}

/// The directory every session of this user lives in, made if missing: 0700, owned by this
/// user, never a symlink (checked through `private_fs`).
pub(crate) fn runtime_dir() -> io::Result<PathBuf> {
    let dir = runtime_dir_from(
        &|name| std::env::var_os(name),
        chromate_command::private_fs::effective_uid(),
    );
    chromate_command::private_fs::ensure_dir(&dir)?;
    Ok(dir)
}

/// [`runtime_dir`]'s choice, from the environment `env`.
pub(crate) fn runtime_dir_from(
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    uid: u32,
) -> PathBuf {
    let set = |name: &str| {
        env(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = set("CHROMATE_RUNTIME_DIR") {
        return dir;
    }
    if let Some(dir) = set("XDG_RUNTIME_DIR").filter(|dir| dir.is_absolute()) {
        return dir.join("chromate");
    }
    let temp = set("TMPDIR").unwrap_or_else(|| PathBuf::from("/tmp"));
    temp.join(format!("chromate-{uid}"))
}

/// The files of one session inside the runtime directory.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SessionPaths {
    pub(crate) name: String,
    /// `<name>.sock`: the daemon listens here.
    pub(crate) socket: PathBuf,
    /// `<name>.lock`: held while a daemon is being started, so racing starts make one.
    pub(crate) lock: PathBuf,
    /// `<name>.log`: the daemon's stderr.
    pub(crate) log: PathBuf,
    /// `<name>.pid`: the daemon's pid, so `close` can end a daemon that does not answer.
    pub(crate) pid: PathBuf,
}

impl SessionPaths {
    pub(crate) fn new(dir: &Path, name: &str) -> SessionPaths {
        SessionPaths {
            name: name.to_owned(),
            socket: dir.join(format!("{name}.sock")),
            lock: dir.join(format!("{name}.lock")),
            log: dir.join(format!("{name}.log")),
            pid: dir.join(format!("{name}.pid")),
        }
    }
}

/// The session a command names: `--session`, else `CHROMATE_SESSION`, else `default`.
pub(crate) fn session_name(flag: Option<&str>) -> Result<String, String> {
    let from_env = std::env::var("CHROMATE_SESSION").ok();
    let name = flag
        .map(str::to_owned)
        .or(from_env.filter(|name| !name.is_empty()))
        .unwrap_or_else(|| "default".to_owned());
    crate::cli::commands::session_name(&name).map_err(|err| err.0)
}

#[cfg(test)]
mod tests;
