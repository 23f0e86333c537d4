//! The daemon's page tools (docs/mcp.md#webmcp) for `chromate mcp --session NAME --caps
//! webmcp`: the command layer's projection of the session's active tab
//! (`chromate_command::webmcp::watch`), started at the first [`super::Request::WatchTools`]
//! (a session nobody watches never pays for it), published after every call, and a
//! generation that grows with each change, which a watch request waits on.

use serde_json::Value;
use tokio::sync::watch;

use chromate_command::session::ToolSession;
use chromate_command::webmcp::watch::Projection;

/// The projection and its generation.
pub(super) struct PageTools {
    projection: Projection,
    generation: watch::Receiver<u64>,
}

impl PageTools {
    /// Starts the projection (its watcher ends when this is dropped).
    pub(super) fn start() -> PageTools {
        let (bump, generation) = watch::channel(0u64);
        let (projection, _watcher) = Projection::start(move || {
            bump.send_modify(|generation| *generation += 1);
        });
        PageTools {
            projection,
            generation,
        }
    }

    /// After a call: the session's active page.
    pub(super) fn publish(&self, session: &mut ToolSession) {
        self.projection.publish(session);
    }

    /// The generation and entries, once the generation is not `seen`.
    pub(super) async fn next(&self, seen: Option<u64>) -> (u64, Vec<Value>) {
        let mut generation = self.generation.clone();
        loop {
            let now = *generation.borrow_and_update();
            if seen != Some(now) || generation.changed().await.is_err() {
                return (now, self.projection.entries());
            }
        }
    }
}
