//! Unit tests for argv parsing and the `init --mcp` text.

use expect_test::{expect, expect_file, Expect};

use super::init::{parse_agent, SnippetFormat, INIT_HELP};
use super::*;

fn check(args: &str, expect: Expect) {
    let args: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
    let actual = match parse_args(&args) {
        Ok(Command::Mcp(flags)) => format!("mcp {flags:?}"),
        Ok(Command::Init { agent }) => format!("init {agent:?}"),
        Ok(Command::Help(text)) => format!("help {}", text.lines().next().unwrap_or_default()),
        Ok(Command::Version) => "version".to_owned(),
        Ok(Command::Tool(command)) => format!(
            "tool {} {} {:?}",
            command.decl.name,
            serde_json::Value::Object(command.arguments),
            command.common
        ),
        Ok(Command::Audit(command)) => {
            let mut line = format!(
                "audit {} format={:?} output={:?} fail_on={:?} quiet={} session={:?}",
                serde_json::Value::Object(command.arguments),
                command.format,
                command.output,
                command.fail_on,
                command.quiet,
                command.session
            );
            if command.ignore_file.is_some() || command.baseline.is_some() {
                line.push_str(&format!(
                    " ignore_file={:?} baseline={:?} update={}",
                    command.ignore_file, command.baseline, command.update_baseline
                ));
            }
            line
        }
        Ok(Command::Capture(command)) => format!(
            "capture {} json={}",
            serde_json::Value::Object(command.arguments),
            command.json
        ),
        Ok(Command::Flows(command)) => format!("flows {command:?}"),
        Ok(Command::Describe(command)) => format!("describe {command:?}"),
        Ok(Command::QaFlow(command)) => {
            let mut line = format!(
                "qa-flow {} format={:?} output={:?}",
                serde_json::Value::Object(command.arguments),
                command.format,
                command.output
            );
            if command.quiet || command.session.is_some() {
                line.push_str(&format!(
                    " quiet={} session={:?} idle={:?}",
                    command.quiet, command.session, command.idle
                ));
            }
            line
        }
        Ok(Command::Close { session }) => format!("close {session:?}"),
        Ok(Command::Sessions { json }) => format!("sessions json={json}"),
        Ok(Command::Skill { install }) => format!("skill {install:?}"),
        Ok(Command::Daemon {
            session,
            idle,
            launch,
        }) => format!("daemon {session} {idle:?} launch={launch}"),
        Ok(Command::BenchSnapshot(bench)) => format!(
            "bench-snapshot {} repeat={} max_lines={} detail={} peers={:?} no_peers={} format={:?} output={:?} wait_ms={}",
            bench.targets.join(" "),
            bench.repeat,
            bench.max_lines,
            bench.detail,
            bench.peers,
            bench.no_peers,
            bench.format,
            bench.output,
            bench.wait_ms
        ),
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
        expect![[r#"mcp McpFlags { headed: true, browser: Some("/usr/bin/chromium"), cdp_endpoint: Some("http://127.0.0.1:9222"), cdp_ca: None, cdp_authorization: None, cdp_timeout_ms: None, artifacts_dir: Some("/tmp/a"), allowed_origins: None, blocked_origins: None, structured_content: false, unrestricted_file_access: false, session: None, caps_audit: false, caps_flows: false, caps_webmcp: false, caps_vision: false, isolated: false, ignore_https_errors: false, http: None }"#]],
    );
    check(
        "mcp --structured-content",
        expect!["mcp McpFlags { headed: false, browser: None, cdp_endpoint: None, cdp_ca: None, cdp_authorization: None, cdp_timeout_ms: None, artifacts_dir: None, allowed_origins: None, blocked_origins: None, structured_content: true, unrestricted_file_access: false, session: None, caps_audit: false, caps_flows: false, caps_webmcp: false, caps_vision: false, isolated: false, ignore_https_errors: false, http: None }"],
    );
    check(
        "mcp --allow-unrestricted-file-access",
        expect!["mcp McpFlags { headed: false, browser: None, cdp_endpoint: None, cdp_ca: None, cdp_authorization: None, cdp_timeout_ms: None, artifacts_dir: None, allowed_origins: None, blocked_origins: None, structured_content: false, unrestricted_file_access: true, session: None, caps_audit: false, caps_flows: false, caps_webmcp: false, caps_vision: false, isolated: false, ignore_https_errors: false, http: None }"],
    );
    check(
        "mcp --allow-unrestricted-file-access=1",
        expect![[r#"usage error: mcp: unknown option "--allow-unrestricted-file-access=1""#]],
    );
    check("mcp --help", expect!["help usage: chromate mcp [options]"]);
    check(
        "mcp --cdp-endpoint ws://127.0.0.1:3000 --cdp-timeout 2500",
        expect![[
            r#"mcp McpFlags { headed: false, browser: None, cdp_endpoint: Some("ws://127.0.0.1:3000"), cdp_ca: None, cdp_authorization: None, cdp_timeout_ms: Some(2500), artifacts_dir: None, allowed_origins: None, blocked_origins: None, structured_content: false, unrestricted_file_access: false, session: None, caps_audit: false, caps_flows: false, caps_webmcp: false, caps_vision: false, isolated: false, ignore_https_errors: false, http: None }"#
        ]],
    );
    check(
        "mcp --cdp-timeout 0",
        expect![[
            r#"usage error: mcp: --cdp-timeout: expected milliseconds from 1 to 600000, got "0""#
        ]],
    );
}

#[test]
fn qa_flow_takes_a_url_steps_and_its_flags() {
    check(
        "qa-flow http://127.0.0.1:8080/ --step Login --step=Checkout --expect Done --format junit --output r.xml --provider openai --model m --timeout-ms 5000 --continue-on-failure --max-calls 3 --allow-origin http://127.0.0.1:9000 --no-vision",
        expect![[r#"qa-flow {"allowed_origins":["http://127.0.0.1:9000"],"expected_outcome":"Done","max_model_calls_per_step":3,"model":"m","provider":"openai","steps":["Login","Checkout"],"stop_on_failure":false,"timeout_ms":5000,"url":"http://127.0.0.1:8080/","vision":false} format=Junit output=Some("r.xml")"#]],
    );
    check(
        "qa-flow http://127.0.0.1:8080/ --step a --json --block-private-network --allow-private http://127.0.0.1:8080",
        expect![[r#"qa-flow {"allow_private":["http://127.0.0.1:8080"],"block_private_network":true,"steps":["a"],"url":"http://127.0.0.1:8080/"} format=Json output=None"#]],
    );
    check(
        "qa-flow http://127.0.0.1:8080/",
        expect![[r#"usage error: qa-flow: give the journey's steps, each with --step "…""#]],
    );
    check(
        "qa-flow --step a",
        expect!["usage error: qa-flow: missing URL"],
    );
    check(
        "qa-flow http://a/ http://b/ --step a",
        expect![[
            r#"usage error: qa-flow: one URL only, not also "http://b/" (each step goes after --step)"#
        ]],
    );
    check(
        "qa-flow http://a/ --step a --format html",
        expect![[r#"usage error: qa-flow: --format "html": use text, json or junit"#]],
    );
    check(
        "qa-flow http://a/ --step a --timeout-ms soon",
        expect![[r#"usage error: qa-flow: --timeout-ms needs a number, not "soon""#]],
    );
    check(
        "qa-flow http://a/ --step a --quiet --session=shop --idle-timeout 60",
        expect![[
            r#"qa-flow {"steps":["a"],"url":"http://a/"} format=Text output=None quiet=true session=Some("shop") idle=Some(60s)"#
        ]],
    );
    check(
        "qa-flow http://a/ --step a --idle-timeout 60",
        expect!["usage error: qa-flow: --idle-timeout needs --session NAME: without it the journey's browser ends with the command"],
    );
    check(
        "qa-flow http://a/ --step=",
        expect!["usage error: qa-flow: --step needs a value"],
    );
    check(
        "qa-flow --help",
        expect!["help usage: chromate qa-flow URL --step TEXT [--step TEXT]... [--expect TEXT]"],
    );
}

#[test]
fn describe_takes_a_file_and_its_flags() {
    check(
        "describe shot.png --provider ollama --model=llava --prompt hi --text --json",
        expect![[
            r#"describe DescribeCommand { file: "shot.png", provider: Some("ollama"), model: Some("llava"), prompt: Some("hi"), text: true, json: true, unrestricted: false }"#
        ]],
    );
    check(
        "describe a.png b.png",
        expect![[r#"usage error: describe: one FILE only, not also "b.png""#]],
    );
    check(
        "describe --provider",
        expect!["usage error: describe: --provider needs a value"],
    );
    check(
        "describe --frobnicate a.png",
        expect![[r#"usage error: describe: unknown option "--frobnicate""#]],
    );
    check("describe", expect!["usage error: describe: missing FILE"]);
    check("describe --help", expect!["help usage: chromate describe FILE [--provider anthropic|openai|ollama] [--model MODEL]"]);
    check("mcp --caps vision,audit", expect!["mcp McpFlags { headed: false, browser: None, cdp_endpoint: None, cdp_ca: None, cdp_authorization: None, cdp_timeout_ms: None, artifacts_dir: None, allowed_origins: None, blocked_origins: None, structured_content: false, unrestricted_file_access: false, session: None, caps_audit: true, caps_flows: false, caps_webmcp: false, caps_vision: true, isolated: false, ignore_https_errors: false, http: None }"]);
}

#[test]
fn errors_peek_is_clear_false_and_mcp_caps_audit_parses() {
    check(
        "errors --peek --source console --min-severity error",
        expect![[
            r#"tool qa_get_runtime_errors {"clear":false,"min_severity":"error","source":"console"} Common { session: None, json: false, idle: None }"#
        ]],
    );
    check(
        "errors",
        expect!["tool qa_get_runtime_errors {} Common { session: None, json: false, idle: None }"],
    );
    check("mcp --caps audit", expect!["mcp McpFlags { headed: false, browser: None, cdp_endpoint: None, cdp_ca: None, cdp_authorization: None, cdp_timeout_ms: None, artifacts_dir: None, allowed_origins: None, blocked_origins: None, structured_content: false, unrestricted_file_access: false, session: None, caps_audit: true, caps_flows: false, caps_webmcp: false, caps_vision: false, isolated: false, ignore_https_errors: false, http: None }"]);
    check("mcp --ignore-https-errors", expect!["mcp McpFlags { headed: false, browser: None, cdp_endpoint: None, cdp_ca: None, cdp_authorization: None, cdp_timeout_ms: None, artifacts_dir: None, allowed_origins: None, blocked_origins: None, structured_content: false, unrestricted_file_access: false, session: None, caps_audit: false, caps_flows: false, caps_webmcp: false, caps_vision: false, isolated: false, ignore_https_errors: true, http: None }"]);
    check(
        "mcp --caps video",
        expect![[
            r#"usage error: mcp: --caps: unknown capability "video" (known: audit, flows, vision, webmcp)"#
        ]],
    );
}

#[test]
fn audit_gate_login_and_url_flags_parse() {
    check(
        "audit http://h/a http://h/b --state admin --ignore-file gate.toml --baseline b.json --update-baseline",
        expect![[r#"audit {"state":"admin","url":"http://h/a","urls":["http://h/b"]} format=Text output=None fail_on=None quiet=false session=None ignore_file=Some("gate.toml") baseline=Some("b.json") update=true"#]],
    );
    check(
        "audit http://h/ --storage-state /s.json --sitemap http://h/sitemap.xml",
        expect![[
            r#"audit {"sitemap":"http://h/sitemap.xml","storage_state":"/s.json","url":"http://h/"} format=Text output=None fail_on=None quiet=false session=None"#
        ]],
    );
    check(
        "audit --sitemap http://h/sitemap.xml",
        expect![[
            r#"audit {"sitemap":"http://h/sitemap.xml","url":"http://h/sitemap.xml"} format=Text output=None fail_on=None quiet=false session=None"#
        ]],
    );
    check(
        "audit http://h/ --update-baseline",
        expect!["usage error: audit: --update-baseline needs --baseline FILE: the file to write"],
    );
    check("audit http://h/ --idle-timeout 60", expect!["usage error: audit: --idle-timeout needs --session NAME: without it the audit's browser ends with the command"]);
    check(
        "audit http://h/ --state a.b",
        expect!["usage error: audit: argument --state must match ^[A-Za-z0-9_-]{1,64}$"],
    );
    check(
        "audit http://h/ ftp://h/",
        expect![[
            r#"audit {"url":"http://h/","urls":["ftp://h/"]} format=Text output=None fail_on=None quiet=false session=None"#
        ]],
    );
    check("audit --urls /nonexistent/urls.txt", expect!["usage error: audit: --urls /nonexistent/urls.txt: No such file or directory (os error 2)"]);
}

#[test]
fn audit_flags_parse_into_the_tools_arguments() {
    check(
        "audit http://127.0.0.1:8080/ --depth 1 --max-pages=5 --viewport 390x844 --screenshots --format sarif --output a.sarif --fail-on high --focus checkout --block-private-network --allow-private http://127.0.0.1:8080 --quiet --session s1",
        expect![[r#"audit {"allow_private":["http://127.0.0.1:8080"],"block_private_network":true,"focus":"checkout","include_screenshots":true,"max_depth":1,"max_pages":5,"url":"http://127.0.0.1:8080/","viewport":{"height":844,"width":390}} format=Sarif output=Some("a.sarif") fail_on=Some(High) quiet=true session=Some("s1")"#]],
    );
    check(
        "audit http://h/ --json",
        expect![[
            r#"audit {"url":"http://h/"} format=Json output=None fail_on=None quiet=false session=None"#
        ]],
    );
    check(
        "audit --help",
        expect!["help usage: chromate audit URL... [--urls FILE] [--sitemap URL]"],
    );
    check(
        "audit",
        expect!["usage error: audit: missing URL (or --urls FILE, or --sitemap URL)"],
    );
    check(
        "audit http://h/ --depth 9",
        expect!["usage error: audit: argument --depth must be between 0 and 5, got 9"],
    );
    check(
        "audit http://h/ --viewport 12",
        expect![[r#"usage error: audit: --viewport is WxH in CSS px, e.g. 1280x800, not "12""#]],
    );
    check(
        "audit http://h/ --viewport 0x10000",
        expect![
            "usage error: audit: argument --viewport's width must be between 1 and 9999, got 0"
        ],
    );
    check(
        "audit http://h/ --format pdf",
        expect![[
            r#"usage error: audit: --format is one of text, json, md, html, sarif, junit, not "pdf" (NAME or NAME=PATH)"#
        ]],
    );
    check(
        "audit http://h/ --fail-on info",
        expect![[r#"usage error: audit: --fail-on is critical, high, medium or low, not "info""#]],
    );
    check(
        "audit http://h/ http://i/",
        expect![[
            r#"audit {"url":"http://h/","urls":["http://i/"]} format=Text output=None fail_on=None quiet=false session=None"#
        ]],
    );
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
        expect![[r#"usage error: init: unknown agent "vim"; known agents:"#]],
    );
    check(
        "init --mcp --agent",
        expect!["usage error: init: --agent needs a value"],
    );
}

#[test]
fn init_parses_agents_and_aliases() {
    check("init --mcp", expect!["init None"]);
    check("init --mcp --agent codex", expect!["init Some(Codex)"]);
    check("init --agent=zed --mcp", expect!["init Some(Zed)"]);
    check(
        "init --mcp --agent claude",
        expect!["init Some(ClaudeCode)"],
    );
    check(
        "init --mcp --agent claude-code",
        expect!["init Some(ClaudeCode)"],
    );
    check("init --mcp --agent code", expect!["init Some(Vscode)"]);
    check(
        "init --mcp --agent Copilot",
        expect!["init Some(CopilotCli)"],
    );
    check("init --mcp --agent kilo_code", expect!["init Some(Kilo)"]);
    check(
        "init --mcp --agent claude-desktop",
        expect!["init Some(ClaudeDesktop)"],
    );
}

#[test]
fn every_agent_name_is_unique_and_listed_in_help_and_errors() {
    let mut seen = std::collections::BTreeSet::new();
    let Err(UsageError(unknown)) = parse_agent("vim") else {
        panic!("vim is not an agent");
    };
    for agent in Agent::ALL {
        for name in agent.names() {
            assert!(seen.insert(*name), "{name} names two agents");
            assert_eq!(Agent::find(name), Some(*agent), "{name}");
        }
        let listed = agent.names().join(", ");
        let help_line = format!("  {listed:<27} {}\n", agent.client());
        assert!(INIT_HELP.contains(&help_line), "help lacks {help_line:?}");
        assert!(
            unknown.contains(help_line.trim_end()),
            "error lacks {help_line:?}"
        );
    }
    // The names the contract promises to accept.
    for name in [
        "claude",
        "claude-code",
        "claude-desktop",
        "vscode",
        "copilot-cli",
        "codex",
        "cursor",
        "gemini",
        "goose",
        "zed",
        "windsurf",
        "opencode",
        "kilo",
        "cline",
    ] {
        assert!(Agent::find(name).is_some(), "{name}");
    }
}

#[test]
fn init_text_for_one_agent() {
    expect![[r#"
        # Codex — .codex/config.toml (trusted projects only; else ~/.codex/config.toml)
        # or run: codex mcp add chromate -- chromate mcp (then add tool_timeout_sec = 360 to that table)
        # part of the top-level mcp_servers table: add it as is, or merge into an existing [mcp_servers.chromate];
        # environment variables go in [mcp_servers.chromate.env]
        [mcp_servers.chromate]
        command = "chromate"
        args = ["mcp"]
        tool_timeout_sec = 360

        # A JSON snippet is a whole file: if the file exists, add the "chromate" entry to its servers object.
        # If the client cannot find `chromate` on PATH, use its absolute path as the command.
        # Environment variables go in the client's env map (env; [mcp_servers.chromate.env] for Codex, envs for Goose, environment for OpenCode and Kilo Code).
    "#]]
    .assert_eq(&init_text(Some(Agent::Codex)));
}

#[test]
fn init_text_lists_the_thirteen_clients_in_order() {
    // The wire test checks that the binary prints exactly this file.
    let text = init_text(None);
    expect_file!["../../tests/expected/init_mcp.txt"].assert_eq(&text);
    let clients: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("# "))
        .filter_map(|line| line.split_once(" — ").map(|(client, _)| client))
        .collect();
    expect![[r#"
        Claude Code, VS Code, Codex, Cursor, Gemini CLI, Goose, Zed, Claude Desktop, Windsurf, Copilot CLI, OpenCode, Kilo Code, Cline"#]]
    .assert_eq(&clients.join(", "));
}

#[test]
fn every_json_snippet_parses_and_names_the_chromate_server() {
    for agent in Agent::ALL {
        if agent.format() != SnippetFormat::Json {
            continue;
        }
        let snippet = agent.snippet();
        let value: serde_json::Value = match serde_json::from_str(&snippet) {
            Ok(value) => value,
            Err(err) => panic!("{agent:?}: {err}: {snippet}"),
        };
        let Some(servers) = value.as_object().filter(|top| top.len() == 1) else {
            panic!("{agent:?}: one top-level key expected: {snippet}");
        };
        let server = servers
            .values()
            .next()
            .and_then(|servers| servers.get("chromate"));
        let command = server.and_then(|server| server.get("command"));
        let runs_chromate = match command {
            Some(serde_json::Value::String(command)) => command.ends_with("chromate"),
            Some(serde_json::Value::Array(argv)) => {
                argv == &[serde_json::json!("chromate"), serde_json::json!("mcp")]
            }
            _ => false,
        };
        assert!(runs_chromate, "{agent:?}: {snippet}");
    }
}

#[test]
fn the_codex_snippet_is_a_toml_table_with_a_long_enough_tool_timeout() {
    // TOML by hand: a table header, then `key = value` lines whose values (plain strings, an
    // array of strings, an integer) are written the same way in JSON.
    let snippet = Agent::Codex.snippet();
    let mut lines = snippet.lines().filter(|line| !line.starts_with('#'));
    assert_eq!(lines.next(), Some("[mcp_servers.chromate]"));
    let mut table = serde_json::Map::new();
    for line in lines {
        let Some((key, value)) = line.split_once(" = ") else {
            panic!("not a key = value line: {line:?}");
        };
        assert!(
            key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "bare key {key:?}"
        );
        let value: serde_json::Value = match serde_json::from_str(value) {
            Ok(value) => value,
            Err(err) => panic!("{line:?}: {err}"),
        };
        assert!(table.insert(key.to_owned(), value).is_none(), "{key} twice");
    }
    assert_eq!(table["command"], "chromate");
    assert_eq!(table["args"], serde_json::json!(["mcp"]));
    // The longest call: a 300000 ms wait plus the 30 s browser launch.
    let timeout = table["tool_timeout_sec"].as_u64().unwrap_or_default();
    assert!(timeout >= 330, "{timeout}");
}

#[test]
fn the_goose_snippet_is_one_flow_mapping_under_extensions() {
    let snippet = Agent::Goose.snippet();
    let lines: Vec<&str> = snippet
        .lines()
        .filter(|line| !line.starts_with('#'))
        .collect();
    assert_eq!(lines.first(), Some(&"extensions:"));
    assert_eq!(lines.len(), 2, "{snippet}");
    let Some(body) = lines[1]
        .strip_prefix("  chromate: {")
        .and_then(|rest| rest.strip_suffix('}'))
    else {
        panic!("not a flow mapping: {:?}", lines[1]);
    };
    // Split on the commas outside brackets.
    let mut entries = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (index, c) in body.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                entries.push(body[start..index].trim());
                start = index + 1;
            }
            _ => {}
        }
    }
    entries.push(body[start..].trim());
    expect![[r#"
        enabled: true
        name: chromate
        type: stdio
        cmd: chromate
        args: [mcp]
        envs: {}
        timeout: 300"#]]
    .assert_eq(&entries.join("\n"));
}

#[test]
fn bench_snapshot_arguments_parse() {
    check(
        "bench-snapshot page.html",
        expect![[
            r#"bench-snapshot page.html repeat=5 max_lines=80 detail=false peers=[] no_peers=false format=Table output=None wait_ms=1000"#
        ]],
    );
    check(
        "bench-snapshot page.html --detail",
        expect![[
            r#"bench-snapshot page.html repeat=21 max_lines=80 detail=true peers=[] no_peers=false format=Table output=None wait_ms=1000"#
        ]],
    );
    check(
        "bench-snapshot http://127.0.0.1:1/ urls.txt --repeat 3 --max-lines 5000 --no-peers",
        expect![[
            r#"bench-snapshot http://127.0.0.1:1/ urls.txt repeat=3 max_lines=5000 detail=false peers=[] no_peers=true format=Table output=None wait_ms=1000"#
        ]],
    );
    check(
        "bench-snapshot d --peer playwright-mcp=npx-pw --peer=agent-browser=off --format json",
        expect![[
            r#"bench-snapshot d repeat=5 max_lines=80 detail=false peers=[("playwright-mcp", "npx-pw"), ("agent-browser", "off")] no_peers=false format=Json output=None wait_ms=1000"#
        ]],
    );
    check(
        "bench-snapshot d --format html --output r.html",
        expect![[
            r#"bench-snapshot d repeat=5 max_lines=80 detail=false peers=[] no_peers=false format=Html output=Some("r.html") wait_ms=1000"#
        ]],
    );
    check(
        "bench-snapshot d --wait-ms 250",
        expect![[
            r#"bench-snapshot d repeat=5 max_lines=80 detail=false peers=[] no_peers=false format=Table output=None wait_ms=250"#
        ]],
    );
    check(
        "bench-snapshot d --wait-ms 60001",
        expect!["usage error: --wait-ms needs milliseconds from 0 to 60000"],
    );
    check(
        "bench-snapshot",
        expect!["usage error: missing url, file, directory or sitemap"],
    );
    check(
        "bench-snapshot x --repeat 0",
        expect!["usage error: --repeat needs a number from 1 to 5000"],
    );
    check(
        "bench-snapshot x --format html",
        expect!["usage error: --format html needs --output FILE"],
    );
    check(
        "bench-snapshot x --peer selenium=x",
        expect![[
            r#"usage error: unknown peer "selenium": playwright-mcp, chrome-devtools-mcp, agent-browser or chromate"#
        ]],
    );
    check(
        "bench-snapshot x --format yaml",
        expect![[r#"usage error: --format is table, json or html, not "yaml""#]],
    );
}

#[test]
fn mcp_http_flags_parse() {
    let http = |args: &str| {
        let args: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
        match parse_args(&args) {
            Ok(Command::Mcp(flags)) => format!("{:?} isolated={}", flags.http, flags.isolated),
            Ok(_) => "another command".to_owned(),
            Err(err) => format!("usage error: {}", err.0),
        }
    };
    expect!["Some(HttpFlags { addr: 127.0.0.1:8931, auth_tokens: [], no_auth: false, allowed_hosts: [], max_sessions: 64, idle_timeout: 1800s, node: None }) isolated=false"].assert_eq(&http("mcp --http"));
    expect![[r#"Some(HttpFlags { addr: 0.0.0.0:9000, auth_tokens: ["t"], no_auth: false, allowed_hosts: ["a.example", "b.example:8443"], max_sessions: 3, idle_timeout: 60s, node: None }) isolated=false"#]].assert_eq(&http("mcp --http 0.0.0.0:9000 --auth-token t --allowed-hosts A.example,b.example:8443 --max-sessions 3 --session-idle-timeout 60"));
    expect!["Some(HttpFlags { addr: 127.0.0.1:9001, auth_tokens: [], no_auth: false, allowed_hosts: [], max_sessions: 64, idle_timeout: 1800s, node: None }) isolated=true"].assert_eq(&http("mcp --http=9001 --isolated"));
    expect!["Some(HttpFlags { addr: 127.0.0.1:8931, auth_tokens: [], no_auth: false, allowed_hosts: [], max_sessions: 64, idle_timeout: 1800s, node: None }) isolated=false"].assert_eq(&http("mcp --http --headed"));
    expect![[r#"
        usage error: mcp: --no-auth and --auth-token cannot be combined
        hint: chromate mcp --help"#]]
    .assert_eq(&http("mcp --http --no-auth --auth-token t"));
    expect![[r#"
        usage error: mcp: --no-auth is for loopback addresses only; 0.0.0.0:9000 needs --auth-token
        hint: chromate mcp --help"#]]
    .assert_eq(&http("mcp --http 0.0.0.0:9000 --no-auth"));
    expect![[r#"Some(HttpFlags { addr: 127.0.0.1:8931, auth_tokens: ["a", "b"], no_auth: false, allowed_hosts: [], max_sessions: 64, idle_timeout: 1800s, node: None }) isolated=false"#]].assert_eq(&http("mcp --http --auth-token a --auth-token b --auth-token a"));
    expect![[r#"
        usage error: mcp: --http needs an address as IP:PORT (127.0.0.1:8931, [::1]:8931, 0.0.0.0:8931) or a port, not "example.com:80"
        hint: chromate mcp --help"#]].assert_eq(&http("mcp --http example.com:80"));
    expect![[r#"
        usage error: mcp: --max-sessions needs a whole number from 1 to 10000, not "0"
        hint: chromate mcp --help"#]]
    .assert_eq(&http("mcp --http --max-sessions 0"));
    expect![[r#"
        usage error: mcp: --max-sessions is an option of --http; add --http [ADDR]
        hint: chromate mcp --help"#]]
    .assert_eq(&http("mcp --max-sessions 3"));
    expect![[r#"Some(HttpFlags { addr: 127.0.0.1:8931, auth_tokens: [], no_auth: false, allowed_hosts: [], max_sessions: 64, idle_timeout: 1800s, node: Some("node-a1") }) isolated=false"#]].assert_eq(&http("mcp --http --node node-a1"));
    expect![[r#"
        usage error: mcp: --node needs a name of 1 to 32 characters from a-z, 0-9 and -, not "a.b"
        hint: chromate mcp --help"#]]
    .assert_eq(&http("mcp --http --node a.b"));
    expect![[r#"
        usage error: mcp: --node is an option of --http; add --http [ADDR]
        hint: chromate mcp --help"#]]
    .assert_eq(&http("mcp --node a"));
    expect![[r#"
        usage error: mcp: --http and --session cannot be combined (an HTTP server isolates each of its sessions)
        hint: chromate mcp --help"#]].assert_eq(&http("mcp --http --session work"));
}

#[test]
fn global_flags_go_before_the_command_as_well_as_after_it() {
    check(
        "--session s1 --json status",
        expect!["tool browser_status {} Common { session: Some(\"s1\"), json: true, idle: None }"],
    );
    check(
        "--session=s1 navigate http://h/ --json",
        expect![[
            r#"tool browser_navigate {"url":"http://h/"} Common { session: Some("s1"), json: true, idle: None }"#
        ]],
    );
    // After the command, the flag written last wins.
    check(
        "--session a status --session b",
        expect!["tool browser_status {} Common { session: Some(\"b\"), json: false, idle: None }"],
    );
    check("--json sessions", expect!["sessions json=true"]);
    check("--session s2 close", expect![[r#"close Some("s2")"#]]);
    check(
        "--json flows list",
        expect!["flows FlowsCommand { action: List, config: None, output_dir: None, base_url: None, junit: None, baseline: None, threshold: None, update_baseline: false, video: false, describe: false, workers: None, quiet: false, ignore_https_errors: false, json: true }"],
    );
    check(
        "--session s1 audit http://h/",
        expect![[
            r#"audit {"url":"http://h/"} format=Text output=None fail_on=None quiet=false session=Some("s1")"#
        ]],
    );
    check(
        "--json --help",
        expect!["help chromate — browser automation for AI agents"],
    );
    // A command that does not take the flag says so, as for any option.
    check(
        "--session s1 sessions",
        expect!["usage error: sessions: unexpected arguments"],
    );
    check("--session", expect!["usage error: --session needs a name"]);
    check("--json", expect!["usage error: missing command"]);
    check(
        "--session a/b status",
        expect![[r#"usage error: session name "a/b": use 1 to 64 of A-Z a-z 0-9 - _"#]],
    );
}

#[test]
fn a_usage_error_is_one_line_and_a_hint_naming_the_help() {
    let error = |line: &str| {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        match parse_args(&args) {
            Err(UsageError(message)) => message,
            Ok(command) => panic!("{line}: {command:?}"),
        }
    };
    assert_eq!(
        error("click #a --bogus"),
        "click: unknown option --bogus\nhint: chromate click --help"
    );
    assert_eq!(
        error("--session s1 navigate"),
        "navigate: missing required argument URL\nhint: chromate navigate --help"
    );
    assert_eq!(
        error("frobnicate"),
        "unknown command \"frobnicate\"\nhint: chromate --help"
    );
    for line in [
        "",
        "sessions --all",
        "close x",
        "audit",
        "capture",
        "flows nope",
        "mcp --nope",
        "init",
        "skill --dir d",
        "bench-snapshot",
        "errors --bogus",
    ] {
        let message = error(line);
        let lines: Vec<&str> = message.lines().collect();
        assert_eq!(lines.len(), 2, "{line:?}: {message}");
        assert!(
            lines[1].starts_with("hint: chromate "),
            "{line:?}: {message}"
        );
        assert!(lines[1].ends_with("--help"), "{line:?}: {message}");
    }
}

#[test]
fn the_daemon_launches_at_once_only_when_asked() {
    check(
        "daemon --session s1 --idle-timeout 5 --launch",
        expect!["daemon s1 5s launch=true"],
    );
    check(
        "daemon --session s1 --idle-timeout 5",
        expect!["daemon s1 5s launch=false"],
    );
}

#[test]
fn flows_base_url_is_an_absolute_http_url_for_list_and_run() {
    let base_url = |line: &str| {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        match parse_args(&args) {
            Ok(Command::Flows(command)) => Ok(command.base_url),
            Ok(other) => panic!("{line}: {other:?}"),
            Err(UsageError(message)) => Err(message.lines().next().unwrap_or("").to_owned()),
        }
    };
    assert_eq!(
        base_url("flows run --base-url https://staging.example/app/"),
        Ok(Some("https://staging.example/app/".to_owned()))
    );
    assert_eq!(
        base_url("flows list --base-url=http://127.0.0.1:8080"),
        Ok(Some("http://127.0.0.1:8080".to_owned()))
    );
    for bad in [
        "staging.example",
        "/app",
        "file:///tmp/x",
        "ftp://h/",
        "http://",
    ] {
        assert_eq!(
            base_url(&format!("flows run --base-url {bad}")),
            Err(format!(
                "flows: --base-url is an absolute http or https URL, not {bad:?}"
            )),
        );
    }
    assert_eq!(
        base_url("flows describe x --base-url http://h/"),
        Err("flows: unknown option --base-url for flows describe".to_owned())
    );
}

#[test]
fn audit_writes_several_formats_from_one_run_and_refuses_ambiguous_ones() {
    let parsed = |line: &str| {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        match parse_args(&args) {
            Ok(Command::Audit(command)) => Ok(format!(
                "format={:?} output={:?} reports={:?}",
                command.format, command.output, command.reports
            )),
            Ok(other) => panic!("{line}: {other:?}"),
            Err(UsageError(message)) => Err(message.lines().next().unwrap_or("").to_owned()),
        }
    };
    assert_eq!(
        parsed("audit http://h/ --format sarif=out.sarif --format junit=out.xml --format=html=r.html"),
        Ok(r#"format=Text output=None reports=[(Sarif, "out.sarif"), (Junit, "out.xml"), (Html, "r.html")]"#.to_owned())
    );
    assert_eq!(
        parsed("audit http://h/ --format md --output a.md --format sarif=a.sarif"),
        Ok(r#"format=Markdown output=Some("a.md") reports=[(Sarif, "a.sarif")]"#.to_owned())
    );
    assert_eq!(
        parsed("--json audit http://h/ --format json --format junit=a.xml"),
        Ok(r#"format=Json output=None reports=[(Junit, "a.xml")]"#.to_owned()),
        "--json and --format json ask for the same report"
    );
    assert_eq!(
        parsed("audit http://h/ --format sarif --format junit"),
        Err("audit: --format sarif and --format junit: one report goes to stdout (or --output); write the others to files with --format NAME=PATH".to_owned())
    );
    assert_eq!(
        parsed("--json audit http://h/ --format sarif"),
        Err("audit: --json and --format sarif: one report goes to stdout (or --output); write the others to files with --format NAME=PATH".to_owned())
    );
    assert_eq!(
        parsed("audit http://h/ --format sarif=a.out --format junit=./a.out"),
        Err("audit: --format sarif=a.out and --format junit=./a.out write the same file; give each report a file of its own".to_owned())
    );
    assert_eq!(
        parsed("audit http://h/ --output r.txt --format html=r.txt"),
        Err("audit: --output r.txt and --format html=r.txt write the same file; give each report a file of its own".to_owned())
    );
    assert_eq!(
        parsed("audit http://h/ --format sarif="),
        Err("audit: --format sarif= needs a file after the =, e.g. sarif=report.sarif".to_owned())
    );
    assert_eq!(
        parsed("audit http://h/ --format pdf=a.pdf"),
        Err(r#"audit: --format is one of text, json, md, html, sarif, junit, not "pdf" (NAME or NAME=PATH)"#.to_owned())
    );
}

#[test]
fn webmcp_commands_and_the_cap_parse() {
    check(
        "webmcp list",
        expect![[
            r#"tool browser_webmcp {"action":"list"} Common { session: None, json: false, idle: None }"#
        ]],
    );
    check(
        r#"webmcp call add_to_cart {"item":"tea"}"#,
        expect![[
            r#"tool browser_webmcp {"action":"call","arguments":{"item":"tea"},"name":"add_to_cart"} Common { session: None, json: false, idle: None }"#
        ]],
    );
    check(
        "webmcp call add_to_cart [1]",
        expect![[r#"usage error: webmcp: --arguments is a JSON object, not "[1]""#]],
    );
    check("mcp --caps audit,webmcp", expect!["mcp McpFlags { headed: false, browser: None, cdp_endpoint: None, cdp_ca: None, cdp_authorization: None, cdp_timeout_ms: None, artifacts_dir: None, allowed_origins: None, blocked_origins: None, structured_content: false, unrestricted_file_access: false, session: None, caps_audit: true, caps_flows: false, caps_webmcp: true, caps_vision: false, isolated: false, ignore_https_errors: false, http: None }"]);
}
