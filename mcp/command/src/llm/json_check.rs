//! A model's JSON answer checked against the schema it was asked for: the subset of JSON
//! Schema chromate's own schemas use (`type`, `properties`, `required`, `items`, `enum`,
//! `additionalProperties: false`, `minItems`), and the JSON found in a model's text.
//!
//! Owns: [`extract`] (the object in an answer that wrapped it in a code fence or prose) and
//! [`check`] (the first violation, as a sentence the repair prompt hands back to the model).

use serde_json::Value;

/// The JSON value in a model's text: the whole text, else the outermost `{…}` in it (a code
/// fence or a sentence around it).
pub fn extract(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Ok(value);
    }
    let (Some(start), Some(end)) = (trimmed.find('{'), trimmed.rfind('}')) else {
        return Err("the answer holds no JSON object".into());
    };
    trimmed
        .get(start..=end)
        .ok_or_else(|| "the answer holds no JSON object".to_owned())
        .and_then(|inner| {
            serde_json::from_str(inner)
                .map_err(|err| format!("the answer is not valid JSON: {err}"))
        })
}

/// The first place `value` breaks `schema`, e.g. "`$.controls[2].role`: expected a string".
pub fn check(value: &Value, schema: &Value) -> Result<(), String> {
    walk(value, schema, "$")
}

fn type_matches(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        _ => true,
    }
}

fn walk(value: &Value, schema: &Value, at: &str) -> Result<(), String> {
    match &schema["type"] {
        Value::String(name) if !type_matches(value, name) => {
            return Err(format!("`{at}`: expected {}", article(name)));
        }
        Value::Array(names)
            if !names
                .iter()
                .filter_map(Value::as_str)
                .any(|name| type_matches(value, name)) =>
        {
            let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
            return Err(format!("`{at}`: expected one of {}", names.join(", ")));
        }
        _ => {}
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
            return Err(format!("`{at}`: must be one of {}", allowed.join(", ")));
        }
    }
    if let Value::Object(object) = value {
        for name in schema["required"].as_array().into_iter().flatten() {
            if let Some(name) = name.as_str() {
                if !object.contains_key(name) {
                    return Err(format!("`{at}`: missing `{name}`"));
                }
            }
        }
        let properties = schema["properties"].as_object();
        for (name, field) in object {
            match properties.and_then(|properties| properties.get(name)) {
                Some(field_schema) => walk(field, field_schema, &format!("{at}.{name}"))?,
                None if schema["additionalProperties"] == Value::Bool(false) => {
                    return Err(format!("`{at}`: unexpected field `{name}`"));
                }
                None => {}
            }
        }
    }
    if let Value::Array(items) = value {
        if let Some(min) = schema["minItems"].as_u64() {
            if (items.len() as u64) < min {
                return Err(format!("`{at}`: at least {min} items"));
            }
        }
        if let Some(item_schema) = schema.get("items") {
            for (n, item) in items.iter().enumerate() {
                walk(item, item_schema, &format!("{at}[{n}]"))?;
            }
        }
    }
    Ok(())
}

fn article(name: &str) -> String {
    match name {
        "object" | "array" | "integer" => format!("an {name}"),
        "null" => "null".into(),
        _ => format!("a {name}"),
    }
}
