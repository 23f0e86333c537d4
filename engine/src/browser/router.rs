//! The one event router: where the events of a page's session, of an out-of-process frame's
//! session and of a dedicated worker's session go. Each runs on the transport's reader task
//! (a state handler), so it must not block: the page's state (under the session the event came
//! from), the tab's journal (a frame's or a worker's console and network belong to its tab),
//! the interceptor (its paused requests), and, on a page's own session, the set-up of the
//! frames, workers and popups that attach through it.

use std::sync::{Arc, Weak};

use serde_json::value::RawValue;

use super::attach::on_child_attached;
use super::Inner;
use crate::intercept::Interceptor;
use crate::page::Shared;
use crate::session::Session;
use crate::transport::Connection;

/// Where a page's console and network go: its journal, under its tab's target id; and the
/// chromate-made browser context it belongs to, if any.
#[derive(Clone)]
pub(super) struct Capture {
    pub(super) journal: crate::journal::Journal,
    pub(super) page: Arc<str>,
    pub(super) context: Option<Arc<str>>,
}

/// Where one session's events go.
pub(super) struct Router {
    /// The page state the events move, and the session they are keyed by there (`None`: the
    /// page's own session).
    state: Option<(Arc<Shared>, Option<Arc<str>>)>,
    capture: Capture,
    /// The interceptor and the session its paused requests are continued on.
    intercept: Option<(Arc<Interceptor>, Session)>,
    /// On a page's own session: the connection and browser its children are attached with.
    children: Option<(Connection, Weak<Inner>)>,
}

impl Router {
    /// A page's own session: its state, its journal, interception, and its children.
    pub(super) fn page(
        session: &Session,
        shared: &Arc<Shared>,
        browser: &Weak<Inner>,
        capture: Capture,
    ) -> Self {
        let intercept = browser.upgrade().map(|inner| Arc::clone(&inner.intercept));
        Self {
            state: Some((Arc::clone(shared), None)),
            capture,
            intercept: intercept.map(|intercept| (intercept, session.clone())),
            children: Some((session.conn.clone(), browser.clone())),
        }
    }

    /// An out-of-process frame's session: its page's state under the frame's own session id,
    /// its tab's journal, interception.
    pub(super) fn frame(
        session: &Session,
        shared: &Arc<Shared>,
        intercept: Option<Arc<Interceptor>>,
        capture: Capture,
    ) -> Self {
        Self {
            state: Some((Arc::clone(shared), session.id().map(Arc::from))),
            capture,
            intercept: intercept.map(|intercept| (intercept, session.clone())),
            children: None,
        }
    }

    /// A dedicated worker's session: its console, errors and fetches go to its tab's journal.
    pub(super) fn worker(capture: Capture) -> Self {
        Self {
            state: None,
            capture,
            intercept: None,
            children: None,
        }
    }

    /// Makes this the state handler of `session` (before its first event can arrive).
    pub(super) fn install(self, session: &Session) {
        let router = Arc::new(self);
        session.conn.set_handler(
            session.id().map(str::to_string),
            Arc::new(move |method: &str, params: &RawValue| router.route(method, params)),
        );
    }

    fn route(&self, method: &str, params: &RawValue) {
        if method == "Target.attachedToTarget" {
            if let (Some((conn, browser)), Some((shared, _))) = (&self.children, &self.state) {
                on_child_attached(conn, shared, browser, &self.capture, params);
            }
        }
        if let Some((shared, session)) = &self.state {
            shared.handle_event(session.as_ref(), method, params);
        }
        self.capture
            .journal
            .handle_event(&self.capture.page, method, params);
        if let Some((intercept, session)) = &self.intercept {
            intercept.on_event(session, &self.capture.journal, method, params);
        }
    }
}
