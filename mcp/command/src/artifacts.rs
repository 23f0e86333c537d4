//! The session artifact directory, spilling of large text blocks and the
//! response cap (docs/mcp.md#artifacts-and-resources).
//!
//! Owns: naming and lazily creating `<root>/chromate-mcp-<pid>-<stamp>-<random>/`
//! (the name decided at construction, so `resources.rs` can serve it before it exists; created
//! exclusively through `private_fs.rs`: 0700, files 0600 `NNNN-<label>`, a planted symlink or
//! an existing directory at the name refused), the per-session quota, the inline
//! preview a spilled block turns into, and shrinking a whole response under
//! `CHROMATE_MCP_MAX_RESPONSE_BYTES`. The size rules are pure functions so
//! they are unit-tested without a filesystem.
//!
//! Downloads (docs/mcp.md#downloads) live in `<session dir>/downloads/` and count against
//! the quota: the store keeps the engine's shared [`chromate::capture::DownloadLimit`]
//! at what the quota has left (at most 256 MiB; 0 once the files are used
//! up), so the engine cancels a download that would not fit, and each
//! finished download is added to the totals when an observation reports it.
//!
//! Deleting the directory is [`remove_if_untold`]'s, which an HTTP session calls when it ends.
//! Does not own: deciding *which* blocks spill (the server does, per docs/mcp.md#spilling) or trace files
//! (outside the quota, docs/mcp.md#traces).
//!
//! Test knobs: `CHROMATE_MCP_MAX_ARTIFACT_FILES` and
//! `CHROMATE_MCP_MAX_ARTIFACT_BYTES` override the quota (500 files, 256 MiB)
//! so tests can reach it cheaply; they are read in `main.rs` with the other
//! environment variables.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{json, Value};

/// Removes the session directory `dir` when it holds no file the client was told about: every
/// file chromate writes there (a spill, a screenshot, a trace, a finished download) is returned
/// as a path or a resource, so a directory with only directories (`downloads/`, `traces/`) and
/// partial downloads (`downloads/.incoming/`) goes, and any other file, symlink or unreadable
/// entry keeps it. Returns whether `dir` is gone (true when it never existed).
pub fn remove_if_untold(dir: &Path) -> bool {
    match fs::symlink_metadata(dir) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return true,
        Err(_) => return false,
        Ok(meta) if !meta.is_dir() => return false,
        Ok(_) => {}
    }
    let incoming = dir.join("downloads").join(".incoming");
    if holds_told_files(dir, &incoming).unwrap_or(true) {
        return false;
    }
    fs::remove_dir_all(dir).is_ok()
}

/// Whether `dir` holds anything but directories, leaving out what is under `incoming`.
fn holds_told_files(dir: &Path, incoming: &Path) -> std::io::Result<bool> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path == incoming {
            continue;
        }
        let meta = fs::symlink_metadata(&path)?;
        if !meta.is_dir() || holds_told_files(&path, incoming)? {
            return Ok(true);
        }
    }
    Ok(false)
}

use crate::error::{cut_bytes, floor_char_boundary};
use crate::private_fs;

/// Default spill threshold (`CHROMATE_MCP_SPILL_BYTES`).
pub const DEFAULT_SPILL_BYTES: usize = 8192;
/// Default response cap (`CHROMATE_MCP_MAX_RESPONSE_BYTES`).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 32768;
/// Smallest accepted response cap; lower values are ignored.
pub const MIN_RESPONSE_BYTES: usize = 1024;
/// Default quota: files per session directory.
pub const DEFAULT_MAX_FILES: u64 = 500;
/// Default quota: bytes per session directory.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;

const PREVIEW_LINES: usize = 5;
const PREVIEW_LINE_CHARS: usize = 240;
const QUOTA_MARKER: &str = "… (truncated: artifact quota reached)";
const TEXT_CUT_MARKER: &str = "\n… (truncated)";

/// The numbers that bound artifacts and responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub spill_bytes: usize,
    pub max_response_bytes: usize,
    pub max_files: u64,
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            spill_bytes: DEFAULT_SPILL_BYTES,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            max_files: DEFAULT_MAX_FILES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Why an artifact was not written.
#[derive(Debug)]
pub enum WriteError {
    /// The session directory is full (quota: docs/mcp.md#session-directory).
    Quota,
    /// The filesystem refused; the message names the path.
    Io(String),
}

/// The session directory and its quota accounting.
#[derive(Debug)]
pub struct ArtifactStore {
    dir: PathBuf,
    limits: Limits,
    created: bool,
    counter: u32,
    files: u64,
    bytes: u64,
    /// The size limit of one download: what the quota has left.
    download_limit: chromate::capture::DownloadLimit,
    /// A store forked for one call on one tab ([`ArtifactStore::fork`]): its files are named
    /// `NNNN-<tab>-<label>`, so calls on other tabs running at the same time never pick the
    /// same name; and the counts it started from.
    forked: Option<(String, u64, u64)>,
}

impl ArtifactStore {
    /// A store for `<root>/chromate-mcp-<pid>-<stamp>-<suffix>/`; nothing is created yet.
    /// `suffix` is [`private_fs::random_suffix`] outside tests: in a shared temp directory the
    /// name must be one no other user can predict.
    pub fn new(
        root: &Path,
        pid: u32,
        started: SystemTime,
        suffix: &str,
        limits: Limits,
    ) -> ArtifactStore {
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let store = ArtifactStore {
            dir: root.join(session_dir_name(pid, started, suffix)),
            limits,
            created: false,
            counter: 0,
            files: 0,
            bytes: 0,
            download_limit: chromate::capture::DownloadLimit::default(),
            forked: None,
        };
        store.update_download_limit();
        store
    }

    /// A store whose session directory is exactly `dir` (a capture's or a flow's), created
    /// exclusively at first use like any session directory.
    pub fn at(dir: PathBuf, limits: Limits) -> ArtifactStore {
        let store = ArtifactStore {
            dir,
            limits,
            created: false,
            counter: 0,
            files: 0,
            bytes: 0,
            download_limit: chromate::capture::DownloadLimit::default(),
            forked: None,
        };
        store.update_download_limit();
        store
    }

    /// `<session dir>/downloads` (docs/mcp.md#downloads); the engine creates it at the first download.
    pub fn downloads_dir(&self) -> PathBuf {
        self.dir.join("downloads")
    }

    /// The download size limit the engine checks, kept at what the quota has left.
    pub fn download_limit(&self) -> chromate::capture::DownloadLimit {
        self.download_limit.clone()
    }

    /// Counts a saved download (`bytes` long) against the quota.
    pub fn count_download(&mut self, bytes: u64) {
        self.files += 1;
        self.bytes += bytes;
        self.update_download_limit();
    }

    fn update_download_limit(&self) {
        let left = if self.files >= self.limits.max_files {
            0
        } else {
            self.limits.max_bytes.saturating_sub(self.bytes)
        };
        self.download_limit
            .set(left.min(chromate::capture::DEFAULT_DOWNLOAD_LIMIT));
    }

    /// The session directory (it may not exist yet).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Writes `NNNN-<label>` holding `data`, creating the directory on first use.
    pub fn write(&mut self, label: &str, data: &[u8]) -> Result<PathBuf, WriteError> {
        if self.files + 1 > self.limits.max_files
            || self.bytes + data.len() as u64 > self.limits.max_bytes
        {
            return Err(WriteError::Quota);
        }
        self.ensure_dir()
            .map_err(|err| WriteError::Io(err.to_string()))?;
        self.counter += 1;
        let path = match &self.forked {
            Some((tab, ..)) => self.dir.join(format!("{:04}-{tab}-{label}", self.counter)),
            None => self.dir.join(format!("{:04}-{label}", self.counter)),
        };
        private_fs::write_new_file(&path, data)
            .map_err(|err| WriteError::Io(format!("{}: {err}", path.display())))?;
        self.files += 1;
        self.bytes += data.len() as u64;
        self.update_download_limit();
        Ok(path)
    }

    /// A copy of the store for one call on tab `tab` (docs/mcp.md#tabs-for-parallel-agents):
    /// same directory, limits and download limit, its own names; [`ArtifactStore::absorb`]
    /// takes its counts back.
    pub fn fork(&mut self, tab: &str) -> ArtifactStore {
        // Made now, once: forks running at the same time must not race to create it.
        let _ = self.ensure_dir();
        ArtifactStore {
            dir: self.dir.clone(),
            limits: self.limits,
            created: self.created,
            counter: self.counter,
            files: self.files,
            bytes: self.bytes,
            download_limit: self.download_limit.clone(),
            forked: Some((tab.to_owned(), self.files, self.bytes)),
        }
    }

    /// Counts what a [`ArtifactStore::fork`] wrote against this store's quota.
    pub fn absorb(&mut self, fork: &ArtifactStore) {
        if let Some((_, files, bytes)) = &fork.forked {
            self.files += fork.files.saturating_sub(*files);
            self.bytes += fork.bytes.saturating_sub(*bytes);
        }
        self.counter = self.counter.max(fork.counter);
        self.update_download_limit();
    }

    /// Spills `text` if it is over the spill size (docs/mcp.md#spilling) and returns what goes inline.
    pub fn spill(&mut self, label: &str, text: &str) -> Spilled {
        if text.len() <= self.limits.spill_bytes {
            return Spilled {
                inline: text.to_owned(),
                path: None,
            };
        }
        match self.write(label, text.as_bytes()) {
            Ok(path) => Spilled {
                inline: spill_preview(text, &path.display().to_string()),
                path: Some(path),
            },
            Err(WriteError::Quota) => Spilled {
                inline: cut_bytes(text, self.limits.spill_bytes, QUOTA_MARKER),
                path: None,
            },
            Err(WriteError::Io(reason)) => Spilled {
                inline: cut_bytes(
                    text,
                    self.limits.spill_bytes,
                    &format!("… (truncated: artifact not written: {reason})"),
                ),
                path: None,
            },
        }
    }

    /// Creates the session directory on first use: exclusively (anything already at its
    /// name, a symlink included, is refused), 0700, owned by this user. A root above it that
    /// does not exist yet is created 0700 too (other users cannot even list the sessions'
    /// names); one that exists is the user's or the OS's and is left as it is.
    pub fn ensure_dir(&mut self) -> std::io::Result<&Path> {
        if !self.created {
            if let Some(parent) = self.dir.parent() {
                ensure_root(parent).map_err(|err| {
                    std::io::Error::new(err.kind(), format!("{}: {err}", parent.display()))
                })?;
            }
            private_fs::create_dir(&self.dir)?;
            self.created = true;
        }
        Ok(&self.dir)
    }
}

/// Makes the artifacts root `root` exist: its missing parents with the umask's mode, itself
/// 0700 if chromate creates it.
fn ensure_root(root: &Path) -> std::io::Result<()> {
    if root.is_dir() {
        return Ok(());
    }
    if let Some(parent) = root.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    match builder.create(root) {
        // Another session made it meanwhile.
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && root.is_dir() => Ok(()),
        other => other,
    }
}

/// What a text block becomes after [`ArtifactStore::spill`].
#[derive(Debug, Clone, PartialEq)]
pub struct Spilled {
    pub inline: String,
    pub path: Option<PathBuf>,
}

/// `chromate-mcp-<pid>-<YYYYMMDDTHHMMSSZ>-<suffix>`.
pub fn session_dir_name(pid: u32, started: SystemTime, suffix: &str) -> String {
    format!("chromate-mcp-{pid}-{}-{suffix}", utc_stamp(started))
}

/// `YYYYMMDDTHHMMSSZ` for `time` in UTC: [`crate::time::iso_time`] to the second, without its
/// separators.
pub fn utc_stamp(time: SystemTime) -> String {
    let iso = crate::time::iso_time(time);
    let mut stamp: String = iso
        .chars()
        .take("YYYY-MM-DDTHH:MM:SS".len())
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    stamp.push('Z');
    stamp
}

/// The inline form of a spilled block: its first 5 lines (each over 240
/// characters cut to 239 + `…`), a `…` line and `(full output: <path>, <N> bytes)`.
pub fn spill_preview(text: &str, path: &str) -> String {
    let mut out = String::new();
    for line in text.lines().take(PREVIEW_LINES) {
        if line.chars().count() > PREVIEW_LINE_CHARS {
            out.extend(line.chars().take(PREVIEW_LINE_CHARS - 1));
            out.push('…');
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out.push_str("…\n");
    out.push_str(&format!("(full output: {path}, {} bytes)", text.len()));
    out
}

/// Shrinks a `tools/call` response envelope (`{jsonrpc, id, result}`) to at
/// most `cap` serialised bytes (docs/mcp.md#sizes). First the result JSON — `content[0]` when it is the
/// result's compact JSON, and `structuredContent.result` when present — is replaced by
/// `{truncated, totalBytes, previewBytes, preview, fullOutput}` (`full_output` is asked once
/// to save the whole result JSON and return its path); then a full `structuredContent`
/// observation gives way to the inline one of `content[1]`; if still over, text blocks are
/// cut from the last to the first, each ending `\n… (truncated)`. Tool errors keep their
/// (already bounded) `structuredContent.error` so clients can always branch on the code.
pub fn cap_response(
    envelope: &mut Value,
    cap: usize,
    full_output: impl FnOnce(&str) -> Option<String>,
) {
    if serialised_len(envelope) <= cap {
        return;
    }
    let structured_json = envelope
        .pointer("/result/structuredContent/result")
        .map(Value::to_string);
    // `content[0]` is the result JSON unless the tool wrote its own text, the block was
    // spilled to a preview, or the call failed: none of those parse as a JSON object.
    let inline_json = envelope
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .filter(|text| text.starts_with('{') || text.starts_with('['))
        .filter(|text| serde_json::from_str::<Value>(text).is_ok())
        .map(str::to_owned);
    // A result shorter than its preview would be is left as it is: cutting it saves nothing.
    let result_json = structured_json
        .or_else(|| inline_json.clone())
        .filter(|json| json.len() > cap / 4);
    if let Some(result_json) = result_json {
        let preview_len = floor_char_boundary(&result_json, cap / 4);
        let preview = &result_json[..preview_len];
        let truncated = json!({
            "truncated": true,
            "totalBytes": result_json.len(),
            "previewBytes": preview.len(),
            "preview": preview,
            "fullOutput": full_output(&result_json),
        });
        if inline_json.is_some() {
            if let Some(text) = envelope.pointer_mut("/result/content/0/text") {
                *text = json!(truncated.to_string());
            }
        }
        if let Some(structured) = envelope.pointer_mut("/result/structuredContent/result") {
            *structured = truncated;
        }
    }
    if serialised_len(envelope) > cap {
        let inline = envelope.pointer("/result/content/1/text").cloned();
        if let (Some(observation), Some(inline)) = (
            envelope.pointer_mut("/result/structuredContent/observation"),
            inline,
        ) {
            *observation = inline;
        }
    }
    let n_blocks = envelope
        .pointer("/result/content")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    for block_idx in (0..n_blocks).rev() {
        let total = serialised_len(envelope);
        if total <= cap {
            return;
        }
        let excess = total - cap;
        let pointer = format!("/result/content/{block_idx}/text");
        let Some(Value::String(text)) = envelope.pointer_mut(&pointer) else {
            continue;
        };
        *text = cut_text_block(text, excess);
    }
}

/// Removes at least `excess` serialised bytes from `text`, ending it `\n… (truncated)`.
fn cut_text_block(text: &str, excess: usize) -> String {
    // JSON escaping can make a character cost up to 6 bytes; cutting by its
    // escaped length keeps the arithmetic on serialised bytes.
    let escaped_len = |s: &str| Value::String(s.to_owned()).to_string().len() - 2;
    let full = escaped_len(text);
    let budget = full.saturating_sub(excess + escaped_len(TEXT_CUT_MARKER));
    let mut kept = 0;
    let mut end = 0;
    for (idx, ch) in text.char_indices() {
        let cost = escaped_len(ch.encode_utf8(&mut [0; 4]));
        if kept + cost > budget {
            break;
        }
        kept += cost;
        end = idx + ch.len_utf8();
    }
    format!("{}{TEXT_CUT_MARKER}", &text[..end])
}

fn serialised_len(value: &Value) -> usize {
    value.to_string().len()
}

#[cfg(test)]
mod tests;
