//! Benchmarks live in `src/bin/`; this library holds what several of them share.

/// The repetition count from the first command-line argument: `default` when it is absent or
/// not a number, and at least 1.
pub fn runs_arg(default: usize) -> usize {
    std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(default)
        .max(1)
}

/// The median of `samples` (the upper one of an even count), sorting them in place.
///
/// # Panics
/// If `samples` is empty: every benchmark takes at least one sample.
pub fn median(samples: &mut [std::time::Duration]) -> std::time::Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// [`median`] in milliseconds.
pub fn median_ms(samples: &mut [std::time::Duration]) -> f64 {
    median(samples).as_secs_f64() * 1e3
}

/// The fixture server of `tests/fixtures/pages/` on its own thread, as a chromate error if it
/// cannot start (benches that drive the engine return `chromate::Result`).
pub fn fixture_server() -> chromate::Result<chromate_tests::FixtureServer> {
    chromate_tests::FixtureServer::start_detached()
        .map_err(|e| chromate::Error::invalid_argument(format!("start the fixture server: {e}")))
}

/// The `chromate` binary next to this bench (`target/<profile>/chromate`), or what to build.
pub fn chromate_binary() -> Result<std::path::PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let binary = exe.with_file_name("chromate");
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(format!(
            "{} is missing: cargo build --release -p chromate-mcp",
            binary.display()
        ))
    }
}
