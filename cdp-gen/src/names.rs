//! Case conversion and keyword escaping for generated names.
//!
//! Upstream vocabulary is kept: types stay `PascalCase` as written, fields and modules become
//! `snake_case`, enum values become `PascalCase` variants.

/// `requestWillBeSent` → `request_will_be_sent`, `DOMSnapshot` → `dom_snapshot`,
/// `frameURL` → `frame_url`.
pub(crate) fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut res = String::with_capacity(name.len() + 4);
    for (idx, &ch) in chars.iter().enumerate() {
        if ch == '-' || ch == '.' || ch == ' ' {
            res.push('_');
            continue;
        }
        if ch.is_ascii_uppercase() && idx > 0 {
            let prev = chars[idx - 1];
            let next_lower = chars.get(idx + 1).is_some_and(|c| c.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                res.push('_');
            }
        }
        res.push(ch.to_ascii_lowercase());
    }
    res
}

/// `navigate` → `Navigate`; `same-origin` → `SameOrigin`; `1x` → `V1x`.
pub(crate) fn pascal(name: &str) -> String {
    let mut res = String::with_capacity(name.len());
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            res.push(first.to_ascii_uppercase());
            res.extend(chars);
        }
    }
    if res.is_empty() || res.starts_with(|c: char| c.is_ascii_digit()) {
        res.insert(0, 'V');
    }
    res
}

/// Whether `name` is reserved in Rust 2021 and needs `r#`.
pub(crate) fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "as" | "async"
            | "await"
            | "break"
            | "const"
            | "continue"
            | "crate"
            | "dyn"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
    )
}

/// A field or module identifier: snake case, `r#` for keywords (`self` and friends get a
/// trailing underscore because they cannot be raw).
pub(crate) fn field_ident(name: &str) -> proc_macro2::Ident {
    let snake_name = snake(name);
    if matches!(snake_name.as_str(), "self" | "super" | "crate" | "Self") {
        return proc_macro2::Ident::new(&format!("{snake_name}_"), proc_macro2::Span::call_site());
    }
    if is_keyword(&snake_name) {
        proc_macro2::Ident::new_raw(&snake_name, proc_macro2::Span::call_site())
    } else {
        proc_macro2::Ident::new(&snake_name, proc_macro2::Span::call_site())
    }
}

/// A type identifier as written.
pub(crate) fn type_ident(name: &str) -> proc_macro2::Ident {
    proc_macro2::Ident::new(name, proc_macro2::Span::call_site())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_handles_acronyms_and_separators() {
        let cases = [
            ("requestWillBeSent", "request_will_be_sent"),
            ("DOMSnapshot", "dom_snapshot"),
            ("IndexedDB", "indexed_db"),
            ("frameURL", "frame_url"),
            ("URL", "url"),
            ("CSS", "css"),
            ("backendDOMNodeId", "backend_dom_node_id"),
            ("x2y", "x2y"),
            ("PWA", "pwa"),
        ];
        for (input, want) in cases {
            assert_eq!(snake(input), want, "snake({input})");
        }
    }

    #[test]
    fn pascal_makes_variants() {
        assert_eq!(pascal("same-origin"), "SameOrigin");
        assert_eq!(pascal("XHR"), "XHR");
        assert_eq!(pascal("1x"), "V1x");
        assert_eq!(pascal("navigate"), "Navigate");
        assert_eq!(pascal(""), "V");
    }
}
