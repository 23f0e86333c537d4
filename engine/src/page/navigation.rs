//! Navigations and their waits: `goto`, reload, history steps, and the wait for a document to
//! reach a load state (`commit`, `domcontentloaded`, `load`, `networkidle`).
//!
//! Waits are armed before the action that triggers them: lifecycle events are recorded per
//! loader id, so an event that arrives before the waiter looks is still there. `networkidle` is
//! chromate's own: `load`, then 500 ms without a request in flight in the page or its frames,
//! counted from the Network events (Chrome's `networkIdle` lifecycle event fires once per
//! document and misses fetches started later).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::state::{strip_fragment, Lifecycle, NavMark};
use super::Page;
use crate::cdp::page as cdp_page;
use crate::error::{Error, Result};
use crate::rt::lock;
use crate::wait::changes::{self, Check, Waited};

/// How long the stop of a navigation the server has not answered may wait for its answer (the
/// browser answers at once: it cancels the request itself).
const STOP_LOADING: Duration = Duration::from_millis(500);

/// What a navigation waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaitUntil {
    /// The new document is committed.
    Commit,
    /// `DOMContentLoaded` fired in the new document.
    DomContentLoaded,
    /// `load` fired in the new document.
    #[default]
    Load,
    /// `load` fired and the network has been idle for 500 ms.
    NetworkIdle,
}

impl WaitUntil {
    /// The contract's name of the state.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitUntil::Commit => "commit",
            WaitUntil::DomContentLoaded => "domcontentloaded",
            WaitUntil::Load => "load",
            WaitUntil::NetworkIdle => "networkidle",
        }
    }

    fn reached(self, lifecycle: &HashSet<Lifecycle>, committed: bool) -> bool {
        match self {
            WaitUntil::Commit => committed,
            WaitUntil::DomContentLoaded => lifecycle.contains(&Lifecycle::DomContentLoaded),
            WaitUntil::Load => lifecycle.contains(&Lifecycle::Load),
            // And the network quiet for 500 ms, which `wait_for_loader` checks with the page's
            // network activity.
            WaitUntil::NetworkIdle => lifecycle.contains(&Lifecycle::Load),
        }
    }
}

/// The result of a navigation.
#[derive(Debug, Clone, PartialEq)]
pub struct NavigationResult {
    /// The URL the frame ended on.
    pub url: String,
    /// The main response's HTTP status, if the document came over HTTP.
    pub status: Option<u16>,
    /// The loader id of the new document (`None` for same-document navigations).
    pub loader_id: Option<String>,
}

impl Page {
    /// Navigates the main frame to `url` and waits for `wait_until` of the new document.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// use std::time::Duration;
    /// let nav = page.goto("http://127.0.0.1:8080/", chromate::WaitUntil::Load, Duration::from_secs(30)).await?;
    /// println!("{} answered {:?}", nav.url, nav.status);
    /// # Ok(()) }
    /// ```
    pub fn goto<'a>(
        &'a self,
        url: &'a str,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> crate::rt::Boxed<'a, Result<NavigationResult>> {
        Box::pin(self.goto_unboxed(url, wait_until, timeout))
    }

    async fn goto_unboxed(
        &self,
        url: &str,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let deadline = crate::wait::Deadline::new(timeout);
        self.under(deadline, self.goto_now(url, wait_until, timeout))
            .await
    }

    async fn goto_now(
        &self,
        url: &str,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let deadline = Instant::now() + timeout;
        let load_timeout = || Error::TimeoutWaitingLoad {
            state: wait_until.as_str().into(),
            url: url.into(),
            timeout,
        };
        // Within the navigation's own deadline: a browser that answers nothing does not make
        // the probe overshoot it.
        let _ = tokio::time::timeout_at(deadline.into(), self.stop_script_if_busy()).await;
        let params = cdp_page::NavigateParams::new(url);
        // The load deadline, not the command timeout, decides: give the command a second more.
        let navigate = self
            .session
            .send_with_timeout(&params, timeout + Duration::from_secs(1));
        let answer =
            match tokio::time::timeout_at(deadline.into(), self.unless_dialog(navigate)).await {
                Ok(Err(Error::NoAnswer { .. })) | Err(_) => {
                    // No answer yet: the server has not answered (or is slow to). The browser
                    // holds every later command of this tab until the navigation commits, so it
                    // is stopped: the tab keeps its document and answers again.
                    // Written now, before any later command of the tab, but not waited for:
                    // the call ends at its deadline, and a browser that does not answer
                    // (stopped) would only hold it up.
                    let session = self.session.clone();
                    let mut stop = Box::pin(async move {
                        let stop = cdp_page::StopLoadingParams::default();
                        let _ = session.send_with_timeout(&stop, STOP_LOADING).await;
                    });
                    if futures::future::poll_immediate(&mut stop).await.is_none() {
                        tokio::spawn(stop);
                    }
                    return Err(load_timeout());
                }
                Ok(answer) => answer?,
            };
        if let Some(net_error) = answer.error_text.filter(|e| !e.is_empty()) {
            return Err(Error::NavigationFailed {
                url: url.to_string(),
                net_error,
            });
        }
        let frame_id = answer.frame_id.0;
        let Some(loader_id) = answer.loader_id.map(|l| l.0) else {
            // Same-document navigation: nothing to load.
            return Ok(NavigationResult {
                url: self.url(),
                status: None,
                loader_id: None,
            });
        };
        self.wait_for_loader(&frame_id, &loader_id, wait_until, url, deadline, timeout)
            .await
    }

    /// Waits until the frame's document `loader_id` (or a document that replaced it: when the
    /// page navigates itself while loading — a client redirect, a form submitted from a
    /// script, a move to a `blob:` URL — the wait follows the newer navigation, and fails at
    /// once if that one fails) reaches `wait_until`.
    async fn wait_for_loader(
        &self,
        frame_id: &str,
        loader_id: &str,
        wait_until: WaitUntil,
        url: &str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let mut version = self.shared.version.subscribe();
        let mut loader = loader_id.to_owned();
        let mut url = url.to_owned();
        // How many newer navigations the wait followed: a page that keeps navigating itself is
        // not followed for ever.
        let mut followed = 0;
        // `Done(None)`: the connection closed (its reason is read after the check).
        let waited = changes::until(&mut version, deadline.into(), || {
            let state = lock(&self.shared.state);
            // Only a document that never got there is followed: a restored back/forward
            // document has reached every state although later navigations started.
            let ours_reached = state.frames.get(frame_id).is_some_and(|frame| {
                frame.loader_id.as_deref() == Some(loader.as_str())
                    && wait_until.reached(
                        &frame.lifecycle,
                        frame.lifecycle.contains(&Lifecycle::Commit),
                    )
            });
            if !ours_reached {
                if let Some((next_loader, next_url)) = state.newer_navigation(frame_id, &loader) {
                    loader = next_loader;
                    url = next_url;
                    followed += 1;
                    if followed >= crate::page::DOCUMENT_CHANGES {
                        return Check::Done(Some(Err(Error::DocumentKeepsChanging {
                            changes: followed,
                        })));
                    }
                }
            }
            let loader_id = loader.as_str();
            if let Some(gone) = state.gone_error() {
                return Check::Done(Some(Err(gone)));
            }
            if let Some((_, net_error)) = state.doc_failed.iter().find(|(l, _)| l == loader_id) {
                return Check::Done(Some(Err(Error::NavigationFailed {
                    url: url.clone(),
                    net_error: net_error.clone(),
                })));
            }
            // When the network will have been quiet long enough, if that is all that is missing.
            let mut quiet_at = None;
            if let Some(frame) = state.frames.get(frame_id) {
                let current = frame.loader_id.as_deref();
                let committed =
                    current == Some(loader_id) && frame.lifecycle.contains(&Lifecycle::Commit);
                let idle = match wait_until {
                    WaitUntil::NetworkIdle => state.network.idle(frame.loaded_at, Instant::now()),
                    _ => Ok(()),
                };
                let reached =
                    current == Some(loader_id) && wait_until.reached(&frame.lifecycle, committed);
                if reached && idle.is_ok() {
                    let status = state
                        .doc_status
                        .iter()
                        .rev()
                        .find(|(l, _)| l == loader_id)
                        .map(|(_, s)| *s);
                    return Check::Done(Some(Ok(NavigationResult {
                        url: frame.url.clone(),
                        status,
                        loader_id: Some(loader_id.to_string()),
                    })));
                }
                if reached {
                    quiet_at = idle.err().flatten();
                }
            }
            if let Some(dialog) = state
                .dialog
                .as_ref()
                .filter(|_| wait_until != WaitUntil::Commit)
            {
                return Check::Done(Some(Err(Error::DialogOpen {
                    message: dialog.message.clone(),
                })));
            }
            if self.session.conn.is_closed() {
                return Check::Done(None);
            }
            // Woken by any state change, or when the quiet window closes (to look again).
            match quiet_at {
                Some(at) => Check::PendingUntil(at.into()),
                None => Check::Pending,
            }
        })
        .await;
        match waited {
            Waited::Done(Some(result)) => result,
            Waited::Done(None) => Err(Error::ConnectionClosed {
                reason: self.session.conn.closed().await,
            }),
            Waited::Gone => Err(Error::PageClosed),
            Waited::TimedOut => Err(Error::TimeoutWaitingLoad {
                state: wait_until.as_str().into(),
                url,
                timeout,
            }),
        }
    }

    /// Waits until the current main document has reached `state` (it may already have).
    pub async fn wait_for_load_state(&self, state: WaitUntil, timeout: Duration) -> Result<()> {
        let deadline = crate::wait::Deadline::new(timeout);
        self.under(deadline, self.wait_for_load_state_now(state, timeout))
            .await
    }

    async fn wait_for_load_state_now(&self, state: WaitUntil, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let (frame_id, loader_id) = {
            let s = lock(&self.shared.state);
            let frame_id = s.main_frame.clone().ok_or(Error::PageClosed)?;
            let loader = s
                .frames
                .get(&frame_id)
                .and_then(|f| f.loader_id.clone())
                .unwrap_or_default();
            (frame_id, loader)
        };
        let url = self.url();
        self.wait_for_loader(&frame_id, &loader_id, state, &url, deadline, timeout)
            .await
            .map(|_| ())
    }

    /// Reloads the page and waits for `wait_until`.
    pub async fn reload(
        &self,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let before = self.document_id();
        let reload = async {
            self.session
                .send(&cdp_page::ReloadParams::default())
                .await?;
            self.wait_for_new_document(before, wait_until, timeout)
                .await
        };
        self.under(crate::wait::Deadline::new(timeout), reload)
            .await
    }

    /// Goes back in history; `Ok(None)` if there is no entry to go back to. A browser chromate
    /// launched has no back/forward cache, so the page is loaded again; one it connected to may
    /// bring back the document as it was left.
    pub async fn back(
        &self,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<Option<NavigationResult>> {
        self.history_step(-1, wait_until, timeout).await
    }

    /// Goes forward in history; `Ok(None)` if there is no entry to go forward to.
    pub async fn forward(
        &self,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<Option<NavigationResult>> {
        self.history_step(1, wait_until, timeout).await
    }

    async fn history_step(
        &self,
        delta: i64,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<Option<NavigationResult>> {
        let step = self.history_step_now(delta, wait_until, timeout);
        self.under(crate::wait::Deadline::new(timeout), step).await
    }

    async fn history_step_now(
        &self,
        delta: i64,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<Option<NavigationResult>> {
        let history = self
            .session
            .send(&cdp_page::GetNavigationHistoryParams::default())
            .await?;
        let index = history.current_index + delta;
        let Some(entry) = usize::try_from(index)
            .ok()
            .and_then(|i| history.entries.get(i))
        else {
            return Ok(None);
        };
        let before = self.document_id();
        let same_document = {
            let current = usize::try_from(history.current_index)
                .ok()
                .and_then(|i| history.entries.get(i));
            current.is_some_and(|c| strip_fragment(&c.url) == strip_fragment(&entry.url))
        };
        self.session
            .send(&cdp_page::NavigateToHistoryEntryParams::new(entry.id))
            .await?;
        if same_document {
            return Ok(Some(NavigationResult {
                url: entry.url.clone(),
                status: None,
                loader_id: before,
            }));
        }
        self.wait_for_new_document(before, wait_until, timeout)
            .await
            .map(Some)
    }

    /// The main frame's navigation mark now (for the click and Enter fences).
    pub(crate) fn nav_mark(&self) -> NavMark {
        let state = lock(&self.shared.state);
        let mut mark = state.nav.clone();
        mark.loader_id = state.main().and_then(|f| f.loader_id.clone());
        mark
    }

    /// Whether the main frame's current document has fired `load`.
    pub(crate) fn main_loaded(&self) -> bool {
        let state = lock(&self.shared.state);
        state
            .main()
            .is_some_and(|f| f.lifecycle.contains(&Lifecycle::Load))
    }

    /// How long the page and its frames have had no request in flight (`Duration::MAX`: none
    /// was ever seen); `None` while one is in flight.
    pub(crate) fn network_quiet_for(&self) -> Option<Duration> {
        lock(&self.shared.state).network.quiet_for(Instant::now())
    }

    /// A receiver that changes whenever page state moves (frames, lifecycle, dialogs).
    pub(crate) fn state_changes(&self) -> watch::Receiver<u64> {
        self.shared.version.subscribe()
    }

    /// Waits for a main-frame document other than `before` to reach `wait_until`.
    pub(crate) async fn wait_for_new_document(
        &self,
        before: Option<String>,
        wait_until: WaitUntil,
        timeout: Duration,
    ) -> Result<NavigationResult> {
        let deadline = Instant::now() + timeout;
        let mut version = self.shared.version.subscribe();
        let waited = changes::until(&mut version, deadline.into(), || {
            let s = lock(&self.shared.state);
            let frame = s
                .main_frame
                .as_ref()
                .and_then(|id| s.frames.get(id).map(|f| (id.clone(), f)));
            match frame {
                Some((id, f)) if f.loader_id != before => match f.loader_id.clone() {
                    Some(loader_id) => Check::Done((id, loader_id)),
                    None => Check::Pending,
                },
                _ => Check::Pending,
            }
        })
        .await;
        match waited {
            Waited::Done((frame_id, loader_id)) => {
                let url = self.url();
                self.wait_for_loader(&frame_id, &loader_id, wait_until, &url, deadline, timeout)
                    .await
            }
            Waited::Gone => Err(Error::PageClosed),
            Waited::TimedOut => Err(Error::TimeoutWaitingLoad {
                state: wait_until.as_str().into(),
                url: self.url(),
                timeout,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::{Lifecycle, WaitUntil};

    #[test]
    fn each_load_state_is_reached_by_its_lifecycle_point() {
        let of = |points: &[Lifecycle]| points.iter().copied().collect::<HashSet<_>>();
        let none = of(&[]);
        let dom = of(&[Lifecycle::DomContentLoaded]);
        let load = of(&[Lifecycle::DomContentLoaded, Lifecycle::Load]);
        assert!(WaitUntil::Commit.reached(&none, true));
        assert!(!WaitUntil::Commit.reached(&load, false));
        assert!(WaitUntil::DomContentLoaded.reached(&dom, true));
        assert!(!WaitUntil::Load.reached(&dom, true));
        assert!(WaitUntil::Load.reached(&load, true));
        assert!(WaitUntil::NetworkIdle.reached(&load, true));
        assert!(!WaitUntil::NetworkIdle.reached(&of(&[Lifecycle::NetworkIdle]), true));
    }
}
