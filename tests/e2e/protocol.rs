//! The generated bindings against the live browser: nothing it reports is missing (drift), and
//! every message of a scripted session decodes into its typed form.

use std::collections::BTreeMap;
use std::time::Duration;

use chromate::cdp::{self, accessibility, dom, runtime, CdpEvent};
use chromate::WaitUntil;
use chromate_tests::{ExternalChromium, FixtureServer};

use crate::util::{close_and_check, launch, NAV};

#[tokio::test]
async fn every_domain_command_and_event_the_browser_reports_is_in_the_bindings() {
    let external = ExternalChromium::start().expect("chromium with a debugging port");
    let body = external.get("/json/protocol").expect("/json/protocol");
    let live: serde_json::Value = serde_json::from_str(&body).expect("protocol json");
    let mut missing = Vec::new();
    let domains = live["domains"].as_array().expect("domains");
    for domain in domains {
        let name = domain["domain"].as_str().expect("domain name");
        if !cdp::DOMAINS.contains(&name) {
            missing.push(format!("domain {name}"));
        }
        for (key, known) in [("commands", cdp::COMMANDS), ("events", cdp::EVENTS)] {
            for item in domain[key].as_array().into_iter().flatten() {
                let method = format!("{name}.{}", item["name"].as_str().unwrap_or_default());
                if !known.contains(&method.as_str()) {
                    missing.push(format!("{key} {method}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the bindings lack {} items the browser reports:\n{}",
        missing.len(),
        missing.join("\n")
    );
    assert!(
        domains.len() >= 50,
        "only {} domains reported",
        domains.len()
    );
}

#[tokio::test]
async fn every_message_of_a_scripted_session_decodes_into_its_typed_form() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let mut events = browser.raw_events();
    let collector = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(item) = events.recv().await {
            match item {
                Ok(message) => seen.push(message),
                Err(lost) => panic!("the collector lost {lost} events"),
            }
        }
        seen
    });

    let page = browser.new_page("about:blank").await.expect("page");
    let session = page.session().clone();
    let mut n_responses = 0;
    for path in [
        "login.html",
        "console.html",
        "dashboard.html",
        "shadow.html",
        "controls.html",
    ] {
        page.goto(&server.url(path), WaitUntil::Load, NAV)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let document = session
            .send(&dom::GetDocumentParams::default().depth(-1).pierce(true))
            .await
            .expect("DOM.getDocument");
        assert!(
            document.root.child_node_count.unwrap_or(0) > 0 || document.root.children.is_some()
        );
        let tree = session
            .send(&accessibility::GetFullAXTreeParams::default())
            .await
            .expect("getFullAXTree");
        assert!(!tree.nodes.is_empty(), "{path}: empty accessibility tree");
        let eval = session
            .send(
                &runtime::EvaluateParams::new("document.querySelectorAll('*').length")
                    .return_by_value(true),
            )
            .await
            .expect("evaluate");
        assert!(eval.result.value.is_some());
        n_responses += 3;
    }
    // An exception, console output of every level, and a dialog.
    page.evaluate("setTimeout(() => { throw new TypeError('boom') }, 0); console.error('e', {a: 1}); console.warn('w'); console.debug('d'); 1").await.expect("eval");
    let _ = page.evaluate("alert('hello')").await;
    page.wait_for_dialog(NAV).await.expect("dialog opened");
    page.accept_dialog(None).await.expect("accept");
    page.evaluate("1").await.expect("ordering round trip");
    n_responses += 3;

    close_and_check(browser).await;
    let seen = tokio::time::timeout(Duration::from_secs(10), collector)
        .await
        .expect("collector ends")
        .expect("join");
    let mut by_method: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for message in &seen {
        *by_method.entry(message.method.clone()).or_default() += 1;
        if let CdpEvent::Raw(raw) = CdpEvent::decode(&message.method, &message.params) {
            failures.push(format!(
                "{}: {}",
                raw.method,
                raw.error.unwrap_or_else(|| "unknown method".into())
            ));
        }
    }
    eprintln!(
        "decoded {} events of {} kinds and {n_responses} typed responses",
        seen.len(),
        by_method.len()
    );
    assert!(
        failures.is_empty(),
        "{} events failed to decode:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for expected in [
        "Runtime.consoleAPICalled",
        "Runtime.exceptionThrown",
        "Page.javascriptDialogOpening",
        "Network.requestWillBeSent",
        "Network.responseReceived",
        "Page.lifecycleEvent",
        "Target.attachedToTarget",
    ] {
        assert!(
            by_method.contains_key(expected),
            "no {expected} in the session: {by_method:?}"
        );
    }
    assert!(seen.len() > 100, "only {} events", seen.len());
}
