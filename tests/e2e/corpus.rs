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

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use chromate::cdp::accessibility::GetFullAXTreeParams;
use chromate::cdp::dom::{GetDocumentParams, QuerySelectorAllParams, RemoveNodeParams};
use chromate::{
    Browser, BrowserAccessibility, LaunchOptions, LineKind, Page, SnapshotOptions, WaitUntil,
};
use chromate_tests::FixtureServer;

use crate::oracle::contract_name;
use crate::util::{close_and_check, NAV};

/// The roles scored, as the snapshot prints them.
const SCORED: &[&str] = &[
    "link", "button", "textbox", "combobox", "checkbox", "radio", "heading",
];

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

/// Role + name as the contract prints them; Chrome's spellings mapped onto the snapshot's.
type Entry = (String, String);

fn chrome_entry(node: &BrowserAccessibility) -> Option<Entry> {
    let role = match node.role.as_str() {
        // A details summary (the snapshot's button, §7.3).
        "DisclosureTriangle" => "button",
        "searchbox" => "textbox",
        other => other,
    };
    SCORED
        .contains(&role)
        .then(|| (role.to_string(), contract_name(&node.name)))
}

fn our_role(role: &str) -> &str {
    match role {
        "searchbox" => "textbox",
        other => other,
    }
}

/// Counts of one role (or of everything) on one page (or pooled).
#[derive(Debug, Default, Clone, Copy)]
struct Score {
    chrome: usize,
    ours: usize,
    matched: usize,
}

impl Score {
    fn add(&mut self, other: Score) {
        self.chrome += other.chrome;
        self.ours += other.ours;
        self.matched += other.matched;
    }

    fn recall(&self) -> f64 {
        ratio(self.matched, self.chrome)
    }

    fn precision(&self) -> f64 {
        ratio(self.matched, self.ours)
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

fn docs_root() -> PathBuf {
    let output = std::process::Command::new(std::env::var("RUSTC").unwrap_or("rustc".into()))
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc --print sysroot");
    let sysroot = String::from_utf8(output.stdout).expect("utf-8 sysroot");
    PathBuf::from(sysroot.trim())
        .join("share")
        .join("doc")
        .join("rust")
        .join("html")
}

/// Chrome's scored entries on the page now.
async fn chrome_entries(page: &Page) -> BTreeMap<Entry, usize> {
    let tree = page
        .session()
        .send(&GetFullAXTreeParams::default())
        .await
        .expect("full accessibility tree");
    let mut entries = BTreeMap::new();
    for node in tree.nodes.into_iter().filter(|n| !n.ignored) {
        if let Some(entry) = chrome_entry(&BrowserAccessibility::from_node(node)) {
            *entries.entry(entry).or_default() += 1;
        }
    }
    entries
}

/// Takes the `<wbr>` elements out of the page (through the protocol, no page script): Chrome
/// names a word-break opportunity as a space (`assert_ eq`), which no one sees, while the
/// snapshot prints the name as it reads (`assert_eq`), on purpose (`docs/mcp.md#snapshots`).
async fn without_word_breaks(page: &Page) {
    let session = page.session();
    let document = session
        .send(&GetDocumentParams::default())
        .await
        .expect("document");
    let breaks = session
        .send(&QuerySelectorAllParams::new(document.root.node_id, "wbr"))
        .await
        .expect("wbr elements");
    for node_id in breaks.node_ids {
        session
            .send(&RemoveNodeParams::new(node_id))
            .await
            .expect("remove wbr");
    }
}

/// `ours` against `theirs` for one role, or for all of them.
fn score(
    theirs: &BTreeMap<Entry, usize>,
    ours: &BTreeMap<Entry, usize>,
    role: Option<&str>,
) -> Score {
    let of_role = |entry: &Entry| role.is_none_or(|r| entry.0 == r);
    let count = |set: &BTreeMap<Entry, usize>| -> usize {
        set.iter().filter(|(e, _)| of_role(e)).map(|(_, n)| n).sum()
    };
    let matched = theirs
        .iter()
        .filter(|(e, _)| of_role(e))
        .map(|(e, n)| (*n).min(ours.get(e).copied().unwrap_or(0)))
        .sum();
    Score {
        chrome: count(theirs),
        ours: count(ours),
        matched,
    }
}

#[tokio::test]
async fn snapshot_of_real_documentation_pages_agrees_with_chromes_accessibility_tree() {
    let root = docs_root();
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
            let raw = chrome_entries(&page).await;
            without_word_breaks(&page).await;
            let theirs = chrome_entries(&page).await;
            let mut ours: BTreeMap<Entry, usize> = BTreeMap::new();
            for line in &snapshot.lines {
                let role = our_role(&line.role);
                if line.kind == LineKind::Semantic && SCORED.contains(&role) {
                    let name = line.name.clone().unwrap_or_default();
                    *ours.entry((role.to_string(), name)).or_default() += 1;
                }
            }
            pooled_raw.add(score(&raw, &ours, None));
            let mut page_score = Score::default();
            for role in SCORED {
                let role_score = score(&theirs, &ours, Some(role));
                by_role.entry(role).or_default().add(role_score);
                page_score.add(role_score);
            }
            for (entry, n) in &theirs {
                let have = ours.get(entry).copied().unwrap_or(0);
                if have < *n {
                    differences.push(format!(
                        "{path}: chrome has {n}× {} {:?}, the snapshot {have}",
                        entry.0, entry.1
                    ));
                }
            }
            for (entry, n) in &ours {
                let have = theirs.get(entry).copied().unwrap_or(0);
                if have < *n {
                    differences.push(format!(
                        "{path}: the snapshot has {n}× {} {:?}, chrome {have}",
                        entry.0, entry.1
                    ));
                }
            }
            report.push(format!(
                "{generator:<17} {path:<42} {:>5} {:>5} {:>6.3} {:>6.3}",
                page_score.chrome,
                page_score.ours,
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
            score.chrome,
            score.ours,
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
