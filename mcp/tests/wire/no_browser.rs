//! Wire tests: tools that need no browser.

use super::*;

#[test]
fn status_before_launch() {
    let mut server = start_server("status");
    let status = server.ok("browser_status", json!({})).0;
    assert_eq!(status["ready"], json!(false));
    for field in ["browser", "browserVersion", "browserPid", "activeUrl"] {
        assert_eq!(status[field], Value::Null, "{field}");
    }
    assert_eq!(status["mode"], json!("launch"));
    assert_eq!(status["serverPid"], json!(server.pid()));
    assert_eq!(status["headless"], json!(true));
    assert_eq!(status["viewport"], json!({ "width": 1280, "height": 800 }));
    let dir = status["artifactsDir"].as_str().unwrap_or_default();
    let expected_prefix = format!(
        "{}/chromate-mcp-{}-",
        server.artifacts_dir().display(),
        server.pid()
    );
    assert!(dir.starts_with(&expected_prefix), "{dir}");
    // `<stamp>-<16 hex digits>`: a name nobody else can guess and plant first.
    let (stamp, suffix) = dir[expected_prefix.len()..]
        .split_once('-')
        .unwrap_or_default();
    assert_eq!(stamp.len(), "YYYYMMDDTHHMMSSZ".len(), "{dir}");
    assert!(
        suffix.len() == 16 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
        "{dir}"
    );
    // Created lazily: a status call creates nothing.
    assert!(!Path::new(dir).exists());

    let mut headed = start_server_with(
        "status-headed",
        &["--headed", "--cdp-endpoint", "http://127.0.0.1:1"],
        &[],
    );
    let status = headed.ok("browser_status", json!({})).0;
    assert_eq!(
        (status["mode"].clone(), status["headless"].clone()),
        (json!("cdp-endpoint"), json!(false))
    );
}

#[test]
fn success_results_carry_compact_json_text_and_structured_content_only_when_asked() {
    let expected =
        json!({ "entries": [], "cursor": 0, "dropped": 0, "truncated": false, "capturing": false });
    let mut asked = start_server_with("shape-structured", &["--structured-content"], &[]);
    let result = asked.call("browser_logs", json!({}))["result"].clone();
    assert_eq!(
        result,
        json!({
            "content": [{ "type": "text", "text": expected.to_string() }],
            "structuredContent": { "result": expected },
        })
    );
    let mut by_env = start_server_with(
        "shape-env",
        &[],
        &[("CHROMATE_MCP_STRUCTURED_CONTENT", "1")],
    );
    let result = by_env.call("browser_logs", json!({}))["result"].clone();
    assert_eq!(result["structuredContent"]["result"], expected);

    let mut server = start_server("shape");
    let response = server.call("browser_logs", json!({}));
    let result = &response["result"];
    // By default nothing but the content blocks: the text is what every host shows.
    assert_eq!(
        result,
        &json!({ "content": [{ "type": "text", "text": expected.to_string() }] })
    );
    assert_eq!(
        server.ok("browser_logs", json!({ "action": "clear" })).0,
        json!({ "ok": true, "cleared": 0, "capturing": false })
    );
    let error = server.err("browser_logs", json!({ "kind": "console,warnings" }));
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
}

#[test]
fn mocks_are_held_by_the_server() {
    let mut server = start_server("mocks");
    let added = server
        .ok(
            "browser_mock",
            json!({ "action": "add", "pattern": "https://api.test/*", "body": "{\"a\":1}" }),
        )
        .0;
    assert_eq!(
        added,
        json!({ "ok": true, "action": "add", "id": "m1", "pattern": "https://api.test/*", "status": 200 })
    );
    let blocked = server
        .ok(
            "browser_mock",
            json!({ "action": "block", "pattern": "**/ads/*" }),
        )
        .0;
    assert_eq!(
        blocked,
        json!({ "ok": true, "action": "block", "id": "m2", "pattern": "**/ads/*" })
    );
    let list = server.ok("browser_mock", json!({})).0;
    assert_eq!(
        list,
        json!({ "mocks": [
        { "id": "m1", "pattern": "https://api.test/*", "kind": "mock", "status": 200 },
        { "id": "m2", "pattern": "**/ads/*", "kind": "block" } ], "count": 2 })
    );
    assert_eq!(
        server
            .ok("browser_mock", json!({ "action": "remove", "id": "m1" }))
            .0,
        json!({ "ok": true, "action": "remove", "id": "m1", "remaining": 1 })
    );
    let error = server.err("browser_mock", json!({ "action": "remove", "id": "m1" }));
    assert_eq!(
        (error["code"].clone(), error["detail"]["open"].clone()),
        (json!("INVALID_ARGUMENT"), json!(["m2"]))
    );
    let error = server.err("browser_mock", json!({ "action": "add" }));
    assert_eq!(
        error["message"],
        json!("mock: action \"add\" needs \"pattern\"")
    );
    for _ in 0..19 {
        server.ok("browser_mock", json!({ "action": "block", "pattern": "x" }));
    }
    let error = server.err("browser_mock", json!({ "action": "block", "pattern": "y" }));
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("STATE_INVALID"),
            json!("mock: limit reached (20 active)")
        )
    );
    assert_eq!(
        server.ok("browser_mock", json!({ "action": "clear" })).0,
        json!({ "ok": true, "action": "clear", "cleared": 20 })
    );
    let again = server
        .ok("browser_mock", json!({ "action": "block", "pattern": "z" }))
        .0;
    assert_eq!(again["id"], json!("m22"), "ids are never reused");
}

#[test]
fn trace_state_and_page_lists_never_launch() {
    let mut server = start_server("lists-no-launch");
    let trace = server.ok("browser_trace", json!({})).0;
    assert_eq!(trace["running"], json!(false));
    assert!(trace["root"]
        .as_str()
        .unwrap_or_default()
        .ends_with("/traces"));
    let error = server.err("browser_trace", json!({ "action": "stop" }));
    assert_eq!(
        (error["code"].clone(), error["message"].clone()),
        (
            json!("STATE_INVALID"),
            json!("trace stop: no trace is recording")
        )
    );
    assert_eq!(
        server.ok("browser_page", json!({ "action": "list" })).0,
        json!({ "pages": [], "count": 0, "active": null })
    );
    let state_root = server.artifacts_dir().join("state");
    let states = server.ok("browser_state", json!({})).0;
    assert_eq!(
        states,
        json!({ "states": [], "root": state_root.display().to_string() })
    );
    assert!(!state_root.exists(), "list must not create the state root");
    let _ = std::fs::create_dir_all(&state_root);
    let _ = std::fs::write(state_root.join("admin.json"), "{}");
    assert_eq!(
        server.ok("browser_state", json!({ "action": "list" })).0["states"],
        json!(["admin"])
    );
    let error = server.err(
        "browser_state",
        json!({ "action": "load", "name": "guest" }),
    );
    assert_eq!(
        error["message"],
        json!("state load: no saved state named \"guest\"")
    );
    assert_eq!(error["detail"]["available"], json!(["admin"]));
}

#[test]
fn tool_errors_render_error_code_and_hint_lines_without_launching() {
    let mut server = start_server("tool-error");
    let response = server.call("browser_trace", json!({ "action": "stop" }));
    let result = &response["result"];
    assert_eq!(result["isError"], json!(true));
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        json!("STATE_INVALID")
    );
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "error: trace stop: no trace is recording");
    assert_eq!(lines[1], "code:  STATE_INVALID");
    assert!(lines[2].starts_with("hint:  "));
    assert_eq!(
        result["content"].as_array().map(Vec::len),
        Some(1),
        "errors carry no observation"
    );
}

#[test]
fn cross_argument_rules_fail_before_the_browser() {
    let mut server = start_server("cross-args");
    let cases = [
        ("browser_navigate", json!({ "url": "example.com" }), "navigate: \"example.com\" is not an absolute http, https, file or data URL, or about:blank"),
        ("browser_mouse", json!({ "action": "click", "x": 3 }), "mouse: x and y go together"),
        ("browser_mouse", json!({ "action": "move" }), "mouse: move needs a target (selector or x/y)"),
        ("browser_mouse", json!({ "action": "click", "x": 1, "y": 2, "selector": "#a" }), "mouse: pass either selector or x/y, not both"),
        ("browser_wait", json!({ "state": "load", "selector": "#a" }), "wait: state \"load\" is a load state and takes no selector"),
        ("browser_wait", json!({ "state": "hidden" }), "wait: state \"hidden\" needs a selector"),
        ("browser_read", json!({ "field": "attr", "selector": "a" }), "read: field \"attr\" needs \"name\""),
        ("browser_expect", json!({ "what": "url" }), "expect: \"url\" needs exactly one of \"expected\" and \"contains\""),
        ("browser_expect", json!({ "what": "text", "selector": "#m", "expected": "a", "contains": "b" }), "expect: \"text\" needs exactly one of \"expected\" and \"contains\""),
        ("browser_element", json!({ "action": "select", "selector": "#s" }), "element: action \"select\" needs \"value\""),
        ("browser_key", json!({ "action": "press", "key": "Control+A" }), "key: \"Control+A\" is a chord; browser_key takes one key"),
        ("browser_dialog", json!({ "action": "dismiss", "text": "x" }), "dialog: text is only for action \"accept\", not \"dismiss\""),
        ("browser_upload", json!({ "selector": "#f", "files": ["Cargo.toml", "definitely/not/here"] }), "upload: files[1] does not exist or is not a regular file"),
        ("browser_screenshot", json!({ "selector": "#a", "full_page": true }), "screenshot: full_page cannot be combined with selector"),
        ("browser_a11y", json!({ "rules": "label", "disable_rules": "region" }), "a11y: pass either rules or disable_rules, not both"),
        ("browser_page", json!({ "action": "select" }), "page select: missing \"target\""),
        ("browser_state", json!({ "action": "save" }), "state save: missing \"name\""),
    ];
    for (tool, arguments, message) in cases {
        let error = server.err(tool, arguments);
        assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{tool}: {error}");
        assert_eq!(error["message"], json!(message), "{tool}");
        assert!(error["hint"].is_string(), "{tool}: every error has a hint");
    }
}

/// Uploads read only under the server's working directory (here the crate's `mcp/`): a file
/// outside, existing or not, gets one message naming the rule and the flag, before any browser
/// work (none is launched).
#[test]
fn uploads_outside_the_working_directory_are_refused_alike_whether_they_exist_or_not() {
    let mut server = start_server("upload-rule");
    let outside = "upload: files[0] is outside the server's working directory and the client's roots, the only places uploads may read from (--allow-unrestricted-file-access lifts this)";
    let mut errors = Vec::new();
    for file in [
        "/etc/hostname",
        "/definitely/not/here",
        "../Cargo.toml",
        "/proc/self/environ",
    ] {
        let error = server.err(
            "browser_upload",
            json!({ "selector": "#f", "files": [file] }),
        );
        assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{file}: {error}");
        assert_eq!(error["message"], json!(outside), "{file}");
        assert_eq!(
            error["detail"],
            json!({ "argument": "files[0]", "reason": "outside-allowed-directories" }),
            "{file}"
        );
        assert!(
            error["hint"]
                .as_str()
                .is_some_and(|hint| hint.contains("--allow-unrestricted-file-access")),
            "{error}"
        );
        errors.push(error);
    }
    assert!(
        errors.windows(2).all(|pair| pair[0] == pair[1]),
        "existing and missing files outside answer alike: {errors:?}"
    );
    let status = server.ok("browser_status", json!({})).0;
    assert_eq!(status["browserPid"], Value::Null, "no browser was launched");
}

#[test]
fn issue_12_an_unsupported_scheme_names_the_supported_ones_and_launches_nothing() {
    let mut server = start_server("schemes");
    let error = server.err("browser_navigate", json!({ "url": "ftp://127.0.0.1/x" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
    assert_eq!(
        error["hint"],
        json!("use an http, https, file or data URL, or about:blank; the ftp: scheme is not supported")
    );
    let error = server.err(
        "browser_page",
        json!({ "action": "open", "url": "ftp://127.0.0.1/x" }),
    );
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|h| h.contains("ftp: scheme is not supported")),
        "{error}"
    );
    let error = server.err("browser_navigate", json!({ "url": "example.com" }));
    assert_eq!(
        error["hint"],
        json!("add the scheme, e.g. https://example.com")
    );
    // Rejected by validation: no browser was started for any of them.
    let status = server.call("browser_status", json!({}));
    let text = status["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let status: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    assert_eq!(status["ready"], json!(false), "{status}");
}

#[test]
fn batch_runs_steps_in_order_and_stops_at_the_first_failure() {
    let mut server = start_server("batch");
    let response = server.call(
        "browser_batch",
        json!({ "steps": [
        { "tool": "browser_mock", "arguments": { "action": "block", "pattern": "x" } },
        { "tool": "browser_trace", "arguments": { "action": "stop" } },
        { "tool": "browser_status" } ] }),
    );
    let result = &response["result"];
    assert_eq!(result["isError"], json!(true));
    let batch = &result["structuredContent"]["result"];
    assert_eq!(
        (
            batch["ok"].clone(),
            batch["ran"].clone(),
            batch["skipped"].clone(),
            batch["failedStep"].clone()
        ),
        (json!(false), json!(2), json!(1), json!(1))
    );
    assert_eq!(batch["steps"][1]["error"]["code"], json!("STATE_INVALID"));
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("1 ✓ browser_mock  "), "{text}");
    assert!(text.contains("\n2 ✗ browser_trace  "), "{text}");
    // The tripwire (docs/mcp.md#observations) follows the summary.
    assert!(
        text.contains("\nstopped at step 2 of 3; 1 later step(s) not run\n"),
        "{text}"
    );

    // A successful batch follows docs/mcp.md#results: its result JSON is structured only when asked for, since
    // content[0] is the step summary.
    let response = server.call("browser_batch", json!({ "continue_on_error": true, "steps": [{ "tool": "browser_mock" }, { "tool": "browser_status" }] }));
    assert!(
        response["result"].get("structuredContent").is_none(),
        "{response}"
    );
    let mut structured = start_server_with("batch-structured", &["--structured-content"], &[]);
    structured.call("browser_mock", json!({ "action": "block", "pattern": "x" }));
    let response = structured.call("browser_batch", json!({ "continue_on_error": true, "steps": [{ "tool": "browser_mock" }, { "tool": "browser_status" }] }));
    let ok = response["result"]["structuredContent"]["result"].clone();
    assert_eq!(
        (ok["ok"].clone(), ok["ran"].clone()),
        (json!(true), json!(2))
    );
    assert_eq!(ok["steps"][0]["result"]["count"], json!(1));

    let error = server.err("browser_batch", json!({ "steps": [{ "tool": "browser_status" }, { "tool": "browser_mock", "arguments": { "action": "add" } }] }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(error["detail"]["step"], json!(1));
    assert_eq!(
        error["message"],
        json!("batch: steps[1] (browser_mock): mock: action \"add\" needs \"pattern\"")
    );
}
