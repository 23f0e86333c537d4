//! The navigation waits that follow input: the click navigation wait and the Enter fence
//! (docs/mcp.md#navigation-waits). Page-level waits live with the page; `wait/` keeps only the
//! deadlines and the poller they run under.

use std::time::Duration;

use tokio::time::Instant;

use super::{NavMark, Page};
use crate::error::{Error, Result};
use crate::wait::changes::{self, Check, Waited};

/// How long the Enter fence waits for a navigation to start.
const FENCE_START: Duration = Duration::from_millis(140);
/// The Enter fence's hard cap from the key press.
const FENCE_CAP: Duration = Duration::from_millis(500);
/// Quiet time after `load` that the fence waits for a client redirect.
const FENCE_SETTLE: Duration = Duration::from_millis(25);

/// How many documents a click's navigation wait follows without one reaching `load` before it
/// fails [`Error::DocumentKeepsChanging`].
const CLICK_NAVIGATIONS: u64 = 20;

/// After a click's input events were acknowledged: if a cross-document main-frame navigation
/// was requested or started since `before`, waits for the new document's `load` (docs/mcp.md#observations).
pub(crate) async fn wait_for_click_navigation(
    page: &Page,
    before: &NavMark,
    timeout: Duration,
) -> Result<bool> {
    let now = page.nav_mark();
    if now.requests == before.requests && now.loader_id == before.loader_id {
        return Ok(false);
    }
    let deadline = Instant::now() + timeout;
    let mut changes = page.state_changes();
    let waited = changes::until(&mut changes, deadline, || {
        let now = page.nav_mark();
        let new_document = now.loader_id != before.loader_id;
        if new_document && page.main_loaded() {
            return Check::Done(Ok(true));
        }
        // A page that keeps navigating itself never loads: stop following it.
        let documents = now.documents.saturating_sub(before.documents);
        if documents >= CLICK_NAVIGATIONS {
            let changes = u32::try_from(documents).unwrap_or(u32::MAX);
            return Check::Done(Err(Error::DocumentKeepsChanging { changes }));
        }
        // Cancelled (204, download, blocked) navigations stop loading without a new document.
        if !new_document && now.stopped > before.stopped {
            return Check::Done(Ok(false));
        }
        if page.dialog().is_some() || page.is_closed() {
            return Check::Done(Ok(true));
        }
        Check::Pending
    })
    .await;
    match waited {
        Waited::Done(navigated) => navigated,
        Waited::Gone => Err(Error::PageClosed),
        Waited::TimedOut => Err(Error::TimeoutWaitingLoad {
            state: "load".into(),
            url: page.url(),
            timeout,
        }),
    }
}

/// The Enter navigation fence (docs/mcp.md#navigation-waits): `pressed_at` is when the key went down, `before` the mark taken just
/// before. Waits up to 140 ms for a main-frame navigation to start; if one does, waits for its
/// `load` plus 25 ms of quiet, never past 500 ms after the press. Returns whether a navigation
/// was seen.
pub(crate) async fn enter_fence(
    page: &Page,
    before: &NavMark,
    pressed_at: Instant,
) -> Result<bool> {
    let start_by = pressed_at + FENCE_START;
    let cap = pressed_at + FENCE_CAP;
    let mut changes = page.state_changes();
    let mut settle_from: Option<(Instant, Option<String>)> = None;
    // Whether a navigation had started at the last check (what the fence returns at its cap).
    let mut started = false;
    let waited = changes::until(&mut changes, cap, || {
        let now = page.nav_mark();
        if page.dialog().is_some() || page.is_closed() {
            return Check::Done(settle_from.is_some() || now.requests != before.requests);
        }
        started = now.requests != before.requests || now.loader_id != before.loader_id;
        if !started && now.same_document != before.same_document {
            return Check::Done(false);
        }
        let until = if !started {
            start_by
        } else if now.loader_id != before.loader_id && page.main_loaded() {
            match &settle_from {
                Some((_, loader)) if *loader == now.loader_id => {}
                _ => settle_from = Some((Instant::now(), now.loader_id.clone())),
            }
            let settled = settle_from
                .as_ref()
                .map_or(cap, |(at, _)| *at + FENCE_SETTLE);
            if Instant::now() >= settled {
                return Check::Done(true);
            }
            settled.min(cap)
        } else {
            settle_from = None;
            cap
        };
        if Instant::now() >= until {
            return Check::Done(started);
        }
        Check::PendingUntil(until)
    })
    .await;
    match waited {
        Waited::Done(navigated) => Ok(navigated),
        Waited::TimedOut => Ok(started),
        Waited::Gone => Err(Error::PageClosed),
    }
}
