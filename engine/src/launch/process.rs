//! The browser process: spawned with the debugging pipes on fds 3 and 4, in its own process
//! group, with a parent-death signal; reaped by a dedicated thread.
//!
//! Why a dedicated thread: Linux delivers `PR_SET_PDEATHSIG` when the *thread* that forked the
//! child exits, not the process. Tokio's blocking threads come and go, so the browser is
//! spawned from a thread that lives exactly as long as the browser: it waits for the exit
//! (without reaping), sweeps the process group so no renderer survives, reaps the child (no
//! zombies), removes the profile directory, and reports the exit status.
//!
//! Nothing of the browser's is left outside its profile: the child's `TMPDIR` is the profile
//! (Chromium's process-singleton directory, `org.chromium.Chromium.*`, is made there; a killed
//! browser would otherwise leave one in the temp directory each time) when the singleton's
//! socket path still fits a Unix socket address, and its crash dumps (Crashpad's database,
//! else `~/.config/chromium/Crash Reports`) go to `<profile>/crashes` (`BREAKPAD_DUMP_LOCATION`,
//! which Chromium's crash reporter client reads, and `--crash-dumps-dir`).

#![allow(unsafe_code)]

use std::collections::VecDeque;
use std::io::BufRead;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::error::{Error, Result};
use crate::rt::lock;
use crate::transport::PipeEnds;

/// Profile directories are `<tmp>/chromate-profile-<owner pid>-<random>`.
pub(crate) const PROFILE_PREFIX: &str = "chromate-profile-";

const STDERR_LINES: usize = 40;

/// A running browser process.
pub(crate) struct BrowserProcess {
    pid: u32,
    /// `Some(status)` once the process has exited, been reaped and its profile removed.
    exited: watch::Receiver<Option<String>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// True while the child is unreaped, so its pid (and group id) is still ours to signal.
    alive: Arc<Mutex<bool>>,
}

/// What a spawn hands back.
pub(crate) struct Spawned {
    pub(crate) process: BrowserProcess,
    pub(crate) pipes: PipeEnds,
}

pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether a process with this id exists (any user's): `kill(pid, 0)` sends nothing and fails
/// with `ESRCH` only when there is no such process. Works on Linux and macOS alike, unlike a
/// look at `/proc`.
pub(crate) fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 performs only the existence and permission checks; no memory is shared.
    let res = unsafe { libc::kill(pid, 0) };
    res == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

impl BrowserProcess {
    /// Spawns `executable` with `args`, pipes on fds 3/4, profile `profile` (removed after exit).
    pub(crate) fn spawn(
        executable: &Path,
        args: Vec<String>,
        profile: tempfile::TempDir,
    ) -> Result<Spawned> {
        let (browser_reads, we_write) =
            std::io::pipe().map_err(|e| Error::io("creating the command pipe", e))?;
        let (we_read, browser_writes) =
            std::io::pipe().map_err(|e| Error::io("creating the event pipe", e))?;
        let browser_reads: OwnedFd = browser_reads.into();
        let browser_writes: OwnedFd = browser_writes.into();

        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_LINES)));
        let alive = Arc::new(Mutex::new(true));
        let (exited_tx, exited_rx) = watch::channel(None);
        let (pid_tx, pid_rx) = std::sync::mpsc::channel::<std::io::Result<u32>>();

        let executable = executable.to_path_buf();
        let thread_tail = Arc::clone(&stderr_tail);
        let thread_alive = Arc::clone(&alive);
        let spawn_result = std::thread::Builder::new()
            .name("chromate-browser".into())
            .spawn(move || {
                let read_fd = browser_reads.as_raw_fd();
                let write_fd = browser_writes.as_raw_fd();
                let mut command = Command::new(&executable);
                command.envs(child_env(profile.path()));
                command
                    .args(&args)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped());
                command.process_group(0);
                // SAFETY: the closure runs in the forked child of a threaded process before exec,
                // where only async-signal-safe calls are sound: it calls fcntl, dup2, close,
                // prctl and getppid, and its errors are raw OS codes (`last_os_error`,
                // `from_raw_os_error`), which allocate nothing; std passes the code to the
                // parent over its own pipe and the child exits.
                unsafe {
                    command.pre_exec(move || {
                        // Move both ends above fd 10 first, so placing one on 3 or 4 cannot clobber
                        // the other.
                        let high_read = libc::fcntl(read_fd, libc::F_DUPFD, 10);
                        let high_write = libc::fcntl(write_fd, libc::F_DUPFD, 10);
                        if high_read < 0 || high_write < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        if libc::dup2(high_read, 3) < 0 || libc::dup2(high_write, 4) < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        libc::close(high_read);
                        libc::close(high_write);
                        #[cfg(target_os = "linux")]
                        {
                            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                                return Err(std::io::Error::last_os_error());
                            }
                            // The owner may have died between fork and prctl.
                            // ESRCH: the owner is gone (an `io::Error` with a message would
                            // allocate, and std passes only the code on anyway).
                            if libc::getppid() == 1 {
                                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                            }
                        }
                        Ok(())
                    });
                }
                let mut child = match command.spawn() {
                    Ok(child) => child,
                    Err(err) => {
                        let _ = pid_tx.send(Err(err));
                        return;
                    }
                };
                // The browser holds its own copies now.
                drop(browser_reads);
                drop(browser_writes);
                let pid = child.id();
                let _ = pid_tx.send(Ok(pid));
                if let Some(stderr) = child.stderr.take() {
                    let tail = Arc::clone(&thread_tail);
                    let _ = std::thread::Builder::new()
                        .name("chromate-stderr".into())
                        .spawn(move || {
                            for line in std::io::BufReader::new(stderr).lines() {
                                let Ok(line) = line else { break };
                                let mut tail = lock(&tail);
                                if tail.len() == STDERR_LINES {
                                    tail.pop_front();
                                }
                                tail.push_back(line);
                            }
                        });
                }
                wait_without_reaping(pid);
                let status = {
                    let mut alive = lock(&thread_alive);
                    // Sweep the group (renderers, zygote) while the leader's pid is still ours.
                    // SAFETY: kill has no memory-safety preconditions; the group id is our
                    // unreaped child's pid, so it cannot name anyone else's processes.
                    unsafe {
                        libc::kill(-(pid as i32), libc::SIGKILL);
                    }
                    let status = child.wait();
                    *alive = false;
                    status
                };
                drop(profile);
                let status = match status {
                    Ok(status) => status.to_string(),
                    Err(err) => format!("unknown exit status ({err})"),
                };
                exited_tx.send_replace(Some(status));
            });
        if let Err(err) = spawn_result {
            return Err(Error::io("starting the browser thread", err));
        }
        let pid = match pid_rx.recv() {
            Ok(Ok(pid)) => pid,
            Ok(Err(err)) => {
                return Err(Error::LaunchFailed {
                    reason: format!("cannot execute the browser: {err}"),
                    stderr_tail: String::new(),
                })
            }
            Err(_) => {
                return Err(Error::LaunchFailed {
                    reason: "the browser thread ended before spawning".into(),
                    stderr_tail: String::new(),
                })
            }
        };
        let process = BrowserProcess {
            pid,
            exited: exited_rx,
            stderr_tail,
            alive,
        };
        Ok(Spawned {
            process,
            pipes: PipeEnds {
                to_browser: we_write.into(),
                from_browser: we_read.into(),
            },
        })
    }

    /// The browser's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Kills the browser and every process of its group, if it still runs.
    pub(crate) fn kill(&self) {
        let alive = lock(&self.alive);
        if *alive {
            // SAFETY: the child is unreaped (checked under the lock the reaper takes), so its
            // pid and group id are still ours.
            unsafe {
                libc::kill(-(self.pid as i32), libc::SIGKILL);
                libc::kill(self.pid as i32, libc::SIGKILL);
            }
        }
    }

    /// Resolves once the process has exited, been reaped and its profile removed.
    pub(crate) async fn wait_exit(&self) -> String {
        Self::wait_on(self.exited.clone()).await
    }

    /// A receiver that sees the exit status once the process has exited.
    pub(crate) fn exited_watch(&self) -> watch::Receiver<Option<String>> {
        self.exited.clone()
    }

    /// Resolves with the exit status carried by `exited`.
    pub(crate) async fn wait_on(mut exited: watch::Receiver<Option<String>>) -> String {
        loop {
            if let Some(status) = exited.borrow_and_update().clone() {
                return status;
            }
            if exited.changed().await.is_err() {
                return "unknown exit status".into();
            }
        }
    }

    /// The exit status, if the process has exited.
    pub(crate) fn try_exit_status(&self) -> Option<String> {
        self.exited.borrow().clone()
    }

    /// The last lines the browser wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> String {
        lock(&self.stderr_tail)
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Blocks until `pid` has exited, leaving it unreaped so its pid cannot be reused yet.
fn wait_without_reaping(pid: u32) {
    loop {
        // SAFETY: siginfo_t is plain data; waitid writes it and we never read it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a live siginfo_t; WNOWAIT leaves the child reapable.
        let res = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if res == 0 {
            return;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Chromium's process-singleton socket path inside a temp directory:
/// `<tmp>/org.chromium.Chromium.XXXXXX/SingletonSocket`, this many bytes after `<tmp>`.
const SINGLETON_SOCKET_TAIL: usize = "/org.chromium.Chromium.XXXXXX/SingletonSocket".len();

/// The longest path a Unix socket address holds (macOS's 104, below Linux's 108), less its NUL.
const MAX_SOCKET_PATH: usize = 103;

/// The environment the browser runs with besides ours: its temp directory and crash dumps in
/// `profile`, which is removed when it exits. `TMPDIR` stays ours when the singleton's socket
/// path in the profile would be too long to bind (Chromium would refuse to start).
pub(crate) fn child_env(profile: &Path) -> Vec<(&'static str, std::path::PathBuf)> {
    let mut env = vec![("BREAKPAD_DUMP_LOCATION", profile.join("crashes"))];
    if profile.as_os_str().len() + SINGLETON_SOCKET_TAIL <= MAX_SOCKET_PATH {
        env.push(("TMPDIR", profile.to_path_buf()));
    }
    env
}

/// A fresh profile directory named after the owner's pid, mode 0700: it lives in the shared
/// temporary directory, and the browser writes some of its files there readable by all
/// (`Variations`, `Last Version`), so only the owner may enter it.
pub(crate) fn new_profile() -> Result<tempfile::TempDir> {
    let prefix = format!("{PROFILE_PREFIX}{}-", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder
        .tempdir()
        .map_err(|e| Error::io("creating a profile directory", e))
}
