//! The MCP front end: JSON-RPC over stdio in both MCP eras, resources, and each
//! `tools/call` handed to the dispatcher (`chromate_command`), its [`Reply`] rendered as a
//! `tools/call` result.
//!
//! Owns: framing and JSON-RPC shapes (`jsonrpc`), the server loop with its queue,
//! cancellation and progress (`server`), the eras (`era`) and artifacts as resources
//! (`resources`). Does not own a tool's behaviour: nothing here knows what a click is.
//!
//! [`Reply`]: chromate_command::Reply

pub(crate) mod era;
pub(crate) mod http;
pub(crate) mod jsonrpc;
pub(crate) mod resources;
pub(crate) mod server;
