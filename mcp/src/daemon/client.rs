//! The client side of a session: connect to its daemon, starting one when none answers, send
//! one request and read its answer. Plain blocking std I/O and no async runtime, so a command
//! costs little more than the daemon's work.
//!
//! Owns: the start protocol — under the session's lock file (`flock`), connect again, else
//! spawn `chromate daemon` in its own process group with stderr to the session's log and wait
//! (bounded) for the `ready` line it prints once it listens — so two commands racing to start
//! a session start one daemon. Every wait is bounded (`docs/cli.md#sessions`): the connect
//! and the write, `info` and `close` answers by short bounds, a call's answer by the daemon's
//! proof of life (an `info` asked on a second connection whenever the call's connection has
//! been quiet a while), so a stopped daemon is reported, never waited for. Only this user's
//! socket is connected to, never through a symlink; [`kill_unanswering`] ends a daemon that
//! does not answer, by the pid it recorded, once `/proc` says it is that daemon. Does not own
//! the daemon (`server.rs`) or printing (`cli/`).

use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::time::Duration;

#[cfg(unix)]
use std::os::unix::net::UnixStream;

use super::{Request, Response, SessionPaths, MAX_RESPONSE_BYTES};

/// How long a starting daemon may take to listen (a browser it launches at once starts in
/// the background, so this is process start and a bind).
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long connecting and sending a request may take: the kernel queues both even for a
/// daemon that is stopped, so only a full backlog or a full buffer waits.
const SEND_TIMEOUT: Duration = Duration::from_secs(2);
/// How long `info` may take to be answered: the daemon answers it at once, running call or not.
const INFO_TIMEOUT: Duration = Duration::from_secs(2);
/// How long `close` may take to be answered: it cancels the running call (1.5 s at most) and
/// ends the browser (2.5 s at most) before it answers.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(8);
/// How long a call's connection may stay quiet before the client asks the daemon, on a
/// second connection, whether it still answers.
const QUIET_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a request got no answer.
#[derive(Debug)]
pub(crate) enum ClientError {
    /// No daemon runs for this session (and none was to be started).
    NotRunning,
    /// The daemon could not be started; the text says why (its log's tail included).
    Start(String),
    /// The connection failed or the answer was not one.
    Io(String),
    /// A daemon listens but does not answer (stopped, or hung): the pid it recorded, if any.
    NotAnswering { session: String, pid: Option<u32> },
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NotRunning => f.write_str("no session daemon is running"),
            ClientError::Start(message) => write!(f, "cannot start the session daemon: {message}"),
            ClientError::Io(message) => write!(f, "session daemon: {message}"),
            ClientError::NotAnswering { session, pid } => {
                let pid = pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default();
                write!(
                    f,
                    "the daemon of session {session}{pid} does not answer (stopped or hung); \
                     `chromate close --session {session}` ends it"
                )
            }
        }
    }
}

/// How a daemon is started when none answers.
#[derive(Debug, Clone)]
pub(crate) struct Start {
    pub(crate) idle: Duration,
    /// The command that starts the daemon needs a page: the daemon launches the browser as
    /// soon as it starts, while the command connects and sends its call.
    pub(crate) launch: bool,
}

/// Sends `request` to the session's daemon and returns its answer; with `start`, a daemon is
/// started first if none answers.
#[cfg(unix)]
pub(crate) fn request(
    paths: &SessionPaths,
    request: &Request,
    start: Option<&Start>,
) -> Result<Response, ClientError> {
    request_with_progress(paths, request, start, &mut |_| {})
}

/// [`request`], handing each [`Response::Progress`] line to `on_progress` until the answer.
#[cfg(unix)]
pub(crate) fn request_with_progress(
    paths: &SessionPaths,
    request: &Request,
    start: Option<&Start>,
    on_progress: &mut dyn FnMut(&str),
) -> Result<Response, ClientError> {
    let mut stream = match connect(&paths.socket)? {
        Some(stream) => stream,
        None => match start {
            None => return Err(ClientError::NotRunning),
            Some(start) => start_daemon(paths, start)?,
        },
    };
    let not_answering = || ClientError::NotAnswering {
        session: paths.name.clone(),
        pid: recorded_pid(paths),
    };
    let mut line = serde_json::to_string(request)
        .map_err(|err| ClientError::Io(format!("cannot encode the request: {err}")))?;
    line.push('\n');
    match stream.write_all(line.as_bytes()) {
        Ok(()) => {}
        Err(err) if is_timeout(&err) => return Err(not_answering()),
        Err(err) => return Err(ClientError::Io(format!("cannot send the request: {err}"))),
    }
    // `info` and `close` have a bound of their own; a call is waited for as long as the
    // daemon proves it is alive.
    let (bound, probe) = match request {
        Request::Info | Request::WatchTools { .. } => (INFO_TIMEOUT, false),
        Request::Close => (CLOSE_TIMEOUT, false),
        Request::Call { .. } => (QUIET_TIMEOUT, true),
    };
    stream
        .set_read_timeout(Some(bound))
        .map_err(|err| ClientError::Io(format!("cannot bound the wait: {err}")))?;
    // The write side stays open: the daemon takes its end closing as "cancel the call".
    let mut reader = BufReader::new(io::Read::take(&stream, MAX_RESPONSE_BYTES));
    loop {
        // A read that times out keeps what it read of the line: the next one goes on from there.
        let mut answer = String::new();
        let response: Response = loop {
            match reader.read_line(&mut answer) {
                Ok(0) => {
                    return Err(ClientError::Io(
                        "the daemon closed the connection without answering (see its log)"
                            .to_owned(),
                    ))
                }
                Ok(_) => {
                    break serde_json::from_str(&answer)
                        .map_err(|err| ClientError::Io(format!("unreadable answer: {err}")))?
                }
                Err(err) if is_timeout(&err) => {
                    if !(probe && answers_info(&paths.socket)) {
                        return Err(not_answering());
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(ClientError::Io(format!("cannot read the answer: {err}"))),
            }
        };
        match response {
            Response::Progress(phase) => on_progress(&phase),
            other => return Ok(other),
        }
    }
}

/// Whether a read or write error is its timeout running out.
fn is_timeout(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Whether the daemon on `socket` answers `info` within its bound: the proof of life a call's
/// quiet connection asks for.
#[cfg(unix)]
fn answers_info(socket: &Path) -> bool {
    let Ok(Some(mut stream)) = connect(socket) else {
        return false;
    };
    let Ok(mut line) = serde_json::to_string(&Request::Info) else {
        return false;
    };
    line.push('\n');
    if stream.write_all(line.as_bytes()).is_err()
        || stream.set_read_timeout(Some(INFO_TIMEOUT)).is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let mut reader = BufReader::new(io::Read::take(&stream, MAX_RESPONSE_BYTES));
    matches!(reader.read_line(&mut answer), Ok(n) if n > 0)
        && matches!(serde_json::from_str(&answer), Ok(Response::Info(_)))
}

/// The pid the session's daemon recorded in its pid file, if it is there and readable.
pub(crate) fn recorded_pid(paths: &SessionPaths) -> Option<u32> {
    let bytes = chromate_command::private_fs::read_file(&paths.pid).ok()?;
    String::from_utf8(bytes)
        .ok()?
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|pid| *pid > 1)
}

/// Ends the daemon of a session that does not answer, by the pid it recorded, once `/proc`
/// shows that pid is this user's `chromate daemon --session NAME`; then removes its socket and
/// pid file, so the next command starts afresh. Returns the pid ended.
#[cfg(target_os = "linux")]
#[expect(unsafe_code, reason = "kill(2) and geteuid through libc")]
pub(crate) fn kill_unanswering(paths: &SessionPaths) -> Result<u32, String> {
    use std::os::unix::fs::MetadataExt;
    let Some(pid) = recorded_pid(paths) else {
        return Err(format!(
            "it recorded no pid in {}; end it yourself",
            paths.pid.display()
        ));
    };
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    let owner = std::fs::metadata(&proc_dir).map(|meta| meta.uid());
    let cmdline = std::fs::read(proc_dir.join("cmdline")).unwrap_or_default();
    let words: Vec<&[u8]> = cmdline.split(|byte| *byte == 0).collect();
    let ours = owner.is_ok_and(|uid| uid == chromate_command::private_fs::effective_uid())
        && words.get(1) == Some(&&b"daemon"[..])
        && words.get(2) == Some(&&b"--session"[..])
        && words.get(3) == Some(&paths.name.as_bytes());
    if !ours {
        return Err(format!(
            "pid {pid} of {} is not this session's daemon; not ending it",
            paths.pid.display()
        ));
    }
    let pid_t = libc::pid_t::try_from(pid).map_err(|_| format!("pid {pid} is out of range"))?;
    // SAFETY: kill takes two integers and touches no memory. SIGKILL ends a stopped process
    // too; its browser follows through its parent-death signal.
    if unsafe { libc::kill(pid_t, libc::SIGKILL) } != 0 {
        return Err(format!(
            "cannot end pid {pid}: {}",
            io::Error::last_os_error()
        ));
    }
    let _ = std::fs::remove_file(&paths.pid);
    let _ = std::fs::remove_file(&paths.socket);
    Ok(pid)
}

/// Without `/proc` a recorded pid cannot be checked, so it is only named.
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn kill_unanswering(paths: &SessionPaths) -> Result<u32, String> {
    Err(match recorded_pid(paths) {
        Some(pid) => format!("check that pid {pid} is its daemon and end it (kill {pid})"),
        None => format!(
            "it recorded no pid in {}; end it yourself",
            paths.pid.display()
        ),
    })
}

#[cfg(not(unix))]
pub(crate) fn request_with_progress(
    paths: &SessionPaths,
    request: &Request,
    start: Option<&Start>,
    _on_progress: &mut dyn FnMut(&str),
) -> Result<Response, ClientError> {
    self::request(paths, request, start)
}

#[cfg(not(unix))]
pub(crate) fn request(
    _paths: &SessionPaths,
    _request: &Request,
    _start: Option<&Start>,
) -> Result<Response, ClientError> {
    Err(ClientError::Io(
        "sessions need Unix domain sockets: Linux or macOS (on Windows, use `chromate mcp`)"
            .to_owned(),
    ))
}

/// [`request`] from async code (the MCP server attached to a session): the daemon is started
/// on a blocking thread if none answers, the call itself is async. Dropping the future closes
/// the connection, which cancels the call in the daemon.
#[cfg(unix)]
pub(crate) async fn request_async(
    paths: &SessionPaths,
    request: &Request,
    start: &Start,
) -> Result<Response, ClientError> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let not_answering = || ClientError::NotAnswering {
        session: paths.name.clone(),
        pid: recorded_pid(paths),
    };
    let connected = match checked_socket(&paths.socket) {
        Ok(true) => {
            tokio::time::timeout(SEND_TIMEOUT, tokio::net::UnixStream::connect(&paths.socket))
                .await
                .map_err(|_| not_answering())?
        }
        Ok(false) => Err(io::Error::from(io::ErrorKind::NotFound)),
        Err(message) => return Err(ClientError::Io(message)),
    };
    let stream = match connected {
        Ok(stream) => stream,
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
            ) =>
        {
            let (paths, start) = (paths.clone(), start.clone());
            let started = tokio::task::spawn_blocking(move || start_daemon(&paths, &start))
                .await
                .map_err(|err| {
                    ClientError::Start(format!("the starting thread failed: {err}"))
                })??;
            started
                .set_nonblocking(true)
                .and_then(|()| tokio::net::UnixStream::from_std(started))
                .map_err(|err| ClientError::Io(format!("cannot use the connection: {err}")))?
        }
        Err(err) => {
            return Err(ClientError::Io(format!(
                "cannot connect to {}: {err}",
                paths.socket.display()
            )))
        }
    };
    let (read_half, mut write_half) = stream.into_split();
    let mut line = serde_json::to_string(request)
        .map_err(|err| ClientError::Io(format!("cannot encode the request: {err}")))?;
    line.push('\n');
    tokio::time::timeout(SEND_TIMEOUT, write_half.write_all(line.as_bytes()))
        .await
        .map_err(|_| not_answering())?
        .map_err(|err| ClientError::Io(format!("cannot send the request: {err}")))?;
    let (bound, probe) = match request {
        Request::Info | Request::WatchTools { .. } => (INFO_TIMEOUT, false),
        Request::Close => (CLOSE_TIMEOUT, false),
        Request::Call { .. } => (QUIET_TIMEOUT, true),
    };
    let mut reader = tokio::io::BufReader::new(read_half.take(MAX_RESPONSE_BYTES));
    let mut answer = Vec::new();
    loop {
        // `read_until` keeps what it read when its timeout cancels it (`read_line` may not),
        // so the next read goes on from there.
        let read = tokio::time::timeout(bound, reader.read_until(b'\n', &mut answer)).await;
        match read {
            Ok(Ok(0)) => {
                return Err(ClientError::Io(
                    "the daemon closed the connection without answering (see its log)".to_owned(),
                ))
            }
            Ok(Ok(_)) => {
                return serde_json::from_slice(&answer)
                    .map_err(|err| ClientError::Io(format!("unreadable answer: {err}")))
            }
            Ok(Err(err)) => return Err(ClientError::Io(format!("cannot read the answer: {err}"))),
            Err(_elapsed) => {
                let socket = paths.socket.clone();
                let alive = probe
                    && tokio::task::spawn_blocking(move || answers_info(&socket))
                        .await
                        .unwrap_or(false);
                if !alive {
                    return Err(not_answering());
                }
            }
        }
    }
}

/// Connects to the socket; `None` when nothing listens there (no file, or a dead daemon's).
/// Only this user's socket is connected to: a symlink there, or anything else, is refused
/// and never followed. Connecting waits [`SEND_TIMEOUT`] at most (a stopped daemon's full
/// backlog would make it wait for ever); the stream's writes are bounded as long.
#[cfg(unix)]
fn connect(socket: &Path) -> Result<Option<UnixStream>, ClientError> {
    match checked_socket(socket) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(message) => return Err(ClientError::Io(message)),
    }
    match connect_bounded(socket, SEND_TIMEOUT) {
        Ok(stream) => {
            stream
                .set_write_timeout(Some(SEND_TIMEOUT))
                .map_err(|err| ClientError::Io(format!("cannot bound the write: {err}")))?;
            Ok(Some(stream))
        }
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
            ) =>
        {
            Ok(None)
        }
        Err(err) if is_timeout(&err) => Err(ClientError::Io(format!(
            "{} does not accept connections (a stopped or hung daemon?)",
            socket.display()
        ))),
        Err(err) => Err(ClientError::Io(format!(
            "cannot connect to {}: {err}",
            socket.display()
        ))),
    }
}

/// Connects to the Unix socket at `path`, the connect bounded by `timeout`, on the calling
/// thread: the socket's send timeout is set before `connect(2)`, which Linux applies to the
/// wait for room in a listener's full backlog (and reports as `EAGAIN` once it runs out).
/// Every command connects at least once, so this saves it a thread and the two context
/// switches of handing the connection back, which a loaded machine makes slow.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "socket(2), setsockopt(2) and connect(2) through libc: std has no connect timeout \
              for Unix sockets"
)]
pub(crate) fn connect_bounded(path: &Path, timeout: Duration) -> io::Result<UnixStream> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    let bytes = path.as_os_str().as_bytes();
    // SAFETY: `sockaddr_un` is plain old data, for which all zeroes is a valid value.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    // The path and its terminating NUL must fit.
    if bytes.len() >= address.sun_path.len() || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the socket path is too long or holds a NUL byte",
        ));
    }
    address.sun_family = libc::sa_family_t::try_from(libc::AF_UNIX)
        .map_err(|_| io::Error::other("AF_UNIX does not fit sa_family_t"))?;
    for (slot, byte) in address.sun_path.iter_mut().zip(bytes) {
        *slot = libc::c_char::from_ne_bytes([*byte]);
    }
    let length =
        libc::socklen_t::try_from(std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1)
            .map_err(|_| io::Error::other("the socket address length does not fit socklen_t"))?;
    // SAFETY: socket(2) takes three integers and touches no memory.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by socket(2) and nothing else owns it.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    #[allow(
        clippy::unnecessary_fallible_conversions,
        reason = "suseconds_t is i64 here but i32 on 32-bit targets"
    )]
    let micros = libc::suseconds_t::try_from(timeout.subsec_micros()).unwrap_or(0);
    let bound = libc::timeval {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_usec: micros,
    };
    let bound_length = libc::socklen_t::try_from(std::mem::size_of::<libc::timeval>())
        .map_err(|_| io::Error::other("timeval's size does not fit socklen_t"))?;
    // SAFETY: `bound` lives across the call and `bound_length` is its size.
    let set = unsafe {
        libc::setsockopt(
            owned.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            std::ptr::addr_of!(bound).cast(),
            bound_length,
        )
    };
    if set == -1 {
        return Err(io::Error::last_os_error());
    }
    loop {
        // SAFETY: `address` lives across the call and `length` covers its family, the path
        // and the path's NUL, all within it.
        let connected = unsafe {
            libc::connect(
                owned.as_raw_fd(),
                std::ptr::addr_of!(address).cast(),
                length,
            )
        };
        if connected == 0 {
            return Ok(UnixStream::from(owned));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// [`connect_bounded`] where the send timeout may not bound a connect: a thread connects,
/// the command waits for it (bounded). A thread still blocked when the command exits ends
/// with the process.
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) fn connect_bounded(path: &Path, timeout: Duration) -> io::Result<UnixStream> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = sender.send(UnixStream::connect(path));
    });
    match receiver.recv_timeout(timeout) {
        Ok(connected) => connected,
        Err(_) => Err(io::Error::from(io::ErrorKind::TimedOut)),
    }
}

/// Whether `socket` is this user's socket (`true`) or missing (`false`); anything else there
/// — a symlink, a regular file, another user's socket — is an error, not followed.
#[cfg(unix)]
pub(crate) fn checked_socket(socket: &Path) -> Result<bool, String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    match std::fs::symlink_metadata(socket) {
        Ok(meta)
            if meta.file_type().is_socket()
                && meta.uid() == chromate_command::private_fs::effective_uid() =>
        {
            Ok(true)
        }
        Ok(_) => Err(format!(
            "{} is not this user's socket (a symlink or another file); not following it",
            socket.display()
        )),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(format!("{}: {err}", socket.display())),
    }
}

/// Starts the session's daemon under its lock and connects to it.
#[cfg(unix)]
fn start_daemon(paths: &SessionPaths, start: &Start) -> Result<UnixStream, ClientError> {
    let _lock = StartLock::take(&paths.lock)
        .map_err(|err| ClientError::Start(format!("{}: {err}", paths.lock.display())))?;
    // Whoever held the lock before us may have started it.
    if let Some(stream) = connect(&paths.socket)? {
        return Ok(stream);
    }
    spawn_daemon(paths, start)?;
    connect(&paths.socket)?.ok_or_else(|| {
        ClientError::Start(format!(
            "it said it was ready but {} does not answer",
            paths.socket.display()
        ))
    })
}

/// Spawns `chromate daemon` and waits for its `ready` line.
#[cfg(unix)]
fn spawn_daemon(paths: &SessionPaths, start: &Start) -> Result<(), ClientError> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    let exe = std::env::current_exe()
        .map_err(|err| ClientError::Start(format!("cannot find the chromate binary: {err}")))?;
    let log = open_log(&paths.log)
        .map_err(|err| ClientError::Start(format!("{}: {err}", paths.log.display())))?;
    let mut child = Command::new(exe)
        .arg("daemon")
        .arg("--session")
        .arg(&paths.name)
        .arg("--idle-timeout")
        .arg(start.idle.as_secs().to_string())
        .args(start.launch.then_some("--launch"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        // Its own process group: a Ctrl-C meant for this command does not reach it.
        .process_group(0)
        .spawn()
        .map_err(|err| ClientError::Start(format!("cannot spawn it: {err}")))?;
    let Some(stdout) = child.stdout.take() else {
        return Err(ClientError::Start(
            "no pipe to read its ready line".to_owned(),
        ));
    };
    let ready = read_ready(stdout, START_TIMEOUT);
    // The daemon is not waited for: it outlives this command (and is reaped by whoever
    // inherits it). A daemon that failed has exited; reap it now if so.
    let _ = child.try_wait();
    match ready {
        Ok(true) => Ok(()),
        Ok(false) => Err(ClientError::Start(format!(
            "it exited before listening: {}",
            log_tail(&paths.log)
        ))),
        Err(err) => Err(ClientError::Start(format!(
            "{err}; its log: {}",
            log_tail(&paths.log)
        ))),
    }
}

/// Reads the daemon's stdout until `ready\n` (true) or end of file (false), for at most
/// `timeout`.
#[cfg(unix)]
fn read_ready(stdout: std::process::ChildStdout, timeout: Duration) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + timeout;
    let fd = stdout.as_raw_fd();
    let mut reader = BufReader::new(stdout);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || !poll_readable(fd, left)? {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("it did not listen within {} s", timeout.as_secs()),
            ));
        }
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(false);
        }
        if line.trim_end() == "ready" {
            return Ok(true);
        }
    }
}

/// Whether `fd` becomes readable (or hung up) within `timeout`.
#[cfg(unix)]
#[expect(unsafe_code, reason = "poll(2) through libc")]
fn poll_readable(fd: std::os::fd::RawFd, timeout: Duration) -> io::Result<bool> {
    let mut entry = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    loop {
        // SAFETY: one valid pollfd, its count 1; poll writes only `revents`.
        let ready = unsafe { libc::poll(&mut entry, 1, millis) };
        match ready {
            -1 => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
            0 => return Ok(false),
            _ => return Ok(true),
        }
    }
}

/// The session's log, new or truncated, 0600, never through a symlink.
#[cfg(unix)]
fn open_log(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// The last lines of the daemon's log, for an error message.
fn log_tail(path: &Path) -> String {
    let text = chromate_command::private_fs::read_file(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    if lines.is_empty() {
        format!("{} is empty", path.display())
    } else {
        lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
    }
}

/// An exclusive `flock` on the session's lock file, released on drop (and by the kernel if
/// the process dies holding it).
#[cfg(unix)]
struct StartLock {
    _file: std::fs::File,
}

#[cfg(unix)]
impl StartLock {
    #[expect(unsafe_code, reason = "flock(2) through libc")]
    fn take(path: &Path) -> io::Result<StartLock> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        loop {
            // SAFETY: a file descriptor this function owns; flock touches no memory.
            let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if taken == 0 {
                return Ok(StartLock { _file: file });
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }
}
