//! Shared support for the end-to-end tests and the benches.
