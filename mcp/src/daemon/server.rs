//! The session daemon (`chromate daemon --session NAME`, started by the client): one
//! command-layer session behind a Unix socket, calls run one at a time in arrival order.
//!
//! Owns: taking the socket (a dead daemon's socket is replaced; anything else there is
//! refused, never followed), the `ready` line, refusing a peer of another uid
//! (`SO_PEERCRED`/`getpeereid` through tokio), the pid file, launching the browser at once
//! when the starting command needs one (`--launch`), one request per connection (a silent
//! one dropped), cancelling a call
//! whose client went away, the idle timeout, `close`, SIGTERM/SIGINT/SIGHUP, and ending the
//! browser before it exits (bounded, as the MCP server's shutdown is). The browser never
//! outlives the daemon: the engine gives it a parent-death signal, so even `kill -9` of the
//! daemon ends it. Does not own any tool (`chromate_command`).

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{watch, Notify};

use super::{Info, Request, Response, SessionPaths, MAX_REQUEST_BYTES};
use chromate_command::call::{Cancel, Progress};
use chromate_command::config::Config;
use chromate_command::error::{ToolError, ToolErrorCode};
use chromate_command::session::ToolSession;
use chromate_command::sync::lock;
use chromate_command::tools::{Caps, Defaults, Prepared, Registry, Unprepared};
use chromate_command::{Failed, Reply};

/// How long ending the browser may take at exit (it is killed after 2 s).
const SHUTDOWN_GRACE: Duration = Duration::from_millis(2500);
/// How long a running call gets to stop once `close` or a signal cancels it.
const CANCEL_GRACE: Duration = Duration::from_millis(1500);
/// How long a connection may take to send its request line before it is dropped.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// What the connection tasks share with the accept loop.
struct Shared {
    name: String,
    paths: SessionPaths,
    session: tokio::sync::Mutex<ToolSession>,
    defaults: Defaults,
    /// What a session runs: the 28 and the audit tools (`chromate audit`, `chromate errors`).
    registry: Registry,
    session_dir: std::path::PathBuf,
    idle: Duration,
    /// Calls being served; the idle clock runs only at zero, and only calls restart it.
    active: AtomicUsize,
    last_activity: Mutex<Instant>,
    /// The running call's cancel switch.
    running: Mutex<Option<watch::Sender<bool>>>,
    /// Fired by `close` once it has answered.
    closing: Notify,
    /// Set by `close`: calls that arrive later are refused instead of starting a browser.
    ending: std::sync::atomic::AtomicBool,
    /// The active tab's page tools, from the first watch on (`webmcp.rs`).
    page_tools: std::sync::OnceLock<super::webmcp::PageTools>,
}

impl Shared {
    fn touch(&self) {
        *lock(&self.last_activity) = Instant::now();
    }
}

/// Runs the daemon until `close`, the idle timeout or a signal; returns the exit status.
pub(crate) async fn serve(name: String, idle: Duration, launch: bool, config: Config) -> i32 {
    let dir = match super::runtime_dir() {
        Ok(dir) => dir,
        Err(err) => {
            eprintln!("chromate daemon: the runtime directory: {err}");
            return 1;
        }
    };
    let paths = SessionPaths::new(&dir, &name);
    let listener = match take_socket(&paths.socket) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("chromate daemon: {}: {err}", paths.socket.display());
            return 1;
        }
    };
    if let Err(err) = record_pid(&paths.pid) {
        eprintln!("chromate daemon: {}: {err}", paths.pid.display());
        let _ = std::fs::remove_file(&paths.socket);
        return 1;
    }
    let defaults = Defaults {
        agent_timeout_ms: config.agent_timeout_ms,
    };
    let session = ToolSession::new(config);
    let shared = Arc::new(Shared {
        name,
        paths: paths.clone(),
        session_dir: session.artifacts.dir().to_path_buf(),
        session: tokio::sync::Mutex::new(session),
        defaults,
        registry: Registry::new(
            &[],
            Caps {
                audit: true,
                flows: false,
                webmcp: true,
                vision: true,
            },
        ),
        idle,
        active: AtomicUsize::new(0),
        last_activity: Mutex::new(Instant::now()),
        running: Mutex::new(None),
        closing: Notify::new(),
        ending: std::sync::atomic::AtomicBool::new(false),
        page_tools: std::sync::OnceLock::new(),
    });
    if launch {
        // The browser starts now, while the client that started us connects and sends its
        // call: the call queues behind the launch on the session's lock. A launch that fails
        // is left to that call, which launches again and reports why.
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut session = shared.session.lock().await;
            let _ = session.ensure_browser("launch").await;
        });
    }
    if let Err(err) = say_ready() {
        eprintln!("chromate daemon: cannot tell the client it is ready: {err}");
        let _ = std::fs::remove_file(&paths.pid);
        let _ = std::fs::remove_file(&paths.socket);
        return 1;
    }
    let mut signals = crate::signals::Signals::new();
    let why = loop {
        let idle_since = *lock(&shared.last_activity);
        let deadline = idle_since + shared.idle;
        tokio::select! {
            accepted = tokio::time::timeout_at(deadline.into(), listener.accept()) => match accepted {
                Ok(Ok((stream, _))) => {
                    // Only a call is activity (`handle` says when): `chromate sessions` asking
                    // who the daemon is, or a connection that says nothing, must not keep an
                    // unused session alive.
                    tokio::spawn(serve_connection(shared.clone(), stream));
                }
                Ok(Err(err)) => eprintln!("chromate daemon: accept: {err}"),
                Err(_elapsed) => {
                    if shared.active.load(Ordering::SeqCst) > 0 {
                        // A call is running: the clock starts again when it ends.
                        shared.touch();
                    } else if lock(&shared.last_activity).elapsed() >= shared.idle {
                        break "idle timeout";
                    }
                }
            },
            () = shared.closing.notified() => break "close",
            () = signals.recv() => break "signal",
        }
    };
    tracing::info!(reason = why, "session daemon ending");
    // No new connection is accepted from here: the socket goes first, so a command arriving
    // now starts a new daemon instead of talking to this one (the pid file before it, so a
    // new daemon's is never the one removed).
    if why != "close" {
        // `close` removed them before answering; a new daemon's may be there now.
        remove_files(&paths);
    }
    drop(listener);
    end_session(&shared).await;
    0
}

/// Removes the session's pid file, then its socket: from here a command starts a new daemon.
fn remove_files(paths: &SessionPaths) {
    let _ = std::fs::remove_file(&paths.pid);
    let _ = std::fs::remove_file(&paths.socket);
}

/// Cancels the running call and ends the browser, all bounded.
async fn end_session(shared: &Shared) {
    if let Some(cancel) = lock(&shared.running).as_ref() {
        let _ = cancel.send(true);
    }
    let session = tokio::time::timeout(CANCEL_GRACE, shared.session.lock()).await;
    if let Ok(mut session) = session {
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, session.shutdown()).await;
    }
}

/// Binds the session's socket. A socket file already there is a dead daemon's only if
/// nothing answers on it; then it is removed. A live daemon, or anything but a socket (a
/// symlink, a regular file), is refused.
fn take_socket(path: &Path) -> io::Result<UnixListener> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
        Ok(meta) => {
            if !meta.file_type().is_socket()
                || meta.uid() != chromate_command::private_fs::effective_uid()
            {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "something other than this user's socket is there; not touching it",
                ));
            }
            match std::os::unix::net::UnixStream::connect(path) {
                Ok(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::AddrInUse,
                        "another daemon already serves this session",
                    ))
                }
                Err(err) if err.kind() == io::ErrorKind::ConnectionRefused => {
                    std::fs::remove_file(path)?;
                }
                Err(err) => return Err(err),
            }
        }
    }
    let listener = UnixListener::bind(path)?;
    // The directory is 0700 already; the socket itself is the user's alone too.
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    Ok(listener)
}

/// Prints `ready` for the client that started us, then points stdout at /dev/null: the
/// client stops reading once it has the line, and nothing may write into a closed pipe.
#[expect(unsafe_code, reason = "dup2(2) through libc")]
fn say_ready() -> io::Result<()> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let mut stdout = io::stdout().lock();
    stdout.write_all(b"ready\n")?;
    stdout.flush()?;
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    // SAFETY: both descriptors are open for the whole call; dup2 replaces fd 1 atomically.
    if unsafe { libc::dup2(null.as_raw_fd(), libc::STDOUT_FILENO) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Serves one connection: one request, one answer.
async fn serve_connection(shared: Arc<Shared>, stream: UnixStream) {
    let served = handle(&shared, stream).await;
    if let Err(err) = served {
        tracing::debug!(error = %err, "connection ended early");
    }
}

/// A call being served: the idle clock does not run while one is (dropped when it ends,
/// cancelled or not).
struct Active<'a>(&'a Shared);

impl<'a> Active<'a> {
    fn enter(shared: &'a Shared) -> Active<'a> {
        shared.active.fetch_add(1, Ordering::SeqCst);
        Active(shared)
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Writes the daemon's pid to `path` (0600, new: a file left by a dead daemon is removed
/// first, a symlink there is removed, never followed).
fn record_pid(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        _ => {}
    }
    chromate_command::private_fs::write_new_file(
        path,
        format!("{}\n", std::process::id()).as_bytes(),
    )
}

async fn handle(shared: &Arc<Shared>, stream: UnixStream) -> io::Result<()> {
    let peer = stream.peer_cred()?;
    let (read_half, mut write_half) = stream.into_split();
    if peer.uid() != chromate_command::private_fs::effective_uid() {
        let refused = Response::Refused(format!(
            "this session belongs to uid {}; uid {} may not use it",
            chromate_command::private_fs::effective_uid(),
            peer.uid()
        ));
        return answer(&mut write_half, &refused).await;
    }
    let mut reader = BufReader::new(read_half.take(MAX_REQUEST_BYTES));
    let mut line = String::new();
    // A client sends its request as soon as it connects: a connection that says nothing is
    // dropped, and never counted as activity.
    match tokio::time::timeout(REQUEST_TIMEOUT, reader.read_line(&mut line)).await {
        Ok(Ok(0)) | Err(_) => return Ok(()),
        Ok(read) => {
            read?;
        }
    }
    let request = match serde_json::from_str::<Request>(&line) {
        Ok(request) => request,
        Err(err) => {
            let refused = Response::Refused(format!("not a request: {err}"));
            return answer(&mut write_half, &refused).await;
        }
    };
    let response = match request {
        Request::Info => Response::Info(info(shared)),
        Request::WatchTools { seen } => {
            let tools = shared
                .page_tools
                .get_or_init(super::webmcp::PageTools::start);
            // The page now, unless a call runs (which publishes it when it ends).
            if let Ok(mut session) = shared.session.try_lock() {
                tools.publish(&mut session);
            }
            let mut client = reader.into_inner().into_inner();
            let mut byte = [0u8; 1];
            tokio::select! {
                (generation, tools) = tools.next(seen) => Response::PageTools { generation, tools },
                // The watcher went away.
                _ = client.read(&mut byte) => return Ok(()),
            }
        }
        Request::Close => {
            shared.ending.store(true, Ordering::SeqCst);
            // The name is free before `close` answers: a command run right after it starts a
            // new daemon instead of reaching this one as it goes.
            remove_files(&shared.paths);
            end_session(shared).await;
            let answered = answer(&mut write_half, &Response::Closed).await;
            shared.closing.notify_one();
            return answered;
        }
        Request::Call {
            tool,
            arguments,
            cwd,
            progress,
            refuse_file_urls,
        } => {
            let mut rest = reader.into_inner().into_inner();
            let _active = Active::enter(shared);
            // The idle clock counts from a call's arrival and again from its end.
            shared.touch();
            let cwd = cwd.filter(|dir| dir.is_absolute());
            let stream = progress.then_some(&mut write_half);
            let call_options = CallOptions {
                cwd,
                refuse_file_urls,
            };
            let reply = call(shared, &tool, arguments, call_options, &mut rest, stream).await;
            shared.touch();
            match reply {
                Some(reply) => Response::Reply(reply),
                // The client went away: there is no one to answer.
                None => return Ok(()),
            }
        }
    };
    answer(&mut write_half, &response).await
}

async fn answer(
    write_half: &mut tokio::net::unix::OwnedWriteHalf,
    response: &Response,
) -> io::Result<()> {
    let mut line = serde_json::to_string(response).map_err(io::Error::other)?;
    line.push('\n');
    write_half.write_all(line.as_bytes()).await?;
    write_half.flush().await
}

fn info(shared: &Shared) -> Info {
    let (busy, browser_pid) = match shared.session.try_lock() {
        Ok(session) => (false, session.browser_pid()),
        Err(_) => (true, None),
    };
    Info {
        session: shared.name.clone(),
        pid: std::process::id(),
        browser_pid,
        busy,
        session_dir: shared.session_dir.clone(),
        idle_timeout_s: shared.idle.as_secs(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// Runs one call, unless its client goes away first (then `None`: cancelled). With `stream`,
/// every change of the call's progress phase is sent to the client as it happens.
/// What a call's request says about how it runs, besides the tool and its arguments.
struct CallOptions {
    /// The command's working directory.
    cwd: Option<std::path::PathBuf>,
    /// `file:` URLs are refused in this call ([`Request::Call`]'s `refuse_file_urls`).
    refuse_file_urls: bool,
}

async fn call(
    shared: &Arc<Shared>,
    tool: &str,
    arguments: serde_json::Map<String, Value>,
    options: CallOptions,
    client: &mut tokio::net::unix::OwnedReadHalf,
    mut stream: Option<&mut tokio::net::unix::OwnedWriteHalf>,
) -> Option<Reply> {
    let arguments = Value::Object(arguments);
    let Prepared { decl, arguments } =
        match shared
            .registry
            .prepare(tool, Some(&arguments), &shared.defaults)
        {
            Ok(prepared) => prepared,
            Err(Unprepared::Unknown) => {
                return Some(failed(&ToolError::new(
                    ToolErrorCode::InvalidArgument,
                    format!("unknown tool {tool:?}"),
                )))
            }
            Err(Unprepared::Invalid(error)) => return Some(failed(&error.to_tool_error())),
        };
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let cancel = Cancel::new(cancel_rx);
    let progress = Progress::new("queued behind another call", Instant::now());
    let run = async {
        // The session lock is FIFO: calls run one at a time in arrival order.
        let mut session = shared.session.lock().await;
        if cancel.is_cancelled() {
            return None;
        }
        if shared.ending.load(Ordering::SeqCst) {
            let error = ToolError::new(ToolErrorCode::BrowserUnavailable, "the session is closing")
                .with_hint("run the command again: it starts a new session");
            return Some(failed(&error));
        }
        *lock(&shared.running) = Some(cancel_tx.clone());
        // Relative paths and the upload rule follow the command's directory, not the daemon's.
        session.call_dir = options.cwd;
        let file_urls = session.config.file_urls;
        session.config.file_urls = file_urls && !options.refuse_file_urls;
        let reply = chromate_command::run(&mut session, decl, arguments, &cancel, &progress).await;
        if let Some(tools) = shared.page_tools.get() {
            tools.publish(&mut session);
        }
        session.config.file_urls = file_urls;
        session.call_dir = None;
        *lock(&shared.running) = None;
        Some(reply)
    };
    tokio::pin!(run);
    let mut byte = [0u8; 1];
    let mut changes = progress.changes();
    // Each phase in turn (a command printing a line per step misses none), not the latest.
    let mut sent = 0;
    loop {
        tokio::select! {
            reply = &mut run => {
                // The phases the last change did not get to send yet, before the reply.
                if let Some(write_half) = stream.as_deref_mut() {
                    let _ = send_phases(write_half, &progress, &mut sent).await;
                }
                return reply;
            }
            // The client sends nothing more: a read that ends means it closed (or died).
            _ = client.read(&mut byte) => break,
            changed = changes.changed(), if stream.is_some() => {
                if changed.is_err() {
                    stream = None;
                    continue;
                }
                if let Some(write_half) = stream.as_deref_mut() {
                    if send_phases(write_half, &progress, &mut sent).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
    let _ = cancel_tx.send(true);
    // Let the handler stop at its next await point, so the session is whole for the next call.
    let _ = tokio::time::timeout(CANCEL_GRACE, &mut run).await;
    None
}

/// Sends the client each phase set since `sent`, oldest first; `Err` when it is gone.
async fn send_phases(
    write_half: &mut tokio::net::unix::OwnedWriteHalf,
    progress: &Progress,
    sent: &mut u64,
) -> Result<(), ()> {
    for phase in progress.phases_since(sent) {
        if answer(write_half, &Response::Progress(phase))
            .await
            .is_err()
        {
            return Err(());
        }
    }
    Ok(())
}

/// A tool error as a reply (nothing to spill: validation and refusals carry no snapshot).
fn failed(error: &ToolError) -> Reply {
    Reply::Failed(Failed {
        error: error.to_json(),
        text: error.to_text(None),
    })
}
