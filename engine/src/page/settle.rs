//! The wait after a navigation's `load` ([`Page::wait_for_settled`], `docs/mcp.md#observations`):
//! until the page has nothing left that is about to change it, so that the observation an
//! agent reads already holds what the page's script fills in right after `load` (a search
//! showing its results), without a fixed quiet window on every page.
//!
//! What the page is doing is read, not guessed from elapsed time: requests in flight (the page's
//! network state, kept from CDP events), its short timers and animation frames not yet run and the
//! answers to its requests its handlers have not yet had (`js/pending.js`, in the main world: CDP
//! can report a request's end before the page's handler of it runs), and elements added or removed
//! from `DOMContentLoaded` on (`js/settle.js`, in chromate's world). A page with none of these
//! pending and none of them seen since the wait began is done at the first check; one that was at
//! work is done once nothing is pending and nothing moved for the grace window. When only the network was at work, the page is
//! asked instead of waited out: its event loop runs a few more tasks (`settle.turn`), which is
//! where a response's handler acts, and if nothing moved meanwhile it is done. The cap bounds a
//! page that never stops (polling, animating, streaming). This module decides when to stop waiting;
//! it changes nothing on the page.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::cdp::runtime;
use crate::error::Result;
use crate::page::Page;
use crate::wait::{Deadline, Poller};

/// The grace after work seen during the wait after `load` ([`Page::wait_for_settled`]): nothing
/// pending and nothing moved for this long. It covers the tasks between a response arriving and
/// the script acting on it (reading the body, then the next fetch or the DOM).
pub const SETTLE_WINDOW: Duration = Duration::from_millis(50);
/// The most the wait after `load` lasts, whatever the page keeps doing.
pub const SETTLE_CAP: Duration = Duration::from_millis(1500);

/// How often the page is checked while it is at work.
const CHECK_EVERY: Duration = Duration::from_millis(10);

/// What [`Page::wait_for_settled`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settled {
    /// How long the wait took.
    pub waited: Duration,
    /// Whether the page came to rest (else the cap ended the wait).
    pub quiet: bool,
    /// Mutations of the document that added or removed elements, since it was parsed
    /// (`DOMContentLoaded`).
    pub mutations: u64,
    /// How many times the page was checked: 1 when nothing was pending at the start.
    pub checks: u32,
}

/// `settle.watch`'s answer (`js/settle.js`).
#[derive(Debug, Deserialize)]
struct Watch {
    count: u64,
    #[serde(rename = "sinceMs")]
    since_ms: f64,
}

/// The main world's answer (`js/pending.js`): `null` where the script does not run.
#[derive(Debug, Default, Deserialize)]
struct Pending {
    pending: u64,
    /// Milliseconds since a counted callback last ran; negative: none has.
    #[serde(rename = "sinceMs")]
    since_ms: f64,
}

/// Whether work last seen `quiet` ago has been still since the wait began, the wait being `age`
/// old when `quiet` was read, or for the whole `window`. A page reads its own clock somewhere
/// between a call's sending and its reply, so its answers go with the wait's age when the call
/// was sent: taken at the reply, the reply's way back (tens of milliseconds on a busy machine)
/// would make a document last changed just before `load` look changed during the wait.
fn still(quiet: Duration, age: Duration, window: Duration) -> bool {
    quiet >= age || quiet >= window
}

/// Milliseconds from a page script as a duration (`None` for a negative or absurd value).
fn millis(ms: f64) -> Option<Duration> {
    (ms >= 0.0)
        .then(|| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .flatten()
}

impl Page {
    /// The wait after `load`: returns once the page has no request in flight, no short timer
    /// or animation frame pending (`setTimeout` of at most 500 ms, `requestAnimationFrame`,
    /// three generations deep) and, if any of these or an element added or removed was seen
    /// since the wait began, nothing of the kind for `window` (when only requests were seen:
    /// nothing of the kind while the page runs a few more tasks); or once `cap` has passed. A
    /// page with nothing pending at `load` costs one check (one round trip to its renderer).
    /// Text and attribute changes alone (a ticking clock) are not work; neither are intervals.
    /// A page whose script keeps the main thread busy is checked once it yields.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let settled = page
    ///     .wait_for_settled(chromate::page::SETTLE_WINDOW, chromate::page::SETTLE_CAP)
    ///     .await?;
    /// println!("settled after {:?}: {}", settled.waited, settled.quiet);
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_settled(&self, window: Duration, cap: Duration) -> Result<Settled> {
        let deadline = Deadline::new(cap);
        let mut poller = Poller::new(deadline, CHECK_EVERY);
        let mut mutations = 0;
        let mut checks = 0;
        while poller.next().await {
            checks += 1;
            // The page reads its own clock while these calls run, between `asked` and their
            // replies: what it reports as still is compared with the wait's age at `asked`.
            let asked = deadline.start().elapsed();
            let (watch, pending) = tokio::join!(
                self.call_isolated(None, "settle.watch", &Value::Null),
                self.main_world_pending(),
            );
            let watch: Watch =
                serde_json::from_value(watch?).map_err(|source| crate::Error::Decode {
                    method: "settle.watch".to_string(),
                    source,
                })?;
            mutations = watch.count;
            // The network is read on chromate's clock: the wait's age is taken first, so that
            // what was quiet when the wait began reads as quiet for at least that long.
            let elapsed = deadline.start().elapsed();
            let network_quiet = self.network_quiet_for();
            if network_quiet.is_none() || pending.pending > 0 {
                continue;
            }
            // How long each kind of work has been still: a kind that moved since the wait
            // began has been still for less than the wait's age when it was read.
            let network = network_quiet.unwrap_or(Duration::ZERO);
            let timers = millis(pending.since_ms).unwrap_or(Duration::MAX);
            let dom = millis(watch.since_ms).unwrap_or(Duration::ZERO);
            let page_still = still(timers, asked, window) && still(dom, asked, window);
            // Only the network was at work lately: whatever its responses start happens within
            // a few tasks, so the page is asked instead of waited out. A page whose own script
            // was at work (elements, timers) may go on without a request: it gets the window.
            let done = if still(network, elapsed, window) {
                page_still
            } else {
                page_still && self.still_after_turns(&watch).await?
            };
            if done {
                return Ok(Settled {
                    waited: deadline.start().elapsed(),
                    quiet: true,
                    mutations,
                    checks,
                });
            }
        }
        Ok(Settled {
            waited: deadline.start().elapsed(),
            quiet: false,
            mutations,
            checks,
        })
    }

    /// With nothing pending but work seen moments ago (`before`, the last watch): whether the
    /// page stays still while its event loop runs a few more tasks (`settle.turn`): no request
    /// started or ended, no counted timer or frame ran or is pending, no element was added or
    /// removed. A response's handler acts within those tasks, so a page that did not is done,
    /// without waiting out the grace window.
    async fn still_after_turns(&self, before: &Watch) -> Result<bool> {
        let started = std::time::Instant::now();
        let after = self
            .call_isolated(None, "settle.turn", &Value::Null)
            .await?;
        let after: Watch =
            serde_json::from_value(after).map_err(|source| crate::Error::Decode {
                method: "settle.turn".to_string(),
                source,
            })?;
        let pending = self.main_world_pending().await;
        let turned = started.elapsed();
        let network_still = self
            .network_quiet_for()
            .is_some_and(|quiet| quiet >= turned);
        let timers_still =
            pending.pending == 0 && millis(pending.since_ms).is_none_or(|since| since >= turned);
        Ok(network_still && timers_still && after.count == before.count)
    }

    /// The main world's pending timers, frames and answers (`js/pending.js`); none where it
    /// cannot answer (a document it does not run in, one that is going away).
    async fn main_world_pending(&self) -> Pending {
        let params = runtime::EvaluateParams::new(crate::js::PENDING_READ).return_by_value(true);
        let Ok(answer) = self.unless_dialog(self.session().send(&params)).await else {
            return Pending::default();
        };
        if answer.exception_details.is_some() {
            return Pending::default();
        }
        answer
            .result
            .value
            .and_then(|value| serde_json::from_value::<Option<Pending>>(value).ok())
            .flatten()
            .unwrap_or_default()
    }
}
