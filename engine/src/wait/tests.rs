//! The retry schedule of §9.2.

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
    let deadline = Deadline::new(Duration::from_millis(60));
    let mut poller = Poller::new(deadline, POLL_EVERY);
    let start = Instant::now();
    let mut seen = Vec::new();
    while poller.next().await {
        seen.push(start.elapsed());
    }
    assert!(seen.len() >= 2 && seen.len() <= 4, "{seen:?}");
    assert!(seen[0] < Duration::from_millis(10), "{seen:?}");
    assert!(
        *seen.last().expect("a check") >= Duration::from_millis(50),
        "{seen:?}"
    );
}
