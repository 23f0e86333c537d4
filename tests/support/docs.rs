//! Real documentation trees nobody on the team wrote, for the corpus tests: the Rust
//! toolchain's HTML docs (`rustup component add rust-docs`) and Python's (Debian's
//! `python3-doc`), both installed by `.ci/setup.sh all` and served on 127.0.0.1.

use std::path::PathBuf;

/// The toolchain's `share/doc/rust/html` (the sysroot of `$RUSTC`, else `rustc`), whether or
/// not it is installed.
pub fn rust_docs_root() -> Result<PathBuf, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = std::process::Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|err| format!("cannot run {rustc} --print sysroot: {err}"))?;
    let sysroot = String::from_utf8(output.stdout)
        .map_err(|err| format!("{rustc} --print sysroot is not UTF-8: {err}"))?;
    Ok(PathBuf::from(sysroot.trim()).join("share/doc/rust/html"))
}

/// Debian's Python documentation (`python3-doc`): the first of its usual places that holds an
/// `index.html`.
pub fn python_docs_root() -> Option<PathBuf> {
    [
        "/usr/share/doc/python3/html",
        "/usr/share/doc/python3-doc/html",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|root| root.join("index.html").is_file())
}

/// `tests/apps/` of this crate: real web apps installed from npm into its `node_modules`
/// (`.ci/setup.sh all`) and the pages that build on them (`pages/`).
pub fn apps_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("apps")
}
