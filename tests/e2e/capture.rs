//! The logs journal on real Chromium: every kind of entry from `console.html` (console levels,
//! object previews, format specifiers, a failed assert, an uncaught TypeError during the first
//! load, an unhandled rejection, failing fetches, a 404 image), cursors and `since`, eviction
//! counting, waiting for an entry that arrives later, and clear. Waits have deadlines; nothing
//! sleeps.

use std::time::Duration;

use chromate::{
    journal::{LogData, LogEntry, LogFilter, LogKind, LogLevel},
    Browser, Page,
};
use chromate_tests::FixtureServer;

use crate::util::{close_and_check, launch, NAV};

const WAIT: Duration = Duration::from_secs(15);

async fn fixtures() -> FixtureServer {
    match FixtureServer::start().await {
        Ok(server) => server,
        Err(err) => panic!("cannot start the fixture server: {err}"),
    }
}

fn containing(text: &str) -> LogFilter {
    LogFilter {
        contains: Some(text.to_owned()),
        ..LogFilter::default()
    }
}

fn of_kind(kind: LogKind) -> LogFilter {
    LogFilter {
        kinds: vec![kind],
        ..LogFilter::default()
    }
}

/// Opens `url` in a new tab created with that URL, so its first document loads as soon as the
/// tab is resumed (capture must already be on), and waits until console.html is done.
async fn open_console_page(browser: &Browser, url: &str) -> Page {
    // As the MCP server does: a set-up tab, then its first navigation. (Tabs created with their
    // URL are journalled from their first request too: see the test below.)
    let page = browser
        .new_page("about:blank")
        .await
        .unwrap_or_else(|err| panic!("the tab did not open: {err}"));
    page.goto(url, chromate::WaitUntil::Load, NAV)
        .await
        .unwrap_or_else(|err| panic!("the first navigation failed: {err}"));
    // The fetches and the image settle in any order: wait for each outcome by its URL.
    let journal = browser.journal();
    for needle in ["closed-port", "status/500", "missing-image.png"] {
        let filter = LogFilter {
            kinds: vec![LogKind::RequestFailed, LogKind::Response],
            contains: Some(needle.to_owned()),
            level: None,
        };
        assert!(
            journal.wait_for(&filter, 0, WAIT).await.is_some(),
            "no outcome for {needle}: {:?}",
            journal.list(&LogFilter::default(), 0, 500).entries
        );
    }
    page
}

fn find<'a>(entries: &'a [LogEntry], kind: LogKind, needle: &str) -> &'a LogEntry {
    match entries.iter().find(|e| {
        e.kind() == kind && (e.text().or(e.url())).is_some_and(|text| text.contains(needle))
    }) {
        Some(entry) => entry,
        None => panic!("no {kind:?} entry with {needle:?} in {entries:#?}"),
    }
}

fn console_of(entry: &LogEntry) -> (LogLevel, &str, &str) {
    match &entry.data {
        LogData::Console {
            level,
            method,
            text,
            ..
        } => (*level, method.as_str(), text.as_str()),
        other => panic!("not a console entry: {other:?}"),
    }
}

#[tokio::test]
async fn the_journal_captures_every_kind_from_the_first_load() {
    let server = fixtures().await;
    let browser = launch().await;
    let url = server.url("console.html");
    let page = open_console_page(&browser, &url).await;
    page.sync_events(NAV).await;
    let journal = browser.journal();
    assert!(journal.capturing());
    let entries = journal.list(&LogFilter::default(), 0, 500).entries;

    let console = |needle: &str| console_of(find(&entries, LogKind::Console, needle));
    assert_eq!(
        console("plain log message"),
        (LogLevel::Info, "log", "plain log message")
    );
    assert_eq!(
        console("info message"),
        (LogLevel::Info, "info", "info message 42")
    );
    assert_eq!(
        console("warn message"),
        (LogLevel::Warn, "warn", "warn message")
    );
    assert_eq!(
        console("error message"),
        (LogLevel::Error, "error", "error message")
    );
    assert_eq!(
        console("debug message"),
        (LogLevel::Debug, "debug", "debug message")
    );
    assert_eq!(console("number").2, "number 3.5 -7");
    assert_eq!(console("ann\", role").2, r#"{user: "ann", role: "admin"}"#);
    assert_eq!(console("user ann").2, "user ann has 3 items");
    assert_eq!(console("object").2, "object {id: 7}");
    assert_eq!(console("styled").2, "styled text");
    let (level, method, text) = console("expected true");
    assert_eq!((level, method), (LogLevel::Error, "assert"));
    assert!(text.ends_with("assertion failed: expected true"), "{text}");
    assert!(
        entries
            .iter()
            .all(|e| !e.text().unwrap_or_default().contains("[object Object]")),
        "{entries:#?}"
    );
    let plain = find(&entries, LogKind::Console, "plain log message");
    assert_eq!(plain.page, page.target_id());
    let origin = match &plain.data {
        LogData::Console { origin, .. } => origin.clone().unwrap_or_default(),
        _ => String::new(),
    };
    assert!(
        origin.starts_with(&format!("{url}:")) && origin.split(':').count() == 5,
        "origin is url:line:column: {origin}"
    );
    let age = std::time::SystemTime::now().duration_since(plain.time);
    assert!(
        age.is_ok_and(|age| age < std::time::Duration::from_secs(600)),
        "the entry's time is when it happened: {:?}",
        plain.time
    );

    // The TypeError was thrown during the tab's very first load.
    let thrown = find(&entries, LogKind::Error, "TypeError");
    match &thrown.data {
        LogData::Error {
            method,
            text,
            origin,
            stack,
        } => {
            assert_eq!(method, "exception");
            assert!(
                stack.as_deref().is_some_and(
                    |stack| stack.starts_with("TypeError: ") && stack.contains("\n    at ")
                ),
                "the stack as the page prints it: {stack:?}"
            );
            assert!(text.starts_with("TypeError: "), "{text}");
            assert!(!text.contains('\n'), "first line only: {text}");
            assert!(
                origin.as_deref().is_some_and(|o| o.starts_with(&url)),
                "{origin:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let rejected = find(&entries, LogKind::Error, "rejected on purpose");
    assert_eq!(
        rejected.text(),
        Some("Unhandled promise rejection: Error: rejected on purpose")
    );
    assert_eq!(
        rejected.data,
        LogData::Error {
            method: "unhandledrejection".into(),
            text: "Unhandled promise rejection: Error: rejected on purpose".into(),
            origin: match &rejected.data {
                LogData::Error { origin, .. } => origin.clone(),
                _ => None,
            },
            stack: match &rejected.data {
                LogData::Error { stack, .. } => stack.clone(),
                _ => None,
            },
        }
    );

    // Network summaries.
    match &find(&entries, LogKind::Request, "status/500").data {
        LogData::Request {
            method,
            resource_type,
            ..
        } => assert_eq!((method.as_str(), resource_type.as_str()), ("GET", "Fetch")),
        other => panic!("{other:?}"),
    }
    match &find(&entries, LogKind::Response, "status/500").data {
        LogData::Response { status, method, .. } => {
            assert_eq!((*status, method.as_str()), (500, "GET"))
        }
        other => panic!("{other:?}"),
    }
    match &find(&entries, LogKind::RequestFailed, "closed-port").data {
        LogData::RequestFailed { failure, .. } => {
            assert!(failure.starts_with("net::ERR_"), "{failure}");
        }
        other => panic!("{other:?}"),
    }
    match &find(&entries, LogKind::Response, "missing-image.png").data {
        LogData::Response { status, .. } => assert_eq!(*status, 404),
        other => panic!("{other:?}"),
    }
    match &find(&entries, LogKind::Response, "console.html").data {
        LogData::Response {
            status, mime_type, ..
        } => assert_eq!((*status, mime_type.as_str()), (200, "text/html")),
        other => panic!("{other:?}"),
    }
    // The browser's own failed-resource notices are not journalled.
    assert!(
        !entries.iter().any(|e| e
            .text()
            .is_some_and(|t| t.contains("Failed to load resource"))),
        "{entries:#?}"
    );

    // Filters: `error` also selects console errors; level; contains in urls.
    let errors = journal.list(&LogFilter::errors(), 0, 500).entries;
    let error_texts: Vec<&str> = errors.iter().filter_map(LogEntry::text).collect();
    assert_eq!(errors.len(), 4, "{error_texts:?}");
    assert_eq!(journal.errors_since(0), (4, 0));
    let warn = LogFilter {
        level: Some(LogLevel::Warn),
        ..LogFilter::default()
    };
    assert_eq!(journal.list(&warn, 0, 500).entries.len(), 5);
    let image = journal.list(&containing("MISSING-IMAGE"), 0, 500).entries;
    assert!(image.iter().all(|e| e.kind() != LogKind::Console) && image.len() >= 2);

    close_and_check(browser).await;
}

#[tokio::test]
async fn cursors_since_wait_and_clear() {
    let server = fixtures().await;
    let browser = launch().await;
    let page = open_console_page(&browser, &server.url("console.html")).await;
    page.sync_events(NAV).await;
    let journal = browser.journal().clone();
    let cursor = journal.cursor();
    assert!(cursor > 15, "{cursor}");

    // `since` selects exactly the entries of the second round.
    page.evaluate("logEverything()")
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    page.sync_events(NAV).await;
    let console = of_kind(LogKind::Console);
    let again = journal.list(&console, cursor, 500);
    assert_eq!(again.entries.len(), 11, "{:#?}", again.entries);
    assert!(again.entries.iter().all(|e| e.seq > cursor));
    assert!(
        again.entries.windows(2).all(|w| w[0].seq < w[1].seq),
        "oldest first"
    );
    assert_eq!(again.cursor, journal.cursor());
    assert_eq!(
        journal.errors_since(cursor),
        (2, 0),
        "console.error and the assert"
    );
    let newest = journal.list(&console, cursor, 3);
    assert!(newest.truncated);
    assert_eq!(
        newest.entries.last().map(|e| e.seq),
        again.entries.last().map(|e| e.seq)
    );

    // An entry that arrives later wakes the waiter.
    let before = journal.cursor();
    let waiter = {
        let journal = journal.clone();
        tokio::spawn(async move {
            journal
                .wait_for(&containing("arrived later"), before, WAIT)
                .await
        })
    };
    page.evaluate("setTimeout(() => console.warn('arrived later'), 150); 0")
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let arrived = waiter.await.unwrap_or_else(|err| panic!("{err}"));
    let arrived = arrived.unwrap_or_else(|| panic!("nothing arrived"));
    assert!(arrived.seq > before);
    assert_eq!(arrived.level(), Some(LogLevel::Warn));
    assert_eq!(
        journal
            .wait_for(&containing("never logged"), 0, Duration::from_millis(200))
            .await,
        None
    );

    // Clear empties the buffers; seq continues.
    let cursor = journal.cursor();
    assert!(journal.clear() > 0);
    assert!(journal
        .list(&LogFilter::default(), 0, 500)
        .entries
        .is_empty());
    assert_eq!(journal.cursor(), cursor);
    page.evaluate("console.log('after clear')")
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let entry = journal.wait_for(&containing("after clear"), 0, WAIT).await;
    assert!(entry.is_some_and(|e| e.seq > cursor));

    close_and_check(browser).await;
}

#[tokio::test]
async fn evictions_are_counted_per_kind_and_errors_survive_network_traffic() {
    let server = fixtures().await;
    let browser = launch().await;
    let page = open_console_page(&browser, &server.url("console.html")).await;
    page.sync_events(NAV).await;
    let journal = browser.journal().clone();
    assert_eq!(journal.errors_since(0), (4, 0));

    // Network traffic alone never evicts errors.
    page.evaluate(
        "Promise.all(Array.from({length: 60}, (_, i) => fetch('/status/204?n=' + i)))
            .then(() => 0)",
    )
    .await
    .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(journal.errors_since(0), (4, 0));

    page.evaluate("for (let i = 0; i < 600; i++) console.log('flood ' + i); 0")
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let last = journal.wait_for(&containing("flood 599"), 0, WAIT).await;
    assert!(last.is_some());
    let console = journal.list(&of_kind(LogKind::Console), 0, 500);
    assert_eq!(console.entries.len(), 500);
    assert!(console.dropped >= 100, "dropped {}", console.dropped);
    assert!(journal.evicted(LogKind::Console) >= 100);
    assert_eq!(
        journal.evicted(LogKind::Error),
        2,
        "the TypeError and the rejection"
    );
    let (buffered, evicted) = journal.errors_since(0);
    assert_eq!((buffered, evicted), (0, 4));
    let errors = journal.list(&LogFilter::errors(), 0, 20);
    assert_eq!((errors.entries.len(), errors.dropped), (0, 4));
    assert_eq!(journal.evicted(LogKind::Request), 0);

    close_and_check(browser).await;
}

#[tokio::test]
async fn a_dedicated_workers_console_and_errors_reach_its_tabs_journal() {
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    page.evaluate(
        "new Worker(URL.createObjectURL(new Blob([\"console.warn('from the worker', 7); setTimeout(() => { throw new RangeError('worker boom') }, 0)\"]))); 1",
    )
    .await
    .expect("start a worker");
    let journal = browser.journal().clone();
    let warned = journal
        .wait_for(&containing("from the worker"), 0, WAIT)
        .await
        .expect("the worker's console.warn is journalled");
    assert_eq!(warned.text(), Some("from the worker 7"));
    assert_eq!(warned.level(), Some(LogLevel::Warn));
    let thrown = journal
        .wait_for(&containing("worker boom"), 0, WAIT)
        .await
        .expect("the worker's uncaught error is journalled");
    assert!(thrown.is_error(), "{thrown:?}");
    close_and_check(browser).await;
}

/// Targets are attached paused (`waitForDebuggerOnStart`) and resumed only once their session
/// has enabled Network, so neither a tab created with its URL nor a popup loses its first
/// requests.
#[tokio::test]
async fn tabs_opened_with_a_url_journal_their_first_requests() {
    let server = fixtures().await;
    let browser = launch().await;
    let journal = browser.journal();
    // A tab created with its URL: its document and the image it loads.
    let page = browser
        .new_page(&server.url("console.html"))
        .await
        .unwrap_or_else(|err| panic!("the tab did not open: {err}"));
    for needle in ["console.html", "missing-image.png"] {
        let filter = LogFilter {
            kinds: vec![LogKind::Request],
            contains: Some(needle.to_owned()),
            level: None,
        };
        assert!(
            journal.wait_for(&filter, 0, WAIT).await.is_some(),
            "no request row for {needle}: {:?}",
            journal.list(&LogFilter::default(), 0, 500).entries
        );
    }
    // A tab the page opens: its document request.
    let known = browser.pages();
    let open = chromate::cdp::runtime::EvaluateParams::new(format!(
        "window.open({:?}); 1",
        server.url("nav2.html")
    ))
    .user_gesture(true);
    page.session().send(&open).await.expect("window.open");
    browser
        .wait_for_new_page(&known, NAV)
        .await
        .expect("the popup shows up");
    let filter = LogFilter {
        kinds: vec![LogKind::Request],
        contains: Some("nav2.html".to_owned()),
        level: None,
    };
    assert!(
        journal.wait_for(&filter, 0, WAIT).await.is_some(),
        "no request row for the popup's document: {:?}",
        journal.list(&LogFilter::default(), 0, 500).entries
    );
    close_and_check(browser).await;
}
