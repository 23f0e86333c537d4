//! Evidence on real Chromium: screenshots (frozen and masked captures byte-identical, element
//! and full-page sizes from the PNG header, no scrolling) and axe-core audits (exactly the
//! fixture's three violations, each node with a ref that resolves to its element).

use std::time::Duration;

use chromate::{
    actions::ElementState,
    audit::{AuditOptions, Impact},
    capture::{ScreenshotOptions, ScreenshotTarget},
};
use chromate_tests::browser::Fixture;

/// Width and height from a PNG's IHDR chunk, checked independently of the engine.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.len() > 24, "too short for a png: {} bytes", png.len());
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a png signature");
    assert_eq!(&png[12..16], b"IHDR", "the first chunk is not IHDR");
    let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    (width, height)
}

/// A `data:` URL of an HTML document.
fn data_url(html: &str) -> String {
    let mut url = String::from("data:text/html,");
    for byte in html.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

#[tokio::test]
async fn frozen_and_masked_screenshots_are_byte_identical() {
    let fixture = Fixture::start().await;
    let page = fixture.open("/animated.html").await;
    // The transition starts while the page parses; capture while it runs.
    page.locator("#moving-button.moved")
        .expect("selector")
        .timeout(Duration::from_secs(5))
        .wait_for(ElementState::Attached)
        .await
        .expect("the transition starts");
    let options = ScreenshotOptions {
        mask: vec![selector("#click-count"), selector("h1")],
        freeze_animations: true,
        ..ScreenshotOptions::default()
    };
    let first = page
        .screenshot(options.clone())
        .await
        .expect("first capture");
    let second = page.screenshot(options).await.expect("second capture");
    assert_eq!(png_size(&first.png), (1280, 800));
    assert_eq!((first.width, first.height), (1280, 800));
    assert!(
        first.png == second.png,
        "two frozen captures differ ({} vs {} bytes)",
        first.png.len(),
        second.png.len()
    );
    // The capture leaves nothing behind in the page: no style element, box or mark.
    let leftovers = page
        .evaluate("document.querySelectorAll('style').length + document.body.parentElement.children.length + document.querySelectorAll('[data-chromate-mask]').length")
        .await
        .expect("count nodes");
    assert_eq!(
        leftovers,
        serde_json::json!(3),
        "head + body + the page's own style"
    );
    fixture.finish().await;
}

#[tokio::test]
async fn a_masked_image_frame_and_bordered_box_are_solid_boxes_of_the_mask_colour() {
    let fixture = Fixture::start().await;
    // Each masked element is 120×40 (border box); #solid is a plain box of the mask colour.
    // A capture of each masked element's box must be the same PNG as one of #solid's.
    let red = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='120' height='40'%3E%3Crect width='120' height='40' fill='red'/%3E%3C/svg%3E";
    let html = format!(
        "<!doctype html><html><body style=\"margin:0;font:16px monospace\">\
        <div id=\"solid\" style=\"position:absolute;left:0;top:0;width:120px;height:40px;background:#ff00ff\"></div>\
        <img id=\"pic\" src=\"{red}\" style=\"position:absolute;left:0;top:60px;width:120px;height:40px\">\
        <div id=\"boxed\" style=\"position:absolute;left:0;top:120px;width:100px;height:20px;border:10px dashed #000;background:#0f0;box-shadow:inset 0 0 4px #00f\">text <b style=\"color:red\">bold</b></div>\
        <iframe id=\"frame\" srcdoc=\"<body style='background:#00f'>frame</body>\" style=\"position:absolute;left:0;top:180px;width:120px;height:40px;border:0\"></iframe>\
        </body></html>"
    );
    let page = fixture.new_page(&data_url(&html)).await;
    let shot = |target: &str| {
        let options = ScreenshotOptions {
            target: ScreenshotTarget::Element(selector(target)),
            mask: vec![
                selector("#pic"),
                selector("xpath=//div[@id='boxed']"),
                selector("#frame"),
            ],
            ..ScreenshotOptions::default()
        };
        let page = page.clone();
        async move { page.screenshot(options).await.expect("capture").png }
    };
    let solid = shot("#solid").await;
    assert_eq!(png_size(&solid), (120, 40));
    for masked in ["#pic", "#boxed", "#frame"] {
        assert!(
            shot(masked).await == solid,
            "{masked} is not a solid #FF00FF box when masked"
        );
    }
    fixture.finish().await;
}

#[tokio::test]
async fn element_and_full_page_captures_have_the_box_and_document_size() {
    let fixture = Fixture::start().await;
    let html = "<!doctype html><html><body style=\"margin:0\">\
        <div style=\"height:3000px;background:linear-gradient(#fff,#00f)\"></div>\
        <div id=\"box\" style=\"position:absolute;left:40px;top:2000px;width:200px;height:100px;background:#c00\"></div>\
        </body></html>";
    let page = fixture.new_page(&data_url(html)).await;
    let element = page
        .screenshot(ScreenshotOptions {
            target: ScreenshotTarget::Element(selector("#box")),
            ..ScreenshotOptions::default()
        })
        .await
        .expect("element capture");
    assert_eq!(png_size(&element.png), (200, 100));
    let scrolled = page.evaluate("window.scrollY").await.expect("scrollY");
    assert_eq!(
        scrolled,
        serde_json::json!(0),
        "an element capture does not scroll"
    );
    let full = page
        .screenshot(ScreenshotOptions {
            target: ScreenshotTarget::FullPage,
            ..ScreenshotOptions::default()
        })
        .await
        .expect("full-page capture");
    let (width, height) = png_size(&full.png);
    assert_eq!(height, 3000);
    let document_width = page
        .evaluate("document.documentElement.clientWidth")
        .await
        .expect("width");
    assert_eq!(serde_json::json!(width), document_width);
    let viewport = page
        .screenshot(ScreenshotOptions {
            viewport: Some((640, 480)),
            ..ScreenshotOptions::default()
        })
        .await
        .expect("viewport capture");
    assert_eq!(png_size(&viewport.png), (640, 480));
    let restored = page.evaluate("window.innerWidth").await.expect("width");
    assert_eq!(restored, serde_json::json!(1280));
    let missing = page
        .screenshot(ScreenshotOptions {
            target: ScreenshotTarget::Element(selector("#nope")),
            timeout: Duration::from_millis(200),
            ..ScreenshotOptions::default()
        })
        .await;
    assert!(
        matches!(missing, Err(chromate::Error::NoMatch { .. })),
        "{missing:?}"
    );
    fixture.finish().await;
}

#[tokio::test]
async fn audit_finds_image_alt_label_and_color_contrast_each_with_a_ref() {
    let fixture = Fixture::start().await;
    let page = fixture.open("/a11y-violations.html").await;
    let report = page
        .audit_accessibility(AuditOptions::default())
        .await
        .expect("audit");
    let mut ids: Vec<&str> = report.violations.iter().map(|v| v.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["color-contrast", "image-alt", "label"]);
    assert_eq!(report.n_violations, 3);
    assert!(report.n_passes > 0);
    let expected_ids = [
        ("image-alt", "no-alt"),
        ("label", "unlabelled"),
        ("color-contrast", "low-contrast"),
    ];
    for (rule, element_id) in expected_ids {
        let violation = report
            .violations
            .iter()
            .find(|v| v.id == rule)
            .expect("the rule is reported");
        assert!(
            violation.tags.iter().any(|t| t.starts_with("wcag")),
            "{rule}"
        );
        assert_eq!(violation.nodes.len(), 1, "{rule}: {:?}", violation.nodes);
        let node = &violation.nodes[0];
        assert_eq!(node.target, format!("#{element_id}"));
        let element_ref = node.element_ref.expect("each node has a ref");
        let id = page
            .locator(&format!("ref={element_ref}"))
            .expect("ref selector")
            .attribute("id")
            .await
            .expect("read the id");
        assert_eq!(
            id.text.as_deref(),
            Some(element_id),
            "{rule}: {element_ref}"
        );
    }
    // A second audit gives the same elements the same refs; a filter narrows it.
    let again = page
        .audit_accessibility(AuditOptions {
            min_impact: Impact::Critical,
            rules: vec!["image-alt".into()],
            ..AuditOptions::default()
        })
        .await
        .expect("filtered audit");
    assert_eq!(again.violations.len(), 1);
    let first_ref = report
        .violations
        .iter()
        .find(|v| v.id == "image-alt")
        .and_then(|v| v.nodes[0].element_ref);
    assert_eq!(again.violations[0].nodes[0].element_ref, first_ref);
    let unknown = page
        .audit_accessibility(AuditOptions {
            rules: vec!["no-such-rule".into()],
            ..AuditOptions::default()
        })
        .await;
    assert!(
        matches!(&unknown, Err(chromate::Error::InvalidArgument { message, .. }) if message.contains("no-such-rule")),
        "{unknown:?}"
    );
    // axe lives in chromate's isolated world, out of the page's reach.
    let visible = page
        .evaluate("typeof window.axe")
        .await
        .expect("typeof axe");
    assert_eq!(visible, serde_json::json!("undefined"));
    fixture.finish().await;
}

/// The audit's Web Vitals recorder counts a long task that ended just before the page is
/// inspected: the inspection takes the observer's queued entries itself instead of waiting for
/// their delivery, which a busy renderer may run after the inspection (a depth-1 audit under
/// load once lost its total-blocking-time finding so). Each round blocks the main thread for
/// 300 ms in a page task (a timer: DevTools' own evaluations are not long tasks) whose end
/// answers the evaluation, and inspects in the very next task.
#[tokio::test]
async fn a_long_task_just_before_the_inspection_is_counted() {
    // A browser of its own: the test blocks its renderer's main thread.
    let server = chromate_tests::FixtureServer::start()
        .await
        .expect("server");
    let browser = chromate_tests::browser::launch().await;
    let page = browser.new_page("about:blank").await.expect("page");
    page.record_vitals().await.expect("recorder");
    page.goto(
        &server.url("nav.html"),
        chromate::WaitUntil::Load,
        chromate_tests::browser::NAV,
    )
    .await
    .expect("navigate");
    for round in 1..=5u64 {
        page.evaluate(
            "new Promise((done) => setTimeout(() => { const until = performance.now() + 300; \
             while (performance.now() < until) {} done(true); }, 0))",
        )
        .await
        .expect("block the main thread");
        let seen = page.inspect_for_audit(24).await.expect("inspect");
        assert!(seen.vitals.recorded, "the recorder is in place");
        assert!(
            seen.vitals.long_tasks >= round,
            "round {round}: {} long tasks, tbt {}",
            seen.vitals.long_tasks,
            seen.vitals.tbt
        );
    }
    chromate_tests::browser::close_and_check(browser).await;
}

/// A selector the test writes (parsed as a caller parses it, once).
fn selector(text: &str) -> chromate::Selector {
    chromate::Selector::parse(text).expect("a well-formed selector")
}
