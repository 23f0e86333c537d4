//! The model-backed tools end to end, against the test model provider on 127.0.0.1
//! (`tests/support/provider.rs`): `chromate describe` and MCP `describe_screenshot` send the
//! image and parse the metadata; the file rules (magic bytes, allowed directories) refuse
//! before any request; a wrong key's error has a hint and never the key; flows with
//! `vision_describe` write the sidecars and index.md, and a failed description fails nothing.

use std::path::Path;

use base64::Engine as _;
use chromate_tests::provider::{ProviderServer, Step};
use serde_json::{json, Value};

use crate::flows::Sandbox;
use crate::util::{chromate_binary, fixtures};

const KEY: &str = "sk-e2e-SECRETKEY-0123456789abcdef";

fn metadata_answer(summary: &str) -> Step {
    Step::say(
        json!({
            "page_type": "login form",
            "summary": summary,
            "visible_text": ["Sign in"],
            "controls": [{ "role": "button", "label": "Sign in" }],
            "issues": [{ "kind": "accessibility", "description": "the password field has no label", "severity": "medium" }],
        })
        .to_string(),
    )
}

/// The environment that points chromate at `server` as `provider`, with the test key.
fn provider_env(server: &ProviderServer, provider: &str) -> Vec<(String, String)> {
    model_env(server, provider, "test-vision", KEY)
}

/// The environment that points chromate at `server` as `provider` with `model`, and `key` as
/// both providers' key.
pub(crate) fn model_env(
    server: &ProviderServer,
    provider: &str,
    model: &str,
    key: &str,
) -> Vec<(String, String)> {
    vec![
        ("CHROMATE_LLM_PROVIDER".into(), provider.into()),
        ("CHROMATE_LLM_MODEL".into(), model.into()),
        ("CHROMATE_LLM_BASE_URL".into(), server.base_url(provider)),
        ("CHROMATE_LLM_TIMEOUT_MS".into(), "10000".into()),
        ("ANTHROPIC_API_KEY".into(), key.into()),
        ("OPENAI_API_KEY".into(), key.into()),
    ]
}

fn borrowed(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect()
}

/// A small real PNG.
fn write_png(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, 4, 4);
        encoder.set_color(png::ColorType::Rgb);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[200u8; 4 * 4 * 3]).unwrap();
    }
    std::fs::write(path, &bytes).unwrap();
    bytes
}

/// The base64 image a recorded request carried, in any of the three formats.
fn sent_image(body: &Value) -> Option<String> {
    let user = body["messages"]
        .as_array()?
        .iter()
        .find(|message| message["role"] == "user")?;
    if let Some(images) = user["images"].as_array() {
        return images.first()?.as_str().map(str::to_owned);
    }
    for part in user["content"].as_array()? {
        if let Some(data) = part["source"]["data"].as_str() {
            return Some(data.to_owned());
        }
        if let Some(url) = part["image_url"]["url"].as_str() {
            return url.split_once("base64,").map(|(_, data)| data.to_owned());
        }
    }
    None
}

#[test]
fn describe_sends_the_image_to_each_provider_and_prints_the_metadata() {
    for provider in ["anthropic", "openai", "ollama"] {
        let sandbox = Sandbox::new();
        let bytes = write_png(&sandbox.path().join("shot.png"));
        let server = ProviderServer::start(vec![metadata_answer("A sign-in page.")]).unwrap();
        let env = provider_env(&server, provider);
        let ran = sandbox.run_with(&["describe", "shot.png", "--json"], &borrowed(&env));
        ran.assert_ok();
        let result = ran.json();
        assert_eq!(result["provider"], provider);
        assert_eq!(result["model"], "test-vision");
        assert_eq!(result["metadata"]["summary"], "A sign-in page.");
        assert_eq!(result["metadata"]["controls"][0]["role"], "button");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{provider}");
        assert_eq!(
            sent_image(&requests[0].body),
            Some(base64::engine::general_purpose::STANDARD.encode(&bytes)),
            "{provider}: the file's bytes, base64"
        );
        assert!(!ran.stdout.contains("SECRETKEY") && !ran.stderr.contains("SECRETKEY"));
    }
}

#[test]
fn describe_text_prints_the_prose_and_keeps_a_custom_prompt() {
    let sandbox = Sandbox::new();
    write_png(&sandbox.path().join("shot.png"));
    let server = ProviderServer::start(vec![Step::say("A plain sign-in page.")]).unwrap();
    let env = provider_env(&server, "openai");
    let ran = sandbox.run_with(
        &[
            "describe",
            "shot.png",
            "--text",
            "--prompt",
            "Is the button visible?",
        ],
        &borrowed(&env),
    );
    ran.assert_ok();
    assert_eq!(ran.stdout.trim(), "A plain sign-in page.");
    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"][1]["content"][0]["text"],
        "Is the button visible?"
    );
    assert!(
        body.get("response_format").is_none(),
        "prose asks no JSON mode"
    );
}

#[test]
fn describe_refuses_what_is_not_an_image_or_not_in_an_allowed_place_before_any_request() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.path().join("notes.png"), b"GIF89a not really").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let outside_png = outside.path().join("elsewhere.png");
    write_png(&outside_png);
    let server = ProviderServer::start(vec![metadata_answer("never")]).unwrap();
    let env = provider_env(&server, "anthropic");

    let ran = sandbox.run_with(&["describe", "notes.png", "--json"], &borrowed(&env));
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let error = &ran.json()["error"];
    assert_eq!(error["code"], "INVALID_ARGUMENT");
    assert_eq!(error["detail"]["reason"], "not-an-image");

    let outside_arg = outside_png.to_str().unwrap();
    let ran = sandbox.run_with(&["describe", outside_arg, "--json"], &borrowed(&env));
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert_eq!(
        ran.json()["error"]["detail"]["reason"],
        "outside-allowed-directories"
    );
    assert_eq!(server.requests().len(), 0, "nothing was sent");

    let ran = sandbox.run_with(
        &[
            "describe",
            outside_arg,
            "--json",
            "--allow-unrestricted-file-access",
        ],
        &borrowed(&env),
    );
    ran.assert_ok();
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_wrong_key_is_a_provider_error_with_a_hint_and_without_the_key() {
    let sandbox = Sandbox::new();
    write_png(&sandbox.path().join("shot.png"));
    let server = ProviderServer::start(vec![metadata_answer("never")]).unwrap();
    server.require_key("sk-the-right-key");
    let env = provider_env(&server, "openai");
    let ran = sandbox.run_with(&["describe", "shot.png"], &borrowed(&env));
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert!(ran.stderr.contains("LLM_PROVIDER_ERROR"), "{ran:?}");
    assert!(ran.stderr.contains("HTTP 401"), "{ran:?}");
    assert!(
        ran.stderr.contains("OPENAI_API_KEY"),
        "the hint names the variable: {ran:?}"
    );
    assert!(
        ran.stderr.contains("Incorrect API key provided"),
        "the provider's message: {ran:?}"
    );
    assert!(
        !ran.stderr.contains("SECRETKEY") && !ran.stdout.contains("SECRETKEY"),
        "{ran:?}"
    );
    assert_eq!(server.requests().len(), 1, "a 401 is not retried");

    let ran = sandbox.run_with(&["describe", "shot.png", "--json"], &borrowed(&env));
    assert_eq!(ran.json()["error"]["detail"]["status"], 401);
    assert!(!ran.stdout.contains("SECRETKEY"));
}

#[test]
fn describe_screenshot_over_mcp_describes_a_screenshot_the_session_took() {
    let server = fixtures();
    let provider = ProviderServer::start(vec![metadata_answer("The login fixture.")]).unwrap();
    let env = provider_env(&provider, "anthropic");
    let mut client = chromate_tests::McpCommand::new(chromate_binary())
        .args(&["--caps", "vision"])
        .envs(&borrowed(&env))
        .keep_env("CHROMATE_BROWSER")
        .deadline(std::time::Duration::from_secs(60))
        .spawn();
    let listed = client.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(names.contains(&"describe_screenshot"), "{names:?}");
    client.ok(
        "browser_navigate",
        json!({ "url": server.url("login.html") }),
    );
    let (shot, _) = client.ok("browser_screenshot", json!({}));
    let path = shot["path"].as_str().expect("a screenshot path").to_owned();
    let (described, _) = client.ok("describe_screenshot", json!({ "screenshot_path": path }));
    assert_eq!(described["metadata"]["summary"], "The login fixture.");
    assert_eq!(described["provider"], "anthropic");
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        sent_image(&requests[0].body),
        Some(base64::engine::general_purpose::STANDARD.encode(bytes))
    );

    // A path the page could have planted outside the allowed places is refused.
    let error = client.err(
        "describe_screenshot",
        json!({ "screenshot_path": "/etc/passwd" }),
    );
    assert_eq!(error["code"], "INVALID_ARGUMENT", "{error}");
    assert_eq!(provider.requests().len(), 1);
    let pid = client.pid();
    client.close_stdin();
    assert!(client
        .wait_exit(std::time::Duration::from_secs(10))
        .success());
    assert!(chromate_tests::procs::wait_until_gone_blocking(
        &chromate_tests::procs::descendants(pid),
        std::time::Instant::now() + std::time::Duration::from_secs(10)
    )
    .is_ok());
}

#[test]
fn describe_screenshot_is_offered_only_with_caps_vision() {
    let mut client = chromate_tests::McpCommand::new(chromate_binary())
        .deadline(std::time::Duration::from_secs(30))
        .spawn();
    let listed = client.request("tools/list", json!({}));
    assert!(!listed.to_string().contains("describe_screenshot"));
    client.close_stdin();
    assert!(client
        .wait_exit(std::time::Duration::from_secs(10))
        .success());
}

#[test]
fn a_flow_with_vision_describe_writes_sidecars_and_a_failed_description_fails_nothing() {
    let server = fixtures();
    let sandbox = Sandbox::new();
    sandbox.write_flows(format!(
        r#"
[[flow]]
name = "seen"
vision_describe = true
[[flow.step]]
tool = "browser_navigate"
url = "{login}"
[[flow.step]]
capture = "login"
[[flow.step]]
capture = "again"

[[flow]]
name = "plain"
[[flow.step]]
tool = "browser_navigate"
url = "{login}"
[[flow.step]]
capture = "plain"
"#,
        login = server.url("login.html")
    ));
    // `login` is described; `again` fails three times (the first attempt and two retries).
    let provider = ProviderServer::start(vec![
        metadata_answer("The login page."),
        Step::fail(500, None),
        Step::fail(500, None),
        Step::fail(500, None),
    ])
    .unwrap();
    let env = provider_env(&provider, "ollama");
    let out = sandbox.out();
    let out = out.to_str().unwrap();
    let ran = sandbox.run_with(
        &["flows", "run", "--output-dir", out, "--json"],
        &borrowed(&env),
    );
    ran.assert_ok();
    assert_eq!(
        provider.requests().len(),
        4,
        "the plain flow asked for nothing"
    );
    let report = ran.json();
    let flows = report["flows"].as_array().expect("flows");
    let seen = flows
        .iter()
        .find(|flow| flow["flow_name"] == "seen")
        .unwrap();
    assert_eq!(seen["ok"], true);
    assert_eq!(seen["descriptions"][0]["described"], true);
    assert_eq!(seen["descriptions"][1]["described"], false);
    assert!(seen["descriptions"][1]["error"]
        .as_str()
        .unwrap()
        .contains("HTTP 500"));

    let dir = sandbox.out().join("seen");
    let sidecar: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("login.json")).unwrap()).unwrap();
    assert_eq!(sidecar["vision"]["metadata"]["summary"], "The login page.");
    assert_eq!(sidecar["vision"]["provider"], "ollama");
    let failed: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("again.json")).unwrap()).unwrap();
    assert!(failed.get("vision").is_none(), "no description: {failed}");
    let index = std::fs::read_to_string(dir.join("index.md")).unwrap();
    assert!(index.contains("## Descriptions"), "{index}");
    assert!(
        index.contains("- login (login form): The login page."),
        "{index}"
    );
    assert!(index.contains("- again: not described"), "{index}");

    // `flows run --describe` describes a flow without vision_describe too.
    provider.push([metadata_answer("Plain, described.")]);
    let ran = sandbox.run_with(
        &[
            "flows",
            "run",
            "plain",
            "--describe",
            "--output-dir",
            out,
            "--json",
        ],
        &borrowed(&env),
    );
    ran.assert_ok();
    assert_eq!(provider.remaining(), 0);

    // `flows describe` bundles the sidecars, the vision object null where there is none.
    let ran = sandbox.run_with(
        &["flows", "describe", "seen", "--output-dir", out, "--json"],
        &borrowed(&env),
    );
    ran.assert_ok();
    let described = ran.json();
    let captures = described["captures"].as_array().unwrap();
    assert_eq!(
        captures[0]["vision"]["metadata"]["summary"],
        "The login page."
    );
    assert_eq!(captures[1]["vision"], Value::Null);
    assert!(described["index_md"]
        .as_str()
        .unwrap()
        .contains("## Descriptions"));
}
