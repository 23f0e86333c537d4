//! Tidy: the rules the code states about itself, checked by machine (in the style of
//! rust-analyzer's `tidy.rs`). Each check reads the source tree and names every offending
//! line, so a rule cannot quietly erode as files are added.
//!
//! - Page JavaScript lives only in `engine/src/js/`: no Rust string literal elsewhere in the
//!   product crates looks like JavaScript (`chromate bench-snapshot`'s own page changes in
//!   `mcp/src/bench/` excepted).
//! - Every Rust file starts with a `//!` module doc.
//! - Product code sleeps only in the engine's poll schedule (`engine/src/wait/mod.rs`), the
//!   server's progress ticker (`mcp/src/mcp/server.rs`, a timer, not a wait) and the backoff
//!   between a capture's navigation retries (`mcp/flows/src/retry.rs`) and the HTTP
//!   accept loop's pause after a failed accept (`mcp/src/mcp/http/accept.rs`).
//! - The engine library never prints to stderr: it logs through `tracing`.
//! - The page-script minifier drops whole-line comments and cuts `/** … */` casts out of code
//!   lines, so no code line of a page script may start with `//` or `*` (inside a template
//!   literal, say), a comment's lines all start with `*`, and no string holds `/**`.
//! - The engine's `domain-*` features are exactly the protocol's domains, and `all-domains`
//!   lists them all.
//! - No product source file is over 40 KiB: a file that grows past it holds more than one job.
//! - Citations resolve inside the repository: no file cites a numbered section sign (the
//!   numbering of a specification the repository does not hold); code and docs link to
//!   `docs/*.md#anchor` instead.
//! - Thin front ends: the binary's MCP server, command line and session daemon call no engine
//!   API (`chromate::`): browser semantics live in the command layer (`mcp/command/`). That
//!   the command layer names no front end, Cargo checks: it is a crate the binary depends on.
//! - The engine has floors (in the style of Playwright's `DEPS.list`): each top-level engine
//!   module imports (`crate::module`) only the modules [`ENGINE_FLOORS`] allows it, a new
//!   module must be given its line there, and the modules form no import cycle. See
//!   ARCHITECTURE.md#floors.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The repository root (this crate lives in `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

/// Every file under `dir` whose name ends with `extension`, sorted.
fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("node_modules") && !path.ends_with("target") {
                    stack.push(path);
                }
            } else if path.to_string_lossy().ends_with(extension) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The product crates' sources, without unit-test files and inline test modules.
/// The product crates' source folders: the engine, the binary's command layer, its flows,
/// its front ends and its MCP client, and the generator.
const PRODUCT_DIRS: [&str; 6] = [
    "engine/src",
    "mcp/client/src",
    "mcp/command/src",
    "mcp/flows/src",
    "mcp/src",
    "cdp-gen/src",
];

fn product_sources() -> Vec<(PathBuf, String)> {
    let root = root();
    PRODUCT_DIRS
        .iter()
        .flat_map(|dir| files(&root.join(dir), ".rs"))
        .filter(|path| !path.ends_with("tests.rs"))
        .map(|path| {
            let text = read(&path);
            let code = match text.find("#[cfg(test)]\nmod tests {") {
                Some(at) => text[..at].to_owned(),
                None => text,
            };
            (path, code)
        })
        .collect()
}

/// The string literals of one line of Rust (plain ones; raw strings count as plain text).
fn string_literals(line: &str) -> Vec<String> {
    let mut literals = Vec::new();
    let mut chars = line.chars().peekable();
    let mut current: Option<String> = None;
    while let Some(ch) = chars.next() {
        match (&mut current, ch) {
            (None, '/') if chars.peek() == Some(&'/') => break,
            (None, '\'') => {
                // A char literal such as '"' must not open a string.
                let mut ahead = chars.clone();
                if let (Some(_), Some('\'')) = (ahead.next(), ahead.next()) {
                    chars.next();
                    chars.next();
                }
            }
            (None, '"') => current = Some(String::new()),
            (Some(text), '\\') => {
                if let Some(next) = chars.next() {
                    text.push('\\');
                    text.push(next);
                }
            }
            (Some(_), '"') => literals.extend(current.take()),
            (Some(text), other) => text.push(other),
            (None, _) => {}
        }
    }
    literals.extend(current);
    literals
}

#[test]
fn page_javascript_lives_only_in_engine_src_js() {
    let looks_like_js = |text: &str| {
        // `=>` alone also prints a console Map preview (`key => value`): arrows are `) =>`.
        [
            "function (",
            "function(",
            ") =>",
            "document.",
            "window.",
            "__chromate.",
        ]
        .iter()
        .any(|marker| text.contains(marker))
    };
    let mut offenders = Vec::new();
    // `chromate bench-snapshot` changes the page it measures with a few scripts of its own;
    // they are the benchmark's, not chromate's page scripts.
    let allowed = ["mcp/src/bench/detail.rs", "mcp/src/bench/targets.rs"];
    for (path, code) in product_sources() {
        let name = relative(&path);
        if name.starts_with("engine/src/js/") || allowed.contains(&name.as_str()) {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                continue;
            }
            if string_literals(line).iter().any(|text| looks_like_js(text)) {
                offenders.push(format!("{}:{}: {}", relative(&path), n + 1, trimmed));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "JavaScript outside engine/src/js/ (move it into a documented const there):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let root = root();
    let mut missing = Vec::new();
    for dir in ["engine", "mcp", "cdp-gen", "tests", "benches"] {
        for path in files(&root.join(dir), ".rs") {
            let text = read(&path);
            let first = text.lines().find(|line| !line.trim().is_empty());
            if !first.is_some_and(|line| line.starts_with("//!")) {
                missing.push(relative(&path));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files without a `//!` module doc:\n{}",
        missing.join("\n")
    );
}

#[test]
fn product_code_sleeps_only_in_the_poll_schedule() {
    let allowed = [
        "engine/src/wait/mod.rs",
        "mcp/src/mcp/server.rs",
        "mcp/flows/src/retry.rs",
        // A provider's transient failure waits its backoff or `Retry-After` (docs/llm.md).
        "mcp/command/src/llm/mod.rs",
        // The HTTP accept loop's pause after a failed accept (no descriptors left).
        "mcp/src/mcp/http/accept.rs",
        // bench-snapshot's stated wait after each navigation, the same for every tool.
        "mcp/src/bench/mod.rs",
    ];
    let mut offenders = Vec::new();
    for (path, code) in product_sources() {
        let name = relative(&path);
        if allowed.contains(&name.as_str()) {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            let trimmed = line.trim_start();
            if !trimmed.starts_with("//")
                && (trimmed.contains("sleep(") || trimmed.contains("sleep_until("))
            {
                offenders.push(format!("{name}:{}: {trimmed}", n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "sleeps outside the poll schedule (use wait::Poller or a deadline):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_front_ends_call_no_engine_api() {
    let mut offenders = Vec::new();
    for (path, code) in product_sources() {
        let name = relative(&path);
        if !["mcp/src/mcp/", "mcp/src/cli/", "mcp/src/daemon/"]
            .iter()
            .any(|dir| name.starts_with(dir))
        {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            let trimmed = line.trim_start();
            if !trimmed.starts_with("//") && trimmed.contains("chromate::") {
                offenders.push(format!("{name}:{}: {trimmed}", n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "a front end reaches past the command layer into the engine (see ARCHITECTURE.md):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_engine_library_never_prints_to_stderr() {
    let mut offenders = Vec::new();
    for (path, code) in product_sources() {
        let name = relative(&path);
        if !name.starts_with("engine/src/") {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            let trimmed = line.trim_start();
            if !trimmed.starts_with("//")
                && (trimmed.contains("eprintln!") || trimmed.contains("eprint!("))
            {
                offenders.push(format!("{name}:{}: {trimmed}", n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the engine prints to stderr (log with tracing::warn! instead):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn no_page_script_code_line_starts_like_a_comment() {
    let mut offenders = Vec::new();
    for path in files(&root().join("engine/src/js"), ".js") {
        let text = read(&path);
        let mut in_block = false;
        let mut in_template = false;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            let offender = format!("{}:{}: {trimmed}", relative(&path), n + 1);
            let commentish = trimmed.starts_with("//") || trimmed.starts_with('*');
            if in_template && commentish {
                offenders.push(offender.clone());
            }
            if !in_block && !in_template && trimmed.starts_with('*') {
                offenders.push(offender.clone());
            }
            // A line inside a block comment that does not start with `*` would be kept as code
            // once the comment's first line is dropped.
            if in_block && !trimmed.starts_with('*') {
                offenders.push(offender.clone());
            }
            let whole_line_comment = trimmed.starts_with("/*") || trimmed.starts_with('*');
            // Track block comments and template literals through the line.
            let mut chars = line.chars().peekable();
            let mut in_string: Option<char> = None;
            while let Some(ch) = chars.next() {
                if in_block {
                    if ch == '*' && chars.peek() == Some(&'/') {
                        chars.next();
                        in_block = false;
                    }
                    continue;
                }
                // The minifier cuts `/** … */` out of code lines: no string may hold one.
                if (in_string.is_some() || in_template)
                    && ch == '/'
                    && chars.clone().take(2).eq(['*', '*'])
                {
                    offenders.push(offender.clone());
                }
                if let Some(quote) = in_string {
                    if ch == '\\' {
                        chars.next();
                    } else if ch == quote {
                        in_string = None;
                    }
                    continue;
                }
                if in_template {
                    if ch == '\\' {
                        chars.next();
                    } else if ch == '`' {
                        in_template = false;
                    }
                    continue;
                }
                match ch {
                    '/' if chars.peek() == Some(&'/') => break,
                    '/' if chars.peek() == Some(&'*') => {
                        chars.next();
                        in_block = true;
                    }
                    '"' | '\'' => in_string = Some(ch),
                    '`' => in_template = true,
                    _ => {}
                }
            }
            // A block comment opened on a code line and left open: its next lines would be
            // dropped and its end kept.
            if in_block && !whole_line_comment {
                offenders.push(offender);
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "page-script lines the minifier would drop as comments or keep as code, or strings it \
         would cut:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_domain_features_are_the_protocols_domains() {
    let protocol = read(&root().join("protocol-json/protocol.json"));
    let protocol: serde_json::Value =
        serde_json::from_str(&protocol).unwrap_or_else(|err| panic!("protocol.json: {err}"));
    let mut domains: Vec<String> = protocol["domains"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|domain| domain["domain"].as_str())
        .map(|name| format!("domain-{name}"))
        .collect();
    domains.sort();
    let manifest = read(&root().join("engine/Cargo.toml"));
    let mut features: Vec<String> = manifest
        .lines()
        .filter_map(|line| line.split_once(" = []"))
        .map(|(name, _)| name.trim().to_owned())
        .filter(|name| name.starts_with("domain-"))
        .collect();
    features.sort();
    assert_eq!(features, domains, "engine/Cargo.toml's domain-* features");
    let all = manifest
        .lines()
        .find(|line| line.starts_with("all-domains = ["))
        .unwrap_or_default();
    let mut listed: Vec<String> = all
        .split('"')
        .filter(|part| part.starts_with("domain-"))
        .map(str::to_owned)
        .collect();
    listed.sort();
    assert_eq!(listed, domains, "all-domains lists every domain");
}

#[test]
fn no_file_cites_a_section_number_the_repository_does_not_hold() {
    // The section sign, spelled as an escape so that this file passes its own check.
    let sign = '\u{a7}';
    let mut offenders = Vec::new();
    for extension in [".rs", ".md", ".js", ".mjs", ".sh", ".toml", ".py", ".yml"] {
        for path in files(&root(), extension) {
            if path.components().any(|part| part.as_os_str() == ".git") {
                continue;
            }
            for (number, line) in read(&path).lines().enumerate() {
                if line.contains(sign) {
                    offenders.push(format!("{}:{}: {line}", relative(&path), number + 1));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "cite docs/*.md#anchor instead of a section number:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn no_product_source_file_is_over_40_kib() {
    const LIMIT: u64 = 40 * 1024;
    let root = root();
    let mut offenders = Vec::new();
    for dir in PRODUCT_DIRS {
        for extension in [".rs", ".js"] {
            for path in files(&root.join(dir), extension) {
                let size = fs::metadata(&path).map_or(0, |meta| meta.len());
                if size > LIMIT {
                    offenders.push(format!("{}: {size} bytes", relative(&path)));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "split these by job (40 KiB at most):\n{}",
        offenders.join("\n")
    );
}

/// The engine's floors: each top-level module of `engine/src/` (a `module.rs` or a `module/`
/// folder) and the other top-level modules it may import, bottom floor first. An import is a
/// `crate::module` path or a `use crate::{module, …}` group outside comment lines and unit tests;
/// a name the crate root re-exports (`crate::Page`, `use crate::{Error, Result}`) counts as an
/// import of the module it comes from (`page`, `error`), since it is one.
///
/// Widening a module's line is a design decision, not a formality: it must not close a cycle.
const ENGINE_FLOORS: &[(&str, &[&str])] = &[
    // Leaves: they import no other engine module. `wait` is deadlines and the poller only.
    ("cdp", &[]),
    ("error", &[]),
    ("js", &[]),
    ("rt", &[]),
    ("wait", &[]),
    // Pure vocabulary: the ref table and what a request may do.
    ("refs", &["error", "rt"]),
    ("policy", &["error"]),
    // The connection, and the process that owns the browser at its other end.
    ("transport", &["error", "rt"]),
    ("launch", &["error", "rt", "transport"]),
    // The page floor: a CDP session, then the page on it, then what reads and acts on a page.
    ("session", &["cdp", "error", "transport", "wait"]),
    (
        "page",
        &["cdp", "error", "js", "refs", "rt", "session", "wait"],
    ),
    ("selector", &["error", "page", "refs"]),
    (
        "snapshot",
        &[
            "cdp",
            "error",
            "js",
            "page",
            "refs",
            "rt",
            "selector",
            "transport",
        ],
    ),
    ("input", &["cdp", "error", "page", "rt"]),
    (
        "actions",
        &["cdp", "error", "input", "page", "selector", "wait"],
    ),
    (
        "locators",
        &["actions", "error", "page", "refs", "selector", "snapshot"],
    ),
    // The browser floor: the journal, then what writes into it, then the browser that holds
    // them all, then what adds to a browser.
    ("journal", &["cdp", "page", "policy", "rt", "wait"]),
    ("downloads", &["journal", "cdp", "error", "rt", "session"]),
    (
        "intercept",
        &["journal", "cdp", "error", "policy", "rt", "session"],
    ),
    (
        "browser",
        &[
            "journal",
            "cdp",
            "downloads",
            "error",
            "intercept",
            "js",
            "launch",
            "page",
            "policy",
            "refs",
            "rt",
            "session",
            "transport",
            "wait",
        ],
    ),
    ("storage", &["browser", "cdp", "error", "js", "page", "rt"]),
    (
        "context",
        &[
            "browser",
            "journal",
            "cdp",
            "downloads",
            "error",
            "page",
            "policy",
            "rt",
            "storage",
        ],
    ),
    // Above the page floor: what reads pages.
    ("oracle", &["actions", "cdp", "error", "page", "snapshot"]),
    ("probe", &["cdp", "error", "js", "page"]),
    (
        "a11y",
        &["cdp", "error", "js", "page", "refs", "selector", "snapshot"],
    ),
    ("redact", &["error", "page", "rt", "selector"]),
    (
        "screenshot",
        &["actions", "cdp", "error", "page", "selector", "wait"],
    ),
    (
        "pdf",
        &["cdp", "error", "page", "screenshot", "selector", "wait"],
    ),
    ("screencast", &["cdp", "error", "page", "rt", "screenshot"]),
];

/// The top-level modules of `engine/src/`: its `*.rs` files but `lib.rs`, and its folders.
fn engine_modules() -> BTreeSet<String> {
    let dir = root().join("engine/src");
    let entries = fs::read_dir(&dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    entries
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            let name = path.file_name()?.to_str()?.to_owned();
            if path.is_dir() {
                Some(name)
            } else {
                name.strip_suffix(".rs")
                    .filter(|stem| *stem != "lib")
                    .map(str::to_owned)
            }
        })
        .collect()
}

/// The first path segment of each item of a `use` group's text (`a::b, c::{d, e}, f as g`),
/// split at the commas outside nested braces.
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut item = String::new();
    for ch in group.chars().chain(std::iter::once(',')) {
        match ch {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                let head: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    heads.push(head);
                }
                item.clear();
                continue;
            }
            _ => {}
        }
        item.push(ch);
    }
    heads
}

/// Every `crate::…` head in `code` (one file, unit tests already cut) with its 1-based line:
/// the segment after `crate::`, or each item's first segment of a `crate::{…}` group (which
/// may span lines). Whole-line `//` comments are skipped.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = code
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line
            }
        })
        .collect();
    let text = lines.join("\n");
    let mut found = Vec::new();
    let mut rest = text.as_str();
    let mut offset = 0;
    while let Some(at) = rest.find("crate::") {
        let start = offset + at;
        let line = text[..start].matches('\n').count() + 1;
        let after = &text[start + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1usize;
            let end = group
                .char_indices()
                .find(|(_, ch)| {
                    match ch {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(group.len(), |(index, _)| index);
            found.extend(
                group_heads(&group[..end])
                    .into_iter()
                    .map(|head| (line, head)),
            );
        } else {
            let head: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push((line, head));
        }
        offset = start + "crate::".len();
        rest = &text[offset..];
    }
    found
}

/// The names `engine/src/lib.rs` re-exports (`pub use page::{Page, WaitUntil};`), each with
/// the top-level module it comes from.
fn root_reexports() -> BTreeMap<String, String> {
    let lib = read(&root().join("engine/src/lib.rs"));
    let mut names = BTreeMap::new();
    let mut rest = lib.as_str();
    while let Some(at) = rest.find("pub use ") {
        let after = &rest[at + "pub use ".len()..];
        let end = after.find(';').unwrap_or(after.len());
        let item = &after[..end];
        if let Some((module, path)) = item.split_once("::") {
            let words = path
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|word| !word.is_empty());
            for name in words {
                names.insert(name.to_owned(), module.trim().to_owned());
            }
        }
        rest = &after[end..];
    }
    names
}

/// The engine's import graph: module -> imported module -> the `file:line`s that import it.
fn engine_imports() -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let modules = engine_modules();
    let reexports = root_reexports();
    let mut graph: BTreeMap<String, BTreeMap<String, Vec<String>>> = modules
        .iter()
        .map(|module| (module.clone(), BTreeMap::new()))
        .collect();
    for (path, code) in product_sources() {
        let name = relative(&path);
        let Some(inside) = name.strip_prefix("engine/src/") else {
            continue;
        };
        let first = inside.split('/').next().unwrap_or(inside);
        let module = first.strip_suffix(".rs").unwrap_or(first);
        let Some(imports) = graph.get_mut(module) else {
            continue; // lib.rs: the crate root declares and re-exports the modules.
        };
        for (line, head) in crate_paths(&code) {
            let target = if modules.contains(&head) {
                head
            } else if let Some(from) = reexports.get(&head) {
                from.clone()
            } else {
                continue;
            };
            if target != module && modules.contains(&target) {
                imports
                    .entry(target)
                    .or_default()
                    .push(format!("{name}:{line}"));
            }
        }
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan), each sorted.
fn cycles(graph: &BTreeMap<String, BTreeMap<String, Vec<String>>>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, Vec<String>>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, node: &'a str) {
            let index = self.index.len();
            self.index.insert(node, index);
            self.low.insert(node, index);
            self.stack.push(node);
            let graph = self.graph;
            for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.stack.contains(&next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(member) = self.stack.pop() {
                    component.push(member.to_owned());
                    if member == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !tarjan.index.contains_key(node.as_str()) {
            tarjan.visit(node);
        }
    }
    tarjan.found.sort();
    tarjan.found
}

#[test]
fn engine_modules_import_only_from_their_floors() {
    let floors: BTreeMap<&str, &[&str]> = ENGINE_FLOORS.iter().copied().collect();
    assert_eq!(
        floors.len(),
        ENGINE_FLOORS.len(),
        "ENGINE_FLOORS lists a module twice"
    );
    let modules = engine_modules();
    let mut offenders = Vec::new();
    for module in &modules {
        if !floors.contains_key(module.as_str()) {
            offenders.push(format!(
                "engine/src/{module}: a new engine module has no line in ENGINE_FLOORS \
                 (tests/tidy.rs): say which modules it may import, and so which floor it is on"
            ));
        }
    }
    for (module, allowed) in &floors {
        if !modules.contains(*module) {
            offenders.push(format!(
                "ENGINE_FLOORS lists `{module}`, which engine/src/ no longer has"
            ));
        }
        for import in *allowed {
            if !modules.contains(*import) {
                offenders.push(format!(
                    "ENGINE_FLOORS lets `{module}` import `{import}`, which engine/src/ does not have"
                ));
            }
        }
    }
    for (module, imports) in engine_imports() {
        let allowed = floors.get(module.as_str()).copied().unwrap_or_default();
        for (import, places) in imports {
            if !allowed.contains(&import.as_str()) {
                for place in places {
                    offenders.push(format!(
                        "{place}: `{module}` imports `crate::{import}`, which its floor does not allow"
                    ));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the engine's floors (ENGINE_FLOORS in tests/tidy.rs, ARCHITECTURE.md#floors):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn engine_modules_form_no_cycles() {
    let graph = engine_imports();
    let mut offenders = Vec::new();
    for cycle in cycles(&graph) {
        let mut edges = Vec::new();
        for module in &cycle {
            for (import, places) in &graph[module] {
                if cycle.contains(import) {
                    edges.push(format!("  {module} -> {import} ({})", places[0]));
                }
            }
        }
        offenders.push(format!(
            "cycle among {}:\n{}",
            cycle.join(", "),
            edges.join("\n")
        ));
    }
    assert!(
        offenders.is_empty(),
        "engine modules that import each other (move the shared piece down a floor, or into a \
         leaf such as engine/src/rt.rs; see ARCHITECTURE.md#floors):\n{}",
        offenders.join("\n")
    );
}

/// The names one `pub use …;` statement makes public (`a::B`, `a::{B, c}`, `a::B as C`).
fn used_names(statement: &str) -> Vec<String> {
    let items = match (statement.find('{'), statement.rfind('}')) {
        (Some(open), Some(close)) if open < close => statement[open + 1..close].to_owned(),
        _ => statement.to_owned(),
    };
    items
        .split(',')
        .filter_map(|item| {
            let item = item.trim();
            let name = match item.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => item.rsplit("::").next().unwrap_or(item).trim(),
            };
            (!name.is_empty()).then(|| name.to_owned())
        })
        .collect()
}

/// What one module's text makes public at its own level: its `pub use` statements, the items
/// it declares `pub` at column 0 (items of `impl` blocks are indented), and `pub` types at any
/// indentation (a type declared by a macro, such as `ErrorCode`; no type lives in an `impl`).
fn public_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("\npub use ") {
        let after = &rest[at + "\npub use ".len()..];
        let end = after.find(';').unwrap_or(after.len());
        names.extend(used_names(&after[..end]));
        rest = &after[end..];
    }
    for line in code.lines() {
        let trimmed = line.trim_start();
        let Some(item) = trimmed.strip_prefix("pub ") else {
            continue;
        };
        let item = item.strip_prefix("async ").unwrap_or(item);
        let kinds: &[&str] = if trimmed.len() == line.len() {
            &[
                "fn ", "struct ", "enum ", "const ", "static ", "trait ", "type ",
            ]
        } else {
            &["struct ", "enum ", "trait "]
        };
        for kind in kinds {
            if let Some(tail) = item.strip_prefix(kind) {
                let name: String = tail
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                names.insert(name);
            }
        }
    }
    names
}

/// The engine's public API as a tree: `""` for the crate root, then each public module of
/// `engine/src/lib.rs` (a file module or an inline one) with the names it makes public. The
/// generated `cdp` bindings are left out: ARCHITECTURE.md names the module, not its thousands
/// of types.
fn engine_api() -> BTreeMap<String, BTreeSet<String>> {
    let lib = format!("\n{}", read(&root().join("engine/src/lib.rs")));
    let mut api = BTreeMap::new();
    let mut root_names = BTreeSet::new();
    let mut rest = lib.as_str();
    while let Some(at) = rest.find("\npub mod ") {
        let after = &rest[at + "\npub mod ".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let tail = &after[name.len()..];
        if tail.starts_with(" {") {
            let end = tail.find("\n}").unwrap_or(tail.len());
            let body = tail[..end].replace("\n    pub use ", "\npub use ");
            api.insert(name.clone(), public_names(&body));
            rest = &tail[end..];
        } else {
            if name != "cdp" {
                let src = root().join("engine/src");
                let file = [
                    src.join(format!("{name}.rs")),
                    src.join(&name).join("mod.rs"),
                ]
                .into_iter()
                .find(|path| path.exists())
                .unwrap_or_else(|| panic!("engine/src/lib.rs: no file for `pub mod {name}`"));
                api.insert(name.clone(), public_names(&format!("\n{}", read(&file))));
            }
            rest = tail;
        }
    }
    let top: String = lib
        .split("\npub mod ")
        .map(|part| part.split("\n}").last().unwrap_or(part))
        .collect::<Vec<_>>()
        .join("\n");
    let mut rest = top.as_str();
    while let Some(at) = rest.find("\npub use ") {
        let after = &rest[at + "\npub use ".len()..];
        let end = after.find(';').unwrap_or(after.len());
        root_names.extend(used_names(&after[..end]));
        rest = &after[end..];
    }
    api.insert(String::new(), root_names);
    api
}

/// ARCHITECTURE.md's "API boundary" list: `- the root: …` and ``- `chromate::module` …`` bullets,
/// each with the backticked names it lists (continuation lines included).
fn documented_api() -> BTreeMap<String, BTreeSet<String>> {
    let doc = read(&root().join("ARCHITECTURE.md"));
    let section = doc
        .split_once("\n## API boundary\n")
        .map(|(_, rest)| rest.split("\n## ").next().unwrap_or(rest))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no \"## API boundary\" section"));
    let mut api: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in section.lines() {
        if let Some(bullet) = line.strip_prefix("- ") {
            current = if bullet.starts_with("the root") {
                Some(String::new())
            } else {
                bullet
                    .strip_prefix("`chromate::")
                    .and_then(|tail| tail.split('`').next())
                    .map(str::to_owned)
            };
        } else if !line.starts_with("  ") {
            current = None;
        }
        let Some(module) = &current else {
            continue;
        };
        let names = api.entry(module.clone()).or_default();
        for (index, span) in line.split('`').enumerate() {
            let is_name = index % 2 == 1
                && !span.is_empty()
                && span.chars().all(|c| c.is_alphanumeric() || c == '_');
            if is_name {
                names.insert(span.to_owned());
            }
        }
    }
    api
}

#[test]
fn architecture_lists_exactly_the_engines_public_api() {
    let actual = engine_api();
    let documented = documented_api();
    let mut offenders = Vec::new();
    let modules: BTreeSet<&String> = actual.keys().chain(documented.keys()).collect();
    for module in modules {
        let label = if module.is_empty() {
            "the root".to_owned()
        } else {
            format!("chromate::{module}")
        };
        let empty = BTreeSet::new();
        let have = actual.get(module).unwrap_or(&empty);
        let listed = documented.get(module).unwrap_or(&empty);
        let missing: Vec<_> = have.difference(listed).collect();
        let extra: Vec<_> = listed.difference(have).collect();
        if !missing.is_empty() {
            offenders.push(format!("{label}: exported but not listed: {missing:?}"));
        }
        if !extra.is_empty() {
            offenders.push(format!("{label}: listed but not exported: {extra:?}"));
        }
    }
    assert!(
        offenders.is_empty(),
        "ARCHITECTURE.md#api-boundary must list the engine's public API exactly \
         (engine/src/lib.rs and its public modules):\n{}",
        offenders.join("\n")
    );
}
