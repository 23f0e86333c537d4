//! Session daemons: idle timeout, listing, close, global flags, two sessions side by side, queueing, racing starts, a killed daemon, and one page driven from the CLI and MCP.

use super::*;

#[test]
fn cli_an_idle_session_ends_by_itself_with_its_browser() {
    let server = fixtures();
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("nav.html"), "--idle-timeout", "1"]);
    let pids = cli.pids("default");
    assert!(pids.browser.is_some(), "{pids:?}");
    assert_eq!(
        cli.json(&["sessions"])["sessions"][0]["idleTimeoutS"],
        json!(1)
    );
    // No command from here on: any would count as activity. Only /proc is watched.
    assert_gone(&pids.tree, "after the idle timeout");
    assert!(
        eventually(|| !cli.socket("default").exists()),
        "the idle daemon removes its socket"
    );
    assert_eq!(cli.json_sessions(), json!([]));
    // The next command starts a new session.
    let status = cli.json(&["status"]);
    assert_ne!(pid_of(&status["serverPid"]), Some(pids.daemon), "{status}");
    cli.finish();
}

#[test]
fn cli_listing_sessions_does_not_keep_an_idle_session_alive() {
    let server = fixtures();
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("nav.html"), "--idle-timeout", "1"]);
    let pids = cli.pids("default");
    // `sessions` over and over, as a status line would: it asks who the daemon is but does
    // not use the session, so the session still ends.
    let deadline = Instant::now() + GONE;
    let mut listed = 0;
    while pids.tree.iter().any(|&pid| procs::is_alive(pid)) {
        assert!(
            Instant::now() < deadline,
            "the session outlived its idle timeout while listed {listed} times: {pids:?}"
        );
        cli.json_sessions();
        listed += 1;
    }
    assert!(eventually(|| !cli.socket("default").exists()));
    cli.finish();
}

#[test]
fn cli_close_ends_the_daemon_and_browser_and_removes_the_socket() {
    let server = fixtures();
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("nav.html")]);
    let pids = cli.pids("default");
    let browser = pids.browser.expect("a browser runs after navigate");
    assert!(
        pids.tree.len() > 2,
        "the browser has helper processes: {pids:?}"
    );
    let sessions = cli.ok(&["sessions"]);
    assert_eq!(
        sessions,
        format!("default\tpid {}\tbrowser pid {browser}\n", pids.daemon)
    );
    assert!(cli.socket("default").exists());

    let out = cli.run(&["close"]);
    assert_ok(&out, &["close"]);
    assert_eq!(out.stdout, "closed session default\n");
    assert_gone(&pids.tree, "after close");
    assert!(!cli.socket("default").exists(), "close removes the socket");
    assert_eq!(cli.ok(&["sessions"]), "no sessions\n");
    // Closing again, or a session that never ran, is no error.
    assert_eq!(cli.ok(&["close"]), "session default was not running\n");
    assert_eq!(
        cli.ok(&["close", "--session", "never"]),
        "session never was not running\n"
    );
    assert_eq!(cli.daemons(), Vec::<u32>::new());
    cli.finish();
}

#[test]
fn cli_global_flags_before_the_command_reach_the_same_session_as_after_it() {
    let server = fixtures();
    let cli = Cli::new();
    let url = server.url("nav.html");
    let out = cli.run(&["--session", "g1", "navigate", &url]);
    assert_ok(&out, &["--session", "g1", "navigate"]);
    assert_eq!(out.result()["url"], json!(url), "{out:?}");
    let before = cli.run(&["--json", "--session", "g1", "status"]);
    assert_ok(&before, &["--json", "--session", "g1", "status"]);
    let before = before.document();
    let after = cli.json(&["status", "--session", "g1"]);
    assert_eq!(before["serverPid"], after["serverPid"], "{before} {after}");
    assert_eq!(before["activeUrl"], json!(url), "{before}");
    // `--session=NAME` too, and only the named session exists.
    let out = cli.run(&["--session=g1", "--json", "sessions"]);
    assert_eq!(out.code, Some(2), "sessions takes no --session: {out:?}");
    let sessions = cli.run(&["--json", "sessions"]);
    assert_ok(&sessions, &["--json", "sessions"]);
    let sessions = sessions.document()["sessions"].clone();
    assert_eq!(sessions.as_array().map(Vec::len), Some(1), "{sessions}");
    assert_eq!(sessions[0]["session"], json!("g1"), "{sessions}");
    let pids = cli.pids("g1");
    let out = cli.run(&["--session=g1", "close"]);
    assert_ok(&out, &["--session=g1", "close"]);
    assert_eq!(out.stdout, "closed session g1\n");
    assert_gone(&pids.tree, "after close");
    cli.finish();
}

#[test]
fn cli_a_command_right_after_close_starts_a_new_session() {
    let cli = Cli::new();
    let mut daemons = Vec::new();
    for _ in 0..5 {
        let status = cli.json(&["status"]);
        daemons.push(pid_of(&status["serverPid"]));
        let out = cli.run(&["close"]);
        assert_ok(&out, &["close"]);
        assert!(!cli.socket("default").exists(), "{out:?}");
    }
    daemons.dedup();
    assert_eq!(
        daemons.len(),
        5,
        "each status after close met a new daemon: {daemons:?}"
    );
    cli.finish();
}

#[test]
fn cli_two_sessions_side_by_side_keep_their_cookies_and_tabs_apart() {
    let server = fixtures();
    let cli = Cli::new();
    let url = server.url("nav.html");
    for session in ["a", "b"] {
        cli.ok(&["navigate", &url, "--session", session]);
    }
    let (a, b) = (cli.pids("a"), cli.pids("b"));
    assert_ne!(a.daemon, b.daemon);
    assert_ne!(a.browser, b.browser);
    let listed: Vec<(Value, Value)> = cli
        .json_sessions()
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|row| (row["session"].clone(), row["pid"].clone()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        listed,
        vec![(json!("a"), json!(a.daemon)), (json!("b"), json!(b.daemon))]
    );

    let set = cli.json(&[
        "eval",
        "document.cookie = 'a=1'; document.cookie",
        "--session",
        "a",
    ]);
    assert_eq!(set["result"], json!("a=1"));
    // The same origin in the other session's browser: no cookie.
    let other = cli.json(&["eval", "document.cookie", "--session", "b"]);
    assert_eq!(other["result"], json!(""));
    cli.ok(&["navigate", &url, "--session", "a"]);
    assert_eq!(
        cli.json(&["eval", "document.cookie", "--session", "a"])["result"],
        json!("a=1")
    );

    cli.ok(&["page", "open", &server.url("nav2.html"), "--session", "a"]);
    assert_eq!(
        cli.result_of(&["page", "list", "--session", "a"])["count"],
        json!(2)
    );
    assert_eq!(
        cli.result_of(&["page", "list", "--session", "b"])["count"],
        json!(1)
    );
    // CHROMATE_SESSION names the session when --session does not.
    let out = cli.run_env(&["page", "list"], &[("CHROMATE_SESSION", "a")]);
    assert_ok(&out, &["page", "list"]);
    assert_eq!(out.result()["count"], json!(2));

    // Closing one leaves the other running.
    cli.close("a");
    assert!(procs::is_alive(b.daemon) && b.browser.is_some_and(procs::is_alive));
    assert_eq!(
        cli.result_of(&["page", "list", "--session", "b"])["count"],
        json!(1)
    );
    cli.finish();
}

#[test]
fn cli_concurrent_commands_queue_behind_a_running_call_and_run_in_arrival_order() {
    let server = fixtures();
    let gate = Arc::new(AtomicBool::new(false));
    let open = gate.clone();
    server.route("gate", move |_| {
        Response::text(if open.load(Ordering::SeqCst) {
            "open"
        } else {
            "shut"
        })
    });
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("nav.html")]);
    let daemon = cli.pids("default").daemon;
    let socket = cli.socket("default");

    // The first call holds the session until the test opens the gate (the page asks the
    // fixture server every 20 ms).
    let first = cli.spawn(&[
        "eval",
        "--timeout-ms",
        "60000",
        "new Promise(resolve => { const ask = () => fetch('/gate').then(r => r.text()).then(t => \
         t === 'open' ? resolve(window.order = ['first']) : setTimeout(ask, 20)); ask(); })",
    ]);
    assert!(eventually(|| busy(&cli)), "the first call runs");
    assert!(
        eventually(|| connections(&socket) == 1),
        "only the first call is connected"
    );

    // Each next command starts once the one before is connected: that is arrival order.
    let mut queued = Vec::new();
    for name in ["second", "third", "fourth"] {
        let js = format!("window.order.push('{name}'); window.order");
        queued.push(cli.spawn(&["eval", &js, "--json"]));
        let expected = 1 + queued.len();
        assert!(
            eventually(|| connections(&socket) == expected),
            "{name} is connected"
        );
    }
    let status = cli.spawn(&["status", "--json"]);
    assert!(
        eventually(|| connections(&socket) == 5),
        "status is connected"
    );
    // Nothing behind the first call has run; the daemon still answers who it is at once.
    assert!(first.is_running() && status.is_running());
    assert!(queued.iter().all(Running::is_running));
    assert!(busy(&cli), "sessions does not queue");

    gate.store(true, Ordering::SeqCst);
    let out = first.wait();
    assert_ok(&out, &["eval (first)"]);
    assert_eq!(out.result(), json!({ "result": ["first"] }));
    let mut order = vec!["first"];
    for (running, name) in queued.into_iter().zip(["second", "third", "fourth"]) {
        let out = running.wait();
        assert_ok(&out, &["eval", name]);
        order.push(name);
        assert_eq!(
            out.document()["result"],
            json!(order),
            "{name} ran after those before it"
        );
    }
    let out = status.wait();
    assert_ok(&out, &["status"]);
    assert_eq!(pid_of(&out.document()["serverPid"]), Some(daemon));
    assert_eq!(cli.daemons(), vec![daemon]);
    cli.finish();
}

#[test]
fn cli_racing_starts_make_one_daemon_and_one_browser() {
    let server = fixtures();
    let cli = Cli::new();
    let steps = cli.work.join("steps.json");
    write(
        &steps,
        &json!([
            { "tool": "browser_navigate", "arguments": { "url": server.url("nav.html") } },
            { "tool": "browser_status" },
        ])
        .to_string(),
    );
    let steps = steps.display().to_string();
    // A fresh session (no runtime directory even): every racer must start it.
    assert!(!cli.runtime.exists());
    let racers: Vec<Running> = (0..4)
        .map(|_| cli.spawn(&["batch", &steps, "--json"]))
        .collect();
    let statuses: Vec<Value> = racers
        .into_iter()
        .map(|racer| {
            let out = racer.wait();
            assert_ok(&out, &["batch"]);
            out.document()["steps"][1]["result"].clone()
        })
        .collect();
    let daemon = pid_of(&statuses[0]["serverPid"]).expect("serverPid");
    let browser = pid_of(&statuses[0]["browserPid"]).expect("browserPid");
    for status in &statuses {
        assert_eq!(
            (pid_of(&status["serverPid"]), pid_of(&status["browserPid"])),
            (Some(daemon), Some(browser)),
            "every racer met the same daemon and browser: {statuses:?}"
        );
    }
    assert_eq!(cli.daemons(), vec![daemon], "exactly one daemon");
    let browsers: Vec<u32> = procs::all_processes()
        .into_iter()
        .filter(|info| info.ppid == daemon && info.is_alive() && info.is_chrome_like())
        .map(|info| info.pid)
        .collect();
    assert_eq!(browsers, vec![browser], "exactly one browser");
    cli.finish();
}

/// A file's inode and change time: a file made in its place differs (the inode number alone
/// may be reused at once).
fn file_identity(path: &Path) -> (u64, i64, i64) {
    let meta = std::fs::symlink_metadata(path)
        .unwrap_or_else(|err| panic!("no {}: {err}", path.display()));
    (meta.ino(), meta.ctime(), meta.ctime_nsec())
}

#[test]
fn cli_a_killed_daemon_takes_its_browser_along_and_the_next_command_starts_afresh() {
    let server = fixtures();
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("nav.html")]);
    let pids = cli.pids("default");
    assert!(pids.browser.is_some(), "{pids:?}");
    let socket = cli.socket("default");

    // A lost browser first: the next page command launches another; the daemon stays.
    let lost = pids.browser.expect("a browser");
    procs::kill(lost);
    assert_gone(&[lost], "after SIGKILL of the browser");
    let first_try = cli.run(&["navigate", &server.url("nav2.html")]);
    if first_try.code != Some(0) {
        // A call that meets the dead browser before its loss is noticed fails; the next
        // relaunches.
        assert_eq!(first_try.error_code(), "DRIVER_ERROR", "{first_try:?}");
        cli.ok(&["navigate", &server.url("nav2.html")]);
    }
    let pids = cli.pids("default");
    assert!(pids.browser.is_some_and(|pid| pid != lost), "{pids:?}");
    let identity = file_identity(&socket);

    procs::kill(pids.daemon);
    // The browser's parent-death signal ends it with its daemon.
    assert_gone(&pids.tree, "after SIGKILL of the daemon");
    assert!(socket.exists(), "a killed daemon leaves its socket behind");
    // Nothing answers there: `sessions` leaves it out, `close` finds nothing to close.
    assert_eq!(cli.ok(&["sessions"]), "no sessions\n");
    assert_eq!(cli.ok(&["close"]), "session default was not running\n");

    let out = cli.run(&["navigate", &server.url("nav2.html")]);
    assert_ok(&out, &["navigate"]);
    let seen = observation(&out.stdout);
    assert!(
        seen[0].starts_with("page: Nav two") && seen[1].starts_with("e1: "),
        "a fresh session: the whole page again, refs from e1: {out:?}"
    );
    let fresh = cli.pids("default");
    assert_ne!(fresh.daemon, pids.daemon);
    assert_ne!(fresh.browser, pids.browser);
    assert_ne!(
        file_identity(&socket),
        identity,
        "the stale socket was replaced"
    );
    assert_eq!(cli.daemons(), vec![fresh.daemon]);
    cli.finish();
}

/// `chromate mcp --session NAME` and the command line drive one page: a ref the CLI's snapshot
/// issued is clicked over MCP, the MCP observation is a diff against the CLI's baseline, the
/// CLI reads what the MCP click did, and the MCP server's exit leaves the session running.
#[test]
fn cli_and_mcp_session_drive_one_page() {
    let server = fixtures();
    server.route("shared.html", |_| {
        Response::html(
            "<!doctype html><html lang=\"en\"><title>Shared</title>\
             <button id=\"go\" onclick=\"this.textContent='Done'\">Go</button></html>",
        )
    });
    let cli = Cli::new();
    let url = server.url("shared.html");
    cli.ok(&["navigate", &url, "--session", "shared"]);
    let snapshot = cli.ok(&["snapshot", "--session", "shared"]);
    let go = ref_of(&snapshot, "button \"Go\"");
    let daemon = cli.pids("shared").daemon;

    let runtime = cli.runtime.display().to_string();
    let mut mcp = chromate_tests::McpCommand::new(chromate_binary())
        .args(&["--session", "shared"])
        .envs(&[("CHROMATE_RUNTIME_DIR", &runtime)])
        .keep_env("CHROMATE_BROWSER")
        .current_dir(&cli.work)
        .deadline(Duration::from_secs(60))
        .spawn();
    let clicked = mcp.call("browser_click", json!({ "selector": go }));
    let content = &clicked["result"]["content"];
    assert_eq!(
        content[0]["text"],
        json!(format!("{{\"ok\":true,\"selector\":\"ref={go}\"}}")),
        "{clicked}"
    );
    let seen = content[1]["text"].as_str().unwrap_or_default();
    assert!(
        seen.contains(&format!("- {go}: button \"Go\" #go"))
            && seen.contains(&format!("+ {go}: button \"Done\" #go")),
        "a diff against the CLI's snapshot: {seen}"
    );
    let status = mcp.call("browser_status", json!({}));
    let status: Value = serde_json::from_str(
        status["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default(),
    )
    .unwrap_or(Value::Null);
    assert_eq!(
        pid_of(&status["serverPid"]),
        Some(daemon),
        "MCP calls run in the CLI session's daemon: {status}"
    );

    assert_eq!(
        cli.json(&["read", "css=#go", "--session", "shared"])["text"],
        json!("Done"),
        "the CLI sees what the MCP click did"
    );
    mcp.close_stdin();
    assert!(mcp.wait_exit(Duration::from_secs(10)).success());
    assert_eq!(
        cli.pids("shared").daemon,
        daemon,
        "the MCP server's exit leaves the session running"
    );
    cli.finish();
}
