//! The `https://` provider path (docs/llm.md#tls): `chromate describe` against the test model
//! provider served over TLS on 127.0.0.1 with a throwaway CA (`tests/support/tls.rs`).
//!
//! With the `tls` feature (as the release archives and npm packages are built; `.ci/test.sh`
//! runs `cargo test -p chromate-mcp --features tls --test llm_tls`): the client works when the
//! CA is trusted (through `SSL_CERT_FILE`, which the system trust store reader honours) and
//! fails at once, without retries, with a clear error naming the certificate and a hint when
//! it is not. Without it (the default build every other test uses): an `https://` provider
//! is refused before any connection, saying the build has no TLS. A small binary of its own:
//! the end-to-end binary built a second time with the feature would cost a full link.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use chromate_tests::mcp_client::scrubbed_command;
use chromate_tests::provider::{ProviderServer, Step};
use chromate_tests::tls::TlsCert;
use serde_json::{json, Value};

const KEY: &str = "sk-tls-SECRETKEY-0123456789abcdef";

fn metadata() -> Step {
    Step::say(
        json!({
            "page_type": "test",
            "summary": "Served over TLS.",
            "visible_text": [],
            "controls": [],
            "issues": [],
        })
        .to_string(),
    )
}

/// A 1x1 PNG in `dir`.
fn write_png(dir: &Path) {
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, 1, 1);
        encoder.set_color(png::ColorType::Rgb);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[10, 20, 30]).unwrap();
    }
    std::fs::write(dir.join("shot.png"), bytes).unwrap();
}

/// `chromate describe shot.png --json` in `dir` against `base_url`, trusting `ca_file` when
/// given (`SSL_CERT_FILE`).
fn describe(dir: &Path, base_url: &str, ca_file: Option<&Path>) -> Output {
    let mut command = scrubbed_command(env!("CARGO_BIN_EXE_chromate"), &[]);
    command
        .args(["describe", "shot.png", "--json"])
        .current_dir(dir)
        .env("CHROMATE_LLM_PROVIDER", "openai")
        .env("CHROMATE_LLM_MODEL", "test-vision")
        .env("CHROMATE_LLM_BASE_URL", base_url)
        .env("CHROMATE_LLM_TIMEOUT_MS", "10000")
        .env("OPENAI_API_KEY", KEY)
        .env_remove("SSL_CERT_DIR");
    match ca_file {
        Some(file) => command.env("SSL_CERT_FILE", file),
        None => command.env_remove("SSL_CERT_FILE"),
    };
    let output = command.output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!all.contains("SECRETKEY"), "the key leaked: {all}");
    output
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not JSON ({err}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[cfg(feature = "tls")]
#[test]
fn an_https_provider_works_when_its_ca_is_trusted_and_fails_clearly_when_not() {
    let trusted = TlsCert::generate().unwrap();
    let stranger = TlsCert::generate().unwrap();
    let server = ProviderServer::start_tls(vec![metadata()], &trusted).unwrap();
    let base_url = server.base_url("openai");
    assert!(base_url.starts_with("https://127.0.0.1:"), "{base_url}");
    let dir = tempfile::tempdir().unwrap();
    write_png(dir.path());
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &trusted.ca_pem).unwrap();
    let other_ca = dir.path().join("other-ca.pem");
    std::fs::write(&other_ca, &stranger.ca_pem).unwrap();

    // Trusted: the request arrives with the key in its header, and the answer is read.
    let output = describe(dir.path(), &base_url, Some(&ca));
    assert!(output.status.success(), "{output:?}");
    let result = json_of(&output);
    assert_eq!(result["metadata"]["summary"], "Served over TLS.");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    // Not trusted (the trust store holds another CA only): a provider error naming the
    // certificate, with a hint, at once: no request reached the server, none was retried.
    let output = describe(dir.path(), &base_url, Some(&other_ca));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let error = &json_of(&output)["error"];
    assert_eq!(error["code"], "LLM_PROVIDER_ERROR", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("TLS handshake with 127.0.0.1 failed"),
        "{message}"
    );
    assert!(message.to_lowercase().contains("certificate"), "{message}");
    assert!(
        error["hint"].as_str().unwrap().contains("SSL_CERT_FILE"),
        "{error}"
    );
    assert_eq!(error["detail"]["attempts"], 1, "not retried: {error}");
    assert_eq!(
        server.requests().len(),
        1,
        "nothing more reached the provider"
    );
}

#[cfg(not(feature = "tls"))]
#[test]
fn without_the_tls_feature_an_https_provider_is_refused_saying_so() {
    let cert = TlsCert::generate().unwrap();
    let server = ProviderServer::start_tls(vec![metadata()], &cert).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_png(dir.path());
    let output = describe(dir.path(), &server.base_url("openai"), None);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let error = &json_of(&output)["error"];
    assert_eq!(error["code"], "LLM_PROVIDER_ERROR", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("no TLS"),
        "{error}"
    );
    assert!(
        error["hint"].as_str().unwrap().contains("build with TLS"),
        "{error}"
    );
    assert!(server.requests().is_empty(), "no request was made");
}
