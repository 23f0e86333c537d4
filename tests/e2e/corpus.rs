//! The snapshot against Chrome's accessibility tree on real pages nobody on the team wrote,
//! served on 127.0.0.1 by the test's own fixture server:
//!
//! - the HTML documentation the Rust toolchain installs (`rustup component add rust-docs`, in
//!   rustup's default profile). Three generators: rustdoc API pages (std, core, alloc,
//!   proc_macro), mdBook books (the book, cargo, the reference, rustc, clippy, …) and rustdoc's
//!   standalone Markdown pages (the documentation index, the release notes, the old guide
//!   stubs), which share neither template nor script with the other two;
//! - real web apps from npm, pinned in `tests/apps/package.json` and its lock (`.ci/setup.sh
//!   all`): Swagger UI on a local OpenAPI file with a mock API behind it (a request executed,
//!   its response shown), jQuery UI's widgets (a modal form, menus, tabs, accordions,
//!   datepickers, form widgets), RapiDoc (open shadow roots, nested) and JSONEditor (editable
//!   cells, Ace).
//!
//! Every page's full snapshot (`max_lines` 5000) is scored against `Accessibility.getFullAXTree`
//! in every frame, for the roles of `chromate::oracle::SCORED_ROLES` (links, buttons, textboxes,
//! comboboxes, options, checkboxes, radios, headings, tabs, menu items, …), as role + name
//! multisets (the way a peer without DOM handles is scored too): recall is the share of
//! Chrome's entries the snapshot lists, precision the share of the snapshot's entries Chrome
//! has. The figures print per page, per generator or app and per role; the pooled ones must
//! reach 0.99, and a failure lists every difference.
//!
//! `chromate audit` runs over some of these pages and Python's documentation in the binary's
//! own corpus test (`mcp/tests/e2e/audit_corpus.rs`): no false high or critical finding.

use std::collections::BTreeMap;
use std::time::Instant;

use chromate::{
    oracle::{Controls, Score, SCORED_ROLES},
    page::{SETTLE_CAP, SETTLE_WINDOW},
    snapshot::{LineKind, SnapshotOptions},
    Browser, LaunchOptions, Page, WaitUntil,
};
use chromate_tests::{FixtureServer, Response};

use crate::util::{close_and_check, NAV};

/// The pages, by generator, relative to the toolchain's `share/doc/rust/html`.
const PAGES: &[(&str, &[&str])] = &[
    (
        "rustdoc",
        &[
            "std/index.html",
            "std/collections/index.html",
            "std/option/enum.Option.html",
            "std/sync/struct.Mutex.html",
            "std/macro.println.html",
            "std/keyword.fn.html",
            "std/fs/fn.read_to_string.html",
            "std/io/trait.Read.html",
            "std/result/index.html",
            "std/fmt/index.html",
            "std/primitive.bool.html",
            "core/index.html",
            "core/mem/fn.swap.html",
            "alloc/index.html",
            "alloc/rc/struct.Rc.html",
            "proc_macro/index.html",
            "std/all.html",
            "help.html",
            "settings.html",
            "src/std/lib.rs.html",
        ],
    ),
    (
        "mdbook",
        &[
            "book/index.html",
            "book/ch01-00-getting-started.html",
            "book/ch04-01-what-is-ownership.html",
            "book/ch08-02-strings.html",
            "book/appendix-02-operators.html",
            "cargo/index.html",
            "cargo/reference/manifest.html",
            "cargo/commands/cargo-build.html",
            "reference/introduction.html",
            "reference/expressions.html",
            "reference/items/functions.html",
            "rustc/index.html",
            "rustc/command-line-arguments.html",
            "edition-guide/index.html",
            "nomicon/index.html",
            "rust-by-example/index.html",
            "rust-by-example/hello.html",
            "rustdoc/index.html",
            "clippy/index.html",
            "embedded-book/index.html",
            "error_codes/E0001.html",
        ],
    ),
    (
        "rustdoc-markdown",
        &[
            "index.html",
            "not_found.html",
            "complement-lang-faq.html",
            "guide-ffi.html",
            "intro.html",
            "reference.html",
        ],
    ),
];

#[tokio::test]
async fn snapshot_of_real_documentation_pages_agrees_with_chromes_accessibility_tree() {
    let root = chromate_tests::docs::rust_docs_root().unwrap_or_else(|err| panic!("{err}"));
    assert!(
        root.join("std").join("index.html").is_file(),
        "no Rust documentation under {}: run `rustup component add rust-docs`",
        root.display()
    );
    let server = FixtureServer::start_serving(&root).await.expect("server");
    let browser = launch_offline().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let started = Instant::now();
    let mut tally = Tally::default();
    for (generator, paths) in PAGES {
        for path in *paths {
            page.goto(&server.url(path), WaitUntil::Load, NAV)
                .await
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            tally.score(&page, generator, path).await;
        }
    }
    close_and_check(browser).await;
    let summary = tally.summary("generator");
    eprintln!(
        "{summary}\n{} pages in {:.1} s\n{} differences:\n{}",
        tally.n_pages,
        started.elapsed().as_secs_f64(),
        tally.differences.len(),
        tally.differences.join("\n")
    );
    assert!(tally.n_pages >= 40, "only {} pages", tally.n_pages);
    tally.assert_at_least(0.995, 0.995, "pooled", &summary);
}

/// The real apps, by app, relative to `tests/apps/`: each page builds on the app as npm installs
/// it (pinned in `tests/apps/package.json` and its lock) and sets `window.corpusReady`, a
/// promise that resolves once the app has rendered and the page's own steps have run (a
/// dialog opened, a request executed, a submenu expanded).
const APPS: &[(&str, &[&str])] = &[
    (
        "swagger-ui",
        &[
            "pages/swagger/index.html?view=list",
            "pages/swagger/index.html?view=full",
        ],
    ),
    (
        "jquery-ui",
        &[
            "pages/jqueryui/dialog-form.html",
            "pages/jqueryui/menu.html",
            "pages/jqueryui/tabs.html",
            "pages/jqueryui/datepicker.html",
            "pages/jqueryui/widgets.html",
        ],
    ),
    (
        "rapidoc",
        &[
            "pages/rapidoc/index.html?style=read",
            "pages/rapidoc/index.html?style=focused#get-/pets",
        ],
    ),
    (
        "jsoneditor",
        &[
            "pages/jsoneditor/index.html?mode=tree",
            "pages/jsoneditor/index.html?mode=form",
            "pages/jsoneditor/index.html?mode=code",
        ],
    ),
];

/// The mock API the OpenAPI file's server (`/api`) names, on the same fixture server.
fn serve_mock_api(server: &FixtureServer) {
    let pets = serde_json::json!([
        {"id": 1, "name": "Rex", "status": "available", "tags": ["dog"]},
        {"id": 2, "name": "Tom", "status": "available", "tags": ["cat"]},
    ]);
    let one = pets[0].clone();
    server.route("api/pets", move |_| Response::json(&pets));
    server.route("api/pets/1", move |_| Response::json(&one));
    server.route("api/store/inventory", |_| {
        Response::json(&serde_json::json!({"available": 2, "pending": 0, "sold": 5}))
    });
    server.route("api/user/login", |_| Response::text("token-1234"));
}

#[tokio::test]
async fn snapshot_of_real_web_apps_agrees_with_chromes_accessibility_tree() {
    let root = chromate_tests::docs::apps_root();
    assert!(
        root.join("node_modules/swagger-ui-dist/swagger-ui-bundle.js")
            .is_file(),
        "the apps are not installed under {}: run `.ci/setup.sh all` (npm ci in tests/apps)",
        root.display()
    );
    let server = FixtureServer::start_serving(&root).await.expect("server");
    serve_mock_api(&server);
    let browser = launch_offline().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let started = Instant::now();
    let mut tally = Tally {
        ignore_whitespace: true,
        ..Tally::default()
    };
    for (app, paths) in APPS {
        for path in *paths {
            page.goto(&server.url(path), WaitUntil::Load, NAV)
                .await
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            page.evaluate("window.corpusReady")
                .await
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            page.wait_for_settled(SETTLE_WINDOW, SETTLE_CAP)
                .await
                .unwrap_or_else(|e| panic!("{path}: settle: {e}"));
            tally.score(&page, app, path).await;
        }
    }
    close_and_check(browser).await;
    let summary = tally.summary("app");
    eprintln!(
        "{summary}\n{} pages in {:.1} s\n{} differences:\n{}",
        tally.n_pages,
        started.elapsed().as_secs_f64(),
        tally.differences.len(),
        tally.differences.join("\n")
    );
    assert!(
        server.request_count("/api/pets") >= 1,
        "Swagger UI's Execute never reached the mock API: {:?}",
        server.requests()
    );
    tally.assert_at_least(0.99, 0.99, "apps", &summary);
    // FIXME: jQuery UI's datepicker moves between months with `<a>` elements that have no
    // `href`, no `tabindex`, no `onclick` attribute and no pointer cursor, only a click
    // listener added by script: Chrome makes them links (it sees the listener), the snapshot
    // cannot see listeners from its isolated world and leaves them out.
    assert_eq!(
        tally.differences,
        [
            "pages/jqueryui/datepicker.html: chrome has 2× link \"Next\", the snapshot 0",
            "pages/jqueryui/datepicker.html: chrome has 2× link \"Prev\", the snapshot 0",
        ],
        "the differences on the apps changed:\n{summary}"
    );
}

/// Launches a browser that resolves every host but 127.0.0.1 to nothing: the books load
/// MathJax and fonts from the internet, RapiDoc and Swagger UI could reach for theirs, and
/// nothing leaves loopback.
async fn launch_offline() -> Browser {
    Browser::launch(
        LaunchOptions::default().arg("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
    )
    .await
    .expect("launch")
}

/// The figures of one corpus run: pooled, by group (generator or app) and by role, a line per
/// page, and every difference between the snapshot and Chrome.
#[derive(Default)]
struct Tally {
    pooled: Score,
    pooled_raw: Score,
    by_role: BTreeMap<&'static str, Score>,
    by_group: BTreeMap<&'static str, Score>,
    report: Vec<String>,
    differences: Vec<String>,
    n_pages: usize,
    /// Names compared regardless of whitespace, as `chromate bench-snapshot` compares every
    /// tool's: Chrome drops the space between two text nodes of a label that a template
    /// engine separated with a comment (RapiDoc's `/api <!---->- The mock API` reads
    /// `/api- The mock API` there), which a person sees and the snapshot keeps.
    ignore_whitespace: bool,
    /// Textbox lines of editing hosts, which Chrome calls `generic` (not scored).
    editing_hosts: usize,
}

impl Tally {
    /// Scores the page as it is now: its full snapshot (`max_lines` 5000) against Chrome's
    /// tree in every frame.
    async fn score(&mut self, page: &Page, group: &'static str, path: &str) {
        let snapshot = page
            .snapshot(SnapshotOptions {
                max_lines: 5000,
                ..SnapshotOptions::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{path}: snapshot: {e}"));
        let n_semantic = snapshot
            .lines
            .iter()
            .filter(|l| l.kind == LineKind::Semantic)
            .count();
        assert!(
            n_semantic < 5000,
            "{path}: the snapshot is cut at its budget"
        );
        // An editing host (a contenteditable element whose parent is not editable) prints as a
        // textbox on purpose (docs/mcp.md#snapshots), where Chrome exposes the same node as a
        // focusable, editable `generic` (tests/e2e/oracle.rs checks the node; a textbox line
        // of an input or of `role=textbox` is a textbox to Chrome too): such a line is not
        // scored, and the summary says how many there were.
        let mut snapshot = snapshot;
        let mut hosts = Vec::new();
        for line in &snapshot.lines {
            let Some(element_ref) = line.element_ref.filter(|_| line.role == "textbox") else {
                continue;
            };
            let chrome = page
                .locator(&format!("ref={element_ref}"))
                .expect("ref selector")
                .browser_accessibility()
                .await
                .unwrap_or_else(|e| panic!("{path}: {element_ref}: {e}"));
            if chrome.is_some_and(|c| c.role == "generic") {
                hosts.push(element_ref);
            }
        }
        snapshot
            .lines
            .retain(|l| !l.element_ref.is_some_and(|r| hosts.contains(&r)));
        self.editing_hosts += hosts.len();
        let raw = page.chrome_controls().await.expect("accessibility tree");
        page.remove_word_breaks().await.expect("remove wbr");
        let mut theirs = page.chrome_controls().await.expect("accessibility tree");
        let mut ours = Controls::from_snapshot(&snapshot);
        self.pooled_raw.add(raw.score(&ours, None));
        if self.ignore_whitespace {
            theirs = theirs.ignoring_whitespace();
            ours = ours.ignoring_whitespace();
        }
        let mut page_score = Score::default();
        for role in SCORED_ROLES {
            let role_score = theirs.score(&ours, Some(role));
            self.by_role.entry(role).or_default().add(role_score);
            page_score.add(role_score);
        }
        for (entry, n, have) in theirs.surplus_over(&ours) {
            self.differences.push(format!(
                "{path}: chrome has {n}× {} {:?}, the snapshot {have}",
                entry.0, entry.1
            ));
        }
        for (entry, n, have) in ours.surplus_over(&theirs) {
            self.differences.push(format!(
                "{path}: the snapshot has {n}× {} {:?}, chrome {have}",
                entry.0, entry.1
            ));
        }
        self.report.push(format!(
            "{group:<17} {path:<42} {:>5} {:>5} {:>6.3} {:>6.3}",
            page_score.reference,
            page_score.listed,
            page_score.recall(),
            page_score.precision()
        ));
        self.by_group.entry(group).or_default().add(page_score);
        self.pooled.add(page_score);
        self.n_pages += 1;
    }

    /// The table: a line per page, then by group, by role and pooled.
    fn summary(&self, group_label: &str) -> String {
        let mut summary = vec![format!(
            "{group_label:<17} {:<42} {:>5} {:>5} {:>6} {:>6}",
            "page", "chrome", "ours", "recall", "precis"
        )];
        summary.extend(self.report.iter().cloned());
        for (label, score) in self
            .by_group
            .iter()
            .map(|(g, s)| (format!("{group_label} {g}"), s))
            .chain(self.by_role.iter().map(|(r, s)| (format!("role {r}"), s)))
            .chain(std::iter::once((
                "pooled, against Chrome's names as they are".to_string(),
                &self.pooled_raw,
            )))
            .chain(std::iter::once(("pooled".to_string(), &self.pooled)))
        {
            summary.push(format!(
                "{label:<60} {:>5} {:>5} {:>6.3} {:>6.3}",
                score.reference,
                score.listed,
                score.recall(),
                score.precision()
            ));
        }
        summary.push(format!(
            "editing hosts printed as textboxes, Chrome's generic (not scored): {}",
            self.editing_hosts
        ));
        summary.join("\n")
    }

    /// Asserts the pooled recall and precision, listing every difference on failure.
    fn assert_at_least(&self, recall: f64, precision: f64, what: &str, summary: &str) {
        assert!(
            self.pooled.recall() >= recall && self.pooled.precision() >= precision,
            "{what}: recall {:.3}, precision {:.3} (floor {recall}, {precision}):\n{summary}\n{} differences:\n{}",
            self.pooled.recall(),
            self.pooled.precision(),
            self.differences.len(),
            self.differences.join("\n")
        );
    }
}
