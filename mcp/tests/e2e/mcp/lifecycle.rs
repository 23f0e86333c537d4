//! The server process and its browser: stdin EOF, SIGTERM, SIGINT, SIGHUP (mid-call too) and
//! a killed server leave no browser process by PID; a lost or killed browser is relaunched by
//! the next call; `--cdp-endpoint` opens and closes only its own tab; a missing browser is
//! BROWSER_UNAVAILABLE while the server keeps serving.

use std::process::Command;
use std::time::{Duration, Instant};

use chromate_tests::{procs, McpClient};
use serde_json::{json, Value};

use super::{assert_all_gone, data_url, start_mcp, start_mcp_with_args};
use crate::util::{closed_port, ref_of};

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
    // browser-closed; the next page call relaunches (docs/mcp.md#run).
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
    // docs/mcp.md#run: the launched browser is gone within 2 s (parent-death signal).
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
