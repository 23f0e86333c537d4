//! `set_input_files`: every file must exist before any browser work; the
//! target (an `<input type=file>` or its `<label>`) only has to be attached and enabled, never
//! visible; `DOM.setFileInputFiles` fires `input` and `change`. Paths never appear in errors.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::cdp::dom::SetFileInputFilesParams;
use crate::error::{Error, Result, UnmetState};
use crate::selector;
use crate::wait::{Deadline, Poller, POLL_EVERY};

use super::{status, Locator, Status};

impl Locator {
    /// Sets the files of a file input (or the input of a `<label>`); returns how many.
    pub async fn set_input_files<P: AsRef<Path>>(&self, paths: &[P]) -> Result<usize> {
        self.bounded(async {
            let verb = "upload";
            let mut files = Vec::with_capacity(paths.len());
            for (i, path) in paths.iter().enumerate() {
                let absolute = std::fs::canonicalize(path.as_ref())
                    .ok()
                    .filter(|p: &PathBuf| p.is_file())
                    .ok_or_else(|| {
                        Error::invalid_argument_of(
                            "files",
                            format!("{verb}: files[{i}] does not exist or is not a regular file"),
                        )
                    })?;
                files.push(absolute.to_string_lossy().into_owned());
            }
            if files.is_empty() {
                return Err(Error::invalid_argument_of(
                    "files",
                    format!("{verb}: files needs at least one path"),
                ));
            }
            let deadline = Deadline::new(self.timeout);
            let mut poller = Poller::new(deadline, POLL_EVERY);
            let mut enabled = false;
            while poller.next().await {
                let info = match self.call("actionability.fileInputInfo", json!({})).await {
                    Err(Error::NoAnswer { .. }) => break,
                    other => other?,
                };
                let status = status("actionability.fileInputInfo", &info)?;
                match status {
                    Status::Ok => {
                        if info.get("multiple").and_then(Value::as_bool) != Some(true)
                            && files.len() > 1
                        {
                            return Err(Error::invalid_argument_of(
                                "files",
                                format!(
                                    "{verb}: {} takes one file (no `multiple` attribute), got {}",
                                    self.selector.canonical(),
                                    files.len()
                                ),
                            ));
                        }
                        if info.get("enabled").and_then(Value::as_bool) == Some(true) {
                            enabled = true;
                            break;
                        }
                    }
                    Status::NotFileInput => {
                        return Err(Error::invalid_argument_of(
                            "selector",
                            format!(
                                "{verb}: {} is not an <input type=file> or its label",
                                self.selector.canonical()
                            ),
                        ))
                    }
                    Status::NoMatch if self.fails_fast(poller.is_first()) => {
                        return Err(self.no_match(verb))
                    }
                    Status::NoMatch => {}
                    _ => self.target_status(verb, status, &info)?,
                }
            }
            if !enabled {
                return Err(Error::TimeoutWaitingState {
                    verb: verb.into(),
                    selector: self.selector.canonical().into(),
                    timeout: deadline.timeout(),
                    state: UnmetState::Enabled,
                    obscured_by: None,
                });
            }
            let (frame_id, arg) = selector::js_target(&self.page, &self.selector)?;
            let object = self
                .page
                .call_isolated_object(frame_id.as_deref(), "actionability.fileInput", &arg)
                .await?;
            let Some((session, object_id)) = object else {
                return Err(self.no_match(verb));
            };
            let count = files.len();
            let params = SetFileInputFilesParams::new(files).object_id(object_id);
            session.send(&params).await.map_err(|err| match err {
                // The browser's message may quote a path: keep only the method.
                Error::Protocol { method, code, .. } => Error::Protocol {
                    method,
                    code,
                    message: "the browser refused the files".into(),
                },
                other => other,
            })?;
            Ok(count)
        })
        .await
    }
}
