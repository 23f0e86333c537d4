//! Unit tests for the registry, declarations, mock globs and the pure tool rules.

use serde_json::{json, Map, Value};

use super::*;
use crate::config::Config;

const DEFAULTS: Defaults = Defaults {
    agent_timeout_ms: 5000,
};

#[test]
fn registry_holds_28_tools_in_catalogue_order() {
    let names: Vec<&str> = TOOLS.iter().map(|decl| decl.name).collect();
    assert_eq!(
        names,
        [
            "browser_navigate",
            "browser_click",
            "browser_fill",
            "browser_type",
            "browser_element",
            "browser_press",
            "browser_key",
            "browser_mouse",
            "browser_hover",
            "browser_upload",
            "browser_dialog",
            "browser_find",
            "browser_exists",
            "browser_wait",
            "browser_read",
            "browser_expect",
            "browser_snapshot",
            "browser_locators",
            "browser_a11y",
            "browser_page",
            "browser_logs",
            "browser_mock",
            "browser_state",
            "browser_trace",
            "browser_screenshot",
            "browser_status",
            "browser_batch",
            "browser_advanced_eval",
        ]
    );
}

#[test]
fn tools_list_fits_the_size_budget() {
    let size = Registry::new(&[], Caps::default())
        .list(&DEFAULTS)
        .to_string()
        .len();
    assert!(size <= 24_576, "tools/list is {size} bytes");
}

#[test]
fn every_declaration_is_well_formed() {
    for decl in TOOLS {
        assert!(decl.description.ends_with('.'), "{}", decl.name);
        assert!(!decl.description.contains('\n'), "{}", decl.name);
        for arg in decl.args {
            assert!(
                !arg.description.is_empty() && !arg.description.contains('\n'),
                "{}.{}",
                decl.name,
                arg.name
            );
        }
        let schema = schema::input_schema(decl, &DEFAULTS, &step_tool_names());
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            if property["type"] == "string" && property.get("enum").is_none() {
                assert!(property.get("maxLength").is_some(), "{}.{name}", decl.name);
            }
            if property["type"] == "array" {
                assert!(
                    property.get("maxItems").is_some() && property.get("items").is_some(),
                    "{}.{name}",
                    decl.name
                );
            }
        }
    }
}

/// Minimal valid arguments for each tool: every required argument filled.
fn minimal_arguments(decl: &ToolDecl) -> Value {
    let mut map = Map::new();
    for arg in decl.args.iter().filter(|arg| arg.required) {
        let value = match arg.kind {
            schema::Kind::Enum { values, .. } => json!(values[0]),
            schema::Kind::StrList { .. } => json!(["Cargo.toml"]),
            schema::Kind::Steps { .. } => json!([{ "tool": "browser_status" }]),
            schema::Kind::Int { min, .. } => json!(min),
            schema::Kind::Size { min, .. } => json!({ "width": min, "height": min }),
            schema::Kind::Object { .. } => json!({}),
            _ => json!("x"),
        };
        map.insert(arg.name.to_owned(), value);
    }
    Value::Object(map)
}

#[test]
fn every_declaration_decodes_into_its_args_struct() {
    for decl in TOOLS {
        let arguments = minimal_arguments(decl);
        let valid = validate(decl, Some(&arguments), &DEFAULTS);
        let Ok(valid) = valid else {
            panic!("{}: {valid:?}", decl.name);
        };
        let call = ToolCall::from_validated(decl, valid);
        assert!(call.is_ok(), "{}: {call:?}", decl.name);
        assert_eq!(call.map(|call| call.decl().name).ok(), Some(decl.name));
    }
}

#[test]
fn glob_patterns_match_full_urls() {
    let cases = [
        (
            "https://api.example.com/*",
            "https://api.example.com/v1/users",
            true,
        ),
        (
            "https://api.example.com/*",
            "https://api.example.com/v1/users?page=2",
            true,
        ),
        (
            "https://api.example.com/v1",
            "https://api.example.com/v1?x=1",
            true,
        ),
        (
            "https://api.example.com/v1?x=1",
            "https://api.example.com/v1?x=1",
            true,
        ),
        (
            "https://api.example.com/v1?x=*",
            "https://api.example.com/v1",
            false,
        ),
        ("**/logo.png", "https://cdn.example.com/img/logo.png", true),
        ("*.png", "https://a/b.png?v=3", true),
        ("https://a/*/c", "https://a/b/x/c", true),
        ("https://a/*/c", "https://a/b/x/d", false),
        ("https://a/b", "https://a/bc", false),
        ("*", "anything", true),
        ("a*b*c", "aXbYbZc", true),
        ("a*b*c", "aXbYbZ", false),
    ];
    for (pattern, url, expected) in cases {
        assert_eq!(
            crate::mocks::glob_matches(pattern, url),
            expected,
            "{pattern} vs {url}"
        );
    }
}

#[test]
fn mock_table_issues_ids_once_and_stops_at_twenty() {
    let mut table = crate::mocks::MockTable::default();
    for _ in 0..20 {
        assert!(table
            .add("https://a/*", crate::mocks::MockKind::Block)
            .is_ok());
    }
    let full = table
        .add("https://b/*", crate::mocks::MockKind::Block)
        .map(|rule| rule.id.clone());
    assert_eq!(
        full.map_err(|error| error.message),
        Err("mock: limit reached (20 active)".to_owned())
    );
    assert!(table.remove("m3"));
    assert!(!table.remove("m3"));
    let id = table
        .add("https://c/*", crate::mocks::MockKind::Block)
        .map(|rule| rule.id.clone());
    assert_eq!(id.ok().as_deref(), Some("m21"));
    assert_eq!(
        table.find("https://c/x").map(|rule| rule.id.as_str()),
        Some("m21")
    );
    assert_eq!(
        table.find("https://a/x").map(|rule| rule.id.as_str()),
        Some("m1")
    );
    assert_eq!(table.clear(), 20);
}

#[test]
fn mock_content_type_follows_the_body() {
    assert_eq!(
        crate::mocks::default_content_type(r#"{"a":1}"#),
        "application/json"
    );
    assert_eq!(
        crate::mocks::default_content_type("hello"),
        "text/plain; charset=utf-8"
    );
}

#[test]
fn navigable_urls() {
    for url in [
        "https://example.com",
        "http://127.0.0.1:8080/x",
        "file:///tmp/a.html",
        "data:text/html,hi",
        "about:blank",
    ] {
        assert!(navigation::url_is_navigable(url), "{url}");
    }
    for url in [
        "example.com",
        "https://",
        "about:srcdoc",
        "javascript:alert(1)",
        "ftp://x",
    ] {
        assert!(!navigation::url_is_navigable(url), "{url}");
    }
}

#[test]
fn issue_12_url_hints_fit_the_mistake() {
    let cases = [
        ("example.com", "add the scheme, e.g. https://example.com"),
        ("localhost:3000/x", "add the scheme, e.g. https://localhost:3000/x"),
        ("127.0.0.1:8080", "add the scheme, e.g. https://127.0.0.1:8080"),
        (
            "ftp://127.0.0.1/x",
            "use an http, https, file or data URL, or about:blank; the ftp: scheme is not supported",
        ),
        (
            "javascript:alert(1)",
            "use an http, https, file or data URL, or about:blank; the javascript: scheme is not supported",
        ),
        (
            "chrome://settings",
            "use an http, https, file or data URL, or about:blank; the chrome: scheme is not supported",
        ),
        (
            "about:srcdoc",
            "use an http, https, file or data URL, or about:blank; about:blank is the only about: page",
        ),
        (
            "https://",
            "use an http, https, file or data URL, or about:blank, with a host, e.g. https://127.0.0.1:8080/",
        ),
    ];
    for (url, hint) in cases {
        assert!(!navigation::url_is_navigable(url), "{url}");
        assert_eq!(navigation::url_hint(url), hint, "{url}");
    }
}

#[test]
fn chords_are_not_single_keys() {
    assert!(input::is_chord("Control+A"));
    assert!(input::is_chord("Shift++"));
    assert!(!input::is_chord("+"));
    assert!(!input::is_chord("Enter"));
}

#[test]
fn log_kinds_parse_and_reject_unknown_ones() {
    assert_eq!(
        logs::parse_kinds("error, console,error").ok(),
        Some(vec!["error", "console"])
    );
    let error = logs::parse_kinds("console,warnings").err();
    assert_eq!(
        error.map(|error| error.message),
        Some("logs: unknown kind \"warnings\"".to_owned())
    );
}

#[test]
fn trace_and_state_name_patterns() {
    assert!((trace::TRACE_NAME.matches)("trace-1.v2"));
    assert!(!(trace::TRACE_NAME.matches)(".hidden"));
    assert!(!(trace::TRACE_NAME.matches)("a/b"));
    assert!(!(trace::TRACE_NAME.matches)(&"a".repeat(65)));
    assert!((state::STATE_NAME.matches)("admin_login-2"));
    assert!(!(state::STATE_NAME.matches)("a.b"));
    assert!(!(state::STATE_NAME.matches)(""));
}

#[test]
fn status_before_launch_has_null_browser_fields() {
    let session = ToolSession::new(Config::default());
    let status = status::status_json(&session);
    assert_eq!(status["ready"], json!(false));
    assert_eq!(status["browser"], Value::Null);
    assert_eq!(status["browserPid"], Value::Null);
    assert_eq!(status["mode"], json!("launch"));
    assert_eq!(status["serverPid"], json!(std::process::id()));
    assert_eq!(status["headless"], json!(true));
}

/// A root the client declares lets uploads read there too, and only there.
#[test]
fn uploads_read_under_the_clients_roots() {
    let root = tempfile::tempdir().expect("temp dir");
    let inside = root.path().join("a.txt");
    std::fs::write(&inside, "a").expect("write");
    let files = vec![inside.display().to_string()];
    assert!(
        input::upload_paths(&files, false, &std::env::current_dir().expect("cwd"), &[]).is_err()
    );
    let roots = vec![root.path().to_path_buf()];
    let resolved = input::upload_paths(
        &files,
        false,
        &std::env::current_dir().expect("cwd"),
        &roots,
    )
    .expect("under a root");
    assert_eq!(resolved.len(), 1);
    let beside = vec![format!("{}/../etc/hostname", root.path().display())];
    assert!(input::upload_paths(
        &beside,
        false,
        &std::env::current_dir().expect("cwd"),
        &roots
    )
    .is_err());
}

/// The upload rule, against the test's working directory (the crate's `mcp/command/`).
#[test]
fn uploads_read_only_under_the_working_directory_unless_unrestricted() {
    let paths = |files: &[&str], unrestricted: bool| {
        let files: Vec<String> = files.iter().map(|f| (*f).to_owned()).collect();
        input::upload_paths(
            &files,
            unrestricted,
            &std::env::current_dir().expect("cwd"),
            &[],
        )
    };
    let message = |files: &[&str]| match paths(files, false) {
        Ok(resolved) => panic!("{files:?} was allowed: {resolved:?}"),
        Err(error) => error.message,
    };
    let resolved = paths(&["Cargo.toml", "src/../Cargo.toml"], false).expect("inside");
    assert!(resolved
        .iter()
        .all(|path| path.is_absolute() && path.ends_with("mcp/command/Cargo.toml")));
    let outside = message(&["Cargo.toml", "/etc/hostname"]);
    assert_eq!(
        outside,
        "upload: files[1] is outside the server's working directory and the client's roots, the only places uploads may read from (--allow-unrestricted-file-access lifts this)"
    );
    // Existing or not, through `..` or not: the same answer.
    for files in [
        &["Cargo.toml", "/definitely/not/here"][..],
        &["Cargo.toml", "../Cargo.toml"],
        &["Cargo.toml", "nope/../../Cargo.toml"],
        &["Cargo.toml", "/proc/self/environ"],
    ] {
        assert_eq!(message(files), outside, "{files:?}");
    }
    assert_eq!(
        message(&["missing.txt"]),
        "upload: files[0] does not exist or is not a regular file"
    );
    assert!(paths(&["/etc/hostname", "../Cargo.toml"], true).is_ok());
    assert_eq!(
        paths(&["/definitely/not/here"], true).map_err(|e| e.message),
        Err("upload: files[0] does not exist or is not a regular file".to_owned())
    );
}

/// Every value a tool's schema advertises for an enum argument decodes into the tool's typed
/// arguments: the Rust enums and the schema `enum`s come from one `arg_enum!` list each, and
/// this walks them all through the same path a call takes.
#[test]
fn every_advertised_enum_value_decodes_into_its_args_struct() {
    let mut checked = 0;
    for decl in TOOLS.iter().chain(AUDIT_TOOLS) {
        for arg in decl.args {
            let schema::Kind::Enum { values, .. } = arg.kind else {
                continue;
            };
            for value in values {
                let mut arguments = minimal_arguments(decl);
                arguments[arg.name] = json!(value);
                let valid = validate(decl, Some(&arguments), &DEFAULTS);
                let Ok(valid) = valid else {
                    panic!("{} {}={value}: {valid:?}", decl.name, arg.name);
                };
                let call = ToolCall::from_validated(decl, valid);
                assert!(call.is_ok(), "{} {}={value}: {call:?}", decl.name, arg.name);
                checked += 1;
            }
        }
    }
    assert!(checked > 60, "only {checked} enum values checked");
}

/// The schema of an enum argument is its Rust enum's list, in the same order.
#[test]
fn enum_arguments_advertise_their_rust_enums_values() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("browser_element", "action", input::ElementAction::VALUES),
        ("browser_key", "action", input::KeyAction::VALUES),
        ("browser_mouse", "action", input::MouseAction::VALUES),
        ("browser_mouse", "button", input::Button::VALUES),
        ("browser_dialog", "action", input::DialogAction::VALUES),
        ("browser_wait", "state", read::WaitState::VALUES),
        ("browser_read", "field", read::ReadField::VALUES),
        ("browser_read", "what", read::ReadIs::VALUES),
        ("browser_expect", "what", read::ExpectWhat::VALUES),
        ("browser_page", "action", tabs::TabAction::VALUES),
        ("browser_mock", "action", mock::MockAction::VALUES),
        ("browser_state", "action", state::StateAction::VALUES),
        ("browser_trace", "action", trace::TraceAction::VALUES),
        ("browser_logs", "action", logs::LogsAction::VALUES),
        ("browser_logs", "level", logs::LogsLevel::VALUES),
        ("browser_batch", "observe", batch::BatchObserve::VALUES),
        ("browser_a11y", "min_impact", snapshot::MinImpact::VALUES),
        ("qa_audit_url", "wait_until", qa::AuditWaitUntil::VALUES),
        ("qa_get_runtime_errors", "source", qa::ErrorsSource::VALUES),
        (
            "qa_get_runtime_errors",
            "min_severity",
            qa::MinSeverity::VALUES,
        ),
    ];
    for (tool, argument, values) in cases {
        let decl = every_tool()
            .find(tool)
            .unwrap_or_else(|| panic!("no tool {tool}"));
        let listed =
            tool_json(decl, &DEFAULTS)["inputSchema"]["properties"][argument]["enum"].clone();
        assert_eq!(listed, json!(values), "{tool} {argument}");
    }
    assert_eq!(input::ElementAction::Dblclick.as_str(), "dblclick");
    assert_eq!(
        serde_json::to_value(read::ExpectWhat::NoErrors).ok(),
        Some(json!("no-errors"))
    );
    let unknown: serde_json::Result<input::Button> = serde_json::from_value(json!("centre"));
    assert!(
        unknown.is_err(),
        "an unknown value must not decode to a default"
    );
}

#[test]
fn a_tool_without_cross_argument_rules_checks_nothing() {
    let session = ToolSession::new(Config::default());
    for decl in [&input::CLICK, &read::FIND, &status::STATUS] {
        let valid = validate(decl, Some(&minimal_arguments(decl)), &DEFAULTS);
        let Ok(valid) = valid else {
            panic!("{}: {valid:?}", decl.name);
        };
        let call = ToolCall::from_validated(decl, valid);
        let Ok(call) = call else {
            panic!("{}: {call:?}", decl.name);
        };
        assert!(call.check(&session).is_ok(), "{}", decl.name);
    }
}

#[test]
fn a_located_selector_echoes_as_the_caller_wrote_it_and_a_bare_ref_as_ref() {
    let parsed = |text: &str| chromate::Selector::parse(text).expect("a valid selector");
    assert_eq!(echo_of(&parsed("#save")), "#save");
    assert_eq!(
        echo_of(&parsed("role=button[name=Save]")),
        "role=button[name=Save]"
    );
    assert_eq!(echo_of(&parsed("e7")), "ref=e7");
    // An issued bare ref is located as the `ref=` selector it stands for.
    let e7 = chromate::snapshot::ElementRef::new(7).expect("a ref");
    assert_eq!(echo_of(&chromate::Selector::from_element_ref(e7)), "ref=e7");
    for text in ["#save", "ref=e7", "text=Sign in"] {
        assert_eq!(echo_of(&parsed(text)), text, "{text}");
    }
}

/// `tool_args!` declares each argument beside its field: the field names are the schema's
/// argument names, in the schema's order, for every tool.
#[test]
fn every_args_struct_field_is_named_as_its_declared_argument() {
    assert_eq!(FIELDS.len(), TOOLS.len() + AUDIT_TOOLS.len());
    for (name, fields) in FIELDS {
        let decl = every_tool()
            .find(name)
            .unwrap_or_else(|| panic!("no tool {name}"));
        let args: Vec<&str> = decl.args.iter().map(|arg| arg.name).collect();
        assert_eq!(args, *fields, "{name}");
    }
}

#[test]
fn the_audit_viewport_is_a_width_and_height_object() {
    let decl = &qa::AUDIT_URL;
    let schema = schema::input_schema(decl, &DEFAULTS, &[]);
    let viewport = &schema["properties"]["viewport"];
    assert_eq!(viewport["type"], json!("object"));
    assert_eq!(viewport["required"], json!(["width", "height"]));
    assert_eq!(viewport["additionalProperties"], json!(false));
    assert_eq!(viewport["properties"]["width"]["maximum"], json!(9999));

    let call = |viewport: Value| {
        validate(
            decl,
            Some(&json!({ "url": "http://127.0.0.1:1/", "viewport": viewport })),
            &DEFAULTS,
        )
    };
    let valid = call(json!({ "width": 390, "height": 844.0 })).expect("an object");
    assert_eq!(valid["viewport"], json!({ "width": 390, "height": 844 }));
    let message = |viewport: Value| match call(viewport) {
        Ok(valid) => panic!("accepted: {valid:?}"),
        Err(error) => (error.argument, error.message),
    };
    assert_eq!(
        message(json!("390x844")).0,
        "viewport",
        "the MCP form is the object; WxH is the command line's spelling"
    );
    assert_eq!(message(json!({ "width": 390 })).0, "viewport.height");
    assert_eq!(
        message(json!({ "width": 0, "height": 10 })).0,
        "viewport.width"
    );
    assert_eq!(
        message(json!({ "width": 10, "height": 10000 })).0,
        "viewport.height"
    );
    assert_eq!(
        message(json!({ "width": 1.5, "height": 10 })).0,
        "viewport.width"
    );
    let (argument, text) = message(json!({ "width": 1, "height": 1, "depth": 3 }));
    assert_eq!(argument, "viewport.depth");
    assert!(text.contains("unknown argument"), "{text}");

    assert_eq!(schema::parse_size("1280x800"), Some((1280, 800)));
    assert_eq!(schema::parse_size("390X844"), Some((390, 844)));
    for bad in [
        "",
        "x",
        "1280",
        "1280x",
        "x800",
        "12 80x800",
        "-1x2",
        "1x2x3",
        "+1x2",
    ] {
        assert_eq!(schema::parse_size(bad), None, "{bad:?}");
    }
}

/// The registry of every tool this crate declares, the audit capability's included.
fn every_tool() -> Registry {
    Registry::new(
        &[],
        Caps {
            audit: true,
            flows: false,
            webmcp: true,
            vision: true,
        },
    )
}
