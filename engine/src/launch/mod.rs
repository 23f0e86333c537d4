//! Finding a Chromium executable, choosing its flags, and owning its process and profile.
//!
//! Owns: the executable search, the command line, the temporary profile directory and the
//! process lifecycle (see `process.rs`: the browser never outlives its owner). Does not own the
//! protocol connection (`transport/`) or targets (`browser/`).

mod process;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::transport::{DEFAULT_VIEWPORT, STARTUP_TIMEOUT};

pub(crate) use process::{new_profile, BrowserProcess};

/// Names looked up on `PATH`, in order.
const PATH_NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// Usual install locations, tried after `PATH`.
const INSTALL_PATHS: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/opt/google/chrome/chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

/// How to start a browser.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// An explicit executable; wins over `CHROMATE_BROWSER` and the search.
    pub executable: Option<PathBuf>,
    /// Show a window instead of running headless.
    pub headed: bool,
    /// Viewport size for every page (`None` leaves the browser's default).
    pub viewport: Option<(u32, u32)>,
    /// Extra command-line arguments, appended last.
    pub extra_args: Vec<String>,
    /// How long the browser may take to answer its first command.
    pub startup_timeout: std::time::Duration,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            executable: None,
            headed: false,
            viewport: Some(DEFAULT_VIEWPORT),
            extra_args: Vec::new(),
            startup_timeout: STARTUP_TIMEOUT,
        }
    }
}

impl LaunchOptions {
    /// Headed instead of headless.
    pub fn headed(mut self) -> Self {
        self.headed = true;
        self
    }

    /// Uses this executable.
    pub fn executable(mut self, path: impl Into<PathBuf>) -> Self {
        self.executable = Some(path.into());
        self
    }

    /// Appends a command-line argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.extra_args.push(arg.into());
        self
    }
}

/// Finds the browser: the explicit path, else `CHROMATE_BROWSER` (either one alone is tried
/// when given), else `PATH`, then the usual install paths. The error lists everything tried.
pub fn find_browser(explicit: Option<&Path>) -> Result<PathBuf> {
    let mut tried = Vec::new();
    // A browser the user named is the only one tried: a typo must not silently pick another.
    let named = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CHROMATE_BROWSER").map(PathBuf::from));
    if let Some(candidate) = named {
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
        return Err(Error::BrowserNotFound { tried });
    }
    let path_dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for name in PATH_NAMES {
        for dir in &path_dirs {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
        tried.push(format!("{name} on PATH"));
    }
    for path in INSTALL_PATHS {
        let candidate = PathBuf::from(path);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        tried.push((*path).to_string());
    }
    Err(Error::BrowserNotFound { tried })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Browser features chromate turns off: network services an offline automation browser must not
/// call, and the WebUI toolbar and omnibox popup, whose renderer (`--top-chrome-webui`) costs a
/// headless browser a process and about 55 MB (PSS 380 → 326 MB with one page open).
const DISABLED_FEATURES: &[&str] = &[
    "Translate",
    "MediaRouter",
    "OptimizationHints",
    "DialMediaRouteProvider",
    "AutofillServerCommunication",
    "WebUIReloadButton",
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
];

/// The command line for a launch: the offline, no-first-run flags chromate always uses.
pub(crate) fn browser_args(options: &LaunchOptions, profile: &Path) -> Vec<String> {
    let mut args = vec![
        format!("--user-data-dir={}", profile.display()),
        "--remote-debugging-pipe".to_string(),
        "--no-first-run".to_string(),
        "--no-default-browser-check".to_string(),
        "--disable-background-networking".to_string(),
        "--disable-component-update".to_string(),
        "--disable-sync".to_string(),
        "--disable-gpu".to_string(),
        "--disable-quic".to_string(),
        "--disable-extensions".to_string(),
        "--disable-default-apps".to_string(),
        "--disable-breakpad".to_string(),
        "--disable-crash-reporter".to_string(),
        format!("--crash-dumps-dir={}", profile.join("crashes").display()),
        format!("--disable-features={}", DISABLED_FEATURES.join(",")),
        "--metrics-recording-only".to_string(),
        "--password-store=basic".to_string(),
        "--use-mock-keychain".to_string(),
        "--mute-audio".to_string(),
        "--force-device-scale-factor=1".to_string(),
        // Tabs behind the one in front keep their timers: headless shows one tab at a time,
        // and agents that each own a tab act in all of them at once
        // (docs/mcp.md#tabs-for-parallel-agents). Throttled, a hidden tab's 50 ms timer (the
        // actionability check's) fires after up to a second.
        "--disable-background-timer-throttling".to_string(),
        "--disable-renderer-backgrounding".to_string(),
        "--disable-backgrounding-occluded-windows".to_string(),
        // No back/forward cache: a page an agent leaves is ended, not kept frozen. With the
        // cache on, every navigation costs more (about:blank → login.html 58 → 46 ms, bench-50
        // → login.html 51 → 39 ms, and a new document's first walk 5 → 2 ms; benches/README.md
        // "The back/forward cache"), and `back` would bring back a page as it was left, with
        // none of its requests made again (no mock, no journal entry). `back` and `forward`
        // load the page again instead.
        "--disable-back-forward-cache".to_string(),
    ];
    if running_as_root() {
        args.push("--no-sandbox".to_string());
    }
    if !options.headed {
        args.push("--headless".to_string());
    }
    if let Some((width, height)) = options.viewport {
        args.push(format!("--window-size={width},{height}"));
    }
    // V8 compiles the whole of chromate's in-page script when a renderer first runs it, and
    // keeps it for every later document of that renderer (the script starts with the compile
    // hint `//# allFunctionsCalledOnLoad`, which V8 follows only with this flag). Compiled
    // function by function instead, each document's first snapshot compiled its walk again:
    // 3–4 ms of a navigation's observation (benches/README.md "Compiled once per renderer").
    // Chromium keeps the last `--js-flags` it is given: a caller's own replaces this one.
    if !options
        .extra_args
        .iter()
        .any(|arg| arg.starts_with("--js-flags"))
    {
        args.push("--js-flags=--compile-hints-magic".to_string());
    }
    args.extend(options.extra_args.iter().cloned());
    args.push("about:blank".to_string());
    args
}

fn running_as_root() -> bool {
    process::effective_uid() == 0
}

/// Removes profile directories left by chromate processes that no longer run (a killed owner
/// cannot remove its own). A process counts as gone only when the system says no such process
/// exists, so a live owner's profile is never touched on any platform.
pub(crate) fn remove_stale_profiles() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(process::PROFILE_PREFIX))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !process::process_exists(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_new_profile_is_private_to_its_owner() {
        use std::os::unix::fs::PermissionsExt;
        let profile = match new_profile() {
            Ok(profile) => profile,
            Err(err) => panic!("no profile: {err}"),
        };
        let mode = match std::fs::metadata(profile.path()) {
            Ok(meta) => meta.permissions().mode(),
            Err(err) => panic!("no profile metadata: {err}"),
        };
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }

    #[test]
    fn a_running_process_exists_and_an_unused_pid_does_not() {
        assert!(process::process_exists(std::process::id()));
        assert!(!process::process_exists(0));
        // Above the largest pid Linux (4,194,304) and macOS (99,999) hand out.
        assert!(!process::process_exists(2_000_000_000));
    }

    #[test]
    fn missing_explicit_browser_lists_what_was_tried() {
        match find_browser(Some(Path::new("/nonexistent/chrome"))) {
            Err(Error::BrowserNotFound { tried }) => assert_eq!(tried, ["/nonexistent/chrome"]),
            other => panic!("expected BrowserNotFound, got {other:?}"),
        }
    }

    #[test]
    fn the_browser_keeps_its_temp_files_and_crash_dumps_in_its_profile() {
        let env = process::child_env(Path::new("/tmp/chromate-profile-1-abc"));
        assert_eq!(
            env,
            [
                (
                    "BREAKPAD_DUMP_LOCATION",
                    PathBuf::from("/tmp/chromate-profile-1-abc/crashes")
                ),
                ("TMPDIR", PathBuf::from("/tmp/chromate-profile-1-abc")),
            ]
        );
        // Too long for the singleton's socket address: the temp directory stays ours.
        let long = PathBuf::from(format!("/tmp/{}", "d".repeat(60)));
        let env = process::child_env(&long);
        assert_eq!(env, [("BREAKPAD_DUMP_LOCATION", long.join("crashes"))]);
        let args = browser_args(&LaunchOptions::default(), Path::new("/tmp/p"));
        assert!(args.contains(&"--crash-dumps-dir=/tmp/p/crashes".to_owned()));
    }

    #[test]
    fn v8_follows_the_compile_hint_unless_the_caller_sets_its_own_js_flags() {
        let js_flags = |args: &[String]| {
            args.iter()
                .filter(|a| a.starts_with("--js-flags"))
                .cloned()
                .collect::<Vec<_>>()
        };
        let args = browser_args(&LaunchOptions::default(), Path::new("/tmp/p"));
        assert_eq!(js_flags(&args), ["--js-flags=--compile-hints-magic"]);
        let options = LaunchOptions {
            extra_args: vec!["--js-flags=--expose-gc".to_owned()],
            ..LaunchOptions::default()
        };
        let args = browser_args(&options, Path::new("/tmp/p"));
        assert_eq!(js_flags(&args), ["--js-flags=--expose-gc"]);
    }

    #[test]
    fn args_are_offline_and_headless_by_default() {
        let args = browser_args(&LaunchOptions::default(), Path::new("/tmp/p"));
        for flag in [
            "--headless",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-gpu",
            "--user-data-dir=/tmp/p",
            "--remote-debugging-pipe",
            "--window-size=1280,800",
            "--disable-background-timer-throttling",
        ] {
            assert!(
                args.iter().any(|a| a == flag),
                "{flag} missing from {args:?}"
            );
        }
        let headed = browser_args(&LaunchOptions::default().headed(), Path::new("/tmp/p"));
        assert!(!headed.iter().any(|a| a == "--headless"));
    }
}
