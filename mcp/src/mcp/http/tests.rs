//! Unit tests of the HTTP front end's checks: origins, hosts, the bearer comparison, the
//! generated token and its file, header values.

use hyper::header::HeaderValue;

use hyper::header::HeaderMap;

use super::auth::{
    bearer_index, constant_time_eq, generate_token, host_allowed, running_servers, TokenFile,
};
use super::modern::decode_header_value;
use super::{is_node_name, not_found_message, origin_allowed};

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
fn a_bearer_header_names_the_index_of_its_token() {
    let tokens = vec!["first-token".to_owned(), "second-token".to_owned()];
    let with = |value: &str| {
        let mut headers = HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_str(value).unwrap());
        bearer_index(&headers, &tokens)
    };
    assert_eq!(with("Bearer first-token"), Some(0));
    assert_eq!(with("bearer second-token"), Some(1));
    assert_eq!(with("Bearer second-tokem"), None);
    assert_eq!(with("Basic first-token"), None);
    assert_eq!(with("Bearer"), None);
    assert_eq!(bearer_index(&HeaderMap::new(), &tokens), None);
}

#[test]
fn a_loopback_server_answers_loopback_hosts_and_allowed_hosts_only() {
    let loopback: std::net::SocketAddr = "127.0.0.1:8931".parse().unwrap();
    let allowed = vec!["app.example".to_owned(), "tool.example:8443".to_owned()];
    let check = |host: Option<&str>| host_allowed(host, loopback, &allowed);
    for host in [
        "127.0.0.1:8931",
        "localhost",
        "LOCALHOST:1",
        "[::1]:8931",
        "127.8.9.10",
        "app.example:80",
        "tool.example:8443",
    ] {
        assert!(check(Some(host)), "{host}");
    }
    for host in [
        "evil.example",
        "evil.example:8931",
        "localhost.evil.example",
        "127.0.0.1.evil.example",
        "tool.example:8444",
        "[::1]x",
        "user@localhost",
        "",
    ] {
        assert!(!check(Some(host)), "{host}");
    }
    assert!(!check(None));
    // A server bound elsewhere needs a token for everything; its names are not chromate's.
    let public: std::net::SocketAddr = "0.0.0.0:8931".parse().unwrap();
    assert!(host_allowed(Some("evil.example"), public, &[]));
}

#[test]
fn a_generated_token_is_64_hex_digits_and_never_the_same() {
    let first = generate_token().unwrap();
    let second = generate_token().unwrap();
    assert_eq!(first.len(), 64);
    assert!(first
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    assert_ne!(first, second);
}

#[test]
fn the_token_file_is_private_read_back_while_it_lives_and_removed_after() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let local: std::net::SocketAddr = "127.0.0.1:4567".parse().unwrap();
    let url = "http://127.0.0.1:4567/mcp";
    // A stale file of a server that was killed is replaced.
    std::fs::write(dir.path().join("mcp-http-4567.json"), "stale").unwrap();
    let file = TokenFile::write(dir.path(), local, url, "tok").unwrap();
    let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let servers = running_servers(dir.path());
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0].url, url);
    assert_eq!(servers[0].token, "tok");
    assert_eq!(servers[0].pid, std::process::id());
    // A file whose process is gone is not listed.
    let dead =
        serde_json::json!({"url": "http://127.0.0.1:1/mcp", "token": "x", "pid": u32::MAX / 2});
    std::fs::write(dir.path().join("mcp-http-1.json"), dead.to_string()).unwrap();
    assert_eq!(running_servers(dir.path()).len(), 1);
    drop(file);
    assert!(!dir.path().join("mcp-http-4567.json").exists());
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

#[test]
fn accept_failures_pause_longer_each_time_and_say_so_once_per_ten_seconds() {
    use super::accept::Backoff;
    use std::time::{Duration, Instant};
    let mut backoff = Backoff::default();
    let err = std::io::Error::from_raw_os_error(libc::EMFILE);
    let start = Instant::now();
    let (first, line) = backoff.failed(&err, start);
    assert_eq!(first, Duration::from_millis(10));
    assert!(line.unwrap().contains("accept failed"));
    let mut pauses = Vec::new();
    for n in 1..1000u64 {
        let (pause, line) = backoff.failed(&err, start + Duration::from_millis(n));
        assert!(line.is_none(), "a second line within 10 s");
        pauses.push(pause);
    }
    assert_eq!(pauses[0], Duration::from_millis(20));
    assert_eq!(*pauses.last().unwrap(), Duration::from_secs(1));
    let (_, line) = backoff.failed(&err, start + Duration::from_secs(11));
    assert!(line.unwrap().contains("(999 more failures"));
    backoff.accepted();
    let (pause, _) = backoff.failed(&err, start + Duration::from_secs(12));
    assert_eq!(pause, Duration::from_millis(10));
}

#[test]
fn the_connection_cap_stays_under_half_the_descriptor_limit_unless_set() {
    use super::accept::Limits;
    use std::time::Duration;
    let none = |_: &str| None;
    let (limits, warnings) = Limits::from_env(&none, Some(1024));
    assert_eq!(limits.max_connections, 512);
    assert_eq!(limits.header_timeout, Duration::from_secs(10));
    assert!(warnings.is_empty());
    assert_eq!(Limits::from_env(&none, Some(256)).0.max_connections, 128);
    assert_eq!(Limits::from_env(&none, Some(4)).0.max_connections, 8);
    let set = |name: &str| match name {
        "CHROMATE_MCP_HTTP_MAX_CONNECTIONS" => Some("2000".to_owned()),
        "CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS" => Some("300".to_owned()),
        _ => None,
    };
    let (limits, _) = Limits::from_env(&set, Some(256));
    assert_eq!(limits.max_connections, 2000);
    assert_eq!(limits.header_timeout, Duration::from_millis(300));
    let bad = |_: &str| Some("0".to_owned());
    let (limits, warnings) = Limits::from_env(&bad, Some(1024));
    assert_eq!(limits.max_connections, 512);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
}

#[test]
fn a_connection_slot_is_freed_when_dropped() {
    let connections = super::accept::Connections::default();
    let first = connections.take(2).unwrap();
    let _second = connections.take(2).unwrap();
    assert!(connections.take(2).is_none());
    drop(first);
    assert!(connections.take(2).is_some());
}

#[test]
fn a_new_connection_evicts_the_oldest_half_open_one_and_only_established_ones_fill_the_cap() {
    use super::accept::{Gate, Limits};
    let limits = Limits {
        header_timeout: std::time::Duration::from_secs(10),
        max_connections: 4,
    };
    let gate = Gate::new(&limits);
    // The half-open budget is 2: the third half-open connection evicts the first.
    let first = gate.admit().unwrap();
    let second = gate.admit().unwrap();
    let third = gate.admit().unwrap();
    assert_eq!(gate.counts(), (2, 0));
    assert!(!first.headers_complete(), "the evicted one is not promoted");
    assert!(second.headers_complete());
    assert!(third.headers_complete());
    assert_eq!(gate.counts(), (0, 2));
    drop(first);
    assert_eq!(gate.counts(), (0, 2));
    // Two more established fill the cap: a fifth is refused (503), not admitted.
    let fourth = gate.admit().unwrap();
    let fifth = gate.admit().unwrap();
    assert!(fourth.headers_complete() && fifth.headers_complete());
    assert!(gate.admit().is_none());
    // Closing an established connection frees its place.
    drop(second);
    assert_eq!(gate.counts(), (0, 3));
    let sixth = gate.admit().unwrap();
    assert_eq!(gate.counts(), (1, 3));
    // At the cap with one half-open: the next evicts it rather than being refused.
    let seventh = gate.admit().unwrap();
    assert_eq!(gate.counts(), (1, 3));
    assert!(!sixth.headers_complete());
    assert!(seventh.headers_complete());
    drop((third, fourth, fifth, sixth, seventh));
    assert_eq!(gate.counts(), (0, 0));
}

#[test]
fn the_half_open_budget_is_half_the_cap_and_sockets_have_room_for_it() {
    let (limits, _) = super::accept::Limits::from_env(&|_| None, Some(1024));
    assert_eq!(limits.max_half_open(), 256);
    assert_eq!(limits.max_sockets(), 768);
}

#[tokio::test]
async fn a_socket_freed_while_waiting_is_taken_and_none_freed_means_none() {
    use std::time::Duration;
    let sockets = super::accept::Connections::default();
    let held = sockets.take(1).unwrap();
    assert!(sockets
        .take_within(1, Duration::from_millis(1))
        .await
        .is_none());
    let waiting = sockets.take_within(1, Duration::from_secs(60));
    let freeing = async move {
        tokio::task::yield_now().await;
        drop(held);
    };
    let (taken, ()) = tokio::join!(waiting, freeing);
    assert!(taken.is_some());
}

#[test]
fn a_session_made_by_another_node_is_named_in_the_not_found_message() {
    let wrong = not_found_message(Some("node-b"), "node-a.0123456789abcdef0123456789abcdef");
    assert!(
        wrong.contains("made by the server named \"node-a\", and this is \"node-b\""),
        "{wrong}"
    );
    let plain = "session not found: it ended or expired; send initialize again";
    assert_eq!(not_found_message(Some("node-a"), "node-a.0123"), plain);
    assert_eq!(not_found_message(None, "node-a.0123"), plain);
    // Whatever a client sends that is no node name is not echoed.
    assert_eq!(not_found_message(Some("node-b"), "<script>.x"), plain);
    assert!(is_node_name("a") && is_node_name("node-7"));
    assert!(!is_node_name("") && !is_node_name("A") && !is_node_name("a.b"));
    assert!(!is_node_name(&"a".repeat(33)));
}
