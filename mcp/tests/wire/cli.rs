//! Wire tests: cLI.

use super::*;

fn run_with_open_stdin(args: &[&str]) -> (ExitStatus, String, String) {
    // No runtime directory: `init --mcp` then lists no running HTTP server of the user's.
    let mut child = match chromate()
        .args(args)
        .env("CHROMATE_RUNTIME_DIR", "/nonexistent/chromate-wire-tests")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(err) => panic!("cannot start chromate: {err}"),
    };
    // stdin stays open: a process that read it would hang, and the deadline would fail.
    let _stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let mut err = String::new();
        if let Some(stdout) = stdout.as_mut() {
            let _ = stdout.read_to_string(&mut out);
        }
        if let Some(stderr) = stderr.as_mut() {
            let _ = stderr.read_to_string(&mut err);
        }
        let _ = sender.send((out, err));
    });
    let Ok((out, err)) = receiver.recv_timeout(DEADLINE) else {
        let _ = child.kill();
        panic!("chromate {args:?} did not exit");
    };
    let status = match child.wait() {
        Ok(status) => status,
        Err(err) => panic!("{err}"),
    };
    (status, out, err)
}

#[test]
fn bad_cli_flags_exit_2_without_reading_stdin() {
    for args in [
        &["mcp", "--bogus"][..],
        &["mcp", "--browser"],
        &["mcp", "--allowed-origins", "not-an-origin"],
        &["mcp", "--blocked-origins", "https://a.com/path"],
        &["nope"],
        &[],
        &["init", "--mcp", "--agent", "vim"],
    ] {
        let (status, out, err) = run_with_open_stdin(args);
        assert_eq!(status.code(), Some(2), "{args:?}");
        assert!(out.is_empty(), "{args:?}: stdout must stay clean: {out}");
        assert!(err.starts_with("chromate: "), "{args:?}: {err}");
    }
    // The list of known agents, one host per line with its aliases, all thirteen, then the
    // hint naming the help.
    let (_, _, err) = run_with_open_stdin(&["init", "--mcp", "--agent", "vim"]);
    assert!(
        err.contains("\n  claude, claude-code ") && err.contains("\n  cline "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 15, "{err}");
    assert_eq!(
        err.lines().last(),
        Some("hint: chromate init --help"),
        "{err}"
    );
}

#[test]
fn invalid_environment_values_warn_on_stderr_and_fall_back() {
    let mut server = start_server_with("bad-env", &[], &[("CHROMATE_AGENT_TIMEOUT", "soon")]);
    let tools = server.request("tools/list", json!({}));
    assert_eq!(
        tools["result"]["tools"][1]["inputSchema"]["properties"]["timeout_ms"]["default"],
        json!(5000)
    );
    let mut custom = start_server_with("env-timeout", &[], &[("CHROMATE_AGENT_TIMEOUT", "1234")]);
    let tools = custom.request("tools/list", json!({}));
    assert_eq!(
        tools["result"]["tools"][1]["inputSchema"]["properties"]["timeout_ms"]["default"],
        json!(1234)
    );
}

#[test]
fn init_mcp_prints_every_client_snippet() {
    let (status, out, err) = run_with_open_stdin(&["init", "--mcp"]);
    assert!(status.success() && err.is_empty(), "{err}");
    expect_file!["../expected/init_mcp.txt"].assert_eq(&out);
    let (status, out, _) = run_with_open_stdin(&["init", "--mcp", "--agent", "vscode"]);
    assert!(status.success());
    assert!(out.starts_with("# VS Code — .vscode/mcp.json"), "{out}");
    assert!(out.contains(r#"{ "servers": { "chromate": { "type": "stdio", "command": "chromate", "args": ["mcp"] } } }"#));
    let (status, out, _) = run_with_open_stdin(&["init", "--mcp", "--agent", "claude-code"]);
    assert!(
        status.success() && out.starts_with("# Claude Code — .mcp.json"),
        "{out}"
    );
    let (status, out, err) = run_with_open_stdin(&["init", "--mcp", "--agent", "vim"]);
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("unknown agent \"vim\"") && err.contains("copilot-cli, copilot"),
        "{err}"
    );
}

#[test]
fn help_goes_to_stdout_and_exits_zero() {
    let (status, out, _) = run_with_open_stdin(&["mcp", "--help"]);
    assert!(status.success());
    assert!(out.starts_with("usage: chromate mcp [options]"));
}

#[test]
fn environment_warnings_go_to_stderr_and_stdout_stays_clean() {
    let output = chromate()
        .arg("mcp")
        .env("CHROMATE_MCP_SPILL_BYTES", "lots")
        .env("CHROMATE_MCP_ARTIFACTS_DIR", std::env::temp_dir())
        .stdin(Stdio::null())
        .output();
    let Ok(output) = output else {
        panic!("cannot run chromate");
    };
    assert!(output.status.success(), "{output:?}");
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning: ignoring CHROMATE_MCP_SPILL_BYTES=\"lots\""),
        "{stderr}"
    );
}

#[test]
fn other_methods_and_rejected_calls_are_answered_while_a_call_runs() {
    let mut server = start_server("out-of-order");
    server.send(
        &json!({ "jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {
        "name": "browser_logs", "arguments": { "action": "wait", "timeout_ms": 60000 } } }),
    );
    server.send(
        &json!({ "jsonrpc": "2.0", "id": "bad", "method": "tools/call", "params": {
        "name": "browser_click", "arguments": {} } }),
    );
    server.send(&json!({ "jsonrpc": "2.0", "id": "list", "method": "tools/list" }));
    let bad = server.recv();
    assert_eq!(bad["id"], json!("bad"));
    assert_eq!(
        validation_error(&bad).0,
        "browser_click: missing required argument \"selector\""
    );
    assert_eq!(server.recv()["id"], json!("list"));
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "slow" } }));
    server.send(&json!({ "jsonrpc": "2.0", "id": "next", "method": "tools/call", "params": { "name": "browser_status" } }));
    assert_eq!(server.recv()["id"], json!("next"));
}

#[test]
fn batch_progress_counts_steps() {
    let mut server = start_server("batch-progress");
    server.send(
        &json!({ "jsonrpc": "2.0", "id": "batch", "method": "tools/call", "params": {
        "name": "browser_batch",
        "arguments": { "steps": [
            { "tool": "browser_status" },
            { "tool": "browser_logs", "arguments": { "action": "wait", "timeout_ms": 2500 } } ] },
        "_meta": { "progressToken": 7 } } }),
    );
    let progress = server.recv();
    assert_eq!(
        progress["method"],
        json!("notifications/progress"),
        "{progress}"
    );
    assert_eq!(progress["params"]["progressToken"], json!(7));
    assert_eq!(
        (
            progress["params"]["progress"].clone(),
            progress["params"]["total"].clone()
        ),
        (json!(1), json!(2))
    );
    assert_eq!(
        progress["params"]["message"],
        json!("waiting for a matching log entry")
    );
    let response = server.response(&json!("batch"));
    let batch = &response["result"]["structuredContent"]["result"];
    assert_eq!(
        (batch["ok"].clone(), batch["failedStep"].clone()),
        (json!(false), json!(1))
    );
    assert_eq!(batch["steps"][1]["error"]["code"], json!("TIMEOUT"));
}
