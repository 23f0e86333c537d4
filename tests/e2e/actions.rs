//! Element actions on real Chromium: auto-waiting (appearing, disabled, covered, moving
//! elements), trusted input (fill on every control kind, keys and chords), the Enter fence,
//! click navigation, check/uncheck/select and uploads.

use std::time::{Duration, Instant};

use chromate::{actions::ElementState, Error, ErrorCode, Page, WaitUntil};
use chromate_tests::FixtureServer;
use serde_json::{json, Value};

use crate::util::{close_and_check, launch, locate, open, value_of, NAV};

/// The rendered text of the first match of `selector`.
async fn text_of(page: &Page, selector: &str) -> Option<String> {
    locate(page, selector)
        .text()
        .await
        .unwrap_or_else(|e| panic!("text of {selector}: {e}"))
        .text
}

/// Fills the first match of `selector` with `value`.
async fn fill(page: &Page, selector: &str, value: &str) {
    locate(page, selector)
        .fill(value)
        .await
        .unwrap_or_else(|e| panic!("fill {selector}: {e}"));
}

/// Whether the first match of `selector` is checked.
async fn is_checked(page: &Page, selector: &str) -> bool {
    locate(page, selector)
        .is_checked()
        .await
        .unwrap_or_else(|e| panic!("is {selector} checked: {e}"))
}

/// The timeout of a call that must end long before it: assertions sit at a fraction of it.
const LONG: Duration = Duration::from_secs(20);

async fn eval(page: &Page, expression: &str) -> Value {
    page.evaluate(expression)
        .await
        .unwrap_or_else(|e| panic!("{expression}: {e}"))
}

#[tokio::test]
async fn click_acts_as_soon_as_a_late_button_appears() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "delayed.html").await;
    // A long timeout, and an assertion at a tenth of it: a click that waited for its timeout
    // (or polled at a period near it) fails, a loaded machine does not.
    let button = locate(&page, "#late-button").timeout(LONG);
    button
        .wait_for(ElementState::Visible)
        .await
        .expect("appears");
    button.click().await.expect("click");
    let after = eval(&page, "window.clickedAfterMs")
        .await
        .as_f64()
        .expect("clicked");
    assert!(
        after < LONG.as_secs_f64() * 1000.0 / 10.0,
        "clicked {after}ms after appearing"
    );
    assert_eq!(eval(&page, "window.clickCount").await, json!(1));
    close_and_check(browser).await;
}

#[tokio::test]
async fn click_on_nothing_fails_with_no_match_at_once() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "delayed.html").await;
    let started = Instant::now();
    let err = locate(&page, "#nope")
        .timeout(LONG)
        .click()
        .await
        .expect_err("no match");
    assert_eq!(err.code(), ErrorCode::NoMatch);
    assert_eq!(err.to_string(), "click: no element matches css=#nope");
    // At once: a quarter of a timeout it would otherwise have waited out.
    assert!(started.elapsed() < LONG / 4, "{:?}", started.elapsed());
    close_and_check(browser).await;
}

#[tokio::test]
async fn click_waits_until_button_is_enabled_and_times_out_naming_enabled() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "disabled.html").await;
    locate(&page, "#soon-enabled")
        .click()
        .await
        .expect("enabled later");
    let timeout = Duration::from_millis(400);
    for selector in ["#never-enabled", "#aria-disabled", "#in-fieldset"] {
        let err = locate(&page, selector)
            .timeout(timeout)
            .click()
            .await
            .expect_err(selector);
        assert_eq!(
            err.code(),
            ErrorCode::TimeoutWaitingState,
            "{selector}: {err}"
        );
        assert!(
            matches!(&err, Error::TimeoutWaitingState { state, .. } if state == "enabled"),
            "{err:?}"
        );
        assert!(err.to_string().contains("to become enabled"), "{err}");
    }
    assert_eq!(eval(&page, "window.clicks").await, json!(["soon-enabled"]));
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_covered_button_names_the_overlay_and_the_overlay_gets_no_click() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "covered.html").await;
    let err = locate(&page, "#covered-button")
        .timeout(Duration::from_millis(400))
        .click()
        .await
        .expect_err("covered");
    assert_eq!(err.code(), ErrorCode::TimeoutWaitingState);
    match &err {
        Error::TimeoutWaitingState {
            state, obscured_by, ..
        } => {
            assert_eq!(state, "unobscured");
            assert_eq!(obscured_by.as_deref(), Some("div#overlay.modal-backdrop"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(eval(&page, "window.overlayClicks").await, json!(0));
    locate(&page, "#briefly-covered")
        .click()
        .await
        .expect("uncovered later");
    assert_eq!(
        eval(&page, "window.clicks").await,
        json!(["briefly-covered"])
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_moving_button_is_clicked_where_it_stops() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "animated.html").await;
    locate(&page, "#moving-button")
        .click()
        .await
        .expect("click");
    let clicks = eval(&page, "window.clicks").await;
    let clicks = clicks.as_array().expect("array");
    assert_eq!(clicks.len(), 1, "{clicks:?}");
    assert_eq!(
        clicks[0]["done"],
        json!(true),
        "clicked while moving: {clicks:?}"
    );
    let x = clicks[0]["x"].as_f64().expect("x");
    let left = eval(
        &page,
        "document.getElementById('moving-button').getBoundingClientRect().left",
    )
    .await
    .as_f64()
    .expect("left");
    assert!(
        x >= left && x <= left + 120.0,
        "clicked at {x}, button at {left}"
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn click_waits_until_an_animation_a_transition_or_a_raf_loop_has_stopped() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "moving.html").await;
    for id in ["css-animation", "css-transition", "raf-loop"] {
        // The motion starts at the next frame, before any stability proof can finish: the
        // click must wait for the whole 300 ms of it.
        eval(&page, &format!("window.start('{id}')")).await;
        locate(&page, &format!("#{id}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        let clicks = eval(&page, &format!("window.clicks['{id}']")).await;
        let clicks = clicks.as_array().expect("array");
        assert_eq!(clicks.len(), 1, "{id}: {clicks:?}");
        assert_eq!(
            clicks[0]["stopped"],
            json!(true),
            "{id} clicked while moving: {clicks:?}"
        );
        let offset = eval(
            &page,
            &format!("document.getElementById('{id}').offsetLeft"),
        )
        .await;
        assert_eq!(offset, json!(300), "{id} stopped short of its end");
        let left = eval(
            &page,
            &format!("document.getElementById('{id}').getBoundingClientRect().left"),
        )
        .await
        .as_f64()
        .expect("left");
        let x = clicks[0]["x"].as_f64().expect("x");
        assert!(
            x >= left && x <= left + 120.0,
            "{id}: clicked at {x}, button at {left}"
        );
    }
    // An animation that cannot move the button does not hold it off, even when a new one
    // starts in every frame.
    eval(&page, "window.startTicker().then(() => true)").await;
    locate(&page, "#raf-loop")
        .timeout(Duration::from_secs(2))
        .click()
        .await
        .expect("a still button beside a ticking progress bar");
    let clicks = eval(&page, "window.clicks['raf-loop'].length").await;
    assert_eq!(clicks, json!(2));
    // Nor does an endless animation of the button's colour.
    locate(&page, "#pulsing")
        .timeout(Duration::from_secs(2))
        .click()
        .await
        .expect("a button whose colour pulses");
    assert_eq!(
        eval(&page, "window.clicks['pulsing'].length").await,
        json!(1)
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_double_click_moves_then_presses_and_releases_twice_in_order() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "disabled.html").await;
    eval(
        &page,
        "window.mouse = []; ['mousemove', 'mousedown', 'mouseup', 'click', 'dblclick'].forEach(t => \
         document.addEventListener(t, e => window.mouse.push([t, e.detail, e.clientX, e.clientY]), true))",
    )
    .await;
    // The events are written at once; the page must still see them in order, at one point.
    locate(&page, "#soon-enabled")
        .dblclick()
        .await
        .expect("dblclick");
    let mouse = eval(&page, "window.mouse").await;
    let mouse = mouse.as_array().expect("array");
    assert_eq!(
        mouse.first().map(|e| &e[0]),
        Some(&json!("mousemove")),
        "{mouse:?}"
    );
    let presses: Vec<(String, u64)> = mouse
        .iter()
        .filter(|e| e[0] != json!("mousemove"))
        .map(|e| {
            (
                e[0].as_str().unwrap_or("").to_string(),
                e[1].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = [
        ("mousedown", 1),
        ("mouseup", 1),
        ("click", 1),
        ("mousedown", 2),
        ("mouseup", 2),
        ("click", 2),
        ("dblclick", 2),
    ]
    .iter()
    .map(|(t, n)| (t.to_string(), *n))
    .collect();
    assert_eq!(presses, expected, "{mouse:?}");
    let (x, y) = (&mouse[0][2], &mouse[0][3]);
    assert!(
        mouse.iter().all(|e| &e[2] == x && &e[3] == y),
        "the pointer moved during the click: {mouse:?}"
    );
    assert_eq!(
        eval(&page, "window.clicks").await,
        json!(["soon-enabled", "soon-enabled"])
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn fill_types_into_every_kind_of_control() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "controls.html").await;
    let cases = [
        ("#text-input", "Hello, World!"),
        ("#email-input", "ann@example.com"),
        ("#number-input", "42"),
        ("#password-input", "s3cret"),
        ("#search-input", "cats"),
        ("#tel-input", "+1 555"),
        ("#url-input", "https://example.com/"),
        ("#textarea", "new text"),
        ("#text-input", "café ünïcode"),
    ];
    for (selector, value) in cases {
        eval(&page, "window.clearEvents()").await;
        fill(&page, selector, value).await;
        assert_eq!(
            value_of(&page, selector).await.as_deref(),
            Some(value),
            "{selector}"
        );
        let id = &selector[1..];
        let inputs = eval(
            &page,
            &format!("window.eventsFor('{id}').filter(e => e.type === 'input').length"),
        )
        .await;
        assert!(
            inputs.as_u64().unwrap_or(0) >= 1,
            "{selector}: no input event"
        );
    }
    let keys = eval(
        &page,
        "window.eventsFor('text-input').filter(e => e.type === 'keydown').map(e => e.key).join('')",
    )
    .await;
    assert_eq!(
        keys,
        json!("Deletecaf ncode"),
        "characters without a key go in as text, with no keydown"
    );
    locate(&page, "#editor")
        .fill("rich text")
        .await
        .expect("contenteditable");
    assert_eq!(
        text_of(&page, "#editor").await.as_deref(),
        Some("rich text")
    );
    for (selector, value) in [
        ("#date-input", "2024-05-17"),
        ("#time-input", "13:45"),
        ("#color-input", "#ff8800"),
        ("#range-input", "7"),
    ] {
        eval(&page, "window.clearEvents()").await;
        fill(&page, selector, value).await;
        let id = &selector[1..];
        let types = eval(&page, &format!("window.eventsFor('{id}').map(e => e.type).filter(t => t === 'input' || t === 'change')")).await;
        assert_eq!(types, json!(["input", "change"]), "{selector}");
        assert_eq!(value_of(&page, selector).await.as_deref(), Some(value));
    }
    let err = locate(&page, "#date-input")
        .fill("not a date")
        .await
        .expect_err("rejected");
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    let err = locate(&page, "#terms-checkbox")
        .fill("x")
        .await
        .expect_err("checkbox");
    assert_eq!(err.code(), ErrorCode::NotEditable, "{err}");
    let err = locate(&page, "#readonly-input")
        .timeout(Duration::from_millis(300))
        .fill("x")
        .await
        .expect_err("readonly");
    assert!(
        matches!(&err, Error::TimeoutWaitingState { state, .. } if state == "editable"),
        "{err:?}"
    );
    locate(&page, "#textarea").clear().await.expect("clear");
    assert_eq!(value_of(&page, "#textarea").await.as_deref(), Some(""));
    close_and_check(browser).await;
}

#[tokio::test]
async fn enter_on_a_search_form_waits_for_the_results_page() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "form-submit.html").await;
    let navigated = locate(&page, "#search-input")
        .fill_and_submit("cats & dogs")
        .await
        .expect("submit");
    assert!(navigated);
    assert!(
        page.url().contains("submitted.html?q=cats"),
        "{}",
        page.url()
    );
    let received = text_of(&page, "#received-query").await;
    assert_eq!(received.as_deref(), Some("cats & dogs"));
    close_and_check(browser).await;
}

#[tokio::test]
async fn enter_on_a_validating_form_returns_fast() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "form-submit.html").await;
    let started = Instant::now();
    let navigated = locate(&page, "#email-field")
        .timeout(LONG)
        .fill_and_submit("")
        .await
        .expect("submit");
    let took = started.elapsed();
    assert!(!navigated);
    // At once: a quarter of the timeout a navigation wait would have run into. How long the
    // Enter fence itself waits (140 ms without a navigation) is not asserted: on a loaded
    // machine that would fail for the wrong reason.
    assert!(took < LONG / 4, "{took:?}");
    assert_eq!(eval(&page, "window.validateCount").await, json!(1));
    let status = text_of(&page, "#status").await;
    assert_eq!(status.as_deref(), Some("Email is required"));
    close_and_check(browser).await;
}

#[tokio::test]
async fn key_chords_reach_the_page_in_order() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "controls.html").await;
    let field = locate(&page, "#text-input");
    field.fill("abc").await.expect("fill");
    eval(&page, "window.clearEvents()").await;
    field.press("Control+A").await.expect("select all");
    field.press("Backspace").await.expect("delete");
    assert_eq!(value_of(&page, "#text-input").await.as_deref(), Some(""));
    field.press("Shift+b").await.expect("shift");
    assert_eq!(value_of(&page, "#text-input").await.as_deref(), Some("B"));
    let downs = eval(
        &page,
        "window.eventsFor('text-input').filter(e => e.type === 'keydown').map(e => e.key)",
    )
    .await;
    assert_eq!(downs, json!(["Control", "a", "Backspace", "Shift", "B"]));
    let ups = eval(
        &page,
        "window.eventsFor('text-input').filter(e => e.type === 'keyup').map(e => e.key)",
    )
    .await;
    assert_eq!(ups, json!(["a", "Control", "Backspace", "B", "Shift"]));
    page.key_down("Shift").await.expect("hold shift");
    page.type_text("x").await.expect("type");
    page.key_up("Shift").await.expect("release");
    assert_eq!(value_of(&page, "#text-input").await.as_deref(), Some("BX"));
    let err = page.press("Control+Nope").await.expect_err("unknown key");
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_12_control_plus_plus_presses_plus_with_control() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "keys.html").await;
    let field = locate(&page, "#key-input");
    field.press("Control++").await.expect("Control++");
    let downs = eval(
        &page,
        "window.keys.filter(k => k.type === 'keydown').map(k => [k.key, k.code, k.ctrl])",
    )
    .await;
    assert_eq!(downs[0][0], json!("Control"), "{downs}");
    assert_eq!(downs[1], json!(["+", "Equal", true]), "{downs}");
    assert_eq!(downs.as_array().map(Vec::len), Some(2), "{downs}");
    // A lone `+` types a plus, as typing it does.
    eval(&page, "window.clearKeys()").await;
    field.press("+").await.expect("+");
    let value = value_of(&page, "#key-input").await.unwrap_or_default();
    assert_eq!(value.replace('+', ""), "select me please", "{value:?}");
    assert_eq!(value.matches('+').count(), 1, "{value:?}");
    let keys = eval(&page, "window.keys.map(k => k.type + ' ' + k.key)").await;
    assert_eq!(keys, json!(["keydown +", "keyup +"]));
    close_and_check(browser).await;
}

#[tokio::test]
async fn check_uncheck_and_select_take_effect() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "controls.html").await;
    for selector in [
        "#terms-checkbox",
        "#wrapping-label",
        "#aria-checkbox",
        "#aria-switch",
        "#size-small",
    ] {
        let locator = locate(&page, selector);
        locator
            .check()
            .await
            .unwrap_or_else(|e| panic!("{selector}: {e}"));
        locator
            .check()
            .await
            .unwrap_or_else(|e| panic!("{selector} again: {e}"));
    }
    assert!(is_checked(&page, "#terms-checkbox").await);
    assert!(is_checked(&page, "#wrapped-checkbox").await);
    assert!(is_checked(&page, "#aria-switch").await);
    assert!(!is_checked(&page, "#size-medium").await);
    locate(&page, "#terms-checkbox")
        .uncheck()
        .await
        .expect("uncheck");
    assert!(!is_checked(&page, "#terms-checkbox").await);
    let err = locate(&page, "#size-small")
        .uncheck()
        .await
        .expect_err("radio");
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    let err = locate(&page, "#text-input")
        .check()
        .await
        .expect_err("not checkable");
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    let fruit = locate(&page, "#fruit-select");
    eval(&page, "window.clearEvents()").await;
    assert_eq!(
        fruit.select_option("Banana").await.expect("by label").value,
        "ban"
    );
    assert_eq!(
        fruit.select_option("dur").await.expect("by value").label,
        "Durian"
    );
    let types = eval(
        &page,
        "window.eventsFor('fruit-select').map(e => e.type).filter(t => t !== 'click')",
    )
    .await;
    assert_eq!(types, json!(["input", "change", "input", "change"]));
    assert_eq!(
        fruit
            .select_option("che")
            .await
            .expect_err("disabled")
            .code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        fruit.select_option("Mango").await.expect_err("none").code(),
        ErrorCode::NoMatch
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn upload_sets_two_files_the_page_can_read() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "upload.html").await;
    let dir = std::env::temp_dir().join(format!("chromate-upload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let first = dir.join("first.txt");
    let second = dir.join("second.csv");
    std::fs::write(&first, "hello").expect("write");
    std::fs::write(&second, "a,b\n1,2\n").expect("write");
    let count = locate(&page, "#multi-files")
        .set_input_files(&[&first, &second])
        .await
        .expect("upload");
    assert_eq!(count, 2);
    let seen = eval(
        &page,
        "window.uploads['multi-files'].map(f => f.name + ':' + f.size)",
    )
    .await;
    assert_eq!(seen, json!(["first.txt:5", "second.csv:8"]));
    // A hidden input behind its label works too.
    locate(&page, "#upload-label")
        .set_input_files(&[&first])
        .await
        .expect("via label");
    assert_eq!(
        eval(&page, "window.uploads['hidden-files'].length").await,
        json!(1)
    );
    let err = locate(&page, "#single-file")
        .set_input_files(&[&first, &second])
        .await
        .expect_err("single");
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    let missing = dir.join("missing.txt");
    let err = locate(&page, "#single-file")
        .set_input_files(&[&missing])
        .await
        .expect_err("missing");
    assert_eq!(
        err.to_string(),
        "upload: files[0] does not exist or is not a regular file"
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_link_click_returns_after_the_next_page_loaded() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "nav.html").await;
    locate(&page, "#to-nav2").click().await.expect("click");
    assert!(page.url().ends_with("/nav2.html"), "{}", page.url());
    let title = page.title().await.expect("title");
    assert!(title.starts_with("Nav two"), "{title}");
    close_and_check(browser).await;
}

#[tokio::test]
async fn hover_and_mouse_reach_the_element() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "disabled.html").await;
    // A disabled control is hovered too.
    locate(&page, "#never-enabled")
        .hover()
        .await
        .expect("hover");
    let hovered = eval(
        &page,
        "document.querySelector('#never-enabled').matches(':hover')",
    )
    .await;
    assert_eq!(hovered, json!(true));
    let (x, y) = locate(&page, "#soon-enabled")
        .mouse_move()
        .await
        .expect("move");
    assert_eq!(page.mouse_position(), (x, y));
    close_and_check(browser).await;
}

#[tokio::test]
async fn waits_and_expectations_report_what_they_saw() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "delayed.html").await;
    locate(&page, "#late-button")
        .expect_visible()
        .await
        .expect("appears");
    locate(&page, "#status")
        .expect_text(&chromate::actions::TextMatch::Exact("appeared".into()))
        .await
        .expect("text");
    let err = locate(&page, "#status")
        .timeout(Duration::from_millis(250))
        .expect_text(&chromate::actions::TextMatch::Exact("clicked".into()))
        .await
        .expect_err("mismatch");
    assert_eq!(err.code(), ErrorCode::ExpectMismatch);
    assert_eq!(
        err.to_string(),
        "expect: expected #status to have text \"clicked\", but got \"appeared\" after 250ms"
    );
    let err = locate(&page, "#nope")
        .timeout(Duration::from_millis(100))
        .wait_for(ElementState::Visible)
        .await
        .expect_err("never");
    assert_eq!(err.code(), ErrorCode::NoMatch);
    locate(&page, "#nope")
        .wait_for(ElementState::Detached)
        .await
        .expect("detached");
    let err = locate(&page, "#status")
        .timeout(Duration::from_millis(100))
        .wait_for(ElementState::Hidden)
        .await
        .expect_err("shown");
    assert_eq!(err.code(), ErrorCode::TimeoutWaitingState);
    close_and_check(browser).await;
}

#[tokio::test]
async fn refs_from_a_snapshot_drive_actions_until_the_document_changes() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "disabled.html").await;
    let snapshot = page
        .snapshot(chromate::snapshot::SnapshotOptions::default())
        .await
        .expect("snapshot");
    let line = snapshot
        .lines
        .iter()
        .find(|l| l.hint.as_deref() == Some("#soon-enabled"))
        .expect("the button is listed");
    let element_ref = line.element_ref.expect("a listed button has a ref");
    page.locator(&format!("ref={element_ref}"))
        .expect("ref selector")
        .click()
        .await
        .expect("click by ref");
    // A bare ref this browser issued works like `ref=`.
    page.locator(&element_ref.to_string())
        .expect("bare ref")
        .click()
        .await
        .expect("click by bare ref");
    assert_eq!(eval(&page, "window.clicks.length").await, json!(2));
    page.reload(WaitUntil::Load, NAV).await.expect("reload");
    let err = page
        .locator(&format!("ref={element_ref}"))
        .expect("ref selector")
        .click()
        .await
        .expect_err("stale after reload");
    assert!(
        matches!(
            err,
            Error::StaleRef {
                reason: chromate::error::StaleReason::DocumentChanged,
                ..
            }
        ),
        "{err:?}"
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_zero_timeout_makes_exactly_one_check() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "disabled.html").await;
    let missing = locate(&page, "#nope")
        .timeout(Duration::ZERO)
        .click()
        .await
        .expect_err("nothing matches");
    assert_eq!(missing.code(), ErrorCode::NoMatch, "{missing}");
    let disabled = locate(&page, "#never-enabled")
        .timeout(Duration::ZERO)
        .click()
        .await
        .expect_err("stays disabled");
    assert_eq!(
        disabled.code(),
        ErrorCode::TimeoutWaitingState,
        "{disabled}"
    );
    locate(&page, "#aria-disabled")
        .timeout(Duration::ZERO)
        .hover()
        .await
        .expect("hover needs no enabled state and passes on the one check");
    close_and_check(browser).await;
}

/// A zero-size control the snapshot lists (docs/mcp.md#actionability): a click aims at what
/// shows inside it (an icon overflowing a zero-width button, clicked where a person sees it),
/// or, with nothing showing, does what a keyboard user does: focus, then Enter (a link, a
/// button) or Space (a checkbox). Other pointer actions have nothing to aim at and time out
/// waiting for it to become visible, as Playwright's do.
#[tokio::test]
async fn click_reaches_zero_size_controls_through_their_content_or_the_keyboard() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server, "zero-size.html").await;
    let snapshot = page
        .snapshot(chromate::snapshot::SnapshotOptions::default())
        .await
        .expect("snapshot");
    let ref_of = |hint: &str| {
        snapshot
            .lines
            .iter()
            .find(|l| l.hint.as_deref() == Some(hint))
            .and_then(|l| l.element_ref)
            .unwrap_or_else(|| panic!("{hint} is not listed:\n{}", snapshot.render()))
    };
    for (hint, expect) in [
        ("#copy", "copy:icon;"),
        ("#hidden-action", "copy:icon;hidden:0;"),
        ("#agree", "copy:icon;hidden:0;agree:true;"),
    ] {
        locate(&page, &format!("ref={}", ref_of(hint)))
            .timeout(LONG)
            .click()
            .await
            .unwrap_or_else(|e| panic!("click {hint}: {e}"));
        // The icon's own click (the event's target), a button's keyboard click (detail 0, no
        // pointer), the checkbox toggled by Space.
        assert_eq!(
            text_of(&page, "#log").await.as_deref(),
            Some(expect),
            "{hint}"
        );
    }
    locate(&page, &format!("ref={}", ref_of("#skip")))
        .timeout(LONG)
        .click()
        .await
        .expect("click the skip link");
    assert_eq!(eval(&page, "location.hash").await, json!("#main"));
    // The keyboard's own actions reach it too.
    locate(&page, "#hidden-action")
        .timeout(LONG)
        .press("Enter")
        .await
        .expect("press Enter at the zero-size button");
    assert_eq!(
        text_of(&page, "#log").await.as_deref(),
        Some("copy:icon;hidden:0;agree:true;hidden:0;")
    );
    let err = locate(&page, "#hidden-action")
        .timeout(Duration::from_millis(300))
        .dblclick()
        .await
        .expect_err("nothing to aim a double click at");
    assert_eq!(err.code(), ErrorCode::TimeoutWaitingVisible, "{err}");
    close_and_check(browser).await;
}
