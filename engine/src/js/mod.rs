//! Page JavaScript: every script chromate runs inside pages, one file per module.
//!
//! Each `*.js` file is a single function expression `(function (C) { …; return {…}; })` that
//! receives the shared namespace object `C` and returns its module; [`install_source`] chains
//! them into one installer that defines a frozen, non-enumerable `__chromate` global. The
//! installer is registered with `Page.addScriptToEvaluateOnNewDocument({source, worldName:
//! "chromate", runImmediately: true})` (and evaluated in worlds made by
//! `Page.createIsolatedWorld`), so it only ever runs in chromate's isolated world: page scripts
//! can neither see nor tamper with it, and it keeps its state (the ref table, last rects) there.
//!
//! Calls go through `Runtime.callFunctionOn` in that world's execution context, e.g.
//! `functionDeclaration: "function (a) { return __chromate.snapshot.take(a) }"`,
//! `arguments: [{value: args}]`, `returnByValue: true`, `awaitPromise: true`. Each public JS
//! function carries a JSDoc line with its argument and result shapes; the Rust side mirrors them.
//!
//! Conventions the Rust side relies on:
//!
//! - Element-returning helpers (`refs.lookup(n).element`, `actionability.element`,
//!   `actionability.fileInput`, `snapshot.pausedFrame`) are for `returnByValue: false` calls that
//!   need an objectId; everything else returns plain JSON.
//! - Failures are values, never throws: `{status: "invalid-selector" | "stale-ref" | "no-match" |
//!   "not-visible" | "not-enabled" | "not-editable" | "obscured" | "unstable" | …}` from
//!   `actionability`/`locators`, `{ok: false, error: …}` from `selector` and `snapshot`.
//! - Cross-origin frames: `snapshot.take` pauses after the iframe line and returns `paused:
//!   {token, frame, depth}`; Rust resolves the frame with `snapshot.pausedFrame(token)` +
//!   `DOM.describeNode` (its `frameId`, which is the target id of an out-of-process frame), walks
//!   it in that frame's own world with the `nextRef` and `budgets` left, adds `depth` to its
//!   lines, and continues with `snapshot.resume({token, nextRef, budgets, truncated})`.
//! - Results of a hundred records or more travel as JSON text (`snapshot.takeJson`,
//!   `snapshot.resumeJson`): the protocol passes a string through, while an object returned by
//!   value is converted property by property, which on the full view of a 10,000-element page
//!   costs more than a third of the snapshot (`benches/README.md`).
//! - Refs minted while walking a same-origin frame in place live in the table of the world that
//!   walked it (the parent's); their action points come back in top-viewport coordinates.
//!
//! This module owns the scripts only. It does not decide when to call them, retry them or render
//! their results: that is the job of `selector/`, `snapshot/`, `actions/` and `wait/`.
//!
//! No JS string literal lives anywhere else in Rust: callers reference these functions by name.

/// `dom`: flat-tree traversal, element text (docs/mcp.md#selectors), the element-state predicates (docs/mcp.md#actionability: visible, enabled,
/// editable, fillable), snapshot visibility (docs/mcp.md#snapshots), implicit ARIA roles (docs/mcp.md#snapshots) and accessible
/// names (docs/mcp.md#snapshots). Shared by `role=` selectors and snapshots, so they agree by construction.
pub(crate) const DOM: &str = include_str!("dom.js");

/// `refs`: the ref table of a document (`assign`, `refOf`, `lookup`, `status`, `parse`), held in
/// the isolated world only (docs/mcp.md#refs). Rust owns the session-wide counter and passes `nextRef` in.
pub(crate) const REFS: &str = include_str!("refs.js");

/// `selector`: the selector grammar (docs/mcp.md#selectors; `parse` → canonical form or `invalid selector`) and every engine
/// (`resolve`, `queryAll`, `query`), matches in flat-tree order.
pub(crate) const SELECTOR: &str = include_str!("selector.js");

/// `snapshot`: the snapshot walk (docs/mcp.md#snapshots; `take`), returning structured line records, plus `frameOwner` for
/// cross-origin frames and a reference text renderer (`render`, `renderLine`).
pub(crate) const SNAPSHOT: &str = include_str!("snapshot.js");

/// `actionability`: one-call `check` (docs/mcp.md#actionability: pick, states, scroll, stability, action point,
/// hit test) and the element helpers behind fill, element, upload, find, read and exists.
pub(crate) const ACTIONABILITY: &str = include_str!("actionability.js");

/// `locators`: durable selector proposals for browser_locators (`suggest`, docs/tools.md#browser_locators--durable-selectors).
pub(crate) const LOCATORS: &str = include_str!("locators.js");

/// `screenshot`: the element box to clip to (`rect`), and `prepare`/`restore` around a capture
/// (mask boxes; animations, transitions and the caret frozen).
pub(crate) const SCREENSHOT: &str = include_str!("screenshot.js");

/// `a11y`: runs axe-core (evaluated into the isolated world from [`AXE`] or the file `a11y.rs`
/// finds) and gives each reported node its ref (`run`, `assignRefs`).
pub(crate) const A11Y: &str = include_str!("a11y.js");

/// axe-core's `axe.min.js`, built in when the pinned npm package (`engine/axe/`) was installed
/// at build time (`build.rs` sets `cfg(chromate_axe)`); `a11y.rs` evaluates it into the isolated
/// world unless `CHROMATE_AXE_PATH` names another file. Not one of [`MODULES`]: it is large and
/// only the audit needs it.
#[cfg(chromate_axe)]
pub(crate) const AXE: Option<&str> = Some(include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/axe/node_modules/axe-core/axe.min.js"
)));

/// No axe-core in this build: `a11y.rs` says how to get it.
#[cfg(not(chromate_axe))]
pub(crate) const AXE: Option<&str> = None;

/// `redact`: whether text aimed at a field is a secret (docs/mcp.md#secrets; `secretTarget`), for traces.
pub(crate) const REDACT: &str = include_str!("redact.js");

/// `settle`: counts the document's DOM mutations (`watch`) for the quiet period after `load`.
pub(crate) const SETTLE: &str = include_str!("settle.js");

/// `pending`: the page's short timers and animation frames not yet run, for the wait after
/// `load`. Not an installer module: the one whole script registered in the page's main world
/// (where timers live) from the start of every document; read with [`PENDING_READ`].
pub(crate) const PENDING: &str = include_str!("pending.js");

/// Reads what [`PENDING`] counts in the main world: `{pending, sinceMs}`, or `null` in a
/// document it does not run in.
pub(crate) const PENDING_READ: &str =
    "(globalThis[Symbol.for(\"chromate.pending\")] || (() => null))()";

/// The compile hint the installer starts with: V8 compiles every function of the script at once
/// instead of each on its first call, and a renderer compiles the script once for all its
/// documents. V8 follows it when the browser runs with `--js-flags=--compile-hints-magic`, which
/// chromate's launches pass (`launch::browser_args`); elsewhere it is a comment.
const COMPILE_WHOLE: &str = "//# allFunctionsCalledOnLoad\n";

/// Modules in installation order (dependencies first), as `(namespace key, source)`.
const MODULES: [(&str, &str); 10] = [
    ("dom", DOM),
    ("refs", REFS),
    ("selector", SELECTOR),
    ("snapshot", SNAPSHOT),
    ("actionability", ACTIONABILITY),
    ("locators", LOCATORS),
    ("screenshot", SCREENSHOT),
    ("a11y", A11Y),
    ("redact", REDACT),
    ("settle", SETTLE),
];

/// The installer script: defines `globalThis.__chromate` (frozen, non-enumerable) holding every
/// module, unless it already exists in this world. It starts with V8's compile hint
/// [`COMPILE_WHOLE`] and then `(() => {` (a unit test checks the shape and the module order).
pub(crate) fn install_source() -> String {
    let capacity = MODULES.iter().map(|(_, src)| src.len() + 24).sum::<usize>() + 200;
    let mut res = String::with_capacity(capacity);
    res.push_str(COMPILE_WHOLE);
    res.push_str("(() => {\nif (globalThis.__chromate) return;\nconst C = {};\n");
    for (key, src) in MODULES {
        res.push_str("C.");
        res.push_str(key);
        res.push_str(" = (");
        push_lean(&mut res, src);
        res.push_str(")(C);\n");
    }
    res.push_str(
        "Object.defineProperty(globalThis, \"__chromate\", {value: Object.freeze(C)});\n})()",
    );
    res
}

/// Appends `src` without indentation, blank lines, whole-line comments and the JSDoc casts
/// inside code lines: the installer runs in every document, so it stays small, and the types
/// the TypeScript compiler reads (`/** @type {Element} */ (el)`) cost the page nothing. A
/// whole-line comment is a line whose first non-blank characters are `//`, `/*` or `*`; the
/// modules are written so that no code line starts that way, and no string or regular
/// expression in them holds `/**`.
fn push_lean(res: &mut String, src: &str) {
    for line in src.lines() {
        let mut line = line.trim();
        if line.is_empty()
            || line.starts_with("//")
            || line.starts_with("/*")
            || line.starts_with('*')
        {
            continue;
        }
        while let Some(start) = line.find("/**") {
            let Some(len) = line[start..].find("*/") else {
                break;
            };
            res.push_str(&line[..start]);
            let rest = &line[start + len + 2..];
            line = rest.strip_prefix(' ').unwrap_or(rest);
        }
        res.push_str(line);
        res.push('\n');
    }
}

/// `storage`: reads or seeds `localStorage`/`sessionStorage` for saved state (`{op:"read"}`,
/// `{op:"seed", origin, local, session}`). Not an installer module: a function expression taking
/// its argument, run with `Runtime.callFunctionOn` in chromate's world, or before a document's
/// own scripts through [`storage_seed_script`].
pub(crate) const STORAGE: &str = include_str!("storage.js");

/// `audit`: an audit's page probes (`inspect`: vitals, links, broken images, mixed content,
/// horizontal overflow and the controls' layout checks; `checkLinks`: HEAD-then-GET checks of
/// same-origin URLs). Not an installer module: a function expression `(C, a)` run through
/// [`audit_call`] with the installed namespace, so documents that are never audited do not
/// carry it.
pub(crate) const AUDIT: &str = include_str!("audit.js");

/// `vitals`: the Web Vitals recorder (LCP and its element, layout shifts, long tasks, FCP).
/// Not an installer module: a whole script registered as a new-document script in chromate's
/// world of an audited page only, before it loads.
pub(crate) const VITALS: &str = include_str!("vitals.js");

/// The declaration that runs [`AUDIT`] with `__chromate` and one argument.
pub(crate) fn audit_call() -> String {
    format!("function (a) {{ return ({AUDIT})(__chromate, a) }}")
}

/// `json`: an evaluation result as JSON text, converted as `JSON.stringify` does (`toJSON`
/// honoured: a `Date` is its ISO string): `{json}` or `{unserialisable: "circular" | "bigint"}`.
/// Not an installer module: a function expression run with `Runtime.callFunctionOn` on the
/// result object in the main world, where the caller's script ran, with the value as `this`.
pub(crate) const JSON_VALUE: &str = include_str!("json.js");

/// A new-document script that seeds storage: [`STORAGE`] applied to `arg`
/// (`{op:"seed", origin, local, session}`).
pub(crate) fn storage_seed_script(arg: &serde_json::Value) -> String {
    // The argument goes in as JSON text (`storage.js` says why), a JS string literal here.
    let text = serde_json::Value::String(arg.to_string());
    format!("({STORAGE})({text})")
}

/// The declaration that calls `__chromate.<function>` with every argument passed (`function`
/// is a module path such as `actionability.click`, never page data).
pub(crate) fn call_spread(function: &str) -> String {
    format!("function (...a) {{ return __chromate.{function}(...a) }}")
}

/// The declaration that calls `__chromate.<function>` with one argument.
pub(crate) fn call_one(function: &str) -> String {
    format!("function (a) {{ return __chromate.{function}(a) }}")
}

/// The document title, evaluated in the page's main world.
pub(crate) const DOCUMENT_TITLE: &str = "document.title";

/// The cheapest expression a renderer can answer: a probe of whether its main thread runs.
pub(crate) const PROBE: &str = "0";

/// A caller's function body (`const a = 1; return a`) as an expression that runs it: an async
/// arrow called at once, so `await` works inside and its promise is what `Runtime.evaluate`
/// awaits.
pub(crate) fn function_body_expression(body: &str) -> String {
    format!("(async () => {{\n{body}\n}})()")
}

/// The quoted strings `script` writes after `key` (`status: "` → every `status: "…"` literal),
/// sorted and without repeats: what a unit test compares with the Rust enum that decodes the
/// script's answers, so the two sides cannot drift apart unnoticed.
#[cfg(test)]
pub(crate) fn literals_after(script: &str, key: &str) -> Vec<String> {
    let mut found: Vec<String> = script
        .match_indices(key)
        .filter_map(|(at, key)| {
            let rest = &script[at + key.len()..];
            rest.find('"').map(|end| rest[..end].to_owned())
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installer_lists_every_module_in_dependency_order() {
        let source = install_source();
        let positions: Vec<usize> = [
            "C.dom =",
            "C.refs =",
            "C.selector =",
            "C.snapshot =",
            "C.actionability =",
            "C.locators =",
        ]
        .iter()
        .map(|needle| source.find(needle).expect(needle))
        .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
        assert!(source.ends_with("})()"));
    }

    #[test]
    fn installer_drops_comments_and_indentation() {
        let source = install_source();
        assert!(
            !source.contains("/**"),
            "a JSDoc comment is left in the installer"
        );
        assert!(source.contains("return !!((el).isContentEditable);"));
        // The compile hint is the one comment left, on the first line.
        let code = source
            .strip_prefix(COMPILE_WHOLE)
            .expect("the compile hint");
        assert!(!code
            .lines()
            .any(|line| line.starts_with(' ') || line.starts_with("//") || line.starts_with('*')));
        assert!(
            source.len()
                < DOM.len()
                    + REFS.len()
                    + SELECTOR.len()
                    + SNAPSHOT.len()
                    + ACTIONABILITY.len()
                    + LOCATORS.len()
                    + SCREENSHOT.len()
                    + A11Y.len()
                    + REDACT.len()
        );
    }
}
