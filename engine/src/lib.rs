//! chromate: a Chrome DevTools Protocol engine.
