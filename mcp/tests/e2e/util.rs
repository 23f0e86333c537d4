//! Helpers shared by the test modules: the `chromate` binary, the fixture server, a closed
//! port, refs out of snapshot text, and a browser of the tests' own for reading the reports
//! the binary writes.

use std::path::PathBuf;

use chromate_tests::FixtureServer;

pub(crate) use chromate_tests::browser::{close_and_check, launch, new_page_at, NAV};

/// The `chromate` binary cargo built for this test target (always from the current sources).
pub(crate) fn chromate_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_chromate"))
}

/// A fixture server on 127.0.0.1 that outlives the test's async runtime (the binary tests
/// drive it from plain threads).
pub(crate) fn fixtures() -> FixtureServer {
    FixtureServer::start_detached()
        .unwrap_or_else(|err| panic!("cannot start the fixture server: {err}"))
}

/// A port on 127.0.0.1 nothing listens on.
pub(crate) fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("local address").port()
}

/// The ref (`e7`) of the first snapshot, observation or diff line containing `needle`.
pub(crate) fn ref_of(text: &str, needle: &str) -> String {
    let Some(line) = text.lines().find(|line| line.contains(needle)) else {
        panic!("no line with {needle:?} in:\n{text}");
    };
    let line = line.trim_start().trim_start_matches(['+', '-', ' ']);
    match line.split_once(':') {
        Some((element_ref, _)) => element_ref.trim().to_owned(),
        None => panic!("no ref on {line:?}"),
    }
}

/// A Python SDK client of `tests/clients/` (`chromate_tests::python`) run to its end on
/// `chromate mcp` over stdio: `CHROMATE_BIN` is this build's binary, `FIXTURE_BASE` the
/// fixture pages' base URL (ending in `/`).
pub(crate) fn python_stdio_client(
    script: &str,
    fixtures: &FixtureServer,
) -> chromate_tests::python::ClientRun {
    chromate_tests::python::run_client(
        script,
        &[
            ("CHROMATE_BIN", chromate_binary().display().to_string()),
            ("FIXTURE_BASE", fixtures.url("")),
        ],
    )
}
