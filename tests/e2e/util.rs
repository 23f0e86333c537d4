//! Helpers shared by the test modules: launching a browser and proving it is gone, opening
//! pages, and locating and reading elements with panics that name the selector.

use chromate::{Browser, Locator, Page, WaitUntil};
use chromate_tests::FixtureServer;

pub(crate) use chromate_tests::browser::{close_and_check, launch, new_page_at, NAV};

/// A new tab on about:blank that then navigates to the fixture `path` and waits for its load.
pub(crate) async fn open(browser: &Browser, server: &FixtureServer, path: &str) -> Page {
    let page = browser.new_page("about:blank").await.expect("page");
    page.goto(&server.url(path), WaitUntil::Load, NAV)
        .await
        .expect("navigate");
    page
}

/// The locator for `selector`, which the test wrote and expects to parse.
pub(crate) fn locate(page: &Page, selector: &str) -> Locator {
    page.locator(selector)
        .unwrap_or_else(|e| panic!("selector {selector}: {e}"))
}

/// The `value` property of the first match of `selector`.
pub(crate) async fn value_of(page: &Page, selector: &str) -> Option<String> {
    locate(page, selector)
        .value()
        .await
        .unwrap_or_else(|e| panic!("value of {selector}: {e}"))
        .text
}
