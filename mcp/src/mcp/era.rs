//! The two MCP eras served by one process (`docs/mcp.md#protocol-eras`, `docs/mcp-eras.md`).
//!
//! A *legacy* client opens with `initialize` and sends requests without
//! protocol metadata; a *modern* client (revision `2026-07-28`) sends no
//! `initialize` and names its protocol version and client capabilities in
//! every request's `params._meta`. This module decides, request by request,
//! which era a request belongs to ([`Era::of_request`]), answers the
//! modern-only method `server/discover` ([`discover_result`]), refuses the
//! methods that revision removed, and adds what that revision requires of
//! every result ([`Era::decorate`]): `resultType`, the server's identity in
//! `_meta`, and cache hints on the cacheable results.
//!
//! Modern requests are served statelessly: nothing here remembers an earlier
//! request, so the era, version and capabilities of one request never leak
//! into the next. Browser state is another matter: one process is one
//! browser session in both eras (docs/mcp.md#run).
//!
//! Does not own: the method table and tool results (`server.rs`), JSON-RPC
//! shapes (`jsonrpc.rs`). Tool behaviour, tool results and tool errors are
//! the same in both eras; only the envelope fields above differ.

use serde_json::{json, Map, Value};

use crate::mcp::jsonrpc::{self, RpcError};
use crate::mcp::server::{INSTRUCTIONS, PROTOCOL_VERSIONS};

/// The modern revisions chromate serves through per-request metadata.
pub(crate) const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// `_meta` key naming the request's protocol version (modern era; required).
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the request's client capabilities (modern era; required).
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// Result `_meta` key naming the server (modern era).
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The revision's `UnsupportedProtocolVersionError` code.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// How long a result that cannot change while this binary runs may be
/// considered fresh: an hour, as the revision's own discovery example.
const STATIC_TTL_MS: u64 = 3_600_000;

/// Methods the 2026-07-28 revision removed that the legacy table answers: a
/// modern request for one of them is an unknown method, as for any other name
/// that revision does not define. (`initialize` never reaches here: it always
/// selects the legacy era.)
const REMOVED_IN_MODERN: [&str; 2] = ["ping", "logging/setLevel"];

/// The era one request is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// No protocol metadata (or a legacy version named in it): the
    /// `initialize` era, results as before.
    Legacy,
    /// `params._meta` names a modern revision and the client's capabilities.
    Modern,
}

impl Era {
    /// Classifies a request by its `params._meta`.
    ///
    /// `initialize` is always legacy: it is the legacy handshake, whatever it
    /// carries. A request naming neither modern key is legacy, except
    /// `server/discover`, which exists only in the modern era and so needs
    /// them. A request naming a version chromate speaks only through
    /// `initialize` is served as legacy; one naming a version chromate does not
    /// speak at all gets the unsupported-version error with the supported
    /// versions in `data`. A modern request without client capabilities is
    /// malformed (-32602), as the revision requires.
    pub(crate) fn of_request(id: &Value, method: &str, params: &Value) -> Result<Era, RpcError> {
        if method == "initialize" {
            return Ok(Era::Legacy);
        }
        let meta = params.get("_meta").and_then(Value::as_object);
        let names_modern_keys = meta.is_some_and(|meta| {
            meta.contains_key(PROTOCOL_VERSION_KEY) || meta.contains_key(CLIENT_CAPABILITIES_KEY)
        });
        if !names_modern_keys && method != "server/discover" {
            return Ok(Era::Legacy);
        }
        let invalid_params =
            |message: String| RpcError::new(id.clone(), jsonrpc::INVALID_PARAMS, message);
        let empty = Map::new();
        let meta = meta.unwrap_or(&empty);
        let version = match meta.get(PROTOCOL_VERSION_KEY) {
            None | Some(Value::Null) => {
                return Err(invalid_params(format!(
                    "invalid params: {method} needs _meta \"{PROTOCOL_VERSION_KEY}\""
                )))
            }
            Some(Value::String(version)) => version.as_str(),
            Some(_) => {
                return Err(invalid_params(format!(
                    "invalid params: _meta \"{PROTOCOL_VERSION_KEY}\" must be a string"
                )))
            }
        };
        if PROTOCOL_VERSIONS.contains(&version) {
            return Ok(Era::Legacy);
        }
        if !MODERN_VERSIONS.contains(&version) {
            return Err(RpcError::new(
                id.clone(),
                UNSUPPORTED_PROTOCOL_VERSION,
                format!("unsupported protocol version: {version}"),
            )
            .with_data(json!({ "supported": supported_versions(), "requested": version })));
        }
        if !meta
            .get(CLIENT_CAPABILITIES_KEY)
            .is_some_and(Value::is_object)
        {
            return Err(invalid_params(format!(
                "invalid params: {method} needs _meta \"{CLIENT_CAPABILITIES_KEY}\" (an object)"
            )));
        }
        Ok(Era::Modern)
    }

    /// Answers what the era itself answers: `server/discover` in the modern
    /// era, and an unknown method for the methods that era removed. `Ok(None)`
    /// = the ordinary method table answers.
    pub(crate) fn answer(self, id: &Value, method: &str) -> Result<Option<Value>, RpcError> {
        match (self, method) {
            (Era::Modern, "server/discover") => Ok(Some(discover_result())),
            (Era::Modern, removed) if REMOVED_IN_MODERN.contains(&removed) => Err(RpcError::new(
                id.clone(),
                jsonrpc::METHOD_NOT_FOUND,
                format!("method not found: {removed}"),
            )),
            _ => Ok(None),
        }
    }

    /// Adds the modern era's result fields to the result of `method`:
    /// `resultType`, the server's identity in `_meta`, and, on cacheable
    /// results, `ttlMs` and `cacheScope`. Legacy results are returned as they
    /// are.
    pub(crate) fn decorate(self, method: &str, mut result: Value) -> Value {
        if self == Era::Legacy {
            return result;
        }
        let Some(fields) = result.as_object_mut() else {
            return result;
        };
        fields
            .entry("resultType")
            .or_insert_with(|| json!("complete"));
        let meta = fields.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(SERVER_INFO_KEY.to_owned(), server_info());
        }
        if let Some((ttl_ms, scope)) = cache_hint(method) {
            fields.insert("ttlMs".to_owned(), json!(ttl_ms));
            fields.insert("cacheScope".to_owned(), json!(scope));
        }
        result
    }
}

/// Every version chromate speaks, newest first: the modern revisions, then
/// the legacy ones negotiated by `initialize`.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    MODERN_VERSIONS
        .iter()
        .chain(PROTOCOL_VERSIONS.iter().rev())
        .copied()
        .collect()
}

/// The server's capabilities, the same in both eras.
pub(crate) fn server_capabilities() -> Value {
    json!({ "tools": {}, "resources": {} })
}

/// The server's name and version (`serverInfo` / `_meta` serverInfo).
pub(crate) fn server_info() -> Value {
    json!({ "name": "chromate", "version": env!("CARGO_PKG_VERSION") })
}

/// The `server/discover` result before decoration.
pub(crate) fn discover_result() -> Value {
    json!({
        "supportedVersions": supported_versions(),
        "capabilities": server_capabilities(),
        "instructions": INSTRUCTIONS,
    })
}

/// The cache hints of the revision's cacheable results: `(ttlMs, cacheScope)`.
///
/// Discovery and templates are fixed by the binary, so they are
/// fresh for an hour and public. The tool list is fixed for the process but
/// its schema defaults come from this process's environment
/// (`CHROMATE_AGENT_TIMEOUT`), so it is private. Resources are the session's
/// artifacts, which change with every call and hold page content: stale at
/// once, private.
fn cache_hint(method: &str) -> Option<(u64, &'static str)> {
    match method {
        "server/discover" | "resources/templates/list" => Some((STATIC_TTL_MS, "public")),
        "tools/list" => Some((STATIC_TTL_MS, "private")),
        "resources/list" | "resources/read" => Some((0, "private")),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
