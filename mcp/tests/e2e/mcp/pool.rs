//! `--cdp-endpoint` on a real browser pool: Browserless (`tests/pool/`, installed by
//! `.ci/setup.sh all`), started per test on loopback with a token of its own and ended by PID
//! ([`chromate_tests::pool::Browserless`]). Each test proves that the pool's Chromium
//! processes are gone once chromate let go of them, and that no `chromate mcp` is left.

use std::time::{Duration, Instant};

use chromate_tests::pool::{close_wait_sockets, Browserless, PoolLimits};
use chromate_tests::{procs, McpClient};

use serde_json::{json, Value};

use super::*;
use crate::util::fixtures;

fn pool(concurrent: u32, queued: u32, timeout_ms: u64) -> Browserless {
    match Browserless::start(PoolLimits {
        concurrent,
        queued,
        timeout_ms,
    }) {
        Ok(pool) => pool,
        Err(err) => panic!("cannot start Browserless: {err}"),
    }
}

/// Polls until the pool runs no Chromium (the sessions chromate held are over), 30 s at most.
fn assert_pool_browsers_end(pool: &Browserless) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = pool.chromium_pids();
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the pool's Chromium outlived the session: {left:?}\n{}",
            pool.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ends `mcp` with EOF and proves by PID that it is gone.
fn end(mut mcp: McpClient) {
    let pid = mcp.pid();
    mcp.close_stdin();
    assert_eq!(mcp.wait_exit(Duration::from_secs(15)).code(), Some(0));
    assert!(!procs::is_alive(pid), "chromate mcp {pid} is left");
}

/// The whole text a call's result gives the model and the client, to look for the token in.
fn whole(result: &Value) -> String {
    result.to_string()
}

#[test]
fn mcp_through_browserless_navigates_and_snapshots_over_ws_both_http_forms_and_a_bearer_header() {
    let pool = pool(2, 1, 120_000);
    let server = fixtures();
    let bearer = format!("Bearer {}", pool.token());
    let endpoints = [
        (pool.ws_url(), None),
        (
            format!("http://127.0.0.1:{}?token={}", pool.port(), pool.token()),
            None,
        ),
        (
            format!("http://127.0.0.1:{}/?token={}", pool.port(), pool.token()),
            None,
        ),
        // The token in the header only: /json/version and the handshake both carry it.
        (
            format!("http://127.0.0.1:{}", pool.port()),
            Some(bearer.as_str()),
        ),
    ];
    for (endpoint, authorization) in endpoints {
        let mut args = vec!["--cdp-endpoint", endpoint.as_str()];
        if let Some(authorization) = authorization {
            args.extend(["--cdp-authorization", authorization]);
        }
        let mut mcp = start_mcp_with_args(&args, &[]);
        let (result, observation) = mcp.ok(
            "browser_navigate",
            json!({ "url": server.url("login.html"), "timeout_ms": 20000 }),
        );
        assert_eq!(
            result["title"],
            json!("Sign in — Acme"),
            "{endpoint}: {result}"
        );
        let observation = observation.unwrap_or_default();
        assert!(!observation.contains("browser replaced"), "{observation}");
        let snapshot = mcp.call_result("browser_snapshot", json!({}));
        let text = snapshot["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("Sign in"), "{endpoint}: {text}");
        let (status, _) = mcp.ok("browser_status", json!({}));
        assert_eq!(status["mode"], json!("cdp-endpoint"), "{status}");
        assert!(status.get("browserReplaced").is_none(), "{status}");
        assert!(
            !pool.chromium_pids().is_empty(),
            "the pool runs the browser"
        );
        end(mcp);
        // chromate closed its connection: the pool ends that browser.
        assert_pool_browsers_end(&pool);
    }
}

#[test]
fn mcp_a_bad_token_and_a_full_pool_say_what_the_pool_answered_never_the_token() {
    let pool = pool(1, 0, 120_000);
    let secret = "wrongTokenValue123";
    for endpoint in [
        format!("ws://127.0.0.1:{}?token={secret}", pool.port()),
        format!("http://127.0.0.1:{}/?token={secret}", pool.port()),
    ] {
        let mut mcp = start_mcp_with_args(&["--cdp-endpoint", &endpoint], &[]);
        let result = mcp.call_result("browser_navigate", json!({ "url": "about:blank" }));
        assert!(
            !whole(&result).contains(secret),
            "the token leaked: {result}"
        );
        let error = mcp.err("browser_navigate", json!({ "url": "about:blank" }));
        assert_eq!(error["code"], json!("BROWSER_UNAVAILABLE"), "{error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("HTTP 401") && message.contains("refused the token"),
            "{endpoint}: {error}"
        );
        let hint = error["hint"].as_str().unwrap_or_default();
        assert!(!hint.contains("install Chromium"), "{error}");
        assert!(hint.contains("token"), "{error}");
        assert!(!whole(&error).contains(secret), "the token leaked: {error}");
        end(mcp);
    }

    // The pool's one browser is taken and it queues nothing: the second server is refused.
    let mut first = start_mcp_with_args(&["--cdp-endpoint", &pool.ws_url()], &[]);
    first.ok(
        "browser_navigate",
        json!({ "url": "about:blank", "timeout_ms": 20000 }),
    );
    let mut second = start_mcp_with_args(&["--cdp-endpoint", &pool.ws_url()], &[]);
    let error = second.err("browser_navigate", json!({ "url": "about:blank" }));
    assert_eq!(error["code"], json!("BROWSER_UNAVAILABLE"), "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("HTTP 429") && message.contains("pool is full"),
        "{error}"
    );
    assert!(
        !whole(&error).contains(pool.token()),
        "the token leaked: {error}"
    );
    end(second);
    end(first);
    assert_pool_browsers_end(&pool);
}

#[test]
fn mcp_a_queued_connect_is_bounded_by_the_calls_timeout_and_reports_progress() {
    // Room in the queue for both waiting servers (Browserless keeps a connection that gave
    // up in its queue until a browser is free).
    let pool = pool(1, 2, 120_000);
    let mut first = start_mcp_with_args(&["--cdp-endpoint", &pool.ws_url()], &[]);
    first.ok(
        "browser_navigate",
        json!({ "url": "about:blank", "timeout_ms": 20000 }),
    );
    // The second waits in the pool's queue: its call ends at its own timeout, with progress
    // saying what it waits for.
    let mut second = start_mcp_with_args(&["--cdp-endpoint", &pool.ws_url()], &[]);
    second.send(
        &json!({ "jsonrpc": "2.0", "id": "queued", "method": "tools/call", "params": {
        "name": "browser_navigate", "arguments": { "url": "about:blank", "timeout_ms": 2500 },
        "_meta": { "progressToken": "pool" } } }),
    );
    let response = second.response(&json!("queued"));
    let error = &response["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], json!("BROWSER_UNAVAILABLE"), "{response}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("no browser within"), "{response}");
    let progress: Vec<Value> = second
        .take_stashed()
        .into_iter()
        .filter(|message| message["method"] == json!("notifications/progress"))
        .collect();
    assert!(
        progress
            .iter()
            .any(|p| p["params"]["message"] == json!("waiting for the browser pool")),
        "{progress:?}"
    );
    // With --cdp-timeout shorter than the call's, the flag bounds it.
    let mut third = start_mcp_with_args(
        &["--cdp-endpoint", &pool.ws_url(), "--cdp-timeout", "1000"],
        &[],
    );
    let error = third.err(
        "browser_navigate",
        json!({ "url": "about:blank", "timeout_ms": 30000 }),
    );
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("no browser within 1000 ms"), "{error}");
    end(third);
    end(second);
    end(first);
    assert_pool_browsers_end(&pool);
}

#[test]
fn mcp_a_session_the_pool_timed_out_is_closed_and_the_next_call_says_the_browser_was_replaced() {
    // The pool ends every session after 10 s.
    let pool = pool(2, 1, 10_000);
    let server = fixtures();
    let mut mcp = start_mcp_with_args(&["--cdp-endpoint", &pool.ws_url()], &[]);
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("login.html"), "timeout_ms": 20000 }),
    );
    // Wait for the pool to end the session: browser_status stops showing a browser.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, _) = mcp.ok("browser_status", json!({}));
        if status["ready"] == json!(false) {
            // Browserless ends a timed-out session by writing an HTTP answer into the
            // websocket (a protocol error) or by closing it: either is the reason given.
            let lost = status["browserLost"].as_str().unwrap_or_default();
            assert!(lost.contains("websocket"), "{status}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the pool never ended the session: {status}\n{}",
            pool.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // chromate closed its side: no socket to the pool is left half-closed.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let half_closed = close_wait_sockets(mcp.pid(), pool.port());
        if half_closed.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "sockets left in CLOSE-WAIT: {half_closed:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_pool_browsers_end(&pool);

    let (result, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("login.html"), "timeout_ms": 20000 }),
    );
    assert_eq!(result["title"], json!("Sign in — Acme"), "{result}");
    let observation = observation.unwrap_or_default();
    assert!(
        observation.starts_with("browser replaced:")
            && observation.contains("tabs, refs and the page of before are gone"),
        "{observation}"
    );
    let (status, _) = mcp.ok("browser_status", json!({}));
    assert_eq!(status["browserReplaced"]["count"], json!(1), "{status}");
    assert!(status.get("browserLost").is_none(), "{status}");
    // Said once: the call after does not repeat it.
    let (_, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("login.html"), "timeout_ms": 20000 }),
    );
    assert!(
        !observation.unwrap_or_default().contains("browser replaced"),
        "said twice"
    );
    end(mcp);
    assert_pool_browsers_end(&pool);
}
