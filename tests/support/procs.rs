//! Linux `/proc` helpers that let the tests prove no browser process outlives them.
//!
//! Owns reading `/proc/<pid>/stat` and `/proc/<pid>/cmdline`, walking the process tree,
//! polling for processes to go away, and [`LeakGuard`]. It never signals or kills anything
//! (tests that need to kill do it by PID themselves) and does nothing on other platforms
//! beyond reporting no processes.
//!
//! Zombies (exited, not yet reaped) count as not alive: their resources are gone and only
//! the parent's `wait` is missing. [`is_zombie`] reports them separately.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// How often the waiting helpers re-read `/proc`.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// One process as `/proc` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// One-letter state (`R`, `S`, `Z`, …).
    pub state: char,
    /// Start time in clock ticks since boot; with `pid` it identifies a process across
    /// PID reuse.
    pub start_ticks: u64,
    /// The short command name (`comm`).
    pub comm: String,
    /// Command-line arguments (empty for zombies and kernel threads).
    pub cmdline: Vec<String>,
}

impl ProcessInfo {
    /// Reads one process; `None` if it does not exist (or vanished mid-read).
    pub fn read(pid: u32) -> Option<Self> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (comm, ppid, state, start_ticks) = parse_stat(&stat)?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|bytes| {
                bytes
                    .split(|&b| b == 0)
                    .filter(|arg| !arg.is_empty())
                    .map(|arg| String::from_utf8_lossy(arg).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        Some(Self {
            pid,
            ppid,
            state,
            start_ticks,
            comm,
            cmdline,
        })
    }

    /// Running, sleeping or stopped: not a zombie and not dead.
    pub fn is_alive(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }

    /// Whether this looks like a Chromium-family process: its `comm` or its `argv[0]` file
    /// name mentions chrome, chromium or headless_shell.
    pub fn is_chrome_like(&self) -> bool {
        let argv0 = self.cmdline.first().map(|arg0| {
            Path::new(arg0)
                .file_name()
                .map_or(arg0.clone(), |n| n.to_string_lossy().into())
        });
        let looks_like_chrome = |name: &str| {
            let name = name.to_ascii_lowercase();
            name.contains("chrome") || name.contains("chromium") || name.contains("headless_shell")
        };
        looks_like_chrome(&self.comm) || argv0.is_some_and(|argv0| looks_like_chrome(&argv0))
    }
}

/// Parses `pid (comm) state ppid … starttime …`; `comm` may itself contain `)` and spaces.
fn parse_stat(stat: &str) -> Option<(String, u32, char, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    // After the comm: state is field 3 of stat(5), ppid 4, starttime 22.
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let start_ticks = fields.get(19)?.parse().ok()?;
    Some((comm, ppid, state, start_ticks))
}

/// Every process visible in `/proc` right now.
pub fn all_processes() -> Vec<ProcessInfo> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(ProcessInfo::read)
        .collect()
}

/// Children, grandchildren … of `pid` (not `pid` itself), zombies included.
pub fn descendants(pid: u32) -> Vec<u32> {
    descendant_infos(pid, &all_processes())
        .into_iter()
        .map(|info| info.pid)
        .collect()
}

fn descendant_infos(pid: u32, processes: &[ProcessInfo]) -> Vec<ProcessInfo> {
    let mut children: HashMap<u32, Vec<&ProcessInfo>> = HashMap::new();
    for info in processes {
        children.entry(info.ppid).or_default().push(info);
    }
    let mut res = Vec::new();
    let mut pending = vec![pid];
    let mut seen = HashSet::from([pid]);
    while let Some(parent) = pending.pop() {
        for child in children.get(&parent).into_iter().flatten() {
            if seen.insert(child.pid) {
                res.push((*child).clone());
                pending.push(child.pid);
            }
        }
    }
    res
}

/// Sends SIGKILL to `pid` (tests end the browsers they started by PID, never by name).
pub fn kill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
}

/// Sends SIGKILL to the process group `pgid` (a process started with `process_group(0)`).
pub fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status();
}

/// Whether `pid` exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    ProcessInfo::read(pid).is_some_and(|info| info.is_alive())
}

/// Whether `pid` has exited but its parent has not reaped it yet.
pub fn is_zombie(pid: u32) -> bool {
    ProcessInfo::read(pid).is_some_and(|info| info.state == 'Z')
}

/// Polls `/proc` every 20 ms until none of `pids` is alive or `deadline` passes; `Err` lists
/// the ones still alive at the deadline.
pub async fn wait_until_gone(pids: &[u32], deadline: Instant) -> Result<(), Vec<u32>> {
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|&pid| is_alive(pid)).collect();
        if alive.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(alive);
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// [`wait_until_gone`] for callers without a runtime (exit hooks, benches); blocks the thread.
pub fn wait_until_gone_blocking(pids: &[u32], deadline: Instant) -> Result<(), Vec<u32>> {
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|&pid| is_alive(pid)).collect();
        if alive.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(alive);
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Live processes whose command line has `--user-data-dir=<dir>` (or `--user-data-dir <dir>`).
pub fn chrome_processes_with_profile(dir: &Path) -> Vec<u32> {
    let dir = dir.to_string_lossy();
    let joined = format!("--user-data-dir={dir}");
    all_processes()
        .into_iter()
        .filter(|info| info.is_alive())
        .filter(|info| {
            info.cmdline.contains(&joined)
                || info
                    .cmdline
                    .windows(2)
                    .any(|pair| pair[0] == "--user-data-dir" && pair[1] == dir.as_ref())
        })
        .map(|info| info.pid)
        .collect()
}

/// Live processes whose `--user-data-dir` is inside `dir`: the browsers of a `chromate` process
/// run with `TMPDIR=dir` (its profiles are made in the temp directory).
pub fn chrome_processes_with_profile_under(dir: &Path) -> Vec<u32> {
    let prefix = format!("--user-data-dir={}/", dir.to_string_lossy());
    all_processes()
        .into_iter()
        .filter(|info| info.is_alive())
        .filter(|info| info.cmdline.iter().any(|arg| arg.starts_with(&prefix)))
        .map(|info| info.pid)
        .collect()
}

/// Remembers which descendants of this test process existed when it was created, so a later
/// [`LeakGuard::check`] can fail on Chromium-like descendants started since and still alive.
///
/// It sees only descendants: a browser child orphaned to init escapes it, so pair it with
/// [`chrome_processes_with_profile`] for the profile directories a test created. In a binary
/// whose tests run in parallel, other tests' live browsers are descendants too: check at a
/// point where none should run (the harness's exit), or compare profiles instead.
#[derive(Debug, Clone)]
pub struct LeakGuard {
    /// `(pid, start_ticks)` of every descendant at creation.
    baseline: HashSet<(u32, u64)>,
}

impl Default for LeakGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl LeakGuard {
    /// Snapshots the current descendants of this process.
    pub fn new() -> Self {
        let baseline = descendant_infos(std::process::id(), &all_processes())
            .into_iter()
            .map(|info| (info.pid, info.start_ticks))
            .collect();
        Self { baseline }
    }

    /// Chromium-like descendants started since creation that are still alive.
    pub fn leaked(&self) -> Vec<ProcessInfo> {
        descendant_infos(std::process::id(), &all_processes())
            .into_iter()
            .filter(|info| {
                info.is_alive()
                    && info.is_chrome_like()
                    && !self.baseline.contains(&(info.pid, info.start_ticks))
            })
            .collect()
    }

    /// Panics listing every leaked process (pid and command line).
    pub fn check(&self) {
        let leaked = self.leaked();
        assert!(
            leaked.is_empty(),
            "leaked browser processes:\n{}",
            describe(&leaked)
        );
    }

    /// Polls every 20 ms until nothing is leaked or `timeout` passes (browsers take a moment
    /// to exit after close); `Err` holds what is still alive.
    pub async fn wait_for_no_leaks(&self, timeout: Duration) -> Result<(), Vec<ProcessInfo>> {
        let deadline = Instant::now() + timeout;
        loop {
            let leaked = self.leaked();
            if leaked.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(leaked);
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    /// [`LeakGuard::wait_for_no_leaks`], then [`LeakGuard::check`]'s panic on failure.
    pub async fn check_within(&self, timeout: Duration) {
        if let Err(leaked) = self.wait_for_no_leaks(timeout).await {
            panic!(
                "leaked browser processes after {timeout:?}:\n{}",
                describe(&leaked)
            );
        }
    }
}

/// One line per process: `pid <pid> [<state>] <cmdline>`.
pub fn describe(processes: &[ProcessInfo]) -> String {
    processes
        .iter()
        .map(|info| {
            let cmdline = if info.cmdline.is_empty() {
                info.comm.clone()
            } else {
                info.cmdline.join(" ")
            };
            format!("  pid {} [{}] {cmdline}\n", info.pid, info.state)
        })
        .collect()
}

#[cfg(test)]
mod tests;
