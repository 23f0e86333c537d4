//! `--tab` on the command line (docs/cli.md#tabs): a command acts on the tab it names and leaves
//! the active one; a ref of another tab and an unknown tab are refused; a batch's steps name
//! their tab.

use super::*;

#[test]
fn cli_tab_acts_on_that_tab_and_leaves_the_active_one() {
    let server = fixtures();
    let cli = Cli::new();
    cli.ok(&["navigate", &server.url("tabs-agent.html?agent=A")]);
    let opened = cli.result_of(&["page", "open", &server.url("tabs-agent.html?agent=B")]);
    assert_eq!(opened["id"], json!("p2"), "{opened}");
    cli.ok(&["page", "select", "p1"]);

    cli.ok(&["fill", "#note", "from-shell", "--tab", "p2"]);
    let out = cli.run(&["click", "#add", "--tab", "p2"]);
    assert_ok(&out, &["click", "#add", "--tab", "p2"]);
    let seen = observation(&out.stdout).join("\n");
    assert!(seen.contains("B item 1: from-shell"), "{out:?}");
    assert!(!seen.contains("Agent A"), "{out:?}");
    assert_eq!(cli.result_of(&["page", "list"])["active"], json!("p1"));
    let active = cli.ok(&["snapshot"]);
    assert!(
        active.contains("Agent A") && !active.contains("B item"),
        "{active}"
    );

    // A ref of p1's snapshot, used on p2.
    let add = ref_of(&active, "button \"Add\"");
    let out = cli.fails(&["click", &add, "--tab", "p2"]);
    assert_eq!(out.error_code(), "INVALID_ARGUMENT", "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("ref {add} belongs to tab p1, not to tab p2")),
        "{out:?}"
    );
    let out = cli.fails(&["snapshot", "--tab", "p7"]);
    assert_eq!(out.error_code(), "INVALID_ARGUMENT", "{out:?}");
    assert!(
        out.stderr.contains("no open tab p7; open tabs: p1 ") && out.stderr.contains(", p2 "),
        "{out:?}"
    );
    // The shape of an id is checked before anything is sent.
    let out = cli.run(&["snapshot", "--tab", "two"]);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .starts_with("chromate: snapshot: argument --tab must match ^p[1-9][0-9]{0,15}$\n"),
        "{out:?}"
    );

    // A batch's steps with their tab.
    let steps = r##"[{"tool":"browser_fill","arguments":{"selector":"#note","value":"batched","tab":"p2"}},{"tool":"browser_click","arguments":{"selector":"#add","tab":"p2"}}]"##;
    let out = cli.run_stdin(&["batch", "-"], steps);
    assert_ok(&out, &["batch", "-"]);
    let snapshot = cli.ok(&["snapshot", "--tab", "p2"]);
    assert!(snapshot.contains("B item 2: batched"), "{snapshot}");
    assert_eq!(cli.result_of(&["page", "list"])["active"], json!("p1"));
    cli.finish();
}
