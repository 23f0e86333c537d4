//! Where captures and flow runs go on disk, and how files get there.
//!
//! Owns: the default output directory (`<temp dir>/chromate-captures-<uid>`, created 0700 and
//! reused only if it is a real directory of this user's: a predictable path other local users
//! can see must not be theirs to read or plant), an output directory the user names (created
//! with its missing parents, nothing about it changed), replacing one file atomically (a new
//! 0600 file beside it, then a rename, so neither a half-written capture nor a symlink planted
//! at the name is ever followed), a flow's own directory `<output>/<flow>/` (replaced by each
//! run, only if a previous run marked it as chromate's), and the sha256 of what was written.
//! Does not own what the files say (`report.rs`, `capture.rs`).

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The file that marks a flow directory as one chromate made (and may replace).
pub const FLOW_MARKER: &str = ".chromate-flow";

/// `<temp dir>/chromate-captures-<uid>`, created 0700 if missing.
pub fn default_dir() -> io::Result<PathBuf> {
    let dir = default_dir_path();
    chromate_command::private_fs::ensure_dir(&dir)?;
    Ok(dir)
}

/// Where [`default_dir`] is, without making it (for reading what a run left).
pub fn default_dir_path() -> PathBuf {
    std::env::temp_dir().join(format!(
        "chromate-captures-{}",
        chromate_command::private_fs::effective_uid()
    ))
}

/// The output directory to read from: `given` made absolute, else [`default_dir_path`].
pub fn existing_dir(given: Option<&str>) -> PathBuf {
    match given {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| PathBuf::from(dir)),
        None => default_dir_path(),
    }
}

/// The output directory: `given` (created with its parents if missing, made absolute), else
/// [`default_dir`].
pub fn resolve_dir(given: Option<&str>) -> io::Result<PathBuf> {
    match given {
        Some(dir) => {
            let dir = std::path::absolute(dir)?;
            std::fs::create_dir_all(&dir)
                .map_err(|err| io::Error::new(err.kind(), format!("{}: {err}", dir.display())))?;
            Ok(dir)
        }
        None => default_dir(),
    }
}

/// Writes `data` as `<dir>/<name>`, replacing what was there: the bytes go to a new 0600 file
/// in `dir` first, which is then renamed over `name` (a symlink at `name` is replaced, never
/// followed). `name` is one file name (the caller checked it).
pub fn replace_file(dir: &Path, name: &str, data: &[u8]) -> io::Result<()> {
    if name.contains('/') || name.contains('\0') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a file name"),
        ));
    }
    let temporary = dir.join(format!(
        ".{name}.{}.tmp",
        chromate_command::private_fs::random_suffix()
    ));
    let written = chromate_command::private_fs::write_new_file(&temporary, data)
        .and_then(|()| std::fs::rename(&temporary, dir.join(name)));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Lower-case hex sha256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    let mut text = String::with_capacity(64);
    for byte in digest.iter() {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// Makes `<output>/<flow>/` afresh for a run: a directory a previous run left (with
/// [`FLOW_MARKER`] in it) is removed first; anything else at that name is refused, untouched.
pub fn fresh_flow_dir(output: &Path, flow: &str) -> io::Result<PathBuf> {
    let dir = output.join(flow);
    match std::fs::symlink_metadata(&dir) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => {
            return Err(io::Error::new(
                err.kind(),
                format!("{}: {err}", dir.display()),
            ))
        }
        Ok(meta) => {
            let ours = meta.is_dir() && dir.join(FLOW_MARKER).is_file();
            if !ours {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!(
                        "{} exists and is not a flow directory chromate made; move it away or \
                         choose another --output-dir",
                        dir.display()
                    ),
                ));
            }
            // `remove_dir_all` removes symlinks inside, never what they point to.
            std::fs::remove_dir_all(&dir)
                .map_err(|err| io::Error::new(err.kind(), format!("{}: {err}", dir.display())))?;
        }
    }
    chromate_command::private_fs::create_dir(&dir)?;
    chromate_command::private_fs::write_new_file(
        &dir.join(FLOW_MARKER),
        b"made by `chromate flows run`; the next run of this flow replaces this directory\n",
    )?;
    Ok(dir)
}

/// Removes `dir` if nothing but an empty `downloads/` (or nothing at all) is in it: a session
/// directory that held no downloads leaves no trace.
pub fn remove_if_empty(dir: &Path) {
    let _ = std::fs::remove_dir(dir.join("downloads"));
    let _ = std::fs::remove_dir(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_the_empty_input_is_the_known_digest() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn replace_file_replaces_a_symlink_and_never_writes_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("victim.txt");
        std::fs::write(&target, b"keep").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, dir.path().join("shot.png")).unwrap();
        replace_file(dir.path(), "shot.png", b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read(dir.path().join("shot.png")).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
        assert!(replace_file(dir.path(), "../x", b"").is_err());
    }

    #[test]
    fn a_flow_directory_is_replaced_only_when_chromate_made_it() {
        let output = tempfile::tempdir().unwrap();
        let first = fresh_flow_dir(output.path(), "login").unwrap();
        std::fs::write(first.join("old.png"), b"x").unwrap();
        let second = fresh_flow_dir(output.path(), "login").unwrap();
        assert!(
            !second.join("old.png").exists(),
            "the previous run's files go"
        );
        std::fs::create_dir(output.path().join("mine")).unwrap();
        std::fs::write(output.path().join("mine/keep.txt"), b"x").unwrap();
        let refused = fresh_flow_dir(output.path(), "mine").unwrap_err();
        assert!(
            refused.to_string().contains("not a flow directory"),
            "{refused}"
        );
        assert!(output.path().join("mine/keep.txt").exists());
    }
}
