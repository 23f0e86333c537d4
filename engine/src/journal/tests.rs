//! Unit tests of the journal: argument formatting, cuts, filters, buffers and eviction counts.

use std::time::Duration;

use serde_json::json;
use serde_json::value::{to_raw_value, RawValue};

use super::console::{console_called, exception_thrown};
use super::*;

fn raw(value: serde_json::Value) -> Box<RawValue> {
    to_raw_value(&value).unwrap_or_else(|err| panic!("{err}"))
}

/// The text of a console call with `args` (RemoteObjects as JSON).
fn console_text(kind: &str, args: serde_json::Value) -> String {
    let params =
        raw(json!({ "type": kind, "args": args, "executionContextId": 1, "timestamp": 0 }));
    match console_called(&params) {
        Some(LogData::Console { text, .. }) => text,
        other => panic!("not a console entry: {other:?}"),
    }
}

fn string(s: &str) -> serde_json::Value {
    json!({ "type": "string", "value": s })
}

fn number(n: f64) -> serde_json::Value {
    json!({ "type": "number", "value": n, "description": n.to_string() })
}

fn user_object() -> serde_json::Value {
    json!({
        "type": "object", "className": "Object", "description": "Object", "objectId": "1",
        "preview": { "type": "object", "description": "Object", "overflow": false, "properties": [
            { "name": "user", "type": "string", "value": "ann" },
            { "name": "role", "type": "string", "value": "admin" },
        ]},
    })
}

#[test]
fn console_arguments_are_space_joined_and_strings_unquoted() {
    assert_eq!(
        console_text("log", json!([string("number"), number(3.5), number(-7.0)])),
        "number 3.5 -7"
    );
    assert_eq!(
        console_text(
            "info",
            json!([
                string("info message"),
                json!({"type": "number", "value": 42})
            ])
        ),
        "info message 42"
    );
}

#[test]
fn objects_print_as_compact_previews() {
    assert_eq!(
        console_text("log", json!([user_object()])),
        r#"{user: "ann", role: "admin"}"#
    );
    let array = json!({
        "type": "object", "subtype": "array", "description": "Array(3)",
        "preview": { "type": "object", "subtype": "array", "description": "Array(3)", "overflow": true,
            "properties": [
                { "name": "0", "type": "number", "value": "1" },
                { "name": "1", "type": "object", "value": "Object", "valuePreview": {
                    "type": "object", "description": "Object", "overflow": false,
                    "properties": [{ "name": "a", "type": "boolean", "value": "true" }] } },
            ] },
    });
    assert_eq!(console_text("log", json!([array])), "[1, {a: true}, …]");
    let class = json!({
        "type": "object", "className": "Point", "description": "Point",
        "preview": { "type": "object", "description": "Point", "overflow": false,
            "properties": [{ "name": "x", "type": "number", "value": "1" }] },
    });
    assert_eq!(console_text("log", json!([class])), "Point {x: 1}");
    let null_object = json!({ "type": "object", "subtype": "null", "value": null });
    let undefined = json!({ "type": "undefined" });
    assert_eq!(
        console_text("log", json!([null_object, undefined])),
        "null undefined"
    );
    let bare = json!({ "type": "object", "className": "HTMLDivElement", "description": "div#x" });
    assert_eq!(console_text("log", json!([bare])), "div#x");
}

#[test]
fn format_specifiers_substitute_like_the_console() {
    assert_eq!(
        console_text(
            "log",
            json!([string("user %s has %d items"), string("ann"), number(3.0)])
        ),
        "user ann has 3 items"
    );
    let id = json!({
        "type": "object", "description": "Object",
        "preview": { "type": "object", "description": "Object", "overflow": false,
            "properties": [{ "name": "id", "type": "number", "value": "7" }] },
    });
    assert_eq!(
        console_text("log", json!([string("object %o"), id])),
        "object {id: 7}"
    );
    assert_eq!(
        console_text(
            "log",
            json!([string("%cstyled text"), string("color: red")])
        ),
        "styled text"
    );
    assert_eq!(
        console_text(
            "log",
            json!([string("%i|%f|%d%%"), number(2.9), number(1.5), string("x")])
        ),
        "2|1.5|NaN%"
    );
    assert_eq!(
        console_text("log", json!([string("%s and %s"), string("one")])),
        "one and %s",
        "a specifier without an argument stays"
    );
    assert_eq!(
        console_text("log", json!([string("a"), string("%s")])),
        "a %s",
        "only the first argument is a template"
    );
}

#[test]
fn levels_follow_the_console_method() {
    let level = |kind: &str| {
        let params = json!({ "type": kind, "args": [], "executionContextId": 1, "timestamp": 0 });
        match console_called(&raw(params)) {
            Some(LogData::Console { level, method, .. }) => (level, method),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(level("debug"), (LogLevel::Debug, "debug".into()));
    assert_eq!(level("warning"), (LogLevel::Warn, "warn".into()));
    assert_eq!(level("error"), (LogLevel::Error, "error".into()));
    assert_eq!(level("assert"), (LogLevel::Error, "assert".into()));
    assert_eq!(level("log"), (LogLevel::Info, "log".into()));
    assert_eq!(level("table"), (LogLevel::Info, "table".into()));
    assert_eq!(
        console_text("assert", json!([string("expected true")])),
        "Assertion failed: expected true"
    );
}

#[test]
fn console_origin_is_the_top_frame_one_based() {
    let params = raw(json!({
        "type": "log", "args": [string("x")], "executionContextId": 1, "timestamp": 0,
        "stackTrace": { "callFrames": [
            { "functionName": "f", "scriptId": "1", "url": "http://h/p.html", "lineNumber": 9, "columnNumber": 4 },
            { "functionName": "", "scriptId": "1", "url": "http://h/other.js", "lineNumber": 0, "columnNumber": 0 },
        ] },
    }));
    match console_called(&params) {
        Some(LogData::Console { origin, .. }) => {
            assert_eq!(origin.as_deref(), Some("http://h/p.html:10:5"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn exceptions_keep_the_first_line_and_rejections_say_so() {
    let thrown = raw(json!({ "timestamp": 0, "exceptionDetails": {
        "exceptionId": 1, "text": "Uncaught", "lineNumber": 2, "columnNumber": 10,
        "url": "http://h/console.html",
        "exception": { "type": "object", "subtype": "error", "className": "TypeError",
            "description": "TypeError: Cannot read properties of undefined (reading 'property')\n    at http://h/console.html:3:11" },
    }}));
    assert_eq!(
        exception_thrown(&thrown),
        Some(LogData::Error {
            method: "exception".into(),
            text: "TypeError: Cannot read properties of undefined (reading 'property')".into(),
            origin: Some("http://h/console.html:3:11".into()),
            stack: Some(
                "TypeError: Cannot read properties of undefined (reading 'property')\n    at http://h/console.html:3:11"
                    .into()
            ),
        })
    );
    let rejected = raw(json!({ "timestamp": 0, "exceptionDetails": {
        "exceptionId": 2, "text": "Uncaught (in promise)", "lineNumber": 0, "columnNumber": 0,
        "exception": { "type": "object", "subtype": "error", "className": "Error",
            "description": "Error: rejected on purpose\n    at x" },
    }}));
    match exception_thrown(&rejected) {
        Some(LogData::Error { method, text, .. }) => {
            assert_eq!(method, "unhandledrejection");
            assert_eq!(
                text,
                "Unhandled promise rejection: Error: rejected on purpose"
            );
        }
        other => panic!("{other:?}"),
    }
    let value = raw(json!({ "timestamp": 0, "exceptionDetails": {
        "exceptionId": 3, "text": "Uncaught (in promise)", "lineNumber": 0, "columnNumber": 0,
        "exception": { "type": "number", "value": 42, "description": "42" },
    }}));
    match exception_thrown(&value) {
        Some(LogData::Error { text, .. }) => assert_eq!(text, "Unhandled promise rejection: 42"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn long_text_and_urls_are_cut() {
    let text = "é".repeat(2005);
    let cut = cut_text(text);
    assert!(cut.starts_with(&"é".repeat(2000)));
    assert!(cut.ends_with("é… (5 more chars)"), "{cut}");
    assert_eq!(cut_text("short".into()), "short");
    let url = format!("http://h/{}", "a".repeat(3000));
    assert_eq!(cut_url(&url).chars().count(), 2048);
}

fn console(level: LogLevel, text: &str) -> LogData {
    LogData::Console {
        level,
        method: "log".into(),
        text: text.into(),
        origin: None,
    }
}

fn request(url: &str) -> LogData {
    LogData::Request {
        url: url.into(),
        method: "GET".into(),
        resource_type: "Fetch".into(),
    }
}

fn error(text: &str) -> LogData {
    LogData::Error {
        method: "exception".into(),
        text: text.into(),
        origin: None,
        stack: None,
    }
}

fn texts(list: &LogList) -> Vec<String> {
    list.entries
        .iter()
        .map(|e| e.text().or(e.url()).unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn filters_select_by_kind_level_contains_and_since() {
    let journal = Journal::new();
    journal.push("p", console(LogLevel::Info, "hello"));
    journal.push("p", console(LogLevel::Error, "bad"));
    journal.push("p", request("http://h/API"));
    journal.push("p", error("TypeError: x"));
    journal.push("p", console(LogLevel::Warn, "careful"));
    assert_eq!(journal.cursor(), 5);

    let all = journal.list(&LogFilter::default(), 0, 20);
    assert_eq!(
        texts(&all),
        ["hello", "bad", "http://h/API", "TypeError: x", "careful"]
    );
    assert_eq!((all.cursor, all.dropped, all.truncated), (5, 0, false));

    let errors = journal.list(&LogFilter::errors(), 0, 20);
    assert_eq!(
        texts(&errors),
        ["bad", "TypeError: x"],
        "error selects console errors too"
    );

    let warn = LogFilter {
        level: Some(LogLevel::Warn),
        ..LogFilter::default()
    };
    assert_eq!(
        texts(&journal.list(&warn, 0, 20)),
        ["bad", "TypeError: x", "careful"]
    );

    let contains = LogFilter {
        contains: Some("api".into()),
        ..LogFilter::default()
    };
    assert_eq!(texts(&journal.list(&contains, 0, 20)), ["http://h/API"]);

    let newest = journal.list(&LogFilter::default(), 2, 2);
    assert_eq!(texts(&newest), ["TypeError: x", "careful"]);
    assert!(newest.truncated, "three entries after seq 2 matched");
    assert_eq!(journal.errors_since(0), (2, 0));
    assert_eq!(journal.errors_since(2), (1, 0));
}

#[test]
fn buffers_evict_the_oldest_and_count_what_a_filter_lost() {
    let journal = Journal::new();
    journal.push("p", error("first error"));
    for n in 0..CONSOLE_CAPACITY {
        journal.push("p", console(LogLevel::Info, &format!("log {n}")));
    }
    // Network traffic has its own buffer: it never evicts errors.
    for n in 0..(NETWORK_CAPACITY + 10) {
        journal.push("p", request(&format!("http://h/{n}")));
    }
    assert_eq!(journal.evicted(LogKind::Error), 1);
    assert_eq!(journal.evicted(LogKind::Console), 0);
    assert_eq!(journal.evicted(LogKind::Request), 10);
    assert_eq!(journal.errors_since(0), (0, 1));
    assert_eq!(
        journal.errors_since(1),
        (0, 0),
        "the eviction is outside the window"
    );

    let errors = journal.list(&LogFilter::errors(), 0, 20);
    assert_eq!((errors.entries.len(), errors.dropped), (0, 1));
    let console_only = LogFilter {
        kinds: vec![LogKind::Console],
        ..LogFilter::default()
    };
    let list = journal.list(&console_only, 0, 500);
    assert_eq!(
        (list.entries.len(), list.dropped, list.truncated),
        (500, 0, false)
    );
    let requests = LogFilter {
        kinds: vec![LogKind::Request],
        ..LogFilter::default()
    };
    assert_eq!(journal.list(&requests, 0, 20).dropped, 10);

    assert_eq!(journal.clear(), 1500);
    let after = journal.list(&LogFilter::default(), 0, 20);
    assert_eq!((after.entries.len(), after.dropped), (0, 0));
    journal.push("p", console(LogLevel::Info, "later"));
    assert_eq!(
        journal.cursor(),
        1 + 500 + 1010 + 1,
        "seq continues after clear"
    );
}

#[test]
fn the_byte_budget_evicts_before_the_count_does() {
    let journal = Journal::new();
    let big = "x".repeat(2000);
    for _ in 0..200 {
        journal.push("p", console(LogLevel::Info, &big));
    }
    let kept = journal.list(&LogFilter::default(), 0, 500).entries.len();
    assert_eq!(kept, BUFFER_BYTES / (2000 + 128));
    assert_eq!(journal.evicted(LogKind::Console), 200 - kept as u64);
}

#[tokio::test]
async fn wait_for_sees_buffered_entries_and_later_ones() {
    let journal = Journal::new();
    journal.push("p", console(LogLevel::Info, "early"));
    let early = LogFilter {
        contains: Some("EARLY".into()),
        ..LogFilter::default()
    };
    let found = journal.wait_for(&early, 0, Duration::ZERO).await;
    assert_eq!(found.map(|e| e.seq), Some(1));
    assert_eq!(journal.wait_for(&early, 1, Duration::ZERO).await, None);

    let late = LogFilter {
        contains: Some("late".into()),
        ..LogFilter::default()
    };
    let writer = journal.clone();
    let waiter =
        tokio::spawn(async move { journal.wait_for(&late, 0, Duration::from_secs(10)).await });
    tokio::task::yield_now().await;
    writer.push("p", console(LogLevel::Info, "noise"));
    writer.push("p", console(LogLevel::Info, "late arrival"));
    let found = waiter.await.unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(
        found.and_then(|e| e.text().map(str::to_owned)).as_deref(),
        Some("late arrival")
    );
}

fn download(name: &str) -> LogData {
    LogData::Download {
        url: format!("http://h/{name}"),
        name: name.to_owned(),
        state: crate::journal::DownloadState::Completed,
        bytes: Some(3),
        path: Some(std::path::PathBuf::from(format!("/d/{name}"))),
        reason: None,
    }
}

#[test]
fn downloads_share_the_console_buffer_so_network_traffic_never_evicts_them() {
    let journal = Journal::new();
    journal.push("p", download("a.txt"));
    let after_first = journal.cursor();
    for n in 0..(NETWORK_CAPACITY + 10) {
        journal.push("p", request(&format!("http://h/{n}")));
    }
    journal.push("p", download("b.txt"));
    assert_eq!(journal.evicted(LogKind::Download), 0);
    assert_eq!(LogKind::parse("download"), Some(LogKind::Download));
    let only = LogFilter {
        kinds: vec![LogKind::Download],
        ..LogFilter::default()
    };
    let names: Vec<String> = journal
        .list(&only, 0, 20)
        .entries
        .iter()
        .filter_map(|entry| entry.text().map(str::to_owned))
        .collect();
    assert_eq!(names, ["a.txt", "b.txt"]);
    let since: Vec<String> = journal
        .downloads_since(after_first)
        .iter()
        .filter_map(|entry| entry.text().map(str::to_owned))
        .collect();
    assert_eq!(since, ["b.txt"]);
    // A download is neither an error nor matched by the error filter.
    assert_eq!(journal.errors_since(0), (0, 0));
}
