//! Snapshots, refs and diffs on real Chromium: golden snapshots of the fixture pages
//! (cross-origin frames spliced in), ref identity across DOM changes, navigations and tabs,
//! every STALE_REF reason and BARE_REF, a diff after a small change, and the budget on a
//! 10 000-element page.

use std::time::{Duration, Instant};

use chromate::{
    error::StaleReason,
    snapshot::{diff, Snapshot, SnapshotOptions},
    Browser, Error, ErrorCode, Page, WaitUntil,
};
use chromate_tests::FixtureServer;
use expect_test::{expect, expect_file, ExpectFile};

use crate::util::{close_and_check, launch, NAV};

async fn snapshot(page: &Page) -> Snapshot {
    page.snapshot(SnapshotOptions::default())
        .await
        .unwrap_or_else(|err| panic!("snapshot failed: {err}"))
}

async fn open(browser: &Browser, url: &str) -> Page {
    let page = browser.new_page("about:blank").await.expect("new page");
    page.goto(url, WaitUntil::Load, NAV)
        .await
        .expect("navigate");
    page
}

/// The rendering with the server's port replaced as in the goldens.
fn portable(text: &str, server: &FixtureServer) -> String {
    let port = server.port();
    text.replace(&format!("localhost%3A{port}"), "localhost%3AXOPORT")
        .replace(&format!("127.0.0.1:{port}"), "127.0.0.1:PORT")
}

/// The ref printed on the line containing `needle`.
fn ref_of(snapshot: &Snapshot, needle: &str) -> String {
    snapshot
        .lines
        .iter()
        .find(|line| line.to_string().contains(needle))
        .and_then(|line| line.element_ref)
        .map(|r| r.to_string())
        .unwrap_or_else(|| panic!("no line contains {needle}:\n{}", snapshot.render()))
}

/// Snapshots until `done` holds (frames attach and load on their own schedule).
async fn snapshot_until(page: &Page, what: &str, done: impl Fn(&Snapshot) -> bool) -> Snapshot {
    let deadline = Instant::now() + NAV;
    loop {
        let snap = snapshot(page).await;
        if done(&snap) {
            return snap;
        }
        assert!(
            Instant::now() < deadline,
            "{what} never happened:\n{}",
            snap.render()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn stale_reason(res: chromate::Result<Snapshot>) -> StaleReason {
    match res {
        Err(Error::StaleRef { reason, .. }) => reason,
        Err(other) => panic!("expected STALE_REF, got {other}"),
        Ok(snap) => panic!("expected STALE_REF, got a snapshot:\n{}", snap.render()),
    }
}

/// The lowest and highest ref of a snapshot.
fn ref_range(
    snapshot: &Snapshot,
) -> (
    chromate::snapshot::ElementRef,
    chromate::snapshot::ElementRef,
) {
    let refs = snapshot.lines.iter().filter_map(|l| l.element_ref);
    let min = refs.clone().min().expect("the snapshot has refs");
    let max = refs.max().expect("the snapshot has refs");
    (min, max)
}

fn scoped(scope: &str) -> SnapshotOptions {
    SnapshotOptions {
        scope: Some(chromate::Selector::parse(scope).expect("a well-formed scope")),
        ..SnapshotOptions::default()
    }
}

#[tokio::test]
async fn fixture_pages_match_their_golden_snapshots() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let goldens: [(&str, usize, ExpectFile); 11] = [
        (
            "login.html",
            80,
            expect_file!["../fixtures/expected/login.snapshot.txt"],
        ),
        (
            "shadow.html",
            80,
            expect_file!["../fixtures/expected/shadow.snapshot.txt"],
        ),
        (
            "hidden.html",
            80,
            expect_file!["../fixtures/expected/hidden.snapshot.txt"],
        ),
        (
            "secrets.html",
            80,
            expect_file!["../fixtures/expected/secrets.snapshot.txt"],
        ),
        (
            "selectors.html",
            80,
            expect_file!["../fixtures/expected/selectors.snapshot.txt"],
        ),
        (
            "caps.html",
            80,
            expect_file!["../fixtures/expected/caps.snapshot.txt"],
        ),
        (
            "dashboard.html",
            80,
            expect_file!["../fixtures/expected/dashboard.snapshot.txt"],
        ),
        (
            "roles.html",
            80,
            expect_file!["../fixtures/expected/roles.snapshot.txt"],
        ),
        (
            "roles.html",
            500,
            expect_file!["../fixtures/expected/roles.max500.snapshot.txt"],
        ),
        (
            "bench-50.html",
            80,
            expect_file!["../fixtures/expected/bench-50.snapshot.txt"],
        ),
        (
            "real-patterns.html",
            80,
            expect_file!["../fixtures/expected/real-patterns.snapshot.txt"],
        ),
    ];
    for (path, max_lines, golden) in goldens {
        // A fresh tab per page, so refs start where the golden's do not matter: compare text
        // with refs renumbered from e1 in order of appearance.
        let page = open(&browser, &server.url(path)).await;
        let options = SnapshotOptions {
            max_lines,
            ..SnapshotOptions::default()
        };
        let snap = page.snapshot(options).await.expect("snapshot");
        golden.assert_eq(&format!(
            "{}\n",
            renumbered(&portable(&snap.render(), &server))
        ));
        browser.close_page(&page).await.expect("close tab");
    }
    close_and_check(browser).await;
}

#[tokio::test]
async fn cross_origin_frames_are_walked_in_their_own_world_and_spliced_in_place() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let xo = server.localhost_url("frame-xo.html");
    let url = format!(
        "{}?xo={}",
        server.url("iframe.html"),
        xo.replace(':', "%3A").replace('/', "%2F")
    );
    let page = open(&browser, &url).await;
    let snap = snapshot_until(&page, "the cross-origin frame to load", |s| {
        s.render().contains("Cross-origin button")
    })
    .await;
    expect_file!["../fixtures/expected/iframe.snapshot.txt"].assert_eq(&format!(
        "{}\n",
        renumbered(&portable(&snap.render(), &server))
    ));
    // Its refs resolve in the frame that holds them.
    let xo_button = ref_of(&snap, "Cross-origin button");
    let scoped_snap = page.snapshot(scoped(&format!("ref={xo_button}"))).await;
    let scoped_snap = scoped_snap.expect("scoped snapshot of a cross-origin ref");
    assert_eq!(scoped_snap.lines.len(), 1, "{}", scoped_snap.render());
    assert!(scoped_snap.lines[0]
        .to_string()
        .contains("Cross-origin button"));
    close_and_check(browser).await;
}

/// Refs renumbered e1, e2, … in order of first appearance, so a golden does not depend on how
/// many refs the browser issued before.
fn renumbered(text: &str) -> String {
    let mut seen: Vec<String> = Vec::new();
    text.lines()
        .map(|line| {
            let body = line.trim_start();
            let indent = &line[..line.len() - body.len()];
            match body.split_once(": ") {
                Some((r, rest))
                    if r.starts_with('e')
                        && r[1..].bytes().all(|b| b.is_ascii_digit())
                        && r.len() > 1 =>
                {
                    let n = match seen.iter().position(|s| s == r) {
                        Some(i) => i + 1,
                        None => {
                            seen.push(r.to_string());
                            seen.len()
                        }
                    };
                    format!("{indent}e{n}: {rest}")
                }
                // The truncation note names the last ref shown (`after=eN`).
                _ => match line.split_once("after=") {
                    Some((head, tail)) => {
                        let r = tail.trim_end_matches(')');
                        match seen.iter().position(|s| s == r) {
                            Some(i) => format!("{head}after=e{})", i + 1),
                            None => line.to_string(),
                        }
                    }
                    None => line.to_string(),
                },
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn refs_survive_insertions_removals_and_attribute_changes() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("login.html")).await;
    let first = snapshot(&page).await;
    let submit = ref_of(&first, "\"Sign in\" #submit");
    let email = ref_of(&first, "#email");
    let help = ref_of(&first, "\"Help\"");
    page.evaluate(
        "(() => { const b = document.createElement('button'); b.textContent = 'New first';
          document.querySelector('main').prepend(b);
          document.querySelector('#email').value = 'bob@example.com';
          document.querySelector('#submit').setAttribute('aria-pressed', 'true');
          document.querySelector('a[href^=\"/help\"]').remove(); })()",
    )
    .await
    .expect("change the page");
    let second = snapshot(&page).await;
    assert_eq!(ref_of(&second, "#submit"), submit);
    assert_eq!(ref_of(&second, "value=\"bob@example.com\""), email);
    let new_first = ref_of(&second, "New first");
    let max_first = ref_range(&first).1;
    assert!(
        new_first
            .trim_start_matches('e')
            .parse::<u64>()
            .expect("number")
            > max_first.number()
    );
    // The removed link is gone from the snapshot, and its ref says so.
    assert!(!second.render().contains(&format!("{help}:")));
    let reason = stale_reason(page.snapshot(scoped(&format!("ref={help}"))).await);
    assert_eq!(reason, StaleReason::Detached);
    // A re-rendered element is a new element with a new ref; the old one is detached.
    page.evaluate("(() => { const s = document.querySelector('#submit'); s.replaceWith(s.cloneNode(true)); })()")
        .await
        .expect("re-render");
    let third = snapshot(&page).await;
    assert_ne!(ref_of(&third, "#submit"), submit);
    let reason = stale_reason(page.snapshot(scoped(&submit)).await);
    assert_eq!(reason, StaleReason::Detached);
    close_and_check(browser).await;
}

#[tokio::test]
async fn refs_are_never_reused_across_navigations_and_tabs() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("login.html")).await;
    let first = snapshot(&page).await;
    let submit = ref_of(&first, "#submit");
    page.reload(WaitUntil::Load, NAV).await.expect("reload");
    let second = snapshot(&page).await;
    assert_ne!(second.document_id, first.document_id);
    let max_first = ref_range(&first).1;
    let min_second = ref_range(&second).0;
    assert!(
        min_second > max_first,
        "{min_second} reuses a number up to {max_first}"
    );
    let reason = stale_reason(page.snapshot(scoped(&format!("ref={submit}"))).await);
    assert_eq!(reason, StaleReason::DocumentChanged);
    // Another tab continues the same counter; a ref of one tab is stale in another.
    let other = open(&browser, &server.url("login.html")).await;
    let third = snapshot(&other).await;
    let max_second = ref_range(&second).1;
    let min_third = ref_range(&third).0;
    assert!(min_third > max_second);
    let tab_one_ref = ref_of(&second, "#submit");
    let reason = stale_reason(other.snapshot(scoped(&format!("ref={tab_one_ref}"))).await);
    assert_eq!(reason, StaleReason::DocumentChanged);
    assert!(browser.has_issued_ref(max_first));
    assert!(!browser.has_issued_ref(browser.next_ref()));
    close_and_check(browser).await;
}

#[tokio::test]
async fn two_tabs_snapshot_at_once_each_with_refs_of_its_own() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let one = open(&browser, &server.url("bench-2000.html")).await;
    let two = open(&browser, &server.url("bench-2000.html")).await;
    let mut seen = std::collections::HashSet::new();
    for round in 0..4 {
        // Both walks run at once (no tab waits for the other's walk to end).
        let (a, b) = tokio::join!(
            one.snapshot(SnapshotOptions::default()),
            two.snapshot(SnapshotOptions::default())
        );
        let (a, b) = (
            a.expect("tab one's snapshot"),
            b.expect("tab two's snapshot"),
        );
        for (tab, snap) in [("one", &a), ("two", &b)] {
            let refs: Vec<_> = snap.lines.iter().filter_map(|l| l.element_ref).collect();
            assert!(
                refs.len() > 50,
                "round {round}, tab {tab}:\n{}",
                snap.render()
            );
            if round == 0 {
                // The first walk of each tab mints every ref it shows: none is the other's.
                for element_ref in refs {
                    assert!(seen.insert(element_ref), "{element_ref} minted twice");
                }
            }
        }
        // Each tab's refs are its own: one resolves in its tab and is stale in the other.
        let in_one = ref_of(&a, "Order notes");
        one.snapshot(scoped(&format!("ref={in_one}")))
            .await
            .expect("tab one's ref in tab one");
        let reason = stale_reason(two.snapshot(scoped(&format!("ref={in_one}"))).await);
        assert_eq!(reason, StaleReason::DocumentChanged);
    }
    // The counter moved past every number either walk minted.
    let highest = seen.iter().max().copied().expect("refs");
    assert!(browser.next_ref() > highest);
    close_and_check(browser).await;
}

#[tokio::test]
async fn unknown_ambiguous_and_bare_refs_fail_with_their_codes() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("login.html")).await;
    let first = snapshot(&page).await;
    let unknown = page.snapshot(scoped("ref=e9999")).await;
    assert_eq!(stale_reason(unknown), StaleReason::UnknownRef);
    let bare = page.snapshot(scoped("e9999")).await;
    match bare {
        Err(err @ Error::BareRef { .. }) => {
            assert_eq!(err.code(), ErrorCode::BareRef);
            assert_eq!(
                err.to_string(),
                "e9999 looks like a snapshot ref but this session never issued it"
            );
        }
        other => panic!("expected BARE_REF, got {other:?}"),
    }
    // A bare ref this browser issued works as ref=eN.
    let submit = ref_of(&first, "#submit");
    let scoped_snap = page
        .snapshot(scoped(&submit))
        .await
        .expect("bare issued ref");
    assert_eq!(scoped_snap.lines.len(), 1);
    // An element moved into another document no longer identifies one element of its page.
    page.evaluate(
        "new Promise((resolve) => { const f = document.createElement('iframe');
           f.onload = () => { f.contentDocument.body.appendChild(document.querySelector('#submit')); resolve(true); };
           document.body.appendChild(f); })",
    )
    .await
    .expect("move the button");
    let moved = page.snapshot(scoped(&format!("ref={submit}"))).await;
    let err = moved.as_ref().err().map(|e| (e.code(), e.to_string()));
    assert_eq!(stale_reason(moved), StaleReason::Ambiguous);
    assert_eq!(
        err,
        Some((
            ErrorCode::StaleRef,
            format!("ref={submit} is stale: the ref no longer identifies one element of its page")
        ))
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_small_change_diffs_to_its_lines() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("login.html")).await;
    let before = snapshot(&page).await;
    assert!(diff(Some(&before), &snapshot(&page).await).is_unchanged());
    page.evaluate(
        "(() => { document.querySelector('#submit').disabled = true;
          const p = document.createElement('p'); p.id = 'status'; p.textContent = 'Signing in…';
          document.querySelector('form').append(p); })()",
    )
    .await
    .expect("change the page");
    let after = snapshot(&page).await;
    let rendered = diff(Some(&before), &after).render();
    let submit = ref_of(&after, "#submit");
    let status = ref_of(&after, "#status");
    let expected = format!(
        "page: Sign in — Acme — http://127.0.0.1:PORT/login.html\n\
         -     {submit}: button \"Sign in\" #submit\n\
         +     {submit}: button \"Sign in\" #submit (disabled)\n\
         +     {status}: text \"Signing in…\" #status"
    );
    assert_eq!(portable(&rendered, &server), expected);
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_12_a_named_section_is_a_region_container() {
    let browser = launch().await;
    let page = open(
        &browser,
        "data:text/html,<title>Sections</title>\
         <section id=\"x\" aria-label=\"Empty box\"><p>Nothing here yet</p></section>\
         <section id=\"y\"><p>Unnamed section text</p></section>\
         <section aria-labelledby=\"h\"><h2 id=\"h\">Labelled</h2></section>",
    )
    .await;
    let rendered = snapshot(&page).await.render();
    let body: Vec<&str> = rendered.lines().skip(1).collect();
    assert_eq!(
        body,
        [
            "e1: region (container) \"Empty box\" #x",
            "  e2: text \"Nothing here yet\"",
            "e3: text \"Unnamed section text\"",
            "e4: region (container) \"Labelled\"",
            "  e5: heading \"Labelled\" [level=2] #h",
        ],
        "{rendered}"
    );
    close_and_check(browser).await;
}

/// An element whose tag is the name of an `Object.prototype` member (`<constructor>`) has no
/// implicit role: the lookup of roles by tag must not find the prototype's `constructor`
/// function (which left the line without a role and the element without its name); `tostring`,
/// which no member is called, reads the same.
#[tokio::test]
async fn a_tag_named_like_an_object_member_has_no_implicit_role() {
    let browser = launch().await;
    let page = open(
        &browser,
        "data:text/html,<title>Tags</title>\
         <constructor role=\"bogus\">Built</constructor>\
         <tostring role=\"bogus\">Said</tostring>",
    )
    .await;
    let rendered = snapshot(&page).await.render();
    let body: Vec<&str> = rendered.lines().skip(1).collect();
    assert_eq!(
        body,
        ["e1: constructor \"Built\"", "e2: tostring \"Said\""],
        "{rendered}"
    );
    close_and_check(browser).await;
}

/// Text CSS generates (`::before`/`::after`) is read only where a rule could give it: the
/// walk skips pseudo-elements of trees whose style sheets name none. On a page whose document
/// has no such rule, still read: a shadow root's own rule, a shadow root's rules for its host
/// (`:host`) and for the elements slotted into it (`::slotted()`), the browser's own quotes of
/// `q`, and a rule added after an earlier snapshot; on another page, a document rule that
/// reaches into a shadow tree through `::part()`. Each name is what the walk read before it
/// skipped any pseudo-element.
#[tokio::test]
async fn generated_text_is_read_from_every_sheet_that_can_give_it() {
    let server = FixtureServer::start().await.expect("server");
    server.route("pseudo.html", |_| {
        chromate_tests::Response::html(
            "<title>Pseudo</title>\
             <button><q>Quoted</q></button>\
             <x-shadow></x-shadow>\
             <button><x-host><i>Text</i></x-host></button>\
             <button id=\"late\">Late</button>\
             <script>\
               const own = document.querySelector('x-shadow').attachShadow({mode: 'open'});\
               own.innerHTML = '<style>b::before { content: \"Own \"; }</style><button><b></b>Shadow</button>';\
               const host = document.querySelector('x-host').attachShadow({mode: 'open'});\
               host.innerHTML = '<style>:host::before { content: \"Host \"; } ::slotted(i)::before { content: \"Slot \"; }</style><slot></slot>';\
             </script>",
        )
    });
    server.route("pseudo-part.html", |_| {
        chromate_tests::Response::html(
            "<title>Part</title>\
             <style>x-part::part(label)::before { content: \"Part \"; }</style>\
             <x-part></x-part>\
             <script>\
               const part = document.querySelector('x-part').attachShadow({mode: 'open'});\
               part.innerHTML = '<button part=\"label\">Named</button>';\
             </script>",
        )
    });
    let browser = launch().await;
    let names = |rendered: &str| -> Vec<String> {
        rendered
            .lines()
            .filter(|line| line.contains("button"))
            .map(|line| line.trim().to_owned())
            .collect()
    };
    let page = open(&browser, &server.url("pseudo.html")).await;
    let first = snapshot(&page).await.render();
    assert_eq!(
        names(&first),
        [
            "e1: button \"“Quoted”\"",
            "e3: button \"Own Shadow\"",
            "e4: button \"Host Slot Text\"",
            "e6: button \"Late\" #late",
        ],
        "{first}"
    );
    page.evaluate(
        "document.head.insertAdjacentHTML('beforeend', '<style>#late::after { content: \" now\"; }</style>')",
    )
    .await
    .expect("add a rule");
    let second = snapshot(&page).await.render();
    assert!(
        names(&second).contains(&"e6: button \"Late now\" #late".to_owned()),
        "{second}"
    );
    let part = open(&browser, &server.url("pseudo-part.html")).await;
    let rendered = snapshot(&part).await.render();
    assert!(
        names(&rendered)
            .iter()
            .any(|line| line.ends_with("button \"Part Named\"")),
        "{rendered}"
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_20_hrefs_read_against_the_page_and_repeated_names_get_no_line() {
    let server = FixtureServer::start().await.expect("server");
    server.route("docs/guide/page.html", |_| {
        chromate_tests::Response::html(
            "<title>Guide</title>\
             <a href=\"#setup\">Setup</a>\
             <a href=\"page.html?lang=fr#setup\">French</a>\
             <a href=\"next.html\">Next</a>\
             <a href=\"api/x.html#m\">API</a>\
             <a href=\"./\">Guide index</a>\
             <a href=\"./a:b.html\">Colon</a>\
             <a href=\"page.html\">This page</a>\
             <a href=\"/docs/other.html\">Other</a>\
             <a href=\"/\">Home</a>\
             <a href=\"https://example.test/x\">Away</a>\
             <p><a href=\"next.html\">Read next</a></p>\
             <p>Some <a href=\"next.html\">text</a> around a link</p>\
             <label for=\"q\">Query</label><input id=\"q\">\
             <label for=\"r\">Shown</label><input id=\"r\" aria-label=\"Other name\">\
             <label for=\"h\">Hidden field</label><input id=\"h\" style=\"opacity:0\" type=\"checkbox\">\
             <label><input type=\"checkbox\"> Remember me</label>\
             <iframe src=\"/docs/guide/frame.html\" title=\"Frame\"></iframe>",
        )
    });
    server.route("docs/guide/frame.html", |_| {
        chromate_tests::Response::html("<a href=\"next.html\">Framed</a>")
    });
    let browser = launch().await;
    let page = open(&browser, &server.url("docs/guide/page.html")).await;
    let snap = snapshot_until(&page, "the frame's link", |s| s.render().contains("Framed")).await;
    let rendered = snap.render();
    let body: Vec<&str> = rendered.lines().skip(1).collect();
    assert_eq!(
        body,
        [
            "e1: link \"Setup\" href=\"#setup\"",
            "e2: link \"French\" href=\"?lang=fr#setup\"",
            "e3: link \"Next\" href=\"next.html\"",
            "e4: link \"API\" href=\"api/x.html#m\"",
            "e5: link \"Guide index\" href=\"./\"",
            "e6: link \"Colon\" href=\"./a:b.html\"",
            "e7: link \"This page\" href=\"page.html\"",
            "e8: link \"Other\" href=\"/docs/other.html\"",
            "e9: link \"Home\" href=\"/\"",
            "e10: link \"Away\" href=\"https://example.test/x\"",
            "e11: link \"Read next\" href=\"next.html\"",
            "e12: text \"Some text around a link\"",
            "e13: link \"text\" href=\"next.html\"",
            "e14: textbox \"Query\" #q",
            "e15: label \"Shown\"",
            "e16: textbox \"Other name\" #r",
            "e17: label \"Hidden field\"",
            "e18: checkbox \"Remember me\"",
            "e19: iframe \"Frame\"",
            "  e20: link \"Framed\" href=\"/docs/guide/next.html\"",
        ],
        "{rendered}"
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn a_ten_thousand_element_page_stays_within_budget() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("bench-10000.html")).await;
    let started = Instant::now();
    let snap = snapshot(&page).await;
    let elapsed = started.elapsed();
    let rendered = snap.render();
    assert!(snap.truncated);
    let next = snap.next_after.expect("the semantic budget cut the view");
    assert!(rendered.ends_with(&format!(
        "… (more elements not shown: snapshot limits reached; continue with after={next})"
    )));
    // 80 semantic + 10 evidence + 7 text lines at most.
    assert!(snap.lines.len() <= 97, "{} lines", snap.lines.len());
    assert!(rendered.len() < 12 * 1024, "{} bytes", rendered.len());
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let empty = open(&browser, "about:blank").await;
    expect![[r#"
        page: (untitled) — about:blank
        (no interactive elements detected)"#]]
    .assert_eq(&snapshot(&empty).await.render());
    close_and_check(browser).await;
}

#[tokio::test]
async fn locators_propose_unique_selectors_and_report_no_match() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("login.html")).await;
    let found = page.locators("#submit", 3).await.expect("locators");
    assert_eq!(found.target.tag, "button");
    assert_eq!(found.best.as_deref(), Some("role=button[name=\"Sign in\"]"));
    assert!(found.candidates.len() <= 5);
    let missing = page.locators("css=#nope", 3).await;
    assert_eq!(missing.err().map(|e| e.code()), Some(ErrorCode::NoMatch));
    close_and_check(browser).await;
}

/// The `ref=eN` locator of the line containing `needle`, with a short timeout for actions that
/// are expected to fail.
fn locator_of(page: &Page, snapshot: &Snapshot, needle: &str) -> chromate::Locator {
    let element_ref = ref_of(snapshot, needle);
    page.locator(&format!("ref={element_ref}"))
        .expect("ref selector")
}

#[tokio::test]
async fn issue_20_a_code_editors_hidden_textarea_is_listed_and_takes_fill() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("real-patterns.html")).await;
    let snap = snapshot(&page).await;
    // Ace's transparent 1px textarea, CodeMirror 5's in a zero-height box, Monaco's: the only
    // textboxes of the page besides the editable divs of section 13, in document order.
    let fields: Vec<_> = snap
        .lines
        .iter()
        .filter(|l| {
            l.role == "textbox" && !l.hint.as_deref().is_some_and(|h| h.starts_with("#json-"))
        })
        .collect();
    assert_eq!(fields.len(), 3, "{}", snap.render());
    for (line, editor) in fields.iter().zip(["#ace", "#cm", "#monaco"]) {
        let element_ref = line.element_ref.expect("a listed field has a ref");
        page.locator(&format!("ref={element_ref}"))
            .expect("ref selector")
            .fill("fn main() {}")
            .await
            .unwrap_or_else(|e| panic!("fill {editor}: {e}"));
        let value = page
            .locator(&format!("{editor} textarea"))
            .expect("selector")
            .value()
            .await
            .expect("value");
        assert_eq!(value.text.as_deref(), Some("fn main() {}"), "{editor}");
    }
    // A pointer cannot reach Ace's textarea under the editor's surface: the timeout says what
    // covers it.
    let ace = fields[0].element_ref.expect("ref");
    let click = page
        .locator(&format!("ref={ace}"))
        .expect("ref selector")
        .timeout(Duration::from_millis(300))
        .click()
        .await;
    match click {
        Err(Error::TimeoutWaitingState {
            state, obscured_by, ..
        }) => {
            assert_eq!(state, "unobscured");
            assert_eq!(obscured_by.as_deref(), Some("div.ace_content"));
        }
        other => panic!("expected TIMEOUT_WAITING_STATE unobscured, got {other:?}"),
    }
    // Waits and reads still ask whether a person sees it.
    let ace_locator = page.locator(&format!("ref={ace}")).expect("ref selector");
    assert!(!ace_locator.is_visible().await.expect("is visible"));
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_20_transparent_fields_are_listed_only_if_they_take_text() {
    let browser = launch().await;
    let page = open(
        &browser,
        "data:text/html,<title>Fields</title>\
         <style>.t { position: absolute; opacity: 0; width: 1px; height: 1px; }</style>\
         <textarea class=\"t\" aria-label=\"Typeable\"></textarea>\
         <textarea class=\"t\" aria-label=\"Disabled\" disabled></textarea>\
         <textarea class=\"t\" aria-label=\"Read-only\" readonly></textarea>\
         <input class=\"t\" type=\"checkbox\" aria-label=\"Checkbox\">\
         <input class=\"t\" type=\"date\" aria-label=\"Date\">\
         <div style=\"opacity: 0\"><input aria-label=\"Under a transparent box\"></div>\
         <form style=\"opacity: 0\" aria-label=\"Faded form\"><input aria-label=\"In a faded form\"></form>\
         <div style=\"visibility: hidden\"><input class=\"t\" aria-label=\"Invisible\"></div>\
         <div style=\"display: none\"><input class=\"t\" aria-label=\"Not rendered\"></div>\
         <div class=\"t\" contenteditable=\"true\" aria-label=\"Editing host\"></div>",
    )
    .await;
    let rendered = snapshot(&page).await.render();
    let body: Vec<&str> = rendered.lines().skip(1).collect();
    assert_eq!(
        body,
        [
            "e1: textbox \"Typeable\"",
            "e2: textbox \"Under a transparent box\"",
            "e3: textbox \"In a faded form\"",
            "e4: textbox \"Editing host\"",
        ],
        "{rendered}"
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_20_controls_without_layout_boxes_are_neither_listed_nor_actionable() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("real-patterns.html")).await;
    let rendered = snapshot(&page).await.render();
    // Slotted into no slot of their host's shadow tree (open and closed): no boxes.
    assert!(!rendered.contains("sidebar"), "{rendered}");
    for id in ["#sidebar-toggle", "#closed-toggle"] {
        let click = page
            .locator(id)
            .expect("selector")
            .timeout(Duration::from_millis(200))
            .click()
            .await;
        assert!(
            matches!(click, Err(Error::TimeoutWaitingVisible { .. })),
            "{id}: {click:?}"
        );
    }
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_20_opening_a_details_element_diffs_as_its_summary_expanding() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("real-patterns.html")).await;
    let before = snapshot(&page).await;
    locator_of(&page, &before, "Show hidden lines")
        .click()
        .await
        .expect("click the summary");
    let after = snapshot(&page).await;
    let summary = ref_of(&after, "Show hidden lines");
    let body = ref_of(&after, "Hidden body");
    let expected = format!(
        "page: Real page patterns — http://127.0.0.1:PORT/real-patterns.html\n\
         - {summary}: button \"Show hidden lines\" (expanded=false)\n\
         + {summary}: button \"Show hidden lines\" (expanded=true)\n\
         + {body}: text \"Hidden body\""
    );
    assert_eq!(
        portable(&diff(Some(&before), &after).render(), &server),
        expected
    );
    close_and_check(browser).await;
}

#[tokio::test]
async fn issue_28_results_show_as_rows_and_code_and_new_text_shows_in_the_diff() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let page = open(&browser, &server.url("real-patterns.html")).await;
    let full = page
        .snapshot(SnapshotOptions {
            max_lines: 5000,
            ..SnapshotOptions::default()
        })
        .await
        .expect("snapshot");
    let rendered = full.render();
    for expected in [
        r#": row "Name | Age | Status""#,
        r#": row "Rex | 3 | available""#,
        r#": row "Tom |  | sold""#,
        r#": pre "GET /pets?status=available\nAccept: application/json\nHost: 127.0.0.1\n…""#,
    ] {
        assert!(rendered.contains(expected), "{expected} in:\n{rendered}");
    }
    // The page's text lines fill the view's budget for text: the response comes beyond it.
    let before = snapshot(&page).await;
    locator_of(&page, &before, "Execute")
        .click()
        .await
        .expect("click Execute");
    let after = snapshot(&page).await;
    assert!(!after.render().contains("Kit\\\""), "{}", after.render());
    let row = ref_of(&after, "Kit | 1 | pending");
    let expected = format!(
        "page: Real page patterns — http://127.0.0.1:PORT/real-patterns.html\n\
         + {row}: row \"Kit | 1 | pending\"\n\
         + pre {}",
        r#""{\n\"id\": 7,\n\"name\": \"Kit\"\n…""#
    );
    assert_eq!(
        portable(&diff(Some(&before), &after).render(), &server),
        expected
    );
    close_and_check(browser).await;
}

/// Reads the page whole in pages of `max_lines`, each continuing `after` the last ref the one
/// before names; returns the pages' semantic lines up to where each was cut, and the number of
/// pages.
async fn read_by_pages(page: &Page, max_lines: usize) -> (Vec<String>, usize) {
    let mut lines = Vec::new();
    let mut after = None;
    for n_pages in 1..=1000 {
        let piece = page
            .snapshot(SnapshotOptions {
                max_lines,
                after,
                ..SnapshotOptions::default()
            })
            .await
            .unwrap_or_else(|err| panic!("page {n_pages}: {err}"));
        let n_semantic = piece
            .lines
            .iter()
            .filter(|l| is_paged(l) && l.element_ref.is_some())
            .count();
        assert!(
            n_semantic <= max_lines,
            "page {n_pages}: {n_semantic} lines"
        );
        for line in &piece.lines {
            if is_paged(line) {
                lines.push(line.to_string());
            }
            if piece.next_after.is_some() && line.element_ref == piece.next_after {
                break;
            }
        }
        match piece.next_after {
            Some(next) => {
                let note = format!("snapshot limits reached; continue with after={next})");
                assert!(piece.render().ends_with(&note), "{}", piece.render());
                after = Some(next);
            }
            None => return (lines, n_pages),
        }
    }
    panic!("paging never ended");
}

/// The lines the semantic budget pages (evidence and ordinary text keep budgets of their own).
fn is_paged(line: &chromate::snapshot::Line) -> bool {
    !matches!(
        line.kind,
        chromate::snapshot::LineKind::Evidence | chromate::snapshot::LineKind::Text
    )
}

#[tokio::test]
async fn a_page_larger_than_the_budget_is_read_whole_by_paging_after_the_last_ref() {
    let server = FixtureServer::start().await.expect("server");
    let browser = launch().await;
    let xo = server.localhost_url("frame-xo.html");
    let framed = format!(
        "{}?xo={}",
        server.url("iframe.html"),
        xo.replace(':', "%3A").replace('/', "%2F")
    );
    for (url, max_lines) in [
        (server.url("bench-2000.html"), 150),
        (server.url("bench-2000.html"), 7),
        (framed.clone(), 1),
        (framed, 3),
    ] {
        let page = open(&browser, &url).await;
        snapshot_until(&page, "the cross-origin frame to load", |s| {
            !url.contains("xo=") || s.render().contains("Cross-origin button")
        })
        .await;
        let whole = page
            .snapshot(SnapshotOptions {
                max_lines: 5000,
                ..SnapshotOptions::default()
            })
            .await
            .expect("whole snapshot");
        assert!(whole.next_after.is_none(), "{url}: the whole page is cut");
        let whole_lines: Vec<String> = whole
            .lines
            .iter()
            .filter(|l| is_paged(l))
            .map(ToString::to_string)
            .collect();
        let (paged, n_pages) = read_by_pages(&page, max_lines).await;
        assert!(n_pages > 1, "{url}: one page of {max_lines}");
        assert_eq!(
            paged.join("\n"),
            whole_lines.join("\n"),
            "{url} in pages of {max_lines}"
        );
        browser.close_page(&page).await.expect("close");
    }
    // A ref that is gone is stale, as for any other use.
    let page = open(&browser, &server.url("bench-50.html")).await;
    let first = snapshot(&page).await;
    let stale = first.lines[0].element_ref.expect("a ref");
    page.goto(&server.url("bench-50.html"), WaitUntil::Load, NAV)
        .await
        .expect("reload");
    let err = page
        .snapshot(SnapshotOptions {
            after: Some(stale),
            ..SnapshotOptions::default()
        })
        .await
        .expect_err("stale after");
    assert_eq!(err.code(), ErrorCode::StaleRef, "{err}");
    close_and_check(browser).await;
}
