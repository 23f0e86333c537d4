//! Unit tests of the HTTP front end's checks: origins, the bearer comparison, header values.

use hyper::header::HeaderValue;

use super::{constant_time_eq, decode_header_value, origin_allowed};

#[test]
fn loopback_origins_pass_and_others_need_allowed_hosts() {
    let allowed = vec!["app.example".to_owned(), "tool.example:8443".to_owned()];
    let check = |origin: &str| origin_allowed(&HeaderValue::from_str(origin).unwrap(), &allowed);
    assert!(check("http://localhost:3000"));
    assert!(check("http://127.0.0.1"));
    assert!(check("http://[::1]:8080"));
    assert!(check("https://app.example"));
    assert!(check("https://app.example:9000"));
    assert!(check("https://tool.example:8443"));
    assert!(!check("https://tool.example:8444"));
    assert!(!check("https://evil.example"));
    assert!(!check("http://localhost.evil.example"));
    assert!(!check("http://127.0.0.1.evil.example"));
    assert!(!check("null"));
    assert!(!check("http://user@localhost"));
}

#[test]
fn bearer_comparison_is_exact() {
    assert!(constant_time_eq(b"s3cret", b"s3cret"));
    assert!(!constant_time_eq(b"s3cret", b"s3creT"));
    assert!(!constant_time_eq(b"s3cret", b"s3cre"));
    assert!(!constant_time_eq(b"", b"x"));
}

#[test]
fn header_values_decode_the_base64_sentinel() {
    assert_eq!(
        decode_header_value("browser_click").as_deref(),
        Some("browser_click")
    );
    assert_eq!(
        decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
        Some("Hello, 世界")
    );
    assert_eq!(decode_header_value("=?base64?!!!?="), None);
}
