//! Unit tests for private files and directories: planted symlinks, existing paths, modes, owners.

use std::os::unix::fs::{symlink, PermissionsExt};

use super::*;

fn temp() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create a temp dir: {err}"),
    }
}

fn mode(path: &Path) -> u32 {
    match fs::symlink_metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o7777,
        Err(err) => panic!("{}: {err}", path.display()),
    }
}

#[test]
fn create_dir_refuses_a_planted_symlink_and_never_writes_through_it() {
    let base = temp();
    let victim = base.path().join("attacker");
    fs::create_dir(&victim).expect("the attacker's dir");
    fs::set_permissions(&victim, fs::Permissions::from_mode(0o777)).expect("chmod");
    let planted = base.path().join("chromate-mcp-1-20260101T000000Z");
    symlink(&victim, &planted).expect("plant a symlink");
    let err = create_dir(&planted).expect_err("a symlink at the name is refused");
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert!(err.to_string().contains("already exists"), "{err}");
    // A dangling symlink (the attacker's dir not made yet) is refused too.
    let dangling = base.path().join("dangling");
    symlink(base.path().join("later"), &dangling).expect("plant a dangling symlink");
    assert!(create_dir(&dangling).is_err());
    assert!(
        !base.path().join("later").exists(),
        "mkdir never follows it"
    );
    // ensure_dir, which accepts an existing directory of ours, refuses a symlink to one.
    let err = ensure_dir(&planted).expect_err("ensure_dir refuses a symlink");
    assert!(err.to_string().contains("is a symlink"), "{err}");
    assert_eq!(mode(&victim), 0o777, "its mode is untouched");
    assert_eq!(fs::read_dir(&victim).map(Iterator::count).ok(), Some(0));
}

#[test]
fn create_dir_refuses_an_existing_directory_with_a_clear_error() {
    let base = temp();
    let existing = base.path().join("session");
    fs::create_dir(&existing).expect("an existing dir");
    let err = create_dir(&existing).expect_err("an existing directory is refused");
    assert_eq!(
        err.to_string(),
        format!(
            "{} already exists; chromate only uses a directory it has just created there, so it refuses to write into it",
            existing.display()
        )
    );
}

#[test]
fn directories_are_0700_and_files_0600() {
    let base = temp();
    let dir = base.path().join("session");
    create_dir(&dir).expect("create");
    assert_eq!(mode(&dir), 0o700);
    let file = dir.join("0001-snapshot.txt");
    write_new_file(&file, b"x").expect("write");
    assert_eq!(mode(&file), 0o600);
    assert!(
        write_new_file(&file, b"y").is_err(),
        "files are never reused"
    );
    assert_eq!(read_file(&file).ok(), Some(b"x".to_vec()));
}

#[test]
fn ensure_dir_reuses_our_own_directory_and_tightens_its_mode() {
    let base = temp();
    let dir = base.path().join("traces");
    fs::create_dir(&dir).expect("create");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
    ensure_dir(&dir).expect("our own directory is accepted");
    assert_eq!(mode(&dir), 0o700);
    let fresh = base.path().join("fresh");
    ensure_dir(&fresh).expect("a missing one is created");
    assert_eq!(mode(&fresh), 0o700);
}

#[test]
fn ensure_dir_refuses_a_directory_owned_by_someone_else() {
    let base = temp();
    let foreign = if effective_uid() == 0 {
        // As root, make one owned by `nobody`.
        let dir = base.path().join("foreign");
        fs::create_dir(&dir).expect("create");
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).expect("chown");
        dir
    } else {
        // Otherwise `/` is root's, not ours.
        std::path::PathBuf::from("/")
    };
    let err = ensure_dir(&foreign).expect_err("a foreign directory is refused");
    assert!(err.to_string().contains("is owned by uid"), "{err}");
}

#[test]
fn files_are_never_created_or_read_through_a_symlink() {
    let base = temp();
    let target = base.path().join("victim.txt");
    fs::write(&target, "keep").expect("victim");
    let planted = base.path().join("trace.ndjson");
    symlink(&target, &planted).expect("plant");
    assert!(create_file(&planted).is_err());
    assert!(read_file(&planted).is_err());
    let dangling = base.path().join("index.html");
    symlink(base.path().join("made-by-us"), &dangling).expect("plant");
    assert!(write_new_file(&dangling, b"x").is_err());
    assert!(!base.path().join("made-by-us").exists());
    assert_eq!(fs::read_to_string(&target).ok().as_deref(), Some("keep"));
}

#[test]
fn random_suffixes_are_16_hex_digits_and_differ() {
    let first = random_suffix();
    assert_eq!(first.len(), 16);
    assert!(first.chars().all(|c| c.is_ascii_hexdigit()), "{first}");
    assert_ne!(first, random_suffix());
    assert_ne!(fallback_random(), fallback_random());
}
