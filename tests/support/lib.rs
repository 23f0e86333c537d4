//! Shared support for the end-to-end tests, the benches and the MCP crate's wire tests.
//!
//! Owns the fixture HTTP server ([`server`]) and the Linux `/proc` helpers that prove no
//! browser process is leaked ([`procs`]), a browser of a test's own closed with that proof
//! ([`browser`]), a Chromium that chromate did not start ([`external`]), the stdio client
//! for `chromate mcp` and its result checks that the MCP crate's wire and end-to-end tests
//! share ([`mcp_client`]), the Python SDK clients' runs ([`python`]), the test model provider
//! ([`provider`]), and the TLS fixture: a test
//! CA and leaf made at test time, and TLS over any accept loop ([`tls`]); Browserless, a real
//! browser pool ([`pool`]); nginx in front of several `chromate mcp --http` servers, sticky by
//! session ([`nginx`]); and where the
//! real documentation trees of the corpus tests are ([`docs`]). It does not drive pages
//! itself; that is the `chromate` engine's job, reached directly by the tests.

pub mod browser;
pub mod docs;
pub mod external;
pub mod mcp_client;
pub mod nginx;
pub mod pool;
pub mod procs;
pub mod provider;
pub mod python;
pub mod server;
pub mod tls;

pub use external::ExternalChromium;
pub use mcp_client::{McpClient, McpCommand};
pub use procs::LeakGuard;
pub use server::{FixtureServer, Request, Response};
