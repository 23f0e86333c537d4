//! The snapshot's roles and names against Chrome's own accessibility tree: for every listed
//! element of the fixture pages, the role and name chromate prints must be what
//! `Accessibility.getPartialAXTree` reports for that node, except where the contract differs on
//! purpose (names cut at 80 characters, containers named only from explicit labels, text-class
//! and live-region lines, and roles Chrome spells with its own internal names).

use chromate::{LineKind, SnapshotOptions, WaitUntil};
use chromate_tests::FixtureServer;

use crate::util::{close_and_check, launch, NAV};

/// Chrome's role names that differ in spelling from the ARIA role chromate prints.
fn chrome_role(aria: &str) -> &str {
    match aria {
        "img" => "image",
        other => other,
    }
}

/// Roles whose name and role chromate takes from Chrome's own rules (ARIA in HTML) and must
/// agree on; lines with other roles (tags printed as roles, text, summary, editing hosts) differ
/// on purpose.
const COMPARED: &[&str] = &[
    "button",
    "link",
    "heading",
    "textbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "tab",
    "menuitem",
    "switch",
    "slider",
    "spinbutton",
    "searchbox",
    "img",
];

/// Role differences the contract makes on purpose (§7.3): `summary` is a button (Chrome: a
/// disclosure triangle) and a contenteditable host is a textbox (Chrome: generic).
fn deliberate(ours: &str, chrome: &str) -> bool {
    matches!(
        (ours, chrome),
        ("button", "DisclosureTriangle") | ("textbox", "generic")
    )
}

fn contract_name(chrome: &str) -> String {
    let normalised = chrome.split_whitespace().collect::<Vec<_>>().join(" ");
    if normalised.chars().count() > 80 {
        let mut cut: String = normalised.chars().take(79).collect();
        cut.push('…');
        cut
    } else {
        normalised
    }
}

#[tokio::test]
async fn snapshot_roles_and_names_agree_with_chromes_accessibility_tree() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for path in [
        "roles.html",
        "login.html",
        "dashboard.html",
        "selectors.html",
        "shadow.html",
        "hidden.html",
        "secrets.html",
    ] {
        page.goto(&server.url(path), WaitUntil::Load, NAV)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let snapshot = page
            .snapshot(SnapshotOptions {
                max_lines: 5000,
                ..SnapshotOptions::default()
            })
            .await
            .expect("snapshot");
        for line in &snapshot.lines {
            let Some(element_ref) = line.element_ref else {
                continue;
            };
            if line.kind != LineKind::Semantic
                || line.container
                || !COMPARED.contains(&line.role.as_str())
            {
                continue;
            }
            let locator = page
                .locator(&format!("ref={element_ref}"))
                .expect("ref selector");
            let Some((role, name)) = locator.browser_accessibility().await.expect("ax node") else {
                mismatches.push(format!("{path}: {line}: chrome ignores the node"));
                continue;
            };
            compared += 1;
            let ours = line.name.clone().unwrap_or_default();
            let role_agrees = role == chrome_role(&line.role) || deliberate(&line.role, &role);
            if !role_agrees || ours != contract_name(&name) {
                mismatches.push(format!("{path}: {line}  — chrome: {role} {name:?}"));
            }
        }
    }
    close_and_check(browser).await;
    assert!(compared >= 40, "only {compared} lines compared");
    assert!(
        mismatches.is_empty(),
        "{} of {compared} lines differ from chrome:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
