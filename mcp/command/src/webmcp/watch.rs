//! The projection a front end keeps for `tools/list` (docs/mcp.md#webmcp): the active page as
//! the worker last saw it, its tools as MCP tools, kept current by a task of its own that
//! reprojects whenever the page's list moves or another tab becomes active, and calls the
//! front end's `changed` (which sends `notifications/tools/list_changed`) whenever the entries
//! differ from the ones before. `tools/list` reads the last projection under a plain lock, so
//! it never waits for a running call.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::watch;

use super::{project, Projected};
use crate::session::ToolSession;
use crate::sync::lock;

/// The active page and its projected tools; the watcher ends when this is dropped.
pub struct Projection {
    active: watch::Sender<Option<chromate::Page>>,
    tools: Arc<Mutex<Vec<Projected>>>,
}

impl Projection {
    /// Starts the watcher, which calls `changed` each time the projected list changes.
    pub fn start(changed: impl Fn() + Send + 'static) -> (Projection, tokio::task::JoinHandle<()>) {
        let (active, active_rx) = watch::channel(None);
        let tools = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(watch_pages(active_rx, tools.clone(), changed));
        (Projection { active, tools }, task)
    }

    /// After a call: the session's active page (none without a browser).
    pub fn publish(&self, session: &mut ToolSession) {
        let page = session.current_page();
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
    pub fn entries(&self) -> Vec<Value> {
        lock(&self.tools).iter().map(Projected::to_json).collect()
    }
}

async fn watch_pages(
    mut active: watch::Receiver<Option<chromate::Page>>,
    tools: Arc<Mutex<Vec<Projected>>>,
    changed: impl Fn(),
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
                .map(|page| project(page, &[]))
                .unwrap_or_default();
            let entries: Vec<Value> = projected.iter().map(Projected::to_json).collect();
            *lock(&tools) = projected;
            if entries != shown {
                shown = entries;
                changed();
            }
            let tab_changed = match changes.as_mut() {
                Some(changes) => tokio::select! {
                    moved = active.changed() => Some(moved.is_ok()),
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
