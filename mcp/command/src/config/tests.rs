//! Unit tests for environment fallback and origin-list parsing.

use expect_test::{expect, Expect};

use super::*;

fn check_origins(list: &str, expect: Expect) {
    let actual = match parse_origin_list(list) {
        Ok(patterns) => patterns
            .iter()
            .map(|pattern| format!("{pattern} {:?}", pattern.port))
            .collect::<Vec<_>>()
            .join("\n"),
        Err(err) => format!("error: {err}"),
    };
    expect.assert_eq(&actual);
}

#[test]
fn origin_lists_parse() {
    check_origins(
        "https://example.com, http://localhost:8080,https://*.corp.net:*,file://",
        expect![[r#"
            https://example.com Default
            http://localhost:8080 Exact(8080)
            https://*.corp.net:* Any
            file:// Default"#]],
    );
    check_origins("HTTP://Example.COM", expect!["http://example.com Default"]);
}

#[test]
fn bad_origin_lists_name_the_entry() {
    check_origins(
        "example.com",
        expect![[r#"error: bad origin "example.com": expected scheme://host[:port]"#]],
    );
    check_origins(
        "https://a.com,",
        expect!["error: empty entry in origin list"],
    );
    check_origins(
        "https://a.com/path",
        expect![[
            r#"error: bad origin "https://a.com/path": only scheme://host[:port] is allowed, no path, query or user"#
        ]],
    );
    check_origins(
        "https://a.*.com",
        expect![[
            r#"error: bad origin "https://a.*.com": invalid host (`*` may only replace a leading label)"#
        ]],
    );
    check_origins(
        "https://a.com:99999",
        expect![[r#"error: bad origin "https://a.com:99999": port must be 0-65535 or *"#]],
    );
}

fn resolve(vars: &[(&str, &str)]) -> (Config, Vec<String>) {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::resolve(McpFlags::default(), &move |name| {
        vars.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    })
}

#[test]
fn environment_defaults() {
    let (config, warnings) = resolve(&[]);
    assert!(warnings.is_empty());
    assert_eq!(config.agent_timeout_ms, 5000);
    assert_eq!(config.limits, Limits::default());
    assert_eq!(config.state_dir, Path::new(".chromate/state"));
    assert_eq!(config.mode(), "launch");
}

#[test]
fn invalid_environment_values_fall_back_with_a_warning() {
    let (config, warnings) = resolve(&[
        ("CHROMATE_AGENT_TIMEOUT", "300001"),
        ("CHROMATE_MCP_MAX_RESPONSE_BYTES", "1023"),
        ("CHROMATE_MCP_SPILL_BYTES", "lots"),
        ("CHROMATE_MCP_MAX_ARTIFACT_FILES", "3"),
    ]);
    assert_eq!(config.agent_timeout_ms, 5000);
    assert_eq!(config.limits.max_response_bytes, 32768);
    assert_eq!(config.limits.spill_bytes, 8192);
    assert_eq!(config.limits.max_files, 3);
    expect![[r#"
        warning: ignoring CHROMATE_MCP_SPILL_BYTES="lots": expected an integer between 1 and 4294967295; using 8192
        warning: ignoring CHROMATE_MCP_MAX_RESPONSE_BYTES="1023": expected an integer between 1024 and 4294967295; using 32768
        warning: ignoring CHROMATE_AGENT_TIMEOUT="300001": expected an integer between 0 and 300000; using 5000"#]]
    .assert_eq(&warnings.join("\n"));
}

#[test]
fn flags_win_over_environment() {
    let flags = McpFlags {
        browser: Some(PathBuf::from("/flag/chrome")),
        cdp_endpoint: Some("http://127.0.0.1:9222".into()),
        ..McpFlags::default()
    };
    let (config, _) = Config::resolve(flags, &|name| {
        (name == "CHROMATE_BROWSER").then(|| "/env/chrome".to_owned())
    });
    assert_eq!(config.browser, Some(PathBuf::from("/flag/chrome")));
    assert_eq!(config.mode(), "cdp-endpoint");
    assert_eq!(
        config.cdp_options.connect_timeout,
        std::time::Duration::from_secs(30),
        "--cdp-timeout's default"
    );
    let flags = McpFlags {
        cdp_endpoint: Some("ws://127.0.0.1:3000?token=t".into()),
        cdp_timeout_ms: Some(1500),
        ..McpFlags::default()
    };
    let (config, _) = Config::resolve(flags, &|_| None);
    assert_eq!(
        config.cdp_options.connect_timeout,
        std::time::Duration::from_millis(1500)
    );
}

#[test]
fn structured_content_is_off_unless_the_flag_or_the_variable_says_so() {
    assert!(!resolve(&[]).0.structured_content);
    assert!(
        !resolve(&[("CHROMATE_MCP_STRUCTURED_CONTENT", "0")])
            .0
            .structured_content
    );
    assert!(
        resolve(&[("CHROMATE_MCP_STRUCTURED_CONTENT", "1")])
            .0
            .structured_content
    );
    let (config, warnings) = resolve(&[("CHROMATE_MCP_STRUCTURED_CONTENT", "yes")]);
    assert!(!config.structured_content);
    assert_eq!(
        warnings,
        ["warning: ignoring CHROMATE_MCP_STRUCTURED_CONTENT=\"yes\": expected 1 or 0; using 0"]
    );
    let flags = McpFlags {
        structured_content: true,
        ..McpFlags::default()
    };
    assert!(Config::resolve(flags, &|_| None).0.structured_content);
}

#[test]
fn only_an_http_server_on_an_address_other_than_loopback_is_remote() {
    let remote = |http: Option<&str>| {
        let flags = McpFlags {
            http: http.map(|addr| HttpFlags {
                addr: addr.parse().expect("a socket address"),
                ..HttpFlags::default()
            }),
            ..McpFlags::default()
        };
        Config::resolve(flags, &|_| None).0.remote
    };
    assert!(!remote(None), "stdio");
    assert!(!remote(Some("127.0.0.1:8931")));
    assert!(!remote(Some("127.9.9.9:0")));
    assert!(!remote(Some("[::1]:8931")));
    assert!(remote(Some("0.0.0.0:8931")));
    assert!(remote(Some("[::]:0")));
}

#[test]
fn ignore_https_errors_comes_from_the_flag_or_the_variable_and_reaches_the_launch() {
    let (config, _) = resolve(&[]);
    assert!(!config.ignore_https_errors);
    assert!(config.launch_options().extra_args.is_empty());
    let (config, warnings) = resolve(&[("CHROMATE_IGNORE_HTTPS_ERRORS", "1")]);
    assert!(config.ignore_https_errors && warnings.is_empty());
    assert_eq!(
        config.launch_options().extra_args,
        ["--ignore-certificate-errors"]
    );
    let (config, warnings) = resolve(&[("CHROMATE_IGNORE_HTTPS_ERRORS", "true")]);
    assert!(!config.ignore_https_errors);
    assert_eq!(
        warnings,
        ["warning: ignoring CHROMATE_IGNORE_HTTPS_ERRORS=\"true\": expected 1 or 0; using 0"]
    );
    let flags = McpFlags {
        ignore_https_errors: true,
        ..McpFlags::default()
    };
    assert!(Config::resolve(flags, &|_| None).0.ignore_https_errors);
}

#[test]
fn the_rendering_profile_reaches_the_launch_only_when_asked_for() {
    let (mut config, _) = resolve(&[]);
    assert!(!config.rendering_profile);
    assert!(config.launch_options().extra_args.is_empty());
    config.rendering_profile = true;
    assert_eq!(config.launch_options().extra_args, super::RENDERING_PROFILE);
    assert!(super::RENDERING_PROFILE.contains(&"--force-color-profile=srgb"));
}
