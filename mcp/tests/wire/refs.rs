//! Wire tests: refs before any browser work (docs/mcp.md#refs).

use super::*;

#[test]
fn refs_on_a_fresh_session_fail_before_any_browser_work() {
    let mut server = start_server("fresh-refs");
    // A bare ref this session never issued: BARE_REF, and no browser is launched for it.
    let error = server.err("browser_click", json!({ "selector": "e42" }));
    assert_eq!(error["code"], json!("BARE_REF"), "{error}");
    assert_eq!(
        error["message"],
        json!("click: e42 looks like a snapshot ref but this session never issued it")
    );
    assert_eq!(error["detail"], json!({ "ref": "e42" }));
    // `ref=e1` with no snapshot yet: row 2 (no-snapshot) comes before row 3 (unknown-ref).
    for tool in ["browser_click", "browser_hover", "browser_read"] {
        let error = server.err(tool, json!({ "selector": "ref=e1" }));
        assert_eq!(error["code"], json!("STALE_REF"), "{tool}: {error}");
        assert_eq!(
            error["detail"],
            json!({ "ref": "e1", "reason": "no-snapshot" }),
            "{tool}"
        );
    }
    assert_eq!(
        server.ok("browser_status", json!({})).0["ready"],
        json!(false),
        "no browser was launched"
    );
}
