//! The tool backend: state one MCP session holds across tool calls.
//!
//! Owns: the configuration, the artifact store, the mock table, the log
//! journal's cursor, the trace state, and the two hooks the server calls
//! around tools: [`Session::observe`] after a successful observation-bearing
//! call (§8) and [`Session::shutdown`] at exit (§1.5). Does not own a browser
//! yet: the engine is wired in here later (a `browser: Option<…>` launched
//! lazily by the first tool that needs a page), and until then both hooks
//! have nothing to do.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::artifacts::ArtifactStore;
use crate::config::Config;
use crate::error::Observation;
use crate::tools::{Cancel, MockTable};

/// The log journal as the MCP layer sees it (§10). Capture itself belongs to
/// the engine; before a browser has run the journal is empty.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// Highest `seq` issued (0 initially); never reset.
    pub(crate) cursor: u64,
    /// False until a browser has run.
    pub(crate) capturing: bool,
}

/// An active trace recording (§11.6). Recording needs the engine, so in this
/// build nothing ever starts one; the type is here so `status`/`stop` read
/// real state.
#[derive(Debug)]
pub(crate) struct TraceRecording {
    pub(crate) name: String,
    pub(crate) out_dir: PathBuf,
    pub(crate) started_at: String,
    pub(crate) events: u64,
}

/// Server-held state for one session.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) config: Config,
    pub(crate) server_pid: u32,
    pub(crate) artifacts: ArtifactStore,
    pub(crate) mocks: MockTable,
    pub(crate) journal: Journal,
    pub(crate) trace: Option<TraceRecording>,
}

impl Session {
    pub(crate) fn new(config: Config) -> Session {
        let server_pid = std::process::id();
        let artifacts = ArtifactStore::new(
            &config.artifacts_root,
            server_pid,
            SystemTime::now(),
            config.limits,
        );
        Session {
            config,
            server_pid,
            artifacts,
            mocks: MockTable::default(),
            journal: Journal::default(),
            trace: None,
        }
    }

    /// `CHROMATE_TRACE_DIR`, else `<session dir>/traces` (§11.6).
    pub(crate) fn trace_root(&self) -> PathBuf {
        match &self.config.trace_dir {
            Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
            None => self.artifacts.dir().join("traces"),
        }
    }

    /// `CHROMATE_STATE_DIR`, else `./.chromate/state` (§11.2), made absolute.
    pub(crate) fn state_root(&self) -> PathBuf {
        let dir = &self.config.state_dir;
        std::path::absolute(dir).unwrap_or_else(|_| dir.clone())
    }

    /// The observation hook (§8): called by the server after a successful
    /// call of an observation-bearing tool that did not attach its own.
    /// Returns `None` when there is nothing to observe: with no browser there
    /// is no page and, with capture off, no tripwire. The engine wiring
    /// replaces the body with: settle, snapshot, diff against the baseline,
    /// tripwire; it must stop early when `cancel` fires.
    pub(crate) async fn observe(&mut self, cancel: &Cancel) -> Option<Observation> {
        if cancel.is_cancelled() {
            return None;
        }
        None
    }

    /// The shutdown hook (§1.5): end any trace, close the browser (kill after
    /// 2 s), delete the profile. The server bounds the whole shutdown to 5 s.
    pub(crate) async fn shutdown(&mut self) {
        // No recording can be active in this build, and there is no browser.
        self.trace = None;
    }
}
