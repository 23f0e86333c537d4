//! The three providers' wire formats: a [`Request`] as each one's JSON body, each one's answer
//! as a [`Response`], and the error message out of each one's error body.
//!
//! Owns: Anthropic's Messages API (`POST /v1/messages`: `system`, content blocks `text`,
//! `image` with a base64 `source`, `tool_use`, `tool_result`; `tools` with `input_schema`),
//! OpenAI's Chat Completions (`POST /chat/completions`: `image_url` parts with `data:` URLs,
//! `tool_calls` whose `arguments` are a JSON string, `tool` messages, `response_format`) and
//! Ollama's `/api/chat` (`images` as base64 beside `content`, `tool_calls` whose arguments are
//! an object, `format` the JSON schema, `stream: false`). Does not own HTTP or retries.

use serde_json::{json, Map, Value};

use super::{Message, Part, ProviderKind, Request, Response, Role, Stop, ToolCall};

/// The path of the chat endpoint under the provider's base URL.
pub fn endpoint(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "/v1/messages",
        ProviderKind::OpenAi => "/chat/completions",
        ProviderKind::Ollama => "/api/chat",
    }
}

/// The request body for `model`.
pub fn body(kind: ProviderKind, model: &str, request: &Request) -> Value {
    match kind {
        ProviderKind::Anthropic => anthropic_body(model, request),
        ProviderKind::OpenAi => openai_body(model, request),
        ProviderKind::Ollama => ollama_body(model, request),
    }
}

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn anthropic_body(model: &str, request: &Request) -> Value {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| {
            let content: Vec<Value> = message
                .parts
                .iter()
                .map(|part| match part {
                    Part::Text(text) => json!({ "type": "text", "text": text }),
                    Part::Image(image) => json!({
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": image.media_type,
                            "data": image.base64,
                        },
                    }),
                    Part::ToolCall(call) => json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": call.arguments,
                    }),
                    Part::ToolResult(result) => json!({
                        "type": "tool_result",
                        "tool_use_id": result.id,
                        "content": result.content,
                        "is_error": result.is_error,
                    }),
                })
                .collect();
            json!({ "role": role(message.role), "content": content })
        })
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
    }
    body
}

fn openai_tools(request: &Request) -> Value {
    request
        .tools
        .iter()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            })
        })
        .collect()
}

fn openai_body(model: &str, request: &Request) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    for message in &request.messages {
        push_chat_message(&mut messages, message, |content, images| {
            content.extend(images.iter().map(|image| {
                json!({
                    "type": "image_url",
                    "image_url": { "url": format!("data:{};base64,{}", image.media_type, image.base64) },
                })
            }));
        });
    }
    let mut body = json!({ "model": model, "messages": messages });
    if !request.tools.is_empty() {
        body["tools"] = openai_tools(request);
    }
    if request.json_schema.is_some() && request.tools.is_empty() {
        body["response_format"] = json!({ "type": "json_object" });
    }
    body
}

/// One message in the OpenAI/Ollama shape: tool results as `tool` messages of their own, the
/// text and images of a user message, an assistant's text and tool calls.
fn push_chat_message(
    out: &mut Vec<Value>,
    message: &Message,
    images: impl Fn(&mut Vec<Value>, &[&super::Image]),
) {
    let mut text = Vec::new();
    let mut image_parts = Vec::new();
    let mut calls = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text(value) => text.push(value.as_str()),
            Part::Image(image) => image_parts.push(image),
            Part::ToolCall(call) => calls.push(call),
            Part::ToolResult(result) => out.push(json!({
                "role": "tool",
                "tool_call_id": result.id,
                "tool_name": result.name,
                "content": result.content,
            })),
        }
    }
    if text.is_empty() && image_parts.is_empty() && calls.is_empty() {
        return;
    }
    let joined = text.join("\n\n");
    let mut entry = Map::new();
    entry.insert("role".into(), json!(role(message.role)));
    if image_parts.is_empty() {
        entry.insert("content".into(), json!(joined));
    } else {
        let mut content = Vec::new();
        if !joined.is_empty() {
            content.push(json!({ "type": "text", "text": joined }));
        }
        images(&mut content, &image_parts);
        entry.insert("content".into(), Value::Array(content));
    }
    if !calls.is_empty() {
        entry.insert(
            "tool_calls".into(),
            calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments.to_string() },
                    })
                })
                .collect(),
        );
    }
    out.push(Value::Object(entry));
}

fn ollama_body(model: &str, request: &Request) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    for message in &request.messages {
        let at = messages.len();
        // Ollama takes images as a list of base64 strings beside a text `content`.
        push_chat_message(&mut messages, message, |_, _| {});
        let images: Vec<&str> = message
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::Image(image) => Some(image.base64.as_str()),
                _ => None,
            })
            .collect();
        if let Some(entry) = messages.get_mut(at..).and_then(|added| added.last_mut()) {
            if !images.is_empty() {
                entry["images"] = json!(images);
                if let Some(parts) = entry["content"].as_array() {
                    let text: Vec<&str> = parts
                        .iter()
                        .filter_map(|part| part["text"].as_str())
                        .collect();
                    entry["content"] = json!(text.join("\n\n"));
                }
            }
            // Ollama's tool calls carry their arguments as an object.
            if let Some(calls) = entry.get_mut("tool_calls").and_then(Value::as_array_mut) {
                for call in calls {
                    let arguments = call["function"]["arguments"]
                        .as_str()
                        .and_then(|text| serde_json::from_str::<Value>(text).ok())
                        .unwrap_or_else(|| json!({}));
                    call["function"]["arguments"] = arguments;
                }
            }
        }
    }
    let mut body = json!({ "model": model, "messages": messages, "stream": false });
    if !request.tools.is_empty() {
        body["tools"] = openai_tools(request);
    }
    if let (Some(schema), true) = (&request.json_schema, request.tools.is_empty()) {
        body["format"] = schema.clone();
    }
    body
}

/// The answer of a successful (2xx) reply, or why it is not one chromate can read.
pub fn parse(kind: ProviderKind, body: &[u8]) -> Result<Response, String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| format!("the provider's answer is not JSON ({err})"))?;
    match kind {
        ProviderKind::Anthropic => parse_anthropic(&value),
        ProviderKind::OpenAi => parse_openai(&value),
        ProviderKind::Ollama => parse_ollama(&value),
    }
}

fn parse_anthropic(value: &Value) -> Result<Response, String> {
    let blocks = value["content"]
        .as_array()
        .ok_or("the answer has no `content` list")?;
    let mut text = Vec::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => text.push(block["text"].as_str().unwrap_or_default().to_owned()),
            Some("tool_use") => tool_calls.push(ToolCall {
                id: block["id"].as_str().unwrap_or_default().to_owned(),
                name: block["name"]
                    .as_str()
                    .ok_or("a tool_use block has no name")?
                    .to_owned(),
                arguments: block["input"].clone(),
            }),
            _ => {}
        }
    }
    let stop = match value["stop_reason"].as_str() {
        Some("tool_use") => Stop::ToolUse,
        Some("max_tokens") => Stop::MaxTokens,
        Some("refusal") => Stop::Refusal,
        _ => Stop::End,
    };
    Ok(Response {
        text: text.join(""),
        tool_calls,
        stop,
    })
}

fn parse_openai(value: &Value) -> Result<Response, String> {
    let choice = value["choices"]
        .get(0)
        .ok_or("the answer has no `choices`")?;
    let message = &choice["message"];
    if let Some(refusal) = message["refusal"].as_str() {
        return Ok(Response {
            text: refusal.to_owned(),
            tool_calls: Vec::new(),
            stop: Stop::Refusal,
        });
    }
    let mut tool_calls = Vec::new();
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let function = &call["function"];
        let arguments = match &function["arguments"] {
            Value::String(text) => serde_json::from_str(text)
                .map_err(|err| format!("a tool call's arguments are not JSON ({err})"))?,
            other => other.clone(),
        };
        tool_calls.push(ToolCall {
            id: call["id"].as_str().unwrap_or_default().to_owned(),
            name: function["name"]
                .as_str()
                .ok_or("a tool call has no name")?
                .to_owned(),
            arguments,
        });
    }
    let stop = match choice["finish_reason"].as_str() {
        Some("tool_calls") => Stop::ToolUse,
        Some("length") => Stop::MaxTokens,
        Some("content_filter") => Stop::Refusal,
        _ if !tool_calls.is_empty() => Stop::ToolUse,
        _ => Stop::End,
    };
    Ok(Response {
        text: message["content"].as_str().unwrap_or_default().to_owned(),
        tool_calls,
        stop,
    })
}

fn parse_ollama(value: &Value) -> Result<Response, String> {
    let message = value
        .get("message")
        .filter(|message| message.is_object())
        .ok_or("the answer has no `message`")?;
    let mut tool_calls = Vec::new();
    for (n, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let function = &call["function"];
        let arguments = match &function["arguments"] {
            Value::String(text) => serde_json::from_str(text)
                .map_err(|err| format!("a tool call's arguments are not JSON ({err})"))?,
            other => other.clone(),
        };
        tool_calls.push(ToolCall {
            // Ollama's calls carry no id; chromate numbers them for the results it sends back.
            id: call["id"]
                .as_str()
                .map_or_else(|| format!("call_{n}"), str::to_owned),
            name: function["name"]
                .as_str()
                .ok_or("a tool call has no name")?
                .to_owned(),
            arguments,
        });
    }
    let stop = match value["done_reason"].as_str() {
        Some("length") => Stop::MaxTokens,
        _ if !tool_calls.is_empty() => Stop::ToolUse,
        _ => Stop::End,
    };
    Ok(Response {
        text: message["content"].as_str().unwrap_or_default().to_owned(),
        tool_calls,
        stop,
    })
}

/// The provider's own message out of an error body (`{"error":{"message"}}` for Anthropic and
/// OpenAI, `{"error":"…"}` for Ollama), else the body's start.
pub fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let parsed: Option<Value> = serde_json::from_str(&text).ok();
    let message = parsed.as_ref().and_then(|value| {
        value["error"]["message"]
            .as_str()
            .or_else(|| value["error"].as_str())
            .or_else(|| value["message"].as_str())
            .map(str::to_owned)
    });
    let message = message.unwrap_or_else(|| text.trim().to_owned());
    let mut cut = message.len().min(500);
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    if cut < message.len() {
        format!("{}…", &message[..cut])
    } else {
        message
    }
}
