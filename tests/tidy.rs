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
//! - The page-script minifier drops whole-line comments, so no code line of a page script may
//!   start with `//` or `*` (inside a template literal, say).
//! - The engine's `domain-*` features are exactly the protocol's domains, and `all-domains`
//!   lists them all.
//! - No product source file is over 40 KiB: a file that grows past it holds more than one job.
//! - Citations resolve inside the repository: no file cites a numbered section sign (the
//!   numbering of a specification the repository does not hold); code and docs link to
//!   `docs/*.md#anchor` instead.
//! - Thin front ends: the binary's MCP server, command line and session daemon call no engine
//!   API (`chromate::`): browser semantics live in the command layer (`mcp/command/`). That
//!   the command layer names no front end, Cargo checks: it is a crate the binary depends on.

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
/// The product crates' source folders: the engine, the binary's command layer, its flows and
/// its front ends, and the generator.
const PRODUCT_DIRS: [&str; 5] = [
    "engine/src",
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
        // The HTTP accept loop's pause after a failed accept (no descriptors left).
        "mcp/src/mcp/http/accept.rs",
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
            let commentish = trimmed.starts_with("//") || trimmed.starts_with('*');
            if in_template && commentish {
                offenders.push(format!("{}:{}: {trimmed}", relative(&path), n + 1));
            }
            if !in_block && !in_template && trimmed.starts_with('*') {
                offenders.push(format!("{}:{}: {trimmed}", relative(&path), n + 1));
            }
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
        }
    }
    assert!(
        offenders.is_empty(),
        "page-script lines the minifier would drop as comments:\n{}",
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
