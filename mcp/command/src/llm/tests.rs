//! The providers' pure parts: choosing the provider, the key's scrubbing, each wire format
//! written and read, the JSON checks. The HTTP paths run against the test provider server
//! (`mcp/command/tests/llm.rs`, `tests/support/provider.rs`).

use serde_json::{json, Value};

use super::*;

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    }
}

#[test]
fn the_provider_comes_from_arguments_then_the_environment_then_the_keys_then_ollama() {
    let none = env_of(&[]);
    let provider = Provider::resolve_with(None, None, &none).unwrap();
    assert_eq!(provider.kind, ProviderKind::Ollama);
    assert_eq!(provider.model, "qwen2.5vl:7b");
    assert_eq!(provider.base_url, "http://127.0.0.1:11434");

    let keyed = env_of(&[(OPENAI_KEY_ENV, "sk-test-0123456789abcdef")]);
    let provider = Provider::resolve_with(None, None, &keyed).unwrap();
    assert_eq!(provider.kind, ProviderKind::OpenAi);
    assert_eq!(provider.model, "gpt-4.1-mini");
    assert_eq!(provider.base_url, "https://api.openai.com/v1");

    let configured = env_of(&[
        (PROVIDER_ENV, "Anthropic"),
        (MODEL_ENV, "claude-x"),
        (ANTHROPIC_KEY_ENV, "sk-ant-0123456789abcdef"),
        (BASE_URL_ENV, "http://127.0.0.1:9/"),
        (TIMEOUT_ENV, "250"),
    ]);
    let provider = Provider::resolve_with(None, None, &configured).unwrap();
    assert_eq!(provider.kind, ProviderKind::Anthropic);
    assert_eq!(provider.model, "claude-x");
    assert_eq!(provider.base_url, "http://127.0.0.1:9");
    assert_eq!(provider.timeout, Duration::from_millis(250));
    let provider = Provider::resolve_with(Some("ollama"), Some("llava"), &configured).unwrap();
    assert_eq!(
        (provider.kind, provider.model.as_str()),
        (ProviderKind::Ollama, "llava")
    );
}

#[test]
fn a_bad_provider_or_a_missing_anthropic_key_is_a_config_error() {
    let none = env_of(&[]);
    let error = Provider::resolve_with(Some("gemini"), None, &none).unwrap_err();
    assert_eq!(error.reason, "config");
    assert!(
        error.hint.contains("anthropic, openai or ollama"),
        "{error:?}"
    );
    let error = Provider::resolve_with(Some("anthropic"), None, &none).unwrap_err();
    assert!(error.hint.contains(ANTHROPIC_KEY_ENV), "{error:?}");
    let bad_url = env_of(&[(BASE_URL_ENV, "ftp://example")]);
    let error = Provider::resolve_with(Some("ollama"), None, &bad_url).unwrap_err();
    assert!(error.message.contains("bad base URL"), "{error:?}");
    let tool_error = error.to_tool_error("describe");
    assert_eq!(tool_error.code, ToolErrorCode::LlmProviderError);
}

#[test]
fn the_key_is_never_printed() {
    let key = "sk-ant-api03-SECRETSECRETSECRET";
    let env = move |name: &str| (name == ANTHROPIC_KEY_ENV).then(|| key.to_owned());
    let provider = Provider::resolve_with(Some("anthropic"), None, &env).unwrap();
    assert!(!format!("{provider:?}").contains("SECRET"));
    let error = provider.error(
        "http",
        format!("invalid x-api-key {key}, and masked: sk-ant-api03-SECR****CRET."),
        Some(401),
        1,
        String::new(),
    );
    assert!(!error.message.contains("SECRET"), "{}", error.message);
    assert!(!error.message.contains("SECR"), "{}", error.message);
    assert!(
        error.message.contains("invalid x-api-key ***"),
        "{}",
        error.message
    );
}

fn request_with_everything() -> Request {
    let mut request = Request::new(
        "be brief",
        vec![
            Message::user(vec![
                Part::Text("describe".into()),
                Part::Image(Image {
                    media_type: "image/png",
                    base64: "iVBOR".into(),
                }),
            ]),
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall(ToolCall {
                    id: "t1".into(),
                    name: "click".into(),
                    arguments: json!({ "selector": "text=Buy" }),
                })],
            },
            Message::user(vec![Part::ToolResult(ToolResult {
                id: "t1".into(),
                name: "click".into(),
                content: "clicked".into(),
                is_error: false,
            })]),
        ],
    );
    request.tools.push(ToolSpec {
        name: "click".into(),
        description: "click an element".into(),
        parameters: json!({ "type": "object" }),
    });
    request
}

#[test]
fn each_wire_format_carries_the_image_and_the_tool_turns() {
    let request = request_with_everything();
    let anthropic = wire::body(ProviderKind::Anthropic, "m", &request);
    assert_eq!(anthropic["system"], "be brief");
    assert_eq!(
        anthropic["messages"][0]["content"][1]["source"]["data"],
        "iVBOR"
    );
    assert_eq!(anthropic["messages"][1]["content"][0]["type"], "tool_use");
    assert_eq!(anthropic["messages"][2]["content"][0]["tool_use_id"], "t1");
    assert_eq!(anthropic["tools"][0]["input_schema"]["type"], "object");

    let openai = wire::body(ProviderKind::OpenAi, "m", &request);
    assert_eq!(openai["messages"][0]["role"], "system");
    assert_eq!(
        openai["messages"][1]["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBOR"
    );
    assert_eq!(
        openai["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"selector\":\"text=Buy\"}"
    );
    assert_eq!(openai["messages"][3]["role"], "tool");
    assert_eq!(openai["tools"][0]["function"]["name"], "click");

    let ollama = wire::body(ProviderKind::Ollama, "m", &request);
    assert_eq!(ollama["stream"], false);
    assert_eq!(ollama["messages"][1]["content"], "describe");
    assert_eq!(ollama["messages"][1]["images"][0], "iVBOR");
    assert_eq!(
        ollama["messages"][2]["tool_calls"][0]["function"]["arguments"]["selector"],
        "text=Buy"
    );
}

#[test]
fn each_wire_format_answers_text_tool_calls_and_refusals() {
    let anthropic = json!({
        "content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "a", "name": "click", "input": {"selector": "e1"}}],
        "stop_reason": "tool_use",
    });
    let response = wire::parse(ProviderKind::Anthropic, anthropic.to_string().as_bytes()).unwrap();
    assert_eq!(response.text, "ok");
    assert_eq!(response.stop, Stop::ToolUse);
    assert_eq!(response.tool_calls[0].arguments["selector"], "e1");

    let openai = json!({"choices": [{"message": {"content": null, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "fill", "arguments": "{\"value\":\"x\"}"}}
    ]}, "finish_reason": "tool_calls"}]});
    let response = wire::parse(ProviderKind::OpenAi, openai.to_string().as_bytes()).unwrap();
    assert_eq!(response.tool_calls[0].name, "fill");
    assert_eq!(response.tool_calls[0].arguments["value"], "x");
    let refusal = json!({"choices": [{"message": {"content": null, "refusal": "no"}}]});
    let response = wire::parse(ProviderKind::OpenAi, refusal.to_string().as_bytes()).unwrap();
    assert_eq!(response.stop, Stop::Refusal);

    let ollama = json!({"message": {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "press", "arguments": {"key": "Enter"}}}
    ]}, "done": true});
    let response = wire::parse(ProviderKind::Ollama, ollama.to_string().as_bytes()).unwrap();
    assert_eq!(response.tool_calls[0].id, "call_0");
    assert_eq!(response.stop, Stop::ToolUse);

    assert!(wire::parse(ProviderKind::Ollama, b"{not json").is_err());
    assert!(wire::parse(ProviderKind::Anthropic, b"{}").is_err());
    assert_eq!(
        wire::error_message(br#"{"type":"error","error":{"type":"x","message":"bad key"}}"#),
        "bad key"
    );
    assert_eq!(
        wire::error_message(br#"{"error":"model not found"}"#),
        "model not found"
    );
}

#[test]
fn json_answers_are_found_and_checked() {
    let schema = json!({
        "type": "object",
        "required": ["summary", "controls"],
        "properties": {
            "summary": {"type": "string"},
            "controls": {"type": "array", "items": {"type": "object", "required": ["role"], "properties": {"role": {"type": "string"}}}},
            "kind": {"enum": ["form", "article"]},
        },
    });
    let fenced =
        "Here:\n```json\n{\"summary\": \"s\", \"controls\": [{\"role\": \"button\"}]}\n```";
    let value = json_check::extract(fenced).unwrap();
    assert_eq!(json_check::check(&value, &schema), Ok(()));
    let bad: Value = json!({"summary": "s", "controls": [{"role": 3}]});
    assert_eq!(
        json_check::check(&bad, &schema),
        Err("`$.controls[0].role`: expected a string".into())
    );
    let missing = json!({"summary": "s"});
    assert!(json_check::check(&missing, &schema)
        .unwrap_err()
        .contains("missing `controls`"));
    let wrong_enum = json!({"summary": "s", "controls": [], "kind": "x"});
    assert!(json_check::check(&wrong_enum, &schema).is_err());
    assert!(json_check::extract("no json here").is_err());
}
