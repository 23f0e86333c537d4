//! `chromate mcp --session NAME`: the server attached to a CLI session's daemon, which runs
//! every tool call there (one browser for the editor's agent and the shell), and the reply it
//! forwards.

use super::*;

/// The CLI session an attached server sends its tool calls to.
#[derive(Debug, Clone)]
pub(super) struct Attached {
    pub(super) paths: crate::daemon::SessionPaths,
    pub(super) start: crate::daemon::client::Start,
}

/// Starts (or finds) the CLI session `name` and asks who it is.
#[cfg(unix)]
pub(super) async fn attach_session(name: &str) -> Result<(Attached, crate::daemon::Info), String> {
    use crate::daemon::{self, client, Request, Response, SessionPaths};
    let name = daemon::session_name(Some(name))?;
    let dir = daemon::runtime_dir().map_err(|err| format!("the runtime directory: {err}"))?;
    let attached = Attached {
        paths: SessionPaths::new(&dir, &name),
        start: client::Start {
            idle: crate::cli::commands::DEFAULT_IDLE,
            launch: false,
        },
    };
    match client::request_async(&attached.paths, &Request::Info, &attached.start).await {
        Ok(Response::Info(info)) => Ok((attached, info)),
        Ok(_) => Err("the session daemon answered something else".to_owned()),
        Err(err) => Err(err.to_string()),
    }
}

#[cfg(not(unix))]
pub(super) async fn attach_session(_name: &str) -> Result<(Attached, crate::daemon::Info), String> {
    Err("sessions need Linux or macOS".to_owned())
}

/// One call in the attached session's daemon. Cancelling drops the connection, which
/// cancels the call there.
pub(super) async fn remote(
    attached: &Attached,
    call: &QueuedCall,
    cancel: &Cancel,
    file_urls: bool,
) -> Reply {
    use crate::daemon::{client, Request, Response};
    use chromate_command::error::{ToolError, ToolErrorCode};
    let request = Request::Call {
        tool: call.decl.name.to_owned(),
        arguments: call.arguments.clone(),
        cwd: std::env::current_dir().ok(),
        progress: false,
        refuse_file_urls: !file_urls,
    };
    let failure = |message: String| {
        let error = ToolError::new(
            ToolErrorCode::BrowserUnavailable,
            format!(
                "{}: session {}: {message}",
                call.decl.verb, attached.paths.name
            ),
        )
        .with_hint("run `chromate status --session NAME` to see the session; the call was not run");
        Reply::Failed(chromate_command::Failed {
            error: error.to_json(),
            text: error.to_text(None),
        })
    };
    #[cfg(unix)]
    let sent = cancel
        .run(client::request_async(
            &attached.paths,
            &request,
            &attached.start,
        ))
        .await;
    #[cfg(not(unix))]
    let sent = cancel
        .run(async { client::request(&attached.paths, &request, Some(&attached.start)) })
        .await;
    match sent {
        None => failure("cancelled".to_owned()),
        Some(Ok(Response::Reply(reply))) => reply,
        Some(Ok(_)) => failure("the session daemon answered something else".to_owned()),
        Some(Err(err)) => failure(err.to_string()),
    }
}

/// The attached session's page tools once their generation is not `seen` (at once without
/// one), over a connection of their own that stays open until the daemon answers
/// ([`crate::daemon::Request::WatchTools`]). Never starts a daemon: an error when none runs.
#[cfg(unix)]
pub(super) async fn watch_page_tools(
    attached: &Attached,
    seen: Option<u64>,
) -> Result<(u64, Vec<Value>), String> {
    use crate::daemon::{Request, Response, MAX_RESPONSE_BYTES};
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let stream = tokio::net::UnixStream::connect(&attached.paths.socket)
        .await
        .map_err(|err| err.to_string())?;
    let (read_half, mut write_half) = stream.into_split();
    let mut line =
        serde_json::to_string(&Request::WatchTools { seen }).map_err(|err| err.to_string())?;
    line.push('\n');
    write_half
        .write_all(line.as_bytes())
        .await
        .map_err(|err| err.to_string())?;
    let mut reader = tokio::io::BufReader::new(read_half.take(MAX_RESPONSE_BYTES));
    let mut answer = Vec::new();
    reader
        .read_until(b'\n', &mut answer)
        .await
        .map_err(|err| err.to_string())?;
    match serde_json::from_slice(&answer) {
        Ok(Response::PageTools { generation, tools }) => Ok((generation, tools)),
        Ok(_) => Err("the session daemon answered something else".to_owned()),
        Err(err) => Err(format!("unreadable answer: {err}")),
    }
}

#[cfg(not(unix))]
pub(super) async fn watch_page_tools(
    _attached: &Attached,
    _seen: Option<u64>,
) -> Result<(u64, Vec<Value>), String> {
    Err("sessions need Linux or macOS".to_owned())
}
