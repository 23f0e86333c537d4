//! `--caps webmcp` on the MCP front end (docs/mcp.md#webmcp): the active tab's page tools as
//! `webmcp_<name>` tools, whose changes this front end tells the client as
//! `notifications/tools/list_changed`. A server of its own keeps the command layer's
//! projection (`chromate_command::webmcp::watch`) of its session; a server attached to a CLI
//! session (`--session NAME`) mirrors the daemon's, which it watches over a connection of its
//! own (`attach.rs`, `crate::daemon::Request::WatchTools`).

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::Notify;

use super::{watch_page_tools, Attached, Outbox};
use chromate_command::session::ToolSession;
use chromate_command::sync::lock;
use chromate_command::webmcp::watch::Projection;

/// The page tools a server offers.
pub(crate) enum PageTools {
    /// Its own session's.
    Local(Projection),
    /// The attached daemon's, as last answered; `wake` restarts a watch that failed (the
    /// daemon was gone) after the next call.
    Remote {
        entries: Arc<Mutex<Vec<Value>>>,
        wake: Arc<Notify>,
    },
}

impl PageTools {
    /// After a call: a server of its own publishes its session's active page; an attached
    /// one wakes its watch if it stopped (the call may have started a new daemon).
    pub(crate) fn publish(&self, session: &mut ToolSession) {
        match self {
            PageTools::Local(projection) => projection.publish(session),
            PageTools::Remote { wake, .. } => wake.notify_one(),
        }
    }

    /// The page tools' tools/list entries.
    pub(crate) fn entries(&self) -> Vec<Value> {
        match self {
            PageTools::Local(projection) => projection.entries(),
            PageTools::Remote { entries, .. } => lock(entries).clone(),
        }
    }
}

fn list_changed(outbox: &Outbox) {
    outbox.send(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
    }));
}

/// Starts the page tools of a server (attached to `attached`'s daemon, or of its own); their
/// changes go to the client through `outbox`.
pub(crate) fn start(
    outbox: Outbox,
    attached: Option<&Attached>,
) -> (PageTools, tokio::task::JoinHandle<()>) {
    let Some(attached) = attached.cloned() else {
        let (projection, task) = Projection::start(move || list_changed(&outbox));
        return (PageTools::Local(projection), task);
    };
    let entries = Arc::new(Mutex::new(Vec::new()));
    let wake = Arc::new(Notify::new());
    let task = tokio::spawn(mirror(attached, outbox, entries.clone(), wake.clone()));
    (PageTools::Remote { entries, wake }, task)
}

/// Keeps `entries` the daemon's, telling the client each time they change. A watch that
/// fails (no daemon runs: it ended idle or was closed) waits for the next call, never polls.
async fn mirror(
    attached: Attached,
    outbox: Outbox,
    entries: Arc<Mutex<Vec<Value>>>,
    wake: Arc<Notify>,
) {
    let mut seen = None;
    loop {
        match watch_page_tools(&attached, seen).await {
            Ok((generation, tools)) => {
                seen = Some(generation);
                let changed = {
                    let mut shown = lock(&entries);
                    let changed = *shown != tools;
                    *shown = tools;
                    changed
                };
                if changed {
                    list_changed(&outbox);
                }
            }
            Err(_) => {
                seen = None;
                wake.notified().await;
            }
        }
    }
}
