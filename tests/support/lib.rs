//! Shared support for the end-to-end tests and the benches.
//!
//! Owns the fixture HTTP server ([`server`]) and the Linux `/proc` helpers that prove no
//! browser process is leaked ([`procs`]), and a Chromium that chromate did not start
//! ([`external`]). It does not drive the browser itself; that is the
//! `chromate` engine's job, reached directly by the tests.

pub mod external;
pub mod procs;
pub mod server;

pub use external::ExternalChromium;
pub use procs::LeakGuard;
pub use server::{FixtureServer, Request, Response};
