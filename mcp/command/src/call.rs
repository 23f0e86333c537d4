//! What a running call carries besides its arguments: its cancellation signal and its
//! progress, which every front end reads the same way (MCP sends them as
//! `notifications/cancelled` and `notifications/progress`; the CLI daemon cancels a call
//! whose client went away).
//!
//! Owns: [`Cancel`], [`Progress`] and the error a cancelled handler returns. A leaf module:
//! the session and the tools both use it, and it uses neither.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::json;
use tokio::sync::watch;

use crate::error::{ToolError, ToolErrorCode};

/// A cancellation signal a handler checks at its wait and poll points.
#[derive(Debug, Clone)]
pub struct Cancel {
    receiver: watch::Receiver<bool>,
}

impl Cancel {
    pub fn new(receiver: watch::Receiver<bool>) -> Cancel {
        Cancel { receiver }
    }

    pub fn is_cancelled(&self) -> bool {
        *self.receiver.borrow()
    }

    /// Runs `future` unless the call is cancelled first (`None`): the
    /// future is dropped at its next await point.
    pub async fn run<F: std::future::Future>(&self, future: F) -> Option<F::Output> {
        let mut cancel = self.clone();
        tokio::select! {
            output = future => Some(output),
            () = cancel.cancelled() => None,
        }
    }

    /// Resolves once the call is cancelled; pends forever otherwise.
    pub async fn cancelled(&mut self) {
        if self
            .receiver
            .wait_for(|cancelled| *cancelled)
            .await
            .is_err()
        {
            std::future::pending::<()>().await;
        }
    }
}

/// The error a handler returns when it stopped because it was cancelled. The MCP server
/// drops it (a cancelled request gets no response); a session daemon sends it to a command
/// still waiting when `chromate close` or a signal ends the session, so it has a hint like
/// every error.
pub fn cancelled_error(verb: &str) -> ToolError {
    ToolError::new(ToolErrorCode::DriverError, format!("{verb}: cancelled"))
        .with_detail(json!({ "reason": "cancelled" }))
        .with_hint("the call was stopped before it finished (its session was closed); run it again")
}

/// What progress notifications say about the running call.
#[derive(Debug)]
pub struct ProgressState {
    /// `launching browser`, `waiting for css=#save to become enabled`.
    pub phase: String,
    /// browser_batch: (steps done, steps).
    pub steps: Option<(u64, u64)>,
    /// Set when the response has been sent (or dropped): no notification after it.
    pub finished: bool,
    /// The phases set so far (not the first, given to [`Progress::new`]), counted, and the
    /// last [`PHASE_LOG`] of them, for a front end that shows each (`chromate qa-flow`'s
    /// line per step) rather than the latest when it looks.
    pub phases_set: u64,
    pub recent: std::collections::VecDeque<String>,
}

/// The phases a [`Progress`] keeps for [`Progress::phases_since`]: a reader further behind
/// misses the oldest.
pub const PHASE_LOG: usize = 64;

/// A shared handle on a call's [`ProgressState`].
#[derive(Debug, Clone)]
pub struct Progress {
    state: Arc<Mutex<ProgressState>>,
    started: Instant,
    /// Bumped on every change, for a front end that forwards changes as they happen (a
    /// session daemon streaming an audit's progress to its command).
    changed: Arc<watch::Sender<u64>>,
}

impl Progress {
    pub fn new(phase: &str, started: Instant) -> Progress {
        Progress {
            state: Arc::new(Mutex::new(ProgressState {
                phase: phase.to_owned(),
                steps: None,
                finished: false,
                phases_set: 0,
                recent: std::collections::VecDeque::new(),
            })),
            started,
            changed: Arc::new(watch::channel(0).0),
        }
    }

    /// A receiver that sees every change of the phase or the steps.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// The phase now.
    pub fn phase(&self) -> String {
        self.with_state(|state| state.phase.clone())
    }

    /// When the call arrived (progress counts queue time).
    pub fn started(&self) -> Instant {
        self.started
    }

    pub fn set_phase(&self, phase: impl Into<String>) {
        self.with_state(|state| {
            state.phase = phase.into();
            state.phases_set += 1;
            if state.recent.len() == PHASE_LOG {
                state.recent.pop_front();
            }
            state.recent.push_back(state.phase.clone());
        });
        self.changed.send_modify(|n| *n += 1);
    }

    /// Every phase set since the reader's count `seen` (at most the last [`PHASE_LOG`]),
    /// oldest first; `seen` becomes the count now. Two phases set between two looks are
    /// both there, where [`Progress::phase`] has only the second.
    pub fn phases_since(&self, seen: &mut u64) -> Vec<String> {
        self.with_state(|state| {
            let new = state.phases_set.saturating_sub(*seen);
            *seen = state.phases_set;
            let kept = state.recent.len();
            let new = usize::try_from(new).unwrap_or(usize::MAX).min(kept);
            state.recent.iter().skip(kept - new).cloned().collect()
        })
    }

    pub fn set_steps(&self, done: u64, total: u64) {
        self.with_state(|state| state.steps = Some((done, total)));
        self.changed.send_modify(|n| *n += 1);
    }

    /// Runs `f` with the state locked; the server sends notifications and the
    /// final response under this lock so none follows the response.
    pub fn with_state<R>(&self, f: impl FnOnce(&mut ProgressState) -> R) -> R {
        let mut guard = crate::sync::lock(&self.state);
        f(&mut guard)
    }
}
