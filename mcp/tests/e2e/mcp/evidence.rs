//! Evidence: browser_screenshot (numbered PNGs, a quota), browser_a11y (violations with refs,
//! bounds, a missing axe-core) and browser_trace (every call recorded, an offline viewer and a
//! zip, a trace that survives a killed server).

use std::process::Command;
use std::time::Duration;

use chromate_tests::procs;
use serde_json::{json, Value};

use super::{assert_all_gone, data_url, start_mcp, start_mcp_with, start_mcp_with_args};
use crate::util::fixtures;

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
    // The model reads the password's value; the trace never does (docs/mcp.md#secrets).
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
