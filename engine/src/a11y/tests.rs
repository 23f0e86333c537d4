//! The axe-core lookup's error messages, with and without a built-in copy.

use super::*;

fn message(error: Error) -> String {
    match error {
        Error::StateInvalid { message } => message,
        other => panic!("not STATE_INVALID: {other:?}"),
    }
}

#[test]
fn a_build_without_axe_core_says_how_to_get_it() {
    let tried = vec!["/opt/chromate/axe/axe.min.js".to_string()];
    expect_test::expect![[r#"a11y: axe-core is not installed (tried: /opt/chromate/axe/axe.min.js); set CHROMATE_AXE_PATH to an axe.min.js (`npm install axe-core@4.14.1` puts one in node_modules/axe-core/); this chromate was built without axe-core: release builds (`npm install -g chromate-mcp`, the release archives) and `cargo install chromate-mcp` embed it, and a build from a checkout does after `npm ci --prefix engine/axe` (or `bash .ci/setup.sh browser`)"#]]
    .assert_eq(&message(not_installed(&tried, false)));
}

#[test]
fn a_wrong_axe_path_with_a_built_in_copy_says_to_unset_it() {
    let tried = vec!["/nonexistent/axe.min.js".to_string()];
    expect_test::expect![[r#"a11y: axe-core is not installed (tried: /nonexistent/axe.min.js); set CHROMATE_AXE_PATH to an axe.min.js (`npm install axe-core@4.14.1` puts one in node_modules/axe-core/); unset CHROMATE_AXE_PATH to use the axe-core built into chromate"#]]
    .assert_eq(&message(not_installed(&tried, true)));
}

#[test]
fn the_version_named_is_the_pin() {
    let pin = include_str!("../../axe/package.json");
    assert!(pin.contains(&format!(
        "\"axe-core\": \"{}\"",
        env!("CHROMATE_AXE_VERSION")
    )));
}

/// This checkout installed axe-core (.ci/setup.sh), so the build embedded it.
#[test]
fn a_build_with_axe_core_installed_embeds_it() {
    let installed = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("axe/node_modules/axe-core/axe.min.js")
        .is_file();
    assert_eq!(js::AXE.is_some(), installed);
    if let Some(embedded) = js::AXE {
        assert!(embedded.contains("axe.version"), "{}", &embedded[..200]);
    }
}

/// One recorded `{ok: false}` answer of `a11y.run` per `error` the scripts write.
fn recorded_failures() -> Vec<Value> {
    vec![
        json!({"ok": false, "error": "axe-missing"}),
        json!({"ok": false, "error": "unknown-rule", "ids": ["no-such-rule"]}),
        json!({"ok": false, "error": "no-match", "canonical": "css=#nope"}),
        json!({"ok": false, "error": "stale-ref", "ref": 4, "status": "detached", "canonical": "ref=e4"}),
        json!({"ok": false, "error": "invalid selector", "reason": "bad css", "browserMessage": "'[' is not valid"}),
        json!({"ok": false, "error": "superseded"}),
    ]
}

#[test]
fn every_error_the_audit_scripts_write_decodes() {
    let mut written = crate::js::literals_after(crate::js::A11Y, "error: \"");
    written.extend(crate::js::literals_after(crate::js::SELECTOR, "error: \""));
    written.sort();
    written.dedup();
    let mut recorded: Vec<String> = recorded_failures()
        .iter()
        .filter_map(|answer| answer["error"].as_str().map(str::to_owned))
        .collect();
    recorded.sort();
    assert_eq!(
        recorded, written,
        "a11y.js/selector.js and the recorded answers differ"
    );
    for answer in recorded_failures() {
        let decoded = serde_json::from_value::<RunFailure>(answer.clone());
        assert!(decoded.is_ok(), "{answer} does not decode: {decoded:?}");
    }
}

#[test]
fn each_audit_failure_is_its_error() {
    let codes: Vec<crate::ErrorCode> = recorded_failures()
        .iter()
        .map(|answer| run_error(answer, "css=#scope").code())
        .collect();
    use crate::ErrorCode::*;
    assert_eq!(
        codes,
        [
            StateInvalid,
            InvalidArgument,
            NoMatch,
            StaleRef,
            InvalidArgument,
            StateInvalid
        ]
    );
    assert_eq!(
        run_error(&recorded_failures()[1], "").to_string(),
        "a11y: unknown axe rule id no-such-rule"
    );
    let typo = run_error(&json!({"ok": false, "error": "no-matsh"}), "css=#scope");
    assert!(matches!(typo, Error::Decode { .. }), "{typo:?}");
    let bad_status = run_error(
        &json!({"ok": false, "error": "stale-ref", "ref": 4, "status": "detatched"}),
        "ref=e4",
    );
    assert!(
        matches!(bad_status, Error::UnknownStatus { .. }),
        "{bad_status:?}"
    );
}
