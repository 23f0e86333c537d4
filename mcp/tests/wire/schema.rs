//! Wire tests: tools/list and the schema walk.

use super::*;

#[test]
fn tools_list_matches_the_golden_and_fits_the_budget() {
    let mut server = start_server("tools-list");
    let result = server.request("tools/list", json!({}))["result"].clone();
    let compact = result.to_string();
    assert!(
        compact.len() <= 24_576,
        "tools/list is {} bytes",
        compact.len()
    );
    let pretty = serde_json::to_string_pretty(&result).unwrap_or_default();
    expect_file!["../expected/tools_list.json"].assert_eq(&format!("{pretty}\n"));
}

/// A value that satisfies a property schema.
fn valid_value(schema: &Value) -> Value {
    if let Some(values) = schema["enum"].as_array() {
        return values[0].clone();
    }
    match schema["type"].as_str() {
        Some("string") => json!("x"),
        Some("integer") | Some("number") => schema["minimum"].clone(),
        Some("boolean") => json!(false),
        Some("array") if schema["items"]["type"] == "object" => {
            json!([{ "tool": "browser_status" }])
        }
        Some("array") => json!(["x"]),
        other => panic!("unexpected schema type {other:?}"),
    }
}

fn minimal_arguments(schema: &Value) -> Map<String, Value> {
    let mut arguments = Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap_or_default();
        arguments.insert(name.to_owned(), valid_value(&schema["properties"][name]));
    }
    arguments
}

/// A marker replaced by a raw overflow literal in the frame text.
const OVERFLOW: &str = "__overflow_literal__";

struct Walk<'a> {
    server: &'a mut McpClient,
    tool: String,
    base: Map<String, Value>,
    n_checked: usize,
}

impl Walk<'_> {
    /// Calls the tool with `name` set to `value` and expects the INVALID_ARGUMENT tool error
    /// naming `argument`.
    fn rejects(&mut self, name: &str, value: Value, argument: &str, what: &str) {
        let mut arguments = self.base.clone();
        arguments.insert(name.to_owned(), value);
        self.rejects_arguments(Value::Object(arguments), argument, what);
    }

    fn rejects_arguments(&mut self, arguments: Value, argument: &str, what: &str) {
        let id = self.server.fresh_id();
        let frame = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": self.tool, "arguments": arguments } })
            .to_string()
            .replace(&format!("\"{OVERFLOW}\""), "1e400");
        self.server.send_raw(format!("{frame}\n").as_bytes());
        let response = self.server.response(&json!(id));
        let context = format!("{} {what} ({argument}): {response}", self.tool);
        let (message, detail) = validation_error(&response);
        assert!(
            message.starts_with(&format!("{}: ", self.tool)),
            "{context}"
        );
        // A batch step's message names the step's own argument.
        let named = argument.rsplit(".arguments.").next().unwrap_or(argument);
        assert!(message.contains(&format!("\"{named}")), "{context}");
        assert_eq!(detail["tool"], json!(self.tool), "{context}");
        let data_argument = detail["argument"].as_str().unwrap_or_default();
        assert!(data_argument.starts_with(argument), "{context}");
        self.n_checked += 1;
    }
}

#[test]
fn every_declared_constraint_of_every_tool_is_enforced() {
    let mut server = start_server("schema-walk");
    let tools = server.request("tools/list", json!({}))["result"]["tools"].clone();
    let mut n_checked = 0;
    for tool in tools.as_array().into_iter().flatten() {
        let name = tool["name"].as_str().unwrap_or_default().to_owned();
        let schema = &tool["inputSchema"];
        assert_eq!(schema["additionalProperties"], json!(false), "{name}");
        let base = minimal_arguments(schema);
        // The minimal arguments pass validation: whatever the call then does, it is no
        // argument error (those carry `detail.tool`; cross-argument rules do not).
        let response = server.call(&name, Value::Object(base.clone()));
        assert!(
            response.get("result").is_some()
                && response["result"]["structuredContent"]["error"]["detail"]
                    .get("tool")
                    .is_none(),
            "{name} minimal arguments rejected: {response}"
        );
        let mut walk = Walk {
            server: &mut server,
            tool: name.clone(),
            base,
            n_checked: 0,
        };
        walk.rejects("zz_unknown", json!(1), "zz_unknown", "unknown argument");
        for required in schema["required"].as_array().into_iter().flatten() {
            let required = required.as_str().unwrap_or_default();
            let mut arguments = walk.base.clone();
            arguments.remove(required);
            walk.rejects_arguments(Value::Object(arguments.clone()), required, "required");
            arguments.insert(required.to_owned(), Value::Null);
            walk.rejects_arguments(Value::Object(arguments), required, "required (null)");
        }
        for (property, prop) in schema["properties"].as_object().into_iter().flatten() {
            let mut covered: Vec<&str> = vec!["type", "description", "default", "items"];
            match prop["type"].as_str() {
                Some("string") => {
                    walk.rejects(property, json!(5), property, "type");
                    walk.rejects(property, json!(true), property, "type");
                    if let Some(values) = prop["enum"].as_array() {
                        walk.rejects(property, json!("not-a-listed-value"), property, "enum");
                        assert!(!values.is_empty());
                        covered.push("enum");
                    }
                    if let Some(max) = prop["maxLength"].as_u64() {
                        walk.rejects(
                            property,
                            json!("a".repeat(max as usize + 1)),
                            property,
                            "maxLength",
                        );
                        walk.rejects(
                            property,
                            json!("é".repeat(max as usize + 1)),
                            property,
                            "maxLength (code points)",
                        );
                        covered.push("maxLength");
                    }
                    if prop["minLength"].as_u64().is_some() {
                        walk.rejects(property, json!(""), property, "minLength");
                        covered.push("minLength");
                    }
                    if prop["pattern"].is_string() {
                        walk.rejects(property, json!("bad/name"), property, "pattern");
                        walk.rejects(property, json!(".hidden"), property, "pattern");
                        covered.push("pattern");
                    }
                }
                Some(kind @ ("integer" | "number")) => {
                    walk.rejects(property, json!("5"), property, "type");
                    walk.rejects(property, json!(OVERFLOW), property, "finite");
                    let min = prop["minimum"].as_f64().unwrap_or(0.0);
                    let max = prop["maximum"].as_f64().unwrap_or(0.0);
                    walk.rejects(property, json!(min - 1.0), property, "minimum");
                    walk.rejects(property, json!(max + 1.0), property, "maximum");
                    covered.extend(["minimum", "maximum"]);
                    if kind == "integer" {
                        walk.rejects(property, json!(min + 0.5), property, "integer");
                    }
                }
                Some("boolean") => {
                    walk.rejects(property, json!("true"), property, "type");
                    walk.rejects(property, json!(1), property, "type");
                }
                Some("array") => {
                    walk.rejects(property, json!("x"), property, "type");
                    let max = prop["maxItems"].as_u64().unwrap_or(0) as usize;
                    let item =
                        valid_value(&json!({ "type": "array", "items": prop["items"] }))[0].clone();
                    walk.rejects(
                        property,
                        Value::Array(vec![item; max + 1]),
                        property,
                        "maxItems",
                    );
                    covered.push("maxItems");
                    if prop["minItems"].as_u64().is_some_and(|min| min > 0) {
                        walk.rejects(property, json!([]), property, "minItems");
                        covered.push("minItems");
                    }
                    let items = &prop["items"];
                    let first = format!("{property}[0]");
                    walk.rejects(property, json!([5]), &first, "item type");
                    if let Some(item_max) = items["maxLength"].as_u64() {
                        walk.rejects(
                            property,
                            json!(["a".repeat(item_max as usize + 1)]),
                            &first,
                            "item maxLength",
                        );
                    }
                    if items["minLength"].as_u64().is_some() {
                        walk.rejects(
                            property,
                            json!(["ok", ""]),
                            &format!("{property}[1]"),
                            "item minLength",
                        );
                    }
                    if items["type"] == "object" {
                        // browser_batch steps: item shape, tool enum, nesting, nested arguments.
                        walk.rejects(
                            property,
                            json!([{ "tool": "browser_status", "x": 1 }]),
                            &format!("{first}.x"),
                            "item unknown key",
                        );
                        walk.rejects(
                            property,
                            json!([{ "tool": "browser_nope" }]),
                            &format!("{first}.tool"),
                            "item tool enum",
                        );
                        walk.rejects(
                            property,
                            json!([{}]),
                            &format!("{first}.tool"),
                            "item tool required",
                        );
                        walk.rejects(
                            property,
                            json!([{ "tool": "browser_status", "arguments": [] }]),
                            &format!("{first}.arguments"),
                            "item arguments type",
                        );
                        walk.rejects(property, json!([{ "tool": "browser_status" }, { "tool": "browser_logs", "arguments": { "limit": 0 } }]), "steps[1].arguments.limit", "nested argument");
                        let nested = walk.server.call(
                            &name,
                            json!({ "steps": [{ "tool": name, "arguments": {} }] }),
                        );
                        let (message, detail) = validation_error(&nested);
                        assert_eq!(message, "browser_batch: steps[0] (browser_batch): browser_batch cannot be nested");
                        assert_eq!(detail["argument"], json!("steps[0].tool"));
                    }
                }
                other => panic!("{name}.{property}: unexpected type {other:?}"),
            }
            for key in prop
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, _)| key.as_str())
            {
                assert!(
                    covered.contains(&key),
                    "{name}.{property}: constraint {key} is not exercised"
                );
            }
        }
        n_checked += walk.n_checked;
    }
    assert!(n_checked > 400, "only {n_checked} rejections checked");
}
