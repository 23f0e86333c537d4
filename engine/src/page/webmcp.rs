//! WebMCP: the tools a page registers for agents (`document.modelContext.registerTool`, and
//! forms declared with `toolname`), as the protocol's `WebMCP` domain reports them.
//!
//! Chromium runs them only behind `--enable-features=WebMCP` (an argument of [`crate::LaunchOptions`]).
//! What Chromium 156 does, measured (docs/mcp.md#webmcp): `WebMCP.enable` reports every tool
//! registered so far as `toolsAdded`, then each registration as it happens; a script's
//! `annotations` are its `readOnlyHint`, `untrustedContentHint` and `consequentialHint`; a
//! document that goes away (navigation, reload) drops its tools *without* `toolsRemoved`, so
//! the reducer forgets a frame's tools when the frame commits a new document or is detached;
//! `invokeTool` answers an invocation id at once and the outcome comes as `toolResponded`; a
//! tool that throws responds `Error` with the exception's description and an empty
//! `errorText`; an unknown name is a protocol error `Tool not found`.
//!
//! The list is the page state's (`state.rs` applies the events, in order with the frame
//! events), so a reader never sees a navigated document's old tools.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::cdp::{decode_event, web_mcp};

/// Tools kept per page at most: a page that registers more is cut off (the rest ignored).
pub const MAX_TOOLS_PER_PAGE: usize = 256;

/// One tool a page offers.
#[derive(Debug, Clone, PartialEq)]
pub struct WebMcpTool {
    /// The name the page registered (Chromium checks it: letters, digits, `_`, `-`, `.`,
    /// at most 128 characters; a declarative form's `toolname` is not always checked).
    pub name: String,
    /// The page's description, whole (callers bound it).
    pub description: String,
    /// The page's input schema, as the page gave it (`None`: none).
    pub input_schema: Option<Value>,
    /// The frame that registered it.
    pub frame_id: String,
    /// `readOnlyHint`: the tool changes nothing.
    pub read_only: bool,
    /// `untrustedContentHint`: its output may carry third-party content.
    pub untrusted_content: bool,
    /// `consequentialHint`: calling it has consequences (buying, sending, deleting).
    pub consequential: bool,
    /// Declared by a form (`toolname`) rather than a script.
    pub declarative: bool,
}

/// How an invocation ended (`WebMCP.toolResponded`).
#[derive(Debug, Clone, PartialEq)]
pub enum WebMcpOutcome {
    /// The tool returned: its output (`null` when it returned nothing).
    Completed(Value),
    /// The tool threw or rejected: the page's message.
    Failed(String),
    /// The page canceled it (its definition changed, its document went away): why.
    Canceled(String),
}

/// The page's tools, in registration order, and the (session, frame) each belongs to.
#[derive(Debug, Default)]
pub(crate) struct WebMcpTools {
    pub(crate) tools: Vec<(Option<Arc<str>>, WebMcpTool)>,
    /// Moves on every change: a reader compares it to see whether the list changed.
    pub(crate) version: u64,
}

impl WebMcpTools {
    /// Applies a `WebMCP.*` event of `session`; true when the list changed.
    pub(crate) fn apply(
        &mut self,
        session: Option<&Arc<str>>,
        method: &str,
        params: &RawValue,
    ) -> bool {
        match method {
            "WebMCP.toolsAdded" => {
                let Some(event) = decode_event::<web_mcp::EventToolsAdded>(params) else {
                    return false;
                };
                for tool in event.tools {
                    let tool = from_cdp(tool);
                    self.tools
                        .retain(|(_, t)| !(t.name == tool.name && t.frame_id == tool.frame_id));
                    if self.tools.len() < MAX_TOOLS_PER_PAGE {
                        self.tools.push((session.cloned(), tool));
                    }
                }
            }
            "WebMCP.toolsRemoved" => {
                let Some(event) = decode_event::<web_mcp::EventToolsRemoved>(params) else {
                    return false;
                };
                for gone in event.tools {
                    self.tools.retain(|(_, t)| {
                        !(t.name == gone.name && t.frame_id == gone.frame_id.as_str())
                    });
                }
            }
            _ => return false,
        }
        self.version += 1;
        true
    }

    /// Forgets the tools of `frame_id` (its document went away); true when there were some.
    pub(crate) fn forget_frame(&mut self, frame_id: &str) -> bool {
        let before = self.tools.len();
        self.tools.retain(|(_, t)| t.frame_id != frame_id);
        let changed = self.tools.len() != before;
        if changed {
            self.version += 1;
        }
        changed
    }
}

fn from_cdp(tool: web_mcp::Tool) -> WebMcpTool {
    let annotations = tool.annotations.as_ref();
    let hint =
        |get: fn(&web_mcp::Annotation) -> Option<bool>| annotations.and_then(get).unwrap_or(false);
    WebMcpTool {
        name: tool.name,
        description: tool.description,
        input_schema: tool.input_schema,
        frame_id: tool.frame_id.0,
        read_only: hint(|a| a.read_only),
        untrusted_content: hint(|a| a.untrusted_content),
        consequential: hint(|a| a.consequential),
        declarative: tool.backend_node_id.is_some(),
    }
}

impl super::Page {
    /// Turns the `WebMCP` domain on for this page and its out-of-process frames (once; later
    /// calls return at once), so that [`webmcp_tools`](Self::webmcp_tools) is kept current.
    /// On a browser without the `WebMCP` feature the page simply offers no tools.
    pub async fn webmcp_enable(&self) -> crate::Result<()> {
        use std::sync::atomic::Ordering;
        if self.shared.webmcp_enabled.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let frame_sessions: Vec<Arc<str>> = {
            let state = crate::rt::lock(&self.shared.state);
            let mut ids: Vec<Arc<str>> = state
                .frames
                .values()
                .filter_map(|f| f.session.clone())
                .collect();
            ids.sort();
            ids.dedup();
            ids
        };
        let enable = web_mcp::EnableParams::default();
        let result = self.session.send(&enable).await.map(|_| ());
        for id in frame_sessions {
            let session = crate::session::Session::new(self.session.conn.clone(), Some(&id));
            let _ = session.send(&enable).await;
        }
        if result.is_err() {
            self.shared.webmcp_enabled.store(false, Ordering::SeqCst);
        }
        result
    }

    /// The tools the page offers now, in registration order, and the list's version (it moves
    /// on every change; [`webmcp_changes`](Self::webmcp_changes) wakes on it).
    pub fn webmcp_tools(&self) -> (u64, Vec<WebMcpTool>) {
        let state = crate::rt::lock(&self.shared.state);
        let tools = state.webmcp.tools.iter().map(|(_, t)| t.clone()).collect();
        (state.webmcp.version, tools)
    }

    /// A receiver that wakes whenever the page's tool list changes.
    pub fn webmcp_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.webmcp_version.subscribe()
    }

    /// Invokes `tool` with `input` and waits for its answer until `deadline`; past it, the
    /// invocation is canceled (`WebMCP.cancelInvocation`) and the answer is
    /// `Ok(None)`. A tool the page no longer has is the protocol's error (`Tool not found`).
    pub async fn webmcp_invoke(
        &self,
        tool: &WebMcpTool,
        input: Value,
        deadline: std::time::Instant,
    ) -> crate::Result<Option<WebMcpOutcome>> {
        let owner = {
            let state = crate::rt::lock(&self.shared.state);
            state
                .webmcp
                .tools
                .iter()
                .find(|(_, t)| t.name == tool.name && t.frame_id == tool.frame_id)
                .and_then(|(session, _)| session.clone())
        };
        let session = match owner {
            Some(id) => crate::session::Session::new(self.session.conn.clone(), Some(&id)),
            None => self.session.clone(),
        };
        // Subscribed before the invocation is sent: its answer cannot slip past.
        let mut answers = session.events::<web_mcp::EventToolResponded>();
        let params = web_mcp::InvokeToolParams::new(
            crate::cdp::page::FrameId(tool.frame_id.clone()),
            tool.name.clone(),
            input,
        );
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let invoked = session.send_with_timeout(&params, left).await?;
        let id = invoked.invocation_id;
        loop {
            let next = tokio::time::timeout_at(deadline.into(), answers.recv()).await;
            match next {
                Err(_) | Ok(None) => break,
                Ok(Some(Ok(answer))) if answer.invocation_id == id => {
                    return Ok(Some(outcome(answer)));
                }
                Ok(Some(_)) => {}
            }
        }
        let cancel = web_mcp::CancelInvocationParams::new(id);
        let _ = session
            .send_with_timeout(&cancel, std::time::Duration::from_secs(2))
            .await;
        Ok(None)
    }
}

fn outcome(answer: web_mcp::EventToolResponded) -> WebMcpOutcome {
    let text = || {
        let from_exception = answer.exception.as_ref().and_then(|e| {
            e.description
                .clone()
                .or_else(|| e.value.as_ref().map(|v| v.to_string()))
        });
        match answer.error_text.as_deref() {
            Some(text) if !text.is_empty() => text.to_owned(),
            _ => from_exception.unwrap_or_else(|| "the page gave no reason".to_owned()),
        }
    };
    match answer.status {
        web_mcp::InvocationStatus::Completed => {
            WebMcpOutcome::Completed(answer.output.clone().unwrap_or(Value::Null))
        }
        web_mcp::InvocationStatus::Canceled => WebMcpOutcome::Canceled(text()),
        _ => WebMcpOutcome::Failed(text()),
    }
}
