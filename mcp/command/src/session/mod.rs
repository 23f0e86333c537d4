//! The tool backend: state one MCP session holds across tool calls.
//!
//! Owns: the configuration, the artifact store, the mock table, the log
//! journal's cursor, the trace state, the browser (launched lazily by the
//! first call that needs a page, docs/mcp.md#run), the tabs and their `p<N>` ids
//! (docs/tools.md#browser_page--tabs), the snapshot baseline (docs/mcp.md#refs), the downloads directory handed to
//! every browser and the `download:` lines of observations (docs/mcp.md#downloads), and the
//! two hooks the server calls
//! around tools: [`ToolSession::observe`] after a successful observation-bearing
//! call (docs/mcp.md#observations) and [`ToolSession::shutdown`] at exit (docs/mcp.md#run).
//!
//! By job: `browser.rs` (the browser, its tabs and their recovery), `observe.rs` (what the
//! model sees after an action), `refusals.rs` (engine errors and refusals as tool errors),
//! `tabs.rs` (a call that names a tab: the session forked for it, with the tab's own baseline,
//! and merged back, docs/mcp.md#tabs-for-parallel-agents);
//! this file holds the session itself, its directories and its shutdown.
//!
//! Does not own the browser's internals (the engine) or tool semantics
//! (`tools/`). The log journal itself is the engine's (`chromate::journal::Journal`);
//! the session keeps one and hands it to every browser it launches, so `seq`
//! never restarts and entries survive a relaunch (docs/mcp.md#run, docs/mcp.md#logs).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::artifacts::ArtifactStore;
use crate::call::Cancel;
use crate::config::Config;
use crate::error::{from_engine, Observation, ToolError, ToolErrorCode};
use crate::mocks::MockTable;

/// The log journal as the MCP layer sees it (docs/mcp.md#logs): the engine's journal,
/// shared by every browser of the session, and the tripwire's cursor (docs/mcp.md#observations).
#[derive(Debug, Default, Clone)]
pub struct SessionJournal {
    /// The entries; capture belongs to the engine.
    pub log: chromate::journal::Journal,
    /// The journal cursor at the previous observation (0 at first).
    pub observed: u64,
    /// The journal cursor up to which observations reported downloads (docs/mcp.md#downloads).
    pub downloads_observed: u64,
    /// The tripwire of the latest observation (browser_batch reports it).
    pub last_tripwire: Option<Tripwire>,
    /// `p<N>` of every tab ever listed, by target id (entries of closed tabs
    /// keep their id).
    pub page_ids: std::collections::HashMap<String, String>,
    /// The runtime-errors channel's own record of what it drained (qa_get_runtime_errors,
    /// `chromate errors`): the `seq` of every entry it returned and cleared, those still
    /// buffered. No other reader moves it.
    pub errors_drained: std::collections::BTreeSet<u64>,
}

impl SessionJournal {
    /// False until a browser has run.
    pub fn capturing(&self) -> bool {
        self.log.capturing()
    }

    /// An entry's tab as `p<N>` (the target id if the tab was never listed).
    pub fn page_id(&self, target_id: &str) -> String {
        self.page_ids
            .get(target_id)
            .cloned()
            .unwrap_or_else(|| target_id.to_owned())
    }
}

/// An active trace recording (docs/mcp.md#traces), owned by `trace.rs`.
pub use crate::trace::TraceRecording;

/// Server-held state for one session.
#[derive(Debug)]
pub struct ToolSession {
    pub config: Config,
    pub server_pid: u32,
    pub artifacts: ArtifactStore,
    pub mocks: MockTable,
    pub journal: SessionJournal,
    pub trace: Option<TraceRecording>,
    /// The MCP client's roots as directories (empty unless it declares roots); shared with the
    /// front end, which updates them whenever the client's answer arrives.
    pub client_roots: std::sync::Arc<std::sync::Mutex<Vec<PathBuf>>>,
    /// The working directory of the CLI command whose call runs now (absolute); `None` for
    /// MCP, where it is the server's own.
    pub call_dir: Option<PathBuf>,
    /// Set for an HTTP session: its traces under `CHROMATE_TRACE_DIR` and its saved states
    /// live in a directory of this name inside those roots, so another session can neither
    /// list, read nor load them (docs/mcp.md#streamable-http). `None`: the roots themselves.
    pub namespace: Option<String>,
    /// A capture's or a flow's session: [`ToolSession::shutdown`] kills the browser (after
    /// the downloads in flight end) instead of closing it gracefully.
    pub one_shot: bool,
    /// Element actions wait up to their `timeout_ms` for a selector that matches nothing yet,
    /// instead of failing NO_MATCH at once: a flow's session, since a flow is a script that
    /// cannot look at the page first (docs/cli.md#chromate-flows). An agent's session fails
    /// fast: it sees the page, and a mistyped selector should not cost it the timeout.
    pub wait_for_match: bool,
    /// When the running call must be done (its `timeout_ms` from its arrival): connecting to a
    /// `--cdp-endpoint` gives up by then, or at `--cdp-timeout`, whichever comes first.
    pub call_deadline: Option<std::time::Instant>,
    /// Set on a session forked for one call on one tab ([`ToolSession::fork_tab`]).
    fork: Option<tabs::Fork>,
    /// The browser and its tabs (`browser.rs`).
    pub browser: SessionBrowser,
    /// What the agent was shown, to diff against (`observe.rs`).
    pub shown: Shown,
}

impl ToolSession {
    pub fn new(config: Config) -> ToolSession {
        let server_pid = std::process::id();
        let artifacts = ArtifactStore::new(
            &config.artifacts_root,
            server_pid,
            SystemTime::now(),
            &crate::private_fs::random_suffix(),
            config.limits,
        );
        ToolSession {
            config,
            server_pid,
            artifacts,
            mocks: MockTable::default(),
            journal: SessionJournal::default(),
            trace: None,
            client_roots: std::sync::Arc::default(),
            call_dir: None,
            namespace: None,
            one_shot: false,
            wait_for_match: false,
            call_deadline: None,
            fork: None,
            browser: SessionBrowser::default(),
            shown: Shown::default(),
        }
    }

    /// A session whose directory (spills, downloads) is exactly `dir`, not one named under the
    /// artifacts root: a capture's or a flow's, inside its output directory ([`Self::one_shot`]).
    pub fn with_artifacts_dir(config: Config, dir: PathBuf) -> ToolSession {
        let limits = config.limits;
        let mut session = ToolSession::new(config);
        session.artifacts = ArtifactStore::at(dir, limits);
        session.one_shot = true;
        session
    }

    /// The directories the MCP client declared as its roots (`roots/list`), where uploads may
    /// read besides the working directory; kept current by the MCP front end.
    pub fn upload_roots(&self) -> Vec<PathBuf> {
        crate::sync::lock(&self.client_roots).clone()
    }

    /// The progress phase while the browser starts: `waiting for the browser pool` when
    /// connecting to a `--cdp-endpoint`, else `launching browser`.
    pub fn start_phase(&self) -> &'static str {
        if self.config.cdp_endpoint.is_some() {
            "waiting for the browser pool"
        } else {
            "launching browser"
        }
    }

    /// The notice of a `--cdp-endpoint` browser replaced since the last call, once: the
    /// observation (or the error's hint) of the call that met it says it.
    pub fn take_replaced_notice(&mut self) -> Option<String> {
        self.browser.replaced_unsaid.take()
    }

    /// browser_status `browserLost`: why the `--cdp-endpoint` browser went away, until the
    /// next call that needs one connects again.
    pub fn lost_endpoint_browser(&self) -> Option<&str> {
        self.browser.lost_endpoint_browser.as_deref()
    }

    /// browser_status `browserReplaced`: how many times the endpoint's browser went away and
    /// was replaced, and why the last time.
    pub fn replacements(&self) -> (u64, Option<&str>) {
        (
            self.browser.replacements.0,
            self.browser.replacements.1.as_deref(),
        )
    }

    /// The agent default timeout (`CHROMATE_AGENT_TIMEOUT`): the bound of the round trips of
    /// tools that never wait (snapshot, find, exists, read, a11y) and of observations.
    pub fn agent_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.config.agent_timeout_ms)
    }

    /// `CHROMATE_TRACE_DIR` (in it, the session's [`ToolSession::namespace`] directory), else
    /// `<session dir>/traces` (docs/mcp.md#traces).
    pub fn trace_root(&self) -> PathBuf {
        match &self.config.trace_dir {
            Some(dir) => {
                let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
                match &self.namespace {
                    Some(namespace) => dir.join(namespace),
                    None => dir,
                }
            }
            None => self.artifacts.dir().join("traces"),
        }
    }

    /// Makes [`ToolSession::trace_root`] exist and returns it. `<session dir>/traces` is chromate's
    /// own: the session directory is created first (exclusively), then `traces/` in it, 0700,
    /// reused only if it is a real directory of ours. A `CHROMATE_TRACE_DIR` is the user's: its
    /// missing parts are created, nothing about it is changed.
    pub fn ensure_trace_root(&mut self) -> std::io::Result<PathBuf> {
        let root = self.trace_root();
        if let (Some(dir), Some(_)) = (&self.config.trace_dir, &self.namespace) {
            // The user's directory as it is; the session's own in it, private.
            std::fs::create_dir_all(dir)?;
            crate::private_fs::ensure_dir(&root)?;
        } else if self.config.trace_dir.is_some() {
            std::fs::create_dir_all(&root)?;
        } else {
            self.artifacts.ensure_dir()?;
            crate::private_fs::ensure_dir(&root)?;
        }
        Ok(root)
    }

    /// `CHROMATE_STATE_DIR`, else `./.chromate/state` (docs/mcp.md#saved-state), made absolute; in it, the
    /// session's [`ToolSession::namespace`] directory when it has one.
    pub fn state_root(&self) -> PathBuf {
        let root = self.working_dir().join(&self.config.state_dir);
        match &self.namespace {
            Some(namespace) => root.join(namespace),
            None => root,
        }
    }

    /// Where relative paths of the running call are measured from, and the directory uploads
    /// may read under: the directory the CLI command ran in (set per call by the session
    /// daemon), else this process's working directory.
    pub fn working_dir(&self) -> PathBuf {
        match &self.call_dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        }
    }

    /// The shutdown hook (docs/mcp.md#run): end any trace, close the browser (kill after
    /// 2 s; a one-shot session's at once), delete the profile. The server bounds the whole
    /// shutdown to 5 s.
    pub fn shutdown<'a>(&'a mut self) -> crate::Boxed<'a, ()> {
        Box::pin(self.shutdown_unboxed())
    }

    async fn shutdown_unboxed(&mut self) {
        // A recording ends with `trace-end` reason shutdown, without zip (docs/mcp.md#traces).
        if let Some(mut recording) = self.trace.take() {
            if let Err(err) = recording.end("shutdown") {
                eprintln!("chromate: trace not ended cleanly: {err}");
            }
        }
        let Some(live) = self.browser.live.take() else {
            return;
        };
        self.browser.next_ref = Some(live.browser.next_ref());
        if let Some(context) = live.context {
            // An isolated session's tabs, cookies and storage go with its context; the shared
            // browser runs on for the other sessions.
            let _ = tokio::time::timeout(Duration::from_secs(5), context.dispose()).await;
            // A connection of the session's own (an HTTP session on a pool) goes with it.
            if let (true, Some(shared)) = (self.browser.owns_connection, &self.browser.shared) {
                let _ = tokio::time::timeout(Duration::from_secs(5), shared.close()).await;
            }
            return;
        }
        if self.config.cdp_endpoint.is_some() {
            // Only chromate's own tabs close; the user's browser keeps running.
            for tab in &live.tabs {
                if live
                    .own_targets
                    .iter()
                    .any(|target| target == tab.page.target_id())
                {
                    let _ = live.browser.close_page(&tab.page).await;
                }
            }
        }
        let Live { browser, tabs, .. } = live;
        drop(tabs);
        if self.one_shot {
            // A download still in flight gets an observation's grace before the kill (docs/mcp.md#downloads).
            browser.wait_for_downloads(DOWNLOAD_SETTLE).await;
            browser.kill().await;
        } else {
            browser.close().await;
        }
    }
}

/// How long one try at opening the tab that replaces a crashed one may take, and how many tries
/// are made.
const CRASH_REPLACEMENT_OPEN: Duration = Duration::from_secs(5);
const CRASH_REPLACEMENT_TRIES: usize = 3;

/// How long an observation waits for downloads in flight to end (docs/mcp.md#downloads).
const DOWNLOAD_SETTLE: Duration = Duration::from_secs(2);

mod browser;
mod observe;
mod refusals;
mod tabs;

pub use browser::SessionBrowser;
pub use browser::{CrashedTab, Live, Tab};
pub use observe::{Shown, Tripwire};
pub use refusals::Refusal;
pub use tabs::tab_argument;

#[cfg(test)]
mod tests;
