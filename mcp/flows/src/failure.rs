//! What a failed step leaves for whoever has to find out why: `<output>/<flow>/failure/` with a
//! screenshot of the tab the flow was on (`screenshot.png`), its accessibility snapshot as the
//! tools show it (`snapshot.txt`), and the journal's console and network entries since the step
//! began (`console.txt`, `network.txt`), one readable line each.
//!
//! Owns: taking those four files after a step failed (each bounded by the agent timeout, each
//! one that cannot be had replaced by a note saying why, so one failure never hides the others)
//! and the text of a journal entry. Does not own deciding that a step failed (`run.rs`) or
//! showing the files in the reports (`report.rs`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use chromate_command::session::ToolSession;

/// The directory inside a flow's directory.
pub const FAILURE_DIR: &str = "failure";

/// How many journal entries of each file at most (the newest are kept).
const MAX_ENTRIES: usize = 1000;

/// The files a failed step left (relative to nothing: absolute paths), and why any is missing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FailureArtifacts {
    pub screenshot: Option<PathBuf>,
    pub snapshot: Option<PathBuf>,
    pub console: Option<PathBuf>,
    pub network: Option<PathBuf>,
    /// One line per file that could not be saved, saying why.
    pub notes: Vec<String>,
}

impl FailureArtifacts {
    /// The files there are, with their kind: `[("screenshot", path), ...]`.
    pub fn files(&self) -> Vec<(&'static str, &Path)> {
        [
            ("screenshot", &self.screenshot),
            ("snapshot", &self.snapshot),
            ("console", &self.console),
            ("network", &self.network),
        ]
        .into_iter()
        .filter_map(|(kind, path)| path.as_deref().map(|path| (kind, path)))
        .collect()
    }

    pub fn to_json(&self) -> Value {
        let path = |path: &Option<PathBuf>| path.as_ref().map(|path| path.display().to_string());
        json!({
            "screenshot": path(&self.screenshot),
            "snapshot": path(&self.snapshot),
            "console": path(&self.console),
            "network": path(&self.network),
            "notes": self.notes,
        })
    }
}

/// Saves the failure files of a step that began at journal `cursor` into
/// `<flow_dir>/failure/`.
pub async fn collect(session: &mut ToolSession, flow_dir: &Path, cursor: u64) -> FailureArtifacts {
    let mut artifacts = FailureArtifacts::default();
    let dir = flow_dir.join(FAILURE_DIR);
    if let Err(err) = chromate_command::private_fs::ensure_dir(&dir) {
        artifacts.notes.push(format!(
            "no failure files: cannot make {}: {err}",
            dir.display()
        ));
        return artifacts;
    }
    let save = |name: &str, data: &[u8], notes: &mut Vec<String>| -> Option<PathBuf> {
        match super::output::replace_file(&dir, name, data) {
            Ok(()) => Some(dir.join(name)),
            Err(err) => {
                notes.push(format!("{name}: cannot write it: {err}"));
                None
            }
        }
    };
    match session.current_page() {
        None => artifacts
            .notes
            .push("screenshot, snapshot: no tab was open".to_owned()),
        Some(page) => {
            let bound = session.agent_timeout();
            let options = chromate::capture::ScreenshotOptions {
                timeout: bound,
                ..chromate::capture::ScreenshotOptions::default()
            };
            match page.within(bound, page.screenshot(options)).await {
                Ok(shot) => {
                    artifacts.screenshot = save("screenshot.png", &shot.png, &mut artifacts.notes);
                }
                Err(err) => artifacts
                    .notes
                    .push(format!("screenshot.png: the tab gave none: {err}")),
            }
            match session
                .take_snapshot(&page, chromate::snapshot::SnapshotOptions::default())
                .await
            {
                Ok(snapshot) => {
                    let mut text = snapshot.render();
                    text.push('\n');
                    artifacts.snapshot =
                        save("snapshot.txt", text.as_bytes(), &mut artifacts.notes);
                }
                Err(err) => artifacts
                    .notes
                    .push(format!("snapshot.txt: the tab gave none: {err}")),
            }
        }
    }
    let console = entries_text(
        session,
        cursor,
        &[
            chromate::journal::LogKind::Console,
            chromate::journal::LogKind::Error,
        ],
        "console",
    );
    artifacts.console = save("console.txt", console.as_bytes(), &mut artifacts.notes);
    let network = entries_text(
        session,
        cursor,
        &[
            chromate::journal::LogKind::Request,
            chromate::journal::LogKind::Response,
            chromate::journal::LogKind::RequestFailed,
            chromate::journal::LogKind::Download,
        ],
        "network",
    );
    artifacts.network = save("network.txt", network.as_bytes(), &mut artifacts.notes);
    artifacts
}

/// The journal's entries of `kinds` after `cursor`, a line each; a file that is never empty
/// (it says when there were none, or that older ones were dropped).
fn entries_text(
    session: &ToolSession,
    cursor: u64,
    kinds: &[chromate::journal::LogKind],
    what: &str,
) -> String {
    let filter = chromate::journal::LogFilter {
        kinds: kinds.to_vec(),
        ..chromate::journal::LogFilter::default()
    };
    let list = session.journal.log.list(&filter, cursor, MAX_ENTRIES);
    let mut text = String::new();
    if list.truncated || list.dropped > 0 {
        text.push_str(&format!(
            "(older {what} entries of this step were dropped: {} not kept by the journal{})\n",
            list.dropped,
            if list.truncated {
                format!(", only the newest {MAX_ENTRIES} written")
            } else {
                String::new()
            }
        ));
    }
    if list.entries.is_empty() {
        text.push_str(&format!("(no {what} entries during this step)\n"));
    }
    for entry in &list.entries {
        text.push_str(&entry_line(entry));
        text.push('\n');
    }
    text
}

/// One journal entry as a line: its time, then what it says.
pub fn entry_line(entry: &chromate::journal::LogEntry) -> String {
    let time = chromate_command::time::iso_time(entry.time);
    let what = match &entry.data {
        chromate::journal::LogData::Console {
            level,
            method,
            text,
            origin,
        } => format!(
            "console.{method} [{}] {text}{}",
            level.as_str(),
            at(origin.as_deref())
        ),
        chromate::journal::LogData::Error {
            method,
            text,
            origin,
            stack,
        } => {
            let mut line = format!("{method} {text}{}", at(origin.as_deref()));
            if let Some(stack) = stack {
                for frame in stack.lines().skip(1) {
                    line.push_str(&format!("\n    {}", frame.trim()));
                }
            }
            line
        }
        chromate::journal::LogData::Request {
            url,
            method,
            resource_type,
        } => format!("request {method} {url} ({resource_type})"),
        chromate::journal::LogData::Response {
            url,
            method,
            status,
            mime_type,
            mocked,
        } => format!(
            "response {status} {method} {url} ({mime_type}){}",
            if *mocked { " mocked" } else { "" }
        ),
        chromate::journal::LogData::RequestFailed {
            url,
            method,
            failure,
            blocked_by,
        } => format!(
            "failed {method} {url} {failure}{}",
            blocked_by
                .as_deref()
                .map(|by| format!(" (blocked by {by})"))
                .unwrap_or_default()
        ),
        chromate::journal::LogData::Download {
            url,
            name,
            state,
            bytes,
            reason,
            ..
        } => format!(
            "download {name} {}{}{} from {url}",
            state.as_str(),
            bytes.map(|b| format!(" {b} bytes")).unwrap_or_default(),
            reason
                .as_deref()
                .map(|reason| format!(": {reason}"))
                .unwrap_or_default()
        ),
    };
    format!("{time} {what}")
}

fn at(origin: Option<&str>) -> String {
    origin
        .map(|origin| format!(" at {origin}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(data: chromate::journal::LogData) -> chromate::journal::LogEntry {
        chromate::journal::LogEntry {
            seq: 1,
            time: std::time::UNIX_EPOCH,
            page: "T1".to_owned(),
            data,
        }
    }

    #[test]
    fn each_entry_is_one_readable_line_and_a_stack_is_indented_under_its_error() {
        let line = |data| entry_line(&entry(data));
        assert_eq!(
            line(chromate::journal::LogData::Console {
                level: chromate::journal::LogLevel::Error,
                method: "error".to_owned(),
                text: "boom".to_owned(),
                origin: Some("http://127.0.0.1:1/a.js:3:5".to_owned()),
            }),
            "1970-01-01T00:00:00.000Z console.error [error] boom at http://127.0.0.1:1/a.js:3:5"
        );
        assert_eq!(
            line(chromate::journal::LogData::Error {
                method: "exception".to_owned(),
                text: "TypeError: x is undefined".to_owned(),
                origin: None,
                stack: Some("TypeError: x is undefined\n    at f (a.js:1:2)\n    at g (a.js:3:4)".to_owned()),
            }),
            "1970-01-01T00:00:00.000Z exception TypeError: x is undefined\n    at f (a.js:1:2)\n    at g (a.js:3:4)"
        );
        assert_eq!(
            line(chromate::journal::LogData::Response {
                url: "http://127.0.0.1:1/status/500".to_owned(),
                method: "GET".to_owned(),
                status: 500,
                mime_type: "text/plain".to_owned(),
                mocked: false,
            }),
            "1970-01-01T00:00:00.000Z response 500 GET http://127.0.0.1:1/status/500 (text/plain)"
        );
        assert_eq!(
            line(chromate::journal::LogData::RequestFailed {
                url: "http://127.0.0.1:1/x".to_owned(),
                method: "GET".to_owned(),
                failure: "net::ERR_BLOCKED_BY_CLIENT".to_owned(),
                blocked_by: Some("origin-policy".to_owned()),
            }),
            "1970-01-01T00:00:00.000Z failed GET http://127.0.0.1:1/x net::ERR_BLOCKED_BY_CLIENT (blocked by origin-policy)"
        );
    }
}
