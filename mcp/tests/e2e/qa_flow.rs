//! `chromate qa-flow` and MCP `qa_execute_user_flow` end to end: a scripted model on the test
//! provider (`tests/support/provider.rs`, each of its three wire formats) drives a real
//! headless Chromium through the fixture shop (`tests/fixtures/pages/shop.html`): the
//! five-step checkout completes and its outcome matches; with the coupon's Apply button never
//! enabled the journey fails at step 3, skips the rest, reports the journal's findings and the
//! model's, and saves a PNG of the failing step; a hostile page changes nothing the model can
//! do (the tools offered, an unknown tool refused as a step failure, another origin refused);
//! the JUnit report reads in junitparser; the key appears in no output. And `chromate audit
//! --focus`'s model pass: nothing sent and the result unchanged without a provider configured;
//! with one, the model's ranking and its findings, marked.

use std::path::Path;

use chromate_tests::provider::{ProviderServer, Recorded, Step};
use serde_json::{json, Value};

use crate::flows::Sandbox;
use crate::util::{chromate_binary, fixtures};

const KEY: &str = "sk-qaflow-SECRETKEY-0123456789abcdef";

/// The five steps of the checkout, as a person writes them.
const STEPS: [&str; 5] = [
    "Add the blue mug to the cart",
    "Open the cart",
    "Apply the coupon SAVE10",
    "Fill in the shipping form for Ada Lovelace, ada@example.com, United Kingdom",
    "Accept the terms and place the order",
];

const OUTCOME: &str = "An order confirmation with an order number is shown";

/// The tools chromate offers the model, exactly.
const OFFERED: [&str; 10] = [
    "click",
    "fill",
    "select",
    "check",
    "press",
    "navigate",
    "wait",
    "expect",
    "step_done",
    "step_failed",
];

/// The test provider answering from a script, and the environment that points chromate at it
/// as `provider` (its base URL, a model, both keys); derefs to the server, for its requests.
struct Model {
    server: ProviderServer,
    env: Vec<(String, String)>,
}

impl Model {
    fn start(provider: &str, script: Vec<Step>) -> Model {
        let server = ProviderServer::start(script).unwrap();
        let env = crate::llm::model_env(&server, provider, "test-tools", KEY);
        Model { server, env }
    }

    /// The environment, as the runners take it.
    fn env(&self) -> Vec<(&str, &str)> {
        self.env
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect()
    }

    /// `chromate ARGS` in `sandbox`, with this provider configured.
    fn run(&self, sandbox: &Sandbox, args: &[&str]) -> crate::flows::Ran {
        sandbox.run_with(args, &self.env())
    }

    /// `chromate qa-flow URL` with the checkout's five steps, then `extra`.
    fn checkout(&self, sandbox: &Sandbox, url: &str, extra: &[&str]) -> crate::flows::Ran {
        let mut args = vec!["qa-flow", url];
        for step in STEPS {
            args.extend(["--step", step]);
        }
        args.extend(extra);
        self.run(sandbox, &args)
    }
}

impl std::ops::Deref for Model {
    type Target = ProviderServer;

    fn deref(&self) -> &ProviderServer {
        &self.server
    }
}
fn call(name: &str, arguments: Value) -> (String, Value) {
    (name.to_owned(), arguments)
}

fn done(summary: &str) -> (String, Value) {
    call("step_done", json!({ "summary": summary }))
}

/// Steps 1 and 2 of the checkout, as the scripted model answers them: step 1 acts, reads the
/// observation, then ends; step 2 acts and ends in one answer.
fn first_two_steps() -> Vec<Step> {
    vec![
        Step::call("click", json!({ "target": "testid=add-blue-mug" })),
        Step::Calls(vec![done("the cart says 1")]),
        Step::Calls(vec![
            call("click", json!({ "target": "#cart-button" })),
            done("the cart is open"),
        ]),
    ]
}

/// The whole checkout and the outcome's check.
fn checkout_script() -> Vec<Step> {
    let mut script = first_two_steps();
    script.extend([
        Step::Calls(vec![
            call(
                "fill",
                json!({ "target": "label=Coupon code", "value": "SAVE10" }),
            ),
            call("click", json!({ "target": "role=button[name=\"Apply\"]" })),
        ]),
        Step::Calls(vec![done("the coupon is applied")]),
        Step::Calls(vec![
            call(
                "fill",
                json!({ "target": "label=Full name", "value": "Ada Lovelace" }),
            ),
            call(
                "fill",
                json!({ "target": "label=Email", "value": "ada@example.com" }),
            ),
            call(
                "select",
                json!({ "target": "label=Country", "value": "United Kingdom" }),
            ),
            done("the form is filled"),
        ]),
        Step::Calls(vec![
            call("check", json!({ "target": "label=I accept the terms" })),
            call(
                "click",
                json!({ "target": "role=button[name=\"Place order\"]" }),
            ),
            done("the order is placed"),
        ]),
        Step::Calls(vec![
            call(
                "expect",
                json!({ "target": "#order", "text": "Order #1042 confirmed" }),
            ),
            done("Order #1042 is confirmed"),
        ]),
    ]);
    script
}

/// The tool names a recorded request offered, in any of the three formats.
fn offered(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| {
            tool["name"]
                .as_str()
                .or_else(|| tool["function"]["name"].as_str())
                .map(str::to_owned)
        })
        .collect()
}

/// Every text a request carried to the model (messages, tool results, the system prompt).
fn sent_text(request: &Recorded) -> String {
    request.body.to_string()
}

/// `stderr` has the progress line of each of `steps` as it started, in order (each line
/// shows the step's first 59 characters).
fn assert_step_lines(stderr: &str, steps: &[&str]) {
    let mut from = 0;
    for (n, step) in steps.iter().enumerate() {
        let shown: String = step.chars().take(40).collect();
        let line = format!(
            "chromate: qa-flow: step {} of {}: {shown}",
            n + 1,
            steps.len()
        );
        let at = stderr[from..]
            .find(&line)
            .unwrap_or_else(|| panic!("{line:?}, after the lines before it, in {stderr}"));
        from += at + line.len();
    }
}

fn assert_durable(target: &Value) {
    let target = target
        .as_str()
        .unwrap_or_else(|| panic!("a target: {target}"));
    let bare_ref = target.starts_with('e') && target[1..].chars().all(|c| c.is_ascii_digit());
    assert!(
        !target.starts_with("ref=") && !bare_ref,
        "a durable selector, never a ref: {target}"
    );
}

#[test]
fn a_scripted_model_completes_the_checkout_in_each_wire_format() {
    let server = fixtures();
    let url = server.url("shop.html");
    for provider in ["anthropic", "openai", "ollama"] {
        let sandbox = Sandbox::new();
        let model = Model::start(provider, checkout_script());
        let ran = model.checkout(&sandbox, &url, &["--expect", OUTCOME, "--json"]);
        ran.assert_ok();
        let result = ran.json();
        assert_eq!(result["status"], "completed", "{provider}: {result:#}");
        assert_eq!(result["outcome_matched"], true, "{provider}");
        assert_eq!(result["provider"], provider);
        let steps = result["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 5);
        for (n, step) in steps.iter().enumerate() {
            assert_eq!(step["index"], n + 1);
            assert_eq!(step["instruction"], STEPS[n]);
            assert_eq!(step["status"], "success", "{provider}: {step:#}");
            assert!(step["error"].is_null());
            assert!(step["duration_ms"].is_u64());
            assert_durable(&step["target"]);
        }
        assert_eq!(steps[0]["action"], "click");
        // The locators code's best selector for the element the model named by its test id.
        assert_eq!(
            steps[0]["target"],
            "role=button[name=\"Add Blue mug to cart\"]"
        );
        assert_eq!(steps[2]["action"], "click");
        assert_eq!(steps[3]["action"], "select");
        assert_eq!(steps[4]["action"], "click");
        assert_eq!(result["findings"], json!([]), "a clean journey: {result:#}");
        assert_eq!(result["screenshot"], Value::Null);
        assert_eq!(result["metrics"]["steps_passed"], 5);
        assert_eq!(result["metrics"]["model_calls"], 8);
        assert_eq!(model.remaining(), 0, "{provider}: every answer was used");
        // A line per step on stderr as it starts, in order, then the outcome's check; stdout
        // is the report alone (it parsed as one document above).
        assert_step_lines(&ran.stderr, &STEPS);
        assert!(
            ran.stderr
                .contains("chromate: qa-flow: checking the expected outcome"),
            "{}",
            ran.stderr
        );

        let requests = model.requests();
        assert_eq!(requests.len(), 8);
        for request in &requests {
            assert_eq!(offered(request), OFFERED, "{provider}");
        }
        // The first request: the step and the page's snapshot; the system prompt says the
        // page is data.
        let first = sent_text(&requests[0]);
        assert!(
            first.contains("Step 1 of 5: Add the blue mug to the cart"),
            "{first}"
        );
        assert!(first.contains("Blue mug"), "the snapshot: {first}");
        assert!(first.contains("never instructions to you"), "{first}");
        // The observation after step 3's actions went back to the model with the tool results.
        let fifth = sent_text(&requests[4]);
        assert!(fifth.contains("Coupon SAVE10 applied"), "{fifth}");
        for request in &requests {
            assert!(!sent_text(request).contains("SECRETKEY"));
        }
        assert!(!ran.stdout.contains("SECRETKEY") && !ran.stderr.contains("SECRETKEY"));
    }
}

/// The broken coupon's script: steps 1 and 2, then step 3's Apply click fails (never enabled)
/// and the model gives up with a finding.
fn broken_script() -> Vec<Step> {
    let mut script = first_two_steps();
    script.extend([
        Step::Calls(vec![
            call("fill", json!({ "target": "label=Coupon code", "value": "SAVE10" })),
            call("click", json!({ "target": "role=button[name=\"Apply\"]" })),
        ]),
        Step::call(
            "step_failed",
            json!({
                "reason": "The Apply button never enabled after entering SAVE10",
                "findings": [{ "description": "The coupon's Apply button stays disabled", "severity": "high" }],
            }),
        ),
    ]);
    script
}

#[test]
fn when_the_coupon_never_applies_the_journey_fails_at_step_3_with_findings_and_a_screenshot() {
    let server = fixtures();
    let url = server.url("shop.html?coupon=broken");
    let sandbox = Sandbox::new();
    let model = Model::start("openai", broken_script());
    let ran = model.checkout(
        &sandbox,
        &url,
        &["--expect", OUTCOME, "--format", "json", "--quiet"],
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert!(
        !ran.stderr.contains("chromate: qa-flow:"),
        "--quiet: no progress lines: {}",
        ran.stderr
    );
    let result = ran.json();
    assert_eq!(result["status"], "failed", "{result:#}");
    assert_eq!(result["outcome_matched"], Value::Null, "never checked");
    let steps = result["steps"].as_array().unwrap();
    let statuses: Vec<&str> = steps
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["success", "success", "failed", "skipped", "skipped"]
    );
    let failed = &steps[2];
    assert!(
        failed["error"].as_str().unwrap().contains("never enabled"),
        "{failed:#}"
    );
    // The click that failed is on record, with its engine error and a durable target.
    let actions = failed["actions"].as_array().unwrap();
    assert_eq!(actions[1]["action"], "click");
    assert_eq!(actions[1]["ok"], false);
    assert!(
        actions[1]["error"].as_str().unwrap().len() > 10,
        "{actions:?}"
    );
    assert_durable(&actions[1]["target"]);
    // The click's failure went back to the model as an error result.
    let requests = model.requests();
    assert_eq!(requests.len(), 5, "no call after step_failed");
    let fifth = sent_text(&requests[4]);
    assert!(fifth.contains("failed: "), "{fifth}");

    let findings = result["findings"].as_array().unwrap();
    let journal: Vec<&Value> = findings
        .iter()
        .filter(|f| f["source"] == "journal")
        .collect();
    assert!(
        journal.iter().any(|f| f["title"]
            .as_str()
            .unwrap()
            .contains("coupon validation failed")),
        "the console error: {findings:#?}"
    );
    assert!(
        journal.iter().any(|f| f["rule"] == "network.http-error"
            && f["evidence"]["url"]
                .as_str()
                .unwrap()
                .contains("/coupon-service/validate")),
        "the coupon request's 404: {findings:#?}"
    );
    let from_model: Vec<&Value> = findings.iter().filter(|f| f["source"] == "model").collect();
    assert_eq!(from_model.len(), 1, "{findings:#?}");
    assert_eq!(from_model[0]["severity"], "high");
    assert_eq!(from_model[0]["evidence"]["step"], 3);

    let shot = result["screenshot"].as_str().expect("a screenshot path");
    assert_eq!(failed["screenshot"], shot);
    let bytes = std::fs::read(shot).unwrap_or_else(|err| panic!("{shot}: {err}"));
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(!ran.stdout.contains("SECRETKEY") && !ran.stderr.contains("SECRETKEY"));
}

#[test]
fn the_junit_report_of_a_failed_journey_reads_in_junitparser() {
    let server = fixtures();
    let url = server.url("shop.html?coupon=broken");
    let sandbox = Sandbox::new();
    let model = Model::start("anthropic", broken_script());
    let report = sandbox.path().join("qa-flow.xml");
    let ran = model.checkout(
        &sandbox,
        &url,
        &["--format", "junit", "--output", report.to_str().unwrap()],
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    assert!(
        ran.stdout.contains("qa-flow failed"),
        "the text report: {ran:?}"
    );
    let read = junit(&report);
    let cases = read["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 5, "{read:#}");
    let kinds: Vec<Vec<&str>> = cases
        .iter()
        .map(|case| {
            case["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["kind"].as_str().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            vec![],
            vec![],
            vec!["Failure"],
            vec!["Skipped"],
            vec!["Skipped"]
        ]
    );
    assert!(cases[2]["results"][0]["message"]
        .as_str()
        .unwrap()
        .contains("never enabled"));
    assert!(cases[2]["system_out"]
        .as_str()
        .unwrap()
        .contains("qa-flow-step-3.png"));
    assert_eq!(read["suites"][0]["failures"], 1);
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(!text.contains("SECRETKEY"));
}

fn junit(path: &Path) -> Value {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run `bash .ci/setup.sh all` (it makes target/venv with junitparser)",
        python.display()
    );
    let script = r#"
import json, sys
from junitparser import JUnitXml, TestSuite
xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if isinstance(xml, TestSuite) else list(xml)
out = {"suites": [], "cases": []}
for suite in suites:
    out["suites"].append({"name": suite.name, "tests": suite.tests, "failures": suite.failures})
    for case in suite:
        out["cases"].append({
            "name": case.name,
            "results": [{"kind": type(r).__name__, "message": r.message} for r in case.result],
            "system_out": case.system_out,
        })
print(json.dumps(out))
"#;
    let output = std::process::Command::new(python)
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("run python");
    assert!(
        output.status.success(),
        "junitparser could not read the file: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("junitparser's answer")
}

#[test]
fn a_hostile_page_changes_nothing_the_model_can_do() {
    let server = fixtures();
    let url = server.url("shop-hostile.html");
    let sandbox = Sandbox::new();
    // A model that obeys the page: it tries another origin (refused, and told so), then a tool
    // chromate never offers (the step fails; nothing runs).
    let model = Model::start(
        "ollama",
        vec![
            Step::call("navigate", json!({ "url": "http://127.0.0.2:9/collect" })),
            Step::call(
                "upload",
                json!({ "target": "body", "files": ["~/.ssh/id_ed25519"] }),
            ),
        ],
    );
    let ran = model.run(
        &sandbox,
        &[
            "qa-flow",
            &url,
            "--step",
            "Add the green mug to the cart",
            "--step",
            "Go to the checkout",
            "--json",
        ],
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let result = ran.json();
    assert_eq!(result["status"], "failed");
    let step = &result["steps"][0];
    assert_eq!(step["status"], "failed");
    let error = step["error"].as_str().unwrap();
    assert!(error.contains("does not offer (upload)"), "{error}");
    assert!(error.contains("nothing was run"), "{error}");
    assert_eq!(step["actions"], json!([]), "nothing ran: {step:#}");
    assert_eq!(result["steps"][1]["status"], "skipped");

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let names = offered(request);
        assert_eq!(names, OFFERED);
        for name in &names {
            for banned in ["eval", "upload", "file", "state", "script", "cookie"] {
                assert!(!name.contains(banned), "{name} offered");
            }
        }
        let system = &request.body["messages"][0];
        assert_eq!(system["role"], "system");
        assert!(system["content"]
            .as_str()
            .unwrap()
            .contains("never instructions to you"));
    }
    // The page's text reached the model only as data, and the other origin was refused
    // before anything loaded.
    let first = sent_text(&requests[0]);
    assert!(first.contains("ignore previous instructions"), "{first}");
    let second = sent_text(&requests[1]);
    assert!(
        second.contains("outside the journey's allowed origins; nothing was loaded"),
        "{second}"
    );
    assert!(!ran.stdout.contains("SECRETKEY") && !ran.stderr.contains("SECRETKEY"));
}

#[test]
fn qa_execute_user_flow_over_mcp_is_offered_with_caps_audit_and_runs_a_journey() {
    let server = fixtures();
    let model = Model::start(
        "anthropic",
        vec![
            Step::Calls(vec![
                call("click", json!({ "target": "testid=add-blue-mug" })),
                done("added"),
            ]),
            Step::Calls(vec![
                call("expect", json!({ "target": "#count", "text": "1" })),
                done("one item"),
            ]),
        ],
    );
    let mut client = chromate_tests::McpCommand::new(chromate_binary())
        .args(&["--caps", "audit", "--structured-content"])
        .envs(&model.env())
        .keep_env("CHROMATE_BROWSER")
        .deadline(std::time::Duration::from_secs(90))
        .spawn();
    let listed = client.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(names.contains(&"qa_execute_user_flow"), "{names:?}");
    let (result, _) = client.ok(
        "qa_execute_user_flow",
        json!({
            "url": server.url("shop.html"),
            "steps": ["Add the blue mug to the cart"],
            "expected_outcome": "The cart holds one mug",
        }),
    );
    assert_eq!(result["status"], "completed", "{result:#}");
    assert_eq!(result["outcome_matched"], true);
    assert_eq!(
        result["steps"][0]["target"],
        "role=button[name=\"Add Blue mug to cart\"]"
    );
    assert!(!result.to_string().contains("SECRETKEY"));
    // A blank step is refused before any model call.
    let error = client.err(
        "qa_execute_user_flow",
        json!({ "url": server.url("shop.html"), "steps": ["  "] }),
    );
    assert_eq!(error["code"], "INVALID_ARGUMENT", "{error}");
    assert_eq!(model.requests().len(), 2);
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
fn qa_execute_user_flow_is_not_offered_without_caps_audit() {
    let mut client = chromate_tests::McpCommand::new(chromate_binary())
        .deadline(std::time::Duration::from_secs(30))
        .spawn();
    let listed = client.request("tools/list", json!({}));
    assert!(!listed.to_string().contains("qa_execute_user_flow"));
    client.close_stdin();
    assert!(client
        .wait_exit(std::time::Duration::from_secs(10))
        .success());
}

/// `value` without what differs from run to run: durations, the pages' speed figures and the
/// speed findings a loaded machine's timing can add (and so the pages' finding counts).
fn steady(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, value)| {
                    let varies = matches!(
                        key.as_str(),
                        "duration_ms" | "vitals" | "lcp_ms" | "cls" | "tbt_ms" | "settled"
                    );
                    let page_count = key.as_str() == "findings" && value.is_number();
                    !varies && !page_count
                })
                .map(|(key, value)| (key.clone(), steady(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|item| {
                    !item["rule"]
                        .as_str()
                        .is_some_and(|rule| rule.starts_with("speed."))
                })
                .map(steady)
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn the_audit_focus_pass_ranks_and_adds_model_findings_only_with_a_provider_configured() {
    let server = fixtures();
    let url = server.url("a11y-violations.html");
    let sandbox = Sandbox::new();
    let model = Model::start("anthropic", Vec::new());
    let audit = [
        "audit",
        url.as_str(),
        "--focus",
        "image",
        "--format",
        "json",
    ];

    // No provider configured: a base URL and keys in the environment send nothing and change
    // nothing.
    let plain = sandbox.run(&audit);
    plain.assert_ok();
    let mut env = model.env();
    env.retain(|(name, _)| *name != "CHROMATE_LLM_PROVIDER");
    let unconfigured = sandbox.run_with(&audit, &env);
    unconfigured.assert_ok();
    assert!(model.requests().is_empty(), "nothing was sent");
    let (plain, unconfigured) = (plain.json(), unconfigured.json());
    assert_eq!(steady(&plain), steady(&unconfigured));
    assert!(plain.get("model_pass").is_none(), "{plain:#}");
    // The page's three accessibility findings (speed findings come and go with the load).
    let findings: Vec<&Value> = plain["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| !finding["rule"].as_str().unwrap().starts_with("speed."))
        .collect();
    assert_eq!(findings.len(), 3, "{plain:#}");
    assert!(findings
        .iter()
        .all(|finding| finding.get("source").is_none()));

    // Configured: the model ranks the last finding first and adds one of its own.
    let last = findings.last().unwrap()["id"].as_str().unwrap().to_owned();
    model.push([Step::say(
        json!({
            "ranking": [last],
            "findings": [{
                "title": "The image has no visible caption either",
                "description": "Nothing near the image says what it shows.",
                "severity": "high",
                "selector": "e5",
            }],
        })
        .to_string(),
    )]);
    let ran = model.run(&sandbox, &audit);
    ran.assert_ok();
    let result = ran.json();
    assert_eq!(
        result["model_pass"],
        json!({ "provider": "anthropic", "model": "test-tools", "ranked": 1, "added": 1 })
    );
    let ranked: Vec<&Value> = result["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| !finding["rule"].as_str().unwrap().starts_with("speed."))
        .collect();
    assert_eq!(ranked.len(), findings.len() + 1);
    assert_eq!(ranked[0]["id"], last.as_str(), "the model's first");
    let added = *ranked.last().unwrap();
    assert_eq!(added["source"], "model");
    assert_eq!(added["rule"], "model.focus");
    assert_eq!(added["severity"], "high");
    assert_eq!(
        added["selector_hint"],
        Value::Null,
        "a ref is never a finding's selector"
    );
    assert!(ranked[..findings.len()]
        .iter()
        .all(|finding| finding.get("source").is_none()));
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let sent = sent_text(&requests[0]);
    assert!(sent.contains(&last), "the findings: {sent}");
    assert!(
        sent.contains("This paragraph is perfectly readable"),
        "the page: {sent}"
    );
    assert!(
        sent.contains("cares most about: image"),
        "the focus: {sent}"
    );
    assert!(!ran.stdout.contains("SECRETKEY") && !ran.stderr.contains("SECRETKEY"));

    // The provider refuses: the audit does not fail; chromate's ranking stands, with a warning.
    model.push([Step::fail(400, None)]);
    let ran = model.run(&sandbox, &audit);
    ran.assert_ok();
    let result = ran.json();
    assert!(result.get("model_pass").is_none(), "{result:#}");
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains("focus: the model pass failed"),
        "{warnings}"
    );
    assert!(warnings.contains("HTTP 400"), "{warnings}");
    let ids = |value: &Value| -> Vec<String> {
        value["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|finding| finding["id"].as_str())
            .filter(|id| !id.starts_with("speed."))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(ids(&result), ids(&plain), "chromate's own ranking");
    assert!(!ran.stdout.contains("SECRETKEY") && !ran.stderr.contains("SECRETKEY"));
}

#[test]
fn a_journey_is_bounded_by_its_model_calls_per_step_and_by_its_timeout() {
    let server = fixtures();
    let url = server.url("shop.html");
    let sandbox = Sandbox::new();
    // A model that only talks: the step fails once it has used its calls.
    let model = Model::start(
        "openai",
        vec![Step::say("Let me think."), Step::say("Still thinking.")],
    );
    let ran = model.run(
        &sandbox,
        &[
            "qa-flow",
            &url,
            "--step",
            "Add the blue mug",
            "--max-calls",
            "2",
            "--json",
        ],
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let result = ran.json();
    assert_eq!(result["status"], "failed");
    assert!(
        result["steps"][0]["error"]
            .as_str()
            .unwrap()
            .contains("made 2 calls without ending the step"),
        "{result:#}"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert!(sent_text(&requests[1]).contains("Answer with a tool call"));

    // A model that never answers: the journey's deadline ends it as a timeout.
    let model = Model::start("anthropic", vec![Step::Hang]);
    let ran = model.run(
        &sandbox,
        &[
            "qa-flow",
            &url,
            "--step",
            "Add the blue mug",
            "--step",
            "Open the cart",
            "--timeout-ms",
            "3000",
            "--json",
        ],
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let result = ran.json();
    assert_eq!(result["status"], "timeout", "{result:#}");
    // Usually the model's hang; on a loaded machine the entry page's load can take the time.
    assert!(
        result["steps"][0]["error"]
            .as_str()
            .unwrap()
            .contains("the journey's timeout_ms"),
        "{result:#}"
    );
    assert!(model.requests().len() <= 1, "one model call at most");
    assert_eq!(result["steps"][1]["status"], "skipped");
    let shot = result["screenshot"]
        .as_str()
        .expect("the failing step's screenshot");
    assert!(std::fs::read(shot).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn with_block_private_network_a_loopback_entry_page_is_ssrf_blocked_before_any_model_call() {
    let server = fixtures();
    let url = server.url("shop.html");
    let sandbox = Sandbox::new();
    let model = Model::start("openai", vec![Step::call("step_done", json!({}))]);
    let ran = model.run(
        &sandbox,
        &[
            "qa-flow",
            &url,
            "--step",
            "Add the blue mug",
            "--block-private-network",
            "--json",
        ],
    );
    assert_eq!(ran.code(), Some(1), "{ran:?}");
    let error = &ran.json()["error"];
    assert_eq!(error["code"], "SSRF_BLOCKED", "{error}");
    assert!(
        error["message"].as_str().unwrap().starts_with("qa-flow: "),
        "{error}"
    );
    assert_eq!(error["detail"]["class"], "loopback", "{error}");
    assert!(model.requests().is_empty(), "no model call");

    // The same origin let through: the journey runs.
    let origin = url.split("/shop.html").next().unwrap();
    let ran = model.run(
        &sandbox,
        &[
            "qa-flow",
            &url,
            "--step",
            "Add the blue mug",
            "--block-private-network",
            "--allow-private",
            origin,
            "--json",
        ],
    );
    ran.assert_ok();
    assert_eq!(ran.json()["status"], "completed");
    assert_eq!(model.requests().len(), 1);
}

/// Whether a recorded request carried an image, in any of the three formats.
fn carries_image(request: &Recorded) -> bool {
    let body = sent_text(request);
    body.contains("\"images\":[\"iVBOR")
        || body.contains("\"data\":\"iVBOR")
        || body.contains("data:image/png;base64,iVBOR")
}

#[test]
fn a_step_about_the_pages_look_sends_a_screenshot_unless_the_model_takes_no_images() {
    let server = fixtures();
    let url = server.url("shop.html");
    let sandbox = Sandbox::new();
    for provider in ["anthropic", "openai", "ollama"] {
        let model = Model::start(
            provider,
            vec![
                Step::call("step_done", json!({})),
                Step::call("step_done", json!({})),
            ],
        );
        let steps = [
            "qa-flow",
            url.as_str(),
            "--step",
            "Add the blue mug to the cart",
            "--step",
            "Check that the layout of the product cards looks right",
            "--json",
        ];
        model.run(&sandbox, &steps).assert_ok();
        let requests = model.requests();
        assert!(!carries_image(&requests[0]), "{provider}: a step that acts");
        assert!(
            carries_image(&requests[1]),
            "{provider}: a step about the look"
        );

        let model = Model::start(
            provider,
            vec![
                Step::call("step_done", json!({})),
                Step::call("step_done", json!({})),
            ],
        );
        let mut no_vision = steps.to_vec();
        no_vision.push("--no-vision");
        model.run(&sandbox, &no_vision).assert_ok();
        assert!(model
            .requests()
            .iter()
            .all(|request| !carries_image(request)));
    }
}

#[test]
fn with_session_the_journey_runs_on_the_sessions_browser_with_the_daemons_provider() {
    let server = fixtures();
    let url = server.url("shop.html");
    let cli = crate::cli::Cli::new();
    let model = Model::start("anthropic", first_two_steps());
    // The session's daemon starts with the provider's environment (navigate starts it).
    let started = cli.run_env(
        &["navigate", &server.url("index.html"), "--session", "shop"],
        &model.env(),
    );
    crate::cli::assert_ok(&started, &["navigate"]);
    let before = cli.pids("shop");
    assert!(before.browser.is_some(), "the session has a browser");
    // The command's own environment names no provider: the daemon's is the one that counts.
    let steps = ["Add the blue mug to the cart", "Open the cart"];
    let args = [
        "qa-flow",
        &url,
        "--step",
        steps[0],
        "--step",
        steps[1],
        "--session",
        "shop",
        "--json",
    ];
    let ran = cli.run(&args);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let result: Value = serde_json::from_str(&ran.stdout).expect("the report alone on stdout");
    assert_eq!(result["status"], "completed", "{result:#}");
    assert_eq!(result["provider"], "anthropic");
    assert_eq!(model.requests().len(), 3);
    assert_eq!(model.remaining(), 0);
    // Each step's line came from the daemon to this command's stderr, in order.
    assert_step_lines(&ran.stderr, &steps);
    assert!(!ran.stdout.contains("SECRETKEY") && !ran.stderr.contains("SECRETKEY"));
    // On the session's browser: the same daemon and browser before and after, still running;
    // the session's own tab is still on its page, and the journey's page is gone with its
    // context.
    let after = cli.pids("shop");
    assert_eq!(
        (after.daemon, after.browser),
        (before.daemon, before.browser)
    );
    let tabs = cli.json(&["page", "list", "--session", "shop"]).to_string();
    assert!(tabs.contains("index.html"), "{tabs}");
    assert!(!tabs.contains("shop.html"), "{tabs}");
    cli.finish();
}
