//! Every command of the command line, its output, `--json`, and its usage errors.

use super::*;

#[test]
fn cli_usage_errors_exit_2_with_one_line_and_a_hint_and_never_start_a_session() {
    let cli = Cli::new();
    let not_json = cli.work.join("steps.txt");
    write(&not_json, "not json");
    let not_json = not_json.display().to_string();
    let missing = cli.work.join("missing.js").display().to_string();
    // (argv, a part of the message, the hint line that follows it)
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["click"],
            "click: missing required argument SELECTOR",
            "hint: chromate click --help",
        ),
        (
            &["navigate"],
            "navigate: missing required argument URL",
            "hint: chromate navigate --help",
        ),
        (
            &["navigate", "http://127.0.0.1/", "--timeout-ms", "soon"],
            "--timeout-ms needs a whole number, not \"soon\"",
            "hint: chromate navigate --help",
        ),
        (
            &["click", "#a", "--bogus"],
            "click: unknown option --bogus",
            "hint: chromate click --help",
        ),
        (
            &["status", "extra"],
            "status: unexpected argument \"extra\"",
            "hint: chromate status --help",
        ),
        (
            &["element", "explode", "#a"],
            "element: ",
            "hint: chromate element --help",
        ),
        (
            &["status", "--idle-timeout", "0"],
            "--idle-timeout needs whole seconds from 1 to 604800",
            "hint: chromate status --help",
        ),
        (
            &["status", "--session", "a/b"],
            "session name \"a/b\": use 1 to 64 of A-Z a-z 0-9 - _",
            "hint: chromate status --help",
        ),
        (
            &["eval"],
            "eval: missing required argument JS",
            "hint: chromate eval --help",
        ),
        (
            &["eval", "--file", &missing],
            "--file",
            "hint: chromate eval --help",
        ),
        (
            &["batch", &missing],
            "cannot read",
            "hint: chromate batch --help",
        ),
        (
            &["batch", &not_json],
            "not JSON",
            "hint: chromate batch --help",
        ),
        (
            &["--session", "s1", "--json", "navigate"],
            "navigate: missing required argument URL",
            "hint: chromate navigate --help",
        ),
        (
            &["--session", "s1", "sessions"],
            "sessions: unexpected arguments",
            "hint: chromate sessions --help",
        ),
        (
            &["frobnicate"],
            "unknown command \"frobnicate\"",
            "hint: chromate --help",
        ),
        (
            &["close", "extra"],
            "close: unexpected argument \"extra\"",
            "hint: chromate close --help",
        ),
        (
            &["sessions", "--all"],
            "sessions: unexpected arguments",
            "hint: chromate sessions --help",
        ),
    ];
    for (args, message, hint) in cases {
        let out = cli.run(args);
        assert_eq!(out.code, Some(2), "chromate {}: {out:?}", args.join(" "));
        assert!(out.stdout.is_empty(), "{out:?}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            2,
            "chromate {}: one line and a hint, not the usage: {out:?}",
            args.join(" ")
        );
        assert!(
            lines[0].starts_with("chromate: ") && lines[0].contains(message),
            "chromate {}: {message:?} in {out:?}",
            args.join(" ")
        );
        assert_eq!(lines[1], *hint, "chromate {}: {out:?}", args.join(" "));
    }
    // Steps on standard input are read before anything runs, and checked too.
    let out = cli.run_stdin(&["batch", "-"], "[{\"tool\": ");
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("-: not JSON"), "{out:?}");
    let out = cli.run_stdin(&["batch", "-"], "[{\"tool\": \"browser_nope\"}]");
    assert_eq!(
        out.code,
        Some(2),
        "an unknown step tool is a usage error: {out:?}"
    );

    // Nothing was started: no runtime directory, no daemon.
    assert!(
        !cli.runtime.exists(),
        "usage errors never touch the runtime directory"
    );
    assert_eq!(cli.daemons(), Vec::<u32>::new());

    // Help is no error: stdout, exit 0.
    let help = cli.ok(&["click", "--help"]);
    assert!(
        help.starts_with("usage: chromate click SELECTOR [--double]"),
        "{help}"
    );
    assert!(
        help.contains("\ncommon options:\n  --session NAME"),
        "{help}"
    );
    let top = cli.ok(&["--help"]);
    assert!(
        top.starts_with("chromate — browser automation for AI agents"),
        "{top}"
    );
    let version = cli.ok(&["--version"]);
    assert!(version.starts_with("chromate "), "{version}");
    assert!(!cli.runtime.exists());

    // Nothing running: `sessions` lists none and `close` is not an error.
    assert_eq!(cli.ok(&["sessions"]), "no sessions\n");
    assert_eq!(cli.json_sessions(), json!([]));
    assert_eq!(cli.ok(&["close"]), "session default was not running\n");
    assert_eq!(
        cli.ok(&["close", "--session", "other"]),
        "session other was not running\n"
    );
    assert_eq!(cli.daemons(), Vec::<u32>::new());
    cli.finish();
}

#[test]
fn cli_navigate_snapshot_find_exists_read_wait_expect_and_their_failures() {
    let server = fixtures();
    let cli = Cli::new();
    // The command that starts the daemon gives it its configuration: 300 ms waits.
    let out = cli.run_env(&["status", "--json"], &[("CHROMATE_AGENT_TIMEOUT", "300")]);
    assert_ok(&out, &["status"]);
    let status = out.document();
    assert_eq!(
        (status["ready"].clone(), status["browserPid"].clone()),
        (json!(false), json!(null)),
        "status never launches: {status}"
    );
    assert_eq!(
        cli.daemons(),
        vec![pid_of(&status["serverPid"]).expect("serverPid")]
    );

    let url = server.url("login.html");
    let out = cli.run(&["navigate", &url]);
    assert_ok(&out, &["navigate"]);
    assert_eq!(
        out.result(),
        json!({ "url": url, "title": "Sign in — Acme", "status": 200 })
    );
    let seen = observation(&out.stdout);
    assert_eq!(seen[0], format!("page: Sign in — Acme — {url}"), "{out:?}");
    assert!(
        seen.iter()
            .any(|line| line.ends_with(": textbox \"Email\" value=\"ann@example.com\" #email")),
        "the first observation is the whole page: {out:?}"
    );
    assert!(
        seen.last()
            .is_some_and(|line| line.starts_with("errors: 0 (logCursor ")),
        "{out:?}"
    );

    let snapshot = cli.ok(&["snapshot"]);
    assert!(
        snapshot.starts_with(&format!("page: Sign in — Acme — {url}\n")),
        "{snapshot}"
    );
    assert!(
        snapshot.contains(": button \"Sign in\" #submit\n"),
        "{snapshot}"
    );
    let scoped = cli.json(&["snapshot", "--selector", "form"]);
    let lines = scoped["lines"].to_string();
    assert!(
        lines.contains("button \\\"Sign in\\\"") && !lines.contains("link \\\"Acme\\\""),
        "{scoped}"
    );
    assert_eq!(
        cli.error(&["snapshot", "--selector", "#nothing"]),
        "NO_MATCH"
    );
    // Paging: a cut view names the last ref shown, and --after continues from it.
    let first = cli.json(&["snapshot", "--max-lines", "2"]);
    let next = first["next"].as_str().expect("a next ref").to_owned();
    let rest = cli.json(&["snapshot", "--after", &next, "--max-lines", "5000"]);
    assert!(rest.get("next").is_none(), "{rest}");
    let whole = cli.json(&["snapshot", "--max-lines", "5000"]);
    let whole_lines = whole["lines"].as_array().cloned().unwrap_or_default();
    let cut = whole_lines
        .iter()
        .position(|line| {
            line.as_str()
                .is_some_and(|l| l.trim_start().starts_with(&format!("{next}: ")))
        })
        .expect("the cut line in the whole snapshot");
    assert_eq!(
        json!(whole_lines[cut + 1..]),
        rest["lines"],
        "{first}\n{rest}"
    );

    let found = cli.json(&["find", "button", "--all"]);
    assert_eq!(found["count"], json!(2), "{found}");
    assert_eq!(
        found["matches"][1]["text"],
        json!("Sign in with SSO"),
        "{found}"
    );
    assert_eq!(cli.error(&["find", "table"]), "NO_MATCH");

    // exists: a match is exit 0, none is exit 1 with the answer still on stdout.
    assert_eq!(
        cli.json(&["exists", "#email"]),
        json!({ "exists": true, "count": 1 })
    );
    let out = cli.fails(&["exists", "table"]);
    assert_eq!(
        out.result(),
        json!({ "exists": false, "count": 0 }),
        "{out:?}"
    );
    assert!(out.stderr.is_empty(), "{out:?}");
    let out = cli.fails(&["exists", "table", "--json"]);
    assert_eq!(out.document(), json!({ "exists": false, "count": 0 }));

    let read = cli.json(&["read", "#email", "--field", "value"]);
    assert_eq!(read["value"], json!("ann@example.com"), "{read}");
    let read = cli.json(&["read", "#password", "--field", "attr", "--name", "type"]);
    assert_eq!(read["value"], json!("password"), "{read}");
    assert_eq!(
        cli.json(&["read", "#remember", "--field", "is", "--what", "checked"]),
        json!({ "what": "checked", "result": true })
    );
    assert_eq!(cli.error(&["read", "#nope"]), "NO_MATCH");

    assert_eq!(
        cli.json(&["wait", "#submit"]),
        json!({ "ok": true, "selector": "#submit", "state": "visible" })
    );
    assert_eq!(
        cli.json(&["wait", "--state", "load"]),
        json!({ "ok": true, "state": "load" })
    );
    let code = cli.error(&[
        "wait",
        "[data-testid=sso]",
        "--state",
        "hidden",
        "--timeout-ms",
        "200",
    ]);
    assert!(code.starts_with("TIMEOUT"), "{code}");

    let expected = cli.json(&["expect", "text", "h1", "--expected", "Sign in"]);
    assert_eq!(expected["ok"], json!(true), "{expected}");
    assert_eq!(
        cli.json(&["expect", "url", "--contains", "/login"])["matcher"],
        json!("url")
    );
    // No --timeout-ms: the daemon's default from the environment that started it, 300 ms,
    // not this command's.
    let out = cli.run_env(
        &["expect", "url", "--contains", "nowhere"],
        &[("CHROMATE_AGENT_TIMEOUT", "100")],
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(out.error_code(), "EXPECT_MISMATCH");
    assert!(
        out.stderr.starts_with(&format!(
            "error: expect: expected the url to contain \"nowhere\", but got \"{url}\" after 300ms\n"
        )),
        "{out:?}"
    );
    let out = cli.fails(&["expect", "visible", "#nope", "--timeout-ms", "0", "--json"]);
    let error = out.document();
    assert_eq!(error["error"]["code"], json!("EXPECT_MISMATCH"), "{error}");
    assert!(error["error"]["message"].is_string(), "{error}");

    // The browser is the starting command's too: a session started with none to run says so
    // and keeps serving.
    let none = [("CHROMATE_BROWSER", "/nonexistent/chromium")];
    let out = cli.run_env(&["navigate", &url, "--session", "nobrowser"], &none);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(out.error_code(), "BROWSER_UNAVAILABLE");
    assert!(out.stderr.contains("/nonexistent/chromium"), "{out:?}");
    assert_eq!(
        cli.json(&["status", "--session", "nobrowser"])["ready"],
        json!(false)
    );
    cli.close("nobrowser");

    let unreachable = format!("http://127.0.0.1:{}/nothing", closed_port());
    assert_eq!(cli.error(&["navigate", &unreachable]), "NAVIGATION_FAILED");
    // The session still serves: the same daemon, the same browser, the page as it was left.
    let status = cli.json(&["status"]);
    assert_eq!(status["ready"], json!(true));
    assert_eq!(cli.daemons().len(), 1);
    cli.finish();
}

#[test]
fn cli_input_commands_click_fill_type_press_key_mouse_hover_element_upload_dialog() {
    let server = fixtures();
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("controls.html")]);

    let out = cli.run(&["fill", "#text-input", "hello"]);
    assert_ok(&out, &["fill"]);
    assert_eq!(
        out.result(),
        json!({ "ok": true, "selector": "#text-input" })
    );
    assert!(
        observation(&out.stdout)
            .iter()
            .any(|line| line.starts_with("+ ") && line.contains("value=\"hello\"")),
        "the diff shows the new value: {out:?}"
    );
    assert_eq!(
        cli.json(&["read", "#text-input", "--field", "value"])["value"],
        json!("hello")
    );
    assert_eq!(
        cli.error(&["fill", "#disabled-input", "x", "--timeout-ms", "200"]),
        "TIMEOUT_WAITING_STATE"
    );

    let clicked = cli.json(&["click", "#terms-checkbox"]);
    assert_eq!(
        (clicked["ok"].clone(), clicked["selector"].clone()),
        (json!(true), json!("#terms-checkbox"))
    );
    let seen = clicked["observation"].as_str().unwrap_or_default();
    assert!(
        seen.contains("\n+ ") && seen.contains("#terms-checkbox (checked)"),
        "{clicked}"
    );
    assert_eq!(
        cli.error(&["click", "#nope", "--timeout-ms", "0"]),
        "NO_MATCH"
    );

    let checked = cli.json(&["element", "check", "#wrapped-checkbox"]);
    assert_eq!(
        (checked["action"].clone(), checked["checked"].clone()),
        (json!("check"), json!(true)),
        "{checked}"
    );
    let unchecked = cli.json(&["element", "uncheck", "#wrapped-checkbox"]);
    assert_eq!(unchecked["checked"], json!(false), "{unchecked}");
    let selected = cli.json(&["element", "select", "#fruit-select", "Banana"]);
    assert_eq!(selected["value"], json!("ban"), "{selected}");
    assert_eq!(
        cli.error(&[
            "element",
            "select",
            "#fruit-select",
            "Kiwi",
            "--timeout-ms",
            "200"
        ]),
        "NO_MATCH"
    );

    assert_eq!(
        cli.result_of(&["hover", "#file-label"]),
        json!({ "ok": true, "selector": "#file-label" })
    );
    assert_eq!(
        cli.error(&["hover", "#nope", "--timeout-ms", "0"]),
        "NO_MATCH"
    );

    cli.ok(&["eval", "window.clearEvents(); 0"]);
    assert_eq!(
        cli.result_of(&["mouse", "click", "3", "4"]),
        json!({ "ok": true, "action": "click", "x": 3.0, "y": 4.0, "button": "left" })
    );
    assert_eq!(
        cli.eval("window.events.filter(e => e.type === 'click').length"),
        json!(1),
        "the page got the click"
    );
    assert_eq!(
        cli.error(&["mouse", "click", "--selector", "#nope", "--timeout-ms", "0"]),
        "NO_MATCH"
    );

    // Uploads read under the daemon's working directory (the command's that started it).
    write(&cli.work.join("notes.txt"), "notes");
    write(&cli.work.join("more.txt"), "more!!");
    assert_eq!(
        cli.result_of(&["upload", "#file-input", "notes.txt", "more.txt"]),
        json!({ "ok": true, "selector": "#file-input", "count": 2 })
    );
    assert_eq!(
        cli.eval("window.pickedFiles.map(f => f.name + ':' + f.size)"),
        json!(["notes.txt:5", "more.txt:6"])
    );
    let outside = cli.path("outside.txt");
    write(&outside, "secret");
    assert_eq!(
        cli.error(&["upload", "#file-input", &outside.display().to_string()]),
        "INVALID_ARGUMENT"
    );
    // A relative path resolves in the command's working directory, not the daemon's: run from
    // elsewhere, `upload notes.txt` sends the notes.txt beside the command.
    let elsewhere = cli.path("elsewhere");
    std::fs::create_dir(&elsewhere).expect("another dir");
    write(&elsewhere.join("notes.txt"), "the command's own notes");
    let out = cli.run_in(&elsewhere, &["upload", "#file-input", "notes.txt"]);
    assert_ok(&out, &["upload", "(from elsewhere)"]);
    assert_eq!(
        cli.eval("window.pickedFiles.map(f => f.name + ':' + f.size)"),
        json!(["notes.txt:23"]),
        "the command's notes.txt (23 bytes), not the daemon's"
    );

    cli.ok(&["navigate", &server.url("keys.html")]);
    assert_eq!(
        cli.result_of(&["press", "Control+A", "--selector", "#key-input"]),
        json!({ "ok": true, "key": "Control+A" })
    );
    assert_eq!(
        cli.result_of(&["type", "hi"]),
        json!({ "ok": true, "length": 2 })
    );
    assert_eq!(
        cli.json(&["read", "#key-input", "--field", "value"])["value"],
        json!("hi")
    );
    assert_eq!(
        cli.result_of(&["key", "down", "Shift"]),
        json!({ "ok": true, "action": "down", "key": "Shift" })
    );
    cli.ok(&["key", "up", "Shift"]);
    assert_eq!(
        cli.eval("window.keys.filter(k => k.type === 'keydown').map(k => k.key).join(' ')"),
        json!("Control a h i Shift")
    );
    assert_eq!(cli.error(&["press", "NoSuchKey"]), "INVALID_ARGUMENT");
    assert_eq!(
        cli.error(&["key", "press", "NoSuchKey"]),
        "INVALID_ARGUMENT"
    );

    cli.ok(&["navigate", &server.url("dialogs.html")]);
    assert_eq!(cli.error(&["dialog", "accept"]), "STATE_INVALID");
    let out = cli.run(&["click", "#prompt-button"]);
    assert_ok(&out, &["click"]);
    assert_eq!(
        observation(&out.stdout).first(),
        Some(&"dialog open: Your name?"),
        "{out:?}"
    );
    // An open dialog blocks input: type fails until it is answered.
    assert_eq!(cli.error(&["type", "x"]), "STATE_INVALID");
    assert_eq!(
        cli.result_of(&["dialog", "inspect"]),
        json!({ "open": true, "type": "prompt", "message": "Your name?", "defaultValue": "guest" })
    );
    assert_eq!(
        cli.result_of(&["dialog", "accept", "ann"]),
        json!({ "ok": true, "action": "accept", "type": "prompt" })
    );
    assert_eq!(cli.json(&["read", "#result"])["text"], json!("name: ann"));
    cli.finish();
}

#[test]
fn cli_page_tabs_and_logs() {
    let server = fixtures();
    let cli = Cli::new();
    // Before a browser: no tabs, nothing captured, nothing launched.
    assert_eq!(
        cli.result_of(&["page", "list"]),
        json!({ "pages": [], "count": 0, "active": null })
    );
    let logs = cli.result_of(&["logs"]);
    assert_eq!(logs["capturing"], json!(false), "{logs}");
    assert_eq!(
        cli.json(&["status"])["browserPid"],
        json!(null),
        "page list and logs never launch"
    );

    let nav = server.url("nav.html");
    cli.ok(&["navigate", &nav]);
    let nav2 = server.url("nav2.html");
    assert_eq!(
        cli.result_of(&["page", "open", &nav2]),
        json!({ "ok": true, "action": "open", "id": "p2", "url": nav2 })
    );
    let list = cli.result_of(&["page", "list"]);
    assert_eq!(
        (list["count"].clone(), list["active"].clone()),
        (json!(2), json!("p2")),
        "{list}"
    );
    assert_eq!(cli.json(&["status"])["activeUrl"], json!(nav2));
    assert_eq!(cli.result_of(&["page", "select", "0"])["id"], json!("p1"));
    assert_eq!(cli.error(&["page", "select", "9"]), "NO_MATCH");
    let out = cli.fails(&["page", "select", "9"]);
    assert!(
        out.stderr
            .starts_with("error: page select: no page at index 9 (2 open)\n"),
        "{out:?}"
    );
    assert_eq!(
        cli.result_of(&["page", "close", "p2"]),
        json!({ "ok": true, "action": "close", "id": "p2", "remaining": 1 })
    );
    assert_eq!(cli.result_of(&["page", "list"])["count"], json!(1));

    // console.html logs four errors while it loads and fetches a closed port.
    let out = cli.run(&["navigate", &server.url("console.html")]);
    assert_ok(&out, &["navigate"]);
    let tripwire = observation(&out.stdout)
        .last()
        .map(|line| line.to_string())
        .unwrap_or_default();
    assert!(tripwire.starts_with("errors: 4 (logCursor "), "{out:?}");
    let errors = cli.result_of(&["logs", "--kind", "error"]);
    let texts: Vec<&str> = errors["entries"]
        .as_array()
        .map(|entries| entries.iter().filter_map(|e| e["text"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(texts.len(), 4, "{errors}");
    assert!(texts.contains(&"error message"), "{texts:?}");
    let waited = cli.result_of(&[
        "logs",
        "wait",
        "--kind",
        "requestfailed",
        "--contains",
        "closed-port",
    ]);
    assert_eq!(waited["entry"]["kind"], json!("requestfailed"), "{waited}");
    let limited = cli.result_of(&["logs", "--limit", "1"]);
    assert_eq!(
        (
            limited["entries"].as_array().map(Vec::len),
            limited["truncated"].clone()
        ),
        (Some(1), json!(true)),
        "{limited}"
    );
    assert_eq!(
        cli.error(&[
            "logs",
            "wait",
            "--contains",
            "never logged",
            "--timeout-ms",
            "200"
        ]),
        "TIMEOUT"
    );
    assert_eq!(
        cli.error(&["logs", "--kind", "warnings"]),
        "INVALID_ARGUMENT"
    );
    let cleared = cli.result_of(&["logs", "clear"]);
    assert!(
        cleared["cleared"].as_u64().is_some_and(|n| n >= 4),
        "{cleared}"
    );
    assert_eq!(cli.result_of(&["logs"])["entries"], json!([]));
    cli.finish();
}

#[test]
fn cli_mock_and_state_across_two_sessions() {
    let server = fixtures();
    let cli = Cli::new();
    // Added before the browser runs: installed when it launches.
    assert_eq!(
        cli.result_of(&["mock", "add", "*/api/user", "--body", "{\"name\":\"ann\"}"]),
        json!({ "ok": true, "action": "add", "id": "m1", "pattern": "*/api/user", "status": 200 })
    );
    assert_eq!(
        cli.json(&["status"])["browserPid"],
        json!(null),
        "mock never launches"
    );
    cli.ok(&["navigate", &server.url("network.html")]);
    assert_eq!(
        cli.eval("fetch('/api/user').then(r => r.text())"),
        json!("{\"name\":\"ann\"}")
    );
    assert_eq!(server.request_count("/api/user"), 0, "the mock answered");
    assert_eq!(
        cli.result_of(&["mock", "list"]),
        json!({ "count": 1, "mocks": [{ "id": "m1", "pattern": "*/api/user", "kind": "mock", "status": 200 }] })
    );
    assert_eq!(cli.error(&["mock", "remove", "m9"]), "INVALID_ARGUMENT");
    assert_eq!(
        cli.result_of(&["mock", "remove", "m1"])["remaining"],
        json!(0)
    );
    assert_eq!(
        cli.eval("fetch('/api/user').then(r => r.status)"),
        json!(404)
    );
    assert_eq!(
        cli.result_of(&["mock", "block", "*/nav.html"])["id"],
        json!("m2")
    );
    assert_eq!(
        cli.error(&["navigate", &server.url("nav.html")]),
        "NAVIGATION_FAILED"
    );
    assert_eq!(
        cli.result_of(&["mock", "clear"]),
        json!({ "ok": true, "action": "clear", "cleared": 1 })
    );
    cli.ok(&["navigate", &server.url("nav.html")]);

    // State saved in one session logs in the fresh browser of another.
    let root = cli.path("state");
    assert_eq!(
        cli.result_of(&["state"]),
        json!({ "states": [], "root": root.display().to_string() })
    );
    cli.ok(&["navigate", &server.url("storage.html")]);
    cli.ok(&[
        "eval",
        "new Promise(resolve => { document.getElementById('username').value = 'ann'; \
         document.getElementById('login-button').click(); \
         const check = () => document.getElementById('status').textContent.startsWith('Logged in') \
         ? resolve(true) : requestAnimationFrame(check); check(); })",
    ]);
    let saved = cli.result_of(&["state", "save", "admin"]);
    assert_eq!(
        (saved["cookies"].clone(), saved["path"].clone()),
        (
            json!(1),
            json!(root.join("admin.json").display().to_string())
        ),
        "{saved}"
    );
    assert_eq!(mode_of(&root.join("admin.json")), 0o600);
    assert_eq!(
        cli.result_of(&["state", "list"])["states"],
        json!(["admin"])
    );
    assert_eq!(cli.error(&["state", "load", "nope"]), "INVALID_ARGUMENT");

    let loaded = cli.result_of(&["state", "load", "admin", "--session", "fresh"]);
    assert_eq!(loaded["cookies"], json!(1), "{loaded}");
    let out = cli.run(&[
        "navigate",
        &server.url("storage.html"),
        "--session",
        "fresh",
    ]);
    assert_ok(&out, &["navigate"]);
    assert!(out.stdout.contains("Welcome back, ann"), "{out:?}");
    assert_ne!(cli.pids("default").daemon, cli.pids("fresh").daemon);
    cli.finish();
}

/// Width and height from a PNG file's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let png = std::fs::read(path).unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
    assert!(png.len() > 24 && &png[..8] == b"\x89PNG\r\n\x1a\n" && &png[12..16] == b"IHDR");
    let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    (width, height)
}

#[test]
fn cli_trace_screenshot_a11y_and_locators() {
    let server = fixtures();
    let cli = Cli::new();
    let traces = cli.path("traces");
    assert_eq!(
        cli.result_of(&["trace"]),
        json!({ "running": false, "root": traces.display().to_string() })
    );
    assert_eq!(cli.error(&["trace", "stop"]), "STATE_INVALID");
    let started = cli.result_of(&["trace", "start", "demo"]);
    assert_eq!(
        started["outDir"],
        json!(traces.join("demo").display().to_string()),
        "{started}"
    );
    assert_eq!(cli.error(&["trace", "start"]), "STATE_INVALID");

    let page = server.url("a11y-violations.html");
    cli.ok(&["navigate", &page]);
    let shot = cli.result_of(&["screenshot"]);
    let path = PathBuf::from(shot["path"].as_str().unwrap_or_default());
    assert!(
        path.starts_with(cli.path("artifacts")) && path.ends_with("0001-screenshot.png"),
        "{shot}"
    );
    assert_eq!(png_size(&path), (1280, 800));
    assert_eq!(mode_of(&path), 0o600);
    let element = cli.result_of(&["screenshot", "img"]);
    assert!(
        element["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("0002-screenshot.png")),
        "{element}"
    );
    assert_eq!(
        cli.error(&["screenshot", "#nope", "--timeout-ms", "0"]),
        "NO_MATCH"
    );
    assert_eq!(
        cli.error(&["screenshot", "img", "--full-page"]),
        "INVALID_ARGUMENT"
    );

    let locators = cli.result_of(&["locators", "#no-alt"]);
    assert!(locators["best"].is_string(), "{locators}");
    assert!(
        locators["candidates"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "{locators}"
    );
    assert_eq!(cli.error(&["locators", "#nope"]), "NO_MATCH");

    // a11y reports violations with exit 0; --check makes a failing audit exit 1.
    let audit = cli.result_of(&["a11y"]);
    assert_eq!(audit["counts"]["violations"], json!(3), "{audit}");
    let out = cli.fails(&["a11y", "--rules", "image-alt", "--check"]);
    assert!(
        out.stderr.is_empty(),
        "a failed check is an answer, not an error: {out:?}"
    );
    let failed = out.result();
    assert_eq!(
        (failed["checked"].clone(), failed["passed"].clone()),
        (json!(true), json!(false)),
        "{failed}"
    );
    let out = cli.fails(&["a11y", "--rules", "image-alt", "--check", "--json"]);
    assert_eq!(out.document()["passed"], json!(false));
    let passed = cli.result_of(&[
        "a11y",
        "--rules",
        "color-contrast",
        "--min-impact",
        "critical",
        "--check",
    ]);
    assert_eq!(passed["passed"], json!(true), "{passed}");
    assert_eq!(
        cli.error(&["a11y", "--rules", "no-such-rule"]),
        "INVALID_ARGUMENT"
    );

    let status = cli.result_of(&["trace", "status"]);
    assert_eq!(status["running"], json!(true), "{status}");
    let stopped = cli.result_of(&["trace", "stop", "--zip"]);
    let out_dir = traces.join("demo");
    assert_eq!(
        stopped["viewer"],
        json!(out_dir.join("index.html").display().to_string()),
        "{stopped}"
    );
    assert!(traces.join("demo.zip").is_file(), "{stopped}");
    let ndjson = std::fs::read_to_string(out_dir.join("trace.ndjson")).expect("the trace");
    let tools: Vec<String> = ndjson
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == json!("action"))
        .filter_map(|event| event["tool"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        tools.first().map(String::as_str),
        Some("browser_navigate"),
        "{tools:?}"
    );
    assert!(
        tools.iter().any(|tool| tool == "browser_screenshot"),
        "{tools:?}"
    );
    assert!(tools.iter().any(|tool| tool == "browser_a11y"), "{tools:?}");
    cli.finish();
}

#[test]
fn cli_eval_takes_an_argument_a_file_or_stdin_and_batch_takes_steps_from_a_file_or_stdin() {
    let server = fixtures();
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("login.html")]);

    assert_eq!(
        cli.result_of(&["eval", "document.title"]),
        json!({ "result": "Sign in — Acme" })
    );
    assert_eq!(cli.eval("const a = 2; return a * 21"), json!(42));
    let script = cli.work.join("script.js");
    write(&script, "const values = [1, 'x'];\nreturn values;\n");
    assert_eq!(
        cli.result_of(&["eval", "--file", &script.display().to_string()]),
        json!({ "result": [1, "x"] })
    );
    for args in [&["eval", "-"][..], &["eval", "--file", "-"][..]] {
        let out = cli.run_stdin(
            args,
            "Promise.resolve(document.querySelectorAll('input').length)",
        );
        assert_ok(&out, args);
        assert_eq!(out.result(), json!({ "result": 3 }), "{args:?}");
        assert!(
            observation(&out.stdout)
                .iter()
                .any(|line| line.starts_with("page: Sign in — Acme")),
            "eval observes: {out:?}"
        );
    }
    assert_eq!(
        cli.error(&["eval", "throw new TypeError('boom')"]),
        "EVAL_THREW"
    );
    assert_eq!(
        cli.error(&["eval", "new Promise(() => {})", "--timeout-ms", "200"]),
        "TIMEOUT"
    );

    // Steps from a file: one call, one observation of every step.
    let steps = cli.work.join("steps.json");
    write(
        &steps,
        &json!([
            { "tool": "browser_fill", "arguments": { "selector": "#password", "value": "pw" } },
            { "tool": "browser_click", "arguments": { "selector": "#remember" } },
            { "tool": "browser_exists", "arguments": { "selector": "#remember:checked" } },
        ])
        .to_string(),
    );
    let batch = cli.json(&["batch", &steps.display().to_string()]);
    assert_eq!(
        (batch["ok"].clone(), batch["ran"].clone()),
        (json!(true), json!(3)),
        "{batch}"
    );
    assert_eq!(
        batch["steps"][2]["result"],
        json!({ "exists": false, "count": 0 }),
        "{batch}"
    );
    let seen = batch["observation"].as_str().unwrap_or_default();
    assert!(
        seen.contains("- ") && seen.contains("#remember"),
        "one diff for the batch: {batch}"
    );

    // Steps from stdin, with a failing step: exit 1, the step says why, later steps skipped.
    let failing = json!([
        { "tool": "browser_status" },
        { "tool": "browser_click", "arguments": { "selector": "#nope", "timeout_ms": 0 } },
        { "tool": "browser_status" },
    ])
    .to_string();
    let out = cli.run_stdin(&["batch", "-"], &failing);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stdout.contains("2 ✗ browser_click"), "{out:?}");
    assert!(out.stdout.contains("code:  NO_MATCH"), "{out:?}");
    let out = cli.run_stdin(&["batch", "-", "--json"], &failing);
    assert_eq!(out.code, Some(1), "{out:?}");
    let batch = out.document();
    assert_eq!(
        (
            batch["ok"].clone(),
            batch["failedStep"].clone(),
            batch["skipped"].clone()
        ),
        (json!(false), json!(1), json!(1)),
        "{batch}"
    );
    let out = cli.run_stdin(&["batch", "-", "--continue-on-error", "--json"], &failing);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(out.document()["ran"], json!(3));

    // status: the daemon and its browser, by pid.
    let status = cli.json(&["status"]);
    assert_eq!(status["ready"], json!(true), "{status}");
    assert_eq!(status["activeUrl"], json!(server.url("login.html")));
    let pids = cli.pids("default");
    assert_eq!(cli.daemons(), vec![pids.daemon]);
    assert!(
        pids.browser.is_some_and(|pid| procs::ProcessInfo::read(pid).is_some_and(|p| p.ppid == pids.daemon)),
        "the browser is the daemon's child: {pids:?}"
    );
    cli.finish();
}

#[test]
fn cli_json_is_one_document_with_the_observation_as_a_field() {
    let server = fixtures();
    let cli = Cli::new();
    let url = server.url("login.html");
    let navigated = cli.json(&["navigate", &url]);
    assert_eq!(
        (
            navigated["url"].clone(),
            navigated["title"].clone(),
            navigated["status"].clone()
        ),
        (json!(url), json!("Sign in — Acme"), json!(200)),
        "{navigated}"
    );
    let seen = navigated["observation"].as_str().unwrap_or_default();
    assert!(
        seen.starts_with(&format!("page: Sign in — Acme — {url}\n")),
        "{navigated}"
    );
    assert!(seen.contains("#submit"), "{navigated}");
    // The text output of the next call is the same result and observation, as lines.
    let out = cli.run(&["eval", "document.title"]);
    assert_ok(&out, &["eval"]);
    let json = cli.json(&["eval", "document.title"]);
    assert_eq!(out.result()["result"], json["result"]);
    // (But the tripwire's cursor, which a late favicon request may move.)
    let text = observation(&out.stdout);
    let field = json["observation"].as_str().unwrap_or_default();
    let field: Vec<&str> = field.lines().collect();
    assert_eq!(
        text[..text.len() - 1],
        field[..field.len() - 1],
        "the same observation both ways"
    );
    assert!(
        field
            .last()
            .is_some_and(|line| line.starts_with("errors: 0 (logCursor ")),
        "{json}"
    );
    // A tool without an observation has no such field.
    assert!(cli
        .json(&["exists", "#submit"])
        .get("observation")
        .is_none());
    cli.finish();
}

#[test]
fn cli_a_session_keeps_its_refs_and_the_next_observation_is_a_diff() {
    let server = fixtures();
    server.route("refs.html", |_| {
        Response::html(
            "<!doctype html><html lang=\"en\"><title>Refs</title>\
             <button id=\"go\" onclick=\"this.textContent='Done'\">Go</button>\
             <input id=\"q\" aria-label=\"Query\"></html>",
        )
    });
    let cli = Cli::new();
    let url = server.url("refs.html");
    cli.ok(&["navigate", &url]);
    let snapshot = cli.ok(&["snapshot"]);
    let go = ref_of(&snapshot, "button \"Go\"");
    let daemon = cli.pids("default").daemon;

    // Another process, the same session: the ref from the snapshot works.
    let out = cli.run(&["click", &go]);
    assert_ok(&out, &["click", &go]);
    assert_eq!(
        out.result(),
        json!({ "ok": true, "selector": format!("ref={go}") })
    );
    let seen = observation(&out.stdout);
    assert_eq!(
        seen.first(),
        Some(&format!("page: Refs — {url}").as_str()),
        "{out:?}"
    );
    let body = &seen[1..seen.len() - 1];
    assert!(
        !body.is_empty()
            && body
                .iter()
                .all(|line| line.starts_with("+ ") || line.starts_with("- ")),
        "only changed lines, not the page: {out:?}"
    );
    assert!(
        body.contains(&format!("- {go}: button \"Go\" #go").as_str()),
        "{out:?}"
    );
    assert!(
        body.contains(&format!("+ {go}: button \"Done\" #go").as_str()),
        "{out:?}"
    );
    assert!(
        !body.iter().any(|line| line.contains("Query")),
        "unchanged lines are left out: {out:?}"
    );
    assert!(
        seen.last()
            .is_some_and(|line| line.starts_with("errors: 0 (logCursor ")),
        "{out:?}"
    );

    // Nothing changed: it says so.
    let out = cli.run(&["eval", "1"]);
    assert_eq!(observation(&out.stdout)[1], "(no a11y changes)", "{out:?}");
    // A ref this session never issued is refused; one of a page left behind is stale.
    assert_eq!(cli.error(&["click", "e999"]), "BARE_REF");
    cli.ok(&["navigate", &server.url("nav.html")]);
    assert_eq!(cli.error(&["click", &go]), "STALE_REF");
    assert_eq!(
        cli.pids("default").daemon,
        daemon,
        "one daemon served every command"
    );
    cli.finish();
}

/// `chromate webmcp list|call` (docs/cli.md#webmcp): a session's browser runs with WebMCP, so
/// the page's own tools are listed and called from the shell; a throw and an unknown name are
/// tool errors.
#[test]
fn cli_webmcp_lists_and_calls_the_pages_tools() {
    let server = fixtures();
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("webmcp.html")]);
    let list = cli.result_of(&["webmcp", "list"]);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(names.contains(&"webmcp_add_to_cart"), "{list}");
    let out = cli.run(&["webmcp", "call", "add_to_cart", r#"{"item":"tea","qty":3}"#]);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.lines().next(), Some("added 3 tea"), "{out:?}");
    assert!(
        out.stdout.contains("cart: 3"),
        "the observation follows: {out:?}"
    );
    assert_eq!(cli.error(&["webmcp", "call", "explode"]), "EVAL_THREW");
    assert_eq!(cli.error(&["webmcp", "call", "nope"]), "NO_MATCH");
    // Arguments that are not a JSON object: a usage error, before anything is sent.
    let out = cli.run(&["webmcp", "call", "add_to_cart", "[1]"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("--arguments is a JSON object, not \"[1]\""),
        "{out:?}"
    );
}
