//! `chromate mcp --caps webmcp` (docs/mcp.md#webmcp): the page's own tools as `webmcp_<name>`
//! tools and through browser_webmcp, on the fixture pages `webmcp*.html` in real Chromium.
//! Without the cap nothing changes (the tools/list golden of `tests/wire` says the same).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{start_mcp, start_mcp_with_args};
use crate::util::fixtures;
use chromate_tests::McpClient;

fn start_webmcp() -> McpClient {
    start_mcp_with_args(&["--caps", "webmcp"], &[])
}

/// `initialize`, whose answer declares `tools.listChanged` (the cap is on).
fn initialize_with_list_changes(mcp: &mut McpClient) {
    let init = mcp.request(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"],
        json!(true),
        "{init}"
    );
}

/// The names tools/list offers.
fn listed(mcp: &mut McpClient) -> Vec<String> {
    let list = mcp.request("tools/list", json!({}));
    list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The tools/list entry called `name`.
fn entry(mcp: &mut McpClient, name: &str) -> Value {
    let list = mcp.request("tools/list", json!({}));
    list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|tool| tool["name"] == json!(name))
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

/// The names browser_webmcp `list` gives, called with `arguments`.
fn webmcp_list(mcp: &mut McpClient, arguments: Value) -> Vec<String> {
    let (list, _) = mcp.ok("browser_webmcp", arguments);
    list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

fn page_tools(names: &[String]) -> Vec<&str> {
    names
        .iter()
        .map(String::as_str)
        .filter(|name| name.starts_with("webmcp_"))
        .collect()
}

/// Reads messages until a `notifications/tools/list_changed` comes (within the client's
/// deadline); the stash keeps everything else.
fn await_list_changed(mcp: &mut McpClient) {
    let mut others = Vec::new();
    for message in mcp.take_stashed() {
        if message["method"] == json!("notifications/tools/list_changed") {
            return;
        }
        others.push(message);
    }
    loop {
        let message = mcp.recv();
        if message["method"] == json!("notifications/tools/list_changed") {
            return;
        }
        assert!(
            message.get("id").is_none() || message.get("method").is_some(),
            "an unexpected response while waiting for list_changed: {message} (before: {others:?})"
        );
        others.push(message);
    }
}

/// Polls tools/list until `done` holds on the page tools (each poll is a request answered at
/// once, bounded by the client's deadline overall).
fn list_until(mcp: &mut McpClient, done: impl Fn(&[&str]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let names = listed(mcp);
        if done(&page_tools(&names)) {
            return names;
        }
        assert!(
            Instant::now() < deadline,
            "tools/list never got there: {names:?}"
        );
        // Waits for the next list_changed rather than sleeping (the server updates the list
        // before it says so, so none is missed).
        await_list_changed(mcp);
    }
}

#[test]
fn mcp_without_the_cap_offers_no_page_tools_and_declares_no_list_changes() {
    let server = fixtures();
    let mut mcp = start_mcp();
    let init = mcp.request(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
    );
    assert_eq!(init["result"]["capabilities"]["tools"], json!({}), "{init}");
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("webmcp.html") }),
    );
    let names = listed(&mut mcp);
    assert_eq!(names.len(), 28, "{names:?}");
    assert!(page_tools(&names).is_empty(), "{names:?}");
    // The page itself sees no WebMCP in a browser launched without the cap.
    let (value, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "typeof document.modelContext" }),
    );
    assert_eq!(value["result"], json!("undefined"));
    let error = mcp.call("webmcp_add_to_cart", json!({}));
    assert!(error["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("unknown tool")));
}

#[test]
fn mcp_webmcp_projects_registers_calls_and_follows_the_page() {
    let server = fixtures();
    let mut mcp = start_webmcp();
    initialize_with_list_changes(&mut mcp);
    let before = listed(&mut mcp);
    assert!(before.contains(&"browser_webmcp".to_owned()), "{before:?}");
    assert_eq!(before.len(), 29, "{before:?}");

    // Imperative, declarative and same-origin frame tools, once the page registered them.
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("webmcp.html") }),
    );
    let names = list_until(&mut mcp, |tools| tools.len() >= 6);
    let mut tools = page_tools(&names);
    tools.sort_unstable();
    assert_eq!(
        tools,
        [
            "webmcp_add_to_cart",
            "webmcp_explode",
            "webmcp_frame_tool",
            "webmcp_get_cart",
            "webmcp_hang",
            "webmcp_search_products",
        ]
    );
    let add = entry(&mut mcp, "webmcp_add_to_cart");
    let description = add["description"].as_str().unwrap_or_default();
    assert!(
        description.starts_with(&format!(
            "A tool the page offers (WebMCP), origin {}: Add an item to the cart",
            server.origin()
        )),
        "{description}"
    );
    assert!(
        description.contains("confirm with the user"),
        "{description}"
    );
    assert_eq!(add["annotations"]["destructiveHint"], json!(true));
    assert_eq!(add["inputSchema"]["required"], json!(["item"]));
    let get = entry(&mut mcp, "webmcp_get_cart");
    assert_eq!(get["annotations"]["readOnlyHint"], json!(true));
    assert!(get["description"]
        .as_str()
        .is_some_and(|d| d.contains("untrusted content")));
    let frame = entry(&mut mcp, "webmcp_frame_tool");
    assert!(frame["description"]
        .as_str()
        .is_some_and(|d| d.starts_with("A tool a frame inside the page offers")));

    // A call: the page's output, then the usual observation (the cart line changed).
    let result = mcp.call_result("webmcp_add_to_cart", json!({ "item": "tea", "qty": 2 }));
    assert!(result.get("isError").is_none(), "{result}");
    assert_eq!(result["content"][0]["text"], json!("added 2 tea"));
    let observation = result["content"][1]["text"].as_str().unwrap_or_default();
    assert!(observation.contains("cart: 2"), "{observation}");
    let result = mcp.call_result("webmcp_get_cart", json!({}));
    assert_eq!(
        result["content"][0]["text"],
        json!("(untrusted content, says the page)\n{\"count\":2}")
    );
    let result = mcp.call_result("webmcp_frame_tool", json!({}));
    assert_eq!(
        result["content"][0]["text"],
        json!(format!("from 127.0.0.1:{}", server.port()))
    );

    // A tool that throws: a tool error with the page's message.
    let error = mcp.err("webmcp_explode", json!({}));
    assert_eq!(error["code"], json!("EVAL_THREW"), "{error}");
    assert!(error["message"]
        .as_str()
        .is_some_and(|m| m.contains("out of stock: the page says no")));

    // A tool that never answers: TIMEOUT at the call's deadline, and the page canceled it.
    let started = Instant::now();
    let error = mcp.err(
        "browser_webmcp",
        json!({ "action": "call", "name": "hang", "timeout_ms": 800 }),
    );
    assert_eq!(error["code"], json!("TIMEOUT"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(error["message"]
        .as_str()
        .is_some_and(|m| m.contains("canceled")));
    let (value, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "window.hangStarted" }),
    );
    assert_eq!(value["result"], json!(1), "the page ran it once");
    // The cancellation reached the page: its `toolcancel` event named the tool.
    let (value, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "[window.canceled, window.canceledTool]" }),
    );
    assert_eq!(value["result"], json!([1, "hang"]));

    // A tool added after a click: list_changed, and the list has it.
    let _ = mcp.take_stashed();
    mcp.ok("browser_click", json!({ "selector": "#more" }));
    let names = list_until(&mut mcp, |tools| tools.contains(&"webmcp_checkout"));
    assert!(names.contains(&"webmcp_checkout".to_owned()));
    // A tool removed: the page drops its form.
    mcp.ok("browser_click", json!({ "selector": "#fewer" }));
    list_until(&mut mcp, |tools| !tools.contains(&"webmcp_search_products"));
    // Called anyway: a clear error naming what there is now.
    let error = mcp.err("webmcp_search_products", json!({ "query": "tea" }));
    assert_eq!(error["code"], json!("NO_MATCH"), "{error}");
    let available = error["detail"]["available"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(available.contains(&json!("webmcp_checkout")), "{error}");
    assert!(
        !available.contains(&json!("webmcp_search_products")),
        "{error}"
    );

    // The snapshot header says the page offers tools.
    let result = mcp.call_result("browser_snapshot", json!({}));
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let second = text.lines().nth(1).unwrap_or_default();
    assert!(second.starts_with("webmcp: 6 tools: "), "{text}");

    // browser_webmcp list says the same as tools/list.
    let listed_names = webmcp_list(&mut mcp, json!({ "action": "list" }));
    assert!(
        listed_names.contains(&"webmcp_checkout".to_owned()),
        "{listed_names:?}"
    );
    assert_eq!(listed_names.len(), 6, "{listed_names:?}");

    // A navigation away takes the tools along (no toolsRemoved from Chromium).
    mcp.ok("browser_navigate", json!({ "url": server.url("nav.html") }));
    list_until(&mut mcp, |tools| tools.is_empty());
}

#[test]
fn mcp_webmcp_declarative_call_submits_the_form() {
    let server = fixtures();
    let mut mcp = start_webmcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("webmcp.html") }),
    );
    list_until(&mut mcp, |tools| tools.contains(&"webmcp_search_products"));
    let result = mcp.call_result("webmcp_search_products", json!({ "query": "tea" }));
    assert!(result.get("isError").is_none(), "{result}");
    let (value, _) = mcp.ok("browser_advanced_eval", json!({ "js": "location.search" }));
    assert_eq!(value["result"], json!("?query=tea"));
}

#[test]
fn mcp_webmcp_hostile_names_and_descriptions_are_sanitised_and_cut() {
    let server = fixtures();
    let mut mcp = start_webmcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("webmcp-hostile.html") }),
    );
    let names = list_until(&mut mcp, |tools| tools.len() >= 4);
    let mut tools = page_tools(&names);
    tools.sort_unstable();
    let long = format!("webmcp_{}", "n".repeat(57));
    assert_eq!(
        tools,
        [
            "webmcp_a_b-c_d",
            "webmcp_a_b-c_d_2",
            "webmcp_array_schema",
            long.as_str(),
        ]
    );
    for name in &tools {
        assert!(name.len() <= 64);
        assert!(name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }
    // Whichever of the two colliding tools registered first keeps the plain name.
    let big = ["webmcp_a_b-c_d", "webmcp_a_b-c_d_2"]
        .into_iter()
        .map(|name| entry(&mut mcp, name))
        .find(|tool| tool["title"] == json!("a.b-c_d"))
        .expect("a.b-c_d");
    let description = big["description"].as_str().unwrap_or_default();
    assert!(
        description.ends_with("… (cut at 1024 of 10240 characters)"),
        "{}",
        &description[description.len().saturating_sub(80)..]
    );
    assert!(description.len() < 1200, "{}", description.len());
    let array = entry(&mut mcp, "webmcp_array_schema");
    assert_eq!(array["inputSchema"], json!({ "type": "object" }));
    // Chromium itself refused the name with a space and the form's hostile toolname.
    let (value, _) = mcp.ok(
        "browser_advanced_eval",
        json!({ "js": "window.registrations.filter(r => r.startsWith('space name'))" }),
    );
    assert_eq!(value["result"], json!(["space name: Invalid tool name"]));
    // The bounded tools/list stays small whatever the page sends.
    let list = mcp.request("tools/list", json!({}));
    assert!(list.to_string().len() < 64 * 1024);
}

#[test]
fn mcp_webmcp_two_tabs_and_a_cross_site_frame() {
    let server = fixtures();
    let mut mcp = start_webmcp();
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("webmcp.html") }),
    );
    list_until(&mut mcp, |tools| tools.contains(&"webmcp_add_to_cart"));
    // A second tab with tools of its own becomes active: the list follows it.
    mcp.ok(
        "browser_page",
        json!({ "action": "open", "url": server.url("webmcp-other.html") }),
    );
    let names = list_until(&mut mcp, |tools| tools == ["webmcp_other_tool"]);
    assert!(!names.contains(&"webmcp_add_to_cart".to_owned()));
    let result = mcp.call_result("webmcp_other_tool", json!({}));
    assert_eq!(result["content"][0]["text"], json!("other"));
    // The first tab's tool is not callable from here.
    let error = mcp.err("webmcp_add_to_cart", json!({ "item": "x" }));
    assert_eq!(error["code"], json!("NO_MATCH"));
    // browser_webmcp with `tab` reaches the first tab's tools without making it active.
    let names = webmcp_list(&mut mcp, json!({ "action": "list", "tab": "p1" }));
    assert!(
        names.contains(&"webmcp_add_to_cart".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"webmcp_other_tool".to_owned()),
        "{names:?}"
    );
    let result = mcp.call_result(
        "browser_webmcp",
        json!({ "action": "call", "name": "add_to_cart", "arguments": { "item": "tab", "qty": 3 }, "tab": "p1" }),
    );
    assert!(result.get("isError").is_none(), "{result}");
    assert_eq!(result["content"][0]["text"], json!("added 3 tab"));
    let observation = result["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        observation.contains("cart: 3"),
        "the observation is p1's: {observation}"
    );
    let (pages, _) = mcp.ok("browser_page", json!({ "action": "list" }));
    assert_eq!(pages["active"], json!("p2"), "{pages}");
    let tools = listed(&mut mcp);
    assert_eq!(page_tools(&tools), ["webmcp_other_tool"], "{tools:?}");
    let error = mcp.err("browser_webmcp", json!({ "action": "list", "tab": "p9" }));
    assert_eq!(error["detail"]["reason"], json!("unknown-tab"), "{error}");
    // Back to the first tab: list_changed, and its tools again.
    let _ = mcp.take_stashed();
    mcp.ok("browser_page", json!({ "action": "select", "target": "0" }));
    await_list_changed(&mut mcp);
    list_until(&mut mcp, |tools| tools.contains(&"webmcp_add_to_cart"));
    // A frame from another site, in its own process: its tool too.
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("webmcp-xo.html") }),
    );
    list_until(&mut mcp, |tools| tools == ["webmcp_frame_tool"]);
    let frame = entry(&mut mcp, "webmcp_frame_tool");
    let origin = format!("http://localhost:{}", server.port());
    assert!(
        frame["description"]
            .as_str()
            .is_some_and(|d| d.contains(&origin)),
        "{frame}"
    );
    let result = mcp.call_result("webmcp_frame_tool", json!({}));
    assert_eq!(
        result["content"][0]["text"],
        json!(format!("from localhost:{}", server.port()))
    );
}

/// A real MCP client, the Python SDK (`tests/clients/webmcp.py`, in `target/venv`): it sees
/// `tools.listChanged`, gets `notifications/tools/list_changed` when the page registers a tool
/// after a navigation and after a click, its refreshed list has the new tool, and calling it
/// works; the browser its server launched is gone once the client exits.
#[test]
fn mcp_webmcp_a_real_client_sees_the_list_change_and_calls_the_new_tool() {
    let run = crate::util::python_stdio_client("webmcp.py", &fixtures());
    run.assert_passed("python webmcp", 7);
    run.assert_browser_gone();
}

/// `chromate mcp --session NAME --caps webmcp` (docs/mcp.md#webmcp): the server attached to a
/// CLI session offers the page tools of the session's active tab, is told when the page
/// changes them, even by a command at the shell, and its calls run in the session's page.
#[test]
fn mcp_webmcp_attached_to_a_cli_session_offers_its_page_tools_and_their_changes() {
    let server = fixtures();
    let cli = crate::cli::Cli::new();
    cli.ok(&["navigate", &server.url("webmcp.html"), "--session", "tools"]);
    let runtime = cli.runtime.display().to_string();
    let mut mcp = chromate_tests::McpCommand::new(crate::util::chromate_binary())
        .args(&["--session", "tools", "--caps", "webmcp"])
        .envs(&[("CHROMATE_RUNTIME_DIR", &runtime)])
        .keep_env("CHROMATE_BROWSER")
        .current_dir(&cli.work)
        .deadline(Duration::from_secs(60))
        .spawn();
    initialize_with_list_changes(&mut mcp);
    // The session's page tools, before this server made any call.
    list_until(&mut mcp, |tools| tools.contains(&"webmcp_add_to_cart"));
    // A command at the shell adds one: the client is told, and lists it.
    let _ = mcp.take_stashed();
    cli.ok(&["click", "#more", "--session", "tools"]);
    list_until(&mut mcp, |tools| tools.contains(&"webmcp_checkout"));
    // A page tool called over MCP runs in the session's page.
    let result = mcp.call_result("webmcp_add_to_cart", json!({ "item": "tea", "qty": 2 }));
    assert_eq!(
        result["content"][0]["text"],
        json!("added 2 tea"),
        "{result}"
    );
    assert_eq!(
        cli.json(&["read", "css=#cart", "--session", "tools"])["text"],
        json!("cart: 2")
    );
    // The shell navigates away: the tools go.
    cli.ok(&["navigate", &server.url("nav.html"), "--session", "tools"]);
    list_until(&mut mcp, |tools| tools.is_empty());
    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(10)).success());
    cli.finish();
}
