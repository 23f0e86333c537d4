//! The network and file tools: mocks installed at launch and changed live, blocked origins,
//! downloads saved privately in the session directory, state saved in one session and loaded
//! in a fresh browser, uploads limited to the server's working directory, `file:` pages
//! refused unless `--allow-unrestricted-file-access`, and untrusted TLS certificates loaded
//! only with `--ignore-https-errors`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use chromate_tests::{McpClient, Response};
use serde_json::{json, Value};

use super::{data_url, mcp_command, start_mcp, start_mcp_with, start_mcp_with_args};
use crate::util::{fixtures, ref_of};

/// Waits in the page (on its own promise, so no sleep here) until `window.results[name]` of
/// network.html is set after clicking `#fetch-<name>`, and returns it.
fn fetch_in_page(mcp: &mut McpClient, name: &str) -> Value {
    let js = format!(
        "new Promise(resolve => {{ delete window.results['{name}']; document.getElementById('fetch-{name}').click(); \
         const check = () => window.results['{name}'] ? resolve(window.results['{name}']) : requestAnimationFrame(check); check(); }})"
    );
    let (result, _) = mcp.ok("browser_advanced_eval", json!({ "js": js }));
    result["result"].clone()
}

#[test]
fn mcp_mocks_install_at_launch_change_live_and_block_navigations() {
    let server = fixtures();
    let mut mcp = start_mcp();
    // Added before any browser runs: installed at launch (docs/mcp.md#run, docs/mcp.md#mocks).
    let (added, _) = mcp.ok(
        "browser_mock",
        json!({ "action": "add", "pattern": "*/api/user", "body": "{\"name\":\"ann\"}" }),
    );
    assert_eq!(
        added,
        json!({ "ok": true, "action": "add", "id": "m1", "pattern": "*/api/user", "status": 200 })
    );
    assert_eq!(mcp.browser_pid(), None, "browser_mock never launches");
    mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("network.html") }),
    );
    let api = fetch_in_page(&mut mcp, "api");
    assert_eq!(
        (api["status"].clone(), api["body"].clone()),
        (json!(200), json!("{\"name\":\"ann\"}")),
        "{api}"
    );
    assert_eq!(server.request_count("/api/user"), 0);

    // Changed while the browser runs: effective at once.
    let (blocked, _) = mcp.ok(
        "browser_mock",
        json!({ "action": "block", "pattern": "*/status/*" }),
    );
    assert_eq!(blocked["id"], json!("m2"));
    let status = fetch_in_page(&mut mcp, "status");
    assert!(status["error"].is_string(), "{status}");
    let (listed, _) = mcp.ok("browser_mock", json!({ "action": "list" }));
    assert_eq!(
        listed,
        json!({ "count": 2, "mocks": [
            { "id": "m1", "pattern": "*/api/user", "kind": "mock", "status": 200 },
            { "id": "m2", "pattern": "*/status/*", "kind": "block" },
        ] })
    );
    let (removed, _) = mcp.ok("browser_mock", json!({ "action": "remove", "id": "m1" }));
    assert_eq!(removed["remaining"], json!(1));
    let api = fetch_in_page(&mut mcp, "api");
    assert_eq!(api["status"], json!(404), "{api}");

    // A block rule on a document fails the navigation, naming the mock.
    mcp.ok(
        "browser_mock",
        json!({ "action": "block", "pattern": "*/nav.html" }),
    );
    let url = server.url("nav.html");
    let error = mcp.err("browser_navigate", json!({ "url": url }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"));
    assert_eq!(
        error["detail"],
        json!({ "netError": "net::ERR_BLOCKED_BY_CLIENT", "url": url, "blockedBy": "mock" })
    );
    let (cleared, _) = mcp.ok("browser_mock", json!({ "action": "clear" }));
    assert_eq!(
        cleared,
        json!({ "ok": true, "action": "clear", "cleared": 2 })
    );
    mcp.ok("browser_navigate", json!({ "url": url }));
}

/// `chromate mcp --ignore-https-errors`: its browser (and, with `--isolated`, its browser
/// context in it) loads an https page whose certificate no browser trusts; without the flag
/// the navigation fails on the certificate.
#[test]
fn mcp_ignore_https_errors_loads_an_untrusted_certificate() {
    let cert = chromate_tests::tls::TlsCert::generate().expect("certificate");
    let secure = chromate_tests::FixtureServer::start_detached_tls_serving(
        chromate_tests::server::pages_dir(),
        &cert,
    )
    .expect("https server");
    let url = secure.url("nav.html");
    let mut strict = start_mcp();
    let error = strict.err("browser_navigate", json!({ "url": url }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"), "{error}");
    assert!(
        error["detail"]["netError"]
            .as_str()
            .is_some_and(|net| net.starts_with("net::ERR_CERT_")),
        "{error}"
    );
    drop(strict);
    for args in [
        &["--ignore-https-errors"][..],
        &["--ignore-https-errors", "--isolated"][..],
    ] {
        let mut lenient = start_mcp_with_args(args, &[]);
        lenient.ok("browser_navigate", json!({ "url": url }));
    }
    assert!(secure.request_count("/nav.html") >= 2);
}

#[test]
fn mcp_blocked_origins_fail_navigate_and_page_open_with_the_origin_policy() {
    let server = fixtures();
    let mut mcp = start_mcp_with_args(&["--blocked-origins", "http://localhost:*"], &[]);
    let blocked = server.localhost_url("nav.html");
    let expected = json!({
        "netError": "net::ERR_BLOCKED_BY_CLIENT", "url": blocked, "blockedBy": "origin-policy",
    });
    let error = mcp.err("browser_navigate", json!({ "url": blocked }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"));
    assert_eq!(error["detail"], expected);
    let error = mcp.err("browser_page", json!({ "action": "open", "url": blocked }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"));
    assert_eq!(error["detail"], expected);
    assert_eq!(server.request_count("/nav.html"), 0);
    let other = format!(
        "{}?other={}",
        server.url("network.html"),
        server.localhost_origin()
    );
    mcp.ok("browser_navigate", json!({ "url": other }));
    let cross = fetch_in_page(&mut mcp, "other");
    assert!(
        cross["error"].is_string(),
        "a sub-request is blocked too: {cross}"
    );
}

#[cfg(unix)]
fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o777,
        Err(err) => panic!("no {}: {err}", path.display()),
    }
}

#[test]
fn mcp_a_download_link_click_saves_the_file_in_the_session_directory_and_reports_it() {
    let server = fixtures();
    server.route("download-link.html", |_| {
        chromate_tests::Response::html(
            "<!doctype html><html lang=\"en\"><title>downloads</title>\
             <a href=\"/attachment?name=report.csv&amp;bytes=1234\">Get the report</a></html>",
        )
    });
    let mut mcp = start_mcp();
    let (_, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("download-link.html") }),
    );
    let observation = observation.unwrap_or_default();
    assert!(!observation.contains("download:"), "{observation}");
    let link = ref_of(&observation, "Get the report");

    // The link's response is `Content-Disposition: attachment`: the click's navigation turns
    // into a download, and the click is a success at once, with no navigation to wait for.
    let started = Instant::now();
    let (clicked, observation) = mcp.ok("browser_click", json!({ "selector": link }));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(clicked["ok"], json!(true));
    let observation = observation.unwrap_or_default();
    let lines: Vec<&str> = observation.lines().collect();
    let n = lines.len();
    assert!(n >= 2, "{observation}");
    assert_eq!(
        lines[n - 2],
        "download: report.csv (1234 bytes) completed",
        "{observation}"
    );
    assert!(
        lines[n - 1].starts_with("errors: 0 "),
        "the tripwire stays last: {observation}"
    );

    let (status, _) = mcp.ok("browser_status", json!({}));
    let session_dir = PathBuf::from(status["artifactsDir"].as_str().unwrap_or_default());
    let downloads = session_dir.join("downloads");
    let saved = downloads.join("report.csv");
    let content = std::fs::read(&saved).unwrap_or_else(|err| panic!("{}: {err}", saved.display()));
    assert_eq!(content.len(), 1234);
    assert!(content.starts_with(b"0123456789"));
    assert_eq!(mode_of(&saved), 0o600);
    assert_eq!(mode_of(&downloads), 0o700);
    assert_eq!(mode_of(&session_dir), 0o700);

    let (logs, _) = mcp.ok("browser_logs", json!({ "kind": "download" }));
    let entries = logs["entries"].as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), 1, "{logs}");
    let entry = &entries[0];
    assert_eq!(entry["kind"], json!("download"));
    assert_eq!(entry["page"], json!("p1"));
    assert_eq!(entry["name"], json!("report.csv"));
    assert_eq!(entry["state"], json!("completed"));
    assert_eq!(entry["bytes"], json!(1234));
    assert_eq!(entry["path"], json!(saved.display().to_string()));
    assert!(
        entry["url"]
            .as_str()
            .is_some_and(|url| url.ends_with("/attachment?name=report.csv&bytes=1234")),
        "{entry}"
    );

    // Once reported, never again; the same name again is numbered, and the call that reports
    // a download links to its file.
    let (_, observation) = mcp.ok("browser_hover", json!({ "selector": link }));
    assert!(
        !observation.unwrap_or_default().contains("download:"),
        "a download is reported once"
    );
    let result = mcp.call_result("browser_click", json!({ "selector": link }));
    let again = downloads.join("report (2).csv");
    let text = result.to_string();
    assert!(
        text.contains("download: report (2).csv (1234 bytes) completed"),
        "{text}"
    );
    let links: Vec<&Value> = result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == json!("resource_link"))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(links.len(), 1, "{result}");
    // The URI is percent-encoded, and reads the file back through the server.
    let encoded = again
        .display()
        .to_string()
        .replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29");
    assert_eq!(links[0]["uri"], json!(format!("file://{encoded}")));
    assert_eq!(links[0]["name"], json!("report (2).csv"));
    assert_eq!(links[0]["size"], json!(1234));
    let read = mcp.request("resources/read", json!({ "uri": links[0]["uri"] }));
    let text = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        (
            read["result"]["contents"][0]["mimeType"].clone(),
            text.len()
        ),
        (json!("text/csv"), 1234),
        "{read}"
    );
}

#[test]
fn mcp_state_saved_in_one_session_logs_in_a_fresh_browser() {
    let server = fixtures();
    let base = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create a temp dir: {err}"),
    };
    let root = base.path().join(".chromate").join("state");
    let root_env = root.display().to_string();
    let mut first = start_mcp_with(&[("CHROMATE_STATE_DIR", &root_env)]);
    let (listed, _) = first.ok("browser_state", json!({}));
    assert_eq!(listed, json!({ "states": [], "root": root_env }));
    assert_eq!(first.browser_pid(), None, "state list never launches");
    assert!(!root.exists(), "list creates nothing");

    first.ok(
        "browser_navigate",
        json!({ "url": server.url("storage.html") }),
    );
    let js = "new Promise(resolve => { document.getElementById('username').value = 'ann'; \
              document.getElementById('login-button').click(); \
              const check = () => document.getElementById('status').textContent.startsWith('Logged in') ? resolve(true) : requestAnimationFrame(check); check(); })";
    first.ok("browser_advanced_eval", json!({ "js": js }));
    let (saved, _) = first.ok(
        "browser_state",
        json!({ "action": "save", "name": "admin", "session_storage": true }),
    );
    let path = root.join("admin.json");
    assert_eq!(
        saved,
        json!({
            "ok": true, "action": "save", "name": "admin", "path": path.display().to_string(),
            "origin": server.origin(), "cookies": 1, "storageKeys": 2,
        })
    );
    assert!(!saved.to_string().contains("ann"), "counts, never values");
    #[cfg(unix)]
    {
        assert_eq!(mode_of(&root), 0o700);
        assert_eq!(mode_of(&path), 0o600);
    }
    assert_eq!(
        std::fs::read_to_string(base.path().join(".chromate/.gitignore")).ok(),
        Some("*\n".to_owned())
    );
    let file: Value = match std::fs::read(&path).map(|bytes| serde_json::from_slice(&bytes)) {
        Ok(Ok(file)) => file,
        other => panic!("unreadable state file: {other:?}"),
    };
    assert_eq!(file["version"], json!(1));
    assert_eq!(file["cookies"][0]["name"], json!("user"));
    assert_eq!(file["localStorage"][server.origin()]["user"], json!("ann"));
    assert_eq!(
        file["sessionStorage"][server.origin()]["sessionUser"],
        json!("ann")
    );

    // A tab without a page origin saves cookies only, and says so.
    first.ok("browser_page", json!({ "action": "open" }));
    let (blank, _) = first.ok(
        "browser_state",
        json!({ "action": "save", "name": "blank" }),
    );
    assert_eq!(blank["origin"], json!(null));
    assert_eq!(blank["storageKeys"], json!(0));
    assert!(blank["note"].is_string(), "{blank}");
    let error = first.err("browser_state", json!({ "action": "load", "name": "nope" }));
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(error["detail"]["available"], json!(["admin", "blank"]));
    drop(first);

    // A fresh server and browser: load, then the page finds the login on its first load.
    let mut second = start_mcp_with(&[("CHROMATE_STATE_DIR", &root_env)]);
    let (loaded, _) = second.ok(
        "browser_state",
        json!({ "action": "load", "name": "admin" }),
    );
    assert_eq!(loaded["action"], json!("load"));
    assert_eq!(loaded["cookies"], json!(1));
    assert_eq!(loaded["storageKeys"], json!(2));
    let (_, observation) = second.ok(
        "browser_navigate",
        json!({ "url": server.url("storage.html") }),
    );
    let observation = observation.unwrap_or_default();
    assert!(observation.contains("Welcome back, ann"), "{observation}");
    let (found, _) = second.ok(
        "browser_advanced_eval",
        json!({ "js": "[...document.querySelectorAll('dd')].map(d => d.textContent)" }),
    );
    assert_eq!(found["result"], json!(["ann", "ann", "ann"]));
}

/// browser_upload reads files under the server's working directory (relative paths resolve
/// there) and nothing outside it, a symlink out included; `--allow-unrestricted-file-access`
/// lifts the rule.
#[test]
fn mcp_uploads_read_under_the_servers_working_directory_unless_unrestricted() {
    let temp = |what: &str| match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create the {what} dir: {err}"),
    };
    let (work, outside) = (temp("work"), temp("outside"));
    let write = |path: std::path::PathBuf, text: &str| {
        if let Err(err) = std::fs::write(&path, text) {
            panic!("cannot write {}: {err}", path.display());
        }
        path
    };
    write(work.path().join("notes.txt"), "notes");
    let secret = write(outside.path().join("secret.txt"), "s3cret!");
    if let Err(err) = std::os::unix::fs::symlink(&secret, work.path().join("link.txt")) {
        panic!("cannot plant a symlink: {err}");
    }
    let secret = secret.display().to_string();
    let page = data_url(
        "<input id=f type=file aria-label=File \
         onchange=\"document.getElementById('out').textContent = \
         [...this.files].map(f => f.name + ':' + f.size).join()\"><p id=out></p>",
    );
    let uploaded = |mcp: &mut McpClient, file: &str| {
        mcp.ok("browser_navigate", json!({ "url": page }));
        let (result, _) = mcp.ok(
            "browser_upload",
            json!({ "selector": "#f", "files": [file] }),
        );
        assert_eq!(result["count"], json!(1), "{result}");
        let (read, _) = mcp.ok("browser_read", json!({ "selector": "#out" }));
        read["text"].as_str().unwrap_or_default().to_owned()
    };

    let mut mcp = mcp_command(&[], &[]).current_dir(work.path()).spawn();
    assert_eq!(uploaded(&mut mcp, "notes.txt"), "notes.txt:5");
    let mut refusals = Vec::new();
    for file in [
        secret.as_str(),
        "link.txt",
        "/etc/hostname",
        "../missing.txt",
    ] {
        let error = mcp.err(
            "browser_upload",
            json!({ "selector": "#f", "files": [file] }),
        );
        assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{file}: {error}");
        assert_eq!(
            error["detail"]["reason"],
            json!("outside-allowed-directories")
        );
        assert!(!error.to_string().contains("s3cret"), "{error}");
        refusals.push(error);
    }
    assert!(
        refusals.windows(2).all(|pair| pair[0] == pair[1]),
        "every refusal is the same, existing or not: {refusals:?}"
    );
    let (read, _) = mcp.ok("browser_read", json!({ "selector": "#out" }));
    assert_eq!(
        read["text"],
        json!("notes.txt:5"),
        "nothing else reached the page"
    );
    drop(mcp);

    let mut mcp = mcp_command(&["--allow-unrestricted-file-access"], &[])
        .current_dir(work.path())
        .spawn();
    assert_eq!(uploaded(&mut mcp, &secret), "secret.txt:7");
    assert_eq!(uploaded(&mut mcp, "link.txt"), "secret.txt:7");
}

/// A directory with `secret.html` (whose text is `marker`) and `top.html` framing it.
fn local_pages(marker: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("secret.html"), format!("<p>{marker}</p>")).expect("secret");
    std::fs::write(
        dir.path().join("top.html"),
        "<title>top</title><iframe src=\"secret.html\"></iframe>",
    )
    .expect("top");
    dir
}

/// The text of a default browser_snapshot.
fn snapshot_text(mcp: &mut McpClient) -> String {
    let result = mcp.call_result("browser_snapshot", json!({}));
    assert_ne!(result["isError"], json!(true), "{result}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Asserts that `error` is the refusal of a `file:` URL by `verb`, with the flag in its hint.
#[track_caller]
fn assert_file_refused(error: &Value, verb: &str) {
    assert_eq!(error["code"], json!("INVALID_ARGUMENT"), "{error}");
    assert_eq!(error["detail"]["argument"], json!("url"), "{error}");
    assert_eq!(error["detail"]["reason"], json!("file-access"), "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!("{verb}: file: URLs are refused")),
        "{error}"
    );
    let hint = error["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("--allow-unrestricted-file-access"), "{error}");
}

#[test]
fn file_navigation_is_refused_by_default_and_allowed_with_the_flag() {
    let marker = "seal-local-marker-51c2";
    let dir = local_pages(marker);
    let secret = format!("file://{}", dir.path().join("secret.html").display());
    let top = format!("file://{}", dir.path().join("top.html").display());
    let server = fixtures();
    let framing = format!("<title>framing</title><iframe src=\"{secret}\"></iframe>");
    server.route("/frames-a-file.html", move |_| {
        Response::html(framing.clone())
    });

    let mut mcp = start_mcp();
    let error = mcp.err("browser_navigate", json!({ "url": "file:///etc/hostname" }));
    assert_file_refused(&error, "navigate");
    let error = mcp.err("browser_navigate", json!({ "url": "FILE:///etc/hostname" }));
    assert_file_refused(&error, "navigate");
    let error = mcp.err(
        "browser_page",
        json!({ "action": "open", "url": "file:///etc/hostname" }),
    );
    assert_file_refused(&error, "page open");
    assert_eq!(mcp.browser_pid(), None, "refused before any browser runs");
    // A loopback page redirecting to a file fails, and shows nothing of it: Chromium refuses a
    // redirect from the network to a file itself, before the engine's block would see the hop.
    let redirect = server.url(&format!("redirect?to={secret}"));
    let error = mcp.err("browser_navigate", json!({ "url": redirect }));
    assert_eq!(error["code"], json!("NAVIGATION_FAILED"), "{error}");
    assert_eq!(
        error["detail"]["netError"],
        json!("net::ERR_UNSAFE_REDIRECT"),
        "{error}"
    );
    assert_eq!(server.request_count("/redirect"), 1);
    // A loopback page framing a file loads, without the file.
    let (_, observation) = mcp.ok(
        "browser_navigate",
        json!({ "url": server.url("frames-a-file.html") }),
    );
    let text = format!(
        "{}{}",
        snapshot_text(&mut mcp),
        observation.unwrap_or_default()
    );
    assert!(text.contains("iframe") && !text.contains(marker), "{text}");
    drop(mcp);

    let mut mcp = mcp_command(&["--allow-unrestricted-file-access"], &[]).spawn();
    let (navigated, _) = mcp.ok("browser_navigate", json!({ "url": top }));
    assert_eq!(navigated["url"], json!(top));
    let text = snapshot_text(&mut mcp);
    assert!(text.contains(marker), "{text}");
    let (opened, _) = mcp.ok(
        "browser_page",
        json!({ "action": "open", "url": "file:///etc/hostname" }),
    );
    assert_eq!(opened["url"], json!("file:///etc/hostname"), "{opened}");
}
