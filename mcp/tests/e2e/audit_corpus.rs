//! `chromate audit` on real pages nobody on the team wrote (issue 27): the Rust toolchain's
//! HTML docs (rustdoc pages with their sticky sidebar, mdBook pages with their fixed scrolling
//! one) and Python's (Sphinx, whose theme's stylesheets import each other), each tree served
//! on 127.0.0.1 and audited page by page, as `--fail-on high` in a CI job would.
//!
//! The pages are good pages: a high or critical finding on them is false unless it is listed
//! in [`TRUE_FINDINGS`] (page, rule and selector exactly), each with the evidence that makes
//! it true. The count of false ones prints with every page's findings and must be zero; so
//! must the count of `layout.covered` and `layout.off-screen` findings of any severity (links
//! in scrolling sidebars are reachable) and of requests the page never made (the
//! accessibility step's own). Speed findings are measurements of this machine at this moment,
//! not judgements of the page: they print and are not counted.
//!
//! The browser resolves every host but 127.0.0.1 to nothing (`--host-resolver-rules`, through
//! a wrapper script that execs the real Chromium with the same pid): nothing leaves loopback.

use chromate_tests::{FixtureServer, Response};

use crate::cli::{assert_ok, Cli};

/// Rust pages, relative to the toolchain's `share/doc/rust/html`: rustdoc's (sticky sidebar,
/// a long module list on `std/index.html`) and mdBook's (a fixed sidebar hundreds of links
/// long).
const RUST_PAGES: &[&str] = &[
    "std/index.html",
    "std/macro.println.html",
    "book/ch01-01-installation.html",
    "cargo/reference/manifest.html",
];

/// Python pages, relative to `python3-doc`'s `html`: every one loads `pydoctheme.css`, which
/// imports `default.css`, which imports `classic.css`.
const PYTHON_PAGES: &[&str] = &[
    "index.html",
    "library/functions.html",
    "library/json.html",
    "tutorial/introduction.html",
];

/// The high and critical findings on these pages that are true: (page, rule, selector), and
/// why, from the finding's own evidence.
const TRUE_FINDINGS: &[(&str, &str, &str, &str)] = &[
    // rustdoc: the "since" version is #808080 on white, 3.95:1 where 4.5:1 is needed.
    ("std/index.html", "a11y.color-contrast", "text=1.0.0", "contrast 3.95:1"),
    ("std/macro.println.html", "a11y.color-contrast", "text=1.0.0", "contrast 3.95:1"),
    // rustdoc: the "Source" link is rgb(56,115,173) in #808080 text, not underlined: 1.3:1
    // between link and text where 3:1 (or an underline) is needed.
    (
        "std/index.html",
        "a11y.link-in-text-block",
        "role=link[name=\"Source\"]",
        "told apart by colour alone",
    ),
    (
        "std/macro.println.html",
        "a11y.link-in-text-block",
        "role=link[name=\"Source\"]",
        "told apart by colour alone",
    ),
    // rustdoc: `<summary class="hideme"><span>Expand description</span></summary>` hides its
    // only text (`display: none`) and shows `::after { content: "Collapse" }`: a name in CSS
    // generated content alone (WCAG failure F87).
    (
        "std/index.html",
        "a11y.summary-name",
        "role=button[name=\"Collapse\"]",
        "named by CSS content only",
    ),
    (
        "std/macro.println.html",
        "a11y.summary-name",
        "role=button[name=\"Collapse\"]",
        "named by CSS content only",
    ),
    // mdBook: the sidebar toggle is a `<label>` (no role) with aria-expanded (not allowed on
    // it) and aria-label (prohibited on it).
    (
        "book/ch01-01-installation.html",
        "a11y.aria-allowed-attr",
        "#mdbook-sidebar-toggle",
        "aria-expanded on a label",
    ),
    (
        "book/ch01-01-installation.html",
        "a11y.aria-prohibited-attr",
        "#mdbook-sidebar-toggle",
        "aria-label on a label",
    ),
    (
        "cargo/reference/manifest.html",
        "a11y.aria-allowed-attr",
        "#mdbook-sidebar-toggle",
        "aria-expanded on a label",
    ),
    (
        "cargo/reference/manifest.html",
        "a11y.aria-prohibited-attr",
        "#mdbook-sidebar-toggle",
        "aria-label on a label",
    ),
    // The book: `<section class="note" aria-role="note">`: aria-role is no ARIA attribute.
    (
        "book/ch01-01-installation.html",
        "a11y.aria-valid-attr",
        "css=#mdbook-content > main > section:nth-of-type(1)",
        "aria-role",
    ),
    // Cargo: a `<pre><code>` wider than its box scrolls, and nothing in it takes focus, so a
    // keyboard cannot scroll it.
    (
        "cargo/reference/manifest.html",
        "a11y.scrollable-region-focusable",
        "css=#mdbook-content > main > pre:nth-of-type(25) > code",
        "scrolls, unfocusable",
    ),
    // Python: `<a href=""></a>`, an empty link in the related-links bar.
    (
        "index.html",
        "a11y.link-name",
        "css=html > body > div:nth-of-type(2) > ul > li:nth-of-type(8) > a",
        "empty link",
    ),
    // Python: linked code is #0072aa on #d6d6d6, 3.62:1 where 4.5:1 is needed.
    ("library/functions.html", "a11y.color-contrast", "text=code", "contrast 3.62:1"),
    (
        "library/json.html",
        "a11y.color-contrast",
        "css=#basic-usage > dl:nth-of-type(1) > dd > div:nth-of-type(4) > p:nth-of-type(2) > a:nth-of-type(1) > code > span",
        "contrast 3.62:1",
    ),
];

/// A `chromium` for `CHROMATE_BROWSER` that reaches 127.0.0.1 only: a script in the test's
/// directory that execs the real browser (same pid, so the leak checks still see the browser
/// chromate started) with every other host resolved to nothing.
fn loopback_browser(cli: &Cli) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let real = chromate::browser::find_browser(None).expect("a Chromium to wrap");
    let script = cli.path("chromium-loopback");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec '{}' '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1' \"$@\"\n",
            real.display()
        ),
    )
    .expect("write the wrapper");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

/// Serves `root`; Debian's Python docs link jQuery and Underscore from `_static` to
/// `/usr/share/javascript`, outside the root the fixture server keeps to: those symlinks are
/// served as a web server that follows them would.
fn serve(root: &std::path::Path) -> FixtureServer {
    let server = FixtureServer::start_detached_serving(root)
        .unwrap_or_else(|err| panic!("cannot serve {}: {err}", root.display()));
    let statics = std::fs::read_dir(root.join("_static"))
        .into_iter()
        .flatten();
    for entry in statics.flatten() {
        let path = entry.path();
        if !path.is_symlink() {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let content_type = chromate_tests::server::content_type(&path);
        let name = entry.file_name().to_string_lossy().into_owned();
        server.route(&format!("_static/{name}"), move |_| {
            Response::new(200)
                .header("Content-Type", content_type)
                .body(bytes.clone())
        });
    }
    server
}

#[test]
fn real_documentation_pages_have_no_false_high_or_critical_finding() {
    let rust = chromate_tests::docs::rust_docs_root().unwrap_or_else(|err| panic!("{err}"));
    assert!(
        rust.join("std/index.html").is_file(),
        "no Rust documentation under {}: run `rustup component add rust-docs` (.ci/setup.sh all)",
        rust.display()
    );
    let python = chromate_tests::docs::python_docs_root()
        .expect("no Python documentation: install python3-doc (.ci/setup.sh all)");
    let cli = Cli::new();
    let browser = loopback_browser(&cli);
    let env = [("CHROMATE_BROWSER", browser.as_str())];
    let mut report = Vec::new();
    let mut false_findings = Vec::new();
    let mut scroll_findings = Vec::new();
    let mut stray_requests = Vec::new();
    let mut n_findings = 0;
    let mut n_true = 0;
    for (root, pages) in [(&rust, RUST_PAGES), (&python, PYTHON_PAGES)] {
        let server = serve(root);
        for page in pages {
            let url = server.url(page);
            server.clear_requests();
            let args = ["audit", url.as_str(), "--format", "json"];
            let out = cli.run_env(&args, &env);
            assert_ok(&out, &args);
            let result = out.document();
            assert_eq!(result["status"], "completed", "{page}: {result:#}");
            let findings = result["findings"].as_array().cloned().unwrap_or_default();
            n_findings += findings.len();
            let mut lines = Vec::new();
            for finding in &findings {
                let text = |key: &str| finding[key].as_str().unwrap_or_default().to_owned();
                let (rule, severity, selector) =
                    (text("rule"), text("severity"), text("selector_hint"));
                let scrolling = rule == "layout.covered" || rule == "layout.off-screen";
                if scrolling {
                    scroll_findings.push(format!("{page}: {rule} {selector}"));
                }
                let serious = matches!(severity.as_str(), "high" | "critical");
                if serious || scrolling {
                    lines.push(format!("  {severity:<8} {rule:<32} {selector}"));
                }
                if !serious || rule.starts_with("speed.") {
                    continue;
                }
                let known = TRUE_FINDINGS
                    .iter()
                    .any(|(p, r, s, _)| p == page && *r == rule && *s == selector);
                if known {
                    n_true += 1;
                } else {
                    false_findings.push(format!("{page}: {severity} {rule} {selector}: {finding}"));
                }
            }
            // Every request reached a file: a 404 or 403 here is a request the page never
            // made (the files are the page's own tree).
            for finding in &findings {
                if finding["rule"] == "network.http-error" {
                    stray_requests.push(format!("{page}: {}", finding["title"]));
                }
            }
            report.push(format!(
                "{page}: {} findings in {} ms, the high and critical ones:\n{}",
                findings.len(),
                result["duration_ms"],
                lines.join("\n")
            ));
        }
        drop(server);
    }
    cli.finish();
    let n_pages = RUST_PAGES.len() + PYTHON_PAGES.len();
    eprintln!(
        "{}\n{n_pages} real pages, {n_findings} findings: {n_true} true high or critical, \
         {} false high or critical (false-positive count), {} covered or off-screen, {} stray \
         requests",
        report.join("\n"),
        false_findings.len(),
        scroll_findings.len(),
        stray_requests.len()
    );
    assert!(
        false_findings.is_empty(),
        "{} false high or critical findings:\n{}",
        false_findings.len(),
        false_findings.join("\n")
    );
    assert!(
        scroll_findings.is_empty(),
        "every link on these pages is reachable by scrolling:\n{}",
        scroll_findings.join("\n")
    );
    assert!(
        stray_requests.is_empty(),
        "requests no page made:\n{}",
        stray_requests.join("\n")
    );
    assert_eq!(
        n_true,
        TRUE_FINDINGS.len(),
        "every listed true finding is still found (the list is not stale)"
    );
}
