//! Downloads on real Chromium: a `download` link and a `Content-Disposition: attachment`
//! response are saved under their names (clashes numbered) as 0600 files in a 0700 directory,
//! journalled as `download` entries when they end, and a download over the size limit is
//! canceled and leaves no file; two browser contexts each save theirs in their own directory
//! and journal. The clicks that start them are plain successful clicks: no
//! navigation to wait for. Waits are journal waits with deadlines; nothing sleeps.

use std::path::Path;
use std::time::{Duration, Instant};

use chromate::{
    capture::{DownloadLimit, DownloadOptions},
    journal::{DownloadState, LogData, LogEntry, LogFilter, LogKind},
    Browser, Page,
};
use chromate_tests::FixtureServer;

use crate::util::{close_and_check, launch, locate, open};

const WAIT: Duration = Duration::from_secs(15);

async fn fixtures() -> FixtureServer {
    match FixtureServer::start().await {
        Ok(server) => server,
        Err(err) => panic!("cannot start the fixture server: {err}"),
    }
}

/// A fixture page at `/links.html` holding one link per `(id, href, download attribute)`.
fn links_page(server: &FixtureServer, links: &[(&str, &str, Option<&str>)]) {
    let mut html = String::from("<!doctype html><html lang=\"en\"><title>links</title>");
    for (id, href, download) in links {
        let download = download.map_or(String::new(), |name| format!(" download=\"{name}\""));
        html.push_str(&format!(
            "<p><a id=\"{id}\" href=\"{href}\"{download}>{id}</a></p>"
        ));
    }
    server.route("links.html", move |_| {
        chromate_tests::server::Response::html(html.clone())
    });
}

fn download_filter() -> LogFilter {
    LogFilter {
        kinds: vec![LogKind::parse("download").expect("the kind filter knows download")],
        ..LogFilter::default()
    }
}

/// The next download entry after `since`, or a panic listing the journal.
async fn next_download(browser: &Browser, since: u64) -> LogEntry {
    match browser
        .journal()
        .wait_for(&download_filter(), since, WAIT)
        .await
    {
        Some(entry) => entry,
        None => panic!(
            "no download was journalled: {:#?}",
            browser
                .journal()
                .list(&LogFilter::default(), 0, 100)
                .entries
        ),
    }
}

/// A download entry's fields.
struct Ended {
    url: String,
    name: String,
    state: DownloadState,
    bytes: Option<u64>,
    path: Option<std::path::PathBuf>,
}

fn ended(entry: &LogEntry) -> Ended {
    match &entry.data {
        LogData::Download {
            url,
            name,
            state,
            bytes,
            path,
            ..
        } => Ended {
            url: url.clone(),
            name: name.clone(),
            state: *state,
            bytes: *bytes,
            path: path.clone(),
        },
        other => panic!("not a download entry: {other:?}"),
    }
}

/// Clicks `selector` and asserts the click returned well before a navigation wait would time out.
async fn click_quickly(page: &Page, selector: &str) {
    let started = Instant::now();
    if let Err(err) = locate(page, selector).click().await {
        panic!("clicking {selector} failed: {err}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the click on {selector} waited {:?} (a navigation wait on a download?)",
        started.elapsed()
    );
}

#[cfg(unix)]
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o777,
        Err(err) => panic!("{}: {err}", path.display()),
    }
}

/// The plain files in `dir` (the browser's `.incoming` directory left out), sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn download_link_click_saves_the_file_privately_and_journals_it() {
    let server = fixtures().await;
    links_page(
        &server,
        &[(
            "report",
            "/attachment?name=served.txt&bytes=42",
            Some("report.txt"),
        )],
    );
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("downloads");
    let browser = launch().await;
    browser
        .enable_downloads(DownloadOptions::new(&dir))
        .await
        .expect("downloads enabled");
    assert!(browser.downloads_enabled());
    assert!(
        !dir.exists(),
        "nothing is created before the first download"
    );
    let page = open(&browser, &server, "links.html").await;
    let since = browser.journal().cursor();
    click_quickly(&page, "#report").await;
    let entry = next_download(&browser, since).await;
    let download = ended(&entry);
    assert_eq!(download.state, DownloadState::Completed);
    assert_eq!(entry.page, page.target_id());
    assert!(download
        .url
        .ends_with("/attachment?name=served.txt&bytes=42"));
    // The server's Content-Disposition name wins over the link's `download` attribute.
    assert!(
        ["served.txt", "report.txt"].contains(&download.name.as_str()),
        "{}",
        download.name
    );
    assert_eq!(download.bytes, Some(42));
    let path = download.path.expect("a completed download has a path");
    assert_eq!(path, dir.join(&download.name));
    let content = std::fs::read(&path).expect("the saved file");
    assert_eq!(content.len(), 42);
    assert!(content.starts_with(b"0123456789012"));
    #[cfg(unix)]
    {
        assert_eq!(mode_of(&path), 0o600, "file mode");
        assert_eq!(mode_of(&dir), 0o700, "directory mode");
    }
    assert_eq!(files_in(&dir), vec![download.name.clone()]);
    // `contains` matches the file name.
    let by_name = LogFilter {
        contains: Some(download.name.to_uppercase()),
        ..download_filter()
    };
    assert_eq!(browser.journal().list(&by_name, 0, 10).entries.len(), 1);
    assert_eq!(browser.journal().downloads_since(since).len(), 1);
    assert!(browser.journal().downloads_since(entry.seq).is_empty());
    close_and_check(browser).await;
}

#[tokio::test]
async fn attachment_responses_are_saved_under_numbered_names_when_they_clash() {
    let server = fixtures().await;
    links_page(
        &server,
        &[
            ("data", "/attachment?name=data.csv&bytes=10", None),
            ("again", "/attachment?name=data.csv&bytes=20", None),
            ("hidden", "/attachment?name=.profile&bytes=5", None),
        ],
    );
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("nested").join("downloads");
    let browser = launch().await;
    browser
        .enable_downloads(DownloadOptions::new(&dir))
        .await
        .expect("downloads enabled");
    let page = open(&browser, &server, "links.html").await;
    let mut names = Vec::new();
    for (selector, bytes) in [("#data", 10), ("#again", 20), ("#hidden", 5)] {
        let since = browser.journal().cursor();
        click_quickly(&page, selector).await;
        let download = ended(&next_download(&browser, since).await);
        assert_eq!(download.state, DownloadState::Completed, "{selector}");
        assert_eq!(download.bytes, Some(bytes), "{selector}");
        let path = download.path.expect("path");
        assert_eq!(std::fs::metadata(&path).map(|m| m.len()).ok(), Some(bytes));
        names.push(download.name);
    }
    assert_eq!(names[0], "data.csv");
    assert_eq!(names[1], "data (2).csv");
    assert!(
        !names[2].starts_with('.') && names[2].contains("profile"),
        "{}",
        names[2]
    );
    // The page did not navigate away: the links are still there.
    assert!(page.url().ends_with("/links.html"), "{}", page.url());
    assert_eq!(files_in(&dir).len(), 3);
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_download_over_the_size_limit_is_canceled_and_leaves_no_file() {
    let server = fixtures().await;
    links_page(
        &server,
        &[
            (
                "big",
                "/attachment?name=big.bin&bytes=300000&after=200",
                Some("big.bin"),
            ),
            ("small", "/attachment?name=small.bin&bytes=100", None),
        ],
    );
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("downloads");
    let limit = DownloadLimit::new(1000);
    let browser = launch().await;
    browser
        .enable_downloads(DownloadOptions::new(&dir).limit(limit.clone()))
        .await
        .expect("downloads enabled");
    let page = open(&browser, &server, "links.html").await;
    let since = browser.journal().cursor();
    click_quickly(&page, "#big").await;
    let download = ended(&next_download(&browser, since).await);
    assert_eq!(download.state, DownloadState::Canceled);
    assert_eq!(download.name, "big.bin");
    assert!(download.path.is_none());
    assert!(files_in(&dir).is_empty(), "{:?}", files_in(&dir));
    // Within the limit it is saved; a limit lowered later (a quota filling) applies at once.
    let since = browser.journal().cursor();
    click_quickly(&page, "#small").await;
    assert_eq!(
        ended(&next_download(&browser, since).await).state,
        DownloadState::Completed
    );
    limit.set(50);
    let since = browser.journal().cursor();
    click_quickly(&page, "#small").await;
    assert_eq!(
        ended(&next_download(&browser, since).await).state,
        DownloadState::Canceled
    );
    assert_eq!(files_in(&dir), vec!["small.bin".to_owned()]);
    close_and_check(browser).await;
}

#[tokio::test]
async fn each_context_saves_its_downloads_in_its_own_directory_and_journal() {
    let server = fixtures().await;
    // The same file name from both contexts, a different size each.
    links_page(
        &server,
        &[
            ("a", "/attachment?name=same.txt&bytes=11", None),
            ("b", "/attachment?name=same.txt&bytes=22", None),
        ],
    );
    let root = tempfile::tempdir().expect("temp dir");
    let browser = launch().await;
    let mut contexts = Vec::new();
    for (link, bytes) in [("#a", 11_u64), ("#b", 22)] {
        let context = browser
            .new_context(chromate::ContextOptions::default())
            .await
            .expect("a context");
        let dir = root.path().join(&link[1..]);
        context
            .enable_downloads(DownloadOptions::new(&dir))
            .await
            .expect("downloads enabled in the context");
        assert!(context.downloads_enabled());
        let page = context
            .new_page(&server.url("links.html"))
            .await
            .expect("the links page in the context");
        contexts.push((context, page, link, bytes, dir));
    }
    // The browser's own tabs have no directory: only the contexts save.
    assert!(!browser.downloads_enabled());
    for (context, page, link, _, _) in &contexts {
        let since = context.journal().cursor();
        click_quickly(page, link).await;
        let entry = context
            .journal()
            .wait_for(&download_filter(), since, WAIT)
            .await
            .unwrap_or_else(|| panic!("no download journalled in the context of {link}"));
        assert_eq!(entry.page, page.target_id());
        assert!(context.wait_for_downloads(WAIT).await);
    }
    for (context, _, link, bytes, dir) in &contexts {
        let entries = context.journal().downloads_since(0);
        assert_eq!(entries.len(), 1, "{link}: {entries:?}");
        let download = ended(&entries[0]);
        assert_eq!(download.state, DownloadState::Completed, "{link}");
        assert_eq!(download.bytes, Some(*bytes), "{link}");
        assert_eq!(
            download.name, "same.txt",
            "{link}: numbered as if it clashed"
        );
        assert_eq!(download.path, Some(dir.join("same.txt")), "{link}");
        assert_eq!(files_in(dir), vec!["same.txt".to_owned()], "{link}");
        let saved = std::fs::read(dir.join("same.txt")).expect("the saved file");
        assert_eq!(saved.len() as u64, *bytes, "{link}");
    }
    assert!(
        browser.journal().downloads_since(0).is_empty(),
        "a context's download reached the browser's journal"
    );
    for (context, _, _, _, _) in contexts {
        context.dispose().await.expect("disposed of");
    }
    close_and_check(browser).await;
}
