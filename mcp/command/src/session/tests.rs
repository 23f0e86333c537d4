//! Unit tests of the session's pure pieces: the observation's download lines (docs/mcp.md#downloads), a
//! tab refused before any browser runs (docs/mcp.md#tabs-for-parallel-agents).

use chromate::journal::DownloadState;

use super::observe::download_line;

#[test]
fn download_lines_name_bytes_and_state_or_why_nothing_was_saved() {
    assert_eq!(
        download_line("report.pdf", DownloadState::Completed, Some(42), None),
        "download: report.pdf (42 bytes) completed"
    );
    assert_eq!(
        download_line(
            "big.bin",
            DownloadState::Canceled,
            Some(0),
            Some("over the size limit of 5 bytes")
        ),
        "download: big.bin (0 bytes) canceled"
    );
    assert_eq!(
        download_line(
            "a.csv",
            DownloadState::Failed,
            Some(3),
            Some("the browser refused the downloads directory: no")
        ),
        "download: a.csv not saved: the browser refused the downloads directory: no"
    );
    assert_eq!(
        download_line("x", DownloadState::Failed, None, None),
        "download: x failed"
    );
}

/// A call that names a tab before any browser runs is refused (INVALID_ARGUMENT
/// `unknown-tab`) without launching one, and says how to open one.
#[test]
fn a_tab_with_no_browser_is_unknown_and_nothing_launches() {
    let mut session = super::ToolSession::new(crate::config::Config::default());
    let Err(error) = session.fork_tab("p2", "click") else {
        panic!("a fork without a browser");
    };
    let json = error.to_json();
    assert_eq!(json["code"], "INVALID_ARGUMENT", "{json}");
    assert_eq!(json["detail"]["reason"], "unknown-tab", "{json}");
    assert_eq!(json["detail"]["allowed"], serde_json::json!([]), "{json}");
    assert!(
        json["message"]
            .as_str()
            .is_some_and(|message| message.starts_with("click: no open tab p2; open tabs: none")),
        "{json}"
    );
    assert!(!session.browser_running());
}
