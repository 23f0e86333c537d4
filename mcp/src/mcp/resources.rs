//! Artifacts as MCP resources (docs/mcp.md#resources): `resources/list`, `resources/read` and the
//! `resource_link` blocks results hand back.
//!
//! Owns: the directories a client may read through the server ([`Roots`]: the session
//! directory, the trace root, the downloads directory), `file://` URIs for their files (percent
//! encoded both ways), MIME types by extension, and the read rule: a regular file, no symlink
//! anywhere below a root, its canonical path inside a canonical root, at most 16 MiB. A host
//! that does not share the server's disk reads spilled files, screenshots, traces and downloads
//! this way. Does not own writing any of those files (`artifacts.rs`, `trace.rs`, downloads).
//!
//! Everything here is answered on the read loop without the session lock, so listing or
//! reading never waits for a running tool call and never launches the browser.

use std::fs;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use base64::Engine as _;
use serde_json::{json, Value};

/// The most files `resources/list` returns.
const MAX_LISTED: usize = 100;
/// The largest file `resources/read` returns.
pub(crate) const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;
/// How deep listing looks below a root (`traces/<name>/screenshots/NNNN.png` is 3).
const MAX_DEPTH: usize = 3;

/// The directories whose files are resources.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Roots {
    /// The session directory (docs/mcp.md#session-directory); the others usually sit inside it.
    pub(crate) session: PathBuf,
    /// `CHROMATE_TRACE_DIR`, else `<session dir>/traces` (docs/mcp.md#traces).
    pub(crate) traces: PathBuf,
    /// `<session dir>/downloads` (docs/mcp.md#downloads).
    pub(crate) downloads: PathBuf,
}

impl Roots {
    /// The directories of `session` whose files `resources/read` serves (docs/mcp.md#resources).
    pub(crate) fn of(session: &chromate_command::session::ToolSession) -> Roots {
        Roots {
            session: session.artifacts.dir().to_path_buf(),
            traces: session.trace_root(),
            downloads: session.artifacts.downloads_dir(),
        }
    }
}

/// Why a read was refused; the message is the JSON-RPC -32602 text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ReadError {
    Unknown(String),
    TooLarge(String),
}

impl ReadError {
    pub(crate) fn message(&self) -> String {
        match self {
            ReadError::Unknown(uri) => format!("unknown resource {uri}"),
            ReadError::TooLarge(uri) => format!(
                "resource too large: {uri} is over {} MiB",
                MAX_READ_BYTES / 1024 / 1024
            ),
        }
    }
}

impl Roots {
    fn all(&self) -> [&Path; 3] {
        [&self.session, &self.traces, &self.downloads]
    }

    /// `resources/list`: files under the roots, newest first, at most 100.
    pub(crate) fn list(&self) -> Value {
        let mut files: Vec<(SystemTime, PathBuf, u64)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for root in self.all() {
            collect(root, 0, &mut |path, metadata| {
                if seen.insert(path.to_path_buf()) {
                    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    files.push((modified, path.to_path_buf(), metadata.len()));
                }
            });
        }
        files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
        let resources: Vec<Value> = files
            .into_iter()
            .take(MAX_LISTED)
            .map(|(_, path, size)| {
                json!({
                    "uri": file_uri(&path),
                    "name": file_name(&path),
                    "mimeType": mime_type(&path),
                    "size": size,
                })
            })
            .collect();
        json!({ "resources": resources })
    }

    /// `resources/read {uri}` → `{contents:[{uri, mimeType, text|blob}]}`.
    pub(crate) fn read(&self, uri: &str) -> Result<Value, ReadError> {
        let unknown = || ReadError::Unknown(uri.to_owned());
        let path = parse_file_uri(uri).ok_or_else(unknown)?;
        let root = self.root_of(&path).ok_or_else(unknown)?;
        // No symlink on the way from the root down to the file, the file included.
        let relative = path.strip_prefix(root).map_err(|_| unknown())?;
        let mut walked = root.to_path_buf();
        for component in relative.components() {
            let Component::Normal(part) = component else {
                return Err(unknown());
            };
            walked.push(part);
            let metadata = fs::symlink_metadata(&walked).map_err(|_| unknown())?;
            if metadata.file_type().is_symlink() {
                return Err(unknown());
            }
        }
        let metadata = fs::symlink_metadata(&path).map_err(|_| unknown())?;
        if !metadata.file_type().is_file() {
            return Err(unknown());
        }
        // The root itself may be reached through a symlink (`/tmp` on some systems); the
        // file's canonical path must still be inside the root's.
        let canonical = fs::canonicalize(&path).map_err(|_| unknown())?;
        let canonical_root = fs::canonicalize(root).map_err(|_| unknown())?;
        if !canonical.starts_with(&canonical_root) {
            return Err(unknown());
        }
        if metadata.len() > MAX_READ_BYTES {
            return Err(ReadError::TooLarge(uri.to_owned()));
        }
        let bytes = fs::read(&canonical).map_err(|_| unknown())?;
        if bytes.len() as u64 > MAX_READ_BYTES {
            return Err(ReadError::TooLarge(uri.to_owned()));
        }
        let mime = mime_type(&path);
        let content = match String::from_utf8(bytes) {
            Ok(text) if is_text(mime) => json!({ "uri": uri, "mimeType": mime, "text": text }),
            Ok(text) => json!({
                "uri": uri,
                "mimeType": mime,
                "blob": base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
            }),
            Err(err) => json!({
                "uri": uri,
                "mimeType": mime,
                "blob": base64::engine::general_purpose::STANDARD.encode(err.as_bytes()),
            }),
        };
        Ok(json!({ "contents": [content] }))
    }

    /// The root `path` lies under, compared lexically (the path is absolute and has no `..`).
    fn root_of(&self, path: &Path) -> Option<&Path> {
        self.all()
            .into_iter()
            .filter(|root| path.starts_with(root) && path != *root)
            // The most specific root: `traces/` inside the session directory is its own.
            .max_by_key(|root| root.components().count())
    }
}

/// Calls `found` for every regular file below `dir` (symlinks are neither followed nor listed).
fn collect(dir: &Path, depth: usize, found: &mut dyn FnMut(&Path, &fs::Metadata)) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(metadata) = fs::symlink_metadata(&path) else {
            continue;
        };
        if metadata.file_type().is_file() {
            found(&path, &metadata);
        } else if metadata.file_type().is_dir() && depth < MAX_DEPTH {
            collect(&path, depth + 1, found);
        }
    }
}

/// The `resource_link` block for a file a result hands back (docs/mcp.md#resources), or `None` if it is gone.
pub(crate) fn link(path: &Path) -> Option<Value> {
    let metadata = fs::metadata(path).ok()?;
    Some(json!({
        "type": "resource_link",
        "uri": file_uri(path),
        "name": file_name(path),
        "mimeType": mime_type(path),
        "size": metadata.len(),
    }))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Bytes a `file://` URI path keeps as they are (RFC 3986 unreserved, `/` and a few sub-delims
/// that are safe in a path).
fn keeps(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/' | b'+' | b'@')
}

/// `file://<absolute path>`, percent-encoded.
pub(crate) fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut uri = String::from("file://");
    for &byte in text.as_bytes() {
        if keeps(byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The absolute path a `file://` URI names; `None` for another scheme, a host, a relative or
/// `..` path, a bad escape or a NUL.
pub(crate) fn parse_file_uri(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` names the same file as `file:///x`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') || rest.contains(['?', '#']) {
        return None;
    }
    let mut bytes = Vec::with_capacity(rest.len());
    let mut iter = rest.bytes();
    while let Some(byte) = iter.next() {
        if byte == b'%' {
            let hex = [iter.next()?, iter.next()?];
            let hex = std::str::from_utf8(&hex).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
        } else {
            bytes.push(byte);
        }
    }
    if bytes.contains(&0) {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    // Checked on the text: `Path::components` quietly drops `.` segments.
    let clean = text
        .split('/')
        .all(|segment| segment != "." && segment != "..");
    clean.then(|| PathBuf::from(text))
}

/// The MIME type by extension.
pub(crate) fn mime_type(path: &Path) -> &'static str {
    let extension = path
        .extension()
        .and_then(|ext| ext.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("json") => "application/json",
        Some("ndjson") => "application/x-ndjson",
        Some("html" | "htm") => "text/html",
        Some("txt" | "log") => "text/plain",
        Some("csv") => "text/csv",
        Some("md") => "text/markdown",
        Some("xml") => "application/xml",
        Some("js") => "text/javascript",
        Some("css") => "text/css",
        _ => "application/octet-stream",
    }
}

/// Whether a UTF-8 file of this type goes out as `text` (else as base64 `blob`).
fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/x-ndjson"
                | "application/xml"
                | "image/svg+xml"
                | "application/octet-stream"
        )
}

#[cfg(test)]
mod tests;
