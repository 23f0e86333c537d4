//! The lifecycle points a frame keeps and the load states they satisfy.

use std::collections::HashSet;

use super::{Lifecycle, WaitUntil};

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
