//! Captures and flows end to end: the real `chromate capture` and `chromate flows` commands,
//! each run with a temp directory of the test's own as `TMPDIR` (where its browser's profile,
//! and the default output directory, are made), against fixture pages on loopback.
//!
//! Every run is watched while it runs: the Chromium processes it starts (descendants of the
//! `chromate` process) are collected by PID, and once it exits each of them must be gone and
//! no process may still use a profile inside the test's temp directory. Nothing sleeps: the
//! watch polls `/proc` under a deadline.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chromate_tests::{procs, FixtureServer, Response};
use serde_json::Value;

use crate::util::chromate_binary;

/// How long one `chromate` command may take.
const DEADLINE: Duration = Duration::from_secs(120);

/// A finished `chromate` command.
#[derive(Debug)]
pub(crate) struct Ran {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// The browser processes it started (all gone by now).
    browsers: Vec<u32>,
    /// Their command lines, read from /proc while they ran.
    browser_cmdlines: Vec<Vec<String>>,
    elapsed: Duration,
}

impl Ran {
    pub(crate) fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Stdout as one JSON document.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {self:?}"))
    }

    #[track_caller]
    pub(crate) fn assert_ok(&self) -> &Ran {
        assert_eq!(self.code(), Some(0), "{self:#?}");
        self
    }
}

/// One test's temp directory: the `TMPDIR` of every command it runs.
pub(crate) struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    pub(crate) fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// Writes the flow file `chromate.toml` the sandbox's runs find.
    pub(crate) fn write_flows(&self, toml: impl AsRef<[u8]>) {
        std::fs::write(self.path().join("chromate.toml"), toml).expect("write chromate.toml");
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn out(&self) -> PathBuf {
        self.path().join("out")
    }

    /// Runs `chromate ARGS` and proves by PID that every browser it started is gone.
    pub(crate) fn run(&self, args: &[&str]) -> Ran {
        self.run_with(args, &[])
    }

    pub(crate) fn run_with(&self, args: &[&str], envs: &[(&str, &str)]) -> Ran {
        self.run_watching(args, envs, &mut |_| {})
    }

    /// [`Sandbox::run_with`], calling `watch` with the `chromate` process's pid at every poll
    /// while it runs (to signal it once what the test waits for is there).
    fn run_watching(
        &self,
        args: &[&str],
        envs: &[(&str, &str)],
        watch: &mut dyn FnMut(u32),
    ) -> Ran {
        self.run_program(&chromate_binary(), args, envs, watch)
    }

    /// Runs `program ARGS` (which may start `chromate` itself) as [`Sandbox::run_watching`]
    /// runs chromate: every browser among its descendants must be gone once it exits.
    fn run_program(
        &self,
        program: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
        watch: &mut dyn FnMut(u32),
    ) -> Ran {
        let started = Instant::now();
        let mut child = Command::new(program)
            .args(args)
            .envs(envs.iter().copied())
            .env("TMPDIR", self.path())
            .current_dir(self.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn chromate");
        let mut stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let out_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
            text
        });
        let err_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        let mut browsers: Vec<u32> = Vec::new();
        let mut browser_cmdlines: Vec<Vec<String>> = Vec::new();
        let status = loop {
            for pid in procs::descendants(child.id()) {
                let Some(info) = procs::ProcessInfo::read(pid) else {
                    continue;
                };
                if info.is_chrome_like() && !browsers.contains(&pid) {
                    browsers.push(pid);
                    browser_cmdlines.push(info.cmdline);
                }
            }
            if let Some(status) = child.try_wait().expect("wait for chromate") {
                break status;
            }
            watch(child.id());
            if started.elapsed() > DEADLINE {
                let _ = child.kill();
                panic!("chromate {args:?} ran longer than {DEADLINE:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let elapsed = started.elapsed();
        let stdout = out_reader.join().expect("stdout reader");
        let stderr = err_reader.join().expect("stderr reader");
        let gone =
            procs::wait_until_gone_blocking(&browsers, Instant::now() + Duration::from_secs(10));
        assert!(
            gone.is_ok(),
            "chromate {args:?} exited but its browser processes live on: {gone:?}"
        );
        let left = procs::chrome_processes_with_profile_under(self.path());
        assert!(
            left.is_empty(),
            "browsers with a profile in the test's temp dir: {left:?}"
        );
        Ran {
            status,
            stdout,
            stderr,
            browsers,
            browser_cmdlines,
            elapsed,
        }
    }

    /// `chromate capture URL --name NAME --output-dir <out> EXTRA... --json`, which must work
    /// and start a browser; returns the record and the file's bytes.
    fn capture(&self, url: &str, name: &str, extra: &[&str]) -> (Value, Vec<u8>) {
        let out = self.out();
        let out = out.to_str().expect("utf-8 path");
        let mut args = vec![
            "capture",
            url,
            "--name",
            name,
            "--output-dir",
            out,
            "--json",
        ];
        args.extend_from_slice(extra);
        let ran = self.run(&args);
        ran.assert_ok();
        assert!(
            !ran.browsers.is_empty(),
            "a capture starts a browser: {ran:?}"
        );
        let record = ran.json();
        let path = record["path"].as_str().expect("path").to_owned();
        let bytes = std::fs::read(&path).unwrap_or_else(|err| panic!("{path}: {err}"));
        (record, bytes)
    }
}

/// RGBA pixels and size of a PNG, decoded by the `png` crate (not by chromate).
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = decoder.read_info().expect("png header");
    let mut buffer = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buffer).expect("png frame");
    buffer.truncate(info.buffer_size());
    (info.width, info.height, buffer)
}

/// The RGB of pixel (x, y).
fn pixel(png_bytes: &[u8], x: u32, y: u32) -> [u8; 3] {
    let (width, _, pixels) = decode(png_bytes);
    let at = ((y * width + x) * 4) as usize;
    [pixels[at], pixels[at + 1], pixels[at + 2]]
}

#[test]
fn captures_of_an_animated_page_with_animations_disabled_are_byte_identical() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    // animated.html starts a 400 ms transition while it loads; clock.html has an infinite
    // animation and a 5 s transition besides its clock (masked here).
    let (_, first) = sandbox.capture(&server.url("animated.html"), "a1", &[]);
    let (_, second) = sandbox.capture(&server.url("animated.html"), "a2", &[]);
    assert!(first == second, "two captures of animated.html differ");
    let masked = ["--mask", "#clock"];
    let (_, first) = sandbox.capture(&server.url("clock.html"), "c1", &masked);
    let (_, second) = sandbox.capture(&server.url("clock.html"), "c2", &masked);
    assert!(first == second, "two frozen captures of clock.html differ");
    // Frozen means finished: #bar's 5 s transition is at its end (600 px wide, green at
    // x=300), where a capture with animations allowed finds it just started.
    let (_, frozen) = sandbox.capture(&server.url("clock.html"), "f", &masked);
    let (_, running) = sandbox.capture(
        &server.url("clock.html"),
        "r",
        &["--mask", "#clock", "--animations", "allow"],
    );
    assert_eq!(pixel(&frozen, 300, 75), [0x33, 0xaa, 0x33]);
    assert_eq!(pixel(&running, 300, 75), [0xff, 0xff, 0xff]);
}

#[test]
fn a_masked_clock_gives_identical_captures_and_a_mask_matching_nothing_is_a_no_op() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let url = server.url("clock.html");
    let (unmasked_a, a) = sandbox.capture(&url, "u1", &[]);
    let (_, b) = sandbox.capture(&url, "u2", &[]);
    assert!(a != b, "the clock should make unmasked captures differ");
    assert_eq!(unmasked_a["masked"], serde_json::json!([]));
    let (record, masked_1) = sandbox.capture(&url, "m1", &["--mask", "#clock"]);
    let (_, masked_2) = sandbox.capture(&url, "m2", &["--mask", "#clock"]);
    assert!(masked_1 == masked_2, "masked captures of the clock differ");
    assert_eq!(record["masked"], serde_json::json!(["#clock"]));
    // #clock is the box (20, 20) 200×30: covered in #FF00FF.
    assert_eq!(pixel(&masked_1, 120, 35), [0xff, 0x00, 0xff]);
    let (_, green) = sandbox.capture(&url, "g", &["--mask", "#clock", "--mask-color", "#00ff00"]);
    assert_eq!(pixel(&green, 120, 35), [0x00, 0xff, 0x00]);
    // A selector that matches nothing changes nothing.
    let (_, with_nothing) = sandbox.capture(
        &url,
        "n",
        &["--mask", "#clock", "--mask", "#no-such-element"],
    );
    assert!(
        with_nothing == masked_1,
        "a mask matching nothing changed the capture"
    );
    // The console error the page logs while it loads is in the record.
    let errors = record["console_errors"].as_array().expect("console_errors");
    assert!(
        errors
            .iter()
            .any(|error| error["text"] == "clock: console error at load"),
        "{record}"
    );
    let sha = record["sha256"].as_str().expect("sha256");
    assert_eq!(sha.len(), 64, "{record}");
}

#[test]
fn masks_hold_for_an_element_filled_after_it_is_masked_and_for_one_the_page_replaces() {
    // clock-empty.html: #clock is empty (no box) at load and filled every 16 ms; .swap is
    // replaced by a new node every 16 ms. With masks measured once, #clock was captured
    // unmasked in about half the runs; masks are rules applied at paint time now.
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let url = server.url("clock-empty.html");
    // testid= is not CSS: its matches are marked, and the node put in place of a marked one
    // is marked before it is painted.
    let masks = [
        "--mask",
        "#clock",
        "--mask",
        "testid=swap",
        "--viewport",
        "400x240",
    ];
    let (record, first) = sandbox.capture(&url, "c0", &masks);
    assert_eq!(
        record["masked"],
        serde_json::json!(["#clock", "testid=swap"])
    );
    // The clock's text (13 monospace digits from (20, 20)) and the .swap box (20, 70) 200×24
    // are #FF00FF; #card (20, 120) 300×100 is not masked.
    assert_eq!(
        pixel(&first, 24, 30),
        [0xff, 0x00, 0xff],
        "the clock is not masked"
    );
    assert_eq!(
        pixel(&first, 120, 82),
        [0xff, 0x00, 0xff],
        "the swapped node is not masked"
    );
    assert_eq!(pixel(&first, 200, 200), [0xee, 0xee, 0xff], "#card changed");
    for n in 1..20 {
        let (_, again) = sandbox.capture(&url, &format!("c{n}"), &masks);
        assert!(
            again == first,
            "capture {n} of clock-empty.html differs from the first (PNG bytes)"
        );
    }
}

#[test]
fn a_capture_launches_its_browser_with_the_rendering_profile_at_device_scale_1() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let out = sandbox.out();
    let out = out.to_str().expect("utf-8 path");
    let ran = sandbox.run(&[
        "capture",
        &server.url("clock-empty.html"),
        "--name",
        "profile",
        "--output-dir",
        out,
        "--viewport",
        "400x240",
        "--json",
    ]);
    ran.assert_ok();
    // The browser process (not a renderer) has every flag of the profile on its command line.
    let profile = [
        "--font-render-hinting=none",
        "--disable-lcd-text",
        "--force-color-profile=srgb",
        "--disable-smooth-scrolling",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ];
    let browser = ran
        .browser_cmdlines
        .iter()
        .find(|cmdline| cmdline.iter().any(|arg| arg == "--remote-debugging-pipe"));
    let Some(browser) = browser else {
        panic!("no browser process with --remote-debugging-pipe: {ran:?}");
    };
    for flag in profile {
        assert!(
            browser.iter().any(|arg| arg == flag),
            "{flag} is not on the browser's command line: {browser:?}"
        );
    }
    // Device scale 1: a 400×240 CSS px viewport is a 400×240 px PNG.
    let record = ran.json();
    let path = record["path"].as_str().expect("path");
    let bytes = std::fs::read(path).unwrap_or_else(|err| panic!("{path}: {err}"));
    let (width, height, _) = decode(&bytes);
    assert_eq!((width, height), (400, 240));
}

#[test]
fn element_full_page_and_viewport_captures_have_their_sizes() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let url = server.url("clock.html");
    let mask = ["--mask", "#clock"];
    let (record, png) = sandbox.capture(&url, "viewport", &mask);
    assert_eq!(decode(&png).0, 1280);
    assert_eq!(decode(&png).1, 720);
    assert_eq!(
        record["viewport"],
        serde_json::json!({"width": 1280, "height": 720})
    );
    let (record, png) = sandbox.capture(&url, "card", &["--selector", "#card"]);
    assert_eq!((decode(&png).0, decode(&png).1), (300, 200), "{record}");
    assert_eq!(record["size"]["width"], 300);
    assert_eq!(record["selector"], "#card");
    let (_, png) = sandbox.capture(&url, "full", &["--full-page", "--mask", "#clock"]);
    assert_eq!((decode(&png).0, decode(&png).1), (1280, 2000));
    let (record, png) = sandbox.capture(&url, "small", &["--viewport", "800x600"]);
    assert_eq!((decode(&png).0, decode(&png).1), (800, 600));
    assert_eq!(
        record["viewport"],
        serde_json::json!({"width": 800, "height": 600})
    );
    // An element that is not there fails at once, not retried.
    let out = sandbox.out();
    let ran = sandbox.run(&[
        "capture",
        &url,
        "--name",
        "missing",
        "--selector",
        "#no-such-card",
        "--output-dir",
        out.to_str().expect("utf-8"),
        "--timeout-ms",
        "500",
    ]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert!(ran.stderr.contains("code:  NO_MATCH"), "{}", ran.stderr);
    assert!(!out.join("missing.png").exists());
}

#[test]
fn a_pdf_is_the_full_document_on_the_paper_asked_for() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let url = server.url("clock.html");
    let (record, pdf) = sandbox.capture(&url, "doc", &["--format", "pdf", "--mask", "#clock"]);
    assert!(pdf.starts_with(b"%PDF-"), "not a pdf");
    assert!(
        record["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("/doc.pdf")),
        "{record}"
    );
    assert_eq!(record["format"], "pdf");
    let media_box = |pdf: &[u8]| {
        let text = String::from_utf8_lossy(pdf);
        let at = text.find("/MediaBox").expect("a MediaBox");
        text[at..at + 40].to_owned()
    };
    assert!(
        media_box(&pdf).contains("612 792"),
        "letter: {}",
        media_box(&pdf)
    );
    let (_, a4) = sandbox.capture(&url, "doc-a4", &["--format", "pdf", "--paper", "a4"]);
    assert!(media_box(&a4).contains("595"), "a4: {}", media_box(&a4));
}

#[test]
fn names_that_would_leave_the_output_directory_are_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    let out = sandbox.out();
    let long = "a".repeat(300);
    for name in [
        "../escape",
        "/tmp/absolute",
        "a/b",
        "..",
        ".",
        "x y",
        "",
        long.as_str(),
    ] {
        let ran = sandbox.run(&[
            "capture",
            "http://127.0.0.1:9/",
            "--name",
            name,
            "--output-dir",
            out.to_str().expect("utf-8"),
        ]);
        assert_eq!(ran.code(), Some(2), "{name:?}: {ran:?}");
        assert!(ran.stderr.contains("--name"), "{name:?}: {}", ran.stderr);
        assert!(ran.browsers.is_empty(), "{name:?} started a browser");
    }
    assert!(!out.exists(), "a refused name made the output directory");
    let entries: Vec<_> = std::fs::read_dir(sandbox.path())
        .expect("sandbox")
        .map(|entry| entry.expect("entry").file_name())
        .collect();
    assert!(entries.is_empty(), "something was written: {entries:?}");
}

#[cfg(unix)]
#[test]
fn the_default_output_directory_is_private_and_the_path_printed_is_absolute() {
    use std::os::unix::fs::PermissionsExt;
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let ran = sandbox.run(&["capture", &server.url("nav.html"), "--name", "home"]);
    ran.assert_ok();
    let path = PathBuf::from(ran.stdout.trim());
    assert!(path.is_absolute(), "{path:?}");
    let uid = this_uid();
    let dir = sandbox.path().join(format!("chromate-captures-{uid}"));
    assert_eq!(path, dir.join("home.png"));
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&path), 0o600);
    let only: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|entry| entry.expect("entry").file_name())
        .collect();
    assert_eq!(
        only,
        vec![std::ffi::OsString::from("home.png")],
        "nothing else is left"
    );
    // A directory someone made readable is tightened; a symlink there is refused.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    sandbox
        .run(&["capture", &server.url("nav.html"), "--name", "again"])
        .assert_ok();
    assert_eq!(mode(&dir), 0o700);
    std::fs::rename(&dir, sandbox.path().join("moved")).expect("move");
    std::os::unix::fs::symlink(sandbox.path().join("moved"), &dir).expect("symlink");
    let ran = sandbox.run(&["capture", &server.url("nav.html"), "--name", "planted"]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert!(ran.stderr.contains("symlink"), "{}", ran.stderr);
    assert!(!sandbox.path().join("moved/planted.png").exists());
}

/// This user's id, as `/proc/self` owns it (no unsafe call needed).
fn this_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").expect("/proc/self").uid()
}

#[test]
fn a_server_that_fails_twice_then_answers_is_captured_after_retries() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    server.route("/flaky", move |_| {
        if count.fetch_add(1, Ordering::SeqCst) < 2 {
            Response::not_http()
        } else {
            Response::html("<!doctype html><title>ok</title><h1>Third time</h1>")
        }
    });
    let sandbox = Sandbox::new();
    let (record, png) = sandbox.capture(&server.url("flaky"), "flaky", &[]);
    assert_eq!(record["attempts"], 3, "{record}");
    assert_eq!(served.load(Ordering::SeqCst), 3, "one request per try");
    assert_eq!(record["url"], server.url("flaky"));
    assert_eq!(decode(&png).0, 1280);
}

#[test]
fn a_server_that_always_fails_is_reported_after_three_tries_with_a_hint_not_to_retry() {
    // A port nothing listens on: every try is refused at once.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let sandbox = Sandbox::new();
    let url = format!("http://127.0.0.1:{port}/");
    let out = sandbox.out();
    let ran = sandbox.run(&[
        "capture",
        &url,
        "--name",
        "down",
        "--output-dir",
        out.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let error = &ran.json()["error"];
    assert_eq!(error["code"], "NAVIGATION_FAILED", "{error}");
    assert_eq!(error["detail"]["attempts"], 3, "{error}");
    assert_eq!(
        error["detail"]["netError"], "net::ERR_CONNECTION_REFUSED",
        "{error}"
    );
    let hint = error["hint"].as_str().expect("hint");
    assert!(
        hint.contains("3 times") && hint.contains("do not retry"),
        "{hint}"
    );
    // Two pauses, 0.5 s and 1 s, came between the tries.
    assert!(
        ran.elapsed >= Duration::from_millis(1500),
        "{:?}",
        ran.elapsed
    );
    assert!(!out.join("down.png").exists());
}

#[test]
fn networkidle_times_out_naming_the_state_and_commit_returns_at_the_response() {
    let server = FixtureServer::start_detached().expect("fixture server");
    // A page that fetches every 100 ms forever never goes quiet.
    server.route("/busy", |_| {
        Response::html(
            "<!doctype html><title>busy</title><script>setInterval(function () { fetch('/echo'); }, 100);</script>",
        )
    });
    let sandbox = Sandbox::new();
    let out = sandbox.out();
    let out = out.to_str().expect("utf-8");
    let ran = sandbox.run(&[
        "capture",
        &server.url("busy"),
        "--name",
        "busy",
        "--output-dir",
        out,
        "--wait-until",
        "networkidle",
        "--timeout-ms",
        "1500",
        "--json",
    ]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let error = &ran.json()["error"];
    assert_eq!(error["code"], "TIMEOUT_WAITING_LOAD", "{error}");
    assert_eq!(error["detail"]["state"], "networkidle", "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("networkidle")),
        "{error}"
    );
    assert_eq!(
        error["detail"]["attempts"], 3,
        "a timeout is retried: {error}"
    );
    // An image that never arrives holds `load` back for ever; `commit` does not wait for it.
    server.route("/never-loads", |_| {
        Response::html("<!doctype html><title>held</title><h1>Held</h1><img src=\"/hang\">")
    });
    let (record, png) = sandbox.capture(
        &server.url("never-loads"),
        "committed",
        &["--wait-until", "commit", "--timeout-ms", "20000"],
    );
    assert_eq!(record["attempts"], 1, "{record}");
    assert_eq!(decode(&png).0, 1280);
}

/// A flow's element step waits up to its timeout for an element that is not there yet (as in
/// Playwright), where an agent's call fails NO_MATCH at once: delayed.html inserts its button
/// 800 ms after load, beyond what the navigation's settle waits for.
#[test]
fn a_flow_step_waits_for_an_element_that_appears_after_the_page_loaded() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let origin = server.origin();
    sandbox.write_flows(format!(
        r##"
[[flow]]
name = "late"
base_url = "{origin}"
[[flow.step]]
tool = "browser_navigate"
url = "/delayed.html"
[[flow.step]]
tool = "browser_click"
selector = "#late-button"
timeout_ms = 5000
[[flow.step]]
tool = "browser_expect"
what = "text"
selector = "#status"
expected = "clicked"
"##
    ));
    let out = sandbox.out();
    let out_arg = out.to_str().expect("utf-8");
    let ran = sandbox.run(&["flows", "run", "--output-dir", out_arg, "--json"]);
    ran.assert_ok();
    let flow = &ran.json()["flows"][0];
    assert_eq!(flow["ok"], true, "{flow}");
    assert_eq!(flow["steps"][1]["ok"], true, "{flow}");
}

/// A flow file for the fixture server at `origin`: `checkout` fails at its third step.
fn flow_file(origin: &str) -> String {
    format!(
        r##"
[[flow]]
name = "login"
base_url = "{origin}"
viewport = {{ width = 800, height = 600 }}
[[flow.step]]
tool = "browser_navigate"
url = "/login.html"
[[flow.step]]
tool = "browser_fill"
selector = "#password"
value = "hunter2"
[[flow.step]]
tool = "browser_expect"
what = "visible"
selector = "#password"
[[flow.step]]
capture = "form"
selector = "#login-form"
[[flow.step]]
capture = "page"

[[flow]]
name = "checkout"
base_url = "{origin}"
[[flow.step]]
capture = "one"
url = "clock.html"
mask = ["#clock"]
[[flow.step]]
capture = "two"
selector = "#card"
[[flow.step]]
tool = "browser_click"
selector = "#no-such-button"
timeout_ms = 300
[[flow.step]]
capture = "three"
"##
    )
}

#[test]
fn a_flow_whose_third_step_fails_keeps_the_captures_before_it_and_reports_index_2() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    sandbox.write_flows(flow_file(&server.origin()));
    let out = sandbox.out();
    let out_arg = out.to_str().expect("utf-8");
    let ran = sandbox.run(&["flows", "run", "--output-dir", out_arg, "--json"]);
    assert_eq!(ran.code(), Some(1), "a failed flow fails the run: {ran:?}");
    assert!(!ran.browsers.is_empty());
    // A flow's browser has the rendering profile too (docs/cli.md#portable-baselines).
    assert!(
        ran.browser_cmdlines.iter().any(|cmdline| {
            cmdline.iter().any(|arg| arg == "--remote-debugging-pipe")
                && cmdline
                    .iter()
                    .any(|arg| arg == "--font-render-hinting=none")
                && cmdline
                    .iter()
                    .any(|arg| arg == "--force-color-profile=srgb")
        }),
        "no flow browser with the rendering profile: {:?}",
        ran.browser_cmdlines
    );
    let report = ran.json();
    assert_eq!(report["ok"], false);
    let login = &report["flows"][0];
    assert_eq!(login["flow_name"], "login");
    assert_eq!(login["ok"], true, "{login}");
    assert_eq!(login["error"], Value::Null);
    assert_eq!(login["failed_step_index"], Value::Null);
    // The flow's viewport applies to its captures.
    assert_eq!(login["captures"][1]["size"]["width"], 800, "{login}");
    assert_eq!(login["captures"][1]["size"]["height"], 600, "{login}");
    let checkout = &report["flows"][1];
    assert_eq!(checkout["ok"], false, "{checkout}");
    assert_eq!(checkout["failed_step_index"], 2, "{checkout}");
    // Waited for up to its 300 ms (a flow's selector waits for a match), then NO_MATCH.
    assert_eq!(checkout["error"]["code"], "NO_MATCH", "{checkout}");
    assert!(
        checkout["steps"][2]["duration_ms"].as_u64() >= Some(300),
        "the step waited for a match: {checkout}"
    );
    let names: Vec<&str> = checkout["captures"]
        .as_array()
        .expect("captures")
        .iter()
        .filter_map(|capture| capture["name"].as_str())
        .collect();
    assert_eq!(names, ["one", "two"]);
    let dir = out.join("checkout");
    for name in ["one", "two"] {
        let png = std::fs::read(dir.join(format!("{name}.png"))).expect("capture kept");
        let sidecar: Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("{name}.json"))).expect("sidecar"),
        )
        .expect("sidecar json");
        for key in [
            "url",
            "viewport",
            "selector",
            "time",
            "size",
            "sha256",
            "masked",
            "console_errors",
        ] {
            assert!(
                sidecar.get(key).is_some(),
                "{name}.json lacks {key}: {sidecar}"
            );
        }
        assert_eq!(sidecar["size"]["bytes"], png.len());
        assert_eq!(sidecar["url"], server.url("clock.html"));
    }
    let one: Value =
        serde_json::from_slice(&std::fs::read(dir.join("one.json")).expect("one.json"))
            .expect("json");
    assert_eq!(one["masked"], serde_json::json!(["#clock"]));
    assert!(
        one["console_errors"][0]["text"] == "clock: console error at load",
        "the page's console error during the step: {one}"
    );
    assert!(
        !dir.join("three.png").exists(),
        "the step after the failure did not run"
    );
    let index = std::fs::read_to_string(dir.join("index.md")).expect("index.md");
    assert!(
        index.contains("**Failed** at step 3 of 4 (browser_click)"),
        "{index}"
    );
    assert!(index.contains("![one](one.png)"), "{index}");
    // One progress line per flow on a stderr that is not a terminal.
    let progress: Vec<&str> = ran
        .stderr
        .lines()
        .filter(|line| line.starts_with("flow "))
        .collect();
    assert_eq!(progress.len(), 2, "{}", ran.stderr);
    assert!(
        progress[1].contains("checkout: failed at step 3 of 4"),
        "{progress:?}"
    );
    // The typed password is in no file the run wrote.
    for entry in std::fs::read_dir(out.join("login")).expect("login dir") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            assert!(
                !String::from_utf8_lossy(&bytes).contains("hunter2"),
                "{} holds the password",
                path.display()
            );
        }
    }
    // Text output and --quiet: a line per flow on stdout, nothing on stderr.
    let ran = sandbox.run(&["flows", "run", "login", "--output-dir", out_arg, "--quiet"]);
    ran.assert_ok();
    assert!(
        ran.stdout.starts_with("ok    login  5 steps, 2 captures"),
        "{}",
        ran.stdout
    );
    assert_eq!(ran.stderr, "");
}

#[test]
fn describe_reads_what_the_last_run_left_on_disk() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.path().join("flows.toml"),
        flow_file(&server.origin()),
    )
    .expect("write");
    let out = sandbox.out();
    let out_arg = out.to_str().expect("utf-8");
    let env = [("CHROMATE_FLOWS", "flows.toml")];
    let describe = |sandbox: &Sandbox| {
        let ran = sandbox.run_with(
            &[
                "flows",
                "describe",
                "checkout",
                "--output-dir",
                out_arg,
                "--json",
            ],
            &env,
        );
        ran.assert_ok();
        assert!(ran.browsers.is_empty(), "describe starts no browser");
        ran.json()
    };
    let before = describe(&sandbox);
    assert_eq!(before["flow_name"], "checkout");
    assert_eq!(before["index_md"], Value::Null);
    assert_eq!(before["captures"], serde_json::json!([]));
    let ran = sandbox.run_with(&["flows", "run", "checkout", "--output-dir", out_arg], &env);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let after = describe(&sandbox);
    assert!(
        after["index_md"]
            .as_str()
            .is_some_and(|md| md.contains("# Flow `checkout`")),
        "{after}"
    );
    let captures = after["captures"].as_array().expect("captures");
    assert_eq!(captures.len(), 2, "{after}");
    assert_eq!(captures[0]["name"], "one");
    assert_eq!(captures[0]["metadata"]["name"], "one");
    assert!(captures[1]["path"]
        .as_str()
        .is_some_and(|p| p.ends_with("/checkout/two.png")));
    // A capture without its sidecar is listed with null metadata, not dropped.
    std::fs::remove_file(out.join("checkout/two.json")).expect("remove sidecar");
    let after = describe(&sandbox);
    assert_eq!(after["captures"][1]["name"], "two", "{after}");
    assert_eq!(after["captures"][1]["metadata"], Value::Null, "{after}");
    // A name the file does not have is an error that lists the names.
    let ran = sandbox.run_with(
        &["flows", "describe", "nope", "--output-dir", out_arg],
        &env,
    );
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    assert!(ran.stderr.contains("login, checkout"), "{}", ran.stderr);
}

#[test]
fn a_bad_flow_file_or_flow_name_is_reported_with_file_line_and_key_before_anything_runs() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let file = flow_file(&server.origin()).replace("selector = \"#card\"", "selecter = \"#card\"");
    let line = 1 + file
        .lines()
        .position(|line| line.starts_with("selecter"))
        .expect("the bad key");
    sandbox.write_flows(file);
    let out = sandbox.out();
    let out_arg = out.to_str().expect("utf-8");
    let ran = sandbox.run(&["flows", "run", "--output-dir", out_arg]);
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    let expected = format!(
        "chromate.toml:{line}: flow \"checkout\" step 2 (capture \"two\"): unknown argument \"selecter\""
    );
    assert!(ran.stderr.contains(&expected), "{expected}\n{}", ran.stderr);
    assert!(ran.browsers.is_empty(), "nothing ran");
    assert!(!out.exists(), "nothing was written");
    // A flow that is not in the file: the names that are.
    sandbox.write_flows(flow_file(&server.origin()));
    let ran = sandbox.run(&["flows", "run", "login", "logout", "--output-dir", out_arg]);
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    assert!(
        ran.stderr.contains("no flow named \"logout\""),
        "{}",
        ran.stderr
    );
    assert!(ran.stderr.contains("login, checkout"), "{}", ran.stderr);
    assert!(ran.browsers.is_empty(), "nothing ran");
    // `list` finds ./chromate.toml; --config names another file.
    let ran = sandbox.run(&["flows", "list", "--json"]);
    ran.assert_ok();
    assert_eq!(
        ran.json()["flows"][1]["captures"],
        serde_json::json!(["one", "two", "three"])
    );
    let ran = sandbox.run(&["flows", "list", "--config", "missing.toml"]);
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    assert!(
        ran.stderr.contains("missing.toml: no such flow file"),
        "{}",
        ran.stderr
    );
}

/// One flow file for every environment: its base URL and a query value from environment
/// variables (the second with a default).
const ENVIRONMENT_FLOW: &str = r##"
[[flow]]
name = "env"
base_url = "${CHROMATE_E2E_APP_URL}"
[[flow.step]]
tool = "browser_navigate"
url = "/login.html?who=${CHROMATE_E2E_WHO:-nobody}"
[[flow.step]]
tool = "browser_expect"
what = "url"
contains = "who=${CHROMATE_E2E_WHO:-nobody}"
[[flow.step]]
capture = "page"
"##;

#[test]
fn one_flow_file_runs_against_the_environments_urls_or_the_base_url_given() {
    let staging = FixtureServer::start_detached().expect("fixture server");
    let review = FixtureServer::start_detached().expect("second fixture server");
    let sandbox = Sandbox::new();
    sandbox.write_flows(ENVIRONMENT_FLOW);
    let out = sandbox.out();
    let out_arg = out.to_str().expect("utf-8");
    let captured_url = || {
        let sidecar: Value = serde_json::from_slice(
            &std::fs::read(out.join("env").join("page.json")).expect("page.json"),
        )
        .expect("sidecar json");
        sidecar["url"].clone()
    };
    // Unset, without a default: file, line, key and variable, before any browser starts.
    let ran = sandbox.run(&["flows", "run", "--output-dir", out_arg]);
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    assert!(
        ran.stderr.contains(
            "chromate.toml:4: flow \"env\": \"base_url\": environment variable \
             CHROMATE_E2E_APP_URL is not set"
        ),
        "{}",
        ran.stderr
    );
    assert!(ran.browsers.is_empty(), "nothing ran");
    // Set: the flow runs at that origin with the value given.
    let origin = staging.origin();
    let ran = sandbox.run_with(
        &["flows", "run", "--output-dir", out_arg, "--json"],
        &[
            ("CHROMATE_E2E_APP_URL", origin.as_str()),
            ("CHROMATE_E2E_WHO", "ci-bot"),
        ],
    );
    ran.assert_ok();
    assert_eq!(ran.json()["flows"][0]["ok"], true, "{}", ran.stdout);
    assert_eq!(captured_url(), staging.url("login.html?who=ci-bot"));
    // --base-url replaces the file's (whose variable may then be unset); the default fills in.
    let other = review.origin();
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--base-url",
        &other,
        "--output-dir",
        out_arg,
        "--json",
    ]);
    ran.assert_ok();
    assert_eq!(captured_url(), review.url("login.html?who=nobody"));
    let ran = sandbox.run(&["flows", "list", "--json", "--base-url", &other]);
    ran.assert_ok();
    assert_eq!(
        ran.json()["flows"][0]["base_url"],
        Value::from(other.clone())
    );
    // A --base-url that is no absolute http(s) URL is a usage error.
    let ran = sandbox.run(&["flows", "run", "--base-url", "staging.example"]);
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    assert_eq!(
        ran.stderr.lines().next(),
        Some(
            "chromate: flows: --base-url is an absolute http or https URL, not \"staging.example\""
        ),
        "{}",
        ran.stderr
    );
    assert!(ran.browsers.is_empty(), "nothing ran");
}

/// `target/venv/bin/python`, where `.ci/setup.sh all` installs junitparser.
fn venv_python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run `bash .ci/setup.sh all` (it makes target/venv with junitparser)",
        python.display()
    );
    python
}

/// Reads a JUnit file with junitparser (PyPI), a consumer CI systems use, and answers
/// `{suites: [{name, tests, failures}], cases: [{name, classname, time, results: [{kind,
/// type, message}]}]}`.
const JUNIT_READER: &str = r#"
import json, sys
from junitparser import JUnitXml, TestSuite
xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if isinstance(xml, TestSuite) else list(xml)
out = {"suites": [], "cases": []}
for suite in suites:
    out["suites"].append({"name": suite.name, "tests": suite.tests, "failures": suite.failures})
    for case in suite:
        out["cases"].append({
            "name": case.name,
            "classname": case.classname,
            "time": case.time,
            "results": [{"kind": type(r).__name__, "type": r.type, "message": r.message, "text": r.text} for r in case.result],
            "system_out": case.system_out,
        })
print(json.dumps(out))
"#;

/// What a person sees in report.html, as JSON.
const REPORT_READER: &str = "JSON.stringify({
    flows: [...document.querySelectorAll('section.flow')].map(s => ({
        name: s.dataset.flow,
        failed: s.classList.contains('failed'),
        status: s.querySelector('.status').textContent,
        error: (s.querySelector('.error') || {}).textContent || null,
        steps: s.querySelectorAll('tr.step-ok, tr.step-failed').length,
        skipped: s.querySelectorAll('tr.step-skipped').length,
        thumbs: [...s.querySelectorAll('img.thumb')].map(i => ({
            alt: i.alt, loaded: i.complete && i.naturalWidth > 0,
            inline: i.src.startsWith('data:image/png;base64,'),
            href: i.parentElement.getAttribute('href'),
        })),
    })),
    scripts: document.scripts.length,
    external: [...document.querySelectorAll('[src], link[href]')]
        .filter(e => !(e.getAttribute('src') || '').startsWith('data:'))
        .filter(e => !e.classList.contains('failure-shot')).length,
    failure_shots: [...document.querySelectorAll('img.failure-shot')].map(i => ({
        src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0,
    })),
    failure_texts: Object.fromEntries(['snapshot', 'console', 'network'].map(kind =>
        [kind, (document.querySelector('pre.failure-' + kind) || {}).textContent || null])),
    summary: document.getElementById('summary').textContent,
})";

#[test]
fn junit_xml_reads_in_junitparser_and_report_html_renders_offline_in_chromium() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    sandbox.write_flows(flow_file(&server.origin()));
    let out = sandbox.out();
    let junit = sandbox.path().join("reports/junit.xml");
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--output-dir",
        out.to_str().expect("utf-8"),
        "--junit",
        junit.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let report = ran.json();
    assert_eq!(report["junit"], junit.to_str().expect("utf-8"));
    // JUnit as a real consumer reads it: one case per flow, the failed one with its code.
    let parsed = Command::new(venv_python())
        .arg("-c")
        .arg(JUNIT_READER)
        .arg(&junit)
        .output()
        .expect("run python");
    assert!(
        parsed.status.success(),
        "junitparser could not read the file (run `bash .ci/setup.sh all` if it is not installed): {}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let parsed: Value = serde_json::from_slice(&parsed.stdout).expect("reader json");
    // A suite per flow, a case per step, named within the flow file (never an absolute path).
    assert_eq!(parsed["suites"][0]["name"], "login", "{parsed}");
    assert_eq!(parsed["suites"][0]["tests"], 5, "{parsed}");
    assert_eq!(parsed["suites"][0]["failures"], 0, "{parsed}");
    assert_eq!(parsed["suites"][1]["name"], "checkout", "{parsed}");
    assert_eq!(parsed["suites"][1]["tests"], 4, "{parsed}");
    assert_eq!(parsed["suites"][1]["failures"], 1, "{parsed}");
    let cases = parsed["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 9, "{parsed}");
    let names: Vec<&str> = cases
        .iter()
        .filter_map(|case| case["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "step 1: browser_navigate",
            "step 2: browser_fill",
            "step 3: browser_expect",
            "step 4: capture form",
            "step 5: capture page",
            "step 1: capture one",
            "step 2: capture two",
            "step 3: browser_click",
            "step 4",
        ],
        "{parsed}"
    );
    assert_eq!(cases[0]["classname"], "chromate.login");
    assert_eq!(cases[7]["classname"], "chromate.checkout");
    assert!(
        cases
            .iter()
            .all(|case| !case["classname"].as_str().unwrap_or("/").contains('/')),
        "{parsed}"
    );
    for case in &cases[..5] {
        assert_eq!(
            case["results"],
            serde_json::json!([]),
            "login passed: {parsed}"
        );
    }
    assert!(
        cases[0]["time"].as_f64().is_some_and(|time| time > 0.0),
        "{parsed}"
    );
    let failure = &cases[7]["results"][0];
    assert_eq!(failure["kind"], "Failure", "{parsed}");
    assert_eq!(failure["type"], "NO_MATCH", "{parsed}");
    assert!(
        failure["message"]
            .as_str()
            .is_some_and(|message| message.starts_with("step 3 of 4 (browser_click): NO_MATCH")),
        "{parsed}"
    );
    assert_eq!(cases[8]["results"][0]["kind"], "Skipped", "{parsed}");
    assert!(
        cases[6]["system_out"]
            .as_str()
            .is_some_and(|text| text.contains("checkout/two.png")),
        "{parsed}"
    );
    // report.html in headless Chromium, with the fixture server gone: everything it shows is in
    // the file.
    drop(server);
    let html = PathBuf::from(report["report_html"].as_str().expect("report_html"));
    assert_eq!(html, out.join("report.html"));
    let seen = read_report(&html);
    assert_eq!(seen["scripts"], 0, "{seen}");
    assert_eq!(seen["external"], 0, "nothing to fetch: {seen}");
    assert!(
        seen["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("2 flows, 1 passed, 1 failed")),
        "{seen}"
    );
    let flows = &seen["flows"];
    assert_eq!(flows[0]["name"], "login");
    assert_eq!(flows[0]["failed"], false);
    assert_eq!(flows[0]["steps"], 5);
    assert_eq!(flows[1]["name"], "checkout");
    assert_eq!(flows[1]["failed"], true);
    assert_eq!(flows[1]["status"], "failed");
    assert_eq!(flows[1]["steps"], 3, "steps 1-3 ran: {seen}");
    assert_eq!(flows[1]["skipped"], 1, "{seen}");
    assert!(
        flows[1]["error"]
            .as_str()
            .is_some_and(|e| e.contains("NO_MATCH")),
        "{seen}"
    );
    let thumbs = flows[1]["thumbs"].as_array().expect("thumbs");
    assert_eq!(thumbs.len(), 2, "{seen}");
    for thumb in thumbs {
        assert_eq!(thumb["loaded"], true, "{seen}");
        assert_eq!(thumb["inline"], true, "{seen}");
    }
    assert_eq!(thumbs[0]["href"], "checkout/one.png");
    // The failed step's screenshot, from the output directory by its relative path.
    assert_eq!(
        seen["failure_shots"],
        serde_json::json!([{"src": "checkout/failure/screenshot.png", "loaded": true}]),
        "{seen}"
    );
}

/// Opens `html` in a browser of the test's own and answers what [`REPORT_READER`] reads.
fn read_report(html: &Path) -> Value {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let seen = runtime.block_on(async {
        let browser = crate::util::launch().await;
        let page = browser.new_page("about:blank").await.expect("page");
        page.goto(
            &format!("file://{}", html.display()),
            chromate::WaitUntil::Load,
            crate::util::NAV,
        )
        .await
        .expect("open report.html");
        let seen = page.evaluate(REPORT_READER).await.expect("read the report");
        crate::util::close_and_check(browser).await;
        seen
    });
    serde_json::from_str(seen.as_str().expect("json string")).expect("json")
}

/// Reads a JUnit file with [`JUNIT_READER`].
fn read_junit(junit: &Path) -> Value {
    let parsed = Command::new(venv_python())
        .arg("-c")
        .arg(JUNIT_READER)
        .arg(junit)
        .output()
        .expect("run python");
    assert!(
        parsed.status.success(),
        "junitparser could not read the file: {}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    serde_json::from_slice(&parsed.stdout).expect("reader json")
}

#[test]
fn a_failed_step_leaves_its_screenshot_snapshot_and_journal_and_the_reports_name_them() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    // The failing step loads console.html (it logs, fails requests) and then clicks nothing.
    let file = format!(
        r##"
[[flow]]
name = "broken"
base_url = "{origin}"
[[flow.step]]
tool = "browser_navigate"
url = "/login.html"
[[flow.step]]
tool = "browser_batch"
steps = [
  {{ tool = "browser_navigate", arguments = {{ url = "{console}" }} }},
  {{ tool = "browser_click", arguments = {{ selector = "#no-such-button", timeout_ms = 300 }} }},
]
"##,
        origin = server.origin(),
        console = server.url("console.html"),
    );
    sandbox.write_flows(file);
    let out = sandbox.out();
    let junit = sandbox.path().join("junit.xml");
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--output-dir",
        out.to_str().expect("utf-8"),
        "--junit",
        junit.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let report = ran.json();
    let flow = &report["flows"][0];
    assert_eq!(flow["failed_step_index"], 1, "{flow}");
    let artifacts = &flow["steps"][1]["artifacts"];
    assert_eq!(flow["steps"][0]["artifacts"], Value::Null, "{flow}");
    assert_eq!(artifacts["notes"], serde_json::json!([]), "{flow}");
    let dir = out.join("broken/failure");
    let mut paths = Vec::new();
    for (kind, file) in [
        ("screenshot", "screenshot.png"),
        ("snapshot", "snapshot.txt"),
        ("console", "console.txt"),
        ("network", "network.txt"),
    ] {
        let path = dir.join(file);
        assert_eq!(artifacts[kind], path.to_str().expect("utf-8"), "{flow}");
        let bytes = std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        assert!(!bytes.is_empty(), "{} is empty", path.display());
        paths.push(path);
    }
    let (width, height, _) = decode(&std::fs::read(&paths[0]).expect("png"));
    assert_eq!((width, height), (1280, 720), "the flow's default viewport");
    let text = |path: &Path| std::fs::read_to_string(path).expect("utf-8 text");
    let snapshot = text(&paths[1]);
    assert!(snapshot.contains("Log again"), "{snapshot}");
    let console = text(&paths[2]);
    assert!(
        console.contains("console.error [error] error message"),
        "{console}"
    );
    let network = text(&paths[3]);
    assert!(
        network.contains(&format!("response 200 GET {}", server.url("console.html"))),
        "{network}"
    );
    // Only what the failing step journalled: not the first step's page.
    assert!(!network.contains("login.html"), "{network}");
    // JUnit: the failure's body names every file.
    let parsed = read_junit(&junit);
    let failure = &parsed["cases"][1]["results"][0];
    assert_eq!(failure["kind"], "Failure", "{parsed}");
    let body = failure["text"].as_str().expect("failure text");
    assert!(body.contains("NO_MATCH"), "{body}");
    for path in &paths {
        assert!(body.contains(path.to_str().expect("utf-8")), "{body}");
    }
    // report.html shows the screenshot and the texts.
    let html = out.join("report.html");
    let seen = read_report(&html);
    assert_eq!(
        seen["failure_shots"],
        serde_json::json!([{"src": "broken/failure/screenshot.png", "loaded": true}]),
        "{seen}"
    );
    let shown = &seen["failure_texts"];
    assert!(
        shown["snapshot"]
            .as_str()
            .is_some_and(|t| t.contains("Log again")),
        "{seen}"
    );
    assert!(
        shown["console"]
            .as_str()
            .is_some_and(|t| t.contains("error message")),
        "{seen}"
    );
    assert!(
        shown["network"]
            .as_str()
            .is_some_and(|t| t.contains("console.html")),
        "{seen}"
    );
    let index = std::fs::read_to_string(out.join("broken/index.md")).expect("index.md");
    assert!(
        index.contains("- screenshot: [failure/screenshot.png](failure/screenshot.png)"),
        "{index}"
    );
}

/// A flow capturing clock.html's card and its (masked) viewport; `query` picks the variant.
fn visual_flow(origin: &str, query: &str, captures: &[&str]) -> String {
    let mut file = format!(
        "[[flow]]\nname = \"visual\"\nbase_url = \"{origin}\"\n[[flow.step]]\ntool = \"browser_navigate\"\nurl = \"/clock.html{query}\"\n"
    );
    for capture in captures {
        match *capture {
            "card" => file.push_str("[[flow.step]]\ncapture = \"card\"\nselector = \"#card\"\n"),
            other => file.push_str(&format!(
                "[[flow.step]]\ncapture = \"{other}\"\nmask = [\"#clock\"]\n"
            )),
        }
    }
    file
}

#[test]
fn a_baseline_reports_a_changed_region_with_a_difference_image_and_passes_when_unchanged() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let config = sandbox.path().join("chromate.toml");
    let baseline = sandbox.path().join("baseline");
    let out = sandbox.out();
    let args = |extra: &[&'static str]| -> Vec<String> {
        let mut args: Vec<String> = ["flows", "run", "--json", "--output-dir"]
            .iter()
            .map(|arg| (*arg).to_owned())
            .collect();
        args.push(out.display().to_string());
        args.push("--baseline".to_owned());
        args.push(baseline.display().to_string());
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        args
    };
    let run = |extra: &[&'static str]| {
        let args = args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        sandbox.run(&args)
    };
    std::fs::write(
        &config,
        visual_flow(&server.origin(), "", &["card", "page"]),
    )
    .expect("write");
    // No baseline yet and no --update-baseline: a usage error, not a run whose every capture
    // is new (the visual check would be off without a word).
    let ran = run(&[]);
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    assert!(
        ran.stderr.contains("no such directory") && ran.stderr.contains("--update-baseline"),
        "{ran:?}"
    );
    assert!(
        !baseline.exists() && !out.join("visual").exists(),
        "nothing ran"
    );
    // The first run writes the baseline.
    let ran = run(&["--update-baseline"]);
    ran.assert_ok();
    assert_eq!(
        ran.json()["flows"][0]["baseline"]["new"],
        serde_json::json!(["card", "page"])
    );
    assert!(baseline.join("visual/card.png").is_file());
    // Unchanged: passes, nothing differs.
    let ran = run(&[]);
    ran.assert_ok();
    let flow = &ran.json()["flows"][0];
    assert_eq!(
        flow["baseline"]["same"],
        serde_json::json!(["card", "page"]),
        "{flow}"
    );
    assert_eq!(flow["baseline"]["changed"], serde_json::json!([]));
    assert!(!out.join("visual/card.diff.png").exists());
    // The card's top-left 40×40 corner turns red: both captures change, exactly there.
    std::fs::write(
        &config,
        visual_flow(&server.origin(), "?variant=b", &["card", "page"]),
    )
    .expect("write");
    let ran = run(&[]);
    assert_eq!(
        ran.code(),
        Some(1),
        "a changed capture fails the flow: {ran:?}"
    );
    let flow = &ran.json()["flows"][0];
    assert_eq!(
        flow["baseline"]["changed"],
        serde_json::json!(["card", "page"]),
        "{flow}"
    );
    assert_eq!(flow["error"]["code"], "EXPECT_MISMATCH", "{flow}");
    assert_eq!(
        flow["failed_step_index"],
        Value::Null,
        "no step failed: {flow}"
    );
    // Every report says where: after the steps, at the baseline (not "before its first step").
    assert_eq!(
        flow["failed_at"], "at the baseline, after its 3 steps",
        "{flow}"
    );
    let index = std::fs::read_to_string(out.join("visual/index.md")).expect("index.md");
    assert!(
        index.contains("**Failed** at the baseline, after its 3 steps: `EXPECT_MISMATCH`"),
        "{index}"
    );
    let card = &flow["baseline"]["comparisons"][0];
    assert_eq!(card["different_pixels"], 1600, "{card}");
    assert_eq!(card["total_pixels"], 300 * 200);
    let diff = std::fs::read(out.join("visual/card.diff.png")).expect("difference image");
    assert_eq!(
        card["diff"],
        out.join("visual/card.diff.png").display().to_string()
    );
    let (width, height, pixels) = decode(&diff);
    assert_eq!((width, height), (300, 200));
    let mut red = (u32::MAX, u32::MAX, 0, 0, 0);
    for y in 0..height {
        for x in 0..width {
            let at = ((y * width + x) * 4) as usize;
            if pixels[at..at + 4] == [255, 0, 0, 255] {
                red = (
                    red.0.min(x),
                    red.1.min(y),
                    red.2.max(x),
                    red.3.max(y),
                    red.4 + 1,
                );
            }
        }
    }
    // The corner sits inside the card's 2 px border: (2, 2) to (41, 41).
    assert_eq!(
        red,
        (2, 2, 41, 41, 1600),
        "the red region of the difference image"
    );
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(
        html.contains("data-comparison=\"changed\" data-capture=\"card\""),
        "report lists it"
    );
    // A threshold above the changed share lets it pass (1600 of 60000 pixels is 2.7 %).
    run(&["--threshold", "0.05"]).assert_ok();
    // A capture the baseline lacks is new; one the run no longer takes is missing, a failure.
    std::fs::write(
        &config,
        visual_flow(&server.origin(), "", &["card", "extra"]),
    )
    .expect("write");
    let ran = run(&[]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let flow = &ran.json()["flows"][0];
    assert_eq!(
        flow["baseline"]["new"],
        serde_json::json!(["extra"]),
        "{flow}"
    );
    assert_eq!(
        flow["baseline"]["missing"],
        serde_json::json!(["page"]),
        "{flow}"
    );
    assert_eq!(
        flow["baseline"]["same"],
        serde_json::json!(["card"]),
        "{flow}"
    );
    let ran = sandbox.run(&["flows", "run", "--update-baseline"]);
    assert_eq!(
        ran.code(),
        Some(2),
        "--update-baseline needs --baseline: {ran:?}"
    );
}

/// `{codec, width, height, frames, duration}` of a video's first stream, as ffprobe (from
/// Debian's ffmpeg, which `.ci/setup.sh all` installs) decodes it.
fn probe(video: &Path) -> Value {
    let output = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=codec_name,width,height,nb_read_frames:format=duration",
            "-of",
            "json",
        ])
        .arg(video)
        .output()
        .expect("ffprobe (run `bash .ci/setup.sh all` to install ffmpeg)");
    assert!(
        output.status.success(),
        "ffprobe cannot read {}: {}",
        video.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let probed: Value = serde_json::from_slice(&output.stdout).expect("ffprobe json");
    let stream = &probed["streams"][0];
    serde_json::json!({
        "codec": stream["codec_name"],
        "width": stream["width"],
        "height": stream["height"],
        "frames": stream["nb_read_frames"].as_str().and_then(|n| n.parse::<u64>().ok()),
        "duration": probed["format"]["duration"].as_str().and_then(|d| d.parse::<f64>().ok()),
    })
}

/// A flow that records video, captures twice, holds the animated page for `hold_ms`, then
/// fails at its fourth step (a button that is not there).
fn video_flow(origin: &str, hold_ms: u64) -> String {
    format!(
        r##"
[[flow]]
name = "recorded"
base_url = "{origin}"
video = true
[[flow.step]]
capture = "one"
url = "clock.html"
mask = ["#clock"]
[[flow.step]]
capture = "two"
selector = "#card"
[[flow.step]]
tool = "browser_advanced_eval"
js = "new Promise(done => setTimeout(done, {hold_ms}))"
timeout_ms = 120000
[[flow.step]]
tool = "browser_click"
selector = "#no-such-button"
"##
    )
}

#[test]
fn a_failed_flow_keeps_its_video_in_webm_and_mp4_that_ffprobe_decodes() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    sandbox.write_flows(video_flow(&server.origin(), 1500));
    let out = sandbox.out();
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--output-dir",
        out.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let flow = &ran.json()["flows"][0];
    assert_eq!(flow["failed_step_index"], 3, "{flow}");
    assert_eq!(flow["captures"].as_array().map(Vec::len), Some(2), "{flow}");
    let webm = PathBuf::from(flow["video_path"].as_str().expect("video_path"));
    let mp4 = PathBuf::from(flow["video_mp4_path"].as_str().expect("video_mp4_path"));
    assert_eq!(webm, out.join("recorded/video.webm"));
    assert_eq!(mp4, out.join("recorded/video.mp4"));
    for (video, codec) in [(&webm, "vp8"), (&mp4, "h264")] {
        let probed = probe(video);
        assert_eq!(probed["codec"], codec, "{probed}");
        assert_eq!(
            (probed["width"].clone(), probed["height"].clone()),
            (1280.into(), 720.into()),
            "{probed}"
        );
        // The page was held for 1.5 s of the recording, at 25 frames a second.
        let duration = probed["duration"].as_f64().expect("duration");
        assert!(duration >= 1.4, "{} lasts {duration} s", video.display());
        let frames = probed["frames"].as_u64().expect("frames");
        assert!(
            frames >= 35,
            "{frames} frames in {duration} s of {}",
            video.display()
        );
    }
    let index = std::fs::read_to_string(out.join("recorded/index.md")).expect("index.md");
    assert!(index.contains("Video: [video.webm](video.webm)"), "{index}");
    // Without ffmpeg the flow runs as before, with no video and a note saying how to get it.
    let ran = sandbox.run_with(
        &[
            "flows",
            "run",
            "--output-dir",
            out.to_str().expect("utf-8"),
            "--json",
        ],
        &[("CHROMATE_FFMPEG", "/nonexistent/ffmpeg")],
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let flow = &ran.json()["flows"][0];
    assert_eq!(flow["failed_step_index"], 3, "{flow}");
    assert_eq!(flow["video_path"], Value::Null);
    assert_eq!(flow["video_mp4_path"], Value::Null);
    assert!(
        flow["video_note"]
            .as_str()
            .is_some_and(|note| note.contains("apt-get install ffmpeg")),
        "{flow}"
    );
    assert!(!out.join("recorded/video.webm").exists());
}

/// The colour at the middle of the frame of `video` (800x600) shown `at` seconds from its
/// start: the last frame ffmpeg decodes from a seek there to at most 0.4 s later.
fn frame_middle(video: &Path, at: f64) -> [u8; 3] {
    let output = Command::new("ffmpeg")
        .args(["-v", "error", "-ss", &format!("{:.3}", at.max(0.0)), "-i"])
        .arg(video)
        .args(["-t", "0.4", "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"])
        .output()
        .expect("ffmpeg (run `bash .ci/setup.sh all` to install it)");
    assert!(
        output.status.success(),
        "ffmpeg cannot decode {}: {}",
        video.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let frame = 800 * 600 * 3;
    let frames = output.stdout.len() / frame;
    assert!(frames > 0, "no frame of {} at {at} s", video.display());
    let middle = (frames - 1) * frame + (300 * 800 + 400) * 3;
    let pixel = &output.stdout[middle..middle + 3];
    [pixel[0], pixel[1], pixel[2]]
}

#[test]
fn the_video_follows_the_flow_to_a_tab_it_opens() {
    let sandbox = Sandbox::new();
    // A red page, then a blue one in a new tab, each held for a while on camera.
    let flow = r#"
[[flow]]
name = "tabs"
video = true
viewport = { width = 800, height = 600 }
[[flow.step]]
tool = "browser_navigate"
url = "data:text/html,<body style='margin:0;background:rgb(255,0,0)'>red</body>"
[[flow.step]]
tool = "browser_advanced_eval"
js = "new Promise(done => setTimeout(done, 1000))"
[[flow.step]]
tool = "browser_page"
action = "open"
url = "data:text/html,<body style='margin:0;background:rgb(0,0,255)'>blue</body>"
[[flow.step]]
tool = "browser_advanced_eval"
js = "new Promise(done => setTimeout(done, 1000))"
[[flow.step]]
capture = "blue"
"#;
    sandbox.write_flows(flow);
    let out = sandbox.out();
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--output-dir",
        out.to_str().expect("utf-8"),
        "--json",
    ]);
    ran.assert_ok();
    let flow = &ran.json()["flows"][0];
    // The tab the flow moved to has the flow's viewport too.
    let blue = &flow["captures"][0];
    assert_eq!(
        blue["viewport"],
        serde_json::json!({ "width": 800, "height": 600 }),
        "{flow}"
    );
    assert_eq!(blue["size"]["width"], 800, "{flow}");
    let webm = PathBuf::from(flow["video_path"].as_str().expect("video_path"));
    let probed = probe(&webm);
    assert_eq!(
        (probed["width"].clone(), probed["height"].clone()),
        (800.into(), 600.into()),
        "{probed}"
    );
    let duration = probed["duration"].as_f64().expect("duration");
    assert!(duration >= 1.9, "two holds of 1 s: {probed}");
    assert!(
        probed["frames"].as_u64().is_some_and(|frames| frames >= 45),
        "{probed}"
    );
    let reddish = |[r, g, b]: [u8; 3]| r > 200 && g < 60 && b < 60;
    let bluish = |[r, g, b]: [u8; 3]| b > 200 && r < 60 && g < 60;
    let first = frame_middle(&webm, 0.3);
    assert!(reddish(first), "the video starts on the red tab: {first:?}");
    let last = frame_middle(&webm, duration - 0.5);
    assert!(
        bluish(last),
        "and ends on the blue tab the flow opened: {last:?}"
    );
}

#[test]
fn sigterm_stops_a_flow_and_still_finalizes_its_video() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    // The third step would hold the page for two minutes.
    sandbox.write_flows(video_flow(&server.origin(), 120_000));
    let out = sandbox.out();
    let second = out.join("recorded/two.png");
    let mut signalled: Option<Instant> = None;
    let ran = sandbox.run_watching(
        &[
            "flows",
            "run",
            "--output-dir",
            out.to_str().expect("utf-8"),
            "--json",
        ],
        &[],
        &mut |pid| {
            // Once the second capture is on disk the third step is running.
            if signalled.is_none() && second.is_file() {
                let status = Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status()
                    .expect("kill");
                assert!(status.success());
                signalled = Some(Instant::now());
            }
        },
    );
    let signalled = signalled.expect("the second capture appeared and chromate was signalled");
    assert!(
        signalled.elapsed() < Duration::from_secs(60),
        "the flow ended soon after SIGTERM, not when its step would have"
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let flow = &ran.json()["flows"][0];
    assert_eq!(flow["failed_step_index"], 2, "{flow}");
    assert_eq!(flow["error"]["detail"]["reason"], "cancelled", "{flow}");
    assert_eq!(flow["captures"].as_array().map(Vec::len), Some(2), "{flow}");
    for key in ["video_path", "video_mp4_path"] {
        let video = PathBuf::from(
            flow[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key}: {flow}")),
        );
        let probed = probe(&video);
        assert!(
            probed["frames"].as_u64().is_some_and(|frames| frames > 0),
            "{probed}"
        );
    }
    assert!(
        out.join("recorded/index.md").is_file(),
        "the flow's files are written"
    );
}

#[test]
fn the_flows_tools_through_a_real_mcp_client() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let config = sandbox.path().join("ci-flows.toml");
    std::fs::write(&config, flow_file(&server.origin())).expect("write");
    let out = sandbox.out();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/clients/flows.py");
    let binary = chromate_binary();
    let origin = server.origin();
    let envs = [
        ("CHROMATE_BIN", binary.to_str().expect("utf-8")),
        ("FIXTURE_ORIGIN", origin.as_str()),
        ("FLOWS_FILE", config.to_str().expect("utf-8")),
        ("OUT_DIR", out.to_str().expect("utf-8")),
    ];
    let ran = sandbox.run_program(
        &venv_python(),
        &[script.to_str().expect("utf-8")],
        &envs,
        &mut |_| {},
    );
    ran.assert_ok();
    assert!(!ran.browsers.is_empty(), "the tools started browsers");
    let report = ran.json();
    // The 28 by default; the five more with --caps flows.
    let default_tools = report["default_tools"].as_array().expect("default tools");
    assert_eq!(default_tools.len(), 28, "{report}");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(tools.len(), 33, "{tools:?}");
    assert_eq!(
        tools[28..],
        [
            "capture_url",
            "capture_element",
            "run_flow",
            "list_flows",
            "describe_flow"
        ]
    );
    let capture = &report["capture_url"];
    assert_eq!(capture["is_error"], false, "{capture}");
    assert_eq!(
        capture["json"]["path"],
        out.join("home.png").display().to_string()
    );
    assert_eq!(capture["json"]["size"]["width"], 800, "{capture}");
    assert_eq!(capture["json"]["masked"], serde_json::json!(["#clock"]));
    assert!(out.join("home.png").is_file());
    let element = &report["capture_element"];
    assert_eq!(element["json"]["size"]["width"], 300, "{element}");
    assert_eq!(element["json"]["size"]["height"], 200, "{element}");
    let refused = &report["capture_element_without_selector"];
    assert_eq!(refused["is_error"], true, "{refused}");
    assert_eq!(
        refused["structured"]["error"]["code"], "INVALID_ARGUMENT",
        "{refused}"
    );
    assert_eq!(
        report["list_flows"]["json"]["flows"][1]["name"], "checkout",
        "{}",
        report["list_flows"]
    );
    // A failed step is a result with `error` set, not a tool error.
    let run = &report["run_flow"];
    assert_eq!(run["is_error"], false, "{run}");
    assert_eq!(run["json"]["flow_name"], "checkout");
    assert_eq!(run["json"]["failed_step_index"], 2, "{run}");
    assert_eq!(run["json"]["error"]["code"], "NO_MATCH", "{run}");
    assert_eq!(
        run["json"]["captures"].as_array().map(Vec::len),
        Some(2),
        "{run}"
    );
    for key in [
        "captures",
        "video_path",
        "video_mp4_path",
        "error",
        "failed_step_index",
    ] {
        assert!(
            run["json"].get(key).is_some(),
            "run_flow lacks {key}: {run}"
        );
    }
    // A flow the file does not have is a tool error listing the names.
    let missing = &report["run_missing_flow"];
    assert_eq!(missing["is_error"], true, "{missing}");
    assert_eq!(
        missing["structured"]["error"]["code"], "INVALID_ARGUMENT",
        "{missing}"
    );
    assert_eq!(
        missing["structured"]["error"]["detail"]["available"],
        serde_json::json!(["login", "checkout"]),
        "{missing}"
    );
    let described = &report["describe_flow"]["json"];
    assert_eq!(described["flow_name"], "checkout");
    assert!(
        described["index_md"]
            .as_str()
            .is_some_and(|md| md.contains("**Failed** at step 3")),
        "{described}"
    );
    assert_eq!(
        described["captures"][0]["metadata"]["name"], "one",
        "{described}"
    );
}

#[test]
fn a_download_during_a_flow_is_saved_in_the_flows_directory() {
    let server = FixtureServer::start_detached().expect("fixture server");
    server.route("/downloads", |_| {
        Response::html(
            "<!doctype html><title>Downloads</title>\
             <a id=\"dl\" href=\"/attachment?name=report.csv&bytes=64\">report</a>",
        )
    });
    let sandbox = Sandbox::new();
    let file = format!(
        "[[flow]]\nname = \"export\"\nbase_url = \"{}\"\n\
         [[flow.step]]\ntool = \"browser_navigate\"\nurl = \"/downloads\"\n\
         [[flow.step]]\ntool = \"browser_click\"\nselector = \"#dl\"\n",
        server.origin()
    );
    sandbox.write_flows(file);
    let out = sandbox.out();
    let junit = sandbox.path().join("junit.xml");
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--output-dir",
        out.to_str().expect("utf-8"),
        "--junit",
        junit.to_str().expect("utf-8"),
        "--json",
    ]);
    ran.assert_ok();
    let saved = out.join("export/files/downloads/report.csv");
    let bytes = std::fs::read(&saved).unwrap_or_else(|err| panic!("{}: {err}", saved.display()));
    assert_eq!(bytes.len(), 64);
    // Every report lists it: JSON (and run.json), report.html, JUnit's system-out, index.md.
    let report = ran.json();
    let saved_text = saved.to_str().expect("utf-8");
    assert_eq!(
        report["flows"][0]["downloads"],
        serde_json::json!([{
            "name": "report.csv",
            "url": server.url("attachment?name=report.csv&bytes=64"),
            "state": "completed",
            "bytes": 64,
            "path": saved_text,
            "reason": null,
        }]),
        "{report}"
    );
    let run_json: Value =
        serde_json::from_slice(&std::fs::read(out.join("export/run.json")).expect("run.json"))
            .expect("json");
    assert_eq!(run_json["downloads"], report["flows"][0]["downloads"]);
    let line = format!("report.csv (64 bytes) completed: {saved_text}");
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(
        html.contains("<a href=\"export/files/downloads/report.csv\">"),
        "{html}"
    );
    assert!(html.contains(&line), "{html}");
    read_junit(&junit);
    let xml = std::fs::read_to_string(&junit).expect("junit");
    assert!(xml.contains(&format!("download {line}")), "{xml}");
    let index = std::fs::read_to_string(out.join("export/index.md")).expect("index.md");
    assert!(
        index.contains(&format!("## Downloads\n\n- {line}")),
        "{index}"
    );
}

#[test]
fn each_flows_result_is_printed_once_and_a_failed_a11y_check_is_one_short_line() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let file = format!(
        "[[flow]]\nname = \"alpha\"\nbase_url = \"{0}\"\n\
         [[flow.step]]\ntool = \"browser_navigate\"\nurl = \"/login.html\"\n\
         [[flow]]\nname = \"bravo\"\nbase_url = \"{0}\"\n\
         [[flow.step]]\ntool = \"browser_navigate\"\nurl = \"/a11y-violations.html\"\n\
         [[flow.step]]\ntool = \"browser_a11y\"\ncheck = true\nnodes = 10\n",
        server.origin()
    );
    sandbox.write_flows(file);
    let out = sandbox.out();
    // Text output with stderr not a terminal: each flow's result once, on stdout.
    let ran = sandbox.run(&["flows", "run", "--output-dir", out.to_str().expect("utf-8")]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    for (name, verdict) in [("alpha", "ok    "), ("bravo", "FAIL  ")] {
        let on_stdout: Vec<&str> = ran
            .stdout
            .lines()
            .filter(|line| line.contains(&format!("{name}  ")))
            .collect();
        assert_eq!(on_stdout.len(), 1, "{name}: {}", ran.stdout);
        assert!(
            on_stdout[0].starts_with(&format!("{verdict}{name}")),
            "{on_stdout:?}"
        );
        let on_stderr = ran
            .stderr
            .lines()
            .filter(|line| line.contains(name))
            .count();
        assert_eq!(on_stderr, 0, "{name}: {}", ran.stderr);
    }
    assert!(
        ran.stdout.contains("flows: 2 run, 1 failed; output in "),
        "{}",
        ran.stdout
    );
    // The failed check's line names its rules with their counts, not its whole answer.
    let fail = ran
        .stdout
        .lines()
        .find(|line| line.starts_with("FAIL  bravo"))
        .expect("FAIL line");
    assert!(
        fail.contains("EXPECT_MISMATCH browser_a11y: the accessibility check failed: "),
        "{fail}"
    );
    assert!(fail.contains("image-alt (critical, "), "{fail}");
    assert!(fail.len() < 600, "{} bytes: {fail}", fail.len());
    assert!(!fail.contains('{'), "no JSON in the line: {fail}");
    // The whole answer is in the flow's run.json and report.html.
    let run_json: Value =
        serde_json::from_slice(&std::fs::read(out.join("bravo/run.json")).expect("run.json"))
            .expect("json");
    let violations = run_json["error"]["detail"]["violations"]
        .as_array()
        .expect("violations in the detail");
    assert!(
        violations.iter().any(|v| v["id"] == "image-alt"),
        "{run_json}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(
        html.contains("<details class=\"error-detail\"><summary>detail</summary><pre>"),
        "{html}"
    );
    assert!(html.contains("\n    id: image-alt\n"), "{html}");
    // With --json, stdout is the report alone and stderr has a line per flow.
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--output-dir",
        out.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    ran.json();
    let progress: Vec<&str> = ran
        .stderr
        .lines()
        .filter(|line| line.starts_with("flow "))
        .collect();
    assert_eq!(progress.len(), 2, "{}", ran.stderr);
}

#[test]
fn sigterm_stops_a_capture_and_closes_its_browser() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let sandbox = Sandbox::new();
    let out = sandbox.out();
    let mut signalled: Option<Instant> = None;
    // `/hang` never answers: the capture would wait its whole minute.
    let ran = sandbox.run_watching(
        &[
            "capture",
            &server.url("hang"),
            "--name",
            "never",
            "--timeout-ms",
            "60000",
            "--output-dir",
            out.to_str().expect("utf-8"),
        ],
        &[],
        &mut |pid| {
            let browser_up = procs::descendants(pid).iter().any(|child| {
                procs::ProcessInfo::read(*child).is_some_and(|info| info.is_chrome_like())
            });
            if signalled.is_none() && browser_up && server.request_count("hang") > 0 {
                let status = Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status()
                    .expect("kill");
                assert!(status.success());
                signalled = Some(Instant::now());
            }
        },
    );
    let signalled = signalled.expect("the page was requested and chromate signalled");
    assert!(
        signalled.elapsed() < Duration::from_secs(20),
        "{:?}",
        signalled.elapsed()
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert!(ran.stderr.contains("cancelled"), "{}", ran.stderr);
    assert!(!ran.browsers.is_empty());
    assert!(!out.join("never.png").exists());
}

/// A page served over TLS with a certificate no browser trusts (the TLS fixture's leaf, its CA
/// unknown to Chromium): refused as it is, loaded with `--ignore-https-errors` (Chromium's
/// `--ignore-certificate-errors`) by a flow and by a capture, and with
/// `CHROMATE_IGNORE_HTTPS_ERRORS=1`.
#[test]
fn ignore_https_errors_lets_a_flow_and_a_capture_load_an_untrusted_certificate() {
    let cert = chromate_tests::tls::TlsCert::generate().expect("certificate");
    let secure =
        FixtureServer::start_detached_tls_serving(chromate_tests::server::pages_dir(), &cert)
            .expect("https server");
    let url = secure.url("login.html");
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let sandbox = Sandbox::new();
    let file = format!(
        "[[flow]]\nname = \"secure\"\n\
         [[flow.step]]\ntool = \"browser_navigate\"\nurl = \"{url}\"\n\
         [[flow.step]]\ntool = \"browser_expect\"\nwhat = \"visible\"\nselector = \"#password\"\n"
    );
    sandbox.write_flows(file);
    let out = sandbox.out();
    let out_arg = out.to_str().expect("utf-8");
    // Without the flag the certificate is refused: the first step fails.
    let refused = sandbox.run(&["flows", "run", "--output-dir", out_arg, "--json"]);
    assert_eq!(refused.code(), Some(1), "{refused:?}");
    let flow = &refused.json()["flows"][0];
    assert_eq!(flow["failed_step_index"], 0, "{flow}");
    assert!(
        flow["error"].to_string().contains("ERR_CERT_"),
        "a certificate error: {flow}"
    );
    // With it, both steps pass.
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--output-dir",
        out_arg,
        "--ignore-https-errors",
        "--json",
    ]);
    ran.assert_ok();
    assert_eq!(ran.json()["flows"][0]["ok"], true, "{ran:?}");
    // The variable does the same (it is what a session daemon reads).
    sandbox
        .run_with(
            &["flows", "run", "--output-dir", out_arg, "--json"],
            &[("CHROMATE_IGNORE_HTTPS_ERRORS", "1")],
        )
        .assert_ok();
    // A capture: refused, then taken.
    let refused = sandbox.run(&["capture", &url, "--name", "secure", "--output-dir", out_arg]);
    assert_eq!(refused.code(), Some(1), "{refused:?}");
    assert!(refused.stderr.contains("ERR_CERT_"), "{refused:?}");
    let ran = sandbox.run(&[
        "capture",
        &url,
        "--name",
        "secure",
        "--output-dir",
        out_arg,
        "--ignore-https-errors",
        "--json",
    ]);
    ran.assert_ok();
    assert_eq!(ran.json()["url"], url, "{ran:?}");
    let (width, height, _) = decode(&std::fs::read(out.join("secure.png")).expect("png"));
    assert_eq!((width, height), (1280, 720));
}

/// A 100×100 white box; `variant` 1 draws a 4×3 black block in it, 2 the same block in a grey
/// (#f0f0f0) below pixelmatch's default colour threshold.
fn dots_page(variant: usize) -> Response {
    let block = match variant {
        1 => "<div style=\"position:absolute;left:10px;top:10px;width:4px;height:3px;background:#000\"></div>",
        2 => "<div style=\"position:absolute;left:10px;top:10px;width:4px;height:3px;background:#f0f0f0\"></div>",
        _ => "",
    };
    Response::html(format!(
        "<!doctype html><title>dots</title><body style=\"margin:0;background:#fff\"><div id=\"box\" style=\"position:relative;width:100px;height:100px;background:#fff\">{block}</div>"
    ))
}

fn dots_flow(origin: &str, tolerance: &str) -> String {
    format!(
        "[[flow]]\nname = \"dots\"\nbase_url = \"{origin}\"\n[[flow.step]]\ntool = \"browser_navigate\"\nurl = \"/dots\"\n[[flow.step]]\ncapture = \"box\"\nselector = \"#box\"\n{tolerance}"
    )
}

#[test]
fn max_diff_pixels_and_threshold_decide_a_capture_against_its_baseline_and_the_count_is_reported() {
    let server = FixtureServer::start_detached().expect("fixture server");
    let variant = Arc::new(AtomicUsize::new(0));
    let chosen = variant.clone();
    server.route("/dots", move |_| dots_page(chosen.load(Ordering::SeqCst)));
    let sandbox = Sandbox::new();
    let config = sandbox.path().join("chromate.toml");
    let baseline = sandbox.path().join("baseline");
    let junit = sandbox.path().join("junit.xml");
    let out = sandbox.out();
    let run = |tolerance: &str, extra: &[&str]| -> Ran {
        std::fs::write(&config, dots_flow(&server.origin(), tolerance)).expect("write");
        let out = out.display().to_string();
        let baseline = baseline.display().to_string();
        let junit = junit.display().to_string();
        let mut args = vec![
            "flows",
            "run",
            "--json",
            "--output-dir",
            &out,
            "--baseline",
            &baseline,
            "--junit",
            &junit,
        ];
        args.extend_from_slice(extra);
        sandbox.run(&args)
    };
    let comparison = |ran: &Ran| ran.json()["flows"][0]["baseline"]["comparisons"][0].clone();
    let junit_text = || std::fs::read_to_string(&junit).expect("junit.xml");

    run("", &["--update-baseline"]).assert_ok();
    assert!(baseline.join("dots/box.png").is_file());

    // 12 black pixels: within 20 allowed passes, the count reported.
    variant.store(1, Ordering::SeqCst);
    let ran = run("max_diff_pixels = 20\n", &[]);
    ran.assert_ok();
    let card = comparison(&ran);
    assert_eq!(card["verdict"], "same", "{card}");
    assert_eq!(card["different_pixels"], 12, "{card}");
    assert_eq!(card["total_pixels"], 10_000, "{card}");
    assert_eq!(card["max_diff_pixels"], 20, "{card}");
    let xml = junit_text();
    assert!(
        xml.contains("box: same (12 of 10000 pixels differ, at most 20 allowed)"),
        "{xml}"
    );
    assert!(!xml.contains("<failure"), "{xml}");

    // Below the count: the flow fails, naming the count.
    let ran = run("max_diff_pixels = 11\n", &[]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let card = comparison(&ran);
    assert_eq!(card["verdict"], "changed", "{card}");
    assert_eq!(card["different_pixels"], 12, "{card}");
    assert_eq!(ran.json()["flows"][0]["error"]["code"], "EXPECT_MISMATCH");
    let xml = junit_text();
    assert!(
        xml.contains("box: changed (12 of 10000 pixels differ, at most 11 allowed)"),
        "{xml}"
    );

    // Without the key, today's rule: any differing pixel fails.
    let ran = run("", &[]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert_eq!(comparison(&ran)["verdict"], "changed");

    // A faint grey block is under the default colour threshold (0.1) and over 0.01.
    variant.store(2, Ordering::SeqCst);
    let ran = run("", &[]);
    ran.assert_ok();
    let card = comparison(&ran);
    assert_eq!(card["different_pixels"], 0, "{card}");
    assert_eq!(card["color_threshold"], 0.1, "{card}");
    let ran = run("threshold = 0.01\n", &[]);
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let card = comparison(&ran);
    assert_eq!(card["different_pixels"], 12, "{card}");
    assert_eq!(card["color_threshold"], 0.01, "{card}");
    run("threshold = 0.01\nmax_diff_pixels = 12\n", &[]).assert_ok();
}

#[test]
fn wait_for_captures_an_element_the_pages_own_timer_inserts_and_fails_when_it_never_comes() {
    let server = FixtureServer::start_detached().expect("fixture server");
    // The page adds a red 50×50 box at its top-left corner 800 ms after it loaded.
    server.route("/late", |_| {
        Response::html(
            "<!doctype html><title>late</title><body style=\"margin:0;background:#fff\"><script>\
             addEventListener('load', () => setTimeout(() => { const box = document.createElement('div'); \
             box.id = 'late'; box.style.cssText = 'width:50px;height:50px;background:#f00'; \
             document.body.append(box); }, 800));</script>",
        )
    });
    let sandbox = Sandbox::new();
    let origin = server.origin();
    sandbox.write_flows(format!(
        r##"
[[flow]]
name = "loads"
base_url = "{origin}"
[[flow.step]]
capture = "late"
url = "/late"
wait_for = "#late"
[[flow]]
name = "current"
base_url = "{origin}"
[[flow.step]]
tool = "browser_navigate"
url = "/late"
[[flow.step]]
capture = "late"
wait_for = "#late"
timeout_ms = 20000
[[flow]]
name = "never"
base_url = "{origin}"
[[flow.step]]
tool = "browser_navigate"
url = "/late"
[[flow.step]]
capture = "late"
wait_for = "#never"
timeout_ms = 1000
"##
    ));
    let out = sandbox.out();
    let out_arg = out.to_str().expect("utf-8");
    let ran = sandbox.run(&["flows", "run", "--output-dir", out_arg, "--json"]);
    assert_eq!(ran.code(), Some(1), "the third flow fails: {ran:?}");
    let report = ran.json();
    for (index, flow) in ["loads", "current"].iter().enumerate() {
        let result = &report["flows"][index];
        assert_eq!(result["ok"], true, "{result}");
        let path = out.join(flow).join("late.png");
        let png = std::fs::read(&path).unwrap_or_else(|err| panic!("{path:?}: {err}"));
        assert_eq!(pixel(&png, 10, 10), [255, 0, 0], "{flow}: the box is there");
        assert_eq!(pixel(&png, 60, 60), [255, 255, 255], "{flow}: only the box");
    }
    assert_eq!(report["flows"][0]["captures"][0]["attempts"], 1);
    let never = &report["flows"][2];
    assert_eq!(never["ok"], false, "{never}");
    assert_eq!(never["failed_step_index"], 1, "{never}");
    // The selector was waited for up to the capture's timeout_ms, then matched nothing.
    assert_eq!(never["error"]["code"], "NO_MATCH", "{never}");
    assert_eq!(
        never["error"]["detail"]["selector"], "css=#never",
        "{never}"
    );
    assert!(!out.join("never/late.png").exists());
}

/// A flow whose one step loads `path` and clicks `#ready`, which only a 200 answer has.
fn retry_flow(
    origin: &str,
    flow_retries: Option<u32>,
    step_retries: Option<u32>,
    path: &str,
) -> String {
    let flow_retries = flow_retries.map_or(String::new(), |n| format!("retries = {n}\n"));
    let step_retries = step_retries.map_or(String::new(), |n| format!("retries = {n}\n"));
    format!(
        r##"
[[flow]]
name = "flaky"
{flow_retries}[[flow.step]]
tool = "browser_batch"
{step_retries}steps = [
  {{ tool = "browser_navigate", arguments = {{ url = "{origin}{path}" }} }},
  {{ tool = "browser_click", arguments = {{ selector = "#ready", timeout_ms = 300 }} }},
]
"##
    )
}

#[test]
fn a_step_that_passes_on_its_second_attempt_passes_with_retries_and_is_reported_flaky() {
    let server = FixtureServer::start_detached().expect("fixture server");
    // The first request of each round answers 500, the next ones 200 with the button.
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    server.route("/counted", move |_| {
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            Response::html("<!doctype html><title>down</title><h1>Server error</h1>").status(500)
        } else {
            Response::html("<!doctype html><title>up</title><button id=\"ready\">Ready</button>")
        }
    });
    server.route("/down", |_| {
        Response::html("<!doctype html><title>down</title><h1>Server error</h1>").status(500)
    });
    let sandbox = Sandbox::new();
    let config = sandbox.path().join("chromate.toml");
    let out = sandbox.out();
    let junit = sandbox.path().join("junit.xml");
    let run = |file: String| -> Ran {
        std::fs::write(&config, file).expect("write");
        sandbox.run(&[
            "flows",
            "run",
            "--json",
            "--output-dir",
            out.to_str().expect("utf-8"),
            "--junit",
            junit.to_str().expect("utf-8"),
        ])
    };
    let origin = server.origin();

    // The flow's retries = 1 is its step's: the 500 fails the first attempt, the 200 passes.
    let ran = run(retry_flow(&origin, Some(1), None, "/counted"));
    ran.assert_ok();
    assert_eq!(served.load(Ordering::SeqCst), 2, "one request per attempt");
    let step = &ran.json()["flows"][0]["steps"][0];
    assert_eq!(step["ok"], true, "{step}");
    assert_eq!(step["attempts"], 2, "{step}");
    assert_eq!(step["flaky"], true, "{step}");
    assert_eq!(
        step["retried_errors"].as_array().map(Vec::len),
        Some(1),
        "{step}"
    );
    let xml = std::fs::read_to_string(&junit).expect("junit.xml");
    assert!(
        xml.contains(
            "<property name=\"flaky\" value=\"true\"/><property name=\"attempts\" value=\"2\"/>"
        ),
        "{xml}"
    );
    assert!(
        xml.contains("flaky: passed on attempt 2, after 1 failed"),
        "{xml}"
    );
    assert!(!xml.contains("<failure"), "{xml}");
    let index = std::fs::read_to_string(out.join("flaky/index.md")).expect("index.md");
    assert!(index.contains("ok (flaky: passed on attempt 2)"), "{index}");

    // Without retries the same first answer fails the flow.
    served.store(0, Ordering::SeqCst);
    let ran = run(retry_flow(&origin, None, None, "/counted"));
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert_eq!(served.load(Ordering::SeqCst), 1, "tried once");
    let flow = &ran.json()["flows"][0];
    assert_eq!(flow["failed_step_index"], 0, "{flow}");
    assert_eq!(flow["steps"][0]["attempts"], 1, "{flow}");
    assert_eq!(flow["steps"][0]["flaky"], false, "{flow}");

    // A step's own retries replace its flow's; one that never passes fails after them all.
    let ran = run(retry_flow(&origin, Some(3), Some(1), "/down"));
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let step = &ran.json()["flows"][0]["steps"][0];
    assert_eq!(step["ok"], false, "{step}");
    assert_eq!(step["attempts"], 2, "{step}");
    assert_eq!(step["flaky"], false, "{step}");
    let xml = std::fs::read_to_string(&junit).expect("junit.xml");
    assert!(xml.contains("failed on each of 2 attempts"), "{xml}");
    assert!(xml.contains("<failure"), "{xml}");
    assert!(!xml.contains("<property name=\"flaky\""), "{xml}");
}

#[test]
fn workers_run_flows_at_once_each_in_its_browser_and_report_them_in_file_order() {
    let server = FixtureServer::start_detached().expect("fixture server");
    // Page /a shows #go once /b has been loaded: its own timer asks /state every 100 ms.
    let b_loaded = Arc::new(AtomicUsize::new(0));
    let seen = b_loaded.clone();
    server.route("/state", move |_| {
        Response::html(if seen.load(Ordering::SeqCst) > 0 {
            "yes"
        } else {
            "no"
        })
    });
    let mark = b_loaded.clone();
    server.route("/b", move |_| {
        mark.fetch_add(1, Ordering::SeqCst);
        Response::html("<!doctype html><title>b</title><h1>b</h1>")
    });
    server.route("/a", |_| {
        Response::html(
            "<!doctype html><title>a</title><body><script>\
             const timer = setInterval(async () => { \
               const text = await (await fetch('/state', { cache: 'no-store' })).text(); \
               if (text === 'yes') { clearInterval(timer); const go = document.createElement('p'); \
                 go.id = 'go'; go.textContent = 'go'; document.body.append(go); } \
             }, 100);</script>",
        )
    });
    let sandbox = Sandbox::new();
    let origin = server.origin();
    sandbox.write_flows(format!(
        r##"
[[flow]]
name = "a"
base_url = "{origin}"
[[flow.step]]
tool = "browser_navigate"
url = "/a"
[[flow.step]]
tool = "browser_wait"
selector = "#go"
timeout_ms = 30000
[[flow]]
name = "b"
base_url = "{origin}"
[[flow.step]]
tool = "browser_navigate"
url = "/b"
"##
    ));
    let out = sandbox.out();
    let out_arg = out.to_str().expect("utf-8");
    // Flow a can only pass while flow b runs beside it.
    let ran = sandbox.run(&[
        "flows",
        "run",
        "--output-dir",
        out_arg,
        "--workers",
        "2",
        "--json",
    ]);
    ran.assert_ok();
    let report = ran.json();
    let names: Vec<&str> = report["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .filter_map(|flow| flow["flow_name"].as_str())
        .collect();
    assert_eq!(names, ["a", "b"], "file order, though b finished first");
    assert_eq!(b_loaded.load(Ordering::SeqCst), 1);
    // Each flow's line on stderr (`flow a: ok ...`) is told in file order too.
    let told: Vec<&str> = ran
        .stderr
        .lines()
        .filter_map(|line| line.strip_prefix("flow ")?.split(':').next())
        .collect();
    assert_eq!(told, ["a", "b"], "{}", ran.stderr);

    // --workers out of range is a usage error before any browser starts.
    let ran = sandbox.run(&["flows", "run", "--output-dir", out_arg, "--workers", "0"]);
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    assert!(ran.stderr.contains("--workers"), "{ran:?}");
    assert!(ran.browsers.is_empty(), "{ran:?}");
}
