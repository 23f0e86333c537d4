//! Browserless, a real browser pool, for the `--cdp-endpoint` pool tests: the npm package
//! pinned in `tests/pool/package.json` (installed by `.ci/setup.sh all`), run with Node on
//! loopback with a token, launching the system's Chromium. Killed by PID when dropped: the
//! Node process group, and every Chromium it started (Puppeteer starts each in a process group
//! of its own), found as the Node process's descendants.
//!
//! Browserless has no setting for the Chromium it runs: it asks playwright-core, which looks
//! under `PLAYWRIGHT_BROWSERS_PATH` for `chromium-<revision>/chrome-linux64/chrome`
//! (`node_modules/playwright-core/browsers.json` has the revision). The pool gets a private
//! directory of that layout holding a link to the system's Chromium. Browserless always adds
//! `--no-sandbox` to the Chromium it launches. Its routes are limited to the Chromium and
//! management ones (`ROUTES`, a directory of links to them).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How a [`Browserless`] pool is sized: `CONCURRENT`, `QUEUED`, `TIMEOUT` (ms a session may
/// last before the pool ends it).
#[derive(Debug, Clone, Copy)]
pub struct PoolLimits {
    pub concurrent: u32,
    pub queued: u32,
    pub timeout_ms: u64,
}

/// A running Browserless on `127.0.0.1`.
pub struct Browserless {
    child: Child,
    port: u16,
    token: String,
    dir: tempfile::TempDir,
}

/// `tests/pool/`, where `.ci/setup.sh all` installs Browserless.
pub fn pool_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pool")
}

impl Browserless {
    /// Starts Browserless with `limits` and a random token, and waits (30 s at most) until it
    /// accepts connections.
    pub fn start(limits: PoolLimits) -> std::io::Result<Self> {
        let root = pool_dir();
        let entry = root.join("node_modules/@browserless.io/browserless/build/index.js");
        if !entry.is_file() {
            return Err(std::io::Error::other(format!(
                "Browserless is not installed ({} is missing): run .ci/setup.sh all",
                entry.display()
            )));
        }
        let dir = tempfile::Builder::new()
            .prefix("chromate-test-pool-")
            .tempdir()?;
        let browsers = dir.path().join("browsers");
        let chrome = browsers
            .join(format!("chromium-{}", chromium_revision(&root)?))
            .join("chrome-linux64");
        std::fs::create_dir_all(&chrome)?;
        let executable =
            std::env::var("CHROMATE_BROWSER").unwrap_or_else(|_| "/usr/bin/chromium".into());
        std::os::unix::fs::symlink(&executable, chrome.join("chrome"))?;
        let routes = dir.path().join("routes");
        std::fs::create_dir_all(&routes)?;
        let package_routes = root.join("node_modules/@browserless.io/browserless/build/routes");
        for name in ["chromium", "management"] {
            std::os::unix::fs::symlink(package_routes.join(name), routes.join(name))?;
        }
        // Browserless creates neither when they are given. `tmp` is the pool's TMPDIR: the
        // browsers it kills leave their process-singleton directories there, removed with
        // `dir`, not in /tmp.
        for sub in ["data", "downloads", "tmp"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        let port = free_port()?;
        let token = format!(
            "pooltok{:x}{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        );
        let log = std::fs::File::create(dir.path().join("browserless.log"))?;
        let mut command = Command::new("node");
        command.process_group(0);
        #[allow(unsafe_code)]
        // SAFETY: runs in the forked child before exec and only calls prctl, which is
        // async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // Its working directory is tests/pool: Browserless reads `package.json` and
        // `node_modules/playwright-core` from there.
        let child = command
            .arg(&entry)
            .current_dir(&root)
            .env("PLAYWRIGHT_BROWSERS_PATH", &browsers)
            .env("ROUTES", &routes)
            .env("HOST", "127.0.0.1")
            .env("PORT", port.to_string())
            .env("TOKEN", &token)
            .env("CONCURRENT", limits.concurrent.to_string())
            .env("QUEUED", limits.queued.to_string())
            .env("TIMEOUT", limits.timeout_ms.to_string())
            .env("DATA_DIR", dir.path().join("data"))
            .env("DOWNLOAD_DIR", dir.path().join("downloads"))
            .env("METRICS_JSON_PATH", dir.path().join("metrics.json"))
            .env("TMPDIR", dir.path().join("tmp"))
            .env("DEBUG", "browserless*,-**:verbose,-**:trace")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let mut pool = Self {
            child,
            port,
            token,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(pool);
            }
            if let Ok(Some(status)) = pool.child.try_wait() {
                return Err(std::io::Error::other(format!(
                    "Browserless exited ({status}): {}",
                    pool.log()
                )));
            }
            if Instant::now() >= deadline {
                return Err(std::io::Error::other(format!(
                    "Browserless did not listen within 30 s: {}",
                    pool.log()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// The Node process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `ws://127.0.0.1:<port>?token=<token>`.
    pub fn ws_url(&self) -> String {
        format!("ws://127.0.0.1:{}?token={}", self.port, self.token)
    }

    /// The Chromium processes the pool runs now: the Node process's Chrome-like descendants,
    /// and any with a profile in the pool's directory (an orphaned one too).
    pub fn chromium_pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = crate::procs::descendants(self.child.id())
            .into_iter()
            .filter(|&pid| {
                crate::procs::ProcessInfo::read(pid)
                    .is_some_and(|info| info.is_alive() && info.is_chrome_like())
            })
            .collect();
        for pid in crate::procs::chrome_processes_with_profile_under(self.dir.path()) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        pids
    }

    /// The browsers the pool runs now, one per session: its Chrome-like children (each
    /// browser's own processes are their descendants).
    pub fn browser_pids(&self) -> Vec<u32> {
        let node = self.child.id();
        crate::procs::all_processes()
            .into_iter()
            .filter(|info| info.ppid == node && info.is_alive() && info.is_chrome_like())
            .map(|info| info.pid)
            .collect()
    }

    /// What Browserless logged so far (its last 4 KiB).
    pub fn log(&self) -> String {
        let text =
            std::fs::read_to_string(self.dir.path().join("browserless.log")).unwrap_or_default();
        let start = text.len().saturating_sub(4096);
        let start = (start..text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        text[start..].to_owned()
    }
}

impl Drop for Browserless {
    fn drop(&mut self) {
        let pid = self.child.id();
        // Node first, so it launches nothing more; then every Chromium it started: its
        // descendants, and any whose profile is in this pool's directory (one launched for a
        // queued connection as Node died is orphaned to init).
        let descendants = crate::procs::descendants(pid);
        crate::procs::kill_group(pid);
        let _ = self.child.wait();
        let mut browsers = descendants;
        browsers.extend(crate::procs::chrome_processes_with_profile_under(
            self.dir.path(),
        ));
        for browser in &browsers {
            crate::procs::kill(*browser);
        }
        let _ = crate::procs::wait_until_gone_blocking(
            &browsers,
            Instant::now() + Duration::from_secs(5),
        );
    }
}

/// The Chromium revision the installed playwright-core expects.
fn chromium_revision(root: &Path) -> std::io::Result<String> {
    let path = root.join("node_modules/playwright-core/browsers.json");
    let text = std::fs::read_to_string(&path)?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|err| std::io::Error::other(format!("{}: {err}", path.display())))?;
    json["browsers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|browser| browser["name"] == "chromium")
        .and_then(|browser| browser["revision"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| std::io::Error::other(format!("{}: no chromium revision", path.display())))
}

/// A port free on loopback now.
fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

/// The sockets of process `pid` in state CLOSE-WAIT (the peer closed, the process did not)
/// whose peer is loopback port `port`.
pub fn close_wait_sockets(pid: u32, port: u16) -> Vec<String> {
    // 08 is TCP_CLOSE_WAIT.
    sockets_in_state(pid, port, "08")
}

/// The sockets of process `pid` in state ESTABLISHED whose peer is loopback port `port`: a
/// chromate server's connections to the pool, one per session on it.
pub fn established_sockets(pid: u32, port: u16) -> Vec<String> {
    // 01 is TCP_ESTABLISHED.
    sockets_in_state(pid, port, "01")
}

/// The sockets of process `pid` in TCP state `state` (hex, as `/proc/net/tcp` writes it)
/// whose peer is port `port`: its socket inodes (`/proc/<pid>/fd`) looked up in
/// `/proc/<pid>/net/tcp` and `tcp6`.
fn sockets_in_state(pid: u32, port: u16, state_hex: &str) -> Vec<String> {
    let inodes: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let mut found = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(remote), Some(state), Some(inode)) =
                (fields.get(2), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let remote_port = remote
                .rsplit_once(':')
                .and_then(|(_, hex)| u16::from_str_radix(hex, 16).ok());
            if *state == state_hex && remote_port == Some(port) && inodes.contains(*inode) {
                found.push(line.trim().to_owned());
            }
        }
    }
    found
}
