//! Unit tests of the projection: names, descriptions, schemas, origins, the header line.

use super::*;

fn tool(name: &str, description: &str) -> chromate::page::WebMcpTool {
    chromate::page::WebMcpTool {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: None,
        frame_id: "F".to_owned(),
        read_only: false,
        untrusted_content: false,
        consequential: false,
        declarative: false,
    }
}

fn names(tools: Vec<chromate::page::WebMcpTool>) -> Vec<String> {
    project_tools(tools, &["browser_webmcp"], |_| {
        ("http://127.0.0.1:1".to_owned(), false)
    })
    .into_iter()
    .map(|projected| projected.name)
    .collect()
}

#[test]
fn names_are_sanitised_bounded_and_numbered() {
    let long = "x".repeat(200);
    let got = names(vec![
        tool("add_to_cart", ""),
        tool("a.b c<d>ü", ""),
        tool("a_b_c_d__", ""),
        tool("", ""),
        tool(&long, ""),
        tool(&long, ""),
        tool("a.b", ""),
        tool("a_b", ""),
    ]);
    assert_eq!(got[0], "webmcp_add_to_cart");
    assert_eq!(got[1], "webmcp_a_b_c_d__");
    assert_eq!(got[2], "webmcp_a_b_c_d___2");
    assert_eq!(got[3], "webmcp_tool");
    assert_eq!(got[4], format!("webmcp_{}", "x".repeat(57)));
    assert_eq!(got[5], format!("webmcp_{}_2", "x".repeat(55)));
    assert_eq!(got[6], "webmcp_a_b");
    assert_eq!(got[7], "webmcp_a_b_2");
    for name in &got {
        assert!(name.len() <= NAME_MAX, "{name}");
        assert!(name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }
}

#[test]
fn descriptions_are_bounded_and_say_where_they_come_from() {
    let mut hostile = tool("big", &"d".repeat(10 * 1024));
    hostile.consequential = true;
    hostile.untrusted_content = true;
    let projected = project_tools(vec![hostile], &[], |_| {
        ("https://shop.test".to_owned(), true)
    });
    let text = projected[0].description();
    assert!(text.starts_with(
        "A tool a frame inside the page offers (WebMCP), origin https://shop.test: ddd"
    ));
    assert!(text.contains("… (cut at 1024 of 10240 characters)"));
    assert!(text.contains("confirm with the user"));
    assert!(text.contains("untrusted content"));
    assert!(text.len() < 1600, "{}", text.len());
    let entry = projected[0].to_json();
    assert_eq!(entry["annotations"]["destructiveHint"], true);
    assert_eq!(entry["annotations"]["readOnlyHint"], false);
    assert_eq!(entry["inputSchema"], json!({ "type": "object" }));
}

#[test]
fn only_an_object_schema_passes_through() {
    let mut array = tool("a", "");
    array.input_schema = Some(json!({ "type": "array" }));
    let mut object = tool("b", "");
    object.input_schema =
        Some(json!({ "type": "object", "properties": { "q": { "type": "string" } } }));
    let projected = project_tools(vec![array, object], &[], |_| (String::new(), false));
    assert_eq!(projected[0].input_schema(), json!({ "type": "object" }));
    assert_eq!(
        projected[1].input_schema()["properties"]["q"]["type"],
        "string"
    );
}

#[test]
fn origins_and_the_header_line() {
    assert_eq!(
        origin("http://user:pw@127.0.0.1:8080/a?b#c"),
        "http://127.0.0.1:8080"
    );
    assert_eq!(origin("about:blank"), "about:");
    let tools: Vec<_> = (0..7).map(|n| tool(&format!("t{n}"), "")).collect();
    let projected = project_tools(tools, &[], |_| (String::new(), false));
    assert_eq!(
        header_line(&projected).as_deref(),
        Some("webmcp: 7 tools: t0, t1, t2, t3, t4, …")
    );
    assert_eq!(
        header_line(&projected[..1]).as_deref(),
        Some("webmcp: 1 tool: t0")
    );
    assert_eq!(header_line(&[]), None);
}
