//! cdp-gen.
