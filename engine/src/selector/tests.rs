//! Selector parsing and canonical forms (docs/mcp.md#selectors).

use super::*;

fn check(input: &str) -> String {
    match Selector::parse(input) {
        Ok(sel) if sel.is_bare_ref() => format!("bare {}", sel.canonical()),
        Ok(sel) => sel.canonical().to_string(),
        Err(err) => format!("error: {err}"),
    }
}

#[test]
fn selectors_take_their_canonical_form() {
    let cases = [
        ("#save", "css=#save"),
        ("=x", "css==x"),
        ("css=#save", "css=#save"),
        ("CSS=#save", "css=#save"),
        ("a[href=x]", "css=a[href=x]"),
        ("input[type=\"text\"]", "css=input[type=\"text\"]"),
        ("xpath=//button", "xpath=//button"),
        ("id=save", "id=save"),
        ("testid=save-btn", "testid=save-btn"),
        ("tag=BUTTON", "tag=button"),
        ("text=Sign in", "text=Sign in"),
        ("text*=Sign", "text*=Sign"),
        ("role=button", "role=button"),
        (
            "role= Button[name=Sign in] ",
            "role=button[name=\"Sign in\"]",
        ),
        (
            "role=button[name=\"Say \\\"hi\\\" \\\\ bye\"]",
            "role=button[name=\"Say \\\"hi\\\" \\\\ bye\"]",
        ),
        (
            "role=button[name='Sign in']",
            "role=button[name=\"Sign in\"]",
        ),
        ("label=Full name", "label=Full name"),
        ("ref=e7", "ref=e7"),
        ("ref= E12 ", "ref=e12"),
        ("e7", "bare ref=e7"),
        ("  e42 ", "bare ref=e42"),
        ("css=e7", "css=e7"),
        ("E7", "css=E7"),
        ("e07", "css=e07"),
    ];
    for (input, want) in cases {
        assert_eq!(check(input), want, "{input}");
    }
}

#[test]
fn malformed_selectors_are_invalid_arguments_naming_them() {
    for input in [
        "",
        "ref=7",
        "ref=e0",
        "ref=x",
        "role=",
        "role=butt0n",
        "role=button[label=x]",
        "role=button[name=\"x]",
        "role=button[name=a]b]",
    ] {
        let err = Selector::parse(input).expect_err(input);
        assert_eq!(err.code(), crate::ErrorCode::InvalidArgument, "{input}");
        assert!(err.to_string().contains(&format!("{input:?}")), "{err}");
    }
}

#[test]
fn the_selector_of_an_element_ref_is_the_parsed_ref_selector() {
    for n in [1, 7, 4096] {
        let element_ref = crate::snapshot::ElementRef::new(n).expect("a ref number");
        let parsed = Selector::parse(&format!("ref=e{n}")).expect("a ref selector");
        let built = Selector::from_element_ref(element_ref);
        assert_eq!(built, parsed);
        assert_eq!(built.element_ref(), Some(n));
        assert!(!built.is_bare_ref());
        assert_eq!(built.as_typed(), format!("ref=e{n}"));
    }
}
