//! Unit tests of the audit's pure helpers: the class a refused URL's host is named by, and
//! the SSRF_BLOCKED error.

use super::*;

#[test]
fn a_refused_hosts_class_comes_from_its_address_or_name() {
    assert_eq!(host_class("http://127.0.0.1:8080/x"), "loopback");
    assert_eq!(host_class("http://user@10.1.2.3/"), "private");
    assert_eq!(host_class("https://[fe80::1]:443/"), "link-local");
    assert_eq!(host_class("https://[fd00::5]/"), "unique-local");
    assert_eq!(host_class("http://169.254.169.254/latest"), "link-local");
    assert_eq!(host_class("http://app.localhost:3000/"), "loopback");
    assert_eq!(host_class("https://intranet.test/"), "private network");
}

#[test]
fn ssrf_blocked_names_the_hop_and_the_flag() {
    let error = ssrf_blocked("http://127.0.0.1:9/admin");
    assert_eq!(error.code, ToolErrorCode::SsrfBlocked);
    assert_eq!(
        error.message,
        "audit: http://127.0.0.1:9/admin is a loopback address; --block-private-network refused the request at that hop"
    );
    assert!(error
        .hint
        .as_deref()
        .is_some_and(|hint| hint.starts_with("--block-private-network")));
    assert_eq!(
        error.detail,
        Some(
            json!({ "url": "http://127.0.0.1:9/admin", "class": "loopback", "reason": "private-network" })
        )
    );
    assert_eq!(without_fragment("http://h/a#b"), "http://h/a");
}
