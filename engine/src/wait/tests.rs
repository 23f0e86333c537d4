//! The retry schedule of element actions (docs/mcp.md#actionability).

use super::*;

fn ms(list: impl Iterator<Item = Duration>) -> Vec<u128> {
    list.map(|d| d.as_millis()).collect()
}

#[test]
fn zero_timeout_checks_once() {
    assert_eq!(ms(schedule(Duration::ZERO, POLL_EVERY)), [0]);
}

#[test]
fn checks_run_every_25ms_and_once_at_the_deadline() {
    assert_eq!(
        ms(schedule(Duration::from_millis(100), POLL_EVERY)),
        [0, 25, 50, 75, 100]
    );
    assert_eq!(
        ms(schedule(Duration::from_millis(60), POLL_EVERY)),
        [0, 25, 50, 60]
    );
    assert_eq!(schedule(DEFAULT_TIMEOUT, POLL_EVERY).count(), 201);
}

#[test]
fn expect_rechecks_every_100ms() {
    assert_eq!(
        ms(schedule(Duration::from_millis(250), EXPECT_EVERY)),
        [0, 100, 200, 250]
    );
}

#[tokio::test]
async fn the_poller_starts_at_once_and_stops_after_the_deadline() {
    // A deadline long enough for a loaded machine, and assertions at fractions of it: the
    // first check comes at once, checks go on to the deadline, none after it.
    let timeout = Duration::from_secs(1);
    let start = Instant::now();
    let deadline = Deadline::new(timeout);
    let mut poller = Poller::new(deadline, POLL_EVERY);
    let mut seen = Vec::new();
    while poller.next().await {
        seen.push(start.elapsed());
    }
    let slots = schedule(timeout, POLL_EVERY).count();
    assert!(seen.len() >= 2 && seen.len() <= slots, "{seen:?}");
    assert!(seen[0] < timeout / 4, "{seen:?}");
    assert!(*seen.last().expect("a check") >= timeout / 2, "{seen:?}");
    assert!(start.elapsed() >= timeout, "stopped before the deadline");
}
