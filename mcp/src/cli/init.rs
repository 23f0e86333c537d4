//! `chromate init --mcp [--agent NAME]`: the configuration snippet of every MCP client
//! (host) chromate knows, and the addresses of running HTTP servers for `--http` setups.

use super::*;

pub(crate) const INIT_HELP: &str = "\
usage: chromate init --mcp [--agent NAME]

Prints the MCP configuration of chromate for each client below, in this order (with --agent,
for one): a heading naming the client and the file, then only the part that goes in that file.
It never creates or edits a file; it reads only the token files of this user's running
`chromate mcp --http` servers, whose URL and header it prints last. The guide is
docs/mcp.md#configure-a-host.

agents (NAME, then its aliases; case and _ vs - do not matter):
  claude, claude-code         Claude Code
  vscode, code, vs-code       VS Code
  codex, codex-cli            Codex
  cursor                      Cursor
  gemini, gemini-cli          Gemini CLI
  goose                       Goose
  zed                         Zed
  claude-desktop              Claude Desktop
  windsurf                    Windsurf
  copilot-cli, copilot        Copilot CLI
  opencode, open-code         OpenCode
  kilo, kilo-code, kilocode   Kilo Code
  cline                       Cline
";

pub(super) fn parse_init(args: &[String]) -> Result<Command, UsageError> {
    let mut mcp = false;
    let mut agent = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help(INIT_HELP.to_owned())),
            "--mcp" => mcp = true,
            "--agent" => {
                let Some(name) = args.next() else {
                    return Err(UsageError("init: --agent needs a value".to_owned()));
                };
                agent = Some(parse_agent(name)?);
            }
            other => match other.strip_prefix("--agent=") {
                Some(name) => agent = Some(parse_agent(name)?),
                None => return Err(UsageError(format!("init: unknown option {other:?}"))),
            },
        }
    }
    if !mcp {
        return Err(UsageError("init: --mcp is required".to_owned()));
    }
    Ok(Command::Init { agent })
}

pub(super) fn parse_agent(name: &str) -> Result<Agent, UsageError> {
    Agent::find(name).ok_or_else(|| {
        let mut message = format!("init: unknown agent {name:?}; known agents:");
        for agent in Agent::ALL {
            message.push_str(&format!(
                "\n  {:<27} {}",
                agent.names().join(", "),
                agent.client()
            ));
        }
        UsageError(message)
    })
}

/// The MCP clients (hosts) `chromate init --mcp` knows, in print order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Agent {
    ClaudeCode,
    Vscode,
    Codex,
    Cursor,
    Gemini,
    Goose,
    Zed,
    ClaudeDesktop,
    Windsurf,
    CopilotCli,
    OpenCode,
    Kilo,
    Cline,
}

/// The language of a snippet, so tests can check that each one parses.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SnippetFormat {
    Json,
    Toml,
    Yaml,
}

/// How long Codex may let one chromate tool call run, in seconds (its own default is 60).
///
/// The longest single call waits `timeout_ms` at most 300000 ms (300 s), and the first call
/// of a session may also launch the browser, which has 30 s to become ready; 30 s more covers
/// the post-action observation, a screenshot or a trace write. A browser_batch of several long
/// waits can still take longer: its steps' timeouts add up.
pub(crate) const CODEX_TOOL_TIMEOUT_SEC: u32 = 360;

/// The client configuration snippet of Claude Code, also used by Cursor, Gemini CLI and
/// Windsurf.
const MCP_SERVERS_SNIPPET: &str =
    r#"{ "mcpServers": { "chromate": { "command": "chromate", "args": ["mcp"] } } }"#;

/// OpenCode's snippet, also Kilo Code's.
const OPENCODE_SNIPPET: &str = r#"{ "mcp": { "chromate": { "type": "local", "command": ["chromate", "mcp"], "enabled": true } } }"#;

impl Agent {
    pub(crate) const ALL: &'static [Agent] = &[
        Agent::ClaudeCode,
        Agent::Vscode,
        Agent::Codex,
        Agent::Cursor,
        Agent::Gemini,
        Agent::Goose,
        Agent::Zed,
        Agent::ClaudeDesktop,
        Agent::Windsurf,
        Agent::CopilotCli,
        Agent::OpenCode,
        Agent::Kilo,
        Agent::Cline,
    ];

    /// The `--agent` spellings: the name first, then its aliases. Each is lower-case with `-`
    /// between words; [`Agent::find`] folds case and `_` onto this form.
    pub(crate) fn names(self) -> &'static [&'static str] {
        match self {
            Agent::ClaudeCode => &["claude", "claude-code"],
            Agent::Vscode => &["vscode", "code", "vs-code"],
            Agent::Codex => &["codex", "codex-cli"],
            Agent::Cursor => &["cursor"],
            Agent::Gemini => &["gemini", "gemini-cli"],
            Agent::Goose => &["goose"],
            Agent::Zed => &["zed"],
            Agent::ClaudeDesktop => &["claude-desktop"],
            Agent::Windsurf => &["windsurf"],
            Agent::CopilotCli => &["copilot-cli", "copilot"],
            Agent::OpenCode => &["opencode", "open-code"],
            Agent::Kilo => &["kilo", "kilo-code", "kilocode"],
            Agent::Cline => &["cline"],
        }
    }

    /// The agent an `--agent` value names, ignoring ASCII case and reading `_` as `-`.
    pub(crate) fn find(name: &str) -> Option<Agent> {
        let name = name.trim().to_ascii_lowercase().replace('_', "-");
        Agent::ALL
            .iter()
            .copied()
            .find(|agent| agent.names().contains(&name.as_str()))
    }

    /// The client's product name.
    pub(crate) fn client(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Vscode => "VS Code",
            Agent::Codex => "Codex",
            Agent::Cursor => "Cursor",
            Agent::Gemini => "Gemini CLI",
            Agent::Goose => "Goose",
            Agent::Zed => "Zed",
            Agent::ClaudeDesktop => "Claude Desktop",
            Agent::Windsurf => "Windsurf",
            Agent::CopilotCli => "Copilot CLI",
            Agent::OpenCode => "OpenCode",
            Agent::Kilo => "Kilo Code",
            Agent::Cline => "Cline",
        }
    }

    /// The file the snippet goes in, and what to know about it.
    fn file(self) -> &'static str {
        match self {
            Agent::ClaudeCode => ".mcp.json at the repo root (approved once)",
            Agent::Vscode => ".vscode/mcp.json (note `servers` and the required `type`)",
            Agent::Codex => ".codex/config.toml (trusted projects only; else ~/.codex/config.toml)",
            Agent::Cursor => ".cursor/mcp.json (or ~/.cursor/mcp.json)",
            Agent::Gemini => ".gemini/settings.json (or ~/.gemini/settings.json)",
            Agent::Goose => "~/.config/goose/config.yaml (restart goose)",
            Agent::Zed => "settings.json",
            Agent::ClaudeDesktop => {
                "claude_desktop_config.json (macOS ~/Library/Application Support/Claude/, \
                 Windows %APPDATA%\\Claude\\); the command must be an absolute path"
            }
            Agent::Windsurf => "~/.codeium/windsurf/mcp_config.json",
            Agent::CopilotCli => "~/.copilot/mcp-config.json (`type` and `tools` are required)",
            Agent::OpenCode => {
                "opencode.json (key `mcp`, `command` an array, environment variables in `environment`)"
            }
            Agent::Kilo => "kilo.jsonc in the project (or ~/.config/kilo/kilo.jsonc); as OpenCode",
            Agent::Cline => "cline_mcp_settings.json",
        }
    }

    /// The host's own command that writes the configuration, where it has one.
    pub(crate) fn one_liner(self) -> Option<&'static str> {
        match self {
            Agent::ClaudeCode => Some("claude mcp add --scope project chromate -- chromate mcp"),
            Agent::Vscode => {
                Some(r#"code --add-mcp '{"name":"chromate","command":"chromate","args":["mcp"]}'"#)
            }
            Agent::Codex => Some("codex mcp add chromate -- chromate mcp"),
            Agent::Gemini => Some("gemini mcp add chromate chromate mcp"),
            Agent::OpenCode => Some("opencode mcp add chromate -- chromate mcp"),
            _ => None,
        }
    }

    /// Heading lines: the client and the file, then the one-liner if there is one.
    fn heading(self) -> String {
        let mut heading = format!("# {} — {}", self.client(), self.file());
        if let Some(command) = self.one_liner() {
            heading.push_str(&format!("\n# or run: {command}"));
            if self == Agent::Codex {
                // The one-liner cannot set the timeout; without it Codex stops a long wait at
                // 60 s.
                heading.push_str(&format!(
                    " (then add tool_timeout_sec = {CODEX_TOOL_TIMEOUT_SEC} to that table)"
                ));
            }
        }
        heading
    }

    /// The language of [`Agent::snippet`].
    #[cfg(test)]
    pub(crate) fn format(self) -> SnippetFormat {
        match self {
            Agent::Codex => SnippetFormat::Toml,
            Agent::Goose => SnippetFormat::Yaml,
            _ => SnippetFormat::Json,
        }
    }

    /// Only what goes in the file. The TOML and YAML snippets start with a comment saying
    /// which table they join, so the comment survives being pasted.
    pub(crate) fn snippet(self) -> String {
        match self {
            Agent::ClaudeCode | Agent::Cursor | Agent::Gemini | Agent::Windsurf => {
                MCP_SERVERS_SNIPPET.to_owned()
            }
            Agent::Vscode => {
                r#"{ "servers": { "chromate": { "type": "stdio", "command": "chromate", "args": ["mcp"] } } }"#
                    .to_owned()
            }
            Agent::Codex => format!(
                "# part of the top-level mcp_servers table: add it as is, or merge into an existing [mcp_servers.chromate];\n\
                 # environment variables go in [mcp_servers.chromate.env]\n\
                 [mcp_servers.chromate]\n\
                 command = \"chromate\"\n\
                 args = [\"mcp\"]\n\
                 tool_timeout_sec = {CODEX_TOOL_TIMEOUT_SEC}"
            ),
            Agent::Goose => "# merge into the existing top-level `extensions:` map (do not repeat the key)\n\
                 extensions:\n  \
                 chromate: { enabled: true, name: chromate, type: stdio, cmd: chromate, args: [mcp], envs: {}, timeout: 300 }"
                .to_owned(),
            Agent::Zed => {
                r#"{ "context_servers": { "chromate": { "source": "custom", "command": "chromate", "args": ["mcp"], "env": {} } } }"#
                    .to_owned()
            }
            Agent::ClaudeDesktop => {
                r#"{ "mcpServers": { "chromate": { "command": "/absolute/path/to/chromate", "args": ["mcp"] } } }"#
                    .to_owned()
            }
            Agent::CopilotCli => {
                r#"{ "mcpServers": { "chromate": { "type": "local", "command": "chromate", "args": ["mcp"], "tools": ["*"] } } }"#
                    .to_owned()
            }
            Agent::OpenCode | Agent::Kilo => OPENCODE_SNIPPET.to_owned(),
            Agent::Cline => {
                r#"{ "mcpServers": { "chromate": { "command": "chromate", "args": ["mcp"], "disabled": false, "autoApprove": [] } } }"#
                    .to_owned()
            }
        }
    }
}

/// The stdout of `chromate init --mcp [--agent NAME]`.
pub(crate) fn init_text(agent: Option<Agent>) -> String {
    let agents: &[Agent] = match &agent {
        Some(agent) => std::slice::from_ref(agent),
        None => Agent::ALL,
    };
    let mut out = String::new();
    for agent in agents {
        out.push_str(&agent.heading());
        out.push('\n');
        out.push_str(&agent.snippet());
        out.push_str("\n\n");
    }
    out.push_str(
        "# A JSON snippet is a whole file: if the file exists, add the \"chromate\" entry to its servers object.\n\
         # If the client cannot find `chromate` on PATH, use its absolute path as the command.\n\
         # Environment variables go in the client's env map (env; [mcp_servers.chromate.env] for Codex, \
         envs for Goose, environment for OpenCode and Kilo Code).\n",
    );
    out
}

/// The part of `init --mcp` for this user's running `chromate mcp --http` servers that
/// generated their token: each one's URL and `Authorization` header, for Claude Code's command
/// line and as the JSON most clients read. Empty when none runs.
pub(crate) fn init_http_text(servers: &[crate::mcp::http::RunningServer]) -> String {
    let mut out = String::new();
    for server in servers {
        let url = &server.url;
        let authorization = format!("Bearer {}", server.token);
        let config = serde_json::json!({ "mcpServers": { "chromate": {
            "type": "http", "url": url, "headers": { "Authorization": authorization } } } });
        out.push_str(&format!(
            "# Streamable HTTP — the `chromate mcp --http` server running now (pid {}) at {url}\n\
             # with the token it generated (VS Code: \"servers\" for \"mcpServers\"; keep the token private)\n\
             # or run: claude mcp add --transport http chromate {url} --header \"Authorization: {authorization}\"\n\
             {config:#}\n\n",
            server.pid
        ));
    }
    out
}
