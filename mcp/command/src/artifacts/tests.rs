//! Unit tests for session directory naming, spilling, the quota and the response cap.

use std::time::{Duration, UNIX_EPOCH};

use expect_test::expect;
use serde_json::json;

use super::*;

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chromate-mcp-unit-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

#[test]
fn stamps_are_utc_basic_iso() {
    assert_eq!(utc_stamp(UNIX_EPOCH), "19700101T000000Z");
    let leap_day = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661);
    assert_eq!(utc_stamp(leap_day), "20000229T010101Z");
    assert_eq!(
        session_dir_name(
            42,
            UNIX_EPOCH + Duration::from_secs(1_764_451_845),
            "0123456789abcdef"
        ),
        "chromate-mcp-42-20251129T213045Z-0123456789abcdef"
    );
}

#[test]
fn spill_preview_keeps_five_lines_and_cuts_long_ones() {
    let long = "x".repeat(300);
    let text = format!("one\ntwo\n{long}\nfour\nfive\nsix\nseven");
    let preview = spill_preview(&text, "/tmp/s/0001-snapshot.txt");
    let lines: Vec<&str> = preview.lines().collect();
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[2].chars().count(), 240);
    assert!(lines[2].ends_with("x…"));
    expect![[r#"
        …
        (full output: /tmp/s/0001-snapshot.txt, 328 bytes)"#]]
    .assert_eq(&lines[5..].join("\n"));
}

#[test]
fn small_text_stays_inline_and_creates_nothing() {
    let root = scratch_dir("small");
    let mut store = ArtifactStore::new(&root, 7, UNIX_EPOCH, "s", Limits::default());
    let spilled = store.spill("snapshot.txt", "short");
    assert_eq!(spilled.inline, "short");
    assert!(!root.exists());
}

#[test]
fn spilled_text_goes_to_a_private_numbered_file() {
    let root = scratch_dir("spill");
    let limits = Limits {
        spill_bytes: 10,
        ..Limits::default()
    };
    let mut store = ArtifactStore::new(&root, 7, UNIX_EPOCH, "s", limits);
    let spilled = store.spill("snapshot.txt", "0123456789abcdef");
    let path = spilled.path.clone().unwrap_or_default();
    assert!(path.ends_with("chromate-mcp-7-19700101T000000Z-s/0001-snapshot.txt"));
    assert_eq!(
        fs::read_to_string(&path).unwrap_or_default(),
        "0123456789abcdef"
    );
    assert!(spilled.inline.ends_with(", 16 bytes)"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| {
            fs::metadata(p)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0)
        };
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(store.dir()), 0o700);
        // The root did not exist: chromate made it, private too.
        assert_eq!(mode(&root), 0o700);
    }
    let second = store.spill("batch.txt", "0123456789abcdef");
    assert!(second.path.unwrap_or_default().ends_with("0002-batch.txt"));
    let _ = fs::remove_dir_all(&root);
}

/// A root that already exists is the user's: its mode stays as it was.
#[cfg(unix)]
#[test]
fn an_existing_artifacts_root_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let root = scratch_dir("existing-root");
    let made = fs::create_dir(&root)
        .and_then(|()| fs::set_permissions(&root, fs::Permissions::from_mode(0o751)));
    assert!(made.is_ok(), "{made:?}");
    let mut store = ArtifactStore::new(&root, 7, UNIX_EPOCH, "s", Limits::default());
    assert!(store.ensure_dir().is_ok());
    let mode = fs::metadata(&root).map(|m| m.permissions().mode() & 0o777);
    assert_eq!(mode.ok(), Some(0o751));
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn quota_turns_spills_into_cut_inline_text() {
    let root = scratch_dir("quota");
    let limits = Limits {
        spill_bytes: 8,
        max_files: 1,
        ..Limits::default()
    };
    let mut store = ArtifactStore::new(&root, 7, UNIX_EPOCH, "s", limits);
    assert!(store.spill("a.txt", "0123456789").path.is_some());
    let cut = store.spill("b.txt", "0123456789");
    assert_eq!(cut.path, None);
    assert_eq!(cut.inline, "… (truncated: artifact quota reached)");
    let cut = store.spill("c.txt", &"z".repeat(100));
    assert!(cut.inline.starts_with('z') || cut.inline.starts_with('…'));
    assert!(matches!(
        store.write("d.png", b"png"),
        Err(WriteError::Quota)
    ));
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn byte_quota_counts_file_sizes() {
    let root = scratch_dir("bytes");
    let limits = Limits {
        max_bytes: 10,
        ..Limits::default()
    };
    let mut store = ArtifactStore::new(&root, 7, UNIX_EPOCH, "s", limits);
    assert!(store.write("a.png", &[0; 6]).is_ok());
    assert!(matches!(
        store.write("b.png", &[0; 6]),
        Err(WriteError::Quota)
    ));
    assert!(store.write("c.png", &[0; 4]).is_ok());
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn response_under_the_cap_is_untouched() {
    let mut envelope = json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"result":{"a":1}}}});
    let before = envelope.clone();
    cap_response(&mut envelope, 1024, |_| None);
    assert_eq!(envelope, before);
}

#[test]
fn response_over_the_cap_truncates_structured_content_then_text() {
    let big = "é".repeat(3000);
    let mut envelope = json!({
        "jsonrpc": "2.0", "id": 1,
        "result": {
            "content": [{"type":"text","text": big}, {"type":"text","text": "x".repeat(2000)}],
            "structuredContent": {"result": {"value": big}},
        }
    });
    cap_response(&mut envelope, 4096, |json| {
        Some(format!("/tmp/full-{}.json", json.len()))
    });
    let total = envelope.to_string().len();
    assert!(total <= 4096, "{total}");
    let structured = &envelope["result"]["structuredContent"]["result"];
    assert_eq!(structured["truncated"], json!(true));
    assert_eq!(structured["totalBytes"], json!(6012));
    assert_eq!(structured["fullOutput"], json!("/tmp/full-6012.json"));
    assert!(structured["previewBytes"].as_u64().unwrap_or(0) <= 1024);
    let last = envelope["result"]["content"][1]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(last.ends_with("\n… (truncated)"), "{last}");
}

#[test]
fn response_over_the_cap_truncates_the_inline_result_json_first() {
    // The default shape (docs/mcp.md#no-structured-content-by-default): the result JSON is content[0], no structuredContent.
    let result = json!({ "value": "é".repeat(3000) });
    let observation = "page: x\n".to_owned() + &"y".repeat(500) + "\nerrors: 0 (logCursor 0)";
    let mut envelope = json!({
        "jsonrpc": "2.0", "id": 1,
        "result": { "content": [
            {"type":"text","text": result.to_string()},
            {"type":"text","text": observation},
        ]}
    });
    let mut asked = 0;
    cap_response(&mut envelope, 4096, |json| {
        asked += 1;
        Some(format!("/tmp/full-{}.json", json.len()))
    });
    assert_eq!(asked, 1);
    assert!(envelope.to_string().len() <= 4096);
    let inline: Value = serde_json::from_str(
        envelope["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(inline["truncated"], json!(true));
    assert_eq!(inline["fullOutput"], json!("/tmp/full-6012.json"));
    // The observation fitted once the result was cut: it reaches the model whole.
    assert_eq!(envelope["result"]["content"][1]["text"], json!(observation));
    assert!(envelope["result"].get("structuredContent").is_none());
}

#[test]
fn response_over_the_cap_gives_the_structured_observation_the_inline_form() {
    let full = "z".repeat(6000);
    let mut envelope = json!({
        "jsonrpc": "2.0", "id": 1,
        "result": {
            "content": [
                {"type":"text","text": "{\"ok\":true}"},
                {"type":"text","text": "short preview\nerrors: 0 (logCursor 0)"},
            ],
            "structuredContent": {"result": {"ok": true}, "observation": full},
        }
    });
    cap_response(&mut envelope, 4096, |_| None);
    assert!(envelope.to_string().len() <= 4096);
    // A result shorter than a preview stays as it is.
    assert_eq!(
        envelope["result"]["structuredContent"]["result"],
        json!({"ok": true})
    );
    assert_eq!(
        envelope["result"]["structuredContent"]["observation"],
        json!("short preview\nerrors: 0 (logCursor 0)")
    );
}

#[test]
fn the_download_limit_is_what_the_quota_has_left() {
    let root = scratch_dir("downloads");
    let limits = Limits {
        max_files: 3,
        max_bytes: 1000,
        ..Limits::default()
    };
    let mut store = ArtifactStore::new(&root, 7, UNIX_EPOCH, "s", limits);
    assert_eq!(store.downloads_dir(), store.dir().join("downloads"));
    let limit = store.download_limit();
    assert_eq!(limit.bytes(), 1000);
    store.write("a.txt", &[0; 100]).expect("within quota");
    assert_eq!(limit.bytes(), 900, "a spill lowers it");
    store.count_download(600);
    assert_eq!(limit.bytes(), 300, "a saved download lowers it");
    store.write("b.txt", &[0; 10]).expect("within quota");
    assert_eq!(
        limit.bytes(),
        0,
        "no file left in the quota: every download is canceled"
    );
    let _ = fs::remove_dir_all(&root);

    let default = ArtifactStore::new(&root, 7, UNIX_EPOCH, "s", Limits::default());
    assert_eq!(
        default.download_limit().bytes(),
        chromate::capture::DEFAULT_DOWNLOAD_LIMIT
    );
}

#[test]
fn a_planted_session_directory_is_refused_and_never_written_through() {
    let root = tempfile::tempdir().expect("a temp dir");
    let attacker = root.path().join("attacker");
    fs::create_dir(&attacker).expect("the attacker's dir");
    let limits = Limits {
        spill_bytes: 4,
        ..Limits::default()
    };
    let mut store = ArtifactStore::new(root.path(), 7, UNIX_EPOCH, "s", limits);
    std::os::unix::fs::symlink(&attacker, store.dir()).expect("plant a symlink at the name");
    let Err(WriteError::Io(reason)) = store.write("snapshot.txt", b"secret") else {
        panic!("a write through a planted symlink must fail");
    };
    assert!(reason.contains("already exists"), "{reason}");
    let spilled = store.spill("snapshot.txt", "0123456789");
    assert_eq!(spilled.path, None);
    assert!(
        spilled.inline.contains("artifact not written"),
        "{}",
        spilled.inline
    );
    assert_eq!(fs::read_dir(&attacker).map(Iterator::count).ok(), Some(0));

    // An existing directory at the name (made before the server) is refused too.
    let mut other = ArtifactStore::new(root.path(), 8, UNIX_EPOCH, "s", limits);
    fs::create_dir(other.dir()).expect("pre-create");
    assert!(matches!(other.write("a.txt", b"x"), Err(WriteError::Io(_))));
    assert_eq!(fs::read_dir(other.dir()).map(Iterator::count).ok(), Some(0));
}

/// A store forked for a call on a tab names its files after the tab, so two forks writing at
/// once never pick the same name; its files count against the quota it came from.
#[test]
fn a_fork_names_its_files_after_its_tab_and_counts_them_back() {
    let root = scratch_dir("fork");
    let limits = Limits {
        spill_bytes: 4,
        max_files: 3,
        ..Limits::default()
    };
    let mut store = ArtifactStore::new(&root, 7, UNIX_EPOCH, "f", limits);
    let mut p2 = store.fork("p2");
    let mut p3 = store.fork("p3");
    let a = p2
        .spill("snapshot.txt", "0123456789")
        .path
        .unwrap_or_default();
    let b = p3
        .spill("snapshot.txt", "abcdefghij")
        .path
        .unwrap_or_default();
    assert!(a.ends_with("0001-p2-snapshot.txt"), "{}", a.display());
    assert!(b.ends_with("0001-p3-snapshot.txt"), "{}", b.display());
    store.absorb(&p2);
    store.absorb(&p3);
    let c = store
        .spill("snapshot.txt", "0123456789")
        .path
        .unwrap_or_default();
    assert!(c.ends_with("0002-snapshot.txt"), "{}", c.display());
    // Three files: the quota is full for the session and every later fork.
    let mut later = store.fork("p2");
    assert!(later.spill("snapshot.txt", "0123456789").path.is_none());
    let _ = fs::remove_dir_all(&root);
}
