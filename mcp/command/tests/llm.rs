//! The providers' client against the test model provider on 127.0.0.1
//! (`tests/support/provider.rs`): each wire format sends the image and reads the answer,
//! transient failures are retried twice and no more, a wrong key fails at once with a hint and
//! without the key, an answer that breaks the schema gets one repair turn, a hang ends at the
//! timeout, a refusal and a body that is not JSON are errors.

// A test that cannot set up its fixture fails at once: helpers may unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use chromate_command::llm::{
    Image, Message, Part, Provider, Request, BASE_URL_ENV, OPENAI_KEY_ENV, TIMEOUT_ENV,
};
use chromate_tests::provider::{ProviderServer, Step};
use serde_json::{json, Value};

const KEY: &str = "sk-test-KEYKEYKEYKEY0123456789";

fn provider(server: &ProviderServer, kind: &str, timeout_ms: Option<&str>) -> Provider {
    let base = server.base_url(kind);
    let timeout = timeout_ms.map(str::to_owned);
    let env = move |name: &str| match name {
        BASE_URL_ENV => Some(base.clone()),
        OPENAI_KEY_ENV | "ANTHROPIC_API_KEY" => Some(KEY.to_owned()),
        TIMEOUT_ENV => timeout.clone(),
        _ => None,
    };
    Provider::resolve_with(Some(kind), Some("test-model"), &env).unwrap()
}

fn image_request() -> Request {
    Request::new(
        "describe pages",
        vec![Message::user(vec![
            Part::Text("what is this".into()),
            Part::Image(Image {
                media_type: "image/png",
                base64: "iVBORw0KGgo=".into(),
            }),
        ])],
    )
}

fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["summary"],
        "properties": { "summary": { "type": "string" } },
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn each_provider_receives_the_image_and_its_json_answer_is_parsed() {
    let rt = runtime();
    for kind in ["anthropic", "openai", "ollama"] {
        let server = ProviderServer::start(vec![Step::say(
            "```json\n{\"summary\": \"a login form\"}\n```",
        )])
        .unwrap();
        let value = rt
            .block_on(provider(&server, kind, None).complete_json(&image_request(), &schema()))
            .unwrap();
        assert_eq!(value["summary"], "a login form", "{kind}");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{kind}");
        let body = &requests[0].body;
        assert_eq!(body["model"], "test-model", "{kind}");
        match kind {
            "anthropic" => {
                assert_eq!(requests[0].path, "/v1/messages");
                assert_eq!(requests[0].header("x-api-key"), Some(KEY));
                assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(
                    body["messages"][0]["content"][1]["source"]["data"],
                    "iVBORw0KGgo="
                );
                assert!(body["system"].as_str().unwrap().contains("JSON schema"));
            }
            "openai" => {
                assert_eq!(requests[0].path, "/v1/chat/completions");
                assert_eq!(
                    requests[0].header("authorization"),
                    Some(format!("Bearer {KEY}").as_str())
                );
                assert_eq!(
                    body["messages"][1]["content"][1]["image_url"]["url"],
                    "data:image/png;base64,iVBORw0KGgo="
                );
                assert_eq!(body["response_format"]["type"], "json_object");
            }
            _ => {
                assert_eq!(requests[0].path, "/api/chat");
                assert_eq!(
                    requests[0].header("authorization"),
                    None,
                    "ollama takes no key"
                );
                assert_eq!(body["messages"][1]["images"][0], "iVBORw0KGgo=");
                assert_eq!(body["format"], schema());
                assert_eq!(body["stream"], false);
            }
        }
    }
}

#[test]
fn transient_failures_are_retried_twice() {
    let rt = runtime();
    let server = ProviderServer::start(vec![
        Step::fail(429, Some(0)),
        Step::fail(503, None),
        Step::say("fine"),
    ])
    .unwrap();
    let response = rt
        .block_on(provider(&server, "openai", None).complete(&image_request()))
        .unwrap();
    assert_eq!(response.text, "fine");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_third_transient_failure_is_the_error_and_no_fourth_attempt_is_made() {
    let rt = runtime();
    let server = ProviderServer::start(vec![
        Step::fail(500, None),
        Step::fail(502, None),
        Step::fail(429, Some(0)),
        Step::say("never asked"),
    ])
    .unwrap();
    let error = rt
        .block_on(provider(&server, "anthropic", None).complete(&image_request()))
        .unwrap_err();
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.remaining(), 1);
    assert_eq!(
        (error.status, error.attempts, error.reason),
        (Some(429), 3, "http")
    );
    assert!(error.hint.contains("rate limited"), "{error:?}");
    let tool_error = error.to_tool_error("describe");
    assert_eq!(tool_error.code.as_str(), "LLM_PROVIDER_ERROR");
    assert!(
        tool_error
            .message
            .contains("scripted failure 429 (HTTP 429)"),
        "{tool_error:?}"
    );
}

#[test]
fn a_retry_after_longer_than_chromate_waits_fails_at_once() {
    let rt = runtime();
    let server = ProviderServer::start(vec![Step::fail(429, Some(3600)), Step::say("x")]).unwrap();
    let error = rt
        .block_on(provider(&server, "ollama", None).complete(&image_request()))
        .unwrap_err();
    assert_eq!(server.requests().len(), 1);
    assert!(error.hint.contains("3600 s"), "{error:?}");
}

#[test]
fn a_wrong_key_fails_at_once_with_a_hint_and_never_shows_the_key() {
    let rt = runtime();
    for kind in ["openai", "anthropic"] {
        let server = ProviderServer::start(vec![Step::say("x")]).unwrap();
        server.require_key("sk-the-right-one");
        let error = rt
            .block_on(provider(&server, kind, None).complete(&image_request()))
            .unwrap_err();
        assert_eq!(server.requests().len(), 1, "401 is not retried");
        assert_eq!(error.status, Some(401));
        assert!(error.hint.contains("refused the API key"), "{error:?}");
        let tool_error = error.to_tool_error("describe");
        let everything = format!(
            "{error:?} {error} {tool_error:?} {}",
            json!(tool_error.detail)
        );
        assert!(
            everything.contains("Incorrect API key provided"),
            "{everything}"
        );
        assert!(
            !everything.contains("KEYKEY"),
            "the key leaked: {everything}"
        );
    }
}

#[test]
fn an_answer_breaking_the_schema_gets_one_repair_turn() {
    let rt = runtime();
    let server = ProviderServer::start(vec![
        Step::say("It is a login form."),
        Step::say("{\"summary\": \"a login form\"}"),
    ])
    .unwrap();
    let value = rt
        .block_on(provider(&server, "openai", None).complete_json(&image_request(), &schema()))
        .unwrap();
    assert_eq!(value["summary"], "a login form");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let repair = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(repair[2]["content"], "It is a login form.");
    assert!(repair[3]["content"].as_str().unwrap().contains("not valid"));

    let server = ProviderServer::start(vec![
        Step::say("{\"summary\": 3}"),
        Step::say("{not json"),
        Step::say("never asked"),
    ])
    .unwrap();
    let error = rt
        .block_on(provider(&server, "anthropic", None).complete_json(&image_request(), &schema()))
        .unwrap_err();
    assert_eq!(error.reason, "invalid-json");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_body_that_is_not_json_and_a_refusal_are_errors_without_retries() {
    let rt = runtime();
    let server = ProviderServer::start(vec![Step::Garbage, Step::say("x")]).unwrap();
    let error = rt
        .block_on(provider(&server, "openai", None).complete(&image_request()))
        .unwrap_err();
    assert_eq!(error.reason, "malformed-response");
    assert_eq!(server.requests().len(), 1);

    for kind in ["anthropic", "openai"] {
        let server =
            ProviderServer::start(vec![Step::Refuse("I can't help with that".into())]).unwrap();
        let error = rt
            .block_on(provider(&server, kind, None).complete(&image_request()))
            .unwrap_err();
        assert_eq!(error.reason, "refused", "{kind}");
        assert!(
            error.message.contains("I can't help with that"),
            "{error:?}"
        );
    }
}

#[test]
fn a_hang_ends_at_the_timeout_and_is_retried_twice() {
    let rt = runtime();
    let server = ProviderServer::start(vec![Step::Hang, Step::Hang, Step::Hang]).unwrap();
    let error = rt
        .block_on(async {
            // The outer bound only keeps a broken client from wedging the test run.
            tokio::time::timeout(
                Duration::from_secs(60),
                provider(&server, "ollama", Some("200")).complete(&image_request()),
            )
            .await
        })
        .expect("the client's own timeout ends each attempt")
        .unwrap_err();
    assert_eq!((error.reason, error.attempts), ("timeout", 3));
    assert!(error.hint.contains("CHROMATE_LLM_TIMEOUT_MS"), "{error:?}");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn nothing_listens_is_unreachable_after_the_retries() {
    let rt = runtime();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let env = move |name: &str| (name == BASE_URL_ENV).then(|| format!("http://127.0.0.1:{port}"));
    let provider = Provider::resolve_with(Some("ollama"), None, &env).unwrap();
    let error = rt
        .block_on(provider.complete(&image_request()))
        .unwrap_err();
    assert_eq!((error.reason, error.attempts), ("unreachable", 3));
    assert!(error.hint.contains("reachable"), "{error:?}");
}
