//! The MCP server end to end: the real `chromate mcp` binary over stdio, driving real headless
//! Chromium, one server (and so one browser) per test.
//!
//! Each test is a transcript: tool calls with their `structuredContent` checked, the main
//! failure of each tool, and the observation after mutating tools. The shutdown tests prove by
//! PID that the server's browser (a descendant of the server process) is gone after stdin EOF
//! and after SIGTERM. The server is driven through the shared stdio client
//! ([`chromate_tests::McpClient`]): every read has a deadline; nothing sleeps.
//!
//! The binary is `target/<profile>/chromate` next to this test binary's `deps/` directory
//! ([`crate::util::chromate_binary`]); build it first with `cargo build -p chromate-mcp`
//! (`.ci/test.sh` does).

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use chromate_tests::{procs, McpClient, McpCommand, Response};
use serde_json::{json, Value};

use crate::util::{chromate_binary, closed_port, fixtures, ref_of};

/// How long one response may take (navigation waits are 30 s at most in these tests).
const DEADLINE: Duration = Duration::from_secs(60);

/// A running `chromate mcp` that launches the browser the caller names in `CHROMATE_BROWSER`.
fn start_mcp() -> McpClient {
    start_mcp_with(&[])
}

fn start_mcp_with(envs: &[(&str, &str)]) -> McpClient {
    start_mcp_with_args(&[], envs)
}

fn start_mcp_with_args(args: &[&str], envs: &[(&str, &str)]) -> McpClient {
    mcp_command(args, envs).spawn()
}

fn mcp_command(args: &[&str], envs: &[(&str, &str)]) -> McpCommand {
    McpCommand::new(chromate_binary())
        .args(args)
        .envs(envs)
        .keep_env("CHROMATE_BROWSER")
        .deadline(DEADLINE)
}

/// Tool calls as the transcripts check them.
trait Transcript {
    /// The whole `tools/call` result, after checking it is no JSON-RPC error.
    fn call_result(&mut self, tool: &str, arguments: Value) -> Value;
    /// A successful call: the result JSON (`content[0]`, or `structuredContent.result` from a
    /// server started with `--structured-content`) and the observation text, if any.
    fn ok(&mut self, tool: &str, arguments: Value) -> (Value, Option<String>);
    /// A failed call: `structuredContent.error`, after checking the §3 error shape.
    fn err(&mut self, tool: &str, arguments: Value) -> Value;
    /// The browser's pid, from browser_status (launching nothing).
    fn browser_pid(&mut self) -> Option<u32>;
}

impl Transcript for McpClient {
    fn call_result(&mut self, tool: &str, arguments: Value) -> Value {
        let message = self.call(tool, arguments);
        assert!(message.get("error").is_none(), "{tool}: {message}");
        message["result"].clone()
    }

    fn ok(&mut self, tool: &str, arguments: Value) -> (Value, Option<String>) {
        let result = self.call_result(tool, arguments);
        assert_ne!(result["isError"], json!(true), "{tool} failed: {result}");
        let observation = result["content"][1]["text"].as_str().map(str::to_owned);
        let value = match result.get("structuredContent") {
            Some(structured) => structured["result"].clone(),
            None => {
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                match serde_json::from_str(text) {
                    Ok(value) => value,
                    Err(err) => {
                        panic!("{tool}: content[0] is not the result JSON ({err}): {result}")
                    }
                }
            }
        };
        (value, observation)
    }

    fn err(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call_result(tool, arguments);
        assert_eq!(result["isError"], json!(true), "{tool} succeeded: {result}");
        assert_eq!(
            result["content"].as_array().map(Vec::len),
            Some(1),
            "errors carry no observation: {result}"
        );
        let error = result["structuredContent"]["error"].clone();
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let code = error["code"].as_str().unwrap_or_default();
        assert!(
            text.starts_with(&format!(
                "error: {}\ncode:  {code}",
                error["message"].as_str().unwrap_or_default()
            )),
            "{text}"
        );
        assert!(error["hint"].is_string(), "every error has a hint: {error}");
        error
    }

    fn browser_pid(&mut self) -> Option<u32> {
        let (status, _) = self.ok("browser_status", json!({}));
        status["browserPid"]
            .as_u64()
            .and_then(|pid| u32::try_from(pid).ok())
    }
}

/// A `data:` URL of an HTML body.
fn data_url(html: &str) -> String {
    let mut url = String::from("data:text/html,");
    for byte in html.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

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

    // A container ref fails at once and points at the field inside it (§6.5).
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

#[test]
fn mcp_a_lost_browser_is_relaunched_by_the_next_page_call() {
    let mut mcp = start_mcp();
    let (_, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": data_url("<button>Old</button>") }),
    );
    let old = ref_of(&observation.unwrap_or_default(), "\"Old\"");
    mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "console.log('before the loss'); 0" }),
    );
    let (logs, _) = mcp.ok("browser_logs", json!({}));
    let cursor_before = logs["cursor"].as_u64().unwrap_or_default();
    assert!(cursor_before > 0, "{logs}");
    let Some(first) = mcp.browser_pid() else {
        panic!("no browser pid after a navigation");
    };
    procs::kill(first);
    if let Err(alive) =
        procs::wait_until_gone_blocking(&[first], Instant::now() + Duration::from_secs(5))
    {
        panic!("the browser survived SIGKILL: {alive:?}");
    }
    // A call that meets the dead browser before its loss is noticed fails DRIVER_ERROR
    // browser-closed; the next page call relaunches (§1.5).
    let back = data_url("<title>back</title>");
    let first_try = mcp.call_result("browser_navigate", json!({ "url": back }));
    if first_try["isError"] == json!(true) {
        let error = &first_try["structuredContent"]["error"];
        assert_eq!(error["code"], json!("DRIVER_ERROR"), "{first_try}");
        assert_eq!(
            error["detail"]["reason"],
            json!("browser-closed"),
            "{first_try}"
        );
    }
    let (result, observation) = mcp.ok("browser_navigate", json!({ "url": back }));
    assert_eq!(result["title"], json!("back"));
    assert!(observation.is_some_and(|text| text.starts_with("page: back — ")));
    let second = mcp.browser_pid();
    assert!(second.is_some_and(|pid| pid != first), "a new browser runs");

    // The journal continues across the relaunch: old entries stay, seq never restarts.
    mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "console.log('after the relaunch'); 0" }),
    );
    let (logs, _) = mcp.ok("browser_logs", json!({ "kind": "console" }));
    let seqs: Vec<(u64, String)> = logs["entries"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        e["seq"].as_u64().unwrap_or_default(),
                        e["text"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(
        seqs.iter()
            .any(|(seq, text)| text == "before the loss" && *seq <= cursor_before),
        "{logs}"
    );
    assert!(
        seqs.iter()
            .any(|(seq, text)| text == "after the relaunch" && *seq > cursor_before),
        "{logs}"
    );
    assert_eq!(logs["capturing"], json!(true));

    // A ref of the lost browser is stale, never unknown: refs are never reused.
    let error = mcp.err("browser_click", json!({ "selector": old }));
    assert_eq!(error["code"], json!("STALE_REF"), "{error}");
    assert_eq!(error["detail"]["reason"], json!("document-changed"));
}

#[test]
fn mcp_batch_observes_once_as_a_delta_or_as_the_page_identity() {
    let mut mcp = start_mcp_with_args(&["--structured-content"], &[]);
    let page = data_url(
        "<title>Batch</title><button onclick=\"this.textContent='One'\">Zero</button>\
         <input id=q aria-label=Q>",
    );
    mcp.ok("browser_navigate", json!({ "url": page }));
    let result = mcp.call_result(
        "browser_batch",
        json!({ "steps": [
            { "tool": "browser_click", "arguments": { "selector": "text=Zero" } },
            { "tool": "browser_fill", "arguments": { "selector": "#q", "value": "v" } },
            { "tool": "browser_exists", "arguments": { "selector": "#q" } },
        ] }),
    );
    assert_ne!(result["isError"], json!(true), "{result}");
    let batch = &result["structuredContent"]["result"];
    assert_eq!(
        (batch["ok"].clone(), batch["ran"].clone()),
        (json!(true), json!(3))
    );
    let delta = batch["delta"].as_str().unwrap_or_default();
    assert!(
        delta.contains("button \"One\""),
        "one diff holds every step: {delta}"
    );
    assert!(delta.contains("value=\"v\""), "{delta}");
    let observation = result["content"][1]["text"].as_str().unwrap_or_default();
    let tripwire = format!("errors: 0 (logCursor {})", batch["logs"]["logCursor"]);
    assert_eq!(observation, format!("{delta}\n{tripwire}"));
    assert_eq!(batch["logs"]["errors"], json!(0), "{batch}");

    let (batch, observation) = mcp.ok(
        "browser_batch",
        json!({ "observe": "page", "steps": [
            { "tool": "browser_fill", "arguments": { "selector": "#q", "value": "w" } },
        ] }),
    );
    assert_eq!(batch["page"]["title"], json!("Batch"));
    assert_eq!(batch["page"]["documentChange"], json!("same"));
    assert!(observation.is_some_and(|text| text.starts_with("page: Batch — data:")));

    let result = mcp.call_result(
        "browser_batch",
        json!({ "steps": [
            { "tool": "browser_click", "arguments": { "selector": "#missing" } },
            { "tool": "browser_status" },
        ] }),
    );
    assert_eq!(result["isError"], json!(true));
    let batch = &result["structuredContent"]["result"];
    assert_eq!(batch["failedStep"], json!(0));
    assert_eq!(batch["steps"][0]["error"]["code"], json!("NO_MATCH"));
}

/// The tripwire of an observation: its last line, `errors: <n> (logCursor <c>)`, as (n, c).
fn tripwire_of(observation: Option<&str>) -> (u64, u64) {
    let text = observation.unwrap_or_default();
    let last = text.lines().last().unwrap_or_default();
    let numbers: Vec<u64> = last
        .trim_start_matches("errors: ")
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|part| part.parse().ok())
        .collect();
    assert!(
        last.starts_with("errors: ") && numbers.len() == 2,
        "no tripwire in {text:?}"
    );
    (numbers[0], numbers[1])
}

#[test]
fn mcp_logs_list_wait_clear_and_the_observation_tripwire() {
    let server = fixtures();
    let mut mcp = start_mcp_with_args(&["--structured-content"], &[]);

    // Before any browser: empty, not capturing, nothing launched.
    let (logs, _) = mcp.ok("browser_logs", json!({}));
    assert_eq!(
        logs,
        json!({ "entries": [], "cursor": 0, "dropped": 0, "truncated": false, "capturing": false })
    );
    let error = mcp.err("browser_logs", json!({ "kind": "console,warnings" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(error["message"], json!("logs: unknown kind \"warnings\""));
    assert_eq!(
        error["detail"]["allowed"],
        json!([
            "console",
            "error",
            "request",
            "response",
            "requestfailed",
            "download"
        ])
    );
    let error = mcp.err("browser_expect", json!({ "what": "no-errors" }));
    assert_eq!(error["code"], json!("STATE_INVALID"), "{error}");
    assert_eq!(mcp.browser_pid(), None, "browser_logs never launches");

    let (_, observation) = mcp.ok("browser_navigate", json!({ "url": "about:blank" }));
    assert_eq!(tripwire_of(observation.as_deref()), (0, 0));

    // The page logs, throws during load and rejects a promise; the tripwire counts the four
    // error entries (console.error, the failed assert, the TypeError, the rejection).
    let (_, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("console.html") }),
    );
    let (errors, cursor) = tripwire_of(observation.as_deref());
    assert_eq!(errors, 4, "{observation:?}");

    let (waited, _) = mcp.ok(
        "browser_logs",
        json!({ "action": "wait", "kind": "requestfailed", "contains": "closed-port" }),
    );
    let entry = &waited["entry"];
    assert_eq!(
        (
            entry["kind"].clone(),
            entry["method"].clone(),
            entry["page"].clone()
        ),
        (json!("requestfailed"), json!("GET"), json!("p1"))
    );
    assert!(
        entry["failure"]
            .as_str()
            .is_some_and(|f| f.starts_with("net::ERR_")),
        "{entry}"
    );
    assert!(
        entry["time"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z') && t.len() == 24),
        "{entry}"
    );

    let (list, _) = mcp.ok("browser_logs", json!({ "kind": "error" }));
    let texts: Vec<&str> = list["entries"]
        .as_array()
        .map(|entries| entries.iter().filter_map(|e| e["text"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(texts.len(), 4, "{list}");
    assert!(texts.contains(&"error message"), "{texts:?}");
    assert!(
        texts.contains(&"Unhandled promise rejection: Error: rejected on purpose"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("TypeError: ")),
        "{texts:?}"
    );
    assert_eq!(list["capturing"], json!(true));
    assert_eq!(list["dropped"], json!(0));

    let (warn, _) = mcp.ok(
        "browser_logs",
        json!({ "kind": "console", "level": "warn", "contains": "WARN MESSAGE" }),
    );
    let entry = &warn["entries"][0];
    assert_eq!(warn["entries"].as_array().map(Vec::len), Some(1), "{warn}");
    assert_eq!(
        (
            entry["level"].clone(),
            entry["method"].clone(),
            entry["text"].clone()
        ),
        (json!("warn"), json!("warn"), json!("warn message"))
    );
    assert!(
        entry["origin"]
            .as_str()
            .is_some_and(|o| o.contains("console.html:")),
        "{entry}"
    );
    let (objects, _) = mcp.ok("browser_logs", json!({ "contains": "role" }));
    assert_eq!(
        objects["entries"][0]["text"],
        json!("{user: \"ann\", role: \"admin\"}")
    );
    let (response, _) = mcp.ok(
        "browser_logs",
        json!({ "kind": "response", "contains": "status/500" }),
    );
    let entry = &response["entries"][0];
    assert_eq!(
        (entry["status"].clone(), entry["method"].clone()),
        (json!(500), json!("GET")),
        "{response}"
    );
    assert!(
        entry.get("text").is_none() && entry.get("headers").is_none(),
        "{entry}"
    );
    let (newest, _) = mcp.ok("browser_logs", json!({ "limit": 2 }));
    assert_eq!(newest["entries"].as_array().map(Vec::len), Some(2));
    assert_eq!(newest["truncated"], json!(true));

    // no-errors: fails over the whole journal, passes since the current cursor.
    let error = mcp.err("browser_expect", json!({ "what": "no-errors" }));
    assert_eq!(error["code"], json!("EXPECT_MISMATCH"), "{error}");
    assert_eq!(error["hint"], json!("browser_logs kind=error since=0"));
    assert_eq!(error["detail"]["actual"]["count"], json!(4));
    assert_eq!(
        error["detail"]["actual"]["first"].as_array().map(Vec::len),
        Some(3)
    );
    let (logs, _) = mcp.ok("browser_logs", json!({ "limit": 1 }));
    let now = logs["cursor"].as_u64().unwrap_or_default();
    assert!(now > cursor);
    let (passed, _) = mcp.ok(
        "browser_expect",
        json!({ "what": "no-errors", "since": now }),
    );
    // Network rows (a late favicon) may still arrive after `now`: the cursor is the journal's
    // at the time of the check, never earlier.
    assert_eq!(
        (
            passed["ok"].clone(),
            passed["matcher"].clone(),
            passed["errors"].clone()
        ),
        (json!(true), json!("no-errors"), json!(0)),
        "{passed}"
    );
    assert!(
        passed["logCursor"].as_u64().is_some_and(|c| c >= now),
        "{passed}"
    );

    // A click that logs two errors; the next observation starts from there.
    let (_, observation) = mcp.ok("browser_click", json!({ "selector": "#log-again" }));
    let (errors, since) = tripwire_of(observation.as_deref());
    assert_eq!(errors, 2, "{observation:?}");
    assert!(since > cursor);
    let (listed, _) = mcp.ok("browser_logs", json!({ "kind": "error", "since": since }));
    assert_eq!(
        listed["entries"].as_array().map(Vec::len),
        Some(2),
        "exactly what the tripwire counted"
    );
    let (_, observation) = mcp.ok("browser_advanced_eval", json!({ "js": "1" }));
    let (errors, next) = tripwire_of(observation.as_deref());
    assert_eq!(errors, 0);
    assert!(next > since);

    // An entry that arrives later; a wait that times out.
    let (_, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "setTimeout(() => console.info('arrived later'), 200); 0" }),
    );
    let (waited, _) = mcp.ok(
        "browser_logs",
        json!({ "action": "wait", "contains": "arrived later", "since": next, "timeout_ms": 10000 }),
    );
    assert_eq!(waited["entry"]["level"], json!("info"));
    let error = mcp.err(
        "browser_logs",
        json!({ "action": "wait", "contains": "never logged", "timeout_ms": 300 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT"));
    assert_eq!(
        error["message"],
        json!("logs wait: nothing matched within 300ms")
    );

    // Clear empties the journal; seq continues.
    let (cleared, _) = mcp.ok("browser_logs", json!({ "action": "clear" }));
    assert_eq!(cleared["ok"], json!(true));
    assert!(
        cleared["cleared"].as_u64().is_some_and(|n| n > 20),
        "{cleared}"
    );
    let (logs, _) = mcp.ok("browser_logs", json!({}));
    assert_eq!(logs["entries"], json!([]));
    assert!(logs["cursor"].as_u64().is_some_and(|c| c > next));
    mcp.ok("browser_expect", json!({ "what": "no-errors" }));

    // A batch reports the tripwire too.
    let (batch, _) = mcp.ok(
        "browser_batch",
        json!({ "steps": [
            { "tool": "browser_advanced_eval", "arguments": { "js": "console.error('in batch'); 0" } },
        ] }),
    );
    assert_eq!(batch["logs"]["errors"], json!(1), "{batch}");
}

/// Starts a server, launches its browser, and returns the server with every descendant pid.
fn server_with_browser() -> (McpClient, Vec<u32>) {
    let mut mcp = start_mcp();
    mcp.ok("browser_navigate", json!({ "url": "about:blank" }));
    let pids = procs::descendants(mcp.pid());
    let browser = mcp.browser_pid();
    assert!(
        browser.is_some_and(|pid| pids.contains(&pid)),
        "the browser {browser:?} is among the server's descendants {pids:?}"
    );
    (mcp, pids)
}

fn assert_all_gone(pids: &[u32]) {
    if let Err(alive) =
        procs::wait_until_gone_blocking(pids, Instant::now() + Duration::from_secs(5))
    {
        panic!("browser processes outlived the server: {alive:?}");
    }
}

#[test]
fn mcp_stdin_eof_closes_the_browser_and_exits_zero() {
    let (mut mcp, pids) = server_with_browser();
    mcp.close_stdin();
    let status = mcp.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), Some(0));
    assert_all_gone(&pids);
}

#[test]
fn mcp_sigterm_closes_the_browser_and_exits_zero() {
    let (mut mcp, pids) = server_with_browser();
    let sent = Command::new("kill")
        .args(["-TERM", &mcp.pid().to_string()])
        .status();
    assert!(
        sent.is_ok_and(|status| status.success()),
        "kill -TERM failed"
    );
    let status = mcp.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), Some(0));
    assert_all_gone(&pids);
}

#[test]
fn mcp_a_killed_server_takes_its_browser_along() {
    let (mut mcp, pids) = server_with_browser();
    procs::kill(mcp.pid());
    let status = mcp.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), None, "killed by a signal");
    // §1.5: the launched browser is gone within 2 s (parent-death signal).
    if let Err(alive) =
        procs::wait_until_gone_blocking(&pids, Instant::now() + Duration::from_secs(2))
    {
        panic!("browser processes outlived the killed server: {alive:?}");
    }
}

#[test]
fn mcp_cdp_endpoint_opens_its_own_tab_and_leaves_the_browser_running() {
    let external = match chromate_tests::ExternalChromium::start() {
        Ok(external) => external,
        Err(err) => panic!("cannot start an external chromium: {err}"),
    };
    let endpoint = format!("http://127.0.0.1:{}", external.port());
    let mut mcp = start_mcp_with_args(&["--cdp-endpoint", &endpoint], &[]);
    let (result, _) = mcp.ok(
        "browser_navigate",
        json!({ "url": data_url("<title>mine</title>") }),
    );
    assert_eq!(result["title"], json!("mine"));
    let (status, _) = mcp.ok("browser_status", json!({}));
    assert_eq!(
        (status["mode"].clone(), status["browserPid"].clone()),
        (json!("cdp-endpoint"), json!(null))
    );
    // The browser's own tab attaches on its own schedule; list until it shows.
    let deadline = Instant::now() + Duration::from_secs(10);
    let list = loop {
        let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
        if list["count"].as_u64().is_some_and(|n| n >= 2) || Instant::now() >= deadline {
            break list;
        }
    };
    let pages = list["pages"].as_array().cloned().unwrap_or_default();
    assert!(pages.len() >= 2, "the other tabs are listed: {list}");
    let active: Vec<&Value> = pages
        .iter()
        .filter(|p| p["active"] == json!(true))
        .collect();
    assert_eq!(active.len(), 1, "{list}");
    assert_eq!(
        active[0]["title"],
        json!("mine"),
        "chromate's own tab is active"
    );

    mcp.close_stdin();
    assert_eq!(mcp.wait_exit(Duration::from_secs(5)).code(), Some(0));
    assert!(external.is_alive(), "a connected browser keeps running");
    // `Target.closeTarget` is answered before the browser drops the target from its list:
    // list until it is gone (each request is a round trip), for at most 5 s.
    let deadline = Instant::now() + Duration::from_secs(5);
    let targets = loop {
        let targets = external.get("/json/list").unwrap_or_default();
        if !targets.contains("mine") || Instant::now() >= deadline {
            break targets;
        }
    };
    assert!(
        !targets.contains("mine"),
        "chromate closed its own tab: {targets}"
    );
}

/// Waits in the page (on its own promise, so no sleep here) until `window.results[name]` of
/// network.html is set after clicking `#fetch-<name>`, and returns it.
fn fetch_in_page(mcp: &mut McpClient, name: &str) -> Value {
    let js = format!(
        "new Promise(resolve => {{ delete window.results['{name}']; document.getElementById('fetch-{name}').click(); \
         const check = () => window.results['{name}'] ? resolve(window.results['{name}']) : requestAnimationFrame(check); check(); }})"
    );
    let (result, _) = mcp.ok("browser_advanced_eval", json!({ "js": js }));
    result["result"].clone()
}

#[test]
fn mcp_mocks_install_at_launch_change_live_and_block_navigations() {
    let server = fixtures();
    let mut mcp = start_mcp();
    // Added before any browser runs: installed at launch (§1.5, §11.1).
    let (added, _) = mcp.ok(
        "browser_mock",
        json!({ "action": "add", "pattern": "*/api/user", "body": "{\"name\":\"ann\"}" }),
    );
    assert_eq!(
        added,
        json!({ "ok": true, "action": "add", "id": "m1", "pattern": "*/api/user", "status": 200 })
    );
    assert_eq!(mcp.browser_pid(), None, "browser_mock never launches");
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("network.html") }),
    );
    let api = fetch_in_page(&mut mcp, "api");
    assert_eq!(
        (api["status"].clone(), api["body"].clone()),
        (json!(200), json!("{\"name\":\"ann\"}")),
        "{api}"
    );
    assert_eq!(server.request_count("/api/user"), 0);

    // Changed while the browser runs: effective at once.
    let (blocked, _) = mcp.ok(
        "browser_mock",
        json!({ "action": "block", "pattern": "*/status/*" }),
    );
    assert_eq!(blocked["id"], json!("m2"));
    let status = fetch_in_page(&mut mcp, "status");
    assert!(status["error"].is_string(), "{status}");
    let (listed, _) = mcp.ok("browser_mock", json!({ "action": "list" }));
    assert_eq!(
        listed,
        json!({ "count": 2, "mocks": [
            { "id": "m1", "pattern": "*/api/user", "kind": "mock", "status": 200 },
            { "id": "m2", "pattern": "*/status/*", "kind": "block" },
        ] })
    );
    let (removed, _) = mcp.ok("browser_mock", json!({ "action": "remove", "id": "m1" }));
    assert_eq!(removed["remaining"], json!(1));
    let api = fetch_in_page(&mut mcp, "api");
    assert_eq!(api["status"], json!(404), "{api}");

    // A block rule on a document fails the navigation, naming the mock.
    mcp.ok(
        "browser_mock",
        json!({ "action": "block", "pattern": "*/nav.html" }),
    );
    let url = server.url("nav.html");
    let error = mcp.err("browser_navigate", json!({ "url": url }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"));
    assert_eq!(
        error["detail"],
        json!({ "netError": "net::ERR_BLOCKED_BY_CLIENT", "url": url, "blockedBy": "mock" })
    );
    let (cleared, _) = mcp.ok("browser_mock", json!({ "action": "clear" }));
    assert_eq!(
        cleared,
        json!({ "ok": true, "action": "clear", "cleared": 2 })
    );
    mcp.ok("browser_navigate", json!({ "url": url }));
}

#[test]
fn mcp_blocked_origins_fail_navigate_and_page_open_with_the_origin_policy() {
    let server = fixtures();
    let mut mcp = start_mcp_with_args(&["--blocked-origins", "http://localhost:*"], &[]);
    let blocked = server.localhost_url("nav.html");
    let expected = json!({
        "netError": "net::ERR_BLOCKED_BY_CLIENT", "url": blocked, "blockedBy": "origin-policy",
    });
    let error = mcp.err("browser_navigate", json!({ "url": blocked }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"));
    assert_eq!(error["detail"], expected);
    let error = mcp.err("browser_page", json!({ "action": "open", "url": blocked }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"));
    assert_eq!(error["detail"], expected);
    assert_eq!(server.request_count("/nav.html"), 0);
    let other = format!(
        "{}?other={}",
        server.url("network.html"),
        server.localhost_origin()
    );
    mcp.ok("browser_navigate", json!({ "url": other }));
    let cross = fetch_in_page(&mut mcp, "other");
    assert!(
        cross["error"].is_string(),
        "a sub-request is blocked too: {cross}"
    );
}

#[cfg(unix)]
fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o777,
        Err(err) => panic!("no {}: {err}", path.display()),
    }
}

#[test]
fn mcp_a_download_link_click_saves_the_file_in_the_session_directory_and_reports_it() {
    let server = fixtures();
    server.route("download-link.html", |_| {
        chromate_tests::Response::html(
            "<!doctype html><html lang=\"en\"><title>downloads</title>\
             <a href=\"/attachment?name=report.csv&amp;bytes=1234\">Get the report</a></html>",
        )
    });
    let mut mcp = start_mcp();
    let (_, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("download-link.html") }),
    );
    let observation = observation.unwrap_or_default();
    assert!(!observation.contains("download:"), "{observation}");
    let link = ref_of(&observation, "Get the report");

    // The link's response is `Content-Disposition: attachment`: the click's navigation turns
    // into a download, and the click is a success at once, with no navigation to wait for.
    let started = Instant::now();
    let (clicked, observation) = mcp.ok("browser_click", json!({ "selector": link }));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(clicked["ok"], json!(true));
    let observation = observation.unwrap_or_default();
    let lines: Vec<&str> = observation.lines().collect();
    let n = lines.len();
    assert!(n >= 2, "{observation}");
    assert_eq!(
        lines[n - 2],
        "download: report.csv (1234 bytes) completed",
        "{observation}"
    );
    assert!(
        lines[n - 1].starts_with("errors: 0 "),
        "the tripwire stays last: {observation}"
    );

    let (status, _) = mcp.ok("browser_status", json!({}));
    let session_dir = PathBuf::from(status["artifactsDir"].as_str().unwrap_or_default());
    let downloads = session_dir.join("downloads");
    let saved = downloads.join("report.csv");
    let content = std::fs::read(&saved).unwrap_or_else(|err| panic!("{}: {err}", saved.display()));
    assert_eq!(content.len(), 1234);
    assert!(content.starts_with(b"0123456789"));
    assert_eq!(mode_of(&saved), 0o600);
    assert_eq!(mode_of(&downloads), 0o700);
    assert_eq!(mode_of(&session_dir), 0o700);

    let (logs, _) = mcp.ok("browser_logs", json!({ "kind": "download" }));
    let entries = logs["entries"].as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), 1, "{logs}");
    let entry = &entries[0];
    assert_eq!(entry["kind"], json!("download"));
    assert_eq!(entry["page"], json!("p1"));
    assert_eq!(entry["name"], json!("report.csv"));
    assert_eq!(entry["state"], json!("completed"));
    assert_eq!(entry["bytes"], json!(1234));
    assert_eq!(entry["path"], json!(saved.display().to_string()));
    assert!(
        entry["url"]
            .as_str()
            .is_some_and(|url| url.ends_with("/attachment?name=report.csv&bytes=1234")),
        "{entry}"
    );

    // Once reported, never again; the same name again is numbered, and the call that reports
    // a download links to its file.
    let (_, observation) = mcp.ok("browser_hover", json!({ "selector": link }));
    assert!(
        !observation.unwrap_or_default().contains("download:"),
        "a download is reported once"
    );
    let result = mcp.call_result("browser_click", json!({ "selector": link }));
    let again = downloads.join("report (2).csv");
    let text = result.to_string();
    assert!(
        text.contains("download: report (2).csv (1234 bytes) completed"),
        "{text}"
    );
    let links: Vec<&Value> = result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == json!("resource_link"))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(links.len(), 1, "{result}");
    // The URI is percent-encoded, and reads the file back through the server.
    let encoded = again
        .display()
        .to_string()
        .replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29");
    assert_eq!(links[0]["uri"], json!(format!("file://{encoded}")));
    assert_eq!(links[0]["name"], json!("report (2).csv"));
    assert_eq!(links[0]["size"], json!(1234));
    let read = mcp.request("resources/read", json!({ "uri": links[0]["uri"] }));
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        (
            read["result"]["contents"][0]["mimeType"].clone(),
            text.len()
        ),
        (json!("text/csv"), 1234),
        "{read}"
    );
}

#[test]
fn mcp_state_saved_in_one_session_logs_in_a_fresh_browser() {
    let server = fixtures();
    let base = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create a temp dir: {err}"),
    };
    let root = base.path().join(".chromate").join("state");
    let root_env = root.display().to_string();
    let mut first = start_mcp_with(&[("CHROMATE_STATE_DIR", &root_env)]);
    let (listed, _) = first.ok("browser_state", json!({}));
    assert_eq!(listed, json!({ "states": [], "root": root_env }));
    assert_eq!(first.browser_pid(), None, "state list never launches");
    assert!(!root.exists(), "list creates nothing");

    first.ok(
        "browser_navigate",
        json!({ "url": server.url("storage.html") }),
    );
    let js = "new Promise(resolve => { document.getElementById('username').value = 'ann'; \
              document.getElementById('login-button').click(); \
              const check = () => document.getElementById('status').textContent.startsWith('Logged in') ? resolve(true) : requestAnimationFrame(check); check(); })";
    first.ok("browser_advanced_eval", json!({ "js": js }));
    let (saved, _) = first.ok(
        "browser_state",
        json!({ "action": "save", "name": "admin", "session_storage": true }),
    );
    let path = root.join("admin.json");
    assert_eq!(
        saved,
        json!({
            "ok": true, "action": "save", "name": "admin", "path": path.display().to_string(),
            "origin": server.origin(), "cookies": 1, "storageKeys": 2,
        })
    );
    assert!(!saved.to_string().contains("ann"), "counts, never values");
    #[cfg(unix)]
    {
        assert_eq!(mode_of(&root), 0o700);
        assert_eq!(mode_of(&path), 0o600);
    }
    assert_eq!(
        std::fs::read_to_string(base.path().join(".chromate/.gitignore")).ok(),
        Some("*\n".to_owned())
    );
    let file: Value = match std::fs::read(&path).map(|bytes| serde_json::from_slice(&bytes)) {
        Ok(Ok(file)) => file,
        other => panic!("unreadable state file: {other:?}"),
    };
    assert_eq!(file["version"], json!(1));
    assert_eq!(file["cookies"][0]["name"], json!("user"));
    assert_eq!(file["localStorage"][server.origin()]["user"], json!("ann"));
    assert_eq!(
        file["sessionStorage"][server.origin()]["sessionUser"],
        json!("ann")
    );

    // A tab without a page origin saves cookies only, and says so.
    first.ok("browser_page", json!({ "action": "open" }));
    let (blank, _) = first.ok(
        "browser_state",
        json!({ "action": "save", "name": "blank" }),
    );
    assert_eq!(blank["origin"], json!(null));
    assert_eq!(blank["storageKeys"], json!(0));
    assert!(blank["note"].is_string(), "{blank}");
    let error = first.err("browser_state", json!({ "action": "load", "name": "nope" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(error["detail"]["available"], json!(["admin", "blank"]));
    drop(first);

    // A fresh server and browser: load, then the page finds the login on its first load.
    let mut second = start_mcp_with(&[("CHROMATE_STATE_DIR", &root_env)]);
    let (loaded, _) = second.ok(
        "browser_state",
        json!({ "action": "load", "name": "admin" }),
    );
    assert_eq!(loaded["action"], json!("load"));
    assert_eq!(loaded["cookies"], json!(1));
    assert_eq!(loaded["storageKeys"], json!(2));
    let (_, observation) = second.ok(
        "browser_navigate",
        json!({ "url": server.url("storage.html") }),
    );
    let observation = observation.unwrap_or_default();
    assert!(observation.contains("Welcome back, ann"), "{observation}");
    let (found, _) = second.ok(
        "browser_advanced_eval",
        json!({ "js": "[...document.querySelectorAll('dd')].map(d => d.textContent)" }),
    );
    assert_eq!(found["result"], json!(["ann", "ann", "ann"]));
}

// ---- Evidence: browser_screenshot, browser_a11y, browser_trace ----

/// Width and height from a PNG file's IHDR chunk.
fn png_file_size(path: &str) -> (u32, u32) {
    let png = match std::fs::read(path) {
        Ok(png) => png,
        Err(err) => panic!("cannot read {path}: {err}"),
    };
    assert!(png.len() > 24 && &png[..8] == b"\x89PNG\r\n\x1a\n" && &png[12..16] == b"IHDR");
    let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    (width, height)
}

#[test]
fn mcp_screenshot_saves_numbered_pngs_and_refuses_over_quota() {
    let mut mcp = start_mcp_with(&[("CHROMATE_MCP_MAX_ARTIFACT_FILES", "3")]);
    let html = "<body style=\"margin:0\"><div style=\"height:2400px\"></div>\
        <p id=\"box\" style=\"position:absolute;top:100px;left:10px;width:150px;height:60px;margin:0;background:#0a0\">box</p></body>";
    mcp.ok("browser_navigate", json!({ "url": data_url(html) }));
    let result = mcp.call_result("browser_screenshot", json!({}));
    let shot: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap_or("null"))
        .unwrap_or_default();
    assert_eq!(shot["ok"], json!(true), "{result}");
    let path = shot["path"].as_str().unwrap_or_default().to_owned();
    assert!(path.ends_with("/0001-screenshot.png"), "{path}");
    // No observation; a resource link a host without our disk reads the PNG through.
    let link = &result["content"][1];
    assert_eq!(
        link,
        &json!({
            "type": "resource_link",
            "uri": format!("file://{path}"),
            "name": "0001-screenshot.png",
            "mimeType": "image/png",
            "size": shot["bytes"],
        }),
        "{result}"
    );
    assert_eq!(result["content"].as_array().map(Vec::len), Some(2));
    let read = mcp.request("resources/read", json!({ "uri": link["uri"] }));
    let blob = read["result"]["contents"][0]["blob"]
        .as_str()
        .unwrap_or_default();
    assert!(blob.starts_with("iVBORw0KGgo"), "a base64 PNG: {read}");
    assert_eq!(
        (shot["width"].clone(), shot["height"].clone()),
        (json!(1280), json!(800))
    );
    assert_eq!(png_file_size(&path), (1280, 800));
    let on_disk = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    assert_eq!(shot["bytes"], json!(on_disk));

    let (element, _) = mcp.ok("browser_screenshot", json!({ "selector": "#box" }));
    assert_eq!(
        (element["width"].clone(), element["height"].clone()),
        (json!(150), json!(60))
    );
    let element_path = element["path"].as_str().unwrap_or_default();
    assert!(
        element_path.ends_with("/0002-screenshot.png"),
        "{element_path}"
    );
    assert_eq!(png_file_size(element_path), (150, 60));

    let (full, _) = mcp.ok("browser_screenshot", json!({ "full_page": true }));
    assert_eq!(full["height"], json!(2400));

    let error = mcp.err(
        "browser_screenshot",
        json!({ "full_page": true, "selector": "#box" }),
    );
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    let error = mcp.err(
        "browser_screenshot",
        json!({ "selector": "#nope", "timeout_ms": 0 }),
    );
    assert_eq!(error["code"], json!("NO_MATCH"));

    let error = mcp.err("browser_screenshot", json!({}));
    assert_eq!(error["code"], json!("STATE_INVALID"), "{error}");
    let dir = std::path::Path::new(&path)
        .parent()
        .map(std::path::Path::to_path_buf);
    // Files only: the session directory also holds the (empty) `downloads/` made at launch.
    let n_files = dir
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .map_or(0, |entries| {
            entries
                .flatten()
                .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
                .count()
        });
    assert_eq!(n_files, 3, "nothing is left behind over quota");
}

#[test]
fn mcp_a11y_reports_violations_with_refs_bounds_and_checks() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/a11y-violations.html") }),
    );
    let (audit, observation) = mcp.ok("browser_a11y", json!({}));
    assert!(observation.is_none());
    let mut ids: Vec<String> = audit["violations"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|v| v["id"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    assert_eq!(ids, ["color-contrast", "image-alt", "label"], "{audit}");
    assert_eq!(audit["counts"]["violations"], json!(3));
    assert_eq!(audit["minImpact"], json!("minor"));
    assert_eq!(audit["truncated"], json!(false));
    assert!(audit.get("checked").is_none());
    let violations = audit["violations"].as_array().cloned().unwrap_or_default();
    for violation in &violations {
        assert!(
            violation["wcag"]
                .as_array()
                .is_some_and(|tags| !tags.is_empty()),
            "{violation}"
        );
        assert!(violation["helpUrl"]
            .as_str()
            .is_some_and(|url| url.contains("dequeuniversity")));
        let node = &violation["nodes"][0];
        let element_ref = node["ref"].as_str().unwrap_or_default();
        assert!(
            element_ref.starts_with('e'),
            "every node has a ref: {violation}"
        );
        assert!(node["html"]
            .as_str()
            .is_some_and(|html| html.chars().count() <= 160));
        assert!(node["failureSummary"]
            .as_str()
            .is_some_and(|s| !s.contains('\n')));
    }
    // The refs work as selectors (the audit's snapshot is the baseline).
    let image = violations
        .iter()
        .find(|v| v["id"] == json!("image-alt"))
        .cloned()
        .unwrap_or_default();
    let image_ref = image["nodes"][0]["ref"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (read, _) = mcp.ok(
        "browser_read",
        json!({ "field": "attr", "name": "id", "selector": image_ref }),
    );
    assert_eq!(read["value"], json!("no-alt"));

    let (bounded, _) = mcp.ok("browser_a11y", json!({ "limit": 1, "nodes": 1 }));
    assert_eq!(bounded["violations"].as_array().map(Vec::len), Some(1));
    assert_eq!(bounded["truncated"], json!(true));
    assert_eq!(bounded["counts"]["violations"], json!(3));

    let (failed, _) = mcp.ok(
        "browser_a11y",
        json!({ "rules": "image-alt", "check": true }),
    );
    assert_eq!(
        (failed["checked"].clone(), failed["passed"].clone()),
        (json!(true), json!(false))
    );
    let (passed, _) = mcp.ok(
        "browser_a11y",
        json!({ "rules": "color-contrast", "min_impact": "critical", "check": true }),
    );
    assert_eq!(passed["passed"], json!(true), "{passed}");
    assert_eq!(passed["violations"], json!([]));

    let (scoped, _) = mcp.ok("browser_a11y", json!({ "selector": "form" }));
    assert_eq!(scoped["scope"], json!("form"));
    let scoped_ids: Vec<&str> = scoped["violations"]
        .as_array()
        .map(|list| list.iter().filter_map(|v| v["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(scoped_ids, ["label"], "{scoped}");

    let error = mcp.err("browser_a11y", json!({ "rules": "no-such-rule" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    let error = mcp.err("browser_a11y", json!({ "selector": "#nope" }));
    assert_eq!(error["code"], json!("NO_MATCH"));
}

#[test]
fn mcp_trace_records_each_call_and_writes_an_offline_viewer_and_zip() {
    let traces = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create a temp dir: {err}"),
    };
    let root = traces.path().to_string_lossy().into_owned();
    let mut mcp = start_mcp_with_args(&["--structured-content"], &[("CHROMATE_TRACE_DIR", &root)]);
    let (status, _) = mcp.ok("browser_trace", json!({}));
    assert_eq!(status, json!({ "running": false, "root": root }));
    let error = mcp.err("browser_trace", json!({ "action": "stop" }));
    assert_eq!(error["code"], json!("STATE_INVALID"));

    let (started, _) = mcp.ok(
        "browser_trace",
        json!({ "action": "start", "name": "demo" }),
    );
    assert_eq!(started["name"], json!("demo"));
    let out_dir = started["outDir"].as_str().unwrap_or_default().to_owned();
    assert_eq!(out_dir, format!("{root}/demo"));
    let error = mcp.err("browser_trace", json!({ "action": "start" }));
    assert_eq!(error["code"], json!("STATE_INVALID"));

    let html = "<title>Trace me</title><input id=\"pw\" type=\"password\" aria-label=\"Password\">\
        <input id=\"who\" aria-label=\"Name\"><button onclick=\"document.title='clicked'\">Go</button>\
        <script>console.error('boom'); console.warn('careful')</script>";
    mcp.ok("browser_navigate", json!({ "url": data_url(html) }));
    mcp.ok(
        "browser_fill",
        json!({ "selector": "#pw", "value": "hunter2" }),
    );
    mcp.ok(
        "browser_fill",
        json!({ "selector": "#who", "value": "ann" }),
    );
    mcp.ok("browser_click", json!({ "selector": "text=Go" }));
    // The model reads the password's value; the trace never does (§7.7).
    let (read, _) = mcp.ok(
        "browser_read",
        json!({ "field": "value", "selector": "#pw" }),
    );
    assert_eq!(read["value"], json!("hunter2"));
    mcp.ok(
        "browser_batch",
        json!({ "steps": [
            { "tool": "browser_read", "arguments": { "field": "value", "selector": "#who" } },
            { "tool": "browser_read", "arguments": { "field": "value", "selector": "#pw" } },
            { "tool": "browser_press", "arguments": { "key": "Tab" } } ] }),
    );
    let error = mcp.err(
        "browser_click",
        json!({ "selector": "#nope", "timeout_ms": 0 }),
    );
    assert_eq!(error["code"], json!("NO_MATCH"));
    let (status, _) = mcp.ok("browser_trace", json!({ "action": "status" }));
    assert_eq!(
        (status["running"].clone(), status["events"].clone()),
        (json!(true), json!(9))
    );

    let stopped = mcp.call_result("browser_trace", json!({ "action": "stop", "zip": true }));
    assert_eq!(
        stopped["content"][1]["uri"],
        json!(format!("file://{root}/demo.zip")),
        "the zip is a resource link: {stopped}"
    );
    assert_eq!(stopped["content"][1]["mimeType"], json!("application/zip"));
    let stopped = stopped["structuredContent"]["result"].clone();
    assert_eq!(stopped["zip"], json!(format!("{root}/demo.zip")));
    assert_eq!(stopped["viewer"], json!(format!("{out_dir}/index.html")));

    let ndjson = std::fs::read_to_string(format!("{out_dir}/trace.ndjson")).unwrap_or_default();
    let events: Vec<Value> = ndjson
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect();
    assert_eq!(
        events.first().map(|e| e["type"].clone()),
        Some(json!("trace-start"))
    );
    assert_eq!(
        events.last().map(|e| e["type"].clone()),
        Some(json!("trace-end"))
    );
    assert_eq!(
        events.last().map(|e| e["reason"].clone()),
        Some(json!("stop"))
    );
    let actions: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == json!("action"))
        .collect();
    let tools: Vec<&str> = actions.iter().filter_map(|e| e["tool"].as_str()).collect();
    let expected_tools = [
        "browser_navigate",
        "browser_fill",
        "browser_fill",
        "browser_click",
        "browser_read",
        "browser_read",
        "browser_read",
        "browser_press",
        "browser_click",
    ];
    assert_eq!(tools, expected_tools);
    assert_eq!(actions[1]["arguments"]["value"], json!("[redacted]"));
    assert_eq!(actions[2]["arguments"]["value"], json!("ann"));
    assert_eq!(
        actions[4]["result"],
        json!({ "value": "[redacted]", "truncated": false }),
        "a value read from a secret field is redacted, its length too"
    );
    assert_eq!(
        actions[5]["result"]["value"],
        json!("ann"),
        "others are kept"
    );
    assert_eq!(
        actions[6]["result"]["value"],
        json!("[redacted]"),
        "in a batch too"
    );
    assert_eq!(actions[0]["screenshot"], json!("screenshots/0001.png"));
    assert_eq!(actions[0]["console"], json!({ "errors": 1, "warnings": 1 }));
    assert_eq!(actions[3]["console"], json!({ "errors": 0, "warnings": 0 }));
    assert_eq!(
        actions[4]["screenshot"],
        Value::Null,
        "reads take no screenshot"
    );
    assert_eq!(actions[8]["ok"], json!(false));
    assert_eq!(actions[8]["error"]["code"], json!("NO_MATCH"));
    assert!(actions[0]["observation"]
        .as_str()
        .is_some_and(|o| o.contains("Trace me")));
    for (idx, action) in actions.iter().enumerate() {
        assert_eq!(action["seq"], json!(idx + 1));
    }
    assert!(
        !ndjson.contains("hunter2"),
        "the secret never reaches the trace"
    );
    let viewer_html = std::fs::read_to_string(format!("{out_dir}/index.html")).unwrap_or_default();
    assert!(viewer_html.contains("ann") && !viewer_html.contains("hunter2"));

    // Private like the artifacts: directories 0700, files 0600.
    let mode = |path: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(path).map_or(0, |meta| meta.permissions().mode() & 0o7777)
    };
    for dir in [out_dir.clone(), format!("{out_dir}/screenshots")] {
        assert_eq!(mode(&dir), 0o700, "{dir}");
    }
    for file in [
        format!("{out_dir}/trace.ndjson"),
        format!("{out_dir}/index.html"),
        format!("{out_dir}/screenshots/0001.png"),
        format!("{root}/demo.zip"),
    ] {
        assert_eq!(mode(&file), 0o600, "{file}");
    }

    // The zip holds the trace, the viewer and the screenshots, and no secret.
    let file = std::fs::File::open(format!("{root}/demo.zip")).expect("open the zip");
    let mut archive = zip::ZipArchive::new(file).expect("read the zip");
    for name in ["trace.ndjson", "index.html"] {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut archive.by_name(name).expect("an entry"), &mut text)
            .expect("read an entry");
        assert!(text.contains("ann") && !text.contains("hunter2"), "{name}");
    }
    let names: Vec<String> = archive
        .file_names()
        .filter_map(|name| name.ok().map(|name| name.into_owned()))
        .collect();
    for name in [
        "trace.ndjson",
        "index.html",
        "screenshots/",
        "screenshots/0001.png",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }

    // The viewer renders every action offline, with its screenshots, and no errors.
    let viewer = format!("file://{out_dir}/index.html");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let (text, errors, images) = runtime.block_on(async {
        let browser = crate::util::launch().await;
        let page = browser.new_page("about:blank").await.expect("new page");
        page.goto(&viewer, chromate::WaitUntil::Load, crate::util::NAV)
            .await
            .expect("open the viewer");
        let text = page
            .evaluate("document.body.innerText")
            .await
            .expect("text");
        let errors = page.evaluate("window.viewerErrors").await.expect("errors");
        let images = page
            .evaluate("[...document.images].map(i => i.complete && i.naturalWidth > 0)")
            .await
            .expect("images");
        crate::util::close_and_check(browser).await;
        (text, errors, images)
    });
    assert_eq!(errors, json!([]));
    let text = text.as_str().unwrap_or_default();
    for (idx, tool) in expected_tools.iter().enumerate() {
        assert!(
            text.contains(&format!("{}. {tool}", idx + 1)),
            "{tool} missing from:\n{text}"
        );
    }
    let images = images.as_array().cloned().unwrap_or_default();
    assert!(
        !images.is_empty() && images.iter().all(|loaded| loaded == &json!(true)),
        "{images:?}"
    );
}

/// browser_upload reads files under the server's working directory (relative paths resolve
/// there) and nothing outside it, a symlink out included; `--allow-unrestricted-file-access`
/// lifts the rule.
#[test]
fn mcp_uploads_read_under_the_servers_working_directory_unless_unrestricted() {
    let temp = |what: &str| match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create the {what} dir: {err}"),
    };
    let (work, outside) = (temp("work"), temp("outside"));
    let write = |path: std::path::PathBuf, text: &str| {
        if let Err(err) = std::fs::write(&path, text) {
            panic!("cannot write {}: {err}", path.display());
        }
        path
    };
    write(work.path().join("notes.txt"), "notes");
    let secret = write(outside.path().join("secret.txt"), "s3cret!");
    if let Err(err) = std::os::unix::fs::symlink(&secret, work.path().join("link.txt")) {
        panic!("cannot plant a symlink: {err}");
    }
    let secret = secret.display().to_string();
    let page = data_url(
        "<input id=f type=file aria-label=File \
         onchange=\"document.getElementById('out').textContent = \
         [...this.files].map(f => f.name + ':' + f.size).join()\"><p id=out></p>",
    );
    let uploaded = |mcp: &mut McpClient, file: &str| {
        mcp.ok("browser_navigate", json!({ "url": page }));
        let (result, _) = mcp.ok(
            "browser_upload",
            json!({ "selector": "#f", "files": [file] }),
        );
        assert_eq!(result["count"], json!(1), "{result}");
        let (read, _) = mcp.ok("browser_read", json!({ "selector": "#out" }));
        read["text"].as_str().unwrap_or_default().to_owned()
    };

    let mut mcp = mcp_command(&[], &[]).current_dir(work.path()).spawn();
    assert_eq!(uploaded(&mut mcp, "notes.txt"), "notes.txt:5");
    let mut refusals = Vec::new();
    for file in [
        secret.as_str(),
        "link.txt",
        "/etc/hostname",
        "../missing.txt",
    ] {
        let error = mcp.err(
            "browser_upload",
            json!({ "selector": "#f", "files": [file] }),
        );
        assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{file}: {error}");
        assert_eq!(
            error["detail"]["reason"],
            json!("outside-allowed-directories")
        );
        assert!(!error.to_string().contains("s3cret"), "{error}");
        refusals.push(error);
    }
    assert!(
        refusals.windows(2).all(|pair| pair[0] == pair[1]),
        "every refusal is the same, existing or not: {refusals:?}"
    );
    let (read, _) = mcp.ok("browser_read", json!({ "selector": "#out" }));
    assert_eq!(
        read["text"],
        json!("notes.txt:5"),
        "nothing else reached the page"
    );
    drop(mcp);

    let mut mcp = mcp_command(&["--allow-unrestricted-file-access"], &[])
        .current_dir(work.path())
        .spawn();
    assert_eq!(uploaded(&mut mcp, &secret), "secret.txt:7");
    assert_eq!(uploaded(&mut mcp, "link.txt"), "secret.txt:7");
}

#[test]
fn mcp_a11y_without_axe_core_names_the_install_command() {
    let mut mcp = start_mcp_with(&[("CHROMATE_AXE_PATH", "/nonexistent/axe.min.js")]);
    mcp.ok("browser_navigate", json!({ "url": data_url("<p>hi</p>") }));
    let error = mcp.err("browser_a11y", json!({}));
    assert_eq!(error["code"], json!("STATE_INVALID"));
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("a11y: axe-core is not installed (tried: /nonexistent/axe.min.js)")
            && message
                .contains("set CHROMATE_AXE_PATH to an axe.min.js (`npm install axe-core@4.14.1`")
            && message.contains("unset CHROMATE_AXE_PATH to use the axe-core built into chromate"),
        "{message}"
    );
}

/// The events of a trace file; every line must be whole JSON.
fn trace_events(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        text.ends_with('\n'),
        "the last event is a whole line: {text:?}"
    );
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

#[test]
fn mcp_trace_survives_a_killed_server_and_ends_on_shutdown() {
    let traces = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create a temp dir: {err}"),
    };
    let root = traces.path().to_string_lossy().into_owned();

    let mut killed = start_mcp_with(&[("CHROMATE_TRACE_DIR", &root)]);
    killed.ok(
        "browser_trace",
        json!({ "action": "start", "name": "killed" }),
    );
    killed.ok(
        "browser_navigate",
        json!({ "url": data_url("<h1>one</h1>") }),
    );
    let pids = procs::descendants(killed.pid());
    let sent = Command::new("kill")
        .args(["-KILL", &killed.pid().to_string()])
        .status();
    assert!(
        sent.is_ok_and(|status| status.success()),
        "kill -KILL failed"
    );
    killed.wait_exit(Duration::from_secs(5));
    assert_all_gone(&pids);
    let events = trace_events(&traces.path().join("killed/trace.ndjson"));
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds, ["trace-start", "action"]);

    let mut ended = start_mcp_with(&[("CHROMATE_TRACE_DIR", &root)]);
    ended.ok("browser_trace", json!({ "action": "start" }));
    ended.ok(
        "browser_navigate",
        json!({ "url": data_url("<h1>two</h1>") }),
    );
    ended.close_stdin();
    let status = ended.wait_exit(Duration::from_secs(5));
    assert_eq!(status.code(), Some(0));
    let events = trace_events(&traces.path().join("trace-1/trace.ndjson"));
    let last = events.last().cloned().unwrap_or_default();
    assert_eq!(
        last,
        json!({ "type": "trace-end", "reason": "shutdown", "events": 1 })
    );
    assert!(
        !traces.path().join("trace-1.zip").exists(),
        "shutdown writes no zip"
    );
}

#[test]
fn mcp_a_missing_browser_or_endpoint_is_browser_unavailable_and_the_server_keeps_serving() {
    let mut mcp = start_mcp_with_args(&["--browser", "/nonexistent/chromium"], &[]);
    let error = mcp.err("browser_navigate", json!({ "url": "about:blank" }));
    assert_eq!(error["code"], json!("BROWSER_UNAVAILABLE"), "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("/nonexistent/chromium"), "{error}");
    assert!(
        error["hint"].as_str().is_some_and(|h| !h.is_empty()),
        "{error}"
    );
    // Nothing launched, and the server still answers.
    let (status, _) = mcp.ok("browser_status", json!({}));
    assert_eq!(status["ready"], json!(false), "{status}");

    let port = closed_port();
    let mut remote = start_mcp_with_args(
        &["--cdp-endpoint", &format!("http://127.0.0.1:{port}")],
        &[],
    );
    let error = remote.err("browser_navigate", json!({ "url": "about:blank" }));
    assert_eq!(error["code"], json!("BROWSER_UNAVAILABLE"), "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains(&port.to_string())),
        "the endpoint is named: {error}"
    );
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
    let page =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pages/bench-2000.html");
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

/// The two ways hosts hand a `tools/call` result to the model.
#[derive(Debug, Clone, Copy)]
enum HostFamily {
    /// Claude Code, Codex, OpenCode and VS Code: when the result has `structuredContent`, the
    /// model gets only `JSON.stringify(structuredContent)` and the text blocks are dropped
    /// (anthropics/claude-code#79944, reproduced on Claude Code 2.1.280, and #55677;
    /// openai/codex#10334; microsoft/vscode#290063); without it, the text blocks.
    StructuredFirst,
    /// Hosts that give the model the text content blocks and ignore `structuredContent`
    /// (Cursor, Claude Desktop, Gemini CLI, Cline at the time of writing).
    TextOnly,
}

/// What the model reads of `result` in a host of `family`.
fn seen_by(family: HostFamily, result: &Value) -> String {
    let texts = || {
        result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    match (family, result.get("structuredContent")) {
        (HostFamily::StructuredFirst, Some(structured)) => structured.to_string(),
        _ => texts(),
    }
}

/// Every page-changing tool's observation, and an error's code and message, reach the model
/// in both host families, by default and with `--structured-content` (§3, §8).
#[test]
fn mcp_the_observation_and_its_tripwire_reach_the_model_in_every_host() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create a temp dir: {err}"),
    };
    let upload = dir.path().join("notes.txt");
    if let Err(err) = std::fs::write(&upload, "notes") {
        panic!("cannot write {}: {err}", upload.display());
    }
    let upload = upload.display().to_string();
    let page = data_url(
        "<title>Hosts</title><button id=b onclick=\"this.textContent='Pressed'\">Press</button>\
         <input id=q aria-label=Query><input id=c type=checkbox aria-label=Agree>\
         <input id=f type=file aria-label=File>\
         <button id=d onclick=\"confirm('Sure?')\">Ask</button>",
    );
    let families = [HostFamily::StructuredFirst, HostFamily::TextOnly];
    for structured in [false, true] {
        let args: &[&str] = if structured {
            &["--structured-content"]
        } else {
            &[]
        };
        // Uploads read only under the server's working directory: the upload's.
        let mut mcp = mcp_command(args, &[]).current_dir(dir.path()).spawn();
        let calls: Vec<(&str, Value)> = vec![
            ("browser_navigate", json!({ "url": page })),
            ("browser_click", json!({ "selector": "#b" })),
            ("browser_fill", json!({ "selector": "#q", "value": "one" })),
            ("browser_type", json!({ "text": "two" })),
            (
                "browser_element",
                json!({ "action": "check", "selector": "#c" }),
            ),
            ("browser_press", json!({ "key": "Tab" })),
            ("browser_key", json!({ "action": "press", "key": "Shift" })),
            ("browser_mouse", json!({ "action": "move", "x": 5, "y": 5 })),
            ("browser_hover", json!({ "selector": "#b" })),
            (
                "browser_upload",
                json!({ "selector": "#f", "files": [upload] }),
            ),
            (
                "browser_advanced_eval",
                json!({ "js": "document.title = 'Hosts 2'" }),
            ),
            (
                "browser_batch",
                json!({ "steps": [{ "tool": "browser_fill", "arguments": { "selector": "#q", "value": "three" } }] }),
            ),
            ("browser_click", json!({ "selector": "#d" })),
            ("browser_dialog", json!({ "action": "accept" })),
        ];
        for (tool, arguments) in calls {
            let result = mcp.call_result(tool, arguments);
            assert_ne!(result["isError"], json!(true), "{tool}: {result}");
            assert_eq!(
                result.get("structuredContent").is_some(),
                structured,
                "{tool}: structuredContent only when asked for: {result}"
            );
            let observation = result["content"][1]["text"].as_str().unwrap_or_default();
            assert!(
                observation.starts_with("page: Hosts")
                    || observation.starts_with("dialog open: Sure?"),
                "{tool}: {observation}"
            );
            let tripwire = observation.lines().last().unwrap_or_default();
            assert!(
                tripwire.starts_with("errors: 0 (logCursor "),
                "{tool}: {observation}"
            );
            let first_line = observation.lines().next().unwrap_or_default();
            for family in families {
                let seen = seen_by(family, &result);
                assert!(
                    seen.contains(first_line) && seen.contains(tripwire),
                    "{tool} ({family:?}, structured {structured}): the model sees only {seen}"
                );
            }
        }
        let result = mcp.call_result(
            "browser_click",
            json!({ "selector": "#nope", "timeout_ms": 0 }),
        );
        assert_eq!(result["isError"], json!(true));
        for family in families {
            let seen = seen_by(family, &result);
            assert!(
                seen.contains("NO_MATCH") && seen.contains("click: no element matches css=#nope"),
                "the error ({family:?}): the model sees only {seen}"
            );
        }
    }
}

/// What an assertion or a select failure says was there (§4.3): `actual` is null when a text
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

/// A lone UTF-16 surrogate in page text (title, an element's text, a console message) reads
/// as U+FFFD everywhere instead of failing the call or losing the entry (issue 19).
#[test]
fn mcp_lone_surrogates_in_page_text_read_as_the_replacement_character() {
    let mut mcp = start_mcp();
    let page = data_url(
        "<title>t</title><button id=b>go</button><p id=p>para</p><script>\
         document.title = 'a\\ud800b';\
         document.getElementById('b').textContent = 'x\\udc00y';\
         document.getElementById('p').textContent = 'lone \\ud83d end';\
         console.log('log \\ud800 line');\
         </script>",
    );
    let (nav, observation) = mcp.ok("browser_navigate", json!({ "url": page }));
    assert_eq!(nav["title"], json!("a\u{fffd}b"), "{nav}");
    let observation = observation.unwrap_or_default();
    assert!(
        observation.contains("button \"x\u{fffd}y\""),
        "{observation}"
    );
    let (found, _) = mcp.ok("browser_find", json!({ "selector": "#b" }));
    assert!(found.to_string().contains("x\u{fffd}y"), "{found}");
    let (read, _) = mcp.ok("browser_read", json!({ "selector": "#p" }));
    assert_eq!(read["text"], json!("lone \u{fffd} end"), "{read}");
    let (logs, _) = mcp.ok("browser_logs", json!({ "kind": "console" }));
    assert_eq!(
        logs["entries"][0]["text"],
        json!("log \u{fffd} line"),
        "{logs}"
    );
    let (status, _) = mcp.ok("browser_status", json!({}));
    assert_eq!(status["ready"], json!(true));
}

/// A page that navigates itself while it loads — a form submitted toward a blocked origin, a
/// move to a `blob:` URL — ends the navigate at once (issue 19): the blocked one fails
/// NAVIGATION_FAILED, the blob one follows the page to its new document. A blocked
/// `browser_page open` leaves no tab behind.
#[test]
fn mcp_a_page_that_navigates_itself_while_loading_ends_the_navigate() {
    let server = fixtures();
    let blocked = server.localhost_url("nav.html");
    let submit = format!(
        "<title>submits</title><form action=\"{blocked}\" method=get><input name=q value=1></form>\
         <script>document.forms[0].submit()</script><img src=\"/delay/400/nav.html\">"
    );
    server.route("/self-submit.html", move |_| Response::html(submit.clone()));
    server.route("/self-blob.html", |_| {
        Response::html(
            "<title>to blob</title><script>location.href = URL.createObjectURL(\
             new Blob(['<title>in blob</title><p>blob page</p>'], {type: 'text/html'}))</script>",
        )
    });
    let mut mcp = start_mcp_with_args(&["--blocked-origins", "http://localhost:*"], &[]);
    let error = mcp.err(
        "browser_navigate",
        json!({ "url": server.url("self-submit.html"), "timeout_ms": 20000 }),
    );
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"), "{error}");
    assert_eq!(
        error["detail"]["netError"],
        json!("net::ERR_BLOCKED_BY_CLIENT")
    );
    assert_eq!(error["detail"]["blockedBy"], json!("origin-policy"));

    let (nav, _) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("self-blob.html"), "timeout_ms": 20000 }),
    );
    assert!(
        nav["url"].as_str().unwrap_or_default().starts_with("blob:"),
        "{nav}"
    );
    assert_eq!(nav["title"], json!("in blob"));

    let error = mcp.err("browser_page", json!({ "action": "open", "url": blocked }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"));
    let (pages, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(
        pages["count"],
        json!(1),
        "the blocked tab is closed: {pages}"
    );
    assert_eq!(pages["pages"][0]["active"], json!(true), "{pages}");
    assert_eq!(server.request_count("/nav.html"), 0);
}

/// Sends a long `browser_wait` (for an element that never appears) and returns its id, so a
/// test can act while the call runs.
fn start_long_wait(mcp: &mut McpClient) -> i64 {
    let id = mcp.fresh_id();
    mcp.send(
        &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "browser_wait",
        "arguments": { "selector": "#never", "state": "visible", "timeout_ms": 20000 } } }),
    );
    id
}

/// Shutdown by any of SIGTERM, SIGINT, SIGHUP or stdin EOF while a call runs: exit 0, no
/// response for the cancelled call, no browser process left (issue 19, kept and proved).
#[test]
fn mcp_every_shutdown_signal_mid_call_exits_zero_with_no_browser_left() {
    for how in ["TERM", "INT", "HUP", "EOF"] {
        let (mut mcp, pids) = server_with_browser();
        let id = start_long_wait(&mut mcp);
        // The wait is running once a ping behind it is answered (pings never queue).
        assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));
        if how == "EOF" {
            mcp.close_stdin();
        } else {
            let sent = Command::new("kill")
                .args([format!("-{how}"), mcp.pid().to_string()])
                .status();
            assert!(sent.is_ok_and(|status| status.success()), "kill -{how}");
        }
        let status = mcp.wait_exit(Duration::from_secs(5));
        assert_eq!(status.code(), Some(0), "{how}");
        assert!(
            mcp.take_stashed()
                .iter()
                .all(|message| message["id"] != json!(id)),
            "{how}: the cancelled call is not answered"
        );
        assert_all_gone(&pids);
    }
}

/// A browser killed while a call waits fails that call at once as browser-closed (not at its
/// 20 s timeout), and the next call relaunches (issue 19, kept and proved).
#[test]
fn mcp_a_browser_killed_mid_call_fails_the_call_at_once_and_the_next_relaunches() {
    let (mut mcp, _) = server_with_browser();
    let Some(browser) = mcp.browser_pid() else {
        panic!("no browser pid");
    };
    let id = start_long_wait(&mut mcp);
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));
    procs::kill(browser);
    let response = mcp.response(&json!(id));
    let error = &response["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], json!("DRIVER_ERROR"), "{response}");
    assert_eq!(
        error["detail"]["reason"],
        json!("browser-closed"),
        "{response}"
    );
    let (nav, _) = mcp.ok(
        "browser_navigate",
        json!({ "url": data_url("<title>again</title>") }),
    );
    assert_eq!(nav["title"], json!("again"));
    assert_ne!(mcp.browser_pid(), Some(browser));
}

/// A page that replaces the DOM and language functions chromate's page scripts could use
/// still gets a correct snapshot and click: they run in an isolated world with their own
/// built-ins (issue 19, kept and proved).
#[test]
fn mcp_a_page_that_overrides_builtins_still_snapshots_and_clicks() {
    let mut mcp = start_mcp();
    let page = data_url(
        "<title>Hostile</title><button id=b onclick=\"this.dataset.n = (+this.dataset.n || 0) + 1; \
         document.getElementById('out').textContent = 'clicked ' + this.dataset.n\">Press me</button>\
         <p id=out>not yet</p><script>\
         Element.prototype.getBoundingClientRect = () => ({x: -9999, y: -9999, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0});\
         Document.prototype.querySelectorAll = () => [];\
         Element.prototype.querySelectorAll = () => [];\
         JSON.stringify = () => '\"hijacked\"'; JSON.parse = () => ({hijacked: true});\
         Array.prototype.map = function () { return ['hijacked']; };\
         window.MutationObserver = function () { throw new Error('no observers'); };\
         window.__chromate = { snapshot: () => 'forged' };\
         </script>",
    );
    let (_, observation) = mcp.ok("browser_navigate", json!({ "url": page }));
    let observation = observation.unwrap_or_default();
    assert!(observation.contains("button \"Press me\""), "{observation}");
    assert!(observation.contains("not yet"), "{observation}");
    let button = ref_of(&observation, "button \"Press me\"");
    let (_, observation) = mcp.ok("browser_click", json!({ "selector": button }));
    let observation = observation.unwrap_or_default();
    assert!(observation.contains("clicked 1"), "{observation}");
    let (read, _) = mcp.ok("browser_read", json!({ "selector": "#out" }));
    assert_eq!(read["text"], json!("clicked 1"));
}

/// 100,000 console messages and 10,000 requests leave the journal within its bounds, with
/// what was dropped counted, and the server answering (issue 19, kept and proved; the time a
/// ping takes meanwhile is measured in `benches/`, not asserted here).
#[test]
fn mcp_a_console_and_request_flood_keeps_the_journal_bounded() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok("browser_navigate", json!({ "url": server.url("nav.html") }));
    let (flood, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "for (let i = 0; i < 100000; i++) console.log('flood ' + i); \
                       await Promise.all(Array.from({length: 10000}, (_, i) => \
                         fetch('/echo?i=' + i).then(r => r.text()).catch(() => ''))); \
                       return 'done'", "timeout_ms": 120000 }),
    );
    assert_eq!(flood["result"], json!("done"), "{flood}");
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));
    let (console, _) = mcp.ok("browser_logs", json!({ "kind": "console", "limit": 5 }));
    let kept = console["entries"].as_array().map_or(0, Vec::len);
    assert_eq!(kept, 5, "{console}");
    assert_eq!(console["truncated"], json!(true));
    // The console ring keeps the newest 500: everything older is counted as dropped.
    assert!(
        console["dropped"].as_u64().is_some_and(|n| n >= 99_500),
        "evictions are counted: {}",
        console["dropped"]
    );
    assert_eq!(
        console["entries"][kept - 1]["text"],
        json!("flood 99999"),
        "the newest are kept"
    );
    let (network, _) = mcp.ok(
        "browser_logs",
        json!({ "kind": "request,response", "limit": 5 }),
    );
    assert!(
        network["truncated"] == json!(true),
        "{}",
        network["truncated"]
    );
    assert!(
        network["dropped"].as_u64().is_some_and(|n| n > 10_000),
        "{}",
        network["dropped"]
    );
}

/// How long a call with `timeout_ms` 1000 may take on a loaded machine: well under the 30 s
/// command timeout that used to decide (issue 19).
const PROMPTLY: Duration = Duration::from_secs(10);

/// A failed call that returned within [`PROMPTLY`]: its error.
fn err_promptly(mcp: &mut McpClient, tool: &str, arguments: Value) -> Value {
    let started = Instant::now();
    let error = mcp.err(tool, arguments);
    let took = started.elapsed();
    assert!(took < PROMPTLY, "{tool} took {took:?}: {error}");
    error
}

const STOPPED: &str = "the page's script did not yield for 1000 ms; chromate stopped it";

#[test]
fn mcp_a_hanging_click_handler_or_load_times_out_and_the_next_navigate_works() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/hang-click.html") }),
    );
    let error = err_promptly(
        &mut mcp,
        "browser_click",
        json!({ "selector": "#spin", "timeout_ms": 1000 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT"), "{error}");
    assert_eq!(
        error["message"],
        json!(
            "click: timed out after 1000ms waiting for the page to handle the click on css=#spin"
        )
    );
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(hint.starts_with(STOPPED), "{error}");
    let (nav, _) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav.html") }),
    );
    assert_eq!(nav["title"], json!("Nav one"), "{nav}");

    // A page that hangs while it loads: the navigation times out, the next one loads.
    let error = err_promptly(
        &mut mcp,
        "browser_navigate",
        json!({ "url": server.url("/hang-load.html"), "timeout_ms": 1000 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT_WAITING_LOAD"), "{error}");
    assert_eq!(error["detail"]["state"], json!("load"), "{error}");
    assert!(
        error["hint"]
            .as_str()
            .unwrap_or_default()
            .starts_with(STOPPED),
        "{error}"
    );
    let started = Instant::now();
    let (nav, _) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav2.html") }),
    );
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    assert!(
        nav["url"]
            .as_str()
            .unwrap_or_default()
            .ends_with("/nav2.html"),
        "{nav}"
    );
}

#[test]
fn mcp_eval_of_a_loop_is_stopped_at_its_timeout_and_a_stopped_browser_fails_in_time() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav.html") }),
    );
    let error = err_promptly(
        &mut mcp,
        "browser_advanced_eval",
        json!({ "js": "while (true) {}", "timeout_ms": 1000 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT"), "{error}");
    assert_eq!(
        error["message"],
        json!("eval: timed out after 1000ms waiting for the script to finish")
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap_or_default()
            .starts_with(STOPPED),
        "{error}"
    );
    let (value, _) = mcp.ok("browser_advanced_eval", json!({ "js": "6 * 7" }));
    assert_eq!(value["result"], json!(42));

    // The browser stopped by its own pid: the call fails within its timeout, then works.
    let Some(pid) = mcp.browser_pid() else {
        panic!("browser_status names no browser pid");
    };
    let signal = |name: &str| {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{name} {pid}");
    };
    signal("STOP");
    let started = Instant::now();
    let error = mcp.err(
        "browser_click",
        json!({ "selector": "#to-nav2", "timeout_ms": 1000 }),
    );
    let took = started.elapsed();
    signal("CONT");
    assert!(took < PROMPTLY, "click on a stopped browser took {took:?}");
    assert_eq!(error["code"], json!("TIMEOUT_WAITING_VISIBLE"), "{error}");
    assert!(
        error["hint"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the browser did not answer for 1000 ms"),
        "{error}"
    );
    let (exists, _) = mcp.ok("browser_exists", json!({ "selector": "#marker" }));
    assert_eq!(exists["exists"], json!(true), "{exists}");
}

#[test]
fn mcp_a11y_of_200000_elements_times_out_stops_axe_and_the_next_calls_work() {
    let server = fixtures();
    let mut mcp = start_mcp_with(&[("CHROMATE_AGENT_TIMEOUT", "1000")]);
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav.html") }),
    );
    // 200,000 elements, made in the page (no such file in the repository).
    let (made, _) = mcp.ok(
        "browser_advanced_eval",
        json!({
            "js": "document.body.insertAdjacentHTML('beforeend', '<div><span>x</span></div>'.repeat(100000)); document.getElementsByTagName('*').length",
            "timeout_ms": 60000,
        }),
    );
    assert!(
        made["result"].as_u64().is_some_and(|n| n > 200_000),
        "{made}"
    );
    let error = err_promptly(&mut mcp, "browser_a11y", json!({}));
    assert_eq!(error["code"], json!("TIMEOUT"), "{error}");
    assert_eq!(
        error["message"],
        json!("a11y: timed out after 1000ms waiting for the audit to finish")
    );
    // axe is stopped in the page, or, when its renderer does not even answer the termination,
    // the tab is replaced; either way the next calls work.
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(
        hint.starts_with("chromate stopped the audit after 1000 ms")
            || hint.contains("chromate replaced the tab with a new one on about:blank"),
        "{error}"
    );
    let started = Instant::now();
    let (shot, _) = mcp.ok("browser_screenshot", json!({}));
    assert_eq!(shot["width"], json!(1280), "{shot}");
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav2.html") }),
    );
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
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
