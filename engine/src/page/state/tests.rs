//! The lifecycle points a frame keeps.

use super::Lifecycle;

#[test]
fn lifecycle_events_are_kept_by_the_names_chrome_sends() {
    let kept = |name: &str| Lifecycle::from_event(name);
    assert_eq!(kept("commit"), Some(Lifecycle::Commit));
    assert_eq!(kept("DOMContentLoaded"), Some(Lifecycle::DomContentLoaded));
    assert_eq!(kept("load"), Some(Lifecycle::Load));
    assert_eq!(
        kept("networkAlmostIdle"),
        Some(Lifecycle::NetworkAlmostIdle)
    );
    assert_eq!(kept("networkIdle"), Some(Lifecycle::NetworkIdle));
    // Case matters: the protocol's spelling is exact.
    assert_eq!(kept("domcontentloaded"), None);
    assert_eq!(kept("init"), None);
    assert_eq!(kept("firstPaint"), None);
}
