//! The snapshot against Chrome's accessibility tree on real pages nobody on the team wrote: the
//! HTML documentation the Rust toolchain installs (`rustup component add rust-docs`, in
//! rustup's default profile), served on 127.0.0.1. Three generators: rustdoc API pages (std,
//! core, alloc, proc_macro), mdBook books (the book, cargo, the reference, rustc, clippy, …) and
//! rustdoc's standalone Markdown pages (the documentation index, the release notes, the old
//! guide stubs), which share neither template nor script with the other two.
//!
//! Every page's full snapshot (`max_lines` 5000) is scored against `Accessibility.getFullAXTree`
//! for links, buttons, textboxes, comboboxes, checkboxes, radios and headings, as role + name
//! multisets (the way a peer without DOM handles is scored too): recall is the share of
//! Chrome's entries the snapshot lists, precision the share of the snapshot's entries Chrome
//! has. The figures print per page and per role; the pooled ones must reach 0.99, and a failure
//! lists every difference.
//!
//! `chromate audit` runs over some of these pages and Python's documentation in the binary's
//! own corpus test (`mcp/tests/e2e/audit_corpus.rs`): no false high or critical finding.

use std::collections::BTreeMap;
use std::time::Instant;

use chromate::{
    Browser, Controls, LaunchOptions, LineKind, Score, SnapshotOptions, WaitUntil, SCORED_ROLES,
};
use chromate_tests::FixtureServer;

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
    // The books load MathJax and fonts from the internet: nothing leaves loopback.
    let browser = Browser::launch(
        LaunchOptions::default().arg("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
    )
    .await
    .expect("launch");
    let page = browser.new_page("about:blank").await.expect("page");
    let started = Instant::now();
    let mut pooled = Score::default();
    let mut pooled_raw = Score::default();
    let mut by_role: BTreeMap<&str, Score> = BTreeMap::new();
    let mut by_generator: BTreeMap<&str, Score> = BTreeMap::new();
    let mut report = Vec::new();
    let mut differences = Vec::new();
    let mut n_pages = 0;
    for (generator, paths) in PAGES {
        for path in *paths {
            page.goto(&server.url(path), WaitUntil::Load, NAV)
                .await
                .unwrap_or_else(|e| panic!("{path}: {e}"));
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
            let raw = page.chrome_controls().await.expect("accessibility tree");
            page.remove_word_breaks().await.expect("remove wbr");
            let theirs = page.chrome_controls().await.expect("accessibility tree");
            let ours = Controls::from_snapshot(&snapshot);
            pooled_raw.add(raw.score(&ours, None));
            let mut page_score = Score::default();
            for role in SCORED_ROLES {
                let role_score = theirs.score(&ours, Some(role));
                by_role.entry(role).or_default().add(role_score);
                page_score.add(role_score);
            }
            for (entry, n, have) in theirs.surplus_over(&ours) {
                differences.push(format!(
                    "{path}: chrome has {n}× {} {:?}, the snapshot {have}",
                    entry.0, entry.1
                ));
            }
            for (entry, n, have) in ours.surplus_over(&theirs) {
                differences.push(format!(
                    "{path}: the snapshot has {n}× {} {:?}, chrome {have}",
                    entry.0, entry.1
                ));
            }
            report.push(format!(
                "{generator:<17} {path:<42} {:>5} {:>5} {:>6.3} {:>6.3}",
                page_score.reference,
                page_score.listed,
                page_score.recall(),
                page_score.precision()
            ));
            by_generator.entry(generator).or_default().add(page_score);
            pooled.add(page_score);
            n_pages += 1;
        }
    }
    close_and_check(browser).await;
    let mut summary = vec![format!(
        "{:<17} {:<42} {:>5} {:>5} {:>6} {:>6}",
        "generator", "page", "chrome", "ours", "recall", "precis"
    )];
    summary.extend(report);
    for (label, score) in by_generator
        .iter()
        .map(|(g, s)| (format!("generator {g}"), s))
        .chain(by_role.iter().map(|(r, s)| (format!("role {r}"), s)))
        .chain(std::iter::once((
            "pooled, against Chrome's names as they are".to_string(),
            &pooled_raw,
        )))
        .chain(std::iter::once(("pooled".to_string(), &pooled)))
    {
        summary.push(format!(
            "{label:<60} {:>5} {:>5} {:>6.3} {:>6.3}",
            score.reference,
            score.listed,
            score.recall(),
            score.precision()
        ));
    }
    eprintln!(
        "{}\n{n_pages} pages in {:.1} s\n{} differences:\n{}",
        summary.join("\n"),
        started.elapsed().as_secs_f64(),
        differences.len(),
        differences.join("\n")
    );
    assert!(n_pages >= 40, "only {n_pages} pages");
    assert!(
        pooled.recall() >= 0.99 && pooled.precision() >= 0.99,
        "pooled recall {:.3}, precision {:.3} (goal 0.99):\n{}\n{} differences:\n{}",
        pooled.recall(),
        pooled.precision(),
        summary.join("\n"),
        differences.len(),
        differences.join("\n")
    );
}
