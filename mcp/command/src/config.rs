//! The parsed options of `chromate mcp`: flags (docs/mcp.md#run), the environment
//! variables with fallback-and-warn, and the origin lists (docs/mcp.md#origin-policy).
//!
//! Owns: [`Config`], resolving the environment through an injectable lookup
//! (so tests never touch the process environment), and splitting origin
//! lists. Does not own argv parsing (`cli.rs`), the grammar of one origin
//! pattern or applying the origin policy to requests: the engine does both
//! (`chromate::intercept::OriginPattern`).

use std::path::{Path, PathBuf};

use chromate::intercept::OriginPattern;

use crate::artifacts::{self, Limits};

/// Default `timeout_ms` when `CHROMATE_AGENT_TIMEOUT` is unset (docs/mcp.md#tools).
pub const DEFAULT_AGENT_TIMEOUT_MS: u64 = 5000;
/// Largest `timeout_ms` anywhere.
pub const MAX_TIMEOUT_MS: u64 = 300_000;

/// Options given on the `chromate mcp` command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpFlags {
    pub headed: bool,
    pub browser: Option<PathBuf>,
    pub cdp_endpoint: Option<String>,
    /// `--cdp-ca FILE`: CA certificates (PEM) trusted for a `wss://` endpoint.
    pub cdp_ca: Option<PathBuf>,
    /// `--cdp-authorization VALUE`: the `Authorization` header of the websocket handshake.
    pub cdp_authorization: Option<String>,
    /// `--cdp-timeout MS`: how long connecting to the endpoint may take (a pool's queue).
    pub cdp_timeout_ms: Option<u64>,
    pub artifacts_dir: Option<PathBuf>,
    pub allowed_origins: Option<Vec<OriginPattern>>,
    pub blocked_origins: Option<Vec<OriginPattern>>,
    /// `--structured-content`: success results also carry `structuredContent`.
    pub structured_content: bool,
    /// `--allow-unrestricted-file-access`: browser_upload reads any file the server can.
    pub unrestricted_file_access: bool,
    /// `--session NAME`: attach to that CLI session's daemon instead of an own browser.
    pub session: Option<String>,
    /// `--caps audit`: tools/list adds the audit capability's tools.
    pub caps_audit: bool,
    /// `--caps flows`: offer the flows tools beside the 28.
    pub caps_flows: bool,
    /// `--caps webmcp`: the browser runs with WebMCP on and the page's own tools are offered
    /// (docs/mcp.md#webmcp).
    pub caps_webmcp: bool,
    /// `--caps vision`: offer describe_screenshot.
    pub caps_vision: bool,
    /// `--isolated`: the session's tabs live in a browser context of their own.
    pub isolated: bool,
    /// `--ignore-https-errors`: the launched browser accepts any TLS certificate.
    pub ignore_https_errors: bool,
    /// `--http [ADDR]` and its options: serve Streamable HTTP instead of stdio.
    pub http: Option<HttpFlags>,
}

/// The options of `chromate mcp --http` (docs/mcp.md, "Streamable HTTP").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpFlags {
    /// Where to listen; `127.0.0.1:8931` by default.
    pub addr: std::net::SocketAddr,
    /// `--auth-token` (repeatable): every request needs `Authorization: Bearer <one of them>`;
    /// required to bind a non-loopback address. Empty and not `no_auth`: the server generates
    /// one at start (docs/mcp.md#streamable-http). Each token is one principal: the 2026-07-28
    /// requests sent with it share a browser context of their own.
    pub auth_tokens: Vec<String>,
    /// `--no-auth`: no token at all (loopback binds only).
    pub no_auth: bool,
    /// `--allowed-hosts`: `Origin` hosts accepted besides the loopback ones.
    pub allowed_hosts: Vec<String>,
    /// `--max-sessions`: more sessions than this get HTTP 503.
    pub max_sessions: usize,
    /// `--session-idle-timeout`: a session without requests for this long ends.
    pub idle_timeout: std::time::Duration,
    /// `--node NAME`: this server's name behind a load balancer; its session ids are
    /// `NAME.` and 32 random hex digits, so the balancer can route each request to the server
    /// that made its session (docs/mcp.md#several-servers-behind-a-load-balancer).
    pub node: Option<String>,
}

impl Default for HttpFlags {
    fn default() -> HttpFlags {
        HttpFlags {
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], 8931)),
            auth_tokens: Vec::new(),
            no_auth: false,
            allowed_hosts: Vec::new(),
            max_sessions: 64,
            idle_timeout: std::time::Duration::from_secs(30 * 60),
            node: None,
        }
    }
}

/// Everything the server needs to know from its invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub headed: bool,
    /// `--browser`, else `CHROMATE_BROWSER`; `None` = search (docs/mcp.md#browser-not-found).
    pub browser: Option<PathBuf>,
    /// `--cdp-endpoint`: connect instead of launching.
    pub cdp_endpoint: Option<String>,
    /// `--cdp-ca` and `--cdp-authorization` (else `CHROMATE_CDP_AUTHORIZATION`).
    pub cdp_options: chromate::ConnectOptions,
    /// Root under which the session directory is made (docs/mcp.md#session-directory).
    pub artifacts_root: PathBuf,
    /// `None` = allow all.
    pub allowed_origins: Option<Vec<OriginPattern>>,
    pub blocked_origins: Vec<OriginPattern>,
    pub limits: Limits,
    /// Default `timeout_ms` (`CHROMATE_AGENT_TIMEOUT`).
    pub agent_timeout_ms: u64,
    /// `CHROMATE_TRACE_DIR`; `None` = `<session dir>/traces`.
    pub trace_dir: Option<PathBuf>,
    /// `CHROMATE_STATE_DIR`, else `./.chromate/state`.
    pub state_dir: PathBuf,
    /// Success results carry `structuredContent {result, observation}` (docs/mcp.md#structured-content):
    /// `--structured-content` or `CHROMATE_MCP_STRUCTURED_CONTENT=1`.
    pub structured_content: bool,
    /// `--allow-unrestricted-file-access`; else browser_upload reads only files under the
    /// server's working directory.
    pub unrestricted_file_access: bool,
    /// Whether the browser may load `file:` documents (docs/mcp.md#file-access): for
    /// `chromate mcp` only with `--allow-unrestricted-file-access`; the command line's own
    /// sessions, captures and flows set it ([`Config::for_command_line`]), a local page being
    /// its user's own local action.
    pub file_urls: bool,
    /// `--caps audit`: qa_audit_url, qa_get_runtime_errors and qa_execute_user_flow are listed
    /// and callable.
    pub caps_audit: bool,
    /// `--caps webmcp` (and every command-line session daemon): a browser chromate launches runs with
    /// [`WEBMCP_FEATURE`], and the page's own tools are offered (docs/mcp.md#webmcp).
    pub caps_webmcp: bool,
    /// `--caps vision`: describe_screenshot is listed and callable.
    pub caps_vision: bool,
    /// `--isolated` (and every HTTP session): each session is a browser context in one shared
    /// browser.
    pub isolated: bool,
    /// Served to other machines (`--http` on an address that is not loopback): audits refuse
    /// private-network targets whatever the call says (docs/cli.md#audits, "Guards").
    pub remote: bool,
    /// `--ignore-https-errors` (else `CHROMATE_IGNORE_HTTPS_ERRORS=1`): a browser chromate
    /// launches gets `--ignore-certificate-errors`, so self-signed and otherwise invalid TLS
    /// certificates load (docs/cli.md#tls-certificates). A browser it connects to
    /// (`--cdp-endpoint`) keeps its own setting.
    pub ignore_https_errors: bool,
    /// Captures and flows (`chromate capture`, `chromate flows run`, their MCP tools): the
    /// browser they launch gets [`RENDERING_PROFILE`], so the same page renders the same on
    /// two machines with the same Chromium and fonts (docs/cli.md#portable-baselines).
    pub rendering_profile: bool,
}

/// The Chromium flag that turns on `document.modelContext` and the protocol's `WebMCP` domain
/// (Chromium 156; docs/mcp.md#webmcp).
pub const WEBMCP_FEATURE: &str = "--enable-features=WebMCP";

/// The Chromium flags of the rendering profile of captures and flows
/// (docs/cli.md#portable-baselines): glyphs without hinting and without subpixel (LCD)
/// antialiasing, colours in sRGB whatever the machine's display profile, scrolling that jumps
/// instead of animating, and no scrollbars. Device scale 1 is every launch's
/// (`--force-device-scale-factor=1`, `engine/src/launch/mod.rs`) and every capture's
/// (`Emulation.setDeviceMetricsOverride`, `engine/src/screenshot.rs`).
pub const RENDERING_PROFILE: &[&str] = &[
    "--font-render-hinting=none",
    "--disable-lcd-text",
    "--force-color-profile=srgb",
    "--disable-smooth-scrolling",
    "--hide-scrollbars",
];

impl Config {
    /// The launch options of a browser this configuration launches.
    pub fn launch_options(&self) -> chromate::LaunchOptions {
        let mut extra_args = Vec::new();
        if self.ignore_https_errors {
            extra_args.push("--ignore-certificate-errors".to_owned());
        }
        if self.caps_webmcp {
            extra_args.push(WEBMCP_FEATURE.to_owned());
        }
        if self.rendering_profile {
            extra_args.extend(RENDERING_PROFILE.iter().map(|arg| (*arg).to_owned()));
        }
        chromate::LaunchOptions {
            executable: self.browser.clone(),
            headed: self.headed,
            extra_args,
            ..chromate::LaunchOptions::default()
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::resolve(McpFlags::default(), &|_| None).0
    }
}

impl Config {
    /// Combines flags and environment; returns the config and the warnings to print.
    pub fn resolve(flags: McpFlags, env: &dyn Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        let mut warnings = Vec::new();
        let var = |name: &str| env(name).filter(|value| !value.is_empty());

        let browser = flags
            .browser
            .or_else(|| var("CHROMATE_BROWSER").map(PathBuf::from));
        let artifacts_root = flags
            .artifacts_dir
            .or_else(|| var("CHROMATE_MCP_ARTIFACTS_DIR").map(PathBuf::from))
            .unwrap_or_else(std::env::temp_dir);

        let mut number = |name: &str, default: u64, min: u64, max: u64| -> u64 {
            let Some(text) = var(name) else {
                return default;
            };
            match text.trim().parse::<u64>() {
                Ok(value) if (min..=max).contains(&value) => value,
                _ => {
                    warnings.push(format!(
                        "warning: ignoring {name}={text:?}: expected an integer between {min} and {max}; using {default}"
                    ));
                    default
                }
            }
        };
        let limits = Limits {
            spill_bytes: number(
                "CHROMATE_MCP_SPILL_BYTES",
                artifacts::DEFAULT_SPILL_BYTES as u64,
                1,
                u32::MAX as u64,
            ) as usize,
            max_response_bytes: number(
                "CHROMATE_MCP_MAX_RESPONSE_BYTES",
                artifacts::DEFAULT_MAX_RESPONSE_BYTES as u64,
                artifacts::MIN_RESPONSE_BYTES as u64,
                u32::MAX as u64,
            ) as usize,
            max_files: number(
                "CHROMATE_MCP_MAX_ARTIFACT_FILES",
                artifacts::DEFAULT_MAX_FILES,
                0,
                u32::MAX as u64,
            ),
            max_bytes: number(
                "CHROMATE_MCP_MAX_ARTIFACT_BYTES",
                artifacts::DEFAULT_MAX_BYTES,
                0,
                u64::MAX / 2,
            ),
        };
        let agent_timeout_ms = number(
            "CHROMATE_AGENT_TIMEOUT",
            DEFAULT_AGENT_TIMEOUT_MS,
            0,
            MAX_TIMEOUT_MS,
        );
        let trace_dir = var("CHROMATE_TRACE_DIR").map(PathBuf::from);
        let state_dir = var("CHROMATE_STATE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(".chromate").join("state"));

        let structured_content = flags.structured_content
            || match var("CHROMATE_MCP_STRUCTURED_CONTENT").as_deref() {
                None | Some("0") => false,
                Some("1") => true,
                Some(other) => {
                    warnings.push(format!(
                        "warning: ignoring CHROMATE_MCP_STRUCTURED_CONTENT={other:?}: expected 1 or 0; using 0"
                    ));
                    false
                }
            };

        let ignore_https_errors = flags.ignore_https_errors
            || match var("CHROMATE_IGNORE_HTTPS_ERRORS").as_deref() {
                None | Some("0") => false,
                Some("1") => true,
                Some(other) => {
                    warnings.push(format!(
                        "warning: ignoring CHROMATE_IGNORE_HTTPS_ERRORS={other:?}: expected 1 or 0; using 0"
                    ));
                    false
                }
            };

        let config = Config {
            headed: flags.headed,
            browser,
            cdp_endpoint: flags.cdp_endpoint,
            cdp_options: chromate::ConnectOptions {
                ca_file: flags.cdp_ca,
                authorization: flags
                    .cdp_authorization
                    .or_else(|| var("CHROMATE_CDP_AUTHORIZATION")),
                connect_timeout: flags.cdp_timeout_ms.map_or(
                    chromate::browser::DEFAULT_CONNECT_TIMEOUT,
                    std::time::Duration::from_millis,
                ),
                ..chromate::ConnectOptions::default()
            },
            artifacts_root,
            allowed_origins: flags.allowed_origins,
            blocked_origins: flags.blocked_origins.unwrap_or_default(),
            limits,
            agent_timeout_ms,
            trace_dir,
            state_dir,
            structured_content,
            unrestricted_file_access: flags.unrestricted_file_access,
            rendering_profile: false,
            file_urls: flags.unrestricted_file_access,
            caps_audit: flags.caps_audit,
            caps_webmcp: flags.caps_webmcp,
            caps_vision: flags.caps_vision,
            isolated: flags.isolated || flags.http.is_some(),
            remote: flags
                .http
                .as_ref()
                .is_some_and(|http| !http.addr.ip().is_loopback()),
            ignore_https_errors,
        };
        (config, warnings)
    }

    /// The configuration of a command-line front end (a session daemon, `chromate capture`,
    /// `chromate flows`): `file:` pages load, as the user at the shell asked for them
    /// (docs/cli.md#sessions); the upload rule stays.
    pub fn for_command_line(mut self) -> Config {
        self.file_urls = true;
        self
    }

    /// `launch` or `cdp-endpoint` (browser_status `mode`).
    pub fn mode(&self) -> &'static str {
        if self.cdp_endpoint.is_some() {
            "cdp-endpoint"
        } else {
            "launch"
        }
    }
}

/// Parses a comma list of origin patterns; the error names the bad entry.
pub fn parse_origin_list(list: &str) -> Result<Vec<OriginPattern>, String> {
    let mut patterns = Vec::new();
    for entry in list.split(',') {
        let entry = entry.trim();
        if entry.is_empty() {
            return Err("empty entry in origin list".to_owned());
        }
        patterns.push(OriginPattern::parse(entry).map_err(|err| err.to_string())?);
    }
    Ok(patterns)
}

#[cfg(test)]
mod tests;
