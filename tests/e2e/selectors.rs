//! Every selector engine (docs/mcp.md#selectors) on fixture pages: what matches, what does not, open and closed
//! shadow roots, and selectors the parser or the browser rejects.

use chromate::{actions::FindOptions, Error, ErrorCode};
use chromate_tests::browser::Fixture;
use chromate_tests::FixtureServer;

use crate::util::{close_and_check, launch, locate, open, value_of};

/// `(selector, ids of the matches in order)`; `-` stands for an element without id.
const CASES: &[(&str, &[&str])] = &[
    ("#save", &["save"]),
    ("css=button.primary.big", &["save"]),
    ("a[href=\"/next\"]", &["r-link"]),
    ("css=e7", &["literal-e7"]),
    ("xpath=//button[@id='save-copy']", &["save-copy"]),
    ("id=save", &["save"]),
    ("name=email", &["email-input"]),
    ("testid=save-btn", &["save"]),
    ("tag=H1", &["title"]),
    ("class=secondary", &["save-copy"]),
    ("text=Sign in", &["text-inner"]),
    ("text=Sign in now", &["text-button"]),
    ("text=Price: 10 EUR", &["nbsp"]),
    ("text=Hidden but matched", &["hidden-text"]),
    ("text=Hello world", &["mixed"]),
    ("text*=Save", &["save", "save-copy"]),
    // CSS-hidden elements match; only hidden/inert/aria-hidden subtrees are excluded.
    (
        "role=button[name=\"Continue\"]",
        &["r-plain", "r-div", "r-css-hidden"],
    ),
    ("role=link[name=Continue]", &["r-link"]),
    ("role=heading[name='Heading two']", &["r-heading"]),
    (
        "role=button[name=\"Say \\\"hi\\\" \\\\ bye\"]",
        &["r-quote"],
    ),
    ("role=checkbox", &["r-check", "r-aria-check"]),
    ("label=Full name", &["r-for"]),
    ("label=Age", &["r-wrap"]),
    ("label=Nickname", &["r-aria"]),
    ("label=Search the site", &["r-labelledby"]),
    ("placeholder=Email address", &["email-input"]),
    ("alt=Company logo", &["-"]),
    ("alt=Submit image", &["-"]),
    ("title=Save the document", &["save"]),
    // Shadow DOM: CSS and XPath stay out, the other engines search open roots only.
    ("id=shadow-button", &["shadow-button"]),
    ("testid=in-shadow", &["shadow-button"]),
    ("text=Shadow button", &["shadow-button"]),
    ("role=button[name=\"Shadow button\"]", &["shadow-button"]),
    ("label=Shadow field", &["shadow-field"]),
    ("placeholder=Shadow placeholder", &["shadow-field"]),
    ("title=Shadow title", &["shadow-button"]),
];

const MISSES: &[&str] = &[
    "#shadow-button",
    "xpath=//*[@id='shadow-button']",
    "id=closed-button",
    "testid=in-closed",
    "text=Closed button",
    "text=Sign",
    "text=Text inside textarea",
    "role=button[name=\"continue\"]",
    "placeholder=placeholder on a div does not count",
    "alt=alt on a span does not count",
    "name=nope",
    "tag=marquee",
    "label=Custom",
];

#[tokio::test]
async fn every_selector_form_matches_what_the_grammar_says() {
    let fixture = Fixture::start().await;
    let page = fixture.open("selectors.html").await;
    for (selector, want) in CASES {
        let locator = locate(&page, selector);
        let (exists, count) = locator
            .exists()
            .await
            .unwrap_or_else(|e| panic!("{selector}: {e}"));
        assert!(exists, "{selector} matched nothing");
        assert_eq!(count, want.len(), "{selector}");
        let found = locator
            .find(FindOptions {
                all: true,
                ..FindOptions::default()
            })
            .await
            .expect("find");
        assert_eq!(found.count, want.len(), "{selector}");
        for (i, id) in want.iter().enumerate() {
            if *id == "-" {
                continue;
            }
            let got = locator
                .find(FindOptions {
                    all: true,
                    limit: 1,
                    offset: i,
                })
                .await
                .expect("find page");
            assert_eq!(got.matches.len(), 1, "{selector} #{i}");
        }
        let first_id = locator.attribute("id").await.expect("attr").text;
        if want[0] != "-" {
            assert_eq!(first_id.as_deref(), Some(want[0]), "{selector}");
        }
    }
    for selector in MISSES {
        let locator = locate(&page, selector);
        assert_eq!(
            locator.exists().await.expect("exists"),
            (false, 0),
            "{selector} matched"
        );
        let err = locator.text().await.expect_err("no match");
        assert_eq!(err.code(), ErrorCode::NoMatch, "{selector}");
    }
    // Option text is select content (docs/mcp.md#selectors): neither the <option> nor the <select> matches it.
    let option = locate(&page, "text=Option text");
    assert_eq!(option.exists().await.expect("exists"), (false, 0));
    fixture.finish().await;
}

/// A password field is a textbox to `role=`, as Chrome's accessibility tree and Playwright's role
/// engine call it, and as the snapshot prints it (issue 28 item 6).
#[tokio::test]
async fn a_password_field_is_found_by_role_textbox() {
    let fixture = Fixture::start().await;
    let page = fixture.open("login.html").await;
    let locator = locate(&page, "role=textbox[name=\"Password\"]");
    assert_eq!(locator.exists().await.expect("exists"), (true, 1));
    let id = locator.attribute("id").await.expect("attr").text;
    assert_eq!(id.as_deref(), Some("password"));
    // Every textbox of the form: the email field and the password field.
    let all = locate(&page, "role=textbox");
    assert_eq!(all.exists().await.expect("exists"), (true, 2));
    fixture.finish().await;
}

#[tokio::test]
async fn malformed_selectors_fail_before_or_at_the_first_check() {
    // A browser of its own: refs are the browser's (a shared one may have issued e7 already,
    // and then `e7` is a stale ref, not a bare one).
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "selectors.html").await;
    for selector in ["", "ref=x", "role=butt0n", "role=button[label=x]"] {
        let err = page.locator(selector).expect_err(selector);
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{selector}");
    }
    for selector in ["css=[", "xpath=//*[", "button[["] {
        let err = locate(&page, selector).click().await.expect_err(selector);
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{selector}: {err}");
        assert!(
            err.to_string().starts_with("click: invalid selector css=")
                || err
                    .to_string()
                    .starts_with("click: invalid selector xpath="),
            "{err}"
        );
    }
    let err = locate(&page, "e7").click().await.expect_err("bare ref");
    assert_eq!(err.code(), ErrorCode::BareRef);
    let err = locate(&page, "ref=e999")
        .click()
        .await
        .expect_err("unknown ref");
    assert_eq!(err.code(), ErrorCode::StaleRef, "{err}");
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_12_a_malformed_selector_reads_in_chromates_words_without_a_period() {
    let fixture = Fixture::start().await;
    let page = fixture.open("selectors.html").await;
    for (selector, want) in [
        (
            "css=[",
            "click: invalid selector css=[: not a valid CSS selector",
        ),
        (
            "button[[",
            "click: invalid selector css=button[[: not a valid CSS selector",
        ),
        (
            "xpath=//*[",
            "click: invalid selector xpath=//*[: not a valid XPath expression",
        ),
    ] {
        match locate(&page, selector).click().await {
            Err(err @ Error::InvalidSelector { .. }) => {
                assert_eq!(err.code(), ErrorCode::InvalidArgument, "{selector}");
                assert_eq!(err.to_string(), want, "{selector}");
                let Error::InvalidSelector {
                    browser_message, ..
                } = err
                else {
                    unreachable!()
                };
                // The browser's own sentence, with its period, stays beside the message.
                let browser_message = browser_message.unwrap_or_default();
                assert!(
                    browser_message.ends_with('.'),
                    "{selector}: {browser_message:?}"
                );
            }
            other => panic!("{selector}: expected InvalidSelector, got {other:?}"),
        }
    }
    // Every verb that resolves a selector in the page words it the same way.
    let snapshot = page
        .snapshot(chromate::snapshot::SnapshotOptions {
            scope: Some(chromate::Selector::parse("css=[").expect("the grammar takes css=[")),
            ..chromate::snapshot::SnapshotOptions::default()
        })
        .await
        .expect_err("scoped to a malformed selector");
    assert_eq!(
        snapshot.to_string(),
        "snapshot: invalid selector css=[: not a valid CSS selector"
    );
    fixture.finish().await;
}

#[tokio::test]
async fn shadow_dom_pages_resolve_through_open_roots_and_slots() {
    let fixture = Fixture::start().await;
    let page = fixture.open("shadow.html").await;
    for selector in [
        "id=outer-button",
        "id=inner-input",
        "label=Inner label",
        "text=Nested slotted link",
        "id=fallback-button",
        "role=button[name=\"Save card\"]",
    ] {
        let (exists, _) = locate(&page, selector).exists().await.expect("exists");
        assert!(exists, "{selector}");
    }
    for selector in [
        "#outer-button",
        "id=closed-button",
        "text=Closed root button",
    ] {
        let (exists, _) = locate(&page, selector).exists().await.expect("exists");
        assert!(!exists, "{selector}");
    }
    locate(&page, "id=outer-button")
        .click()
        .await
        .expect("click in shadow root");
    locate(&page, "id=inner-input")
        .fill("deep")
        .await
        .expect("fill in nested root");
    assert_eq!(
        value_of(&page, "id=inner-input").await.as_deref(),
        Some("deep")
    );
    fixture.finish().await;
}
