//! Shared support for the end-to-end tests, the benches and the MCP crate's wire tests.
//!
//! Owns the fixture HTTP server ([`server`]) and the Linux `/proc` helpers that prove no
//! browser process is leaked ([`procs`]), a Chromium that chromate did not start
//! ([`external`]), and the stdio client for `chromate mcp` that the MCP crate's wire tests
//! share with the end-to-end tests ([`mcp_client`]), and the TLS fixture: a test CA and leaf
//! made at test time, and TLS over any accept loop ([`tls`]). It does not drive the browser itself;
//! that is the `chromate` engine's job, reached directly by the tests.

pub mod external;
pub mod mcp_client;
pub mod procs;
pub mod server;
pub mod tls;

pub use external::ExternalChromium;
pub use mcp_client::{McpClient, McpCommand};
pub use procs::LeakGuard;
pub use server::{FixtureServer, Request, Response};
