//! The key table and chord grammar of docs/mcp.md#keys.

use super::*;

fn chord(text: &str) -> String {
    match parse_chord("press", text) {
        Ok(c) => {
            let mut parts: Vec<String> = c.modifiers.iter().map(|k| k.key.clone()).collect();
            // The key as the page sees it, with the chord's modifiers held.
            let held = c
                .modifiers
                .iter()
                .fold(c.key_modifiers(), |bits, m| bits | m.modifier_bit());
            parts.push(format!(
                "{}/{}/{}",
                c.key.key_with(held),
                c.key.code,
                c.key.key_code
            ));
            parts.join(" ")
        }
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn chords_parse_as_the_table_says() {
    let cases = [
        ("a", "a/KeyA/65"),
        ("A", "a/KeyA/65"),
        ("+", "+/Equal/187"),
        ("!", "!/Digit1/49"),
        ("=", "=/Equal/187"),
        (" ", " /Space/32"),
        ("Enter", "Enter/Enter/13"),
        ("return", "Enter/Enter/13"),
        ("page_down", "PageDown/PageDown/34"),
        ("Page-Up", "PageUp/PageUp/33"),
        ("arrow left", "ArrowLeft/ArrowLeft/37"),
        ("up", "ArrowUp/ArrowUp/38"),
        ("esc", "Escape/Escape/27"),
        ("F12", "F12/F12/123"),
        ("numpad7", "7/Numpad7/103"),
        ("Control+A", "Control a/KeyA/65"),
        ("Control+a", "Control a/KeyA/65"),
        ("ctrl+shift+k", "Control Shift K/KeyK/75"),
        ("Meta+Shift+K", "Meta Shift K/KeyK/75"),
        ("Shift+Tab", "Shift Tab/Tab/9"),
        ("Control++", "Control +/Equal/187"),
        ("Control+Shift++", "Control Shift +/Equal/187"),
        ("Control+=", "Control =/Equal/187"),
        ("Alt+!", "Alt !/Digit1/49"),
        ("Option+Cmd+x", "Alt Meta x/KeyX/88"),
    ];
    for (input, want) in cases {
        assert_eq!(chord(input), want, "{input}");
    }
}

#[test]
fn malformed_chords_are_invalid_arguments() {
    for input in [
        "",
        "a+",
        "+a",
        "Control++a",
        "++",
        "a+b",
        "Foo",
        "Enter+a",
        "F13",
        "F0",
        "numpad10",
    ] {
        let err = parse_chord("press", input).expect_err(input);
        assert_eq!(err.code(), crate::ErrorCode::InvalidArgument, "{input}");
        assert!(err.to_string().starts_with("press: "), "{err}");
    }
    let err = parse_chord("press", "Foo").expect_err("unknown");
    assert!(err.to_string().contains("ArrowUp"), "lists names: {err}");
}

#[test]
fn shift_upper_cases_letters_and_control_types_nothing() {
    let a = Key::for_char('a').expect("a");
    assert_eq!(a.text_with(0).as_deref(), Some("a"));
    assert_eq!(a.text_with(SHIFT).as_deref(), Some("A"));
    assert_eq!(a.key_with(SHIFT), "A");
    assert_eq!(a.text_with(CONTROL), None);
    let bang = Key::for_char('!').expect("!");
    assert!(bang.needs_shift);
    assert_eq!(bang.code, "Digit1");
    assert_eq!(bang.text_with(SHIFT).as_deref(), Some("!"));
    assert_eq!(Key::for_char('é'), None);
    assert_eq!(named("Enter").and_then(|k| k.text), Some("\r".into()));
}

#[test]
fn names_ignore_case_underscores_dashes_and_spaces() {
    assert_eq!(normalize_name("Page_Down"), "pagedown");
    assert_eq!(normalize_name("control - or meta"), "controlormeta");
    assert!(named("CONTROL_OR_META").is_some());
}

#[test]
fn issue_12_a_trailing_plus_is_the_final_key_pressed_with_shift() {
    let chord = parse_chord("press", "Control++").expect("Control++");
    let modifiers: Vec<&str> = chord.modifiers.iter().map(|k| k.key.as_str()).collect();
    assert_eq!(modifiers, ["Control"]);
    assert!(chord.shifted, "+ is Shift and = on a US keyboard");
    assert_eq!(chord.key_modifiers(), SHIFT);
    assert_eq!(chord.key.key_with(CONTROL | chord.key_modifiers()), "+");
    // A letter's case is not a Shift in a chord: Control+A stays Control and a.
    let select_all = parse_chord("press", "Control+A").expect("Control+A");
    assert!(!select_all.shifted);
    assert_eq!(select_all.key.key_with(CONTROL), "a");
}

#[test]
fn every_modifier_is_the_key_its_name_names() {
    for modifier in [
        Modifier::Alt,
        Modifier::Control,
        Modifier::Meta,
        Modifier::Shift,
    ] {
        assert_eq!(Some(modifier.key()), named(modifier.as_str()));
        assert_ne!(modifier.key().modifier_bit(), 0);
        assert_eq!(
            Modifier::parse("click", modifier.as_str()).ok(),
            Some(modifier)
        );
    }
    assert_eq!(
        Modifier::parse("click", "ctrl").ok(),
        Some(Modifier::Control)
    );
    assert_eq!(Modifier::parse("click", "Cmd").ok(), Some(Modifier::Meta));
    assert_eq!(Modifier::parse("click", "option").ok(), Some(Modifier::Alt));
}

#[test]
fn a_key_that_is_no_modifier_is_refused_by_name() {
    let message = |name: &str| match Modifier::parse("click", name) {
        Ok(modifier) => format!("{modifier:?}"),
        Err(err) => err.to_string(),
    };
    assert_eq!(
        message("a"),
        r#"click: "a" is not a modifier (Shift, Control, Alt, Meta)"#
    );
    assert!(message("Hyper").starts_with(r#"click: unknown key "Hyper""#));
}
