//! Where sessions live, how their files are named, what goes over the wire, and how a client
//! connects (bounded, on its own thread).

use std::ffi::OsString;

use super::*;

fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| OsString::from(value))
    }
}

#[test]
fn the_runtime_dir_prefers_the_override_then_xdg_then_the_temp_dir() {
    let pick = |pairs: &[(&str, &str)]| runtime_dir_from(&env(pairs), 1000);
    assert_eq!(
        pick(&[
            ("CHROMATE_RUNTIME_DIR", "/r/c"),
            ("XDG_RUNTIME_DIR", "/run/user/1000")
        ]),
        PathBuf::from("/r/c")
    );
    assert_eq!(
        pick(&[("XDG_RUNTIME_DIR", "/run/user/1000")]),
        PathBuf::from("/run/user/1000/chromate")
    );
    // A relative or empty XDG_RUNTIME_DIR is ignored, as the XDG spec says.
    assert_eq!(
        pick(&[("XDG_RUNTIME_DIR", "run")]),
        PathBuf::from("/tmp/chromate-1000")
    );
    assert_eq!(
        pick(&[("XDG_RUNTIME_DIR", ""), ("TMPDIR", "/var/tmp")]),
        PathBuf::from("/var/tmp/chromate-1000")
    );
}

#[test]
fn a_session_has_a_socket_a_lock_a_log_and_a_pid_file() {
    let paths = SessionPaths::new(Path::new("/r"), "work");
    assert_eq!(paths.socket, PathBuf::from("/r/work.sock"));
    assert_eq!(paths.lock, PathBuf::from("/r/work.lock"));
    assert_eq!(paths.log, PathBuf::from("/r/work.log"));
    assert_eq!(paths.pid, PathBuf::from("/r/work.pid"));
}

#[test]
fn requests_and_responses_keep_their_wire_names() {
    let call = Request::Call {
        tool: "browser_status".to_owned(),
        arguments: Map::new(),
        cwd: None,
        progress: false,
        refuse_file_urls: false,
    };
    assert_eq!(
        serde_json::to_string(&call).ok(),
        Some(r#"{"call":{"tool":"browser_status","arguments":{}}}"#.to_owned())
    );
    let streamed = Request::Call {
        tool: "qa_audit_url".to_owned(),
        arguments: Map::new(),
        cwd: None,
        progress: true,
        refuse_file_urls: false,
    };
    assert_eq!(
        serde_json::to_string(&streamed).ok(),
        Some(r#"{"call":{"tool":"qa_audit_url","arguments":{},"progress":true}}"#.to_owned())
    );
    let attached = Request::Call {
        tool: "browser_navigate".to_owned(),
        arguments: Map::new(),
        cwd: None,
        progress: false,
        refuse_file_urls: true,
    };
    assert_eq!(
        serde_json::to_string(&attached).ok(),
        Some(
            r#"{"call":{"tool":"browser_navigate","arguments":{},"refuse_file_urls":true}}"#
                .to_owned()
        )
    );
    assert_eq!(
        serde_json::to_string(&Response::Progress("audit: 1 pages audited".to_owned())).ok(),
        Some(r#"{"progress":"audit: 1 pages audited"}"#.to_owned())
    );
    assert_eq!(
        serde_json::to_string(&Request::Close).ok(),
        Some(r#""close""#.to_owned())
    );
    let back: Result<Request, _> = serde_json::from_str(r#""info""#);
    assert_eq!(back.ok(), Some(Request::Info));
    assert!(serde_json::from_str::<Request>(r#"{"call":{"tool":1}}"#).is_err());
}

#[cfg(unix)]
mod connecting {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    use std::time::Duration;

    use crate::daemon::client::connect_bounded;

    const BOUND: Duration = Duration::from_millis(50);

    #[test]
    fn a_listening_socket_is_connected_and_carries_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let mut client = connect_bounded(&path, BOUND).unwrap();
        let (mut served, _) = listener.accept().unwrap();
        client.write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        served.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
    }

    #[test]
    fn a_missing_socket_is_not_found_and_a_dead_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let missing = connect_bounded(&path, BOUND).map(|_| ()).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound, "{missing}");
        drop(UnixListener::bind(&path).unwrap());
        let dead = connect_bounded(&path, BOUND).map(|_| ()).unwrap_err();
        assert_eq!(dead.kind(), std::io::ErrorKind::ConnectionRefused, "{dead}");
    }

    #[test]
    fn a_path_too_long_for_a_socket_is_refused_before_connecting() {
        let path = std::path::PathBuf::from(format!("/tmp/{}", "x".repeat(200)));
        let err = connect_bounded(&path, BOUND).map(|_| ()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
    }

    /// A listener that never accepts (a stopped daemon): once its backlog is full, a connect
    /// returns when its bound runs out instead of waiting for ever.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_backlog_ends_the_connect_at_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let _listener = UnixListener::bind(&path).unwrap();
        let mut held = Vec::new();
        let failed = loop {
            match connect_bounded(&path, BOUND) {
                Ok(stream) => held.push(stream),
                Err(err) => break err,
            }
            assert!(held.len() < 100_000, "the backlog never filled");
        };
        assert!(!held.is_empty());
        assert!(
            matches!(
                failed.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "{failed}"
        );
    }
}
