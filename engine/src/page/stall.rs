//! Calls on a page that stopped answering: [`Page::within`] runs engine calls under one
//! deadline, and when such a call runs out of time [`Page::free_if_stuck`] finds out whether the
//! page's script is what did not yield and, if so, stops it, so the tab works again.
//!
//! The check is cheap round trips with short bounds: a probe (`Runtime.evaluate("0")` in the main
//! world, which runs on the renderer's main thread), sent together with `Browser.getVersion` so
//! that a browser that does not answer at all is known at once, and, only when the probe gets no
//! answer, `Runtime.terminateExecution` (which interrupts running script from the renderer's IO
//! thread) and a second probe. A page that answers the probe is only slow (a promise that never
//! settles, a load that takes long): nothing is stopped. Termination is never sent to an idle page,
//! whose next script it would stop. When even termination gets no answer, `Browser.getVersion` is
//! asked again to tell a stuck renderer from a browser that stopped answering meanwhile (stopped
//! with SIGSTOP, overloaded). A dialog blocks the main thread by design: it is reported by the
//! calls themselves, never "freed" here.
//!
//! This module does not map errors for its callers; it wraps the call's own timeout in
//! [`Error::Stalled`] with the [`Recovery`] that says what happened.

use std::time::Duration;

use super::Page;
use crate::cdp::{browser as cdp_browser, runtime};
use crate::error::{Error, Recovery, Result};
use crate::session::Session;
use crate::wait::Deadline;

/// How long the responsiveness probe waits for its answer.
const PROBE: Duration = Duration::from_millis(300);
/// How long `Runtime.terminateExecution` may take to stop the running script.
const TERMINATE: Duration = Duration::from_millis(500);

impl Page {
    /// Runs `fut` (engine calls on this page) under one deadline of `timeout`: every CDP command
    /// it sends is bounded by that deadline instead of the 30 s command timeout. If it then
    /// fails with a timeout while the page's script does not yield, chromate stops the script
    /// and the error is [`Error::Stalled`] (its code is the call's own timeout code) saying so.
    /// Element actions and navigations already run this way under their own timeout.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// use std::time::Duration;
    /// let snapshot = page
    ///     .within(Duration::from_secs(5), page.snapshot(Default::default()))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn within<T>(
        &self,
        timeout: Duration,
        fut: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        self.under(Deadline::new(timeout), fut).await
    }

    /// [`Page::within`] with a deadline already running. Only the outermost call frees the
    /// page, once, after everything inside it has given up.
    pub(crate) async fn under<T>(
        &self,
        deadline: Deadline,
        fut: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        let outermost = crate::wait::current().is_none();
        // Boxed: verbs nest (check clicks), and each level would otherwise hold the whole
        // future of the level below inline, which overflows a debug build's stack.
        match deadline.bound(Box::pin(fut)).await {
            Err(err) if outermost && err.is_timeout() && err.recovery().is_none() => {
                match self.free_if_stuck(deadline.timeout()).await {
                    Some(recovery) => Err(Error::Stalled {
                        error: Box::new(err),
                        recovery,
                    }),
                    None => Err(err),
                }
            }
            other => other,
        }
    }

    /// After a call on this page timed out: `None` if the page answers (it is only slow),
    /// else what was found and done (see the module doc).
    pub(crate) fn free_if_stuck<'a>(
        &'a self,
        waited: Duration,
    ) -> crate::rt::Boxed<'a, Option<Recovery>> {
        Box::pin(self.free_if_stuck_unboxed(waited))
    }

    async fn free_if_stuck_unboxed(&self, waited: Duration) -> Option<Recovery> {
        if self.is_closed() || self.dialog().is_some() {
            return None;
        }
        // The browser is asked at the same time as the page: one that does not answer either
        // (stopped) is known after one probe, not after a termination that cannot arrive.
        let browser = Session::new(self.session.conn.clone(), None);
        let version = browser.send_with_timeout(&cdp_browser::GetVersionParams::default(), PROBE);
        let answered = self.answered_so_far();
        let (answers, version) = tokio::join!(self.answers(), version);
        // A page still answering what was queued before the probe (a long run of key events)
        // is working, only behind: slow, not stuck.
        if answers || self.answered_so_far() > answered {
            return None;
        }
        if matches!(
            version,
            Err(Error::CommandTimeout { .. } | Error::NoAnswer { .. })
        ) {
            return Some(Recovery::BrowserUnresponsive { waited });
        }
        Some(self.stop_script(waited).await)
    }

    /// Stops the script running in the page now (`Runtime.terminateExecution`), for a caller
    /// that knows one runs past its deadline (an audit still going, even if it yields now and
    /// then): the script stopped, or what kept it from being stopped. Sent to an idle page it
    /// stops the page's next script, so only send it when a script is known to run.
    pub async fn stop_script(&self, waited: Duration) -> Recovery {
        let terminate = self
            .session
            .send_with_timeout(&runtime::TerminateExecutionParams::default(), TERMINATE);
        let terminate = tokio::time::timeout(TERMINATE, terminate)
            .await
            .unwrap_or(Err(Error::NoAnswer {
                method: "Runtime.terminateExecution".into(),
                timeout: TERMINATE,
            }));
        match terminate {
            // A protocol error is an answer too (a termination already in progress).
            Ok(_) | Err(Error::Protocol { .. }) => {
                if self.answers().await {
                    Recovery::ScriptStopped { waited }
                } else {
                    Recovery::RendererStuck { waited }
                }
            }
            Err(_) => {
                let browser = Session::new(self.session.conn.clone(), None);
                let version =
                    browser.send_with_timeout(&cdp_browser::GetVersionParams::default(), PROBE);
                if matches!(tokio::time::timeout(PROBE, version).await, Ok(Ok(_))) {
                    Recovery::RendererStuck { waited }
                } else {
                    Recovery::BrowserUnresponsive { waited }
                }
            }
        }
    }

    /// How many answers the page's session has sent so far.
    fn answered_so_far(&self) -> u64 {
        self.session
            .id
            .as_deref()
            .map_or(0, |id| self.session.conn.answers(id))
    }

    /// Before leaving the page: a page whose script does not yield is stopped first, since a
    /// new document of the same site needs the same busy renderer to commit. An idle page
    /// answers the probe at once and is left alone (a termination would stop its next script).
    pub(crate) async fn stop_script_if_busy(&self) {
        if self.is_closed() || self.dialog().is_some() || self.answers().await {
            return;
        }
        // Whatever the outcome, the navigation that follows is bounded by its own deadline.
        self.stop_script(PROBE).await;
    }

    /// Whether the page's main thread answers a trivial script within [`PROBE`] (any answer
    /// counts, an exception or an error too).
    pub(crate) async fn answers(&self) -> bool {
        let probe = runtime::EvaluateParams::new(crate::js::PROBE);
        // Within a call, a command waits for what is left of the call's deadline: the probe's
        // own bound is kept here.
        let answer = tokio::time::timeout(PROBE, self.session.send_with_timeout(&probe, PROBE));
        !matches!(
            answer.await,
            Err(_) | Ok(Err(Error::CommandTimeout { .. } | Error::NoAnswer { .. }))
        )
    }
}
