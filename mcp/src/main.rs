//! The `chromate` binary.
fn main() {}
