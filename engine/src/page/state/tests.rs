//! The reducer on recorded CDP events: the lifecycle points a frame keeps, and whole page loads
//! replayed from `../testdata/`.

use super::Lifecycle;

#[test]
fn lifecycle_events_are_kept_by_the_names_chrome_sends() {
    let kept = |name: &str| Lifecycle::from_event(name);
    assert_eq!(kept("commit"), Some(Lifecycle::Commit));
    assert_eq!(kept("DOMContentLoaded"), Some(Lifecycle::DomContentLoaded));
    assert_eq!(kept("load"), Some(Lifecycle::Load));
    assert_eq!(
        kept("networkAlmostIdle"),
        Some(Lifecycle::NetworkAlmostIdle)
    );
    assert_eq!(kept("networkIdle"), Some(Lifecycle::NetworkIdle));
    // Case matters: the protocol's spelling is exact.
    assert_eq!(kept("domcontentloaded"), None);
    assert_eq!(kept("init"), None);
    assert_eq!(kept("firstPaint"), None);
}

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::Value;

use super::PageState;
use crate::page::Dialog;

/// One page load recorded from Chromium 156 by `engine/examples/record-events.rs` (see
/// `../testdata/README.md`): a page with a same-origin iframe, a fetch after `load`, a fragment
/// navigation and an `alert` accepted.
const LOAD: &str = include_str!("../testdata/load.json");

/// The recorded events, in arrival order.
fn recorded() -> Vec<(String, Box<RawValue>)> {
    let events: Vec<Value> = serde_json::from_str(LOAD).expect("the fixture is JSON");
    events
        .into_iter()
        .map(|event| {
            let method = event["method"].as_str().expect("a method").to_owned();
            let params = serde_json::value::to_raw_value(&event["params"]).expect("params");
            (method, params)
        })
        .collect()
}

/// Replays `events` on the page session into a fresh state, all at `now`; returns the state and
/// the methods that moved it.
fn replay(events: &[(String, Box<RawValue>)], now: Instant) -> (PageState, Vec<String>) {
    let mut state = PageState::default();
    let mut moved = Vec::new();
    for (method, params) in events {
        if state.apply(None, method, params, now) {
            moved.push(method.clone());
        }
    }
    (state, moved)
}

/// The recorded events up to and including the first `method` whose params contain `needle`.
fn until(events: &[(String, Box<RawValue>)], method: &str, needle: &str) -> usize {
    events
        .iter()
        .position(|(m, p)| m == method && p.get().contains(needle))
        .map(|i| i + 1)
        .expect("the fixture has the event")
}

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).expect("raw JSON")
}

#[test]
fn a_recorded_load_gives_the_frames_their_documents_and_lifecycle() {
    let events = recorded();
    let (state, moved) = replay(&events, Instant::now());
    let main = state.main().expect("the main frame is known");
    let main_id = state.main_frame.clone().expect("main frame id");
    assert!(main.parent_id.is_none());
    // The fragment navigation moved the URL within the document.
    assert!(main.url.starts_with("http://127.0.0.1:"), "{}", main.url);
    assert!(main.url.ends_with("/#part"), "{}", main.url);
    for point in [
        Lifecycle::Commit,
        Lifecycle::DomContentLoaded,
        Lifecycle::Load,
        Lifecycle::NetworkAlmostIdle,
        Lifecycle::NetworkIdle,
    ] {
        assert!(
            main.lifecycle.contains(&point),
            "main frame lacks {point:?}"
        );
    }
    assert!(main.loaded_at.is_some());
    // The iframe: a child of the main frame, loaded, named.
    let children: Vec<_> = state
        .frames
        .iter()
        .filter(|(id, _)| **id != main_id)
        .collect();
    assert_eq!(children.len(), 1);
    let (_, child) = children[0];
    assert_eq!(child.parent_id.as_deref(), Some(main_id.as_str()));
    assert!(child.url.ends_with("/child"), "{}", child.url);
    assert_eq!(child.name, "child");
    assert!(child.lifecycle.contains(&Lifecycle::Load));
    // The main document answered 200, under its loader id.
    let loader = main.loader_id.clone().expect("a loader id");
    assert!(state.doc_status.contains(&(loader.clone(), 200)));
    assert!(state.doc_failed.is_empty());
    // Each frame has its main world and chromate's isolated world.
    assert_eq!(state.contexts.len(), 4);
    assert_eq!(state.contexts.values().filter(|c| c.isolated).count(), 2);
    assert_eq!(
        state
            .contexts
            .values()
            .filter(|c| c.frame_id == main_id)
            .count(),
        2
    );
    // The navigation's start came before its commit made the frame the main one (a real page
    // knows its main frame from the frame tree seeded at attach), so only the navigation within
    // the document is counted; the main frame stopped loading after its load and after the
    // fragment navigation.
    assert_eq!(state.nav.requests, 0);
    assert_eq!(state.nav.same_document, 1);
    assert_eq!(state.nav.stopped, 2);
    assert_eq!(
        state
            .started
            .iter()
            .filter(|(f, _, _)| *f == main_id)
            .count(),
        1
    );
    // The fetch ended and the favicon is not counted: nothing is in flight.
    assert_eq!(state.network.in_flight(), 0);
    // The alert opened and was closed again; the page is not closed.
    assert!(state.dialog.is_none());
    assert!(state.closed.is_none());
    // Only events that move page state wake waiters.
    for ignored in [
        "Network.requestWillBeSentExtraInfo",
        "Network.responseReceivedExtraInfo",
        "Network.policyUpdated",
        "Page.frameStartedLoading",
        "Page.domContentEventFired",
        "Page.loadEventFired",
        "Log.entryAdded",
        "Inspector.detached",
    ] {
        assert!(!moved.iter().any(|m| m == ignored), "{ignored} moved state");
    }
    assert!(moved.iter().any(|m| m == "Page.lifecycleEvent"));
}

#[test]
fn a_load_replayed_in_steps_reaches_each_state_in_order() {
    let events = recorded();
    let now = Instant::now();
    // Up to the main document's DOMContentLoaded: committed, not loaded.
    let (state, _) = replay(
        &events[..until(&events, "Page.lifecycleEvent", "DOMContentLoaded")],
        now,
    );
    let main = state.main().expect("main frame");
    assert!(main.lifecycle.contains(&Lifecycle::Commit));
    assert!(main.lifecycle.contains(&Lifecycle::DomContentLoaded));
    assert!(!main.lifecycle.contains(&Lifecycle::Load));
    assert!(main.loaded_at.is_none());
    // The iframe's document request is in flight.
    assert_eq!(state.network.in_flight(), 1);
    assert_eq!(state.network.quiet_for(now), None);
    assert_eq!(state.network.idle(None, now), Err(None));
    // Up to the dialog opening: the alert is the page's dialog.
    let (state, _) = replay(
        &events[..until(&events, "Page.javascriptDialogOpening", "hello")],
        now,
    );
    assert_eq!(
        state.dialog,
        Some(Dialog {
            kind: "alert".into(),
            message: "hello".into(),
            default_prompt: Some(String::new()),
        })
    );
}

/// `Page.javascriptDialogOpening` of an alert saying `message`.
fn alert(message: &str) -> Box<RawValue> {
    raw(&format!(
        r#"{{"url":"http://a.test/","frameId":"F","message":"{message}","type":"alert","hasBrowserHandler":false,"defaultPrompt":""}}"#
    ))
}

#[test]
fn an_answer_clears_only_the_dialog_it_answered() {
    let mut state = PageState::default();
    let now = Instant::now();
    assert!(state.apply(None, "Page.javascriptDialogOpening", &alert("first"), now));
    let answered = state.dialogs_opened;
    // The page opens the next one before the answer's reply is read.
    assert!(state.apply(
        None,
        "Page.javascriptDialogClosed",
        &raw(r#"{"result":true,"userInput":""}"#),
        now
    ));
    assert!(state.apply(None, "Page.javascriptDialogOpening", &alert("second"), now));
    state.dialog_answered(answered, now);
    assert_eq!(
        state.dialog.as_ref().map(|d| d.message.as_str()),
        Some("second")
    );
    // Answering the open one closes it.
    state.dialog_answered(state.dialogs_opened, now);
    assert_eq!(state.dialog, None);
}

#[test]
fn a_dialog_reopened_within_a_second_of_its_answer_is_counted() {
    let mut state = PageState::default();
    let start = Instant::now();
    let closed = raw(r#"{"result":true,"userInput":""}"#);
    let at = |ms: u64| start + Duration::from_millis(ms);
    assert!(state.apply(None, "Page.javascriptDialogOpening", &alert("1"), at(0)));
    assert_eq!(state.dialog_reopens, 0);
    assert!(state.apply(None, "Page.javascriptDialogClosed", &closed, at(10)));
    assert!(state.apply(None, "Page.javascriptDialogOpening", &alert("1"), at(20)));
    assert_eq!(state.dialog_reopens, 1);
    state.dialog_answered(state.dialogs_opened, at(30));
    assert!(state.apply(None, "Page.javascriptDialogOpening", &alert("1"), at(1030)));
    assert_eq!(state.dialog_reopens, 2);
    // One that opens more than a second after the answer starts the count again.
    assert!(state.apply(None, "Page.javascriptDialogClosed", &closed, at(1040)));
    assert!(state.apply(None, "Page.javascriptDialogOpening", &alert("2"), at(2041)));
    assert_eq!(state.dialog_reopens, 0);
}

#[test]
fn networkidle_is_half_a_second_without_a_request_after_load() {
    let events = recorded();
    let start = Instant::now();
    let (state, _) = replay(&events, start);
    let loaded_at = state.main().and_then(|f| f.loaded_at);
    assert_eq!(loaded_at, Some(start));
    let quiet_at = start + Duration::from_millis(500);
    assert_eq!(state.network.idle(loaded_at, start), Err(Some(quiet_at)));
    assert_eq!(state.network.idle(loaded_at, quiet_at), Ok(()));
    assert_eq!(
        state.network.quiet_for(start + Duration::from_millis(200)),
        Some(Duration::from_millis(200))
    );
}

#[test]
fn a_newer_navigation_of_the_frame_is_followed() {
    let mut state = PageState::default();
    let now = Instant::now();
    let start = |loader: &str, url: &str| {
        raw(&format!(
            r#"{{"frameId":"F","url":"{url}","loaderId":"{loader}","navigationType":"differentDocument"}}"#
        ))
    };
    assert!(state.apply(
        None,
        "Page.frameStartedNavigating",
        &start("L1", "http://127.0.0.1/a"),
        now
    ));
    assert_eq!(state.newer_navigation("F", "L1"), None);
    state.apply(
        None,
        "Page.frameStartedNavigating",
        &start("L2", "http://127.0.0.1/b"),
        now,
    );
    assert_eq!(
        state.newer_navigation("F", "L1"),
        Some(("L2".into(), "http://127.0.0.1/b".into()))
    );
    // A loader whose start was not seen is not followed.
    assert_eq!(state.newer_navigation("F", "L0"), None);
}

#[test]
fn a_document_restored_from_the_back_forward_cache_has_every_load_state() {
    let events = recorded();
    // The recorded main-frame commit, as Chromium sends it for a restore.
    let (_, params) = &events[until(&events, "Page.frameNavigated", "\"Navigation\"") - 1];
    let mut restored: Value = serde_json::from_str(params.get()).expect("JSON");
    restored["type"] = Value::from("BackForwardCacheRestore");
    let restored = serde_json::value::to_raw_value(&restored).expect("raw");
    let mut state = PageState::default();
    let now = Instant::now();
    assert!(state.apply(None, "Page.frameNavigated", &restored, now));
    let main = state.main().expect("main frame");
    assert!(main.lifecycle.contains(&Lifecycle::Load));
    assert!(main.lifecycle.contains(&Lifecycle::NetworkIdle));
    assert_eq!(main.loaded_at, Some(now));
}

#[test]
fn events_that_do_not_decode_or_move_nothing_are_ignored() {
    let mut state = PageState::default();
    let now = Instant::now();
    // Parameters of the wrong shape.
    assert!(!state.apply(None, "Page.lifecycleEvent", &raw(r#"{"frameId":1}"#), now));
    assert!(!state.apply(None, "Page.frameNavigated", &raw("{}"), now));
    // Not a page-state event.
    assert!(!state.apply(
        None,
        "Page.loadEventFired",
        &raw(r#"{"timestamp":1.0}"#),
        now
    ));
    // A frame swapped into another process is not gone.
    state.apply(
        None,
        "Page.frameAttached",
        &raw(r#"{"frameId":"C","parentFrameId":"M"}"#),
        now,
    );
    assert!(!state.apply(
        None,
        "Page.frameDetached",
        &raw(r#"{"frameId":"C","reason":"swap"}"#),
        now
    ));
    assert!(state.frames.contains_key("C"));
    assert!(state.apply(
        None,
        "Page.frameDetached",
        &raw(r#"{"frameId":"C","reason":"remove"}"#),
        now
    ));
    assert!(!state.frames.contains_key("C"));
    // A crash closes the page, with the first reason kept.
    assert!(state.apply(None, "Inspector.targetCrashed", &raw("{}"), now));
    state.mark_closed("the page was closed");
    assert_eq!(state.closed.as_deref(), Some("the page crashed"));
    // Calls on it fail as a crash, naming the URL it showed, not as a lost browser.
    assert!(state.crashed);
    assert!(matches!(
        state.gone_error(),
        Some(crate::error::Error::PageCrashed { url }) if url == state.main().map(|f| f.url.clone()).unwrap_or_default()
    ));
}

#[test]
fn a_child_sessions_contexts_are_cleared_alone() {
    let events = recorded();
    let (mut state, _) = replay(&events, Instant::now());
    let child: Arc<str> = Arc::from("CHILD-SESSION");
    let created = raw(
        r#"{"context":{"id":7,"origin":"http://127.0.0.1","name":"","uniqueId":"u7","auxData":{"isDefault":true,"type":"default","frameId":"OOPIF"}}}"#,
    );
    assert!(state.apply(
        Some(&child),
        "Runtime.executionContextCreated",
        &created,
        Instant::now()
    ));
    assert_eq!(state.contexts.len(), 5);
    assert!(state.apply(
        Some(&child),
        "Runtime.executionContextsCleared",
        &raw("{}"),
        Instant::now()
    ));
    assert_eq!(state.contexts.len(), 4);
}

#[test]
fn a_main_frame_known_from_attach_counts_its_navigation() {
    let events = recorded();
    let (_, params) = &events[until(&events, "Page.frameNavigated", "\"Navigation\"") - 1];
    let committed: crate::cdp::page::EventFrameNavigated =
        crate::cdp::decode_event(params).expect("the recorded commit decodes");
    // The tab's about:blank document, as `Page.getFrameTree` reports it at attach.
    let mut blank = committed.frame.clone();
    blank.url = "about:blank".into();
    blank.loader_id = crate::cdp::network::LoaderId("BLANK".into());
    let mut state = PageState::default();
    let now = Instant::now();
    state.frame_navigated(None, blank, false, now);
    assert!(state.has_navigated(&committed.frame.id.0));
    for (method, params) in &events {
        state.apply(None, method, params, now);
    }
    assert_eq!(state.nav.requests, 1);
    assert_eq!(state.nav.same_document, 1);
    assert_eq!(
        state.main().and_then(|f| f.loader_id.clone()),
        Some(committed.frame.loader_id.0)
    );
}

/// The recorded fetch's `Network.requestWillBeSent`, as request `id` of the document `loader`.
fn request(events: &[(String, Box<RawValue>)], id: &str, loader: &str) -> Box<RawValue> {
    let (_, params) = &events[until(events, "Network.requestWillBeSent", "/data\"") - 1];
    let mut request: Value = serde_json::from_str(params.get()).expect("JSON");
    request["requestId"] = Value::from(id);
    request["loaderId"] = Value::from(loader);
    serde_json::value::to_raw_value(&request).expect("raw")
}

/// The recorded main-frame commit, of the document `loader` (`restored`: from the back/forward
/// cache).
fn commit(events: &[(String, Box<RawValue>)], loader: &str, restored: bool) -> Box<RawValue> {
    let (_, params) = &events[until(events, "Page.frameNavigated", "\"Navigation\"") - 1];
    let mut commit: Value = serde_json::from_str(params.get()).expect("JSON");
    commit["frame"]["loaderId"] = Value::from(loader);
    if restored {
        commit["type"] = Value::from("BackForwardCacheRestore");
    }
    serde_json::value::to_raw_value(&commit).expect("raw")
}

#[test]
fn a_replaced_documents_requests_are_not_the_next_documents_activity() {
    let events = recorded();
    let start = Instant::now();
    let at = |ms: u64| start + Duration::from_millis(ms);
    let (mut state, _) = replay(&events, start);
    let main_id = state.main_frame.clone().expect("main frame id");
    let old = state
        .main()
        .and_then(|f| f.loader_id.clone())
        .expect("a loader id");
    assert_eq!(state.network.in_flight(), 0);
    // The next navigation's request starts; the old document, still shown, starts a fetch
    // after it (a script still running, a `pagehide` beacon).
    state.apply(
        None,
        "Network.requestWillBeSent",
        &request(&events, "NEXT", "NEXT"),
        at(10),
    );
    state.apply(
        None,
        "Network.requestWillBeSent",
        &request(&events, "OLD.1", &old),
        at(20),
    );
    assert_eq!(state.network.in_flight(), 2);
    // The next document commits (its `init` comes first, as recorded): only its own request is
    // left in flight.
    let init = raw(&format!(
        r#"{{"frameId":"{main_id}","loaderId":"NEXT","name":"init","timestamp":1.0}}"#
    ));
    state.apply(None, "Page.lifecycleEvent", &init, at(30));
    assert_eq!(state.network.in_flight(), 1);
    assert!(state.apply(
        None,
        "Page.frameNavigated",
        &commit(&events, "NEXT", false),
        at(30)
    ));
    assert_eq!(state.network.in_flight(), 1);
    let finished = raw(r#"{"requestId":"NEXT","timestamp":1.0,"encodedDataLength":100}"#);
    state.apply(None, "Network.loadingFinished", &finished, at(40));
    assert_eq!(
        state.network.quiet_for(at(50)),
        Some(Duration::from_millis(10))
    );
    // Late reports of the old document: a request it started, its cut-off fetch failing. Neither
    // is the new document's activity: the network has been quiet since its own request ended.
    assert!(!state.apply(
        None,
        "Network.requestWillBeSent",
        &request(&events, "OLD.2", &old),
        at(60)
    ));
    let failed = raw(
        r#"{"requestId":"OLD.1","timestamp":1.0,"type":"Fetch","errorText":"net::ERR_ABORTED","canceled":true}"#,
    );
    state.apply(None, "Network.loadingFailed", &failed, at(70));
    assert_eq!(state.network.in_flight(), 0);
    assert_eq!(
        state.network.quiet_for(at(80)),
        Some(Duration::from_millis(40))
    );
    // The new document's own requests count.
    assert!(state.apply(
        None,
        "Network.requestWillBeSent",
        &request(&events, "NEXT.1", "NEXT"),
        at(90)
    ));
    assert_eq!(state.network.in_flight(), 1);
    // Back to the old document from the back/forward cache: its requests count again, and the
    // one it replaced no longer does.
    assert!(state.apply(
        None,
        "Page.frameNavigated",
        &commit(&events, &old, true),
        at(100)
    ));
    assert_eq!(state.network.in_flight(), 0);
    assert!(state.apply(
        None,
        "Network.requestWillBeSent",
        &request(&events, "OLD.3", &old),
        at(110)
    ));
    assert_eq!(state.network.in_flight(), 1);
}

#[test]
fn a_removed_frames_requests_are_not_the_pages_activity() {
    let events = recorded();
    let now = Instant::now();
    let (mut state, _) = replay(&events, now);
    let main_id = state.main_frame.clone().expect("main frame id");
    let (child_id, child_loader) = state
        .frames
        .iter()
        .find(|(id, _)| **id != main_id)
        .and_then(|(id, f)| Some((id.clone(), f.loader_id.clone()?)))
        .expect("the iframe and its document");
    state.apply(
        None,
        "Network.requestWillBeSent",
        &request(&events, "CHILD.1", &child_loader),
        now,
    );
    assert_eq!(state.network.in_flight(), 1);
    // The iframe is removed: its fetch's end may never be reported.
    let detached = raw(&format!(r#"{{"frameId":"{child_id}","reason":"remove"}}"#));
    assert!(state.apply(None, "Page.frameDetached", &detached, now));
    assert_eq!(state.network.in_flight(), 0);
}

/// WebMCP (`page/webmcp.rs`): the tools Chromium 156 reported for `webmcp.html` (the events as
/// recorded, stack traces left out), removed by `toolsRemoved`, and forgotten unannounced when
/// their frame commits another document, as Chromium sends no `toolsRemoved` then.
#[test]
fn webmcp_tools_follow_their_events_and_their_frames_documents() {
    let now = Instant::now();
    let mut state = PageState::default();
    let navigated = |loader: &str| {
        raw(&format!(
            r#"{{"frame":{{"id":"MAIN","loaderId":"{loader}","url":"http://127.0.0.1:8799/webmcp.html","domainAndRegistry":"","securityOrigin":"http://127.0.0.1:8799","mimeType":"text/html","secureContextType":"SecureLocalhost","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]}},"type":"Navigation"}}"#
        ))
    };
    state.apply(None, "Page.frameNavigated", &navigated("L1"), now);
    let added = raw(
        r#"{"tools":[{"name":"add_to_cart","description":"Add an item to the cart","inputSchema":{"type":"object","properties":{"item":{"type":"string"}},"required":["item"]},"annotations":{"readOnly":false,"untrustedContent":false,"consequential":true,"debugging":false},"frameId":"MAIN"}]}"#,
    );
    let declared = raw(
        r#"{"tools":[{"name":"search_products","description":"Search the catalogue by keyword","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Query"}},"required":["query"]},"annotations":{"autosubmit":true},"frameId":"MAIN","backendNodeId":2}]}"#,
    );
    let framed = raw(
        r#"{"tools":[{"name":"frame_tool","description":"A tool of the frame","frameId":"CHILD"}]}"#,
    );
    assert!(state.apply(None, "WebMCP.toolsAdded", &added, now));
    assert!(state.apply(None, "WebMCP.toolsAdded", &declared, now));
    assert!(state.apply(None, "WebMCP.toolsAdded", &framed, now));
    let names = |state: &PageState| -> Vec<String> {
        state
            .webmcp
            .tools
            .iter()
            .map(|(_, t)| t.name.clone())
            .collect()
    };
    assert_eq!(
        names(&state),
        ["add_to_cart", "search_products", "frame_tool"]
    );
    let (_, add) = &state.webmcp.tools[0];
    assert!(add.consequential && !add.read_only && !add.declarative);
    assert!(state.webmcp.tools[1].1.declarative);
    assert_eq!(state.webmcp.tools[2].1.input_schema, None);
    // The same name in the same frame replaces, never duplicates.
    assert!(state.apply(None, "WebMCP.toolsAdded", &added, now));
    assert_eq!(
        names(&state),
        ["search_products", "frame_tool", "add_to_cart"]
    );
    let removed = raw(r#"{"tools":[{"name":"search_products","frameId":"MAIN"}]}"#);
    assert!(state.apply(None, "WebMCP.toolsRemoved", &removed, now));
    assert_eq!(names(&state), ["frame_tool", "add_to_cart"]);
    // The child frame goes: its tool with it; a reload of the main frame takes the rest.
    let version = state.webmcp.version;
    let detached = raw(r#"{"frameId":"CHILD","reason":"remove"}"#);
    state.apply(None, "Page.frameDetached", &detached, now);
    assert_eq!(names(&state), ["add_to_cart"]);
    assert_eq!(state.webmcp.version, version + 1);
    // A frame inside the main frame, whose tools go when the main frame's document does
    // (Chromium detaches nothing then).
    let attached = raw(r#"{"frameId":"SUB","parentFrameId":"MAIN"}"#);
    state.apply(None, "Page.frameAttached", &attached, now);
    let sub = raw(r#"{"tools":[{"name":"sub_tool","description":"","frameId":"SUB"}]}"#);
    assert!(state.apply(None, "WebMCP.toolsAdded", &sub, now));
    assert_eq!(names(&state), ["add_to_cart", "sub_tool"]);
    state.apply(None, "Page.frameNavigated", &navigated("L2"), now);
    assert!(names(&state).is_empty());
    // An event that does not decode changes nothing.
    assert!(!state.apply(None, "WebMCP.toolsAdded", &raw(r#"{"tools":7}"#), now));
}
