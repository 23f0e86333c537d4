//! `Page`: one tab — the handle, its accessors, and the state its events keep current.
//!
//! The page's state (frames, lifecycle per loader, execution contexts, dialog, main-document
//! status) is kept current by a state handler that runs on the transport's reader task, so no
//! event is missed however fast a page loads; waiters are woken through a `watch` counter and
//! re-check the state. One job per file: `state.rs` is the reducer (a pure function of the
//! state and one CDP event, unit-tested on recorded events), `navigation.rs` the navigations
//! and their waits, `evaluate.rs` evaluation and value conversion, `isolated.rs` calls into
//! chromate's isolated world, `dialog.rs` JavaScript dialogs. The page also holds its input state
//! (keys held, the pointer), which only `input/` reads and writes.

mod dialog;
mod evaluate;
mod isolated;
mod nav_wait;
mod navigation;
pub(crate) mod resolve;
mod settle;
mod stall;
mod state;
mod webmcp;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::value::RawValue;
use tokio::sync::watch;

use crate::cdp::page as cdp_page;
use crate::rt::lock;
use crate::session::Session;

pub use dialog::Dialog;
pub(crate) use evaluate::exception_error;
pub(crate) use isolated::{DOCUMENT_CHANGES, WORLD_NAME};
pub(crate) use nav_wait::{enter_fence, wait_for_click_navigation};
pub use navigation::{NavigationResult, WaitUntil};
pub use settle::{Settled, SETTLE_CAP, SETTLE_WINDOW};
pub(crate) use state::NavMark;
use state::PageState;
pub use webmcp::{WebMcpOutcome, WebMcpTool, MAX_TOOLS_PER_PAGE};

/// A frame of the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameInfo {
    /// The frame id.
    pub id: String,
    /// The parent frame id (`None` for the main frame).
    pub parent_id: Option<String>,
    /// The frame's URL.
    pub url: String,
    /// The frame's `name`.
    pub name: String,
}

/// Keyboard modifiers held by `key_down` and the pointer: the page's own state, which only
/// `input/` reads and writes (the page does not know about input).
#[derive(Debug, Default)]
pub(crate) struct InputState {
    /// CDP modifier bits held down (Alt=1, Ctrl=2, Meta=4, Shift=8).
    pub(crate) modifiers: i64,
    /// The pointer position in viewport CSS px.
    pub(crate) x: f64,
    pub(crate) y: f64,
    /// Mouse buttons held (`buttons` bits).
    pub(crate) buttons: i64,
}

/// State shared between the page handle and its state handler.
pub(crate) struct Shared {
    state: Mutex<PageState>,
    version: watch::Sender<u64>,
    /// Keyboard modifiers held and the pointer position (`input/`).
    pub(crate) input: Mutex<InputState>,
    /// Whether `WebMCP.enable` was sent (`webmcp.rs`); out-of-process frames attached later
    /// get it too.
    pub(crate) webmcp_enabled: std::sync::atomic::AtomicBool,
    /// Moves with the tool list's own version (`webmcp.rs`).
    webmcp_version: watch::Sender<u64>,
}

impl Shared {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(PageState::default()),
            version: watch::channel(0).0,
            input: Mutex::new(InputState::default()),
            webmcp_enabled: std::sync::atomic::AtomicBool::new(false),
            webmcp_version: watch::channel(0).0,
        })
    }

    fn update<R>(&self, f: impl FnOnce(&mut PageState) -> R) -> R {
        let (res, tools) = {
            let mut state = lock(&self.state);
            let before = state.webmcp.version;
            let res = f(&mut state);
            (
                res,
                (state.webmcp.version != before).then_some(state.webmcp.version),
            )
        };
        if let Some(version) = tools {
            self.webmcp_version.send_replace(version);
        }
        self.version.send_modify(|v| *v += 1);
        res
    }

    /// Whether a `Page.frameNavigated` of `frame_id` has been recorded (lifecycle events alone
    /// know the loader, not the URL).
    pub(crate) fn has_navigated(&self, frame_id: &str) -> bool {
        lock(&self.state).has_navigated(frame_id)
    }

    pub(crate) fn mark_closed(&self, reason: &str) {
        self.update(|state| state.mark_closed(reason));
    }

    pub(crate) fn mark_crashed(&self) {
        self.update(PageState::mark_crashed);
    }

    /// Applies one event of `session` (the page's own session or a child frame's) through the
    /// reducer, and wakes the waiters when it moved the state.
    pub(crate) fn handle_event(&self, session: Option<&Arc<str>>, method: &str, params: &RawValue) {
        let (moved, tools) = {
            let mut state = lock(&self.state);
            let before = state.webmcp.version;
            let moved = state.apply(session, method, params, Instant::now());
            (
                moved,
                (state.webmcp.version != before).then_some(state.webmcp.version),
            )
        };
        if let Some(version) = tools {
            self.webmcp_version.send_replace(version);
        }
        if moved {
            self.version.send_modify(|v| *v += 1);
        }
    }

    /// Records the document `frame` committed (a frame of `Page.getFrameTree` seeded at
    /// attach); `restored`: it came from the back/forward cache.
    pub(crate) fn frame_navigated(
        &self,
        session: Option<&Arc<str>>,
        frame: cdp_page::Frame,
        restored: bool,
    ) {
        self.update(|s| s.frame_navigated(session, frame, restored, Instant::now()));
    }
}

/// A tab. Cheap to clone; clones share the tab.
#[derive(Clone)]
pub struct Page {
    pub(crate) session: Session,
    pub(crate) target_id: Arc<str>,
    pub(crate) shared: Arc<Shared>,
    /// The browser-wide ref table (`refs`), shared by every page of the browser.
    pub(crate) refs: Arc<crate::refs::RefTable>,
    /// The id of the [`crate::BrowserContext`] chromate made that the page lives in, if any.
    pub(crate) context: Option<Arc<str>>,
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("target_id", &self.target_id)
            .finish()
    }
}

impl Page {
    /// The page's CDP session, for typed or raw commands of your own.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The target id of the tab.
    pub fn target_id(&self) -> &str {
        &self.target_id
    }

    /// The main frame's current URL.
    pub fn url(&self) -> String {
        let state = lock(&self.shared.state);
        state.main().map(|f| f.url.clone()).unwrap_or_default()
    }

    /// The main frame's id, once known.
    pub fn main_frame_id(&self) -> Option<String> {
        lock(&self.shared.state).main_frame.clone()
    }

    /// The loader id of the main frame's current document.
    pub fn document_id(&self) -> Option<String> {
        let state = lock(&self.shared.state);
        state.main().and_then(|f| f.loader_id.clone())
    }

    /// The loader id of `frame_id`'s current document, if the frame is known.
    pub(crate) fn frame_loader_id(&self, frame_id: &str) -> Option<String> {
        lock(&self.shared.state)
            .frames
            .get(frame_id)
            .and_then(|f| f.loader_id.clone())
    }

    /// Every frame of the page, the main frame first.
    pub fn frames(&self) -> Vec<FrameInfo> {
        let state = lock(&self.shared.state);
        let mut res: Vec<FrameInfo> = state
            .frames
            .iter()
            .map(|(id, f)| FrameInfo {
                id: id.clone(),
                parent_id: f.parent_id.clone(),
                url: f.url.clone(),
                name: f.name.clone(),
            })
            .collect();
        res.sort_by_key(|f| (f.parent_id.is_some(), f.id.clone()));
        res
    }

    /// Whether the tab's renderer crashed (its process is gone): the page is closed for
    /// chromate, though the browser and its other tabs run on.
    pub fn is_crashed(&self) -> bool {
        lock(&self.shared.state).crashed
    }

    /// Whether the tab has been closed or crashed.
    pub fn is_closed(&self) -> bool {
        lock(&self.shared.state).closed.is_some() || self.session.conn.is_closed()
    }
}
