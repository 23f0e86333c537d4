//! The wait after a navigation's `load` ([`Page::wait_for_settled`], `docs/mcp.md#navigation`):
//! until the page has nothing left that is about to change it, so that the observation an
//! agent reads already holds what the page's script fills in right after `load` (a search
//! showing its results), without a fixed quiet window on every page.
//!
//! What the page is doing is read, not guessed from elapsed time: requests in flight (the
//! page's network state, kept from CDP events), its short timers and animation frames not yet
//! run (`js/pending.js`, in the main world), and elements added or removed (`js/settle.js`, in
//! chromate's world). A page with none of these pending and none of them seen since the wait
//! began is done at the first check; one that was at work is done once nothing is pending and
//! nothing moved for the grace window, which covers the few tasks between a response arriving
//! and the script acting on it. The cap bounds a page that never stops (polling, animating,
//! streaming). This module decides when to stop waiting; it changes nothing on the page.

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
    /// Mutations of the document that added or removed elements, since it was created.
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
    /// since the wait began, nothing of the kind for `window`; or once `cap` has passed. A
    /// page with nothing pending at `load` costs one check (one round trip to its renderer).
    /// Text and attribute changes alone (a ticking clock) are not work; neither are intervals.
    /// A page whose script keeps the main thread busy is checked once it yields.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let settled = page
    ///     .wait_for_settled(chromate::SETTLE_WINDOW, chromate::SETTLE_CAP)
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
            let network_quiet = self.network_quiet_for();
            if network_quiet.is_none() || pending.pending > 0 {
                continue;
            }
            // How long each kind of work has been still: a kind that moved since the wait
            // began has been still for less than the wait so far.
            let quiet = [
                network_quiet.unwrap_or(Duration::ZERO),
                millis(pending.since_ms).unwrap_or(Duration::MAX),
                millis(watch.since_ms).unwrap_or(Duration::ZERO),
            ]
            .into_iter()
            .min()
            .unwrap_or(Duration::MAX);
            let elapsed = deadline.start().elapsed();
            if quiet >= elapsed || quiet >= window {
                return Ok(Settled {
                    waited: elapsed,
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

    /// The main world's pending timers and frames (`js/pending.js`); none where it cannot
    /// answer (a document it does not run in, one that is going away).
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
