//! Wire tests: spilling and the response cap.

use super::*;

#[test]
fn large_text_spills_to_the_session_directory() {
    let mut server = start_server_with("spill", &[], &[("CHROMATE_MCP_SPILL_BYTES", "200")]);
    for idx in 0..5 {
        server.ok(
            "browser_mock",
            json!({ "action": "block", "pattern": format!("https://spill.test/{idx}/*") }),
        );
    }
    let response = server.call("browser_mock", json!({}));
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let last = text.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("(full output: ") && last.ends_with(" bytes)"),
        "{text}"
    );
    let path = last
        .trim_start_matches("(full output: ")
        .split(", ")
        .next()
        .unwrap_or_default();
    assert!(path.ends_with("/0001-browser_mock.json"), "{path}");
    let full = std::fs::read_to_string(path).unwrap_or_default();
    let full: Value = serde_json::from_str(&full).unwrap_or_default();
    assert_eq!(full["count"], json!(5), "{full}");
    assert_eq!(full["mocks"][4]["pattern"], json!("https://spill.test/4/*"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0)
        };
        assert_eq!(mode(Path::new(path)), 0o600);
        assert_eq!(
            mode(Path::new(path).parent().unwrap_or(Path::new("/"))),
            0o700
        );
    }
}

#[test]
fn artifact_quota_turns_spills_into_truncated_text() {
    let mut server = start_server_with(
        "quota",
        &[],
        &[
            ("CHROMATE_MCP_SPILL_BYTES", "100"),
            ("CHROMATE_MCP_MAX_ARTIFACT_FILES", "0"),
        ],
    );
    for idx in 0..5 {
        server.ok(
            "browser_mock",
            json!({ "action": "block", "pattern": format!("https://quota.test/{idx}/*") }),
        );
    }
    let response = server.call("browser_mock", json!({}));
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.ends_with("… (truncated: artifact quota reached)"),
        "{text}"
    );
    assert!(text.len() <= 100);
}

#[test]
fn responses_over_the_cap_truncate_the_result_json() {
    for structured in [false, true] {
        let args: &[&str] = if structured {
            &["--structured-content"]
        } else {
            &[]
        };
        let mut server = start_server_with(
            "cap",
            args,
            &[
                ("CHROMATE_MCP_MAX_RESPONSE_BYTES", "1024"),
                ("CHROMATE_MCP_SPILL_BYTES", "100000"),
            ],
        );
        for idx in 0..20 {
            server.call("browser_mock", json!({ "action": "block", "pattern": format!("https://cap.test/{idx}/{}", "p".repeat(100)) }));
        }
        let id = server.fresh_id();
        server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "browser_mock" } }));
        let response = server.response(&json!(id));
        assert!(
            response.to_string().len() <= 1024,
            "{} bytes",
            response.to_string().len()
        );
        // By default the result JSON is content[0]; with structuredContent on, that copy is
        // truncated too (and may then be cut), the structured one stays whole JSON.
        let result = if structured {
            response["result"]["structuredContent"]["result"].clone()
        } else {
            assert!(response["result"].get("structuredContent").is_none());
            result_json(&response["result"])
        };
        {
            assert_eq!(result["truncated"], json!(true), "{response}");
            assert!(result["totalBytes"].as_u64().unwrap_or(0) > 2000);
            assert!(result["fullOutput"]
                .as_str()
                .is_some_and(|path| path.ends_with("-browser_mock.json")));
        }
    }
}
