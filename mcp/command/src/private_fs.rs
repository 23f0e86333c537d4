//! Directories and files only this user can read: the session directory, its `traces/`, trace
//! recordings, the state root (issue 19, item 6).
//!
//! Owns: creating a directory chromate names so that nothing already at that name is ever used
//! (`mkdir` is exclusive and never follows a symlink there), checking after creation that the
//! directory is ours and 0700 (through a handle opened with `O_NOFOLLOW`, then tightened with
//! `fchmod`), accepting an existing directory only where its name is fixed and it outlives one
//! call (`traces/`, the state root) and only if it is a real directory owned by this user,
//! creating files exclusively at 0600 with `O_NOFOLLOW`, and the random suffix that makes the
//! session directory's name unpredictable.
//!
//! Does not own which directories exist or what goes in them (`artifacts.rs`, `trace.rs`,
//! `tools/state.rs`), nor the roots above them: a root the user picks (`--artifacts-dir`,
//! `CHROMATE_TRACE_DIR`, `CHROMATE_STATE_DIR`'s parents) or the OS temp directory is theirs.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::Path;

/// Creates `path` as a new directory, 0700: anything already there (a directory, a file, a
/// symlink, dangling or not) is refused with `AlreadyExists`. After creation the directory is
/// checked to be a real directory owned by this user, and its mode is set to exactly 0700
/// (whatever the umask did).
pub fn create_dir(path: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path).map_err(|err| {
        if err.kind() == io::ErrorKind::AlreadyExists {
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} already exists; chromate only uses a directory it has just created \
                     there, so it refuses to write into it",
                    path.display()
                ),
            )
        } else {
            io::Error::new(err.kind(), format!("{}: {err}", path.display()))
        }
    })?;
    make_private(path)
}

/// [`create_dir`], or, when `path` is already a directory, that directory if it is a real one
/// (not a symlink) owned by this user; its mode is tightened to 0700. For directories with a
/// fixed name that later calls reuse: `traces/` inside the session directory, the state root.
pub fn ensure_dir(path: &Path) -> io::Result<()> {
    match create_dir(path) {
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => make_private(path),
        other => other,
    }
}

/// Opens `path` as a directory without following a symlink there, checks that this user owns
/// it and sets its mode to 0700 through the open handle.
#[cfg(unix)]
fn make_private(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let refuse = |why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{}: {why}; refusing to use it", path.display()),
        )
    };
    let dir = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|err| {
            let is_link =
                fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
            if is_link {
                refuse("is a symlink".to_owned())
            } else {
                refuse(format!("is not a directory chromate can open ({err})"))
            }
        })?;
    let meta = dir.metadata()?;
    let uid = effective_uid();
    if meta.uid() != uid {
        return Err(refuse(format!(
            "is owned by uid {}, not by this user (uid {uid})",
            meta.uid()
        )));
    }
    if meta.mode() & 0o7777 != 0o700 {
        dir.set_permissions(fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn make_private(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// No user ids to compare on other platforms: every file counts as this user's.
#[cfg(not(unix))]
pub fn effective_uid() -> u32 {
    0
}

#[cfg(unix)]
#[expect(unsafe_code, reason = "geteuid through libc")]
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions, touches no memory of ours and cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates `path` as a new file, 0600, for writing: an existing file or symlink there is
/// refused (`O_EXCL`, and `O_NOFOLLOW` besides).
pub fn create_file(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

/// Writes `data` to the new file `path` ([`create_file`]).
pub fn write_new_file(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut file = create_file(path)?;
    file.write_all(data)?;
    file.flush()
}

/// Reads the file `path` without following a symlink there.
pub fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let mut data = Vec::new();
    options.open(path)?.read_to_end(&mut data)?;
    Ok(data)
}

/// 16 lower-case hex digits no other process can guess: 8 bytes of `/dev/urandom`, else
/// (no such device) std's per-process random hash keys mixed with the time and the pid.
pub fn random_suffix() -> String {
    let mut bytes = [0u8; 8];
    let from_device = File::open("/dev/urandom").and_then(|mut dev| dev.read_exact(&mut bytes));
    let value = match from_device {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => fallback_random(),
    };
    format!("{value:016x}")
}

fn fallback_random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // `RandomState` keys come from the OS's random source once per process.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    hasher.write_u128(nanos);
    hasher.write_u32(std::process::id());
    hasher.finish()
}

#[cfg(test)]
mod tests;
