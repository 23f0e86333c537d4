//! Where sessions live and how their files are named.

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
