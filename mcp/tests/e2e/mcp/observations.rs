//! What a call tells the model beyond its result: browser_batch's single observation, the
//! logs journal (list, wait, clear) and the tripwire line every observation ends with, and
//! what each host family shows the model of a result, by default and with
//! `--structured-content`.

use serde_json::{json, Value};

use super::{data_url, mcp_command, start_mcp, start_mcp_with_args, tripwire_of};
use crate::util::fixtures;

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

#[test]
fn mcp_a_click_that_changes_only_the_hash_is_a_diff_of_the_settled_page() {
    // Issue 28 item 8: a same-document navigation is a diff, observed once the page rendered
    // what the new hash shows (real-patterns.html section 11 adds its button 150 ms later).
    let server = fixtures();
    let mut mcp = start_mcp();
    let url = server.url("real-patterns.html");
    mcp.ok("browser_navigate", json!({ "url": url }));
    let (_, observation) = mcp.ok("browser_click", json!({ "selector": "#route-link" }));
    let observation = observation.unwrap_or_default();
    let mut lines = observation.lines();
    assert_eq!(
        lines.next(),
        Some(format!("page: Real page patterns — {url}#/route/findByStatus").as_str()),
        "{observation}"
    );
    let body: Vec<&str> = lines.filter(|l| !l.starts_with("errors: ")).collect();
    assert_eq!(body.len(), 1, "only the new button: {observation}");
    assert!(
        body[0].starts_with("+ e") && body[0].ends_with(": button \"Try it out\""),
        "{observation}"
    );
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
/// in both host families, by default and with `--structured-content` (docs/mcp.md#structured-content, docs/mcp.md#observations).
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
