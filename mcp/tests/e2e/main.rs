//! End-to-end tests of the `chromate` binary against real headless Chromium: the MCP server
//! over stdio, the session commands, captures and flows, audits. One test binary (each file
//! directly in `tests/` would be its own binary to link); it runs `CARGO_BIN_EXE_chromate`,
//! which cargo builds fresh for it, so an edit to `src/` is always what these tests run.
//!
//! Every test starts its own `chromate` processes and proves by PID that none of them, and
//! none of their browsers, is left. The engine itself is tested in `tests/e2e/` (crate
//! `chromate-tests`); the browserless protocol tests are `tests/wire/`.
//!
//! Modules:

// A test that cannot set up its fixture fails at once: helpers may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod audit; // chromate audit on the fixture site: planted defects, clean pages, bounds, isolation, reports, guards
mod audit_corpus; // chromate audit on real documentation pages (Rust's, Python's): no false high or critical finding
mod audit_gate; // chromate audit as a CI gate: ignore file, baseline, budgets, login state, URL lists, no daemon left
mod bench_snapshot; // `chromate bench-snapshot`: every kind of target, JSON, table, HTML in Chromium, peers skipped or driven over MCP
mod cli; // the `chromate <command>` binary on session daemons: every command, sessions by pid
mod flows; // `chromate capture` and `chromate flows`: captures, retries, flow files, reports
mod llm; // the model-backed tools against the test provider on loopback: describe (CLI, MCP), flows' descriptions
mod mcp;
mod qa_flow; // `chromate qa-flow` and qa_execute_user_flow: a scripted model drives the fixture shop (three wire formats, a failing coupon, a hostile page, JUnit) // the `chromate mcp` binary over stdio: every wired tool, observations, shutdown by pid

mod util;
