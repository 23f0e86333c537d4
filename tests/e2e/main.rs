//! End-to-end tests against real headless Chromium. One binary. A test that only reads pages
//! (selectors, the accessibility oracle, evidence) takes a fresh browser context of the one
//! browser the binary shares ([`chromate_tests::browser::Fixture`]) and proves its tabs gone
//! when it ends; the shared browser is closed at exit and proved gone by PID, with no other
//! Chromium of the binary left. Every other test launches its own browser (fresh profile) —
//! its pid, journal, refs, focus or lifecycle are what it tests — and proves by PID that
//! nothing of it is left. These tests drive the engine's API; the tests of the `chromate`
//! binary (MCP server, session commands, flows, audits) are the MCP crate's
//! (`mcp/tests/e2e/`), which cargo builds the binary for.
//!
//! Modules:

// A test that cannot set up its fixture fails at once: helpers may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod actions; // auto-waiting element actions, trusted input, fences, uploads
mod capture; // the logs journal: console, errors, network, cursors, eviction, wait, clear
mod core; // launch, lifecycle by pid, transport, navigation, evaluate, frames, popups, dialogs
mod corpus; // real documentation pages (the Rust toolchain's HTML docs) against Chrome's accessibility tree
mod downloads; // downloads saved by name, numbered on clashes, private, journalled, size-limited
mod evidence; // screenshots (frozen, masked, element, full page) and axe-core audits with refs
mod hostile; // pages that hang and browsers that stop: deadlines, stopping scripts, recovery
mod network; // request interception (mocks, blocks, origin policy) and saved state
mod oracle; // snapshot roles and names against Chrome's own accessibility tree
mod protocol; // generated bindings against the live browser: drift and decoding real traffic
mod selectors; // every selector engine on fixture pages, shadow DOM, malformed selectors
mod snapshot; // golden snapshots, ref identity and staleness, diffs, budgets

mod util;
