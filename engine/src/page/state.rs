//! The page-state reducer: what a page's CDP events say about its frames, the lifecycle of each
//! frame's document, its execution contexts, the open dialog, the main document's status and
//! its network activity.
//!
//! [`PageState::apply`] is a pure function of the state, one event and the time it is applied
//! at: it decodes only the events that move page state and ignores the rest (and any event
//! whose parameters do not decode). The page's state handler (`Shared::handle_event` in
//! `mod.rs`) calls it on the transport's reader task; `tests.rs` replays events recorded from
//! Chromium (`testdata/`) through it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::Value;

use super::dialog::Dialog;
use super::isolated::WORLD_NAME;
use crate::cdp::{decode_event, network, page as cdp_page, runtime};
use crate::error::Error;

/// A lifecycle point a frame's document reached: `commit` (recorded at `Page.frameNavigated`,
/// or a lifecycle event of that name) and the `Page.lifecycleEvent` names the waits read. Other
/// event names (`init`, `firstPaint`, …) are not kept: nothing asks for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Lifecycle {
    Commit,
    DomContentLoaded,
    Load,
    NetworkAlmostIdle,
    NetworkIdle,
}

impl Lifecycle {
    /// The point a `Page.lifecycleEvent` name stands for, if it is one chromate keeps.
    pub(super) fn from_event(name: &str) -> Option<Lifecycle> {
        match name {
            "commit" => Some(Lifecycle::Commit),
            "DOMContentLoaded" => Some(Lifecycle::DomContentLoaded),
            "load" => Some(Lifecycle::Load),
            "networkAlmostIdle" => Some(Lifecycle::NetworkAlmostIdle),
            "networkIdle" => Some(Lifecycle::NetworkIdle),
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct FrameState {
    pub(super) parent_id: Option<String>,
    pub(super) url: String,
    pub(super) name: String,
    pub(super) loader_id: Option<String>,
    pub(super) lifecycle: HashSet<Lifecycle>,
    /// When the current document fired `load` (as chromate saw it).
    pub(super) loaded_at: Option<Instant>,
    /// The CDP session that owns the frame (`None` = the page session).
    pub(super) session: Option<Arc<str>>,
}

#[derive(Debug, Clone)]
pub(super) struct ContextInfo {
    pub(super) frame_id: String,
    pub(super) isolated: bool,
    pub(super) session: Option<Arc<str>>,
}

#[derive(Debug, Default)]
pub(crate) struct PageState {
    pub(super) main_frame: Option<String>,
    pub(super) frames: HashMap<String, FrameState>,
    pub(super) contexts: HashMap<(Option<Arc<str>>, i64), ContextInfo>,
    pub(super) dialog: Option<Dialog>,
    /// How many dialogs have opened: names the open one, so that an answer clears only the
    /// dialog it answered, never one the page opened since.
    pub(super) dialogs_opened: u64,
    /// When the last dialog closed.
    pub(super) dialog_closed_at: Option<Instant>,
    /// How many dialogs in a row opened within [`DIALOG_REOPEN`] of the previous one's close:
    /// a page that reopens its dialog as soon as it is answered traps the tab.
    pub(super) dialog_reopens: u32,
    /// Main-document HTTP status by loader id (the last few only).
    pub(super) doc_status: Vec<(String, u16)>,
    /// A navigation's failure reported by `Page.frameRequestedNavigation`-less paths: loader id
    /// → net error (from `Network.loadingFailed` of the document).
    pub(super) doc_failed: Vec<(String, String)>,
    /// Cross-document navigations as they start (`Page.frameStartedNavigating`), the last few:
    /// frame id, loader id, URL. A navigation wait follows its frame to a newer one (the page
    /// navigated itself while loading).
    pub(super) started: Vec<(String, String, String)>,
    pub(crate) closed: Option<String>,
    /// The tab's renderer process is gone (`Inspector.targetCrashed`, `Target.targetCrashed`):
    /// the page is closed for chromate, and calls on it fail [`Error::PageCrashed`].
    pub(crate) crashed: bool,
    pub(super) title: String,
    /// Main-frame navigation marks for the click and Enter fences (`actions/`).
    pub(super) nav: NavMark,
    /// The page's network activity, for `networkidle`.
    pub(super) network: NetworkActivity,
    /// The tools the page offers (WebMCP, `webmcp.rs`).
    pub(crate) webmcp: super::webmcp::WebMcpTools,
}

/// A response's `Content-Length`, when it has one.
fn content_length(headers: &Value) -> Option<u64> {
    headers.as_object()?.iter().find_map(|(name, value)| {
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.as_str()?.trim().parse::<u64>().ok())
            .flatten()
    })
}

/// A dialog that opens this soon after the previous one closed counts as reopened.
pub(crate) const DIALOG_REOPEN: Duration = Duration::from_secs(1);

/// How long the network must be quiet, after `load`, for `networkidle` (docs/tools.md#browser_wait--wait-for-condition).
const NETWORK_QUIET: Duration = Duration::from_millis(500);

/// At most this many requests are tracked as in flight; beyond it the oldest is forgotten, so
/// requests whose end never comes cannot grow the set without bound.
const MAX_IN_FLIGHT: usize = 1024;

/// A request in a page: `(session, request id)`.
type RequestKey = (Option<Arc<str>>, String);

/// A request in flight: when it started and the document it was made for (its loader id;
/// empty for a worker's).
#[derive(Debug)]
struct Flight {
    at: Instant,
    loader: String,
}

/// Requests in flight in a page and its frames' sessions, and when that last changed. Chrome's
/// own `networkIdle` lifecycle event fires once per document, so it says nothing about a fetch
/// a script starts later; this does.
///
/// Only the documents the page shows count: a request is attributed to its document by the
/// loader id of its `Network.requestWillBeSent` (its other events carry only the request id),
/// and once a frame shows another document, or is gone, the requests of the one it showed
/// before are no longer in flight here, whether Chromium reports their end (a fetch cut off by
/// the navigation fails late, a `pagehide` beacon starts after the commit) or not.
#[derive(Debug, Default)]
pub(super) struct NetworkActivity {
    /// `(session, request id)` → the request.
    in_flight: HashMap<RequestKey, Flight>,
    /// Loader ids of documents replaced in their frame (the last few): their requests are not
    /// the page's activity any more.
    replaced: Vec<String>,
    /// When a request last started or ended (`None`: none seen yet).
    changed_at: Option<Instant>,
    /// Fetches in flight whose response said how long its body is: `(expected, received)`
    /// bytes. Chromium reports no `loadingFinished` for a fetch whose body the page never
    /// reads, so such a fetch ends here once its whole body has arrived.
    bodies: HashMap<RequestKey, (u64, u64)>,
}

impl NetworkActivity {
    /// A request of the document `loader` started; returns whether it counts (its document is
    /// not one already replaced).
    fn started(
        &mut self,
        session: Option<&Arc<str>>,
        request_id: String,
        loader: String,
        now: Instant,
    ) -> bool {
        if self.replaced.contains(&loader) {
            return false;
        }
        if self.in_flight.len() >= MAX_IN_FLIGHT {
            let oldest = self
                .in_flight
                .iter()
                .min_by_key(|(_, flight)| flight.at)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                self.in_flight.remove(&oldest);
            }
        }
        // A redirect reuses the request id: it stays one request in flight.
        self.in_flight
            .entry((session.cloned(), request_id))
            .or_insert(Flight { at: now, loader });
        self.changed_at = Some(now);
        true
    }

    /// A frame's document `loader` was replaced by another, or its frame is gone: its requests
    /// in flight are dropped, and those it is reported to start later are not counted.
    fn document_replaced(&mut self, loader: &str, now: Instant) {
        if loader.is_empty() {
            return;
        }
        if !self.replaced.iter().any(|l| l == loader) {
            push_bounded(&mut self.replaced, loader.to_owned());
        }
        let before = self.in_flight.len();
        self.in_flight.retain(|_, flight| flight.loader != loader);
        self.bodies
            .retain(|key, _| self.in_flight.contains_key(key));
        if self.in_flight.len() != before {
            self.changed_at = Some(now);
        }
    }

    /// A frame shows the document `loader` (again: one restored from the back/forward cache
    /// was replaced before): its requests count.
    fn document_shown(&mut self, loader: &str) {
        self.replaced.retain(|l| l != loader);
    }

    /// A new main document committed: requests that started before its own request (its id is
    /// the loader id) belonged to the documents it replaced, and their ends may never be
    /// reported. Playwright drops them at commit likewise.
    fn document_committed(&mut self, loader_id: &str, now: Instant) {
        let since = self
            .in_flight
            .iter()
            .find(|((_, id), _)| id == loader_id)
            .map(|(_, flight)| flight.at);
        let before = self.in_flight.len();
        match since {
            Some(since) => self.in_flight.retain(|_, flight| flight.at >= since),
            None => self.in_flight.clear(),
        }
        self.bodies
            .retain(|key, _| self.in_flight.contains_key(key));
        if self.in_flight.len() != before {
            self.changed_at = Some(now);
        }
    }

    fn ended(&mut self, session: Option<&Arc<str>>, request_id: &str, now: Instant) {
        let key = (session.cloned(), request_id.to_owned());
        self.bodies.remove(&key);
        if self.in_flight.remove(&key).is_some() {
            self.changed_at = Some(now);
        }
    }

    /// A fetch's response arrived, announcing a body of `expected` bytes (`Content-Length`).
    fn fetch_answered(
        &mut self,
        session: Option<&Arc<str>>,
        request_id: &str,
        expected: u64,
        now: Instant,
    ) {
        let key = (session.cloned(), request_id.to_owned());
        if !self.in_flight.contains_key(&key) {
            return;
        }
        if expected == 0 {
            self.ended(session, request_id, now);
        } else if self.bodies.len() < MAX_IN_FLIGHT {
            self.bodies.insert(key, (expected, 0));
        }
    }

    /// `bytes` more of a request's body arrived; a fetch whose whole announced body is in has
    /// ended, whether or not the page reads it.
    fn body_received(
        &mut self,
        session: Option<&Arc<str>>,
        request_id: &str,
        bytes: u64,
        now: Instant,
    ) {
        let key = (session.cloned(), request_id.to_owned());
        let Some((expected, received)) = self.bodies.get_mut(&key) else {
            return;
        };
        *received = received.saturating_add(bytes);
        if *received >= *expected {
            self.ended(session, request_id, now);
        }
    }

    /// How many requests are in flight.
    #[cfg(test)]
    pub(super) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// How long no request has been in flight at `now`, counted from the last start or end;
    /// `Duration::MAX` if none was ever seen, `None` while one is in flight.
    pub(super) fn quiet_for(&self, now: Instant) -> Option<Duration> {
        if !self.in_flight.is_empty() {
            return None;
        }
        Some(
            self.changed_at
                .map_or(Duration::MAX, |at| now.saturating_duration_since(at)),
        )
    }

    /// Whether the network is quiet enough for `networkidle` at `now`, given when `load` fired
    /// (if chromate saw it): `Ok(())` now, `Err(Some(at))` at `at` unless a request starts
    /// first, `Err(None)` not before the requests in flight end.
    pub(super) fn idle(
        &self,
        loaded_at: Option<Instant>,
        now: Instant,
    ) -> Result<(), Option<Instant>> {
        if !self.in_flight.is_empty() {
            return Err(None);
        }
        let Some(quiet_since) = self.changed_at.max(loaded_at) else {
            return Ok(());
        };
        let idle_at = quiet_since + NETWORK_QUIET;
        if now >= idle_at {
            Ok(())
        } else {
            Err(Some(idle_at))
        }
    }
}

/// Counters of main-frame navigation activity; a fence compares two marks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NavMark {
    /// Cross-document navigations requested or started in the current tab.
    pub(crate) requests: u64,
    /// `Page.frameStoppedLoading` of the main frame.
    pub(crate) stopped: u64,
    /// Same-document navigations of the main frame.
    pub(crate) same_document: u64,
    /// Documents the main frame committed.
    pub(crate) documents: u64,
    /// The main frame's current loader id.
    pub(crate) loader_id: Option<String>,
}

impl PageState {
    /// Applies one event of `session` (the page's own session, `None`, or a child frame's) at
    /// `now`. Returns whether the event is one that moves page state (then waiters look again).
    pub(crate) fn apply(
        &mut self,
        session: Option<&Arc<str>>,
        method: &str,
        params: &RawValue,
        now: Instant,
    ) -> bool {
        // Only the events that move page state are decoded; everything else costs a match. An
        // event whose parameters do not decode is ignored.
        if method.starts_with("WebMCP.") {
            return self.webmcp.apply(session, method, params);
        }
        match method {
            "Page.frameAttached" => {
                let Some(event) = decode_event::<cdp_page::EventFrameAttached>(params) else {
                    return false;
                };
                let frame = self.frames.entry(event.frame_id.0).or_default();
                frame.parent_id = Some(event.parent_frame_id.0);
                frame.session = session.cloned();
            }
            "Page.frameNavigated" => {
                let Some(event) = decode_event::<cdp_page::EventFrameNavigated>(params) else {
                    return false;
                };
                // A document restored from the back/forward cache was loaded long ago and
                // fires no lifecycle events again: it has reached every load state.
                let restored =
                    event.r#type == Some(cdp_page::NavigationType::BackForwardCacheRestore);
                self.frame_navigated(session, event.frame, restored, now);
            }
            "Page.frameRequestedNavigation" => {
                let Some(event) = decode_event::<cdp_page::EventFrameRequestedNavigation>(params)
                else {
                    return false;
                };
                use cdp_page::ClientNavigationDisposition as Disposition;
                let current_tab = matches!(event.disposition, None | Some(Disposition::CurrentTab));
                // The event names no navigation type: a URL that differs from the current one
                // only after its `#` stays in the document.
                let url = event.url;
                self.count_navigation_request(session, &event.frame_id.0, current_tab, |current| {
                    url.contains('#') && strip_fragment(&url) == strip_fragment(current)
                });
            }
            "Page.frameStartedNavigating" => {
                let Some(event) = decode_event::<cdp_page::EventFrameStartedNavigating>(params)
                else {
                    return false;
                };
                use cdp_page::EventFrameStartedNavigatingNavigationType as Type;
                let same_document = matches!(
                    event.navigation_type,
                    Type::SameDocument | Type::HistorySameDocument
                );
                if !same_document {
                    let started = (
                        event.frame_id.0.clone(),
                        event.loader_id.0.clone(),
                        event.url.clone(),
                    );
                    push_bounded(&mut self.started, started);
                }
                self.count_navigation_request(session, &event.frame_id.0, true, |_| same_document);
            }
            "Page.frameStoppedLoading" => {
                let Some(event) = decode_event::<cdp_page::EventFrameStoppedLoading>(params) else {
                    return false;
                };
                if session.is_none() && self.main_frame.as_deref() == Some(event.frame_id.as_str())
                {
                    self.nav.stopped += 1;
                }
            }
            "Page.navigatedWithinDocument" => {
                let Some(event) = decode_event::<cdp_page::EventNavigatedWithinDocument>(params)
                else {
                    return false;
                };
                if session.is_none() && self.main_frame.as_deref() == Some(event.frame_id.as_str())
                {
                    self.nav.same_document += 1;
                }
                if let Some(frame) = self.frames.get_mut(event.frame_id.as_str()) {
                    frame.url = event.url;
                }
            }
            "Page.frameDetached" => {
                let Some(event) = decode_event::<cdp_page::EventFrameDetached>(params) else {
                    return false;
                };
                // A frame swapped into another process is not gone; its new session reports it.
                if event.reason == Some(cdp_page::EventFrameDetachedReason::Swap) {
                    return false;
                }
                self.webmcp.forget_frame(event.frame_id.as_str());
                if let Some(gone) = self.frames.remove(event.frame_id.as_str()) {
                    if let Some(loader) = gone.loader_id {
                        self.network.document_replaced(&loader, now);
                    }
                }
            }
            "Page.lifecycleEvent" => {
                let Some(event) = decode_event::<cdp_page::EventLifecycleEvent>(params) else {
                    return false;
                };
                let loader_id = event.loader_id.0;
                let frame = self.frames.entry(event.frame_id.0).or_default();
                if event.name == "init" || frame.loader_id.as_deref() != Some(&loader_id) {
                    if frame.loader_id.as_deref() != Some(&loader_id) {
                        frame.lifecycle.clear();
                        frame.loaded_at = None;
                        // The new document's `init` comes before its `Page.frameNavigated`.
                        if let Some(old) = &frame.loader_id {
                            self.network.document_replaced(old, now);
                        }
                        self.network.document_shown(&loader_id);
                    }
                    frame.loader_id = Some(loader_id);
                }
                if event.name == "load" && frame.loaded_at.is_none() {
                    frame.loaded_at = Some(now);
                }
                frame.lifecycle.extend(Lifecycle::from_event(&event.name));
            }
            "Page.javascriptDialogOpening" => {
                let Some(event) = decode_event::<cdp_page::EventJavascriptDialogOpening>(params)
                else {
                    return false;
                };
                self.dialog = Some(Dialog {
                    kind: event.r#type.as_str().to_owned(),
                    message: event.message,
                    default_prompt: event.default_prompt,
                });
                self.dialogs_opened += 1;
                let reopened = self
                    .dialog_closed_at
                    .is_some_and(|closed| now.saturating_duration_since(closed) <= DIALOG_REOPEN);
                self.dialog_reopens = if reopened { self.dialog_reopens + 1 } else { 0 };
            }
            "Page.javascriptDialogClosed" => {
                self.dialog = None;
                self.dialog_closed_at = Some(now);
            }
            "Runtime.executionContextCreated" => {
                let Some(event) = decode_event::<runtime::EventExecutionContextCreated>(params)
                else {
                    return false;
                };
                let context = event.context;
                // `auxData` is an untyped object in the protocol.
                let Some(aux) = context.aux_data else {
                    return false;
                };
                let Some(frame_id) = aux.get("frameId").and_then(Value::as_str) else {
                    return false;
                };
                let isolated = context.name == WORLD_NAME;
                if !isolated && aux.get("isDefault").and_then(Value::as_bool) != Some(true) {
                    return false;
                }
                self.contexts.insert(
                    (session.cloned(), context.id.0),
                    ContextInfo {
                        frame_id: frame_id.to_owned(),
                        isolated,
                        session: session.cloned(),
                    },
                );
            }
            "Runtime.executionContextDestroyed" => {
                let Some(event) = decode_event::<runtime::EventExecutionContextDestroyed>(params)
                else {
                    return false;
                };
                self.contexts
                    .remove(&(session.cloned(), event.execution_context_id.0));
            }
            "Runtime.executionContextsCleared" => {
                self.contexts
                    .retain(|(owner, _), _| owner.as_ref() != session);
            }
            "Network.responseReceived" => {
                let Some(event) = decode_event::<network::EventResponseReceived>(params) else {
                    return false;
                };
                let mut moved = false;
                if event.r#type == network::ResourceType::Fetch {
                    if let Some(expected) = content_length(&event.response.headers) {
                        self.network
                            .fetch_answered(session, &event.request_id.0, expected, now);
                        moved = true;
                    }
                }
                if event.r#type == network::ResourceType::Document {
                    // Saturates like the float cast it replaces; real statuses fit.
                    let status = event.response.status.clamp(0, i64::from(u16::MAX)) as u16;
                    push_bounded(&mut self.doc_status, (event.loader_id.0, status));
                    moved = true;
                }
                return moved;
            }
            "Network.requestWillBeSent" => {
                let Some(event) = decode_event::<network::EventRequestWillBeSent>(params) else {
                    return false;
                };
                // The browser fetches the favicon after `load` on its own, and a navigation can
                // cut it off without an end ever being reported; Playwright leaves it out of
                // network idle too.
                let favicon = event.r#type == Some(network::ResourceType::Other)
                    && strip_fragment(&event.request.url)
                        .split('?')
                        .next()
                        .is_some_and(|path| path.ends_with("/favicon.ico"));
                if favicon {
                    return false;
                }
                // A request of a document already replaced (reported late) is not counted.
                let loader = event.loader_id.0;
                return self
                    .network
                    .started(session, event.request_id.0, loader, now);
            }
            "Network.loadingFinished" => {
                let Some(event) = decode_event::<network::EventLoadingFinished>(params) else {
                    return false;
                };
                self.network.ended(session, &event.request_id.0, now);
            }
            "Network.dataReceived" => {
                let Some(event) = decode_event::<network::EventDataReceived>(params) else {
                    return false;
                };
                // The wire bytes (what `Content-Length` counts) when Chromium reports them, else
                // the decoded ones.
                let bytes = if event.encoded_data_length > 0 {
                    event.encoded_data_length
                } else {
                    event.data_length
                };
                let bytes = u64::try_from(bytes).unwrap_or(0);
                self.network
                    .body_received(session, &event.request_id.0, bytes, now);
            }
            "Network.loadingFailed" => {
                let Some(event) = decode_event::<network::EventLoadingFailed>(params) else {
                    return false;
                };
                self.network.ended(session, &event.request_id.0, now);
                // For documents the request id is the loader id.
                if event.r#type == network::ResourceType::Document {
                    push_bounded(&mut self.doc_failed, (event.request_id.0, event.error_text))
                }
            }
            "Inspector.targetCrashed" => self.mark_crashed(),
            _ => return false,
        }
        true
    }

    /// Records the answer to the dialog that was the `serial`th to open, at `now`: it is
    /// closed, unless the page opened a newer one meanwhile (its `Page.javascriptDialogClosed`
    /// and the next `Page.javascriptDialogOpening` can arrive before the answer's reply is
    /// read), which stays open.
    pub(crate) fn dialog_answered(&mut self, serial: u64, now: Instant) {
        if self.dialogs_opened == serial && self.dialog.is_some() {
            self.dialog = None;
            self.dialog_closed_at = Some(now);
        }
    }

    /// Records that the tab's renderer crashed: the page is gone.
    pub(crate) fn mark_crashed(&mut self) {
        self.crashed = true;
        self.mark_closed("the page crashed");
    }

    /// The error of a command on a page that is gone, if it is: [`Error::PageCrashed`] with the
    /// URL it showed when its renderer crashed, else [`Error::ConnectionClosed`] with why it
    /// closed.
    pub(crate) fn gone_error(&self) -> Option<Error> {
        if self.crashed {
            let url = self
                .main()
                .map(|frame| frame.url.clone())
                .unwrap_or_default();
            return Some(Error::PageCrashed { url });
        }
        self.closed.as_ref().map(|reason| Error::ConnectionClosed {
            reason: reason.clone(),
        })
    }

    /// Records that the page is gone, keeping the first reason.
    pub(crate) fn mark_closed(&mut self, reason: &str) {
        if self.closed.is_none() {
            self.closed = Some(reason.to_string());
        }
    }

    /// Whether a `Page.frameNavigated` of `frame_id` has been recorded (lifecycle events alone
    /// know the loader, not the URL).
    pub(crate) fn has_navigated(&self, frame_id: &str) -> bool {
        self.frames.get(frame_id).is_some_and(|f| !f.url.is_empty())
    }

    /// `frame_id` and every frame inside it, as the frames' parent links say.
    fn frame_and_descendants(&self, frame_id: &str) -> Vec<String> {
        let mut found = vec![frame_id.to_owned()];
        for id in self.frames.keys() {
            let mut current = self.frames.get(id).and_then(|f| f.parent_id.as_deref());
            // Bounded: a cycle in the links (which Chromium never sends) cannot loop forever.
            for _ in 0..self.frames.len() {
                match current {
                    Some(parent) if parent == frame_id => {
                        found.push(id.clone());
                        break;
                    }
                    Some(parent) => {
                        current = self.frames.get(parent).and_then(|f| f.parent_id.as_deref());
                    }
                    None => break,
                }
            }
        }
        found
    }

    /// Records the document `frame` committed (`Page.frameNavigated`, or a frame of
    /// `Page.getFrameTree` seeded at attach) at `now`; `restored`: it came from the
    /// back/forward cache.
    pub(crate) fn frame_navigated(
        &mut self,
        session: Option<&Arc<str>>,
        frame: cdp_page::Frame,
        restored: bool,
        now: Instant,
    ) {
        if frame.parent_id.is_none() && session.is_none() {
            self.main_frame = Some(frame.id.0.clone());
            self.network
                .document_committed(frame.loader_id.as_str(), now);
        }
        // A committed document replaces the frame's old one, which takes its tools and those of
        // the frames inside it along, unannounced (WebMCP, `webmcp.rs`). Its lifecycle `init`
        // may have brought the new loader already, so this does not wait for a loader change.
        for gone in self.frame_and_descendants(&frame.id.0) {
            self.webmcp.forget_frame(&gone);
        }
        let state = self.frames.entry(frame.id.0).or_default();
        state.parent_id = frame.parent_id.map(|id| id.0);
        state.url = frame.url + frame.url_fragment.as_deref().unwrap_or("");
        state.name = frame.name.unwrap_or_default();
        state.session = session.cloned();
        if state.loader_id.as_deref() != Some(frame.loader_id.as_str()) {
            if let Some(old) = &state.loader_id {
                self.network.document_replaced(old, now);
            }
            self.network.document_shown(&frame.loader_id.0);
            state.loader_id = Some(frame.loader_id.0);
            state.lifecycle.clear();
            state.loaded_at = None;
            if state.parent_id.is_none() && session.is_none() {
                self.nav.documents += 1;
            }
        }
        state.lifecycle.insert(Lifecycle::Commit);
        if restored {
            state.loaded_at.get_or_insert(now);
            state.lifecycle.extend([
                Lifecycle::DomContentLoaded,
                Lifecycle::Load,
                Lifecycle::NetworkAlmostIdle,
                Lifecycle::NetworkIdle,
            ]);
        }
    }

    /// Counts a navigation of the main frame requested or started in its own tab, unless
    /// `same_document` says (given the frame's current URL) it stays in the document.
    fn count_navigation_request(
        &mut self,
        session: Option<&Arc<str>>,
        frame_id: &str,
        current_tab: bool,
        same_document: impl FnOnce(&str) -> bool,
    ) {
        if session.is_some() || self.main_frame.as_deref() != Some(frame_id) {
            return;
        }
        let current = self
            .frames
            .get(frame_id)
            .map(|f| f.url.as_str())
            .unwrap_or("");
        if current_tab && !same_document(current) {
            self.nav.requests += 1;
        }
    }

    /// The main frame's state, once known.
    pub(super) fn main(&self) -> Option<&FrameState> {
        self.main_frame.as_ref().and_then(|id| self.frames.get(id))
    }

    /// The newest cross-document navigation of `frame_id` that started after `loader_id`'s, if
    /// the frame has moved on (`None` when `loader_id`'s start was not seen).
    pub(super) fn newer_navigation(
        &self,
        frame_id: &str,
        loader_id: &str,
    ) -> Option<(String, String)> {
        let ours = self
            .started
            .iter()
            .position(|(frame, loader, _)| frame == frame_id && loader == loader_id)?;
        self.started[ours + 1..]
            .iter()
            .rev()
            .find(|(frame, _, _)| frame == frame_id)
            .map(|(_, loader, url)| (loader.clone(), url.clone()))
    }
}

fn push_bounded<T>(list: &mut Vec<T>, item: T) {
    if list.len() >= 16 {
        list.remove(0);
    }
    list.push(item);
}

/// `url` without its fragment.
pub(super) fn strip_fragment(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

#[cfg(test)]
mod tests;
