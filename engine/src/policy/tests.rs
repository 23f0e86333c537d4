//! Unit tests for the interception rules: URL patterns, mock and preflight headers, decisions.

use super::rules::{decide, mock_headers, preflight_headers};
use super::*;

fn origin(scheme: &str, host: &str, port: PortMatch) -> OriginPattern {
    OriginPattern {
        scheme: scheme.into(),
        host: host.into(),
        port,
    }
}

#[test]
fn glob_ignores_the_query_unless_the_pattern_has_one() {
    assert!(glob_matches(
        "*/api/user",
        "http://127.0.0.1:1/api/user?x=1"
    ));
    assert!(glob_matches("**/api/*", "http://127.0.0.1:1/api/a/b"));
    assert!(!glob_matches(
        "*/api/user?x=2",
        "http://127.0.0.1:1/api/user?x=1"
    ));
    assert!(glob_matches(
        "*/api/user?x=*",
        "http://127.0.0.1:1/api/user?x=1"
    ));
    assert!(!glob_matches("http://a/*", "https://a/b"));
}

#[test]
fn origin_patterns_match_scheme_host_and_port() {
    let exact = origin("http", "127.0.0.1", PortMatch::Exact(8080));
    assert!(exact.matches("http://127.0.0.1:8080/x"));
    assert!(!exact.matches("http://127.0.0.1:8081/x"));
    assert!(!exact.matches("https://127.0.0.1:8080/x"));
    let default = origin("https", "example.com", PortMatch::Default);
    assert!(default.matches("https://example.com/"));
    assert!(default.matches("https://user@EXAMPLE.com:443/"));
    assert!(!default.matches("https://example.com:8443/"));
    let any = origin("http", "localhost", PortMatch::Any);
    assert!(any.matches("http://localhost:9/"));
    let sub = origin("https", "*.example.com", PortMatch::Default);
    assert!(sub.matches("https://a.b.example.com/"));
    assert!(!sub.matches("https://example.com/"));
    assert!(!sub.matches("https://badexample.com/"));
    let file = origin("file", "", PortMatch::Default);
    assert!(file.matches("file:///tmp/a.html"));
    let ipv6 = origin("http", "[::1]", PortMatch::Exact(80));
    assert!(ipv6.matches("http://[::1]/"));
}

#[test]
fn policy_blocks_listed_or_unlisted_origins_but_never_about_data_blob() {
    let blocked = OriginPolicy {
        allowed: None,
        blocked: vec![origin("http", "localhost", PortMatch::Any)],
    };
    assert!(blocked.blocks("http://localhost:1234/"));
    assert!(!blocked.blocks("http://127.0.0.1:1234/"));
    let allowed = OriginPolicy {
        allowed: Some(vec![origin("http", "127.0.0.1", PortMatch::Any)]),
        blocked: Vec::new(),
    };
    assert!(!allowed.blocks("http://127.0.0.1:1234/"));
    assert!(allowed.blocks("http://localhost:1234/"));
    for url in [
        "about:blank",
        "data:text/html,x",
        "blob:http://localhost/uuid",
    ] {
        assert!(!allowed.blocks(url), "{url}");
    }
    assert!(OriginPolicy::default().is_empty());
}

#[test]
fn policy_wins_over_rules_and_the_first_rule_wins() {
    let ok = MockResponse {
        status: 200,
        body: "{}".into(),
        content_type: "application/json".into(),
    };
    let rules = vec![
        InterceptRule::new("m1", "*/api/*", InterceptAction::Fulfil(ok)),
        InterceptRule::new("m2", "*/api/*", InterceptAction::Block),
        InterceptRule::new("m3", "*/ads/*", InterceptAction::Block),
    ];
    let policy = OriginPolicy {
        allowed: None,
        blocked: vec![origin("http", "localhost", PortMatch::Any)],
    };
    let decided = |url| decide(&rules, &policy, url).map(|(what, _)| what);
    assert_eq!(
        decided("http://127.0.0.1:1/api/user"),
        Some(Interception::Mocked {
            rule_id: "m1".into(),
            status: 200
        })
    );
    assert_eq!(
        decided("http://127.0.0.1:1/ads/x"),
        Some(Interception::Blocked {
            by: BlockedBy::Mock,
            rule_id: Some("m3".into())
        })
    );
    assert_eq!(
        decided("http://localhost:1/api/user"),
        Some(Interception::Blocked {
            by: BlockedBy::OriginPolicy,
            rule_id: None
        })
    );
    assert_eq!(decided("http://127.0.0.1:1/other"), None);
}

#[test]
fn mocks_echo_the_origin_and_answer_preflights() {
    let response = MockResponse {
        status: 201,
        body: String::new(),
        content_type: "text/plain".into(),
    };
    let request = vec![
        ("Origin".to_owned(), "http://a.test".to_owned()),
        ("Access-Control-Request-Method".to_owned(), "PUT".to_owned()),
        (
            "access-control-request-headers".to_owned(),
            "x-token".to_owned(),
        ),
    ];
    let headers = mock_headers(&response, &request);
    assert!(headers.contains(&("Access-Control-Allow-Origin".into(), "http://a.test".into())));
    assert!(headers.contains(&("Access-Control-Allow-Credentials".into(), "true".into())));
    let preflight = preflight_headers("OPTIONS", &request).expect("a preflight");
    assert!(preflight.contains(&("Access-Control-Allow-Methods".into(), "PUT".into())));
    assert!(preflight.contains(&("Access-Control-Allow-Headers".into(), "x-token".into())));
    assert_eq!(preflight_headers("GET", &request), None);
    assert_eq!(mock_headers(&response, &[]).len(), 1);
}

#[test]
fn origin_patterns_parse_and_print_back() {
    let parsed = |text: &str| match OriginPattern::parse(text) {
        Ok(pattern) => format!("{pattern} {:?}", pattern.port),
        Err(err) => format!("error: {err}"),
    };
    assert_eq!(parsed("https://example.com"), "https://example.com Default");
    assert_eq!(
        parsed("HTTP://Example.COM:8080"),
        "http://example.com:8080 Exact(8080)"
    );
    assert_eq!(parsed("https://*.corp.net:*"), "https://*.corp.net:* Any");
    assert_eq!(parsed("file://"), "file:// Default");
    assert_eq!(
        parsed("example.com"),
        r#"error: bad origin "example.com": expected scheme://host[:port]"#
    );
    assert_eq!(
        parsed("https://a.*.com"),
        r#"error: bad origin "https://a.*.com": invalid host (`*` may only replace a leading label)"#
    );
    let err = OriginPattern::parse("https://x/y").expect_err("a path");
    assert!(
        matches!(&err, crate::Error::InvalidArgument { argument: Some(a), .. } if a == "origin"),
        "{err:?}"
    );
}
