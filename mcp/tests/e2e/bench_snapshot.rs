//! `chromate bench-snapshot` as a user runs it on their own pages: every kind of target (a URL,
//! a file of URLs, a directory it serves itself, a sitemap served by the fixture server), the
//! JSON report's shape and figures, peers that are not installed reported as skipped, the peer
//! plumbing proved with chromate itself as an MCP peer (`chromate mcp` is a real MCP server; no
//! peer is installed in CI), and the HTML report loaded in headless Chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chromate_tests::procs;
use chromate_tests::Response;
use serde_json::{json, Value};

use crate::util::{chromate_binary, fixtures};

/// Runs the command with `TMPDIR` set to `tmp` (so every browser it starts has its profile
/// there) and `PATH` set to `path`, in `cwd`.
fn bench(args: &[&str], tmp: &Path, path: &Path, cwd: &Path) -> Output {
    Command::new(chromate_binary())
        .arg("bench-snapshot")
        .args(args)
        .env("TMPDIR", tmp)
        .env("PATH", path)
        .env_remove("CHROMATE_BROWSER")
        .current_dir(cwd)
        .output()
        .expect("run bench-snapshot")
}

fn browser() -> String {
    chromate::browser::find_browser(None)
        .expect("a browser")
        .display()
        .to_string()
}

/// Nothing the run started is left: no live process names the run's temporary directory (the
/// browsers' profiles, the tools' directories are there).
fn assert_nothing_left(tmp: &Path) {
    let tmp = tmp.display().to_string();
    let left: Vec<String> = procs::all_processes()
        .into_iter()
        .filter(|p| p.is_alive() && p.cmdline.iter().any(|a| a.contains(&tmp)))
        .map(|p| format!("{} {}", p.pid, p.cmdline.join(" ")))
        .collect();
    assert!(left.is_empty(), "processes left behind: {left:#?}");
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A scratch directory of this test, with `tmp/` (the run's TMPDIR), `bin/` (an empty PATH)
/// and `work/` (its working directory, no node_modules above it).
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let [tmp, bin, work] = ["tmp", "bin", "work"].map(|d| dir.path().join(d));
    for d in [&tmp, &bin, &work] {
        std::fs::create_dir(d).expect("mkdir");
    }
    (dir, tmp, bin, work)
}

#[test]
fn urls_a_file_of_urls_a_directory_and_a_sitemap_against_chromate_as_a_peer() {
    let server = fixtures();
    let sitemap_pages = [server.url("roles.html"), server.url("controls.html")];
    let xml = format!(
        "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
         <url><loc>{}</loc></url><url><loc>{}</loc></url></urlset>",
        sitemap_pages[0], sitemap_pages[1]
    );
    server.route("/sitemap.xml", move |_| {
        Response::new(200)
            .header("Content-Type", "application/xml")
            .body(xml.clone())
    });
    let (_dir, tmp, bin, work) = scratch();
    std::fs::write(
        work.join("urls.txt"),
        format!("# one page a line\n\n{}\n", server.url("dashboard.html")),
    )
    .expect("urls.txt");
    let site = work.join("site");
    std::fs::create_dir_all(site.join("docs")).expect("site");
    std::fs::write(
        site.join("index.html"),
        "<!doctype html><title>Home</title><h1>Home</h1><a href=\"docs/page.html\">Docs</a>\
         <button>Go</button>",
    )
    .expect("index.html");
    std::fs::write(
        site.join("docs").join("page.html"),
        "<!doctype html><title>Docs</title><h2>Docs</h2><label>Name <input></label>\
         <a href=\"../index.html\">Back home</a>",
    )
    .expect("page.html");
    std::fs::write(site.join("notes.txt"), "not a page").expect("notes.txt");
    let binary = chromate_binary().display().to_string();
    let peer = format!("chromate={binary} mcp");
    let login = server.url("login.html");
    let sitemap = server.url("sitemap.xml");
    let browser = browser();
    let args = [
        login.as_str(),
        "urls.txt",
        "site",
        sitemap.as_str(),
        "--repeat",
        "2",
        "--peer",
        &peer,
        "--browser",
        &browser,
        "--format",
        "json",
    ];
    let output = bench(&args, &tmp, &bin, &work);
    assert!(output.status.success(), "{}", text(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON report");

    // chromate, chromate as a peer, and the three peers that are not installed (an empty PATH,
    // no node_modules): skipped, not an error.
    let tools = report["tools"].as_array().expect("tools");
    let names: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("chromate", "measured"),
            ("chromate-peer", "measured"),
            ("playwright-mcp", "skipped"),
            ("chrome-devtools-mcp", "skipped"),
            ("agent-browser", "skipped"),
        ],
        "{report:#}"
    );
    for skipped in &tools[2..] {
        assert!(
            skipped["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("not installed")),
            "{skipped}"
        );
    }
    assert_eq!(
        tools[1]["version"],
        json!(format!("chromate {}", env!("CARGO_PKG_VERSION"))),
        "the peer's serverInfo over MCP"
    );

    // Every target, in order: the URL, the file's URL, the directory's two pages (served on
    // 127.0.0.1 by the run itself, the .txt left out), the sitemap's two.
    let pages = report["pages"].as_array().expect("pages");
    let urls: Vec<&str> = pages.iter().map(|p| p["url"].as_str().unwrap()).collect();
    assert_eq!(urls.len(), 6, "{urls:?}");
    assert_eq!(urls[0], login);
    assert_eq!(urls[1], server.url("dashboard.html"));
    assert!(
        urls[2].starts_with("http://127.0.0.1:") && urls[2].ends_with("/0/docs/page.html"),
        "{urls:?}"
    );
    assert!(urls[3].ends_with("/0/index.html"), "{urls:?}");
    assert_eq!(
        urls[4..],
        sitemap_pages.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(pages[2]["label"], "docs/page.html");

    let tokenizer = report["tokenizer"].clone();
    for page in pages {
        let reference = page["reference"]["controls"].as_u64().expect("reference");
        assert!(reference > 0, "{page}");
        let results = page["results"].as_array().expect("results");
        assert_eq!(results.len(), 2, "{page}");
        for result in results {
            assert_eq!(
                result["time_ms"]["samples"].as_array().map(Vec::len),
                Some(2),
                "{result}"
            );
            let median = result["time_ms"]["median"].as_f64().expect("median");
            let p90 = result["time_ms"]["p90"].as_f64().expect("p90");
            assert!(median > 0.0 && p90 >= median, "{result}");
            let bytes = result["bytes"].as_u64().expect("bytes");
            assert!(bytes > 50, "{result}");
            assert_eq!(result["tokens_estimate"], json!(bytes.div_ceil(4)));
            assert_eq!(result["tokens"].is_null(), tokenizer.is_null(), "{result}");
            // The full view lists every control of the default view (its bytes can be fewer
            // when only a line or two were left out: the cut note goes).
            assert!(result["full"]["bytes"].as_u64().unwrap() > 50, "{result}");
            assert!(
                result["full"]["controls"].as_u64().unwrap()
                    >= result["controls"].as_u64().unwrap(),
                "{result}"
            );
            let recall = result["full"]["recall"].as_f64().expect("recall");
            let precision = result["full"]["precision"].as_f64().expect("precision");
            // The fixture pages hold what the contract leaves out on purpose (controls at
            // opacity 0, the date and time inputs' pieces), so recall is below 1 on some; the
            // corpus test holds the snapshot to 0.99 on real pages.
            assert!(
                recall > 0.5 && precision >= 0.9,
                "{}: {result}",
                page["url"]
            );
        }
        // The same binary through the peer plumbing lists the same page the same way.
        for field in ["bytes", "controls"] {
            assert_eq!(results[0][field], results[1][field], "{field}: {page}");
        }
        assert_eq!(results[0]["full"], results[1]["full"], "{page}");
    }
    // The directory's pages are the run's own: every control of them is where Chrome has it.
    for page in &pages[2..4] {
        assert_eq!(page["results"][0]["full"]["recall"], json!(1.0), "{page}");
        assert_eq!(
            page["results"][0]["full"]["precision"],
            json!(1.0),
            "{page}"
        );
    }
    let summary = report["summary"].as_array().expect("summary");
    assert_eq!(summary.len(), 2);
    assert_eq!(summary[0]["tool"], "chromate");
    assert_eq!(summary[0]["pages"], 6);
    // Tabs, menu items, options, switches, sliders and spin buttons are scored too: the
    // options of a native select and zero-size controls, which the snapshot leaves out today
    // (issue 28), keep chromate's pooled recall on these fixture pages below 0.9.
    assert!(
        summary[0]["recall"].as_f64().unwrap() >= 0.85,
        "{summary:?}"
    );
    assert_nothing_left(&tmp);
}

#[test]
fn the_table_the_html_report_in_chromium_and_bad_targets() {
    let server = fixtures();
    let (_dir, tmp, bin, work) = scratch();
    let browser = browser();
    let page = server.url("login.html");
    let table = bench(
        &[&page, "--no-peers", "--repeat", "2", "--browser", &browser],
        &tmp,
        &bin,
        &work,
    );
    assert!(table.status.success(), "{}", text(&table));
    let stdout = String::from_utf8_lossy(&table.stdout);
    for want in [
        "median ms",
        "p90 ms",
        "bytes/4",
        "controls",
        "recall",
        "precision",
        "(chrome's tree)",
        "tool (all pages)",
    ] {
        assert!(stdout.contains(want), "{want} missing:\n{stdout}");
    }
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with(&page) && l.contains(" chromate ")),
        "{stdout}"
    );
    assert!(
        !stdout.contains("skipped:"),
        "--no-peers looks for none:\n{stdout}"
    );

    let html = work.join("report.html");
    let roles = server.url("roles.html");
    std::fs::write(
        work.join("local.html"),
        "<!doctype html><title>Local</title><h1>Local</h1><button>Go</button>",
    )
    .expect("local.html");
    let args = [
        page.as_str(),
        roles.as_str(),
        "local.html",
        "--no-peers",
        "--repeat",
        "2",
        "--browser",
        &browser,
        "--format",
        "html",
        "--output",
        "report.html",
    ];
    let out = bench(&args, &tmp, &bin, &work);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("report written to report.html"),
        "{}",
        text(&out)
    );
    let report_url = format!("file://{}", html.display());
    drop(server);
    // Offline: the fixture server is gone, and everything the page shows is in the file.
    let seen = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async move {
            let browser = crate::util::launch().await;
            let page = crate::util::new_page_at(&browser, &report_url).await;
            let seen = page
                .evaluate(
                    "({ title: document.title, rows: document.querySelectorAll('tr.result').length, \
                       summary: [...document.querySelectorAll('tr.summary td.tool')].map(t => t.textContent), \
                       charts: document.querySelectorAll('svg.chart').length, \
                       bars: document.querySelectorAll('svg.chart rect.bar').length, \
                       barWidth: document.querySelector('svg.chart rect.bar').getBoundingClientRect().width, \
                       links: [...document.querySelectorAll('tr.result td:first-child')].map(td => !!td.querySelector('a[href]')), \
                       scripts: document.scripts.length, \
                       external: document.querySelectorAll('link, img, iframe, [src]').length, \
                       resources: performance.getEntriesByType('resource').length })",
                )
                .await
                .expect("the report's contents");
            crate::util::close_and_check(browser).await;
            seen
        });
    assert_eq!(seen["title"], "chromate bench-snapshot", "{seen}");
    assert_eq!(seen["rows"], 3, "a row per page and tool: {seen}");
    // A page named by its URL links to it; one the run served itself (gone with the run) not.
    assert_eq!(seen["links"], json!([true, true, false]), "{seen}");
    assert_eq!(seen["summary"], json!(["chromate"]), "{seen}");
    assert_eq!(seen["charts"], 3, "time, size, recall: {seen}");
    assert_eq!(seen["bars"], 9, "a bar per page in each chart: {seen}");
    assert!(
        seen["barWidth"].as_f64().is_some_and(|w| w >= 1.0),
        "{seen}"
    );
    assert_eq!(seen["scripts"], 0, "{seen}");
    assert_eq!(seen["external"], 0, "{seen}");
    assert_eq!(seen["resources"], 0, "{seen}");

    for (bad, says) in [
        ("/no/such/page.html", "neither a url nor a readable file"),
        ("empty-dir", "no .html files in it"),
    ] {
        std::fs::create_dir_all(work.join("empty-dir")).expect("mkdir");
        let out = bench(
            &[bad, "--no-peers", "--browser", &browser],
            &tmp,
            &bin,
            &work,
        );
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{says}: {}",
            text(&out)
        );
    }
    assert_nothing_left(&tmp);
}

/// The benchmark checked against known answers: a page whose controls are known, one of them
/// in a cross-site frame (its own renderer, read through its own session) and one added by
/// the page's script after `load`. Chrome's reference must count exactly those controls (a
/// reference that reads only the main frame, or reads before the script ran, counts fewer),
/// chromate must match all of them, and a control the contract prints differently on purpose
/// (a button at opacity 0, which Chrome lists and no person sees) must be listed as missing by
/// name; a password field is a textbox to both. Peers'
/// own text formats are checked against known lines in the oracle's unit tests.
#[test]
fn the_reference_reads_every_frame_after_the_same_wait_and_the_report_names_what_is_missing() {
    let server = fixtures();
    server.route("/frame.html", |_| {
        Response::new(200)
            .header("Content-Type", "text/html")
            .body("<!doctype html><title>Frame</title><button>In frame</button><a href=\"#x\">Frame link</a>")
    });
    // Another site than 127.0.0.1, on loopback: Chromium gives the frame its own process.
    let frame = server.url("frame.html").replace("127.0.0.1", "localhost");
    let (_dir, tmp, bin, work) = scratch();
    let site = work.join("known");
    std::fs::create_dir_all(&site).expect("site");
    std::fs::write(
        site.join("frames.html"),
        format!(
            "<!doctype html><title>Known</title><h1>Known</h1><button>Now</button>\
             <iframe src=\"{frame}\" width=\"400\" height=\"120\"></iframe>\
             <script>addEventListener('load', () => setTimeout(() => {{\
               const b = document.createElement('button'); b.textContent = 'Late';\
               document.body.append(b); }}, 300));</script>"
        ),
    )
    .expect("frames.html");
    std::fs::write(
        site.join("password.html"),
        "<!doctype html><title>Login</title><h1>Login</h1>\
         <label>Password <input type=password></label><button>Sign in</button>\
         <button style=\"opacity: 0\">Unseen</button>",
    )
    .expect("password.html");
    let browser = browser();
    let args = [
        "known",
        "--no-peers",
        "--repeat",
        "1",
        "--browser",
        &browser,
        "--format",
        "json",
    ];
    let output = bench(&args, &tmp, &bin, &work);
    assert!(output.status.success(), "{}", text(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(report["wait_ms"], json!(1000), "the default wait is stated");
    assert!(
        report["browser_version"]
            .as_str()
            .is_some_and(|v| v.contains("Chrome/")),
        "{}",
        report["browser_version"]
    );
    assert_eq!(
        report["scored_roles"].as_array().map(Vec::len),
        Some(chromate::oracle::SCORED_ROLES.len())
    );
    let pages = report["pages"].as_array().expect("pages");
    let page = |name: &str| {
        pages
            .iter()
            .find(|p| p["label"] == name)
            .unwrap_or_else(|| panic!("{name} in {report:#}"))
    };

    // heading Known, button Now, button Late, and the frame's button and link.
    let frames = page("frames.html");
    assert_eq!(frames["reference"]["controls"], json!(5), "{frames:#}");
    let full = &frames["results"][0]["full"];
    assert_eq!(full["recall"], json!(1.0), "{frames:#}");
    assert_eq!(full["precision"], json!(1.0), "{frames:#}");
    assert_eq!(full["missing"], json!([]), "{frames:#}");
    assert_eq!(full["extra"], json!([]), "{frames:#}");

    // Chrome's button "Unseen" (opacity 0) is not in the snapshot: missing, by name; the
    // password field is a textbox to both.
    let password = page("password.html");
    assert_eq!(password["reference"]["controls"], json!(4), "{password:#}");
    let full = &password["results"][0]["full"];
    assert_eq!(
        full["missing"],
        json!([["button", "Unseen", 1]]),
        "{password:#}"
    );
    assert_eq!(full["extra"], json!([]), "{password:#}");
    assert_nothing_left(&tmp);
}
