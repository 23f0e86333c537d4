//! Unit tests for artifacts as resources: file URIs both ways, listing, reading and what is refused.

use super::*;

fn roots(dir: &Path) -> Roots {
    let session = dir.join("chromate-mcp-1-20261201T000000Z");
    fs::create_dir_all(session.join("traces/trace-1/screenshots")).unwrap();
    fs::create_dir_all(session.join("downloads")).unwrap();
    Roots {
        traces: session.join("traces"),
        downloads: session.join("downloads"),
        session,
    }
}

#[test]
fn file_uris_round_trip_with_spaces_and_unicode() {
    let path = Path::new("/tmp/a dir/report (2).pdf");
    let uri = file_uri(path);
    assert_eq!(uri, "file:///tmp/a%20dir/report%20%282%29.pdf");
    assert_eq!(parse_file_uri(&uri).as_deref(), Some(path));
    let unicode = Path::new("/tmp/été.txt");
    assert_eq!(parse_file_uri(&file_uri(unicode)).as_deref(), Some(unicode));
}

#[test]
fn uris_that_name_nothing_of_ours_do_not_parse() {
    for uri in [
        "http://127.0.0.1/x",
        "file:relative/x",
        "file://host/x",
        "file:///a/../etc/passwd",
        "file:///a/./b",
        "file:///a/%2e%2e/b",
        "file:///a/%zz",
        "file:///a/%00b",
        "file:///a?b",
    ] {
        assert_eq!(parse_file_uri(uri), None, "{uri}");
    }
    assert_eq!(
        parse_file_uri("file://localhost/a/b").as_deref(),
        Some(Path::new("/a/b"))
    );
}

#[test]
fn list_is_newest_first_and_skips_symlinks() {
    let tmp = tempfile::tempdir().unwrap();
    let roots = roots(tmp.path());
    let older = roots.session.join("0001-snapshot.txt");
    fs::write(&older, "old").unwrap();
    let newer = roots.downloads.join("report.pdf");
    fs::write(&newer, "%PDF").unwrap();
    let old_time = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    fs::File::options()
        .write(true)
        .open(&older)
        .unwrap()
        .set_modified(old_time)
        .unwrap();
    let shot = roots.traces.join("trace-1/screenshots/0001.png");
    fs::write(&shot, [0x89, b'P']).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/hostname", roots.session.join("0002-link.txt")).unwrap();

    let listed = roots.list();
    let names: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{listed}");
    assert_eq!(names.last(), Some(&"0001-snapshot.txt"));
    assert!(names.contains(&"report.pdf") && names.contains(&"0001.png"));
    let pdf = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "report.pdf")
        .unwrap();
    assert_eq!(pdf["mimeType"], "application/pdf");
    assert_eq!(pdf["size"], 4);
    assert_eq!(pdf["uri"], json!(file_uri(&newer)));
}

#[test]
fn read_gives_text_or_base64_blob() {
    let tmp = tempfile::tempdir().unwrap();
    let roots = roots(tmp.path());
    let text = roots.session.join("0001-snapshot.txt");
    fs::write(&text, "page: x\n").unwrap();
    let read = roots.read(&file_uri(&text)).unwrap();
    assert_eq!(read["contents"][0]["text"], "page: x\n");
    assert_eq!(read["contents"][0]["mimeType"], "text/plain");

    let png = roots.session.join("0002-screenshot.png");
    fs::write(&png, [0x89, b'P', b'N', b'G']).unwrap();
    let read = roots.read(&file_uri(&png)).unwrap();
    assert_eq!(read["contents"][0]["blob"], "iVBORw==");
    assert_eq!(read["contents"][0]["mimeType"], "image/png");
    assert!(read["contents"][0].get("text").is_none());
}

#[test]
fn read_refuses_paths_outside_symlinks_directories_and_missing_files() {
    let tmp = tempfile::tempdir().unwrap();
    let roots = roots(tmp.path());
    let outside = tmp.path().join("secret.txt");
    fs::write(&outside, "secret").unwrap();
    let unknown = |path: &Path| {
        let uri = file_uri(path);
        assert_eq!(
            roots.read(&uri),
            Err(ReadError::Unknown(uri.clone())),
            "{uri}"
        );
    };
    unknown(&outside);
    unknown(&roots.session);
    unknown(&roots.downloads);
    unknown(&roots.session.join("missing.txt"));
    #[cfg(unix)]
    {
        let link = roots.session.join("0001-link.txt");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        unknown(&link);
        // A symlinked directory inside a root is not walked either.
        let dir_link = roots.downloads.join("sub");
        std::os::unix::fs::symlink(tmp.path(), &dir_link).unwrap();
        unknown(&dir_link.join("secret.txt"));
    }
    assert_eq!(
        roots.read("http://127.0.0.1/x"),
        Err(ReadError::Unknown("http://127.0.0.1/x".into()))
    );
    assert_eq!(
        ReadError::Unknown("file:///x".into()).message(),
        "unknown resource file:///x"
    );
}

#[test]
fn read_refuses_files_over_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let roots = roots(tmp.path());
    let big = roots.downloads.join("big.bin");
    let file = fs::File::create(&big).unwrap();
    file.set_len(MAX_READ_BYTES + 1).unwrap();
    let uri = file_uri(&big);
    assert_eq!(roots.read(&uri), Err(ReadError::TooLarge(uri.clone())));
    assert!(ReadError::TooLarge(uri)
        .message()
        .starts_with("resource too large"));
}

#[test]
fn links_name_the_file_its_type_and_size() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("0003-screenshot.png");
    fs::write(&path, [1, 2, 3]).unwrap();
    assert_eq!(
        link(&path),
        Some(json!({
            "type": "resource_link",
            "uri": file_uri(&path),
            "name": "0003-screenshot.png",
            "mimeType": "image/png",
            "size": 3,
        }))
    );
    assert_eq!(link(&tmp.path().join("gone.png")), None);
}
