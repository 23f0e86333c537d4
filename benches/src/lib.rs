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
