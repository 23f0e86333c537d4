//! What the model sees after an action: the snapshot or its diff against the baseline, the
//! `download:` lines and the tripwire (docs/mcp.md#observations).

use super::*;

/// The observation's part of a session: what the agent was shown, which the next observation
/// diffs against.
#[derive(Debug, Default)]
pub struct Shown {
    /// The baseline of docs/mcp.md#refs: the latest full snapshot shown.
    pub baseline: Option<chromate::snapshot::Snapshot>,
    /// How many snapshots this session took (`revision`, docs/mcp.md#snapshots).
    pub revision: u64,
    /// The baselines of calls that named a tab other than the active one, by tab id
    /// (docs/mcp.md#tabs-for-parallel-agents): each tab's observations diff against its own.
    pub(super) tab_baselines: std::collections::HashMap<String, chromate::snapshot::Snapshot>,
    /// The tripwire cursor of each tab's calls, by tab id.
    pub(super) tab_observed: std::collections::HashMap<String, u64>,
}

/// The observation tripwire (docs/mcp.md#observations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tripwire {
    /// Error entries with `seq > cursor` still buffered.
    pub errors: u64,
    /// The cursor at the previous observation.
    pub cursor: u64,
    /// Error entries with `seq > cursor` that were evicted.
    pub evicted: u64,
}

impl Tripwire {
    /// `errors: <n> (logCursor <c>)`, or the lower-bound variant.
    pub fn line(&self) -> String {
        if self.evicted > 0 {
            format!(
                "errors: {} (logCursor {}; {} evicted, so this is a lower bound)",
                self.errors, self.cursor, self.evicted
            )
        } else {
            format!("errors: {} (logCursor {})", self.errors, self.cursor)
        }
    }
}

/// `download: <name> (<bytes> bytes) <state>`; `download: <name> not saved: <reason>` when the
/// browser finished it but it could not be saved here, or it could not be saved at all.
pub(super) fn download_line(
    name: &str,
    state: chromate::journal::DownloadState,
    bytes: Option<u64>,
    reason: Option<&str>,
) -> String {
    match (state, reason) {
        (chromate::journal::DownloadState::Failed, Some(reason)) => {
            format!("download: {name} not saved: {reason}")
        }
        _ => match bytes {
            Some(bytes) => format!("download: {name} ({bytes} bytes) {}", state.as_str()),
            None => format!("download: {name} {}", state.as_str()),
        },
    }
}

impl ToolSession {
    /// Takes a full snapshot of `page`, counting the revision.
    pub async fn take_snapshot(
        &mut self,
        page: &chromate::Page,
        options: chromate::snapshot::SnapshotOptions,
    ) -> Result<chromate::snapshot::Snapshot, chromate::Error> {
        // A snapshot never waits, but its round trips are bounded by the agent timeout: a page
        // that does not answer fails TIMEOUT (and is stopped) instead of at the 30 s bound.
        let bound = self.agent_timeout();
        self.take_snapshot_within(page, options, bound).await
    }

    /// [`ToolSession::take_snapshot`] with its round trips bounded by `bound`.
    async fn take_snapshot_within(
        &mut self,
        page: &chromate::Page,
        options: chromate::snapshot::SnapshotOptions,
        bound: std::time::Duration,
    ) -> Result<chromate::snapshot::Snapshot, chromate::Error> {
        let snapshot = page.within(bound, page.snapshot(options)).await?;
        self.shown.revision += 1;
        Ok(snapshot)
    }

    /// The observation hook (docs/mcp.md#observations): called by the server after a successful
    /// call of an observation-bearing tool that did not attach its own.
    /// Returns `None` when there is nothing to observe (no browser).
    ///
    /// Settle: the snapshot's own round trip through the renderer orders the
    /// events the action caused; the engine offers no animation-frame wait.
    /// The tripwire comes last (docs/mcp.md#observations).
    pub async fn observe(&mut self, cancel: &Cancel) -> Option<Observation> {
        let bound = self.agent_timeout();
        self.observe_within(cancel, bound).await
    }

    /// [`ToolSession::observe`] with the snapshot's round trips bounded by `bound` (what is
    /// left of the call's own timeout) instead of the agent timeout.
    pub async fn observe_within(
        &mut self,
        cancel: &Cancel,
        bound: std::time::Duration,
    ) -> Option<Observation> {
        if cancel.is_cancelled() {
            return None;
        }
        let page = self.current_page()?;
        if let Some(dialog) = page.dialog() {
            return Some(self.observation(self.dialog_notice(&page, &dialog)).await);
        }
        let same_document_navigation = self.shown.baseline.as_ref().is_some_and(|baseline| {
            page.document_id().as_deref() == Some(baseline.document_id.as_str())
                && page.url() != baseline.url
        });
        if same_document_navigation {
            // A hash link or history route (docs/mcp.md#observations): the page renders what
            // the new URL shows after the action returned (a router's next frame, a fetch);
            // observe it once settled, as after a navigate's `load`. A wait that fails leaves
            // the page to the snapshot, which reports it.
            let settle = page.wait_for_settled(
                chromate::page::SETTLE_WINDOW,
                chromate::page::SETTLE_CAP.min(bound),
            );
            let _ = page.within(bound, settle).await;
        }
        let body = match self
            .take_snapshot_within(&page, chromate::snapshot::SnapshotOptions::default(), bound)
            .await
        {
            Ok(snapshot) => {
                let body =
                    chromate::snapshot::diff(self.shown.baseline.as_ref(), &snapshot).render();
                self.shown.baseline = Some(snapshot);
                body
            }
            Err(err) => {
                self.shown.baseline = None;
                if let Some(dialog) = page.dialog() {
                    self.dialog_notice(&page, &dialog)
                } else {
                    format!("post-action snapshot unavailable: {err}")
                }
            }
        };
        Some(self.observation(body).await)
    }

    /// An observation of `body`: the downloads that ended since the previous observation, then
    /// the tripwire (docs/mcp.md#observations, docs/mcp.md#downloads).
    async fn observation(&mut self, body: String) -> Observation {
        // A download that began during the call (an attachment navigation the click waited
        // for) is usually done by now: wait a little for it, so this call reports it. A longer
        // one, or one that begins later (a `download` link's request is still on its way),
        // is reported by the first observation after it ends.
        match self
            .browser
            .live
            .as_ref()
            .map(|live| (&live.browser, &live.context))
        {
            Some((_, Some(context))) => {
                context.wait_for_downloads(DOWNLOAD_SETTLE).await;
            }
            Some((browser, None)) => {
                browser.wait_for_downloads(DOWNLOAD_SETTLE).await;
            }
            None => {}
        }
        let (downloads, links) = self.ended_downloads();
        Observation {
            body,
            downloads,
            links,
            tripwire: self.tripwire(),
        }
    }

    /// The `download:` lines and saved files of the downloads journalled since the previous
    /// observation; saved ones are counted against the quota (docs/mcp.md#session-directory).
    fn ended_downloads(&mut self) -> (Vec<String>, Vec<PathBuf>) {
        let log = &self.journal.log;
        let now = log.cursor();
        let entries = log.downloads_since(self.journal.downloads_observed);
        self.journal.downloads_observed = now;
        let mut lines = Vec::new();
        let mut links = Vec::new();
        for entry in entries.iter().filter(|entry| entry.seq <= now) {
            let chromate::journal::LogData::Download {
                name,
                state,
                bytes,
                path,
                reason,
                ..
            } = &entry.data
            else {
                continue;
            };
            lines.push(download_line(name, *state, *bytes, reason.as_deref()));
            if let Some(path) = path {
                self.artifacts.count_download(bytes.unwrap_or(0));
                links.push(path.clone());
            }
        }
        (lines, links)
    }

    /// The tripwire (docs/mcp.md#observations): error entries since the previous
    /// observation, exactly what `browser_logs kind=error since=<c>` lists;
    /// the stored cursor then moves to the current one. Always present: the
    /// journal captures in every browser this session starts.
    pub fn tripwire(&mut self) -> Option<String> {
        Some(self.evaluate_tripwire()?.line())
    }

    /// [`ToolSession::tripwire`] as numbers (browser_batch's `logs`).
    pub fn evaluate_tripwire(&mut self) -> Option<Tripwire> {
        let cursor = self.journal.observed;
        let now = self.journal.log.cursor();
        let (errors, evicted) = self.journal.log.errors_since(cursor);
        let tripwire = Tripwire {
            errors,
            cursor,
            evicted,
        };
        self.journal.observed = now;
        self.journal.last_tripwire = Some(tripwire);
        Some(tripwire)
    }

    /// browser_batch `observe:page` (docs/tools.md#browser_batch--batch): the page's identity instead of a
    /// diff — `{url, title, documentId, revision, documentChange}` — while
    /// the baseline still advances. `None` when there is no page.
    pub async fn observe_page(
        &mut self,
        cancel: &Cancel,
    ) -> Option<(serde_json::Value, Observation)> {
        if cancel.is_cancelled() {
            return None;
        }
        let page = self.current_page()?;
        if let Some(dialog) = page.dialog() {
            let summary = json!({
                "url": page.url(),
                "title": null,
                "documentId": page.document_id(),
                "revision": self.shown.revision,
                "documentChange": "unknown",
            });
            let body = self.dialog_notice(&page, &dialog);
            return Some((summary, self.observation(body).await));
        }
        let snapshot = match self
            .take_snapshot(&page, chromate::snapshot::SnapshotOptions::default())
            .await
        {
            Ok(snapshot) => snapshot,
            Err(err) => {
                self.shown.baseline = None;
                let summary = json!({
                    "url": page.url(),
                    "title": null,
                    "documentId": page.document_id(),
                    "revision": self.shown.revision,
                    "documentChange": "unknown",
                });
                let body = format!("post-action snapshot unavailable: {err}");
                return Some((summary, self.observation(body).await));
            }
        };
        let change = match &self.shown.baseline {
            None => "unknown",
            Some(baseline) if baseline.document_id == snapshot.document_id => "same",
            Some(_) => "changed",
        };
        let summary = json!({
            "url": snapshot.url,
            "title": snapshot.title,
            "documentId": snapshot.document_id,
            "revision": self.shown.revision,
            "documentChange": change,
        });
        let body = snapshot.header();
        self.shown.baseline = Some(snapshot);
        Some((summary, self.observation(body).await))
    }
}
