//! The generator's output for a small hand-written protocol, compared with a checked-in file so
//! reviewers see every change to its shape. Re-bless with `UPDATE_EXPECT=1 cargo test -p cdp-gen`.

use cdp_gen::{generate, generate_unformatted, DomainSelection, GenError};

const MINI: &str = include_str!("mini_protocol.json");

#[test]
fn mini_protocol_generates_the_golden_output() {
    let (src, stats) = generate(MINI, &DomainSelection::All).expect("mini protocol generates");
    expect_test::expect_file!["expected/mini.rs.txt"].assert_eq(&src);
    assert_eq!((stats.commands, stats.events, stats.types), (4, 2, 9));
}

#[test]
fn the_build_scripts_output_is_the_same_code_in_short_lines() {
    let (formatted, _) = generate(MINI, &DomainSelection::All).expect("generates");
    let (lines, _) = generate_unformatted(MINI, &DomainSelection::All).expect("generates");
    let reprinted = |src: &str| prettyplease::unparse(&syn::parse_file(src).expect("parses"));
    assert_eq!(reprinted(&lines), reprinted(&formatted));
    let longest = lines.lines().map(str::len).max().unwrap_or(0);
    assert!(
        longest < 2_000,
        "a {longest}-byte line: rustc scans lines to find columns"
    );
}

#[test]
fn a_chosen_domain_pulls_in_only_the_types_it_references_from_others() {
    let (src, stats) =
        generate(MINI, &DomainSelection::Only(vec!["Alpha".into()])).expect("generates");
    // Beta compiles for `Alpha.Node.script`, but only its referenced type: no commands, no
    // events, so it is not listed as a compiled domain.
    assert_eq!(stats.domains, ["Alpha"]);
    assert_eq!((stats.commands, stats.events, stats.types), (3, 1, 9));
    assert!(src.contains("pub mod beta {"), "{src}");
    assert!(src.contains("pub struct ScriptId;"), "{src}");
    for absent in ["RunParams", "EventDone", "\"Beta.run\"", "\"Beta.done\""] {
        assert!(
            !src.contains(absent),
            "{absent} generated for a referenced-only domain"
        );
    }
    let (src, stats) =
        generate(MINI, &DomainSelection::Only(vec!["Beta".into()])).expect("generates");
    assert_eq!(stats.domains, ["Beta"]);
    assert!(!src.contains("pub mod alpha"), "{src}");
}

#[test]
fn single_methods_compile_with_the_types_they_reach_and_nothing_else() {
    let (src, stats) =
        generate(MINI, &DomainSelection::Only(vec!["Alpha.getNode".into()])).expect("generates");
    assert!(
        stats.domains.is_empty(),
        "no domain is whole: {:?}",
        stats.domains
    );
    assert_eq!((stats.commands, stats.events), (1, 0));
    assert!(src.contains("pub struct GetNodeParams"), "{src}");
    assert!(src.contains("\"Alpha.getNode\""), "{src}");
    // What getNode's params and returns reach, across domains: Node (and Owner, in its cycle),
    // its script id in Beta.
    for present in [
        "pub struct Node {",
        "pub struct NodeId;",
        "pub struct ScriptId;",
    ] {
        assert!(src.contains(present), "{present} missing:\n{src}");
    }
    for absent in [
        "EnableParams",
        "EventNodeChanged",
        "RunParams",
        "Timestamp",
        "Headers",
    ] {
        assert!(
            !src.contains(absent),
            "{absent} generated though nothing chosen reaches it"
        );
    }
    let (_, stats) = generate(
        MINI,
        &DomainSelection::Only(vec!["Alpha.nodeChanged".into(), "Beta".into()]),
    )
    .expect("generates");
    assert_eq!(stats.domains, ["Beta"]);
    assert_eq!((stats.commands, stats.events), (1, 2));
}

#[test]
fn unknown_methods_are_rejected() {
    let err =
        generate(MINI, &DomainSelection::Only(vec!["Alpha.fly".into()])).expect_err("must fail");
    assert_eq!(
        err.to_string(),
        "unknown command or event `Alpha.fly` (not in the protocol json)"
    );
}

#[test]
fn unknown_references_name_their_protocol_path() {
    let broken = MINI.replace("\"Beta.ScriptId\"", "\"Beta.Missing\"");
    let err = generate(&broken, &DomainSelection::All).expect_err("must fail");
    assert!(matches!(err, GenError::UnknownRef { .. }));
    assert_eq!(
        err.to_string(),
        "Alpha.Node.script: unknown type reference `Beta.Missing`"
    );
}

#[test]
fn unknown_domains_are_rejected() {
    let err = generate(MINI, &DomainSelection::Only(vec!["Gamma".into()])).expect_err("must fail");
    assert_eq!(
        err.to_string(),
        "unknown domain `Gamma` (not in the protocol json)"
    );
}

#[test]
fn malformed_json_is_a_parse_error() {
    let err = generate("{\"domains\": 3}", &DomainSelection::All).expect_err("must fail");
    assert!(matches!(err, GenError::Parse(_)));
}
