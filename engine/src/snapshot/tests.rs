//! Unit tests for snapshot rendering, diffs and refs, from recorded `snapshot.take` records.

use expect_test::{expect, Expect};
use serde_json::{json, Value};

use super::refs::ElementRef;
use super::*;

/// A snapshot from recorded line records (as `snapshot.take` returns them).
fn snapshot(url: &str, document_id: &str, records: Value, truncated: bool) -> Snapshot {
    let piece = json!({
        "lines": records, "nextRef": 1, "budgets": {"semantic": 0, "evidence": 0, "text": 0},
        "truncated": truncated, "title": "Sign in — Acme", "url": url, "ms": 1.5,
    });
    let piece = decode_piece(piece, None).expect("recorded records decode");
    let (unlisted, lines): (Vec<_>, Vec<_>) = piece.lines.into_iter().partition(|r| r.unlisted);
    Snapshot {
        url: piece.url,
        title: piece.title,
        document_id: document_id.to_string(),
        target_id: "T".into(),
        lines: lines.into_iter().map(|r| r.into_line(0)).collect(),
        unlisted: unlisted.into_iter().map(|r| r.into_line(0)).collect(),
        truncated: piece.truncated,
        next_after: None,
        page_ms: piece.ms,
    }
}

fn check_render(records: Value, truncated: bool, expect: Expect) {
    let snap = snapshot("http://127.0.0.1:PORT/login.html", "L1", records, truncated);
    expect.assert_eq(&snap.render());
}

fn check_diff(before: Value, after: Value, expect: Expect) {
    let url = "http://127.0.0.1:PORT/login.html";
    let before = snapshot(url, "L1", before, false);
    let after = snapshot(url, "L1", after, false);
    expect.assert_eq(&diff(Some(&before), &after).render());
}

fn button(number: u64, name: &str) -> Value {
    json!({"depth": 1, "ref": number, "role": "button", "kind": "semantic", "name": name})
}

#[test]
fn renders_every_field_in_contract_order() {
    check_render(
        json!([
            {"depth": 0, "ref": 1, "role": "banner", "kind": "semantic", "container": true},
            {"depth": 1, "ref": 2, "role": "link", "kind": "semantic", "name": "Acme", "href": "/", "hint": "#home"},
            {"depth": 1, "ref": 3, "role": "heading", "kind": "semantic", "name": "Sign \"in\"", "level": 1},
            {"depth": 1, "ref": 4, "role": "textbox", "kind": "semantic", "name": "Email", "value": "ann@example.com", "hint": "#email"},
            {"depth": 1, "ref": 5, "role": "checkbox", "kind": "semantic", "name": "Remember me", "checked": true},
            {"depth": 1, "ref": 6, "role": "checkbox", "kind": "semantic", "name": "Some", "checked": "mixed", "disabled": true},
            {"depth": 1, "ref": 7, "role": "tab", "kind": "semantic", "name": "One", "selected": true, "expanded": "false", "pressed": "mixed", "current": "page"},
            {"depth": 1, "ref": 8, "role": "text", "kind": "text", "name": "Use your work email."},
            {"depth": 1, "ref": 9, "role": "link", "kind": "semantic", "href": ""},
            {"depth": 1, "ref": 10, "role": "button", "kind": "semantic", "name": "SSO", "hint": "[data-testid=\"sso\"]", "current": ""},
        ]),
        false,
        expect![[r#"
            page: Sign in — Acme — http://127.0.0.1:PORT/login.html
            e1: banner (container)
              e2: link "Acme" href="/" #home
              e3: heading "Sign \"in\"" [level=1]
              e4: textbox "Email" value="ann@example.com" #email
              e5: checkbox "Remember me" (checked)
              e6: checkbox "Some" (disabled) (checked=mixed)
              e7: tab "One" (selected) (expanded=false) (pressed=mixed) (current=page)
              e8: text "Use your work email."
              e9: link href=""
              e10: button "SSO" [data-testid="sso"]"#]],
    );
}

#[test]
fn renders_shadow_markers_and_iframe_lines() {
    check_render(
        json!([
            {"depth": 0, "ref": 1, "role": "x-card", "kind": "semantic", "name": "Card", "hint": "#card"},
            {"depth": 1, "role": "#shadow-root (open)", "kind": "shadow"},
            {"depth": 2, "ref": 2, "role": "button", "kind": "semantic", "name": "Save card"},
            {"depth": 0, "ref": 3, "role": "iframe", "kind": "iframe", "name": "Cross-origin frame", "hint": "#xo", "frame": {"index": 2}},
        ]),
        true,
        expect![[r#"
            page: Sign in — Acme — http://127.0.0.1:PORT/login.html
            e1: x-card "Card" #card
              #shadow-root (open)
                e2: button "Save card"
            e3: iframe "Cross-origin frame" #xo
            … (more elements not shown: snapshot limits reached)"#]],
    );
}

#[test]
fn empty_snapshot_says_so_and_header_has_placeholders() {
    let mut snap = snapshot("", "L1", json!([]), false);
    snap.title = String::new();
    expect![[r#"
        page: (untitled) — (no url)
        (no interactive elements detected)"#]]
    .assert_eq(&snap.render());
}

#[test]
fn header_cuts_title_at_80_and_url_at_200_characters() {
    let mut snap = snapshot("", "L1", json!([]), false);
    snap.title = "é".repeat(81);
    snap.url = format!("http://x/{}", "a".repeat(300));
    let header = snap.header();
    let (title, url) = header
        .strip_prefix("page: ")
        .and_then(|h| h.split_once(" — "))
        .expect("header shape");
    assert_eq!(title.chars().count(), 80);
    assert!(title.ends_with("é…"));
    assert_eq!(url.chars().count(), 200);
    assert!(url.ends_with("a…"));
}

#[test]
fn diff_lists_removed_then_added_lines_in_document_order() {
    check_diff(
        json!([button(1, "Save"), button(2, "Cancel"), button(3, "Help")]),
        json!([
            button(1, "Save"),
            button(4, "Saved!"),
            button(3, "Help"),
            button(5, "Undo")
        ]),
        expect![[r#"
            page: Sign in — Acme — http://127.0.0.1:PORT/login.html
            -   e2: button "Cancel"
            +   e4: button "Saved!"
            +   e5: button "Undo""#]],
    );
}

#[test]
fn diff_counts_duplicate_lines_as_a_multiset() {
    // Removing one of three identical buttons shows; the one that went keeps its ref.
    check_diff(
        json!([
            button(1, "Delete"),
            button(2, "Delete"),
            button(3, "Delete")
        ]),
        json!([button(1, "Delete"), button(3, "Delete")]),
        expect![[r#"
            page: Sign in — Acme — http://127.0.0.1:PORT/login.html
            -   e2: button "Delete""#]],
    );
    // A re-rendered duplicate (new ref, same text) is not a change.
    check_diff(
        json!([button(1, "Delete"), button(2, "Delete")]),
        json!([
            button(1, "Delete"),
            button(7, "Delete"),
            button(8, "Delete")
        ]),
        expect![[r#"
            page: Sign in — Acme — http://127.0.0.1:PORT/login.html
            +   e8: button "Delete""#]],
    );
}

#[test]
fn diff_keeps_indentation_in_the_comparison() {
    let deeper = json!({"depth": 2, "ref": 1, "role": "button", "kind": "semantic", "name": "Go"});
    check_diff(
        json!([button(1, "Go")]),
        json!([deeper]),
        expect![[r#"
            page: Sign in — Acme — http://127.0.0.1:PORT/login.html
            -   e1: button "Go"
            +     e1: button "Go""#]],
    );
}

#[test]
fn diff_without_changes_says_so() {
    check_diff(
        json!([button(1, "Go")]),
        json!([button(1, "Go")]),
        expect![[r#"
            page: Sign in — Acme — http://127.0.0.1:PORT/login.html
            (no a11y changes)"#]],
    );
}

#[test]
fn diff_renders_in_full_without_baseline_or_after_navigation_to_another_document() {
    let url = "http://127.0.0.1:PORT/login.html";
    let before = snapshot(url, "L1", json!([button(1, "Go")]), false);
    let reloaded = snapshot(url, "L2", json!([button(2, "Go")]), false);
    let moved = snapshot(&format!("{url}#faq"), "L1", json!([button(1, "Go")]), false);
    let full = expect![[r#"
        page: Sign in — Acme — http://127.0.0.1:PORT/login.html
          e2: button "Go""#]];
    full.assert_eq(&diff(Some(&before), &reloaded).render());
    full.assert_eq(&diff(None, &reloaded).render());
    assert!(diff(Some(&before), &before).is_unchanged());
    // A same-document navigation (only the hash changed) is a diff under the new URL.
    expect![[r#"
        page: Sign in — Acme — http://127.0.0.1:PORT/login.html#faq
        (no a11y changes)"#]]
    .assert_eq(&diff(Some(&before), &moved).render());
}

fn unlisted_text(name: &str) -> Value {
    json!({"depth": 0, "role": "text", "name": name, "kind": "text", "unlisted": true})
}

#[test]
fn diff_shows_new_text_beyond_the_budget_bounded_and_not_what_moved_into_the_view() {
    let url = "http://127.0.0.1:PORT/login.html";
    let moved = json!({"depth": 0, "ref": 2, "role": "text", "name": "Moved", "kind": "text"});
    let before = snapshot(
        url,
        "L1",
        json!([
            button(1, "Execute"),
            unlisted_text("Moved"),
            unlisted_text("Old")
        ]),
        true,
    );
    let mut records = vec![button(1, "Execute"), moved, unlisted_text("Old")];
    records.extend((1..=12).map(|n| unlisted_text(&format!("Row {n}"))));
    let after = snapshot(url, "L1", Value::Array(records), true);
    // Not in the view: the rendering leaves them out.
    assert!(!after.render().contains("Row 1"));
    expect![[r#"
        page: Sign in — Acme — http://127.0.0.1:PORT/login.html
        + text "Row 1"
        + text "Row 2"
        + text "Row 3"
        + text "Row 4"
        + text "Row 5"
        + text "Row 6"
        + text "Row 7"
        + text "Row 8"
        + text "Row 9"
        + text "Row 10"
        + … 2 more new text lines (browser_read reads the page's text)"#]]
    .assert_eq(&diff(Some(&before), &after).render());
}

#[test]
fn element_refs_parse_and_print() {
    assert_eq!(ElementRef::parse("e12").map(|r| r.number()), Some(12));
    assert_eq!(
        ElementRef::parse("E7").map(|r| r.to_string()),
        Some("e7".into())
    );
    for bad in [
        "e0",
        "e012",
        "e",
        "12",
        "e1x",
        " e1",
        "e-1",
        "e99999999999999999999999",
    ] {
        assert_eq!(ElementRef::parse(bad), None, "{bad}");
    }
    assert_eq!(ElementRef::new(0), None);
}

#[test]
fn ref_table_never_moves_back_and_keeps_the_first_record() {
    let table = refs::RefTable::default();
    assert_eq!(table.next(), 1);
    table.advance_to(5);
    table.advance_to(3);
    assert_eq!(table.next(), 5);
    let issued = |frame: &str| refs::Issued {
        target_id: "T".into(),
        frame_id: frame.into(),
        loader_id: Some("L".into()),
    };
    table.record("T", vec![(4, issued("F1"))], &|_| true);
    table.record("T", vec![(4, issued("F2"))], &|_| true);
    assert_eq!(table.lookup(4), Some(refs::RefRecord::Live(issued("F1"))));
    assert!(table.has_issued(4));
    assert!(!table.has_issued(3));
}

#[test]
fn reservations_at_once_share_no_number_and_one_alone_leaves_no_gap() {
    let table = refs::RefTable::default();
    // One call alone: its unused numbers come back, so the next call continues without a gap.
    let alone = table.reserve(97);
    assert_eq!((alone.start, alone.limit), (1, 98));
    alone.finish(4);
    assert_eq!(table.next(), 4);
    // Two at once (two tabs): disjoint. The first's unused numbers stay unused once the
    // second was taken; the second, finishing last, gives its own back.
    let first = table.reserve(97);
    let second = table.reserve(97);
    assert_eq!((first.start, first.limit), (4, 101));
    assert_eq!((second.start, second.limit), (101, 198));
    first.finish(10);
    assert_eq!(table.next(), 198);
    second.finish(105);
    assert_eq!(table.next(), 105);
    // Finishing in the other order: the one that finishes last gives back only what no later
    // reservation follows.
    let first = table.reserve(10);
    let second = table.reserve(10);
    assert_eq!((first.start, second.start), (105, 115));
    second.finish(117);
    assert_eq!(table.next(), 117);
    first.finish(107);
    assert_eq!(table.next(), 117);
    // A second call that minted nothing and gave everything back: the first may then too.
    let first = table.reserve(10);
    let second = table.reserve(10);
    let minted_nothing = second.start;
    second.finish(minted_nothing);
    first.finish(119);
    assert_eq!(table.next(), 119);
    // Cancelled (dropped) or failed: every reserved number stays used, and anything the
    // failed call saw beyond.
    drop(table.reserve(5));
    assert_eq!(table.next(), 124);
    table.reserve(5).keep(140);
    assert_eq!(table.next(), 140);
    // A page that answered a number outside its reservation gives nothing back.
    table.reserve(5).finish(150);
    assert_eq!(table.next(), 150);
    table.reserve(5).finish(149);
    assert_eq!(table.next(), 155);
}

#[test]
fn ref_table_retires_documents_a_page_left_and_stays_small() {
    let table = refs::RefTable::default();
    let doc = |frame: String, loader: u64| refs::Issued {
        target_id: "T".into(),
        frame_id: frame,
        loader_id: Some(format!("L{loader}")),
    };
    let mut next = 1;
    // A thousand navigations, each listing 30 elements of the main frame and 2 of a new
    // child frame; only the newest document of each is still shown.
    for loader in 0..1000u64 {
        let mut minted = Vec::new();
        for idx in 0..32u64 {
            let frame = if idx % 16 == 15 {
                format!("child{loader}")
            } else {
                "main".to_owned()
            };
            minted.push((next, doc(frame, loader)));
            next += 1;
        }
        let shows = move |issued: &refs::Issued| issued.loader_id == Some(format!("L{loader}"));
        table.record("T", minted, &shows);
    }
    // Another tab's refs are never retired by this page's walks.
    let other = refs::Issued {
        target_id: "U".into(),
        frame_id: "main".into(),
        loader_id: Some("L0".into()),
    };
    table.record("U", vec![(next, other.clone())], &|_| true);
    table.record("T", vec![(next + 1, doc("main".into(), 1000))], &|issued| {
        issued.loader_id.as_deref() == Some("L1000")
    });
    assert_eq!(table.lookup(5), Some(refs::RefRecord::Retired));
    assert_eq!(table.lookup(16), Some(refs::RefRecord::Retired));
    assert_eq!(table.lookup(next), Some(refs::RefRecord::Live(other)));
    assert_eq!(
        table.lookup(next + 1),
        Some(refs::RefRecord::Live(doc("main".into(), 1000)))
    );
    assert_eq!(table.lookup(next + 2), None);
    assert!(!table.has_issued(0));
    // Everything retired merged into one run: 32,000 refs in three runs.
    assert_eq!(table.run_count(), 3);
}

#[test]
fn page_errors_become_engine_errors() {
    let no_match = decode_piece(
        json!({"ok": false, "error": "no-match", "canonical": "css=#nope"}),
        None,
    );
    assert!(
        matches!(no_match, Err(crate::Error::NoMatch { ref selector, .. }) if selector == "css=#nope")
    );
    let invalid = decode_piece(
        json!({"ok": false, "error": "invalid selector", "reason": "not a valid CSS selector",
               "browserMessage": "'[' is not a valid selector."}),
        Some("css=["),
    );
    assert_eq!(
        invalid.map(|_| ()).map_err(|e| e.to_string()),
        Err("snapshot: invalid selector css=[: not a valid CSS selector".to_string())
    );
}

#[test]
fn every_error_the_page_walk_writes_decodes() {
    let recorded = [
        json!({"ok": false, "error": "no-match", "canonical": "css=#nope"}),
        json!({"ok": false, "error": "invalid selector", "reason": "bad css"}),
        json!({"ok": false, "error": "stale-ref", "ref": 4, "status": "detached"}),
        json!({"ok": false, "error": "unknown-token"}),
    ];
    let mut written = crate::js::literals_after(crate::js::SNAPSHOT, "error: \"");
    written.extend(crate::js::literals_after(crate::js::SELECTOR, "error: \""));
    written.sort();
    written.dedup();
    let mut named: Vec<String> = recorded
        .iter()
        .filter_map(|answer| answer["error"].as_str().map(str::to_owned))
        .collect();
    named.sort();
    assert_eq!(
        named, written,
        "snapshot.js/selector.js and the recorded answers differ"
    );
    for answer in recorded {
        let failure = serde_json::from_value::<WalkFailure>(answer.clone());
        let failure = failure.unwrap_or_else(|err| panic!("{answer} does not decode: {err}"));
        assert_eq!(json!(failure.as_str()), answer["error"]);
    }
    let unknown = decode_piece(json!({"ok": false, "error": "unknown-tokn"}), None);
    assert!(
        matches!(unknown, Err(crate::Error::Decode { .. })),
        "{unknown:?}"
    );
    let token = decode_piece(json!({"ok": false, "error": "unknown-token"}), None);
    assert_eq!(
        token.map(|_| ()).map_err(|e| e.to_string()),
        Err("snapshot: the page walk failed (unknown-token)".to_string())
    );
}

#[test]
fn every_line_kind_and_checked_the_walk_writes_decodes_and_a_typo_does_not() {
    let script = crate::js::SNAPSHOT;
    // The kinds `classify` returns (its body, up to the next function), and those set by name.
    let classify = script
        .split_once("function classify(")
        .and_then(|(_, rest)| rest.split("\n  function ").next())
        .unwrap_or_default();
    assert!(!classify.is_empty(), "snapshot.js has no classify()");
    let mut written = crate::js::literals_after(classify, "return \"");
    written.extend(crate::js::literals_after(script, "kind: \""));
    written.extend(crate::js::literals_after(script, "kind = \""));
    written.sort();
    written.dedup();
    assert_eq!(
        written,
        ["evidence", "iframe", "semantic", "shadow", "text"]
    );
    for text in &written {
        let kind = serde_json::from_value::<RecordKind>(json!(text));
        let kind = kind.unwrap_or_else(|err| panic!("{text}: {err}"));
        assert_eq!(serde_json::to_value(kind).ok(), Some(json!(text)));
    }
    let record = |checked: Value| {
        serde_json::from_value::<LineRecord>(
            json!({"depth": 0, "role": "checkbox", "kind": "semantic", "checked": checked}),
        )
        .map(|record| record.into_line(0).checked)
    };
    assert_eq!(record(json!(true)).ok(), Some(Some(Checked::True)));
    assert_eq!(record(json!("mixed")).ok(), Some(Some(Checked::Mixed)));
    assert_eq!(record(json!(false)).ok(), Some(None));
    assert!(
        record(json!("mixd")).is_err(),
        "a misspelt checked must not read as unchecked"
    );
    assert!(crate::js::SNAPSHOT.contains("line.checked = \"mixed\""));
    assert!(crate::js::SNAPSHOT.contains("line.checked = true"));
    let typo = serde_json::from_value::<LineRecord>(
        json!({"depth": 0, "role": "button", "kind": "semantc"}),
    );
    assert!(
        typo.is_err(),
        "a misspelt kind must not pass for a semantic line"
    );
}

#[test]
fn every_ref_table_status_decodes_and_a_typo_does_not() {
    use super::refs::RefStatus;
    let written = crate::js::literals_after(crate::js::REFS, "status: \"");
    assert_eq!(written, ["ambiguous", "detached", "ok", "unknown"]);
    for text in &written {
        let status = RefStatus::decode("refs.status", json!(text));
        let status = status.unwrap_or_else(|err| panic!("{text}: {err}"));
        assert_eq!(serde_json::to_value(status).ok(), Some(json!(text)));
    }
    assert_eq!(
        RefStatus::decode("refs.status", json!("unknown"))
            .map(RefStatus::stale_reason)
            .ok(),
        Some(Some(crate::error::StaleReason::DocumentChanged))
    );
    let typo = RefStatus::decode("refs.status", json!("detatched")).expect_err("a typo");
    assert_eq!(
        typo.to_string(),
        "refs.status answered with an unknown status \"detatched\""
    );
    let element_ref = ElementRef::new(4).expect("e4");
    let not_stale = refs::stale_from_status("locators.suggest", element_ref, Some(&json!("ok")));
    assert!(
        matches!(not_stale, crate::Error::UnknownStatus { .. }),
        "{not_stale:?}"
    );
}
