//! Hostile pages (issue 19): lone surrogates, pages that navigate themselves while loading,
//! pages that override built-ins, console and request floods, and click handlers, loads,
//! loops and audits that hang: every call ends within its timeout and the next call works.

use std::process::Command;
use std::time::{Duration, Instant};

use chromate_tests::{McpClient, Response};
use serde_json::{json, Value};

use super::{data_url, mcp_command, start_mcp, start_mcp_with, start_mcp_with_args};
use crate::util::{fixtures, ref_of};

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
    // The client waits as long as the flood's own `timeout_ms` allows (it took 57 s alone in
    // a debug build and more under load), not the 60 s of other tests' reads.
    let mut mcp = mcp_command(&[], &[])
        .deadline(Duration::from_secs(150))
        .spawn();
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
    assert_shows(&nav, "/nav2.html");
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
            "js": "document.body.insertAdjacentHTML('beforeend', '<section id=\"bulk\">' + '<div><span>x</span></div>'.repeat(100000) + '</section>'); document.getElementsByTagName('*').length",
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
    // axe may still yield now and then (the audit was stopped after the deadline) or not at
    // all (the probe after the deadline found the page stuck and stopped its script).
    assert!(
        hint.starts_with("chromate stopped the audit after 1000 ms")
            || hint.starts_with(STOPPED)
            || hint.contains("chromate replaced the tab with a new one on about:blank"),
        "{error}"
    );
    // The stopped audit does not hold axe in that document: with the bulk gone, the next
    // audit of the same document runs to the end (issue 25 item 13). A replaced tab (a
    // renderer too loaded to answer the termination) has no such document left.
    if !hint.contains("replaced the tab") {
        a11y_runs_again_in_the_same_document(&mut mcp);
    }
    let started = Instant::now();
    let (shot, _) = mcp.ok("browser_screenshot", json!({}));
    assert_eq!(shot["width"], json!(1280), "{shot}");
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav2.html") }),
    );
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
}

/// After browser_a11y stopped an audit of the big page: removes the bulk and audits the same
/// document again, which must run to the end.
fn a11y_runs_again_in_the_same_document(mcp: &mut McpClient) {
    let (gone, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "document.getElementById('bulk').remove(); document.getElementsByTagName('*').length" }),
    );
    assert!(gone["result"].as_u64().is_some_and(|n| n < 1000), "{gone}");
    let (audit, _) = mcp.ok("browser_a11y", json!({}));
    assert!(
        audit["counts"]["passes"].as_u64().is_some_and(|n| n > 0),
        "{audit}"
    );
}

/// Opens hang-later.html and returns once its script stopped yielding (it told the fixture
/// server so just before its endless loop).
fn open_hung_page(mcp: &mut McpClient, server: &chromate_tests::FixtureServer) {
    let before = server.request_count("spinning");
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/hang-later.html") }),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.request_count("spinning") == before {
        assert!(
            Instant::now() < deadline,
            "hang-later.html never started its loop"
        );
        std::thread::yield_now();
    }
}

/// Every input tool, browser_locators, browser_wait and browser_state save on a page whose
/// script does not yield: each fails within its timeout (timeout_ms, or the agent default for
/// the tools that take none) plus a margin, not the 30 s command timeout, says chromate
/// stopped the script, never NO_MATCH nor "0 elements match", and the tab works again
/// afterwards (issue 25).
#[test]
fn mcp_input_locators_and_state_save_on_a_hung_page_end_at_their_timeout_and_free_it() {
    let server = fixtures();
    let mut mcp = start_mcp_with(&[("CHROMATE_AGENT_TIMEOUT", "1000")]);
    let calls = [
        ("browser_press", json!({ "key": "a", "timeout_ms": 1000 })),
        ("browser_type", json!({ "text": "abc" })),
        (
            "browser_key",
            json!({ "action": "down", "key": "Shift", "timeout_ms": 1000 }),
        ),
        (
            "browser_mouse",
            json!({ "action": "move", "x": 10, "y": 10, "timeout_ms": 1000 }),
        ),
        ("browser_locators", json!({ "selector": "#answer" })),
        (
            "browser_wait",
            json!({ "selector": "#answer", "timeout_ms": 1000 }),
        ),
        (
            "browser_hover",
            json!({ "selector": "#answer", "timeout_ms": 1000 }),
        ),
        ("browser_state", json!({ "action": "save", "name": "hung" })),
    ];
    for (tool, arguments) in calls {
        open_hung_page(&mut mcp, &server);
        let started = Instant::now();
        let error = mcp.err(tool, arguments);
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(1000 + 2000),
            "{tool} took {took:?}: {error}"
        );
        assert!(
            error["hint"]
                .as_str()
                .unwrap_or_default()
                .starts_with(STOPPED),
            "{tool}: {error}"
        );
        // A page that never answered was not seen to lack the element.
        assert_ne!(error["code"], json!("NO_MATCH"), "{tool}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(!message.contains("0 elements match"), "{tool}: {error}");
        let (value, _) = mcp.ok("browser_advanced_eval", json!({ "js": "6 * 7" }));
        assert_eq!(value["result"], json!(42), "after {tool}");
    }
}

/// The observation after an action is bounded by what is left of the call's `timeout_ms`, not
/// the 5 s agent default: an eval that starts an endless loop for later returns within its
/// 1 s plus a margin, its observation says the snapshot was unavailable, and the tab works
/// again (issue 25 item 12).
#[test]
fn mcp_the_observation_after_an_action_ends_with_the_calls_timeout() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav.html") }),
    );
    let started = Instant::now();
    let (value, observation) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "setTimeout(() => { while (true) {} }, 0); 1", "timeout_ms": 1000 }),
    );
    let took = started.elapsed();
    assert_eq!(value["result"], json!(1), "{value}");
    let observation = observation.unwrap_or_default();
    assert!(
        observation.contains("post-action snapshot unavailable"),
        "{observation}"
    );
    assert!(
        took < Duration::from_millis(1000 + 2000),
        "eval with its observation took {took:?}: {observation}"
    );
    let (value, _) = mcp.ok("browser_advanced_eval", json!({ "js": "6 * 7" }));
    assert_eq!(value["result"], json!(42));
}

/// With the browser process stopped (SIGSTOP), browser_navigate, browser_mouse at coordinates
/// and browser_page open fail, and browser_mock add answers, within their timeout plus a margin instead of the
/// 30 s command timeout, and once it runs again the session works (issue 25 item 10).
#[test]
fn mcp_mouse_page_open_and_mock_add_on_a_stopped_browser_end_at_their_timeout() {
    let server = fixtures();
    let mut mcp = start_mcp_with(&[("CHROMATE_AGENT_TIMEOUT", "1000")]);
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav.html") }),
    );
    let Some(pid) = mcp.browser_pid() else {
        panic!("browser_status names no browser pid");
    };
    let signal = |name: &str| {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{name} {pid}");
    };
    let calls = [
        (
            "browser_navigate",
            json!({ "url": server.url("/nav2.html"), "timeout_ms": 1000 }),
        ),
        (
            "browser_mouse",
            json!({ "action": "move", "x": 5, "y": 5, "timeout_ms": 1000 }),
        ),
        (
            "browser_page",
            json!({ "action": "open", "timeout_ms": 1000 }),
        ),
        (
            "browser_mock",
            json!({ "action": "add", "pattern": "*/api/user", "body": "{}" }),
        ),
    ];
    for (tool, arguments) in calls {
        signal("STOP");
        let started = Instant::now();
        let result = mcp.call_result(tool, arguments);
        let took = started.elapsed();
        signal("CONT");
        // The rules may wait for the browser's next request, so browser_mock may succeed;
        // whatever the outcome, it comes in time.
        if tool != "browser_mock" {
            assert_eq!(result["isError"], json!(true), "{tool}: {result}");
        }
        assert!(
            took < Duration::from_millis(1000 + 2000),
            "{tool} on a stopped browser took {took:?}: {result}"
        );
    }
    let (exists, _) = mcp.ok("browser_exists", json!({ "selector": "#marker" }));
    assert_eq!(exists["exists"], json!(true), "{exists}");
}

/// The ids of the open tabs, from browser_page list.
fn tab_ids(mcp: &mut McpClient) -> Vec<String> {
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    list["pages"]
        .as_array()
        .map(|tabs| {
            tabs.iter()
                .filter_map(|tab| tab["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A server that is merely slow is not a hung page (issue 25 item 11): the navigate times out
/// TIMEOUT_WAITING_LOAD, the tab is kept (same id, no "replaced" hint), and the next navigate
/// in it works.
#[test]
fn mcp_a_navigate_to_a_slow_server_times_out_and_keeps_the_tab() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav.html") }),
    );
    let before = tab_ids(&mut mcp);
    let error = err_promptly(
        &mut mcp,
        "browser_navigate",
        json!({ "url": server.url("/delay/4000/nav2.html"), "timeout_ms": 1000 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT_WAITING_LOAD"), "{error}");
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(!hint.contains("replaced"), "{error}");
    assert_eq!(tab_ids(&mut mcp), before);
    let (nav, _) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav2.html") }),
    );
    assert_shows(&nav, "/nav2.html");
    assert_eq!(tab_ids(&mut mcp), before);
}

/// A fill of 8,192 characters, alone and in a batch of 25, is not mistaken for a hung page
/// (issue 25 item 11).
#[test]
fn mcp_a_fill_of_8192_characters_works_alone_and_in_a_batch() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/controls.html") }),
    );
    let text = "x".repeat(8192);
    mcp.ok(
        "browser_fill",
        json!({ "selector": "#text-input", "value": text }),
    );
    let (value, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "document.querySelector('#text-input').value.length" }),
    );
    assert_eq!(value["result"], json!(8192), "{value}");
    let steps: Vec<Value> = (0..25)
        .map(|_| json!({ "tool": "browser_fill", "arguments": { "selector": "#text-input", "value": text } }))
        .collect();
    let result = mcp.call_result("browser_batch", json!({ "steps": steps }));
    assert_ne!(result["isError"], json!(true), "{result}");
    // Without structured content, the batch is one line a step: "N ✓ tool  ms  result".
    let steps = result["content"][0]["text"].as_str().unwrap_or_default();
    let passed = steps
        .lines()
        .filter(|line| line.contains(" ✓ browser_fill "))
        .count();
    assert_eq!(passed, 25, "{result}");
}

/// A navigate away from a page whose script loops, to the same site, stops the loop and loads
/// the new page (issue 25 item 11).
#[test]
fn mcp_a_navigate_away_from_a_looping_page_to_the_same_site_works() {
    let server = fixtures();
    let mut mcp = start_mcp();
    open_hung_page(&mut mcp, &server);
    let (nav, _) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("/nav2.html"), "timeout_ms": 5000 }),
    );
    assert_shows(&nav, "/nav2.html");
}

/// browser_a11y on a page whose own script does not yield says, as every tool does, that the
/// page's script was stopped (not "the audit"), and the next call works (issue 25).
#[test]
fn mcp_a11y_on_a_hung_page_says_the_pages_script_was_stopped() {
    let server = fixtures();
    let mut mcp = start_mcp_with(&[("CHROMATE_AGENT_TIMEOUT", "1000")]);
    open_hung_page(&mut mcp, &server);
    let error = err_promptly(&mut mcp, "browser_a11y", json!({}));
    assert_eq!(error["code"], json!("TIMEOUT"), "{error}");
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(hint.starts_with(STOPPED), "{error}");
    let (value, _) = mcp.ok("browser_advanced_eval", json!({ "js": "6 * 7" }));
    assert_eq!(value["result"], json!(42));
}

/// browser_page list with a tab whose script does not yield lists it with the title the
/// browser knows, and the other tabs as usual (issue 25).
#[test]
fn mcp_page_list_with_a_hung_tab_lists_every_tab() {
    let server = fixtures();
    let mut mcp = start_mcp();
    mcp.ok(
        "browser_page",
        json!({ "action": "open", "url": server.url("/nav2.html") }),
    );
    open_hung_page(&mut mcp, &server);
    let (list, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    let pages = list["pages"].as_array().cloned().unwrap_or_default();
    assert_eq!(pages.len(), 2, "{list}");
    let hung = pages
        .iter()
        .find(|page| page["active"] == json!(true))
        .cloned()
        .unwrap_or_default();
    assert!(
        hung["url"]
            .as_str()
            .unwrap_or_default()
            .ends_with("/hang-later.html"),
        "{list}"
    );
    // The browser's last known title: the page never answers the read.
    assert!(hung["title"].is_string(), "{list}");
    assert_eq!(tab_ids(&mut mcp).len(), 2);
}

/// Asserts that a browser_navigate result shows a URL ending with `path`.
fn assert_shows(nav: &Value, path: &str) {
    let url = nav["url"].as_str().unwrap_or_default();
    assert!(url.ends_with(path), "{nav}");
}
