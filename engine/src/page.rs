//! `Page`: one tab — its frames, navigation with a chosen wait, evaluation, chromate's isolated
//! world, and JavaScript dialogs.
//!
//! The page's state (frames, lifecycle per loader, execution contexts, dialog, main-document
//! status) is kept current by a state handler that runs on the transport's reader task, so no
//! event is missed however fast a page loads; waiters are woken through a `watch` counter and
//! re-check the state. Waits are armed before the action that triggers them: lifecycle events
//! are recorded per loader id, so an event that arrives before the waiter looks is still there.
//! `networkidle` is chromate's own: `load`, then 500 ms without a request in flight in the page
//! or its frames, counted from the Network events (Chrome's `networkIdle` lifecycle event fires
//! once per document and misses fetches started later).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::watch;

use crate::cdp::{decode_event, network, page as cdp_page, runtime};
use crate::error::{Error, Result};
use crate::session::Session;
use crate::transport::lock;

/// chromate's isolated world name.
pub(crate) const WORLD_NAME: &str = "chromate";

/// What a navigation waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaitUntil {
    /// The new document is committed.
    Commit,
    /// `DOMContentLoaded` fired in the new document.
    DomContentLoaded,
    /// `load` fired in the new document.
    #[default]
    Load,
    /// `load` fired and the network has been idle for 500 ms.
    NetworkIdle,
}

impl WaitUntil {
    /// The contract's name of the state.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitUntil::Commit => "commit",
            WaitUntil::DomContentLoaded => "domcontentloaded",
            WaitUntil::Load => "load",
            WaitUntil::NetworkIdle => "networkidle",
        }
    }

    fn reached(self, lifecycle: &HashSet<Lifecycle>, committed: bool) -> bool {
        match self {
            WaitUntil::Commit => committed,
            WaitUntil::DomContentLoaded => lifecycle.contains(&Lifecycle::DomContentLoaded),
            WaitUntil::Load => lifecycle.contains(&Lifecycle::Load),
            // And the network quiet for 500 ms, which `wait_for_loader` checks with the page's
            // network activity.
            WaitUntil::NetworkIdle => lifecycle.contains(&Lifecycle::Load),
        }
    }
}

/// A lifecycle point a frame's document reached: `commit` (recorded at `Page.frameNavigated`,
/// or a lifecycle event of that name) and the `Page.lifecycleEvent` names the waits read. Other
/// event names (`init`, `firstPaint`, …) are not kept: nothing asks for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Lifecycle {
    Commit,
    DomContentLoaded,
    Load,
    NetworkAlmostIdle,
    NetworkIdle,
}

impl Lifecycle {
    /// The point a `Page.lifecycleEvent` name stands for, if it is one chromate keeps.
    fn from_event(name: &str) -> Option<Lifecycle> {
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

/// A JavaScript dialog that is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    /// The dialog's message.
    pub message: String,
    /// The default answer of a prompt.
    pub default_prompt: Option<String>,
}

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

/// The result of a navigation.
#[derive(Debug, Clone, PartialEq)]
pub struct NavigationResult {
    /// The URL the frame ended on.
    pub url: String,
    /// The main response's HTTP status, if the document came over HTTP.
    pub status: Option<u16>,
    /// The loader id of the new document (`None` for same-document navigations).
    pub loader_id: Option<String>,
}

#[derive(Debug, Default)]
struct FrameState {
    parent_id: Option<String>,
    url: String,
    name: String,
    loader_id: Option<String>,
    lifecycle: HashSet<Lifecycle>,
    /// When the current document fired `load` (as chromate saw it).
    loaded_at: Option<Instant>,
    /// The CDP session that owns the frame (`None` = the page session).
    session: Option<Arc<str>>,
}

#[derive(Debug, Clone)]
struct ContextInfo {
    frame_id: String,
    isolated: bool,
    session: Option<Arc<str>>,
}

#[derive(Debug, Default)]
pub(crate) struct PageState {
    main_frame: Option<String>,
    frames: HashMap<String, FrameState>,
    contexts: HashMap<(Option<Arc<str>>, i64), ContextInfo>,
    dialog: Option<Dialog>,
    /// Main-document HTTP status by loader id (the last few only).
    doc_status: Vec<(String, u16)>,
    /// A navigation's failure reported by `Page.frameRequestedNavigation`-less paths: loader id
    /// → net error (from `Network.loadingFailed` of the document).
    doc_failed: Vec<(String, String)>,
    /// Cross-document navigations as they start (`Page.frameStartedNavigating`), the last few:
    /// frame id, loader id, URL. A navigation wait follows its frame to a newer one (the page
    /// navigated itself while loading).
    started: Vec<(String, String, String)>,
    pub(crate) closed: Option<String>,
    title: String,
    /// Main-frame navigation marks for the click and Enter fences (`actions/`).
    nav: NavMark,
    /// The page's network activity, for `networkidle`.
    network: NetworkActivity,
}

/// A response's `Content-Length`, when it has one.
fn content_length(headers: &Value) -> Option<u64> {
    headers.as_object()?.iter().find_map(|(name, value)| {
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.as_str()?.trim().parse::<u64>().ok())
            .flatten()
    })
}

/// How long the network must be quiet, after `load`, for `networkidle` (§9.1).
const NETWORK_QUIET: Duration = Duration::from_millis(500);

/// At most this many requests are tracked as in flight; beyond it the oldest is forgotten, so
/// requests whose end never comes cannot grow the set without bound.
const MAX_IN_FLIGHT: usize = 1024;

/// A request in a page: `(session, request id)`.
type RequestKey = (Option<Arc<str>>, String);

/// Requests in flight in a page and its frames' sessions, and when that last changed. Chrome's
/// own `networkIdle` lifecycle event fires once per document, so it says nothing about a fetch
/// a script starts later; this does.
#[derive(Debug, Default)]
struct NetworkActivity {
    /// `(session, request id)` → when the request started.
    in_flight: HashMap<RequestKey, Instant>,
    /// When a request last started or ended (`None`: none seen yet).
    changed_at: Option<Instant>,
    /// Fetches in flight whose response said how long its body is: `(expected, received)`
    /// bytes. Chromium reports no `loadingFinished` for a fetch whose body the page never
    /// reads, so such a fetch ends here once its whole body has arrived.
    bodies: HashMap<RequestKey, (u64, u64)>,
}

impl NetworkActivity {
    fn started(&mut self, session: Option<&Arc<str>>, request_id: String) {
        let now = Instant::now();
        if self.in_flight.len() >= MAX_IN_FLIGHT {
            let oldest = self
                .in_flight
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                self.in_flight.remove(&oldest);
            }
        }
        // A redirect reuses the request id: it stays one request in flight.
        self.in_flight
            .entry((session.cloned(), request_id))
            .or_insert(now);
        self.changed_at = Some(now);
    }

    /// A new main document committed: requests that started before its own request (its id is
    /// the loader id) belonged to the documents it replaced, and their ends may never be
    /// reported. Playwright drops them at commit likewise.
    fn document_committed(&mut self, loader_id: &str) {
        let since = self
            .in_flight
            .iter()
            .find(|((_, id), _)| id == loader_id)
            .map(|(_, at)| *at);
        let before = self.in_flight.len();
        match since {
            Some(since) => self.in_flight.retain(|_, at| *at >= since),
            None => self.in_flight.clear(),
        }
        if self.in_flight.len() != before {
            self.changed_at = Some(Instant::now());
        }
    }

    fn ended(&mut self, session: Option<&Arc<str>>, request_id: &str) {
        let key = (session.cloned(), request_id.to_owned());
        self.bodies.remove(&key);
        if self.in_flight.remove(&key).is_some() {
            self.changed_at = Some(Instant::now());
        }
    }

    /// A fetch's response arrived, announcing a body of `expected` bytes (`Content-Length`).
    fn fetch_answered(&mut self, session: Option<&Arc<str>>, request_id: &str, expected: u64) {
        let key = (session.cloned(), request_id.to_owned());
        if !self.in_flight.contains_key(&key) {
            return;
        }
        if expected == 0 {
            self.ended(session, request_id);
        } else if self.bodies.len() < MAX_IN_FLIGHT {
            self.bodies.insert(key, (expected, 0));
        }
    }

    /// `bytes` more of a request's body arrived; a fetch whose whole announced body is in has
    /// ended, whether or not the page reads it.
    fn body_received(&mut self, session: Option<&Arc<str>>, request_id: &str, bytes: u64) {
        let key = (session.cloned(), request_id.to_owned());
        let Some((expected, received)) = self.bodies.get_mut(&key) else {
            return;
        };
        *received = received.saturating_add(bytes);
        if *received >= *expected {
            self.ended(session, request_id);
        }
    }

    /// How long no request has been in flight, counted from the last start or end;
    /// `Duration::MAX` if none was ever seen, `None` while one is in flight.
    fn quiet_for(&self) -> Option<Duration> {
        if !self.in_flight.is_empty() {
            return None;
        }
        Some(self.changed_at.map_or(Duration::MAX, |at| at.elapsed()))
    }

    /// Whether the network is quiet enough for `networkidle`, given when `load` fired (if
    /// chromate saw it): `Ok(())` now, `Err(Some(at))` at `at` unless a request starts first,
    /// `Err(None)` not before the requests in flight end.
    fn idle(&self, loaded_at: Option<Instant>) -> Result<(), Option<Instant>> {
        if !self.in_flight.is_empty() {
            return Err(None);
        }
        let Some(quiet_since) = self.changed_at.max(loaded_at) else {
            return Ok(());
        };
        let idle_at = quiet_since + NETWORK_QUIET;
        if Instant::now() >= idle_at {
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
    /// The main frame's current loader id.
    pub(crate) loader_id: Option<String>,
}

/// State shared between the page handle and its state handler.
pub(crate) struct Shared {
    state: Mutex<PageState>,
    version: watch::Sender<u64>,
    /// Keyboard modifiers held and the pointer position (`input/`).
    pub(crate) input: Mutex<crate::input::InputState>,
}

impl Shared {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(PageState::default()),
            version: watch::channel(0).0,
            input: Mutex::new(crate::input::InputState::default()),
        })
    }

    fn update<R>(&self, f: impl FnOnce(&mut PageState) -> R) -> R {
        let res = f(&mut lock(&self.state));
        self.version.send_modify(|v| *v += 1);
        res
    }

    /// Whether a `Page.frameNavigated` of `frame_id` has been recorded (lifecycle events alone
    /// know the loader, not the URL).
    pub(crate) fn has_navigated(&self, frame_id: &str) -> bool {
        lock(&self.state)
            .frames
            .get(frame_id)
            .is_some_and(|f| !f.url.is_empty())
    }

    pub(crate) fn mark_closed(&self, reason: &str) {
        self.update(|state| {
            if state.closed.is_none() {
                state.closed = Some(reason.to_string());
            }
        });
    }

    /// Applies one event of `session` (the page's own session or a child frame's).
    pub(crate) fn handle_event(&self, session: Option<&Arc<str>>, method: &str, params: &RawValue) {
        // Only the events that move page state are decoded; everything else costs a match. An
        // event whose parameters do not decode is ignored.
        match method {
            "Page.frameAttached" => {
                if let Some(event) = decode_event::<cdp_page::EventFrameAttached>(params) {
                    self.update(|s| {
                        let frame = s.frames.entry(event.frame_id.0).or_default();
                        frame.parent_id = Some(event.parent_frame_id.0);
                        frame.session = session.cloned();
                    });
                }
            }
            "Page.frameNavigated" => {
                if let Some(event) = decode_event::<cdp_page::EventFrameNavigated>(params) {
                    // A document restored from the back/forward cache was loaded long ago and
                    // fires no lifecycle events again: it has reached every load state.
                    let restored =
                        event.r#type == Some(cdp_page::NavigationType::BackForwardCacheRestore);
                    self.frame_navigated(session, event.frame, restored);
                }
            }
            "Page.frameRequestedNavigation" => {
                if let Some(event) = decode_event::<cdp_page::EventFrameRequestedNavigation>(params)
                {
                    use cdp_page::ClientNavigationDisposition as Disposition;
                    let current_tab =
                        matches!(event.disposition, None | Some(Disposition::CurrentTab));
                    // The event names no navigation type: a URL that differs from the current
                    // one only after its `#` stays in the document.
                    let url = event.url;
                    self.count_navigation_request(
                        session,
                        &event.frame_id.0,
                        current_tab,
                        |current| {
                            url.contains('#') && strip_fragment(&url) == strip_fragment(current)
                        },
                    );
                }
            }
            "Page.frameStartedNavigating" => {
                if let Some(event) = decode_event::<cdp_page::EventFrameStartedNavigating>(params) {
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
                        self.update(|s| push_bounded(&mut s.started, started));
                    }
                    self.count_navigation_request(session, &event.frame_id.0, true, |_| {
                        same_document
                    });
                }
            }
            "Page.frameStoppedLoading" => {
                if let Some(event) = decode_event::<cdp_page::EventFrameStoppedLoading>(params) {
                    self.update(|s| {
                        if session.is_none()
                            && s.main_frame.as_deref() == Some(event.frame_id.as_str())
                        {
                            s.nav.stopped += 1;
                        }
                    });
                }
            }
            "Page.navigatedWithinDocument" => {
                if let Some(event) = decode_event::<cdp_page::EventNavigatedWithinDocument>(params)
                {
                    self.update(|s| {
                        if session.is_none()
                            && s.main_frame.as_deref() == Some(event.frame_id.as_str())
                        {
                            s.nav.same_document += 1;
                        }
                        if let Some(frame) = s.frames.get_mut(event.frame_id.as_str()) {
                            frame.url = event.url;
                        }
                    });
                }
            }
            "Page.frameDetached" => {
                if let Some(event) = decode_event::<cdp_page::EventFrameDetached>(params) {
                    // A frame swapped into another process is not gone; its new session reports it.
                    if event.reason != Some(cdp_page::EventFrameDetachedReason::Swap) {
                        self.update(|s| {
                            s.frames.remove(event.frame_id.as_str());
                        });
                    }
                }
            }
            "Page.lifecycleEvent" => {
                if let Some(event) = decode_event::<cdp_page::EventLifecycleEvent>(params) {
                    let loader_id = event.loader_id.0;
                    self.update(|s| {
                        let frame = s.frames.entry(event.frame_id.0).or_default();
                        if event.name == "init" || frame.loader_id.as_deref() != Some(&loader_id) {
                            if frame.loader_id.as_deref() != Some(&loader_id) {
                                frame.lifecycle.clear();
                                frame.loaded_at = None;
                            }
                            frame.loader_id = Some(loader_id);
                        }
                        if event.name == "load" && frame.loaded_at.is_none() {
                            frame.loaded_at = Some(Instant::now());
                        }
                        frame.lifecycle.extend(Lifecycle::from_event(&event.name));
                    });
                }
            }
            "Page.javascriptDialogOpening" => {
                if let Some(event) = decode_event::<cdp_page::EventJavascriptDialogOpening>(params)
                {
                    self.update(|s| {
                        s.dialog = Some(Dialog {
                            kind: event.r#type.as_str().to_owned(),
                            message: event.message,
                            default_prompt: event.default_prompt,
                        })
                    });
                }
            }
            "Page.javascriptDialogClosed" => self.update(|s| s.dialog = None),
            "Runtime.executionContextCreated" => {
                if let Some(event) = decode_event::<runtime::EventExecutionContextCreated>(params) {
                    let context = event.context;
                    // `auxData` is an untyped object in the protocol.
                    let Some(aux) = context.aux_data else { return };
                    let Some(frame_id) = aux.get("frameId").and_then(Value::as_str) else {
                        return;
                    };
                    let isolated = context.name == WORLD_NAME;
                    if !isolated && aux.get("isDefault").and_then(Value::as_bool) != Some(true) {
                        return;
                    }
                    self.update(|s| {
                        s.contexts.insert(
                            (session.cloned(), context.id.0),
                            ContextInfo {
                                frame_id: frame_id.to_owned(),
                                isolated,
                                session: session.cloned(),
                            },
                        );
                    });
                }
            }
            "Runtime.executionContextDestroyed" => {
                if let Some(event) = decode_event::<runtime::EventExecutionContextDestroyed>(params)
                {
                    self.update(|s| {
                        s.contexts
                            .remove(&(session.cloned(), event.execution_context_id.0));
                    });
                }
            }
            "Runtime.executionContextsCleared" => self.update(|s| {
                s.contexts.retain(|(owner, _), _| owner.as_ref() != session);
            }),
            "Network.responseReceived" => {
                if let Some(event) = decode_event::<network::EventResponseReceived>(params) {
                    if event.r#type == network::ResourceType::Fetch {
                        if let Some(expected) = content_length(&event.response.headers) {
                            self.update(|s| {
                                s.network
                                    .fetch_answered(session, &event.request_id.0, expected)
                            });
                        }
                    }
                    if event.r#type == network::ResourceType::Document {
                        // Saturates like the float cast it replaces; real statuses fit.
                        let status = event.response.status.clamp(0, i64::from(u16::MAX)) as u16;
                        self.update(|s| {
                            push_bounded(&mut s.doc_status, (event.loader_id.0, status));
                        });
                    }
                }
            }
            "Network.requestWillBeSent" => {
                if let Some(event) = decode_event::<network::EventRequestWillBeSent>(params) {
                    // The browser fetches the favicon after `load` on its own, and a navigation
                    // can cut it off without an end ever being reported; Playwright leaves it
                    // out of network idle too.
                    let favicon = event.r#type == Some(network::ResourceType::Other)
                        && strip_fragment(&event.request.url)
                            .split('?')
                            .next()
                            .is_some_and(|path| path.ends_with("/favicon.ico"));
                    if !favicon {
                        self.update(|s| s.network.started(session, event.request_id.0));
                    }
                }
            }
            "Network.loadingFinished" => {
                if let Some(event) = decode_event::<network::EventLoadingFinished>(params) {
                    self.update(|s| s.network.ended(session, &event.request_id.0));
                }
            }
            "Network.dataReceived" => {
                if let Some(event) = decode_event::<network::EventDataReceived>(params) {
                    // The wire bytes (what `Content-Length` counts) when Chromium reports
                    // them, else the decoded ones.
                    let bytes = if event.encoded_data_length > 0 {
                        event.encoded_data_length
                    } else {
                        event.data_length
                    };
                    let bytes = u64::try_from(bytes).unwrap_or(0);
                    self.update(|s| s.network.body_received(session, &event.request_id.0, bytes));
                }
            }
            "Network.loadingFailed" => {
                if let Some(event) = decode_event::<network::EventLoadingFailed>(params) {
                    self.update(|s| {
                        s.network.ended(session, &event.request_id.0);
                        // For documents the request id is the loader id.
                        if event.r#type == network::ResourceType::Document {
                            push_bounded(&mut s.doc_failed, (event.request_id.0, event.error_text))
                        }
                    });
                }
            }
            "Inspector.targetCrashed" => self.mark_closed("the page crashed"),
            _ => {}
        }
    }

    /// Records the document `frame` committed (`Page.frameNavigated`, or a frame of
    /// `Page.getFrameTree` seeded at attach); `restored`: it came from the back/forward cache.
    pub(crate) fn frame_navigated(
        &self,
        session: Option<&Arc<str>>,
        frame: cdp_page::Frame,
        restored: bool,
    ) {
        self.update(|s| {
            if frame.parent_id.is_none() && session.is_none() {
                s.main_frame = Some(frame.id.0.clone());
                s.network.document_committed(frame.loader_id.as_str());
            }
            let state = s.frames.entry(frame.id.0).or_default();
            state.parent_id = frame.parent_id.map(|id| id.0);
            state.url = frame.url + frame.url_fragment.as_deref().unwrap_or("");
            state.name = frame.name.unwrap_or_default();
            state.session = session.cloned();
            if state.loader_id.as_deref() != Some(frame.loader_id.as_str()) {
                state.loader_id = Some(frame.loader_id.0);
                state.lifecycle.clear();
                state.loaded_at = None;
            }
            state.lifecycle.insert(Lifecycle::Commit);
            if restored {
                state.loaded_at.get_or_insert_with(Instant::now);
                state.lifecycle.extend([
                    Lifecycle::DomContentLoaded,
                    Lifecycle::Load,
                    Lifecycle::NetworkAlmostIdle,
                    Lifecycle::NetworkIdle,
                ]);
            }
        });
    }

    /// Counts a navigation of the main frame requested or started in its own tab, unless
    /// `same_document` says (given the frame's current URL) it stays in the document.
    fn count_navigation_request(
        &self,
        session: Option<&Arc<str>>,
        frame_id: &str,
        current_tab: bool,
        same_document: impl FnOnce(&str) -> bool,
    ) {
        self.update(|s| {
            if session.is_some() || s.main_frame.as_deref() != Some(frame_id) {
                return;
            }
            let current = s.frames.get(frame_id).map(|f| f.url.as_str()).unwrap_or("");
            if current_tab && !same_document(current) {
                s.nav.requests += 1;
            }
        });
    }
}

/// The newest cross-document navigation of `frame_id` that started after `loader_id`'s, if
/// the frame has moved on (`None` when `loader_id`'s start was not seen).
fn newer_navigation(
    state: &PageState,
    frame_id: &str,
    loader_id: &str,
) -> Option<(String, String)> {
    let ours = state
        .started
        .iter()
        .position(|(frame, loader, _)| frame == frame_id && loader == loader_id)?;
    state.started[ours + 1..]
        .iter()
        .rev()
        .find(|(frame, _, _)| frame == frame_id)
        .map(|(_, loader, url)| (loader.clone(), url.clone()))
}

fn push_bounded<T>(list: &mut Vec<T>, item: T) {
    if list.len() >= 16 {
        list.remove(0);
    }
    list.push(item);
}

/// A tab. Cheap to clone; clones share the tab.
#[derive(Clone)]
pub struct Page {
    pub(crate) session: Session,
    pub(crate) target_id: Arc<str>,
    pub(crate) shared: Arc<Shared>,
    /// The browser-wide ref table (`snapshot::refs`), shared by every page of the browser.
    pub(crate) refs: Arc<crate::snapshot::refs::RefTable>,
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
        state
            .main_frame
            .as_ref()
            .and_then(|id| state.frames.get(id))
            .map(|f| f.url.clone())
            .unwrap_or_default()
    }

    /// The main frame's id, once known.
    pub fn main_frame_id(&self) -> Option<String> {
        lock(&self.shared.state).main_frame.clone()
    }

    /// The loader id of the main frame's current document.
    pub fn document_id(&self) -> Option<String> {
        let state = lock(&self.shared.state);
        state
            .main_frame
            .as_ref()
            .and_then(|id| state.frames.get(id))
            .and_then(|f| f.loader_id.clone())
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

    /// The open JavaScript dialog, if any.
    pub fn dialog(&self) -> Option<Dialog> {
        lock(&self.shared.state).dialog.clone()
    }

    /// Whether the tab has been closed or crashed.
    pub fn is_closed(&self) -> bool {
        lock(&self.shared.state).closed.is_some() || self.session.conn.is_closed()
    }

    /// Evaluates a caller's script as browser_advanced_eval does: compiled as an expression
    /// (what `Runtime.evaluate` runs) or, when that is a syntax error, as a function body (`const
    /// a = 1; return a`); the value converted as `JSON.stringify` does.
    pub async fn evaluate_expression_or_body(&self, js: &str) -> Result<serde_json::Value> {
        let compiled = self
            .session
            .send(&runtime::CompileScriptParams::new(js, "", false))
            .await?;
        if compiled.exception_details.is_none() {
            self.evaluate(js).await
        } else {
            self.evaluate(&crate::js::function_body_expression(js))
                .await
        }
    }

    /// The document title.
    pub async fn title(&self) -> Result<String> {
        let value = self.evaluate(crate::js::DOCUMENT_TITLE).await?;
        let title = value.as_str().unwrap_or_default().to_string();
        lock(&self.shared.state).title.clone_from(&title);
        Ok(title)
    }

    /// Navigates the main frame to `url` and waits for `wait_until` of the new document.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// use std::time::Duration;
    /// let nav = page.goto("http://127.0.0.1:8080/", chromate::WaitUntil::Load, Duration::from_secs(30)).await?;
    /// println!("{} answered {:?}", nav.url, nav.status);
    /// # Ok(()) }
    /// ```
    pub async fn goto(
        &self,
        url: &str,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let deadline = crate::wait::Deadline::new(timeout);
        self.under(deadline, self.goto_now(url, wait_until, timeout))
            .await
    }

    async fn goto_now(
        &self,
        url: &str,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let deadline = Instant::now() + timeout;
        let load_timeout = || Error::TimeoutWaitingLoad {
            state: wait_until.as_str().into(),
            url: url.into(),
            timeout,
        };
        let params = cdp_page::NavigateParams::new(url);
        // The load deadline, not the command timeout, decides: give the command a second more.
        let navigate = self
            .session
            .send_with_timeout(&params, timeout + Duration::from_secs(1));
        let answer =
            match tokio::time::timeout_at(deadline.into(), self.unless_dialog(navigate)).await {
                Ok(Err(Error::NoAnswer { .. })) | Err(_) => return Err(load_timeout()),
                Ok(answer) => answer?,
            };
        if let Some(net_error) = answer.error_text.filter(|e| !e.is_empty()) {
            return Err(Error::NavigationFailed {
                url: url.to_string(),
                net_error,
            });
        }
        let frame_id = answer.frame_id.0;
        let Some(loader_id) = answer.loader_id.map(|l| l.0) else {
            // Same-document navigation: nothing to load.
            return Ok(NavigationResult {
                url: self.url(),
                status: None,
                loader_id: None,
            });
        };
        self.wait_for_loader(&frame_id, &loader_id, wait_until, url, deadline, timeout)
            .await
    }

    /// Waits until the frame's document `loader_id` (or a document that replaced it: when the
    /// page navigates itself while loading — a client redirect, a form submitted from a
    /// script, a move to a `blob:` URL — the wait follows the newer navigation, and fails at
    /// once if that one fails) reaches `wait_until`.
    async fn wait_for_loader(
        &self,
        frame_id: &str,
        loader_id: &str,
        wait_until: WaitUntil,
        url: &str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let mut version = self.shared.version.subscribe();
        let mut loader = loader_id.to_owned();
        let mut url = url.to_owned();
        loop {
            // When the network will have been quiet long enough, if that is all that is missing.
            let mut quiet_at = None;
            {
                let state = lock(&self.shared.state);
                // Only a document that never got there is followed: a restored back/forward
                // document has reached every state although later navigations started.
                let ours_reached = state.frames.get(frame_id).is_some_and(|frame| {
                    frame.loader_id.as_deref() == Some(loader.as_str())
                        && wait_until.reached(
                            &frame.lifecycle,
                            frame.lifecycle.contains(&Lifecycle::Commit),
                        )
                });
                if !ours_reached {
                    if let Some((next_loader, next_url)) =
                        newer_navigation(&state, frame_id, &loader)
                    {
                        loader = next_loader;
                        url = next_url;
                    }
                }
                let loader_id = loader.as_str();
                let url = url.as_str();
                if let Some(reason) = &state.closed {
                    return Err(Error::ConnectionClosed {
                        reason: reason.clone(),
                    });
                }
                if let Some((_, net_error)) = state.doc_failed.iter().find(|(l, _)| l == loader_id)
                {
                    return Err(Error::NavigationFailed {
                        url: url.to_string(),
                        net_error: net_error.clone(),
                    });
                }
                if let Some(frame) = state.frames.get(frame_id) {
                    let current = frame.loader_id.as_deref();
                    let committed =
                        current == Some(loader_id) && frame.lifecycle.contains(&Lifecycle::Commit);
                    let idle = match wait_until {
                        WaitUntil::NetworkIdle => state.network.idle(frame.loaded_at),
                        _ => Ok(()),
                    };
                    let reached = current == Some(loader_id)
                        && wait_until.reached(&frame.lifecycle, committed);
                    if reached && idle.is_ok() {
                        let status = state
                            .doc_status
                            .iter()
                            .rev()
                            .find(|(l, _)| l == loader_id)
                            .map(|(_, s)| *s);
                        return Ok(NavigationResult {
                            url: frame.url.clone(),
                            status,
                            loader_id: Some(loader_id.to_string()),
                        });
                    }
                    if reached {
                        quiet_at = idle.err().flatten();
                    }
                }
                if state.dialog.is_some() && wait_until != WaitUntil::Commit {
                    let message = state
                        .dialog
                        .as_ref()
                        .map(|d| d.message.clone())
                        .unwrap_or_default();
                    return Err(Error::DialogOpen { message });
                }
            }
            if self.session.conn.is_closed() {
                return Err(Error::ConnectionClosed {
                    reason: self.session.conn.closed().await,
                });
            }
            // Woken by any state change, or when the quiet window closes (to look again).
            let wake_at = quiet_at.map_or(deadline, |at| at.min(deadline));
            match tokio::time::timeout_at(wake_at.into(), version.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(Error::PageClosed),
                Err(_) if wake_at < deadline => {}
                Err(_) => {
                    return Err(Error::TimeoutWaitingLoad {
                        state: wait_until.as_str().into(),
                        url,
                        timeout,
                    })
                }
            }
        }
    }

    /// Waits until the current main document has reached `state` (it may already have).
    pub async fn wait_for_load_state(&self, state: WaitUntil, timeout: Duration) -> Result<()> {
        let deadline = crate::wait::Deadline::new(timeout);
        self.under(deadline, self.wait_for_load_state_now(state, timeout))
            .await
    }

    async fn wait_for_load_state_now(&self, state: WaitUntil, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let (frame_id, loader_id) = {
            let s = lock(&self.shared.state);
            let frame_id = s.main_frame.clone().ok_or(Error::PageClosed)?;
            let loader = s
                .frames
                .get(&frame_id)
                .and_then(|f| f.loader_id.clone())
                .unwrap_or_default();
            (frame_id, loader)
        };
        let url = self.url();
        self.wait_for_loader(&frame_id, &loader_id, state, &url, deadline, timeout)
            .await
            .map(|_| ())
    }

    /// Reloads the page and waits for `wait_until`.
    pub async fn reload(
        &self,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let before = self.document_id();
        let reload = async {
            self.session
                .send(&cdp_page::ReloadParams::default())
                .await?;
            self.wait_for_new_document(before, wait_until, timeout)
                .await
        };
        self.under(crate::wait::Deadline::new(timeout), reload)
            .await
    }

    /// Goes back in history; `Ok(None)` if there is no entry to go back to.
    pub async fn back(
        &self,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<Option<NavigationResult>> {
        self.history_step(-1, wait_until, timeout).await
    }

    /// Goes forward in history; `Ok(None)` if there is no entry to go forward to.
    pub async fn forward(
        &self,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<Option<NavigationResult>> {
        self.history_step(1, wait_until, timeout).await
    }

    async fn history_step(
        &self,
        delta: i64,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<Option<NavigationResult>> {
        let step = self.history_step_now(delta, wait_until, timeout);
        self.under(crate::wait::Deadline::new(timeout), step).await
    }

    async fn history_step_now(
        &self,
        delta: i64,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<Option<NavigationResult>> {
        let history = self
            .session
            .send(&cdp_page::GetNavigationHistoryParams::default())
            .await?;
        let index = history.current_index + delta;
        let Some(entry) = usize::try_from(index)
            .ok()
            .and_then(|i| history.entries.get(i))
        else {
            return Ok(None);
        };
        let before = self.document_id();
        let same_document = {
            let current = usize::try_from(history.current_index)
                .ok()
                .and_then(|i| history.entries.get(i));
            current.is_some_and(|c| strip_fragment(&c.url) == strip_fragment(&entry.url))
        };
        self.session
            .send(&cdp_page::NavigateToHistoryEntryParams::new(entry.id))
            .await?;
        if same_document {
            return Ok(Some(NavigationResult {
                url: entry.url.clone(),
                status: None,
                loader_id: before,
            }));
        }
        self.wait_for_new_document(before, wait_until, timeout)
            .await
            .map(Some)
    }

    /// The main frame's navigation mark now (for the click and Enter fences).
    pub(crate) fn nav_mark(&self) -> NavMark {
        let state = lock(&self.shared.state);
        let mut mark = state.nav.clone();
        mark.loader_id = state
            .main_frame
            .as_ref()
            .and_then(|id| state.frames.get(id))
            .and_then(|f| f.loader_id.clone());
        mark
    }

    /// Whether the main frame's current document has fired `load`.
    pub(crate) fn main_loaded(&self) -> bool {
        let state = lock(&self.shared.state);
        state
            .main_frame
            .as_ref()
            .and_then(|id| state.frames.get(id))
            .is_some_and(|f| f.lifecycle.contains(&Lifecycle::Load))
    }

    /// How long the page and its frames have had no request in flight (`Duration::MAX`: none
    /// was ever seen); `None` while one is in flight.
    pub(crate) fn network_quiet_for(&self) -> Option<Duration> {
        lock(&self.shared.state).network.quiet_for()
    }

    /// A receiver that changes whenever page state moves (frames, lifecycle, dialogs).
    pub(crate) fn state_changes(&self) -> watch::Receiver<u64> {
        self.shared.version.subscribe()
    }

    /// Waits for a main-frame document other than `before` to reach `wait_until`.
    pub(crate) async fn wait_for_new_document(
        &self,
        before: Option<String>,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let deadline = Instant::now() + timeout;
        let mut version = self.shared.version.subscribe();
        loop {
            let found = {
                let s = lock(&self.shared.state);
                let frame = s
                    .main_frame
                    .as_ref()
                    .and_then(|id| s.frames.get(id).map(|f| (id.clone(), f)));
                frame.and_then(|(id, f)| (f.loader_id != before).then(|| (id, f.loader_id.clone())))
            };
            if let Some((frame_id, Some(loader_id))) = found {
                let url = self.url();
                return self
                    .wait_for_loader(&frame_id, &loader_id, wait_until, &url, deadline, timeout)
                    .await;
            }
            match tokio::time::timeout_at(deadline.into(), version.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(Error::PageClosed),
                Err(_) => {
                    return Err(Error::TimeoutWaitingLoad {
                        state: wait_until.as_str().into(),
                        url: self.url(),
                        timeout,
                    })
                }
            }
        }
    }

    /// Evaluates `expression` in the page's main world and returns its value converted as
    /// `JSON.stringify` does (`toJSON` honoured: a `Date` is its ISO string, `undefined` is
    /// null); promises are awaited.
    ///
    /// A throw is [`Error::EvalThrew`]; a function, symbol, bigint, DOM node, window or circular
    /// result is [`Error::EvalBadArg`].
    pub async fn evaluate(&self, expression: &str) -> Result<Value> {
        // By reference first: the remote object's type says whether JSON can hold the value
        // (a symbol or a node cannot be "returned by value" and would only give a vague error).
        let params = runtime::EvaluateParams::new(expression)
            .await_promise(true)
            .object_group(EVAL_GROUP);
        let answer = self.unless_dialog(self.session.send(&params)).await?;
        if let Some(details) = answer.exception_details {
            return Err(exception_error(&details));
        }
        let object = answer.result;
        let Some(object_id) = object
            .object_id
            .clone()
            .filter(|_| serialisable_object(&object))
        else {
            return remote_value(object);
        };
        // Converted as JSON.stringify does (§11.5), in the world the script ran in: returned by
        // value, the protocol would give `{}` for a Date and ignore every `toJSON`.
        let as_json = runtime::CallFunctionOnParams::new(crate::js::JSON_VALUE)
            .object_id(object_id.clone())
            .return_by_value(true);
        let res = match self.unless_dialog(self.session.send(&as_json)).await {
            Ok(answer) => match answer.exception_details {
                Some(details) => Err(exception_error(&details)),
                None => json_value(answer.result),
            },
            Err(other) => Err(other),
        };
        // Release only this call's object: a concurrent evaluate may still need its own.
        let release = self
            .session
            .send(&runtime::ReleaseObjectParams::new(object_id));
        crate::spawn(async move {
            let _ = release.await;
        });
        res
    }

    /// Calls one of chromate's page functions (`"snapshot.take"`) with `arg` in the isolated
    /// world of `frame_id` (the main frame if `None`), returning its JSON result.
    pub(crate) async fn call_isolated(
        &self,
        frame_id: Option<&str>,
        function: &str,
        arg: &Value,
    ) -> Result<Value> {
        self.call_isolated_with(frame_id, function, std::slice::from_ref(arg))
            .await
    }

    /// [`Page::call_isolated`] for page functions taking several arguments
    /// (`actionability.setValue(target, value)`).
    pub(crate) async fn call_isolated_with(
        &self,
        frame_id: Option<&str>,
        function: &str,
        args: &[Value],
    ) -> Result<Value> {
        self.call_isolated_declaration(frame_id, function, crate::js::call_spread(function), args)
            .await
    }

    /// [`Page::call_isolated_with`] for a whole function declaration from `js/` (`function` names
    /// it in errors).
    pub(crate) async fn call_isolated_declaration(
        &self,
        frame_id: Option<&str>,
        function: &str,
        declaration: String,
        args: &[Value],
    ) -> Result<Value> {
        let mut last_error = None;
        for _ in 0..3 {
            let (session, context_id) = self.isolated_context(frame_id).await?;
            let params = runtime::CallFunctionOnParams::new(declaration.clone())
                .execution_context_id(runtime::ExecutionContextId(context_id))
                .arguments(args.iter().map(call_argument).collect())
                .return_by_value(true)
                .await_promise(true);
            match self.unless_dialog(session.send(&params)).await {
                Ok(answer) => {
                    if let Some(details) = answer.exception_details {
                        return Err(exception_error(&details));
                    }
                    return remote_value(answer.result);
                }
                // The document went away between lookup and call: find the new world.
                Err(Error::Protocol { message, .. }) if message.contains("context") => {
                    self.shared.update(|s| {
                        s.contexts.retain(|_, c| {
                            c.session.as_deref() != session.id()
                                || !c.isolated
                                || Some(c.frame_id.as_str()) != frame_id
                        });
                    });
                    last_error = Some(Error::StateInvalid {
                        message: format!("the frame's document changed during {function}"),
                    });
                }
                Err(other) => return Err(other),
            }
        }
        Err(last_error.unwrap_or(Error::PageClosed))
    }

    /// Like [`Page::call_isolated`] but returns the result as a remote object: its object id
    /// (`None` for `null`/`undefined`) and the session it lives in, for DOM commands on elements.
    pub(crate) async fn call_isolated_object(
        &self,
        frame_id: Option<&str>,
        function: &str,
        arg: &Value,
    ) -> Result<Option<(Session, runtime::RemoteObjectId)>> {
        let declaration = crate::js::call_one(function);
        let (session, context_id) = self.isolated_context(frame_id).await?;
        let params = runtime::CallFunctionOnParams::new(declaration)
            .execution_context_id(runtime::ExecutionContextId(context_id))
            .arguments(vec![call_argument(arg)]);
        let answer = self.unless_dialog(session.send(&params)).await?;
        if let Some(details) = answer.exception_details {
            return Err(exception_error(&details));
        }
        Ok(answer.result.object_id.map(|id| (session, id)))
    }

    /// The session and execution context of chromate's world in a frame, created if missing.
    pub(crate) async fn isolated_context(&self, frame_id: Option<&str>) -> Result<(Session, i64)> {
        let (frame_id, frame_session) = {
            let state = lock(&self.shared.state);
            let frame_id = match frame_id {
                Some(id) => id.to_string(),
                None => state.main_frame.clone().ok_or(Error::PageClosed)?,
            };
            let frame_session = state.frames.get(&frame_id).and_then(|f| f.session.clone());
            if let Some(((_, ctx), _)) = state
                .contexts
                .iter()
                .find(|(_, c)| c.isolated && c.frame_id == frame_id)
            {
                let session = self.session_for(frame_session.clone());
                return Ok((session, *ctx));
            }
            (frame_id, frame_session)
        };
        let session = self.session_for(frame_session);
        let world = cdp_page::CreateIsolatedWorldParams::new(cdp_page::FrameId(frame_id))
            .world_name(WORLD_NAME);
        let created = session.send(&world).await?;
        let context_id = created.execution_context_id.0;
        let install = runtime::EvaluateParams::new(crate::js::install_source())
            .context_id(runtime::ExecutionContextId(context_id));
        let answer = session.send(&install).await?;
        if let Some(details) = answer.exception_details {
            return Err(exception_error(&details));
        }
        Ok((session, context_id))
    }

    fn session_for(&self, id: Option<Arc<str>>) -> Session {
        match id {
            None => self.session.clone(),
            Some(id) => Session {
                conn: self.session.conn.clone(),
                id: Some(id),
                timeout: self.session.timeout,
            },
        }
    }

    /// Runs `fut`, but fails with [`Error::DialogOpen`] as soon as a dialog blocks the page, and
    /// with [`Error::ConnectionClosed`] as soon as the tab crashes or closes.
    pub(crate) async fn unless_dialog<T>(
        &self,
        fut: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        let mut version = self.shared.version.subscribe();
        tokio::pin!(fut);
        loop {
            {
                let state = lock(&self.shared.state);
                if let Some(dialog) = &state.dialog {
                    return Err(Error::DialogOpen {
                        message: dialog.message.clone(),
                    });
                }
                // A crashed or closed tab never answers: fail at once instead of at the
                // command timeout.
                if let Some(reason) = &state.closed {
                    return Err(Error::ConnectionClosed {
                        reason: reason.clone(),
                    });
                }
            }
            tokio::select! {
                res = &mut fut => return res,
                changed = version.changed() => {
                    if changed.is_err() {
                        return fut.await;
                    }
                }
            }
        }
    }

    /// Waits until a dialog is open, up to `timeout`.
    pub async fn wait_for_dialog(&self, timeout: Duration) -> Result<Dialog> {
        let deadline = Instant::now() + timeout;
        let mut version = self.shared.version.subscribe();
        loop {
            if let Some(dialog) = lock(&self.shared.state).dialog.clone() {
                return Ok(dialog);
            }
            match tokio::time::timeout_at(deadline.into(), version.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(Error::PageClosed),
                Err(_) => {
                    return Err(Error::Timeout {
                        what: "a dialog to open".into(),
                        timeout,
                    })
                }
            }
        }
    }

    /// Accepts the open dialog, answering a prompt with `prompt_text`.
    pub async fn accept_dialog(&self, prompt_text: Option<&str>) -> Result<Dialog> {
        self.answer_dialog(true, prompt_text).await
    }

    /// Dismisses the open dialog.
    pub async fn dismiss_dialog(&self) -> Result<Dialog> {
        self.answer_dialog(false, None).await
    }

    async fn answer_dialog(&self, accept: bool, prompt_text: Option<&str>) -> Result<Dialog> {
        let dialog = self.dialog().ok_or_else(|| Error::StateInvalid {
            message: "no dialog is open".into(),
        })?;
        let mut params = cdp_page::HandleJavaScriptDialogParams::new(accept);
        if let Some(text) = prompt_text {
            params = params.prompt_text(text);
        }
        self.session.send(&params).await?;
        self.shared.update(|s| s.dialog = None);
        Ok(dialog)
    }
}

fn strip_fragment(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

fn call_argument(arg: &Value) -> runtime::CallArgument {
    runtime::CallArgument {
        value: Some(arg.clone()),
        unserializable_value: None,
        object_id: None,
    }
}

/// The object group of `evaluate`'s remote objects, released after each call.
const EVAL_GROUP: &str = "chromate-eval";

/// Whether a by-reference result is an object JSON can hold (then it is fetched by value).
fn serialisable_object(object: &runtime::RemoteObject) -> bool {
    use runtime::{RemoteObjectSubtype as Sub, RemoteObjectType as Ty};
    object.r#type == Ty::Object
        && !matches!(object.subtype, Some(Sub::Node) | Some(Sub::Null))
        && object.class_name.as_deref() != Some("Window")
}

/// The answer of [`crate::js::JSON_VALUE`]: the value its JSON text holds, or EVAL_BAD_ARG.
fn json_value(object: runtime::RemoteObject) -> Result<Value> {
    let answer = object.value.unwrap_or(Value::Null);
    if let Some(kind) = answer.get("unserialisable").and_then(Value::as_str) {
        return Err(Error::EvalBadArg {
            returned_type: kind.to_string(),
        });
    }
    let text = answer.get("json").and_then(Value::as_str).unwrap_or("null");
    serde_json::from_str(text).map_err(|source| Error::Decode {
        method: <runtime::CallFunctionOnParams as crate::cdp::Command>::METHOD.to_string(),
        source,
    })
}

/// A script result as JSON, or the contract's EVAL_BAD_ARG for what JSON cannot hold.
fn remote_value(object: runtime::RemoteObject) -> Result<Value> {
    use runtime::{RemoteObjectSubtype as Sub, RemoteObjectType as Ty};
    let bad = |t: &str| {
        Err(Error::EvalBadArg {
            returned_type: t.to_string(),
        })
    };
    match (&object.r#type, &object.subtype) {
        (Ty::Undefined, _) => Ok(Value::Null),
        (Ty::Function, _) => bad("function"),
        (Ty::Symbol, _) => bad("symbol"),
        (Ty::Bigint, _) => bad("bigint"),
        (Ty::Object, Some(Sub::Node)) => bad("node"),
        (Ty::Object, _) if object.class_name.as_deref() == Some("Window") => bad("window"),
        // JSON.stringify writes -0 as 0, and NaN and the infinities as null.
        (Ty::Number, _)
            if object
                .unserializable_value
                .as_ref()
                .is_some_and(|v| v.0 == "-0") =>
        {
            Ok(Value::from(0))
        }
        (Ty::Number, _) if object.unserializable_value.is_some() => Ok(Value::Null),
        _ => Ok(object.value.unwrap_or(Value::Null)),
    }
}

/// The first line of a thrown exception, and where it was thrown.
pub(crate) fn exception_error(details: &runtime::ExceptionDetails) -> Error {
    let description = details
        .exception
        .as_ref()
        .and_then(|e| e.description.clone());
    let message = description
        .as_deref()
        .and_then(|d| d.lines().next())
        .map(str::to_string)
        .or_else(|| {
            details
                .exception
                .as_ref()
                .and_then(|e| e.value.as_ref())
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
        })
        .unwrap_or_else(|| details.text.clone());
    let origin = details.url.as_ref().map(|url| {
        format!(
            "{url}:{}:{}",
            details.line_number + 1,
            details.column_number + 1
        )
    });
    Error::EvalThrew { message, origin }
}

#[cfg(test)]
mod tests;
