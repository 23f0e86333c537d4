//! Unit tests of the websocket URL handling: what is connected to, what the handshake asks for,
//! and what messages show of a pool's secrets.

use super::{parse_ws_url, redact_userinfo};

#[test]
fn a_pool_url_keeps_its_query_and_moves_userinfo_out_of_the_request() {
    let url = parse_ws_url("wss://ann:s3cret@pool.example/chromium?token=abc&region=eu").unwrap();
    assert!(url.tls);
    assert_eq!((url.host.as_str(), url.port), ("pool.example", 443));
    assert_eq!(
        url.request_url,
        "wss://pool.example/chromium?token=abc&region=eu"
    );
    assert_eq!(url.userinfo.as_deref(), Some("ann:s3cret"));

    let url = parse_ws_url("ws://127.0.0.1:9222/devtools/browser/x").unwrap();
    assert!(!url.tls);
    assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", 9222));
    assert_eq!(url.userinfo, None);

    let url = parse_ws_url("wss://[::1]:9443?token=t").unwrap();
    assert_eq!((url.host.as_str(), url.port), ("[::1]", 9443));
    assert_eq!(url.request_url, "wss://[::1]:9443/?token=t");

    assert!(parse_ws_url("wss://pool.example:notaport/").is_err());
    assert!(parse_ws_url("wss:///path").is_err());
    assert!(parse_ws_url("https://pool.example/").is_err());
}

#[test]
fn messages_never_show_a_token_or_a_password() {
    assert_eq!(
        redact_userinfo("wss://ann:s3cret@pool.example/chromium?token=abc"),
        "wss://***@pool.example/chromium?***"
    );
    assert_eq!(
        redact_userinfo("ws://127.0.0.1:9222/devtools/browser/x"),
        "ws://127.0.0.1:9222/devtools/browser/x"
    );
    assert_eq!(
        redact_userinfo("wss://pool.example?token=abc"),
        "wss://pool.example?***"
    );
}
