//! The page tools one by one, each a transcript against fixture pages: navigate (its status,
//! title and the quiet period after load), click and fill with their diffs and stale refs,
//! snapshots, dialogs, eval, tabs and popups, the element tools, what a failed expect or
//! select says was there, that the read-only tools change nothing, and `chromate
//! bench-snapshot`.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use chromate_tests::{procs, McpClient};
use serde_json::{json, Value};

use super::{data_url, start_mcp, start_mcp_with_args, tripwire_of};
use crate::util::{chromate_binary, closed_port, fixtures, ref_of};

#[test]
fn mcp_navigate_reports_url_title_and_status_and_observes_the_page() {
    let server = fixtures();
    let mut mcp = start_mcp();

    let (status, _) = mcp.ok("browser_status", json!({}));
    assert_eq!(status["ready"], json!(false), "status never launches");
    let (pages, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(pages, json!({ "pages": [], "count": 0, "active": null }));
    assert_eq!(mcp.browser_pid(), None, "page list never launches");

    let url = server.url("login.html");
    let (result, observation) = mcp.ok("browser_navigate", json!({ "url": url }));
    assert_eq!(
        result,
        json!({ "url": url, "title": "Sign in — Acme", "status": 200 })
    );
    let observation = observation.unwrap_or_default();
    assert!(
        observation.starts_with(&format!("page: Sign in — Acme — {url}\n")),
        "the first observation is the full snapshot: {observation}"
    );
    assert!(observation.contains("e1: "), "{observation}");

    // 4xx is no error.
    let missing = server.url("status/404");
    let (result, _) = mcp.ok("browser_navigate", json!({ "url": missing }));
    assert_eq!(result["status"], json!(404));

    // A data: document did not come over HTTP.
    let (result, _) = mcp.ok(
        "browser_navigate",
        json!({ "url": data_url("<title>t</title>") }),
    );
    assert_eq!(
        (result["title"].clone(), result["status"].clone()),
        (json!("t"), json!(null))
    );

    let error = mcp.err("browser_navigate", json!({ "url": "example.com" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(error["detail"]["argument"], json!("url"));

    let refused = format!("http://127.0.0.1:{}/", closed_port());
    let error = mcp.err("browser_navigate", json!({ "url": refused }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"), "{error}");
    assert_eq!(error["detail"]["url"], json!(refused));
    assert!(
        error["detail"]["netError"]
            .as_str()
            .is_some_and(|e| e.starts_with("net::ERR_")),
        "{error}"
    );
    assert!(error["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("navigate: ")));

    let hang = server.url("hang");
    let error = mcp.err(
        "browser_navigate",
        json!({ "url": hang, "timeout_ms": 500 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT_WAITING_LOAD"), "{error}");
    assert_eq!(
        (
            error["detail"]["state"].clone(),
            error["detail"]["timeout"].clone()
        ),
        (json!("load"), json!(500))
    );

    let (status, _) = mcp.ok("browser_status", json!({}));
    assert_eq!(status["ready"], json!(true));
    assert_eq!(status["mode"], json!("launch"));
    assert_eq!(status["pageCount"], json!(1));
    assert_eq!(status["viewport"], json!({ "width": 1280, "height": 800 }));
    assert!(status["browserVersion"].is_string(), "{status}");
    let pid = status["browserPid"]
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok());
    assert!(pid.is_some_and(procs::is_alive), "{status}");
    assert!(
        pid.is_some_and(|pid| procs::descendants(mcp.pid()).contains(&pid)),
        "the browser is a descendant of the server"
    );
}

#[test]
fn mcp_click_and_fill_observe_diffs_and_refs_go_stale_with_a_recovery_snapshot() {
    let mut mcp = start_mcp();
    let page = data_url(
        "<title>Refs</title>\
         <button id=go onclick=\"this.textContent='Done'\">Go</button>\
         <button id=bye onclick=\"this.remove()\">Bye</button>\
         <input id=q aria-label=Query>",
    );
    let (_, observation) = mcp.ok("browser_navigate", json!({ "url": page }));
    let observation = observation.unwrap_or_default();
    let go = ref_of(&observation, "\"Go\"");
    let bye = ref_of(&observation, "\"Bye\"");

    // A bare ref this session issued works as ref=eN and is echoed so.
    let (result, observation) = mcp.ok("browser_click", json!({ "selector": go }));
    assert_eq!(
        result,
        json!({ "ok": true, "selector": format!("ref={go}") })
    );
    let observation = observation.unwrap_or_default();
    assert!(observation.starts_with("page: Refs — "), "{observation}");
    assert!(
        observation.contains(&format!("\n- {go}: button \"Go\" #go")),
        "{observation}"
    );
    assert!(
        observation.contains(&format!("\n+ {go}: button \"Done\" #go")),
        "{observation}"
    );

    let (result, observation) = mcp.ok("browser_fill", json!({ "selector": "#q", "value": "abc" }));
    assert_eq!(result, json!({ "ok": true, "selector": "#q" }));
    assert!(
        observation.unwrap_or_default().contains("value=\"abc\""),
        "the diff shows the new value"
    );
    let (read, _) = mcp.ok(
        "browser_read",
        json!({ "field": "value", "selector": "#q" }),
    );
    assert_eq!(read["value"], json!("abc"));

    // Nothing changed: header plus "(no a11y changes)", then the tripwire.
    let (_, observation) = mcp.ok("browser_advanced_eval", json!({ "js": "1 + 1" }));
    let observation = observation.unwrap_or_default();
    assert!(
        observation.contains("\n(no a11y changes)\nerrors: 0 (logCursor "),
        "an unchanged page says so: {observation}"
    );

    let error = mcp.err("browser_click", json!({ "selector": "#nope" }));
    assert_eq!(error["code"], json!("NO_MATCH"));
    assert_eq!(
        error["message"],
        json!("click: no element matches css=#nope")
    );
    assert_eq!(error["detail"]["selector"], json!("css=#nope"));

    let error = mcp.err("browser_click", json!({ "selector": "e9999" }));
    assert_eq!(error["code"], json!("BARE_REF"));
    assert_eq!(error["detail"], json!({ "ref": "e9999" }));

    let error = mcp.err(
        "browser_fill",
        json!({ "selector": "#go", "value": "x", "timeout_ms": 500 }),
    );
    assert_eq!(error["code"], json!("NOT_EDITABLE"), "{error}");

    mcp.ok("browser_click", json!({ "selector": bye }));
    let result = mcp.call_result("browser_click", json!({ "selector": bye }));
    let error = &result["structuredContent"]["error"];
    assert_eq!(error["code"], json!("STALE_REF"), "{result}");
    assert_eq!(error["detail"], json!({ "ref": bye, "reason": "detached" }));
    let recovery = error["recoverySnapshot"].as_str().unwrap_or_default();
    assert!(recovery.starts_with("page: Refs — "), "{recovery}");
    assert!(!recovery.contains("\"Bye\""), "{recovery}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("\nrecovery snapshot:\npage: Refs"), "{text}");

    // The recovery snapshot is the baseline: its refs work on the next call.
    let done = ref_of(recovery, "\"Done\"");
    assert_eq!(done, go, "refs are kept while the element stays");
    mcp.ok(
        "browser_click",
        json!({ "selector": format!("ref={done}") }),
    );

    mcp.ok(
        "browser_navigate",
        json!({ "url": data_url("<p>elsewhere</p>") }),
    );
    let error = mcp.err("browser_click", json!({ "selector": go }));
    assert_eq!(error["code"], json!("STALE_REF"));
    assert_eq!(error["detail"]["reason"], json!("document-changed"));

    // A container ref fails at once and points at the field inside it (docs/error-codes.md).
    let (_, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": data_url("<form aria-label=Login><input aria-label=User></form>") }),
    );
    let observation = observation.unwrap_or_default();
    let form = ref_of(&observation, "form (container)");
    let user = ref_of(&observation, "\"User\"");
    let error = mcp.err("browser_fill", json!({ "selector": form, "value": "ann" }));
    assert_eq!(error["code"], json!("NOT_EDITABLE"));
    assert_eq!(
        error["message"],
        json!(format!(
            "fill: ref={form} is a form container, not an editable field"
        ))
    );
    assert_eq!(error["hint"], json!(format!("fill ref={user} (\"User\")")));
    assert_eq!(
        error["detail"],
        json!({ "target": format!("ref={form}"), "role": "form", "alternative": user })
    );
}

#[test]
fn mcp_snapshot_is_the_baseline_and_scoped_snapshots_keep_it() {
    // Structured results, for the snapshot's fields beside its rendering.
    let mut mcp = start_mcp_with_args(&["--structured-content"], &[]);
    let page = data_url(
        "<title>Snap</title><nav aria-label=Menu><a href=#a>A</a></nav>\
         <button onclick=\"document.title='Snap2'\">T</button>",
    );
    mcp.ok("browser_navigate", json!({ "url": page }));
    let result = mcp.call_result("browser_snapshot", json!({}));
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let snapshot = &result["structuredContent"]["result"];
    assert!(text.starts_with("page: Snap — data:"), "{text}");
    assert_eq!(snapshot["title"], json!("Snap"));
    assert!(snapshot["documentId"].is_string());
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(snapshot["lines"], json!(lines));
    assert_eq!(
        result["content"].as_array().map(Vec::len),
        Some(1),
        "no observation"
    );
    let revision = snapshot["revision"].as_u64().unwrap_or_default();

    let (scoped, _) = mcp.ok("browser_snapshot", json!({ "selector": "nav" }));
    assert_eq!(scoped["revision"], json!(revision + 1));
    assert!(
        scoped["lines"].to_string().contains("link \\\"A\\\""),
        "{scoped}"
    );
    assert!(!scoped["lines"].to_string().contains("button"), "{scoped}");

    let error = mcp.err("browser_snapshot", json!({ "selector": "#nothing" }));
    assert_eq!(error["code"], json!("NO_MATCH"));
    // A scope chromate can tell is malformed is parsed once, where it enters, and fails as an
    // element tool's selector does; so does the locators tool's.
    for tool in ["browser_snapshot", "browser_locators"] {
        let error = mcp.err(tool, json!({ "selector": "ref=seven" }));
        assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{tool}: {error}");
        let verb = tool.trim_start_matches("browser_");
        assert_eq!(
            error["message"],
            json!(format!(
                "{verb}: invalid selector \"ref=seven\": ref= needs e<N>, got \"seven\""
            )),
            "{tool}"
        );
    }

    // The next observation diffs against the full snapshot, not the scoped one.
    let (_, observation) = mcp.ok("browser_advanced_eval", json!({ "js": "document.body.append(Object.assign(document.createElement('button'), {textContent: 'New'}))" }));
    let observation = observation.unwrap_or_default();
    assert!(observation.contains("\n+ e"), "{observation}");
    assert!(observation.contains("button \"New\""), "{observation}");
    assert!(!observation.contains("link \"A\""), "{observation}");

    // Paging: one line at a time, each page after the `next` of the one before, reads the
    // whole snapshot (the page added a button since).
    let mut paged = Vec::new();
    let mut after = None;
    for _ in 0..10 {
        let mut args = json!({ "max_lines": 1 });
        if let Some(next) = &after {
            args["after"] = json!(next);
        }
        let (piece, _) = mcp.ok("browser_snapshot", args);
        paged.extend(piece["lines"].as_array().cloned().unwrap_or_default());
        match piece.get("next") {
            Some(next) => after = Some(next.clone()),
            None => break,
        }
    }
    let (whole, _) = mcp.ok("browser_snapshot", json!({}));
    assert_eq!(json!(paged), whole["lines"], "{paged:?}");
    let error = mcp.err("browser_snapshot", json!({ "after": "link" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
}

#[test]
fn mcp_dialogs_block_page_tools_until_answered() {
    let server = fixtures();
    let mut mcp = start_mcp_with_args(&["--structured-content"], &[]);
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("dialogs.html") }),
    );

    let error = mcp.err("browser_dialog", json!({ "action": "accept" }));
    assert_eq!(error["code"], json!("STATE_INVALID"));
    let (inspect, _) = mcp.ok("browser_dialog", json!({ "action": "inspect" }));
    assert_eq!(inspect, json!({ "open": false, "message": "" }));

    let (result, observation) = mcp.ok("browser_click", json!({ "selector": "#confirm-button" }));
    assert_eq!(result["ok"], json!(true));
    let observation = observation.unwrap_or_default();
    assert!(
        observation.starts_with(
            "dialog open: Delete everything?\n(snapshot skipped — accept or dismiss it first)\n"
        ),
        "{observation}"
    );
    assert_eq!(
        tripwire_of(Some(&observation)).0,
        0,
        "the tripwire stays last"
    );

    let error = mcp.err("browser_read", json!({ "selector": "#result" }));
    assert_eq!(error["code"], json!("STATE_INVALID"));
    assert_eq!(
        error["message"],
        json!("read: a dialog is open: Delete everything?")
    );
    let error = mcp.err("browser_navigate", json!({ "url": server.url("nav.html") }));
    assert_eq!(error["code"], json!("STATE_INVALID"));
    let error = mcp.err("browser_click", json!({ "selector": "ref=e1" }));
    assert_eq!(
        error["message"],
        json!("click: cannot resolve ref=e1 while a dialog is open: Delete everything?")
    );

    let result = mcp.call_result("browser_snapshot", json!({}));
    assert_eq!(
        result["content"][0]["text"],
        json!("dialog open: Delete everything? — accept or dismiss it first")
    );
    let snapshot = &result["structuredContent"]["result"];
    assert_eq!(snapshot["lines"], json!([]));
    assert_eq!(
        snapshot["dialog"],
        json!({ "type": "confirm", "message": "Delete everything?" })
    );

    let (inspect, _) = mcp.ok("browser_dialog", json!({ "action": "inspect" }));
    assert_eq!(
        inspect,
        json!({ "open": true, "type": "confirm", "message": "Delete everything?" })
    );
    let (answer, observation) = mcp.ok("browser_dialog", json!({ "action": "dismiss" }));
    assert_eq!(
        answer,
        json!({ "ok": true, "action": "dismiss", "type": "confirm" })
    );
    assert!(observation.is_some_and(|text| text.starts_with("page: Dialogs — ")));
    let (read, _) = mcp.ok("browser_read", json!({ "selector": "#result" }));
    assert_eq!(read["text"], json!("cancelled"));

    mcp.ok("browser_click", json!({ "selector": "#prompt-button" }));
    let (inspect, _) = mcp.ok("browser_dialog", json!({ "action": "inspect" }));
    assert_eq!(inspect["defaultValue"], json!("guest"));
    let (answer, _) = mcp.ok(
        "browser_dialog",
        json!({ "action": "accept", "text": "ann" }),
    );
    assert_eq!(answer["type"], json!("prompt"));
    let (read, _) = mcp.ok("browser_read", json!({ "selector": "#result" }));
    assert_eq!(read["text"], json!("name: ann"));
}

#[test]
fn mcp_eval_takes_expressions_and_function_bodies_and_reports_errors() {
    // A response cap above the 32 KiB result bound, so eval's own truncation shows.
    let mut mcp = start_mcp_with_args(
        &["--structured-content"],
        &[("CHROMATE_MCP_MAX_RESPONSE_BYTES", "200000")],
    );
    mcp.ok(
        "browser_navigate",
        json!({ "url": data_url("<title>Eval</title>") }),
    );

    let (result, observation) = mcp.ok("browser_advanced_eval", json!({ "js": "document.title" }));
    assert_eq!(result, json!({ "result": "Eval" }));
    assert!(observation.is_some(), "eval carries an observation");
    let (result, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "const a = 2; return a * 21" }),
    );
    assert_eq!(result, json!({ "result": 42 }));
    let (result, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "Promise.resolve({b: [1, 'x']})" }),
    );
    assert_eq!(result, json!({ "result": { "b": [1, "x"] } }));
    let (result, _) = mcp.ok("browser_advanced_eval", json!({ "js": "undefined" }));
    assert_eq!(result, json!({ "result": null }));

    let error = mcp.err(
        "browser_advanced_eval",
        json!({ "js": "throw new TypeError('boom')" }),
    );
    assert_eq!(error["code"], json!("EVAL_THREW"));
    assert!(
        error["detail"]["exception"]
            .as_str()
            .is_some_and(|e| e.contains("TypeError: boom")),
        "{error}"
    );
    let error = mcp.err("browser_advanced_eval", json!({ "js": "document.body" }));
    assert_eq!(error["code"], json!("EVAL_BAD_ARG"));
    assert_eq!(error["detail"]["returnedType"], json!("node"));
    let error = mcp.err(
        "browser_advanced_eval",
        json!({ "js": "new Promise(() => {})", "timeout_ms": 200 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT"));
    assert_eq!(error["detail"]["timeout"], json!(200));

    let (result, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "'x'.repeat(40000)" }),
    );
    let bounded = &result["result"];
    assert_eq!(bounded["truncated"], json!(true), "{bounded}");
    assert_eq!(bounded["totalBytes"], json!(40002));
    assert!(bounded["retainedBytes"]
        .as_u64()
        .is_some_and(|n| n <= 32 * 1024));
}

#[test]
fn issue_12_eval_results_convert_as_json_stringify_does() {
    let mut mcp = start_mcp();
    let (date, _) = mcp.ok("browser_advanced_eval", json!({ "js": "new Date(0)" }));
    assert_eq!(date, json!({ "result": "1970-01-01T00:00:00.000Z" }));
    let (nested, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "return {when: new Date(0), map: new Map([[1, 2]])}" }),
    );
    assert_eq!(
        nested,
        json!({ "result": { "when": "1970-01-01T00:00:00.000Z", "map": {} } })
    );
}

#[test]
fn issue_12_a_malformed_selector_error_is_chromates_and_has_no_final_period() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("selectors.html") }),
    );
    let error = mcp.err("browser_click", json!({ "selector": "css=[" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(
        error["message"],
        json!("click: invalid selector css=[: not a valid CSS selector")
    );
    assert_eq!(error["detail"]["selector"], json!("css=["), "{error}");
    let cdp_message = error["detail"]["cdpMessage"].as_str().unwrap_or_default();
    assert!(cdp_message.contains("not a valid selector"), "{error}");
}

/// `browser_page list` until it counts `count` tabs, for at most 10 s: a page-opened tab
/// attaches on its own schedule (each list is a round trip, so nothing sleeps).
fn list_until_count(mcp: &mut McpClient, count: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
        if list["count"] == json!(count) || Instant::now() >= deadline {
            return list;
        }
    }
}

#[test]
fn issue_12_a_target_blank_tab_is_listed_and_not_activated() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("popup.html") }),
    );
    mcp.ok("browser_click", json!({ "selector": "#blank-link" }));
    let list = list_until_count(&mut mcp, 2);
    assert_eq!(list["count"], json!(2), "{list}");
    assert_eq!(list["active"], json!("p1"), "{list}");
    assert_eq!(list["pages"][1]["id"], json!("p2"), "{list}");
    assert_eq!(list["pages"][1]["active"], json!(false), "{list}");
}

#[test]
fn mcp_tabs_open_select_close_list_popups_and_never_reuse_ids() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("popup.html") }),
    );
    mcp.ok("browser_click", json!({ "selector": "#open-button" }));
    let list = list_until_count(&mut mcp, 2);
    assert_eq!(list["count"], json!(2), "{list}");
    assert_eq!(
        list["active"],
        json!("p1"),
        "popups are never activated on their own"
    );
    assert_eq!(list["pages"][0]["id"], json!("p1"));
    assert_eq!(list["pages"][1]["id"], json!("p2"));
    assert_eq!(list["pages"][1]["active"], json!(false));

    let nav = server.url("nav.html");
    let (opened, _) = mcp.ok("browser_page", json!({ "action": "open", "url": nav }));
    assert_eq!(
        opened,
        json!({ "ok": true, "action": "open", "id": "p3", "url": nav })
    );
    let (status, _) = mcp.ok("browser_status", json!({}));
    assert_eq!(status["activeUrl"], json!(nav));

    let (selected, _) = mcp.ok("browser_page", json!({ "action": "select", "target": "0" }));
    assert_eq!(selected["id"], json!("p1"));
    let error = mcp.err("browser_page", json!({ "action": "select", "target": "9" }));
    assert_eq!(error["code"], json!("NO_MATCH"));
    assert_eq!(
        error["message"],
        json!("page select: no page at index 9 (3 open)")
    );

    let (closed, _) = mcp.ok("browser_page", json!({ "action": "close", "target": "p3" }));
    assert_eq!(
        closed,
        json!({ "ok": true, "action": "close", "id": "p3", "remaining": 2 })
    );
    let (closed, _) = mcp.ok("browser_page", json!({ "action": "close" }));
    assert_eq!(closed["id"], json!("p1"));
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(
        list["active"],
        json!("p2"),
        "the lowest-index remaining tab becomes active"
    );

    let pid = mcp.browser_pid();
    let (closed, _) = mcp.ok("browser_page", json!({ "action": "close" }));
    assert_eq!(closed["remaining"], json!(0));
    let (status, _) = mcp.ok("browser_status", json!({}));
    assert_eq!(
        status["ready"],
        json!(false),
        "closing the last tab closes the browser"
    );
    if let Some(pid) = pid {
        assert!(!procs::is_alive(pid), "the browser process is gone");
    }

    // The next page call relaunches; ids continue.
    mcp.ok("browser_navigate", json!({ "url": nav }));
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(list["pages"][0]["id"], json!("p4"), "{list}");
}

#[test]
fn mcp_element_tools_act_read_wait_and_assert() {
    let mut mcp = start_mcp();
    let page = data_url(
        "<title>Controls</title>\
         <input type=checkbox id=c aria-label=Agree>\
         <select id=s aria-label=Size><option value=a>Small</option><option value=b>Big</option></select>\
         <button id=h onmouseenter=\"this.textContent='Hovered'\">Hover me</button>\
         <input id=k aria-label=Keys onkeydown=\"document.getElementById('log').textContent+=event.key+' '\">\
         <p id=log></p><p id=hidden style=display:none>secret</p>\
         <input type=file id=f aria-label=File>\
         <button id=off disabled>Off</button>",
    );
    mcp.ok("browser_navigate", json!({ "url": page }));

    let (result, observation) = mcp.ok(
        "browser_element",
        json!({ "action": "check", "selector": "#c" }),
    );
    assert_eq!(
        result,
        json!({ "ok": true, "selector": "#c", "action": "check", "checked": true })
    );
    assert!(observation
        .unwrap_or_default()
        .contains("checkbox \"Agree\" #c (checked)"));
    let (result, _) = mcp.ok(
        "browser_element",
        json!({ "action": "select", "selector": "#s", "value": "Big" }),
    );
    assert_eq!(result["value"], json!("b"));
    let error = mcp.err(
        "browser_element",
        json!({ "action": "select", "selector": "#s", "value": "Huge" }),
    );
    assert_eq!(error["code"], json!("NO_MATCH"), "{error}");

    let (result, observation) = mcp.ok("browser_hover", json!({ "selector": "#h" }));
    assert_eq!(result, json!({ "ok": true, "selector": "#h" }));
    assert!(
        observation.unwrap_or_default().contains("+ "),
        "hover changed the page"
    );

    let (result, _) = mcp.ok("browser_press", json!({ "key": "a", "selector": "#k" }));
    assert_eq!(result, json!({ "ok": true, "key": "a" }));
    let (result, _) = mcp.ok("browser_type", json!({ "text": "bc" }));
    assert_eq!(result, json!({ "ok": true, "length": 2 }));
    let (result, _) = mcp.ok("browser_key", json!({ "action": "down", "key": "Shift" }));
    assert_eq!(
        result,
        json!({ "ok": true, "action": "down", "key": "Shift" })
    );
    mcp.ok("browser_key", json!({ "action": "up", "key": "Shift" }));
    let (read, _) = mcp.ok(
        "browser_read",
        json!({ "selector": "#k", "field": "value" }),
    );
    assert_eq!(read["value"], json!("abc"));
    let (read, _) = mcp.ok("browser_read", json!({ "selector": "#log" }));
    assert_eq!(read["text"], json!("a b c Shift"), "{read}");
    let error = mcp.err("browser_press", json!({ "key": "NoSuchKey" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));

    let (result, _) = mcp.ok(
        "browser_mouse",
        json!({ "action": "click", "x": 3, "y": 4 }),
    );
    assert_eq!(
        result,
        json!({ "ok": true, "action": "click", "x": 3.0, "y": 4.0, "button": "left" })
    );

    let (found, _) = mcp.ok("browser_find", json!({ "selector": "button", "all": true }));
    assert_eq!(found["count"], json!(2));
    assert_eq!(found["matches"][1]["tag"], json!("button"));
    let error = mcp.err("browser_find", json!({ "selector": "table" }));
    assert_eq!(error["code"], json!("NO_MATCH"));
    let (exists, _) = mcp.ok("browser_exists", json!({ "selector": "table" }));
    assert_eq!(exists, json!({ "exists": false, "count": 0 }));

    let (waited, _) = mcp.ok(
        "browser_wait",
        json!({ "selector": "#hidden", "state": "hidden" }),
    );
    assert_eq!(
        waited,
        json!({ "ok": true, "state": "hidden", "selector": "#hidden" })
    );
    let error = mcp.err(
        "browser_wait",
        json!({ "selector": "#hidden", "timeout_ms": 200 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT_WAITING_VISIBLE"));
    let (waited, _) = mcp.ok("browser_wait", json!({ "state": "load" }));
    assert_eq!(waited, json!({ "ok": true, "state": "load" }));
    let error = mcp.err(
        "browser_click",
        json!({ "selector": "#off", "timeout_ms": 200 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT_WAITING_STATE"));
    assert_eq!(error["detail"]["state"], json!("enabled"));

    let (expect, _) = mcp.ok(
        "browser_expect",
        json!({ "what": "text", "selector": "#h", "expected": "Hovered" }),
    );
    assert_eq!(expect["ok"], json!(true));
    let error = mcp.err(
        "browser_expect",
        json!({ "what": "text", "selector": "#h", "expected": "Nope", "timeout_ms": 200 }),
    );
    assert_eq!(error["code"], json!("EXPECT_MISMATCH"));
    assert_eq!(error["detail"]["matcher"], json!("text"));
    assert_eq!(error["detail"]["actual"], json!("Hovered"));
    let (expect, _) = mcp.ok(
        "browser_expect",
        json!({ "what": "url", "contains": "data:text/html" }),
    );
    assert_eq!(expect["matcher"], json!("url"));
    let error = mcp.err(
        "browser_expect",
        json!({ "what": "visible", "selector": "#hidden", "timeout_ms": 200 }),
    );
    assert_eq!(error["detail"]["actual"], json!("hidden"));

    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let (uploaded, _) = mcp.ok(
        "browser_upload",
        json!({ "selector": "#f", "files": [file] }),
    );
    assert_eq!(
        uploaded,
        json!({ "ok": true, "selector": "#f", "count": 1 })
    );
    let error = mcp.err(
        "browser_upload",
        json!({ "selector": "#h", "files": [file] }),
    );
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");

    let (locators, _) = mcp.ok("browser_locators", json!({ "selector": "#c" }));
    assert!(locators["best"].is_string(), "{locators}");
    assert!(locators["candidates"]
        .as_array()
        .is_some_and(|c| !c.is_empty()));
}

/// A page that records everything a tool could change: DOM mutations, scrolling, focus, input
/// and pointer events, and navigation.
const WATCHED_PAGE: &str = r##"<!doctype html><title>watched</title>
<main style="height:3000px"><h1>Watched</h1>
<label>Name <input id="name" value="ann"></label>
<button id="go" data-testid="go">Go</button><a href="#elsewhere">link</a>
<p id="status" role="status">ready</p><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="">
</main>
<script>
window.changes = [];
new MutationObserver(m => window.changes.push('mutation:' + m.length)).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
for (const t of ['scroll', 'focusin', 'focusout', 'input', 'change', 'keydown', 'pointerdown', 'pointermove', 'mousedown', 'click', 'hashchange', 'beforeunload'])
  window.addEventListener(t, () => window.changes.push(t), true);
</script>"##;

#[test]
fn mcp_read_only_tools_never_change_the_page() {
    let mut mcp = start_mcp_with_args(&["--structured-content"], &[]);
    mcp.ok("browser_navigate", json!({ "url": data_url(WATCHED_PAGE) }));
    let read_only: Vec<(&str, Value)> = vec![
        (
            "browser_find",
            json!({ "selector": "role=button", "all": true }),
        ),
        ("browser_exists", json!({ "selector": "#go" })),
        (
            "browser_wait",
            json!({ "selector": "#status", "state": "visible" }),
        ),
        (
            "browser_read",
            json!({ "field": "text", "selector": "#status" }),
        ),
        (
            "browser_read",
            json!({ "field": "value", "selector": "#name" }),
        ),
        (
            "browser_read",
            json!({ "field": "is", "selector": "#go", "what": "enabled" }),
        ),
        (
            "browser_expect",
            json!({ "what": "text", "selector": "#status", "expected": "ready" }),
        ),
        (
            "browser_expect",
            json!({ "what": "visible", "selector": "#go" }),
        ),
        ("browser_snapshot", json!({})),
        ("browser_locators", json!({ "selector": "#go" })),
        ("browser_a11y", json!({})),
        ("browser_logs", json!({})),
        ("browser_status", json!({})),
        ("browser_screenshot", json!({})),
    ];
    for (tool, arguments) in &read_only {
        mcp.ok(tool, arguments.clone());
    }
    // Reading the record is itself script: it changes nothing the page listens for.
    let (result, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "({changes: window.changes, url: location.href, scrollY, focused: document.activeElement === document.body})" }),
    );
    let record = &result["result"];
    assert_eq!(
        record["changes"],
        json!([]),
        "a read-only tool changed the page: {record}"
    );
    assert_eq!(record["scrollY"], json!(0), "{record}");
    assert_eq!(record["focused"], json!(true), "{record}");
    assert!(
        record["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("data:")),
        "{record}"
    );
}

#[test]
fn bench_snapshot_measures_any_file_and_exits_cleanly() {
    let page = chromate_tests::server::pages_dir().join("bench-2000.html");
    let output = Command::new(chromate_binary())
        .args([
            "bench-snapshot",
            &page.display().to_string(),
            "--detail",
            "--repeat",
            "3",
        ])
        .output()
        .expect("run bench-snapshot");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for field in [
        "first snapshot:",
        "next 3: median",
        "bytes:",
        "tokens (estimate, bytes / 4):",
        "refs:",
        "snapshot + diff after a small change: median",
    ] {
        assert!(stdout.contains(field), "{field} missing from:\n{stdout}");
    }
    let bytes: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("bytes: "))
        .and_then(|b| b.trim().parse().ok())
        .expect("a byte count");
    assert!(
        bytes > 1000 && bytes <= 8192,
        "default view of a 2,000-element page: {bytes} bytes"
    );
    let bad = Command::new(chromate_binary())
        .args(["bench-snapshot", "/no/such/page.html"])
        .output()
        .expect("run bench-snapshot");
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("neither a url nor a readable file"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

/// What an assertion or a select failure says was there (docs/tools.md#browser_expect--assert-page-state): `actual` is null when a text
/// check matched nothing, no-errors lists the first three errors in journal order, and a
/// missing option lists the options there are.
#[test]
fn mcp_expect_and_select_failures_say_what_was_there() {
    let mut mcp = start_mcp();
    let page = data_url(
        "<title>Was</title><script>console.error('first')</script>\
         <select id=s aria-label=Colour><option value=r>Red</option><option>Green</option></select>",
    );
    mcp.ok("browser_navigate", json!({ "url": page }));
    for text in ["second", "third", "fourth"] {
        mcp.ok(
            "browser_advanced_eval",
            json!({ "js": format!("console.error('{text}')") }),
        );
    }
    let error = mcp.err("browser_expect", json!({ "what": "no-errors" }));
    assert_eq!(error["code"], json!("EXPECT_MISMATCH"));
    assert_eq!(
        error["detail"]["actual"],
        json!({ "count": 4, "first": ["first", "second", "third"] }),
        "{error}"
    );

    let error = mcp.err(
        "browser_expect",
        json!({ "what": "text", "selector": "#nothing", "expected": "x", "timeout_ms": 0 }),
    );
    assert_eq!(error["code"], json!("EXPECT_MISMATCH"));
    assert_eq!(error["detail"]["actual"], Value::Null, "{error}");

    let error = mcp.err(
        "browser_element",
        json!({ "action": "select", "selector": "#s", "value": "Blue", "timeout_ms": 0 }),
    );
    assert_eq!(error["code"], json!("NO_MATCH"), "{error}");
    assert_eq!(
        error["detail"]["options"],
        json!(["Red", "Green"]),
        "{error}"
    );
    assert_eq!(
        error["message"],
        json!("select: no option \"Blue\" in css=#s (2 options)")
    );
}

/// Issue 20, item 8: the observation after navigate shows what the page's script fills in
/// right after `load` (two fetches answered 300 ms late, 75 result links).
#[test]
fn mcp_navigate_waits_for_the_quiet_period_after_load() {
    let server = fixtures();
    let mut mcp = start_mcp();
    let (_, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("late-results.html") }),
    );
    let observation = observation.unwrap_or_default();
    assert!(
        observation.contains("link \"Result 40\"") && observation.contains("In Names (75)"),
        "{observation}"
    );
}
