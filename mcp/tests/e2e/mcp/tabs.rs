//! Tabs for parallel agents (docs/mcp.md#tabs-for-parallel-agents): calls that name a `tab`, on
//! `tests/fixtures/pages/tabs-agent.html` in real Chromium. Two agents at once over one
//! connection with the Python SDK (`tests/clients/tabs.py`); batches whose steps name tabs; a
//! tab that closes while a call on it runs. Overlap is shown by ordering facts, never a clock.

use serde_json::{json, Value};

use super::{send_call, start_mcp};
use crate::util::fixtures;

/// The Python SDK drives two agents, each on its own tab, at once over one session: neither
/// sees the other's page, the active tab stays, the calls overlap, a ref of the wrong tab and
/// an unknown tab are refused; the browser is gone once the client exits.
#[test]
fn mcp_tabs_two_agents_at_once_over_one_connection_with_the_python_sdk() {
    let run = crate::util::python_stdio_client("tabs.py", &fixtures());
    run.assert_passed("python tabs", 10);
    run.assert_browser_gone();
}

/// Agent A's page in p1, then agent B's in p2, which is then the active tab.
fn open_agents_a_and_b(
    mcp: &mut chromate_tests::McpClient,
    server: &chromate_tests::FixtureServer,
) {
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("tabs-agent.html?agent=A") }),
    );
    let (opened, _) = mcp.ok(
        "browser_page",
        json!({ "action": "open", "url": server.url("tabs-agent.html?agent=B") }),
    );
    assert_eq!(opened["id"], json!("p2"));
}

/// browser_batch steps that name a tab run there and leave the active tab; a batch with `tab`
/// runs all its steps on that tab and observes it; a step naming another tab in such a batch
/// is refused before anything runs.
#[test]
fn mcp_tabs_batch_steps_name_their_tab() {
    let server = fixtures();
    let mut mcp = start_mcp();
    open_agents_a_and_b(&mut mcp, &server);
    mcp.ok(
        "browser_page",
        json!({ "action": "select", "target": "p1" }),
    );

    // Steps on p2 from a batch without tab: done there, the active tab untouched.
    let done = mcp.call_result(
        "browser_batch",
        json!({ "steps": [
            { "tool": "browser_fill", "arguments": { "selector": "#note", "value": "from-batch", "tab": "p2" } },
            { "tool": "browser_click", "arguments": { "selector": "#add", "tab": "p2" } },
        ] }),
    );
    assert!(done.get("isError").is_none(), "{done}");
    assert!(
        !done.to_string().contains("B item"),
        "a batch without tab observes the active tab only: {done}"
    );
    let call = mcp.call_result("browser_snapshot", json!({ "tab": "p2" }));
    let text = call["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("B item 1: from-batch"), "{text}");
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(list["active"], json!("p1"), "{list}");
    let call = mcp.call_result("browser_snapshot", json!({}));
    let text = call["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Agent A") && !text.contains("B item"),
        "{text}"
    );

    // A batch on p2: its steps there, its observation a diff of p2.
    let done = mcp.call_result(
        "browser_batch",
        json!({ "tab": "p2", "steps": [
            { "tool": "browser_fill", "arguments": { "selector": "#note", "value": "second" } },
            { "tool": "browser_click", "arguments": { "selector": "#add" } },
        ] }),
    );
    assert!(done.get("isError").is_none(), "{done}");
    let observation = done["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        observation.contains("B item 2: second"),
        "the batch observes its tab: {done}"
    );
    assert!(!observation.contains("Agent A"), "{observation}");

    let error = mcp.err(
        "browser_batch",
        json!({ "tab": "p2", "steps": [
            { "tool": "browser_click", "arguments": { "selector": "#add", "tab": "p1" } },
        ] }),
    );
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
    assert_eq!(error["detail"]["step"], json!(0), "{error}");
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(list["active"], json!("p1"), "{list}");
}

/// A tab that closes while a call on it waits: the call ends with DRIVER_ERROR `tab-closed`
/// (not its 30 s timeout), and the tab is then unknown. The close is sent by a call on another
/// tab that runs while the wait runs (an ordering fact: the wait cannot end otherwise).
#[test]
fn mcp_tabs_a_tab_closed_while_a_call_on_it_runs_is_a_clear_error() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("tabs-agent.html?agent=A") }),
    );
    mcp.ok("browser_click", json!({ "selector": "#open-closer" }));
    // The popup's script has run once its title says so.
    mcp.ok(
        "browser_wait",
        json!({ "selector": "text=Agent C", "tab": "p2", "timeout_ms": 20000 }),
    );
    let waiting = send_call(
        &mut mcp,
        "browser_wait",
        json!({ "selector": "text=never shown", "state": "visible", "tab": "p2", "timeout_ms": 30000 }),
    );
    let closing = send_call(
        &mut mcp,
        "browser_click",
        json!({ "selector": "#close-popups", "tab": "p1" }),
    );
    let closed = mcp.response(&closing);
    assert!(closed["result"].get("isError").is_none(), "{closed}");
    let waited = mcp.response(&waiting);
    let error = &waited["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], json!("DRIVER_ERROR"), "{waited}");
    assert_eq!(error["detail"]["reason"], json!("tab-closed"), "{waited}");
    assert_eq!(error["detail"]["tab"], json!("p2"), "{waited}");
    let error = mcp.err("browser_snapshot", json!({ "tab": "p2" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
    assert_eq!(error["detail"]["allowed"], json!(["p1"]), "{error}");
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(list["active"], json!("p1"), "{list}");
}

/// browser_page `open` and `close` do not wait for a call running on another tab: while a wait
/// on p2 runs (it can only end at its 30 s timeout or when p2 closes), a tab opens and is
/// answered, then p2 is closed and answered, and the wait ends with DRIVER_ERROR
/// `tab-closed`; a call on p2 sent after the close comes after it (ordering facts, no clock).
#[test]
fn mcp_tabs_page_open_and_close_do_not_wait_for_calls_on_other_tabs() {
    let server = fixtures();
    let mut mcp = start_mcp();
    open_agents_a_and_b(&mut mcp, &server);
    let waiting = send_call(
        &mut mcp,
        "browser_wait",
        json!({ "selector": "text=never shown", "state": "visible", "tab": "p2", "timeout_ms": 30000 }),
    );
    let (opened, _) = mcp.ok(
        "browser_page",
        json!({ "action": "open", "url": server.url("tabs-agent.html?agent=C") }),
    );
    assert_eq!(opened["id"], json!("p3"), "{opened}");
    let is_waiting = |message: &Value| message["id"] == waiting;
    assert!(
        !mcp.take_stashed().iter().any(is_waiting),
        "the wait on p2 still runs while the open is answered"
    );
    let closing = send_call(
        &mut mcp,
        "browser_page",
        json!({ "action": "close", "target": "p2" }),
    );
    let after = send_call(&mut mcp, "browser_snapshot", json!({ "tab": "p2" }));
    let closed = mcp.response(&closing);
    assert!(closed["result"].get("isError").is_none(), "{closed}");
    let waited = mcp.response(&waiting);
    let error = &waited["result"]["structuredContent"]["error"];
    assert_eq!(error["detail"]["reason"], json!("tab-closed"), "{waited}");
    assert_eq!(error["detail"]["tab"], json!("p2"), "{waited}");
    let after = mcp.response(&after);
    let error = &after["result"]["structuredContent"]["error"];
    assert_eq!(error["detail"]["reason"], json!("unknown-tab"), "{after}");
    assert_eq!(error["detail"]["allowed"], json!(["p1", "p3"]), "{after}");
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(list["active"], json!("p3"), "{list}");
}

/// browser_page `open` with a URL does not hold the session while the page loads: once the
/// open reports it is waiting for its page (a document the server never answers), a call on
/// p1 forks, runs and is answered while the open still waits; the open then fails at its
/// timeout, its tab is closed again and p1 is active (ordering facts, no clock).
#[test]
fn mcp_tabs_page_open_with_a_url_does_not_hold_calls_on_other_tabs_while_it_loads() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("tabs-agent.html?agent=A") }),
    );
    let hang = server.url("hang");
    mcp.send(
        &json!({ "jsonrpc": "2.0", "id": "opening", "method": "tools/call", "params": {
        "name": "browser_page", "arguments": { "action": "open", "url": hang, "timeout_ms": 8000 },
        "_meta": { "progressToken": "open" } } }),
    );
    // Progress is sent about every second while a call runs; the open's says it is loading.
    let loading = format!("waiting for {hang} to load");
    loop {
        let message = mcp.recv();
        assert_ne!(
            message["id"],
            json!("opening"),
            "the open answered before it reported loading: {message}"
        );
        if message["params"]["message"] == json!(loading) {
            break;
        }
    }
    let snapshot = send_call(&mut mcp, "browser_snapshot", json!({ "tab": "p1" }));
    let answered = mcp.response(&snapshot);
    assert!(answered["result"].get("isError").is_none(), "{answered}");
    assert!(answered.to_string().contains("Agent A"), "{answered}");
    assert!(
        !mcp.take_stashed()
            .iter()
            .any(|m| m["id"] == json!("opening")),
        "the open still loads when the call on p1 is answered"
    );
    let opened = mcp.response(&json!("opening"));
    let error = &opened["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], json!("TIMEOUT_WAITING_LOAD"), "{opened}");
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(list["active"], json!("p1"), "{list}");
    assert_eq!(list["count"], json!(1), "{list}");
}
