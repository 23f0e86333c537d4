//! chromate: a Chrome DevTools Protocol engine.
#![warn(missing_docs)]

pub mod cdp;
