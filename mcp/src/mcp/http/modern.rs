//! The 2026-07-28 era over HTTP: which requests are modern, and the checks of their body
//! (`_meta`: protocol version, client info and capabilities) and of their headers, which must
//! agree with the body (`docs/mcp-eras.md`).

use super::*;

/// The revision's `HeaderMismatch` error code.
const HEADER_MISMATCH: i64 = -32020;

/// Whether the message is a 2026-07-28 request (its `_meta` names a modern revision).
pub(super) fn is_modern(incoming: &Incoming) -> bool {
    let Incoming::Request { params, .. } = incoming else {
        return false;
    };
    params
        .as_ref()
        .and_then(|params| params.pointer("/_meta"))
        .and_then(|meta| meta.get(PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str)
        .is_some_and(|version| MODERN_VERSIONS.contains(&version))
}

/// A request of the 2026-07-28 revision (by its body or by its `MCP-Protocol-Version`
/// header) whose `_meta` is malformed is refused at once with 400: missing or partial
/// metadata, or capabilities that are not an object, with -32602; a body naming another
/// version than the header with -32020; a version chromate does not speak with -32022.
pub(super) fn check_modern_body(
    headers: &HeaderMap,
    incoming: &Incoming,
    modern: bool,
) -> Result<(), RpcError> {
    let Incoming::Request { id, method, params } = incoming else {
        return Ok(());
    };
    let header_version = header(headers, "mcp-protocol-version");
    let header_modern = header_version.is_some_and(|version| MODERN_VERSIONS.contains(&version));
    if (!modern && !header_modern) || method == "initialize" {
        return Ok(());
    }
    let params = params.clone().unwrap_or(Value::Null);
    if era::Era::of_request(id, method, &params)? == era::Era::Modern || !header_modern {
        return Ok(());
    }
    let body_version = params
        .pointer("/_meta")
        .and_then(|meta| meta.get(PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str);
    Err(match body_version {
        Some(body) => RpcError::new(
            id.clone(),
            HEADER_MISMATCH,
            format!(
                "Header mismatch: MCP-Protocol-Version header value '{}' does not match body value '{body}'",
                header_version.unwrap_or_default()
            ),
        ),
        None => RpcError::new(
            id.clone(),
            jsonrpc::INVALID_PARAMS,
            format!(
                "invalid params: {method} needs _meta \"{PROTOCOL_VERSION_KEY}\" and \"{}\" (the MCP-Protocol-Version header names {})",
                era::CLIENT_CAPABILITIES_KEY,
                header_version.unwrap_or_default()
            ),
        ),
    })
}

/// The 2026-07-28 request headers: `MCP-Protocol-Version`, `Mcp-Method` and (for the methods
/// that name something) `Mcp-Name` must be present and match the body.
pub(super) fn check_modern_headers(
    headers: &HeaderMap,
    incoming: &Incoming,
) -> Result<(), RpcError> {
    let Incoming::Request { id, method, params } = incoming else {
        return Ok(());
    };
    let mismatch = |message: String| RpcError::new(id.clone(), HEADER_MISMATCH, message);
    let body_version = params
        .as_ref()
        .and_then(|params| params.pointer("/_meta"))
        .and_then(|meta| meta.get(PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str)
        .unwrap_or_default();
    match header(headers, "mcp-protocol-version") {
        None => return Err(mismatch("Header mismatch: MCP-Protocol-Version header is missing".to_owned())),
        Some(version) if version != body_version => {
            return Err(mismatch(format!(
                "Header mismatch: MCP-Protocol-Version header value '{version}' does not match body value '{body_version}'"
            )))
        }
        Some(_) => {}
    }
    match header(headers, "mcp-method") {
        None => return Err(mismatch("Header mismatch: Mcp-Method header is missing".to_owned())),
        Some(named) if named != method => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Method header value '{named}' does not match body value '{method}'"
            )))
        }
        Some(_) => {}
    }
    let source = match method.as_str() {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = source {
        let body_name = params
            .as_ref()
            .and_then(|params| params.get(field))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let named = match header(headers, "mcp-name") {
            None => {
                return Err(mismatch(
                    "Header mismatch: Mcp-Name header is missing".to_owned(),
                ))
            }
            Some(named) => decode_header_value(named).ok_or_else(|| {
                mismatch("Header mismatch: Mcp-Name header is not valid Base64".to_owned())
            })?,
        };
        if named != body_name {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Name header value '{named}' does not match body value '{body_name}'"
            )));
        }
    }
    Ok(())
}

/// A header value as sent, or decoded from the revision's `=?base64?…?=` form.
pub(super) fn decode_header_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        None => Some(value.to_owned()),
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
    }
}
