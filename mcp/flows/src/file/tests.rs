//! Unit tests of the flow file: the issue's shape, and each kind of mistake named by file,
//! line and key before anything runs.

use std::path::Path;

use expect_test::{expect, Expect};

use super::*;

const LOGIN: &str = r##"
[[flow]]
name = "login"                              # ^[A-Za-z0-9._-]+$
base_url = "http://127.0.0.1:8080"          # optional; relative URLs resolve against it
viewport = { width = 1280, height = 720 }   # optional, per flow
video = false                               # optional
[[flow.step]]
tool = "browser_navigate"                   # an ordinary tool, with its ordinary arguments as keys
url = "/login.html"
[[flow.step]]
tool = "browser_fill"
selector = "label=Username"
value = "ann"
[[flow.step]]
capture = "after-fill"                      # a capture step: its name, then capture options
selector = "#login-form"
mask = ["#clock"]
"##;

fn parsed(text: &str) -> FlowFile {
    match parse(Path::new("chromate.toml"), text, &Config::default()) {
        Ok(file) => file,
        Err(err) => panic!("{err}"),
    }
}

fn check_error(text: &str, expect: Expect) {
    match parse(Path::new("chromate.toml"), text, &Config::default()) {
        Ok(file) => panic!("accepted: {file:?}"),
        Err(err) => expect.assert_eq(&format!("{err} [key {:?}]", err.key)),
    }
}

#[test]
fn the_issue_example_parses_with_defaults_filled_and_urls_resolved() {
    let file = parsed(LOGIN);
    let flow = file.flow("login").expect("login");
    assert_eq!(flow.viewport, Some((1280, 720)));
    assert_eq!(flow.base_url.as_deref(), Some("http://127.0.0.1:8080"));
    assert!(!flow.video);
    assert_eq!(flow.line, 2);
    let labels: Vec<String> = flow.steps.iter().map(Step::label).collect();
    assert_eq!(
        labels,
        ["browser_navigate", "browser_fill", "capture after-fill"]
    );
    let lines: Vec<usize> = flow.steps.iter().map(|step| step.line).collect();
    assert_eq!(lines, [7, 10, 14]);
    let StepKind::Tool { arguments, .. } = &flow.steps[0].kind else {
        panic!("a tool step");
    };
    assert_eq!(
        Value::Object(arguments.clone()),
        json!({ "url": "http://127.0.0.1:8080/login.html", "timeout_ms": 30000 })
    );
    let StepKind::Capture(capture) = &flow.steps[2].kind else {
        panic!("a capture step");
    };
    assert_eq!(capture.name, "after-fill");
    assert_eq!(capture.mask, ["#clock"]);
    assert_eq!(
        capture.url, None,
        "a capture without url takes the current page"
    );
    assert_eq!(capture.wait_until, crate::capture::CaptureWaitUntil::Load);
}

#[test]
fn unknown_keys_and_bad_values_name_the_file_line_and_key() {
    check_error(
        &LOGIN.replace("value = \"ann\"", "valeu = \"ann\""),
        expect![[
            r#"chromate.toml:13: flow "login" step 2 (browser_fill): unknown argument "valeu" [key Some("valeu")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("mask = [\"#clock\"]", "mask = \"#clock\""),
        expect![[
            r#"chromate.toml:17: flow "login" step 3 (capture "after-fill"): argument "mask" must be array, got string [key Some("mask")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("video = false", "video = \"no\""),
        expect![[
            r#"chromate.toml:6: flow "login": "video" must be true or false [key Some("video")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("video = false", "colour = \"red\""),
        expect![[
            r#"chromate.toml:6: unknown key "colour" in [[flow]] (allowed: name, base_url, viewport, video, vision_describe, retries, step) [key Some("colour")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("browser_fill", "browser_fil"),
        expect![[
            r#"chromate.toml:11: flow "login" step 2: unknown tool "browser_fil" (tools: browser_navigate, browser_click, browser_fill, browser_type, browser_element, browser_press, browser_key, browser_mouse, browser_hover, browser_upload, browser_dialog, browser_find, browser_exists, browser_wait, browser_read, browser_expect, browser_snapshot, browser_locators, browser_a11y, browser_page, browser_logs, browser_mock, browser_state, browser_trace, browser_screenshot, browser_status, browser_batch, browser_advanced_eval) [key Some("tool")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("selector = \"label=Username\"\n", ""),
        expect![[
            r#"chromate.toml:10: flow "login" step 2 (browser_fill): missing required argument "selector" [key Some("selector")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("width = 1280", "width = 0"),
        expect![[
            r#"chromate.toml:5: flow "login": "viewport" must be { width = W, height = H } in CSS px, 1 to 16384 [key Some("viewport")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("name = \"login\"", "name = \"../up\""),
        expect![[
            r#"chromate.toml:3: "name" must be a string matching ^[A-Za-z0-9._-]+$ (not . or .., at most 128 characters) [key Some("name")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("capture = \"after-fill\"", "capture = \"a/b\""),
        expect![[
            r#"chromate.toml:15: flow "login" step 3 (capture "a/b"): "capture" must match ^[A-Za-z0-9._-]+$ [key Some("capture")]"#
        ]],
    );
    check_error(
        &LOGIN.replace("mask = [\"#clock\"]", "output_dir = \"/tmp\""),
        expect![[
            r#"chromate.toml:17: flow "login" step 3 (capture "after-fill"): "output_dir" is not a capture step key: a flow's captures go to its directory in the run's --output-dir [key Some("output_dir")]"#
        ]],
    );
    check_error(
        "[[flow]]\nname = \"x\"\n[[flow.step]]\ntool = \"browser_navigate\"\nurl = \"ftp://host/\"\n",
        expect![[r#"chromate.toml:5: flow "x" step 1 (browser_navigate): "ftp://host/" is not an absolute http, https, file or data URL, or about:blank [key Some("url")]"#]],
    );
    check_error(
        "[[flow]]\nname = \"x\"\n[[flow.step]]\nurl = \"/a\"\n",
        expect![[
            r#"chromate.toml:3: flow "x" step 1: a step needs tool = "<tool name>" or capture = "<name>" [key None]"#
        ]],
    );
    check_error(
        "[[flow]]\nname = \"x\"\n[[flow.step]]\ncapture = \"a\"\n[[flow.step]]\ncapture = \"a\"\n",
        expect![[r#"chromate.toml:5: flow "x": a second capture named "a" [key Some("capture")]"#]],
    );
    check_error(
        "title = \"mine\"\n",
        expect![[
            r#"chromate.toml:1: unknown key "title": a flow file holds [[flow]] tables only [key Some("title")]"#
        ]],
    );
    check_error(
        "[[flow]]\nname = \"x\"\nstep = [\n",
        expect![[r#"chromate.toml:3: not valid TOML: unclosed array, expected `]` [key None]"#]],
    );
}

#[test]
fn relative_urls_join_the_base_like_a_browser() {
    let base = "http://127.0.0.1:8080/app/index.html?x=1";
    assert_eq!(
        join_url(base, "/login.html").as_deref(),
        Some("http://127.0.0.1:8080/login.html")
    );
    assert_eq!(
        join_url(base, "next.html").as_deref(),
        Some("http://127.0.0.1:8080/app/next.html")
    );
    assert_eq!(
        join_url("http://127.0.0.1:8080", "next.html").as_deref(),
        Some("http://127.0.0.1:8080/next.html")
    );
    assert_eq!(join_url(base, "https://other/").as_deref(), None);
    assert_eq!(join_url(base, "about:blank").as_deref(), None);
}

#[test]
fn the_file_is_the_flag_then_the_environment_then_the_default() {
    let none = |_: &str| None;
    let set = |name: &str| (name == "CHROMATE_FLOWS").then(|| "ci/flows.toml".to_owned());
    assert_eq!(locate(Some("a.toml"), &set), PathBuf::from("a.toml"));
    assert_eq!(locate(None, &set), PathBuf::from("ci/flows.toml"));
    assert_eq!(locate(None, &none), PathBuf::from("chromate.toml"));
}

/// The environment of the interpolation tests: `HOST`, `USER_NAME`, and `EMPTY` set to "".
fn env(name: &str) -> Option<String> {
    match name {
        "HOST" => Some("http://127.0.0.1:9090".to_owned()),
        "USER_NAME" => Some("bea".to_owned()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

fn parsed_with(text: &str, base_url: Option<&str>) -> Result<FlowFile, FileError> {
    let inputs = Inputs {
        env: &env,
        base_url,
    };
    parse_with(Path::new("ci.toml"), text, &Config::default(), inputs)
}

fn arguments_of(step: &Step) -> Value {
    match &step.kind {
        StepKind::Tool { arguments, .. } => Value::Object(arguments.clone()),
        StepKind::Capture(args) => json!({
            "name": args.name,
            "url": args.url,
            "mask": args.mask,
        }),
    }
}

const ENVIRONMENT_FLOW: &str = r##"
[[flow]]
name = "login"
base_url = "${HOST}/app/"
[[flow.step]]
tool = "browser_navigate"
url = "login.html"
[[flow.step]]
tool = "browser_fill"
selector = "label=Username"
value = "${USER_NAME} and ${PASSWORD:-s3cret} and ${EMPTY:-fallback}${EMPTY}"
[[flow.step]]
tool = "browser_advanced_eval"
js = "`$${document.title}` + '$' + '$$x'"
[[flow.step]]
capture = "done"
url = "${HOST}/done.html"
mask = ["#${USER_NAME}", "${MASK:-.ad}"]
"##;

#[test]
fn variables_fill_the_base_url_and_every_step_argument_string() {
    let file = parsed_with(ENVIRONMENT_FLOW, None).expect("parses");
    let flow = file.flow("login").expect("login");
    assert_eq!(flow.base_url.as_deref(), Some("http://127.0.0.1:9090/app/"));
    assert_eq!(
        arguments_of(&flow.steps[0])["url"],
        json!("http://127.0.0.1:9090/app/login.html"),
        "the base URL is interpolated before relative URLs resolve against it"
    );
    assert_eq!(
        arguments_of(&flow.steps[1])["value"],
        json!("bea and s3cret and fallback"),
        "a default replaces an unset or empty variable; an empty one without a default is empty"
    );
    assert_eq!(
        arguments_of(&flow.steps[2])["js"],
        json!("`${document.title}` + '$' + '$$x'"),
        "$${{ is a literal ${{, any other $ is itself"
    );
    assert_eq!(
        arguments_of(&flow.steps[3]),
        json!({
            "name": "done",
            "url": "http://127.0.0.1:9090/done.html",
            "mask": ["#bea", ".ad"],
        }),
        "the capture's options are interpolated"
    );
}

#[test]
fn an_unset_variable_or_a_broken_reference_names_the_file_line_key_and_variable() {
    let error = |text: &str| match parsed_with(text, None) {
        Ok(file) => panic!("accepted: {file:?}"),
        Err(err) => format!("{err} [key {:?}]", err.key),
    };
    expect![[r#"ci.toml:11: flow "login" step 2 (browser_fill): "value": environment variable NOPE is not set (set it, or give a default: ${NOPE:-VALUE}) [key Some("value")]"#]]
    .assert_eq(&error(&ENVIRONMENT_FLOW.replace("${USER_NAME} and", "${NOPE} and")));
    expect![[r#"ci.toml:4: flow "login": "base_url": environment variable STAGING is not set (set it, or give a default: ${STAGING:-VALUE}) [key Some("base_url")]"#]]
    .assert_eq(&error(&ENVIRONMENT_FLOW.replace("${HOST}/app/", "${STAGING}")));
    expect![[r#"ci.toml:18: flow "login" step 4 (capture "done"): "mask": environment variable MISSING is not set (set it, or give a default: ${MISSING:-VALUE}) [key Some("mask")]"#]]
    .assert_eq(&error(&ENVIRONMENT_FLOW.replace("${MASK:-.ad}", "${MISSING}")));
    expect![[r#"ci.toml:11: flow "login" step 2 (browser_fill): "value": "${1X}" is not ${NAME} or ${NAME:-default} (NAME is letters, digits and _; write $${ for a literal ${) [key Some("value")]"#]]
    .assert_eq(&error(&ENVIRONMENT_FLOW.replace("${USER_NAME} and", "${1X} and")));
    expect![[r#"ci.toml:11: flow "login" step 2 (browser_fill): "value": "${" without its closing "}" (write $${ for a literal ${) [key Some("value")]"#]]
    .assert_eq(&error(&ENVIRONMENT_FLOW.replace("${EMPTY}\"", "${EMPTY\"")));
    expect![[r#"ci.toml:16: flow "login" step 4 (capture "${USER_NAME}"): "capture" must match ^[A-Za-z0-9._-]+$ [key Some("capture")]"#]]
    .assert_eq(&error(&ENVIRONMENT_FLOW.replace("capture = \"done\"", "capture = \"${USER_NAME}\"")));
    expect![[r#"ci.toml:4: flow "login": "base_url" must be an absolute http, https or file URL [key Some("base_url")]"#]]
    .assert_eq(&error(&ENVIRONMENT_FLOW.replace("${HOST}/app/", "${EMPTY:-}")));
}

#[test]
fn a_base_url_given_for_the_run_replaces_every_flows_and_is_checked() {
    let file = parsed_with(
        &ENVIRONMENT_FLOW.replace("${HOST}/app/", "${UNSET_BUT_REPLACED}"),
        Some("https://staging.example/"),
    )
    .expect("the file's base_url is not read when one is given");
    let flow = file.flow("login").expect("login");
    assert_eq!(flow.base_url.as_deref(), Some("https://staging.example/"));
    assert_eq!(
        arguments_of(&flow.steps[0])["url"],
        json!("https://staging.example/login.html")
    );
    let without = parsed_with(
        "[[flow]]\nname = \"x\"\n[[flow.step]]\ntool = \"browser_navigate\"\nurl = \"/a\"\n",
        Some("http://127.0.0.1:1/"),
    )
    .expect("a flow without base_url gets it too");
    assert_eq!(
        arguments_of(&without.flows[0].steps[0])["url"],
        json!("http://127.0.0.1:1/a")
    );
    let err = parsed_with(ENVIRONMENT_FLOW, Some("staging.example")).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "ci.toml: the base URL \"staging.example\" given for every flow is not an absolute http, https or file URL"
    );
}

#[test]
fn interpolate_leaves_text_without_references_alone() {
    for text in ["", "plain", "$", "a $ b", "$$", "$x", "}{", "price: $5"] {
        assert_eq!(interpolate(text, &env).as_deref(), Ok(text), "{text:?}");
    }
    assert_eq!(
        interpolate("${HOST}${HOST}", &env).as_deref(),
        Ok("http://127.0.0.1:9090http://127.0.0.1:9090")
    );
    assert_eq!(
        interpolate("${X:-a:-b}", &env).as_deref(),
        Ok("a:-b"),
        "the default runs to the first }}"
    );
    let recursive = |name: &str| (name == "A").then(|| "${B}".to_owned());
    assert_eq!(
        interpolate("${A}", &recursive).as_deref(),
        Ok("${B}"),
        "a value is not scanned again"
    );
}

const CAPTURE_HEAD: &str = r#"
[[flow]]
name = "shot"
[[flow.step]]
tool = "browser_navigate"
url = "http://127.0.0.1:1/"
[[flow.step]]
capture = "card"
"#;

#[test]
fn a_capture_steps_tolerance_is_read_and_checked() {
    let file = parsed(&format!(
        "{CAPTURE_HEAD}threshold = 0.2\nmax_diff_pixels = 40\n"
    ));
    let step = &file.flows[0].steps[1];
    assert_eq!(step.tolerance.threshold, Some(0.2));
    assert_eq!(step.tolerance.max_diff_pixels, Some(40));
    let file = parsed(&format!("{CAPTURE_HEAD}threshold = 0\n"));
    assert_eq!(file.flows[0].steps[1].tolerance.threshold, Some(0.0));
    let file = parsed(CAPTURE_HEAD);
    assert_eq!(file.flows[0].steps[1].tolerance, Tolerance::default());

    check_error(
        &format!("{CAPTURE_HEAD}threshold = 1.5\n"),
        expect![[
            r#"chromate.toml:9: flow "shot" step 2 (capture "card"): "threshold" must be a number from 0 to 1 (the colour distance at which a pixel counts as different; default 0.1) [key Some("threshold")]"#
        ]],
    );
    check_error(
        &format!("{CAPTURE_HEAD}threshold = \"0.1\"\n"),
        expect![[
            r#"chromate.toml:9: flow "shot" step 2 (capture "card"): "threshold" must be a number from 0 to 1 (the colour distance at which a pixel counts as different; default 0.1) [key Some("threshold")]"#
        ]],
    );
    check_error(
        &format!("{CAPTURE_HEAD}max_diff_pixels = -1\n"),
        expect![[
            r#"chromate.toml:9: flow "shot" step 2 (capture "card"): "max_diff_pixels" must be a whole number of pixels, 0 or more [key Some("max_diff_pixels")]"#
        ]],
    );
    check_error(
        &format!("{CAPTURE_HEAD}max_diff_pixels = 2.5\n"),
        expect![[
            r#"chromate.toml:9: flow "shot" step 2 (capture "card"): "max_diff_pixels" must be a whole number of pixels, 0 or more [key Some("max_diff_pixels")]"#
        ]],
    );
    check_error(
        &format!("{CAPTURE_HEAD}format = \"pdf\"\nmax_diff_pixels = 3\n"),
        expect![[
            r#"chromate.toml:10: flow "shot" step 2 (capture "card"): "max_diff_pixels" applies to PNG captures (compared with a baseline); this one is a PDF [key Some("max_diff_pixels")]"#
        ]],
    );
    check_error(
        "[[flow]]\nname = \"t\"\n[[flow.step]]\ntool = \"browser_navigate\"\nurl = \"http://127.0.0.1:1/\"\nthreshold = 0.2\n",
        expect![[r#"chromate.toml:6: flow "t" step 1 (browser_navigate): unknown argument "threshold" [key Some("threshold")]"#]],
    );
}

#[test]
fn a_capture_steps_wait_for_is_a_checked_browser_wait_within_the_captures_timeout() {
    let file = parsed(&format!(
        "{CAPTURE_HEAD}wait_for = \"#late\"\ntimeout_ms = 7000\n"
    ));
    let (decl, wait) = file.flows[0].steps[1].wait_for.as_ref().expect("wait_for");
    assert_eq!(decl.name, "browser_wait");
    assert_eq!(wait.get("selector"), Some(&json!("#late")));
    assert_eq!(wait.get("state"), Some(&json!("visible")));
    assert_eq!(wait.get("timeout_ms"), Some(&json!(7000)));
    assert!(parsed(CAPTURE_HEAD).flows[0].steps[1].wait_for.is_none());

    check_error(
        &format!("{CAPTURE_HEAD}wait_for = 3\n"),
        expect![[
            r#"chromate.toml:9: flow "shot" step 2 (capture "card"): "wait_for": must be a selector, a non-empty string (the element to wait for) [key Some("wait_for")]"#
        ]],
    );
    check_error(
        &format!("{CAPTURE_HEAD}wait_for = \"\"\n"),
        expect![[
            r#"chromate.toml:9: flow "shot" step 2 (capture "card"): "wait_for": must be a selector, a non-empty string (the element to wait for) [key Some("wait_for")]"#
        ]],
    );
    check_error(
        &format!("{CAPTURE_HEAD}wait_for = \"role=\"\n"),
        expect![[
            r#"chromate.toml:9: flow "shot" step 2 (capture "card"): "wait_for": not a selector: invalid selector "role=": role= needs <role> or <role>[name=<name>], got "" [key Some("wait_for")]"#
        ]],
    );
}

#[test]
fn retries_of_a_flow_are_its_steps_default_and_a_step_may_give_its_own() {
    let file = parsed(
        "[[flow]]\nname = \"r\"\nretries = 2\n[[flow.step]]\ntool = \"browser_navigate\"\nurl = \"http://127.0.0.1:1/\"\nretries = 0\n[[flow.step]]\ncapture = \"c\"\nretries = 3\n[[flow.step]]\ncapture = \"d\"\n",
    );
    let flow = &file.flows[0];
    assert_eq!(flow.retries, 2);
    let own: Vec<Option<u32>> = flow.steps.iter().map(|step| step.retries).collect();
    assert_eq!(own, [Some(0), Some(3), None]);
    assert_eq!(parsed(CAPTURE_HEAD).flows[0].retries, 0);

    check_error(
        "[[flow]]\nname = \"r\"\nretries = -1\n[[flow.step]]\ncapture = \"c\"\n",
        expect![[
            r#"chromate.toml:3: flow "r": "retries" must be a whole number from 0 to 10 (how many times a failed step is tried again) [key Some("retries")]"#
        ]],
    );
    check_error(
        "[[flow]]\nname = \"r\"\nretries = 11\n[[flow.step]]\ncapture = \"c\"\n",
        expect![[
            r#"chromate.toml:3: flow "r": "retries" must be a whole number from 0 to 10 (how many times a failed step is tried again) [key Some("retries")]"#
        ]],
    );
    check_error(
        &format!("{CAPTURE_HEAD}retries = \"1\"\n"),
        expect![[
            r#"chromate.toml:9: flow "shot" step 2 (capture "card"): "retries" must be a whole number from 0 to 10 (how many times a failed step is tried again) [key Some("retries")]"#
        ]],
    );
    check_error(
        "[[flow]]\nname = \"r\"\n[[flow.step]]\ntool = \"browser_navigate\"\nurl = \"http://127.0.0.1:1/\"\nretries = 1.5\n",
        expect![[r#"chromate.toml:6: flow "r" step 1 (browser_navigate): "retries" must be a whole number from 0 to 10 (how many times a failed step is tried again) [key Some("retries")]"#]],
    );
}
