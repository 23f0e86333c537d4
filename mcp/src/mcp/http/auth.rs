//! Who may use a `chromate mcp --http` server (docs/mcp.md#streamable-http): the bearer tokens,
//! the one a server generates when it is given none, the file that token is kept in for
//! `chromate init --mcp`, and the `Host` check that stops DNS rebinding.
//!
//! Owns: generating a token (32 bytes of `/dev/urandom`, as 64 hex digits), the token file
//! (`<runtime dir>/mcp-http-<port>.json`, 0600 through `private_fs`, removed when the server
//! ends), reading the running servers' files back for `init --mcp`, matching
//! `Authorization: Bearer` in constant time, and which `Host` a server on a loopback address
//! answers. Does not own the `Origin` check or the HTTP answers (`http.rs`).

use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use hyper::header::HeaderMap;
use serde_json::{json, Value};

/// The token file's name prefix; the port and `.json` follow.
const FILE_PREFIX: &str = "mcp-http-";

/// A new bearer token: 32 bytes of the OS's random source as 64 lower-case hex digits. No
/// fallback: without a random source there is no token worth the name, and the server says
/// so instead of starting.
pub(crate) fn generate_token() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut device| device.read_exact(&mut bytes))
        .map_err(|err| io::Error::new(err.kind(), format!("/dev/urandom: {err}")))?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// The index of the token that `Authorization: Bearer <token>` names, each compared in
/// constant time; `None` when the header is missing, of another scheme, or names none.
pub(crate) fn bearer_index(headers: &HeaderMap, tokens: &[String]) -> Option<usize> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let (scheme, given) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let given = given.trim().as_bytes();
    // Every token is compared, so the time says nothing about which one matched.
    tokens
        .iter()
        .enumerate()
        .fold(None, |found, (index, token)| {
            let equal = constant_time_eq(given, token.as_bytes());
            found.or(equal.then_some(index))
        })
}

/// Equality whose time depends on the lengths only, never on where the bytes differ.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether a server bound to `bound` answers a request whose `Host` is `host`.
///
/// A server on a loopback address answers only loopback names (`localhost`, `127.0.0.0/8`,
/// `[::1]`, any port) and the `--allowed-hosts` entries: a page on another name that its DNS
/// points at 127.0.0.1 (DNS rebinding) is refused, as is a request without `Host`. A server
/// on another address needs a token for every request, which a rebinding page does not
/// have, and has names chromate cannot know, so its `Host` is not checked.
pub(crate) fn host_allowed(host: Option<&str>, bound: SocketAddr, allowed: &[String]) -> bool {
    if !bound.ip().is_loopback() {
        return true;
    }
    let Some(authority) = host.map(|host| host.trim().to_ascii_lowercase()) else {
        return false;
    };
    if authority.is_empty() || authority.contains(['/', '@', '?', '#', ' ']) {
        return false;
    }
    let name = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((ip6, port)) if port.is_empty() || port.starts_with(':') => ip6.to_owned(),
            _ => return false,
        },
        None => match authority.split_once(':') {
            Some((name, _port)) => name.to_owned(),
            None => authority.clone(),
        },
    };
    if name == "localhost" || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()) {
        return true;
    }
    allowed
        .iter()
        .any(|entry| *entry == name || *entry == authority)
}

/// A generated token kept where `chromate init --mcp` finds it; the file goes when this does.
pub(crate) struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// Writes `{"url", "token", "pid"}` to `<dir>/mcp-http-<port>.json`, a new 0600 file; a
    /// file left there by a server that did not end cleanly is replaced.
    pub(crate) fn write(
        dir: &Path,
        local: SocketAddr,
        url: &str,
        token: &str,
    ) -> io::Result<TokenFile> {
        let path = dir.join(format!("{FILE_PREFIX}{}.json", local.port()));
        match std::fs::remove_file(&path) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => {
                return Err(io::Error::new(
                    err.kind(),
                    format!("{}: {err}", path.display()),
                ))
            }
            _ => {}
        }
        let entry = json!({ "url": url, "token": token, "pid": std::process::id() });
        chromate_command::private_fs::write_new_file(&path, entry.to_string().as_bytes())
            .map_err(|err| io::Error::new(err.kind(), format!("{}: {err}", path.display())))?;
        Ok(TokenFile { path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TokenFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A server of this user that generated its token, as its token file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunningServer {
    pub(crate) url: String,
    pub(crate) token: String,
    pub(crate) pid: u32,
}

/// The servers whose token files are in `dir` and whose process still runs, by port. A file
/// that cannot be read or parsed is skipped: `init --mcp` then prints what it can.
pub(crate) fn running_servers(dir: &Path) -> Vec<RunningServer> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut servers: Vec<RunningServer> = entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(FILE_PREFIX) && name.ends_with(".json"))
        })
        .filter_map(|entry| chromate_command::private_fs::read_file(&entry.path()).ok())
        .filter_map(|data| serde_json::from_slice::<Value>(&data).ok())
        .filter_map(|entry| {
            Some(RunningServer {
                url: entry.get("url")?.as_str()?.to_owned(),
                token: entry.get("token")?.as_str()?.to_owned(),
                pid: u32::try_from(entry.get("pid")?.as_u64()?).ok()?,
            })
        })
        .filter(|server| process_runs(server.pid))
        .collect();
    servers.sort_by(|a, b| a.url.cmp(&b.url));
    servers
}

/// Whether a process with this id exists (one of this user's, or another's we may not signal).
#[cfg(unix)]
#[allow(unsafe_code)]
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 sends nothing; it only reports whether the process exists.
    let status = unsafe { libc::kill(pid, 0) };
    status == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_runs(_pid: u32) -> bool {
    true
}
