//! Unit tests of the session's pure pieces: the observation's download lines (docs/mcp.md#downloads).

use chromate::DownloadState;

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
