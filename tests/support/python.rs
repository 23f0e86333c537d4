//! The real MCP clients written with the Python SDK (`tests/clients/*.py`), run with the
//! virtual environment's python (`target/venv`, made by `.ci/setup.sh all`): one run of a
//! script with its environment, its `PASS`/`FAIL` lines checked, and the browser it reports
//! (`BROWSER_PID <pid>`) proved gone.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The virtual environment's python.
pub fn venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/python")
}

/// What one run of a client script printed.
#[derive(Debug)]
pub struct ClientRun {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `tests/clients/<script>` to its end with `envs` (and `CHROMATE_BIN` when the caller
/// passes it), from a temp directory of its own: from the repository root, `import mcp` would
/// find its `mcp/` folder. That directory is the script's `TMPDIR` too, so what it and the
/// servers it starts make there (artifacts directories, runtime directories) is removed with it
/// at the end of the run. Panics when the virtual environment is missing (a test's setup error).
pub fn run_client(script: &str, envs: &[(&str, String)]) -> ClientRun {
    let python = venv_python();
    assert!(
        python.exists(),
        "{} is missing: run `bash .ci/setup.sh all`",
        python.display()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("clients")
        .join(script);
    let tmp = tempfile::Builder::new()
        .prefix("chromate-py-run-")
        .tempdir()
        .unwrap_or_else(|err| panic!("cannot make a temp directory: {err}"));
    let out = std::process::Command::new(&python)
        .arg(&script)
        .envs(envs.iter().map(|(name, value)| (*name, value)))
        .env("TMPDIR", tmp.path())
        .current_dir(tmp.path())
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", script.display()));
    ClientRun {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl ClientRun {
    /// Asserts the script exited 0 with `count` lines `PASS <prefix>:` and no `FAIL`.
    pub fn assert_passed(&self, prefix: &str, count: usize) {
        let ClientRun { stdout, stderr, .. } = self;
        assert!(self.success, "{stdout}\n{stderr}");
        assert_eq!(
            stdout.matches(&format!("PASS {prefix}:")).count(),
            count,
            "{stdout}"
        );
        assert!(!stdout.contains("FAIL"), "{stdout}");
    }

    /// Asserts the browser the script printed (`BROWSER_PID <pid>`) is gone within 10 s of
    /// its end: the server that launched it closed it when its client went.
    pub fn assert_browser_gone(&self) {
        let browser: u32 = self
            .stdout
            .lines()
            .find_map(|line| line.strip_prefix("BROWSER_PID "))
            .and_then(|pid| pid.trim().parse().ok())
            .unwrap_or_else(|| panic!("no browser pid in {}", self.stdout));
        if let Err(alive) = crate::procs::wait_until_gone_blocking(
            &[browser],
            Instant::now() + Duration::from_secs(10),
        ) {
            panic!("the browser outlived the client: {alive:?}");
        }
    }
}
