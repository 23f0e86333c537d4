//! `--caps webmcp` on the MCP front end (docs/mcp.md#webmcp): the active tab's page tools in
//! tools/list as `webmcp_<name>`, kept current without waiting for the session, and
//! `notifications/tools/list_changed` when they change.
//!
//! The worker publishes the active page after every call ([`Projection::publish`]); a task of
//! its own ([`watch`]) turns WebMCP on for that page, reprojects its tools whenever the page's
//! list moves or another tab becomes active, and tells the client when the projected list
//! differs from the one before. tools/list reads the last projection under a plain lock, so it
//! never waits for a running call.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::watch;

use super::Outbox;
use chromate_command::sync::lock;
use chromate_command::webmcp::{self, Projected};

/// The active page as the worker last saw it and its tools as MCP tools.
pub(crate) struct Projection {
    active: watch::Sender<Option<chromate::Page>>,
    tools: Arc<Mutex<Vec<Projected>>>,
}

impl Projection {
    /// Starts the watcher; it ends when the projection is dropped.
    pub(crate) fn start(outbox: Outbox) -> (Projection, tokio::task::JoinHandle<()>) {
        let (active, active_rx) = watch::channel(None);
        let tools = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(watch_pages(active_rx, tools.clone(), outbox));
        (Projection { active, tools }, task)
    }

    /// The active page after a call (`None`: no browser).
    pub(crate) fn publish(&self, page: Option<chromate::Page>) {
        self.active.send_if_modified(|current| {
            let same = match (current.as_ref(), page.as_ref()) {
                (Some(a), Some(b)) => a.target_id() == b.target_id(),
                (None, None) => true,
                _ => false,
            };
            if !same {
                *current = page;
            }
            !same
        });
    }

    /// The projected tools' tools/list entries.
    pub(crate) fn entries(&self) -> Vec<Value> {
        lock(&self.tools).iter().map(Projected::to_json).collect()
    }
}

/// Reprojects on every change of the active page or of its tools; sends
/// `notifications/tools/list_changed` whenever the entries differ from the previous ones.
async fn watch_pages(
    mut active: watch::Receiver<Option<chromate::Page>>,
    tools: Arc<Mutex<Vec<Projected>>>,
    outbox: Outbox,
) {
    let mut shown: Vec<Value> = Vec::new();
    loop {
        let page = active.borrow_and_update().clone();
        let mut changes = match &page {
            Some(page) => {
                // A page on a browser without WebMCP, or one that went away, offers nothing.
                let _ = page.webmcp_enable().await;
                Some(page.webmcp_changes())
            }
            None => None,
        };
        loop {
            let projected = page
                .as_ref()
                .map(|page| webmcp::project(page, &[]))
                .unwrap_or_default();
            let entries: Vec<Value> = projected.iter().map(Projected::to_json).collect();
            *lock(&tools) = projected;
            if entries != shown {
                shown = entries;
                outbox.send(&json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/tools/list_changed",
                }));
            }
            let tab_changed = match changes.as_mut() {
                Some(changes) => tokio::select! {
                    changed = active.changed() => Some(changed.is_ok()),
                    moved = changes.changed() => match moved {
                        Ok(()) => None,
                        // The page is gone: wait for the next active page.
                        Err(_) => Some(active.changed().await.is_ok()),
                    },
                },
                None => Some(active.changed().await.is_ok()),
            };
            match tab_changed {
                None => {}
                Some(true) => break,
                Some(false) => return,
            }
        }
    }
}
