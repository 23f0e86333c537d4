//! Deadlines and the retry schedule of element actions (docs/mcp.md#actionability): a leaf
//! floor of the engine. The waits that read a page (the click navigation wait, the Enter fence,
//! freeing a stuck page) live in `page/`, on top of it.
//!
//! One `Deadline` covers a whole action; `Poller` yields check times on the contract's
//! schedule (an immediate first check, then every 25 ms, and a last check at the deadline).
//! No fixed sleeps: waits sleep until the next slot or until page state changes. This module
//! does not know what is checked (`actions/` does).
//!
//! A deadline also bounds every CDP command sent while its call runs (`Deadline::bound`, read
//! by `command_bound` in the one place commands are sent, `Session`): a renderer that does not
//! answer costs the call its own timeout, not the transport's 30 s. `page/stall.rs` frees a
//! page whose script does not yield once such a call gives up.

pub(crate) mod changes;

use std::time::Duration;

use tokio::time::Instant;

/// The default element-action timeout (`CHROMATE_AGENT_TIMEOUT`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(5000);
/// How long a navigation started by a click is awaited.
pub const NAVIGATION_TIMEOUT: Duration = Duration::from_secs(30);
/// The interval between actionability checks.
pub(crate) const POLL_EVERY: Duration = Duration::from_millis(25);
/// The interval between `expect` re-checks.
pub(crate) const EXPECT_EVERY: Duration = Duration::from_millis(100);

/// The least time a command sent under a deadline gets to answer, however little of the
/// deadline is left: a zero timeout still makes its one check, and the act step that follows a
/// check made just before the deadline still gets its answer.
pub(crate) const MIN_ANSWER: Duration = Duration::from_millis(500);

/// One deadline for a whole call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    start: Instant,
    timeout: Duration,
}

tokio::task_local! {
    /// The deadline of the call the current task runs, if it runs under one.
    static CALL_DEADLINE: Deadline;
}

impl Deadline {
    pub(crate) fn new(timeout: Duration) -> Self {
        Self {
            start: Instant::now(),
            timeout,
        }
    }

    /// When the deadline's call began.
    pub(crate) fn start(&self) -> Instant {
        self.start
    }

    pub(crate) fn at(&self) -> Instant {
        self.start + self.timeout
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `fut` with every CDP command it sends bounded by this deadline (the earlier one
    /// when calls nest): a command gets what is left of it, at least [`MIN_ANSWER`], and at
    /// most its own timeout.
    pub(crate) async fn bound<F: std::future::Future>(self, fut: F) -> F::Output {
        let deadline = match current() {
            Some(outer) if outer.at() < self.at() => outer,
            _ => self,
        };
        CALL_DEADLINE.scope(deadline, fut).await
    }
}

/// Runs `fut` with every CDP command it sends bounded by one deadline of `timeout` (the
/// earlier one when calls nest), for browser-level calls that have no page to free when they
/// give up (opening a tab, installing request rules). Page calls use [`crate::Page::within`], which
/// also frees a page whose script does not yield.
///
/// ```no_run
/// # async fn demo(browser: chromate::Browser) -> chromate::Result<()> {
/// use std::time::Duration;
/// let page = chromate::wait::bounded(Duration::from_secs(5), browser.new_page("about:blank")).await?;
/// # Ok(()) }
/// ```
pub async fn bounded<F: std::future::Future>(timeout: Duration, fut: F) -> F::Output {
    Deadline::new(timeout).bound(fut).await
}

/// The deadline of the call the current task runs, if any.
pub(crate) fn current() -> Option<Deadline> {
    CALL_DEADLINE.try_with(|deadline| *deadline).ok()
}

/// How long a command sent now may wait for its answer: within a call, what is left of the
/// call's deadline (at least [`MIN_ANSWER`]), which may be longer than the command's own
/// `timeout` when the caller asked for it (an eval awaiting a promise for two minutes), and
/// then also that deadline, so its expiry can say which timeout ran out; outside any call, the
/// command's own `timeout`.
pub(crate) fn command_bound(timeout: Duration) -> (Duration, Option<Deadline>) {
    match current() {
        Some(deadline) => {
            let left = deadline
                .at()
                .saturating_duration_since(Instant::now())
                .max(MIN_ANSWER);
            (left, Some(deadline))
        }
        None => (timeout, None),
    }
}

/// The offsets of the checks a wait of `timeout` makes when checking every `every`: 0, then
/// every `every` before the deadline, then the deadline itself.
pub(crate) fn schedule(timeout: Duration, every: Duration) -> impl Iterator<Item = Duration> {
    let mut n = 0u32;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let at = every.saturating_mul(n);
        n += 1;
        if at >= timeout || every.is_zero() {
            done = true;
            return Some(timeout.min(at));
        }
        Some(at)
    })
}

/// Yields check times on [`schedule`], skipping slots that a slow check overran.
pub(crate) struct Poller {
    deadline: Deadline,
    every: Duration,
    checks: u32,
}

impl Poller {
    pub(crate) fn new(deadline: Deadline, every: Duration) -> Self {
        Self {
            deadline,
            every,
            checks: 0,
        }
    }

    /// Waits for the next check slot; `false` once the deadline has been checked.
    pub(crate) async fn next(&mut self) -> bool {
        if self.checks == 0 {
            self.checks = 1;
            return true;
        }
        let elapsed = self.deadline.start.elapsed();
        let slot = schedule(self.deadline.timeout, self.every)
            .enumerate()
            .find(|(i, at)| {
                *i as u32 >= self.checks && (*at >= elapsed || *at == self.deadline.timeout)
            });
        let Some((index, at)) = slot else {
            return false;
        };
        if elapsed > self.deadline.timeout {
            return false;
        }
        self.checks = index as u32 + 1;
        tokio::time::sleep_until(self.deadline.start + at).await;
        true
    }

    /// Whether no check has run yet (the next is the immediate first check).
    pub(crate) fn is_first(&self) -> bool {
        self.checks <= 1
    }
}

#[cfg(test)]
mod tests;
