//! Wire tests: resources.

use super::*;

#[test]
fn artifacts_are_listed_and_read_as_resources_and_nothing_else_is() {
    let mut server = start_server_with("resources", &[], &[("CHROMATE_MCP_SPILL_BYTES", "600")]);
    assert_eq!(
        server.request("resources/list", json!({}))["result"],
        json!({ "resources": [] })
    );
    for idx in 0..5 {
        server.ok(
            "browser_mock",
            json!({ "action": "block", "pattern": format!("https://res.test/{idx}/{}", "p".repeat(100)) }),
        );
    }
    // The listing spills to `0001-browser_mock.json`.
    let listing = server.call("browser_mock", json!({}));
    let listed = server.request("resources/list", json!({}))["result"].clone();
    let resources = listed["resources"].as_array().cloned().unwrap_or_default();
    assert_eq!(resources.len(), 1, "{listed}");
    let resource = &resources[0];
    assert_eq!(resource["name"], json!("0001-browser_mock.json"));
    assert_eq!(resource["mimeType"], json!("application/json"));
    let uri = resource["uri"].as_str().unwrap_or_default().to_owned();
    let path = uri.trim_start_matches("file://");
    let text = listing["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains(&format!("(full output: {path}, ")), "{text}");

    let read = server.request("resources/read", json!({ "uri": uri }))["result"].clone();
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], json!(uri));
    let full: Value =
        serde_json::from_str(contents["text"].as_str().unwrap_or_default()).unwrap_or_default();
    assert_eq!(full["count"], json!(5), "{read}");
    assert_eq!(
        resource["size"],
        json!(contents["text"].as_str().map_or(0, str::len))
    );

    // Outside the session directory, `..`, other schemes: unknown, whether the file exists
    // or not.
    let outside = server.artifacts_dir().join("outside.txt");
    std::fs::write(&outside, "secret").unwrap_or_default();
    let dir = Path::new(path).parent().unwrap_or(Path::new("/"));
    for bad in [
        format!("file://{}", outside.display()),
        format!("file://{}/../outside.txt", dir.display()),
        "file:///etc/passwd".to_owned(),
        "http://127.0.0.1:1/x".to_owned(),
        format!("file://{}", dir.display()),
    ] {
        let response = server.request("resources/read", json!({ "uri": bad }));
        assert_eq!(
            error_of(&response),
            (-32002, format!("unknown resource {bad}")),
            "{response}"
        );
    }
    #[cfg(unix)]
    {
        let link = dir.join("0002-link.txt");
        std::os::unix::fs::symlink(&outside, &link).unwrap_or_default();
        let bad = format!("file://{}", link.display());
        let response = server.request("resources/read", json!({ "uri": bad }));
        assert_eq!(error_of(&response).0, -32002, "{response}");
    }
    let response = server.request("resources/read", json!({}));
    assert_eq!(error_of(&response).0, -32602);
    // Reading launched nothing.
    assert_eq!(
        server.ok("browser_status", json!({})).0["ready"],
        json!(false)
    );
}
