//! End-to-end tests against real headless Chromium. One binary; each test launches its own
//! browser (fresh profile) and ends it, and every test that starts a browser proves by PID that
//! nothing of it is left.
//!
//! Modules:

// A test that cannot set up its fixture fails at once: helpers may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod actions; // auto-waiting element actions, trusted input, fences, uploads
mod audit; // chromate audit on the fixture site: planted defects, clean pages, bounds, isolation, reports, guards
mod bench_snapshot; // `chromate bench-snapshot`: every kind of target, JSON, table, HTML in Chromium, peers skipped or driven over MCP
mod capture; // the logs journal: console, errors, network, cursors, eviction, wait, clear
mod cli; // the `chromate <command>` binary on session daemons: every command, sessions by pid
mod core; // launch, lifecycle by pid, transport, navigation, evaluate, frames, popups, dialogs
mod corpus; // real documentation pages (the Rust toolchain's HTML docs) against Chrome's accessibility tree
mod downloads; // downloads saved by name, numbered on clashes, private, journalled, size-limited
mod evidence; // screenshots (frozen, masked, element, full page) and axe-core audits with refs
mod flows; // `chromate capture` and `chromate flows`: captures, retries, flow files, reports
mod hostile; // pages that hang and browsers that stop: deadlines, stopping scripts, recovery
mod mcp; // the `chromate mcp` binary over stdio: every wired tool, observations, shutdown by pid
mod network; // request interception (mocks, blocks, origin policy) and saved state
mod oracle; // snapshot roles and names against Chrome's own accessibility tree
mod protocol; // generated bindings against the live browser: drift and decoding real traffic
mod selectors; // every selector engine on fixture pages, shadow DOM, malformed selectors
mod snapshot; // golden snapshots, ref identity and staleness, diffs, budgets

mod util;
