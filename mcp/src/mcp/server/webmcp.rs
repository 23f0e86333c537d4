//! `--caps webmcp` on the MCP front end (docs/mcp.md#webmcp): the command layer's projection
//! of the active tab's page tools (`chromate_command::webmcp::watch`), whose changes this front
//! end tells the client as `notifications/tools/list_changed`.

use serde_json::json;

use super::Outbox;
use chromate_command::webmcp::watch::Projection;

/// Starts the projection; its changes go to the client through `outbox`.
pub(crate) fn start(outbox: Outbox) -> (Projection, tokio::task::JoinHandle<()>) {
    Projection::start(move || {
        outbox.send(&json!({
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
        }));
    })
}
