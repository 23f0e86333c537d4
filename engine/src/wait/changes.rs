//! The one deadline-bounded wait on state kept current by events: check the state, and if the
//! answer is not there yet, wait for it to change (a `watch` counter the state's owner bumps),
//! up to a deadline, then check again.
//!
//! Page navigations, dialogs, the click and Enter fences, a tab's attach and a journal's next
//! entry all wait this way; only what is checked differs. A check may also ask to look again
//! at a time of its own before the deadline (a quiet window that closes without any event).

use tokio::sync::watch;
use tokio::time::Instant;

/// What one check found.
#[derive(Debug)]
pub(crate) enum Check<T> {
    /// The wait is over with `T`.
    Done(T),
    /// Not yet: look again when the state changes.
    Pending,
    /// Not yet: look again when the state changes or at this time, whichever comes first.
    PendingUntil(Instant),
}

/// How a wait ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Waited<T> {
    /// A check was done.
    Done(T),
    /// The deadline passed with no check done.
    TimedOut,
    /// The state's owner is gone (its `watch` sender dropped): nothing will change.
    Gone,
}

/// Runs `check` now and after every change `changes` announces (or the time a check named),
/// until it is done or `deadline` passes. The receiver should be subscribed before whatever
/// makes the change starts, so no change is missed; `check` reads the state itself.
pub(crate) async fn until<V, T>(
    changes: &mut watch::Receiver<V>,
    deadline: Instant,
    mut check: impl FnMut() -> Check<T>,
) -> Waited<T> {
    loop {
        let wake_at = match check() {
            Check::Done(value) => return Waited::Done(value),
            Check::Pending => deadline,
            Check::PendingUntil(at) => at.min(deadline),
        };
        match tokio::time::timeout_at(wake_at, changes.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Waited::Gone,
            Err(_) if wake_at < deadline => {}
            Err(_) => return Waited::TimedOut,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::watch;
    use tokio::time::Instant;

    use super::{until, Check, Waited};

    #[tokio::test]
    async fn a_state_already_there_is_one_check_and_no_wait() {
        let (_tx, mut rx) = watch::channel(0u64);
        let mut checks = 0;
        // A deadline already past: the first check still runs.
        let waited = until(&mut rx, Instant::now(), || {
            checks += 1;
            Check::Done("there")
        })
        .await;
        assert_eq!(waited, Waited::Done("there"));
        assert_eq!(checks, 1);
    }

    #[tokio::test]
    async fn each_change_is_checked_until_one_is_done() {
        let (tx, mut rx) = watch::channel(0u64);
        let state = std::sync::Arc::new(std::sync::Mutex::new(0u64));
        let writer_state = state.clone();
        let writer = tokio::spawn(async move {
            for value in 1..=3 {
                tokio::task::yield_now().await;
                *writer_state.lock().expect("lock") = value;
                tx.send_modify(|v| *v += 1);
            }
            tx
        });
        let mut seen = Vec::new();
        let waited = until(&mut rx, Instant::now() + Duration::from_secs(30), || {
            let value = *state.lock().expect("lock");
            seen.push(value);
            if value == 3 {
                Check::Done(value)
            } else {
                Check::Pending
            }
        })
        .await;
        assert_eq!(waited, Waited::Done(3));
        assert_eq!(seen.first(), Some(&0));
        assert_eq!(seen.last(), Some(&3));
        drop(writer.await.expect("the writer ends"));
    }

    #[tokio::test]
    async fn nothing_changing_ends_at_the_deadline() {
        let (_tx, mut rx) = watch::channel(0u64);
        let mut checks = 0;
        let deadline = Instant::now() + Duration::from_millis(20);
        let waited: Waited<()> = until(&mut rx, deadline, || {
            checks += 1;
            Check::Pending
        })
        .await;
        assert_eq!(waited, Waited::TimedOut);
        assert!(Instant::now() >= deadline);
        // No look again at the deadline itself.
        assert_eq!(checks, 1);
    }

    #[tokio::test]
    async fn a_check_can_ask_to_look_again_before_the_deadline() {
        let (_tx, mut rx) = watch::channel(0u64);
        let start = Instant::now();
        let again_at = start + Duration::from_millis(10);
        let mut checks = 0;
        let waited = until(&mut rx, start + Duration::from_secs(30), || {
            checks += 1;
            if Instant::now() >= again_at {
                Check::Done(checks)
            } else {
                Check::PendingUntil(again_at)
            }
        })
        .await;
        assert_eq!(waited, Waited::Done(2));
        // A time past the deadline is the deadline.
        let deadline = Instant::now() + Duration::from_millis(10);
        let waited: Waited<()> = until(&mut rx, deadline, || {
            Check::PendingUntil(deadline + Duration::from_secs(30))
        })
        .await;
        assert_eq!(waited, Waited::TimedOut);
    }

    #[tokio::test]
    async fn an_owner_gone_ends_the_wait() {
        let (tx, mut rx) = watch::channel(0u64);
        drop(tx);
        let waited: Waited<()> = until(&mut rx, Instant::now() + Duration::from_secs(30), || {
            Check::Pending
        })
        .await;
        assert_eq!(waited, Waited::Gone);
    }
}
