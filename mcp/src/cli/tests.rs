//! Unit tests for argv parsing and the `init --mcp` text.

use expect_test::{expect, Expect};

use super::*;

fn check(args: &str, expect: Expect) {
    let args: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
    let actual = match parse_args(&args) {
        Ok(Command::Mcp(flags)) => format!("mcp {flags:?}"),
        Ok(Command::Init { agent }) => format!("init {agent:?}"),
        Ok(Command::Help(text)) => format!("help {}", text.lines().next().unwrap_or_default()),
        Ok(Command::Version) => "version".to_owned(),
        Ok(Command::BenchSnapshot {
            target,
            repeat,
            max_lines,
        }) => format!("bench-snapshot {target} repeat={repeat} max_lines={max_lines}"),
        Err(UsageError(message)) => format!(
            "usage error: {}",
            message.lines().next().unwrap_or_default()
        ),
    };
    expect.assert_eq(&actual);
}

#[test]
fn mcp_flags_parse() {
    check(
        "mcp --headed --browser /usr/bin/chromium --artifacts-dir=/tmp/a --cdp-endpoint http://127.0.0.1:9222",
        expect![[r#"mcp McpFlags { headed: true, browser: Some("/usr/bin/chromium"), cdp_endpoint: Some("http://127.0.0.1:9222"), artifacts_dir: Some("/tmp/a"), allowed_origins: None, blocked_origins: None, structured_content: false }"#]],
    );
    check(
        "mcp --structured-content",
        expect![[
            r#"mcp McpFlags { headed: false, browser: None, cdp_endpoint: None, artifacts_dir: None, allowed_origins: None, blocked_origins: None, structured_content: true }"#
        ]],
    );
    check("mcp --help", expect!["help usage: chromate mcp [options]"]);
}

#[test]
fn usage_errors() {
    check(
        "mcp --bogus",
        expect![[r#"usage error: mcp: unknown option "--bogus""#]],
    );
    check(
        "mcp --browser",
        expect!["usage error: mcp: --browser needs a value"],
    );
    check(
        "mcp --allowed-origins nope",
        expect![[
            r#"usage error: mcp: --allowed-origins: bad origin "nope": expected scheme://host[:port]"#
        ]],
    );
    check(
        "mcp --headed=yes",
        expect![[r#"usage error: mcp: unknown option "--headed=yes""#]],
    );
    check("", expect!["usage error: missing command"]);
    check(
        "frobnicate",
        expect![[r#"usage error: unknown command "frobnicate""#]],
    );
    check("init", expect!["usage error: init: --mcp is required"]);
    check(
        "init --mcp --agent vim",
        expect![[
            r#"usage error: init: unknown agent "vim"; known agents: claude, vscode, codex, cursor, gemini, goose, zed"#
        ]],
    );
}

#[test]
fn init_parses_agents() {
    check("init --mcp", expect!["init None"]);
    check("init --mcp --agent codex", expect!["init Some(Codex)"]);
    check("init --agent=zed --mcp", expect!["init Some(Zed)"]);
}

#[test]
fn init_text_for_one_agent() {
    expect![[r#"
        # Codex — .codex/config.toml (trusted projects only; else ~/.codex/config.toml)
        [mcp_servers.chromate]
        command = "chromate"
        args = ["mcp"]

        # If the client cannot find `chromate` on PATH, use its absolute path as the command.
        # Environment variables go in the client's env map ([mcp_servers.chromate.env] for Codex, envs for Goose).
    "#]]
    .assert_eq(&init_text(Some(Agent::Codex)));
}

#[test]
fn bench_snapshot_arguments_parse() {
    check(
        "bench-snapshot page.html",
        expect!["bench-snapshot page.html repeat=21 max_lines=80"],
    );
    check(
        "bench-snapshot http://127.0.0.1:1/ --repeat 5 --max-lines 5000",
        expect!["bench-snapshot http://127.0.0.1:1/ repeat=5 max_lines=5000"],
    );
    check(
        "bench-snapshot",
        expect!["usage error: missing url or file"],
    );
    check(
        "bench-snapshot x --repeat 0",
        expect!["usage error: --repeat needs a number from 1 to 5000"],
    );
}
