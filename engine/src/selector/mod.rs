//! Selectors (docs/mcp.md#selectors): parsed and validated once in Rust, which gives the canonical form used in
//! every message, then resolved in the page by `js/selector.js`.
//!
//! Rust checks the grammar it can (prefixes, `role=` and `ref=` shapes, bare refs); CSS and
//! XPath syntax only the browser can judge, so the first resolution reports those. Ref
//! resolution goes through one hook, [`resolve_ref`], so the snapshot's ref table can take it
//! over without touching the actions. This module does not wait or act (`wait/`, `actions/`).

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::page::Page;

/// Every known prefix (without `=`).
const PREFIXES: [&str; 15] = [
    "css",
    "xpath",
    "id",
    "name",
    "testid",
    "tag",
    "class",
    "text",
    "text*",
    "role",
    "label",
    "placeholder",
    "alt",
    "title",
    "ref",
];

/// A parsed selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    raw: String,
    canonical: String,
    /// `Some(n)` for `ref=eN` and bare `eN`.
    element_ref: Option<u64>,
    bare: bool,
}

impl Selector {
    /// Parses `text` per docs/mcp.md#selectors. A malformed selector is [`Error::InvalidArgument`] naming it.
    ///
    /// ```
    /// let sel = chromate::Selector::parse("#save").unwrap();
    /// assert_eq!(sel.canonical(), "css=#save");
    /// ```
    pub fn parse(text: &str) -> Result<Selector> {
        let invalid = |reason: String| {
            Error::invalid_argument_of("selector", format!("invalid selector {text:?}: {reason}"))
        };
        if text.is_empty() {
            return Err(invalid("the selector is empty".into()));
        }
        if let Some(n) = bare_ref(text) {
            return Ok(Selector {
                raw: text.into(),
                canonical: format!("ref=e{n}"),
                element_ref: Some(n),
                bare: true,
            });
        }
        let (engine, value) = match text.split_once('=') {
            Some((prefix, value)) if !prefix.is_empty() => {
                let prefix = prefix.to_lowercase();
                if PREFIXES.contains(&prefix.as_str()) {
                    (prefix, value)
                } else {
                    ("css".to_string(), text)
                }
            }
            _ => ("css".to_string(), text),
        };
        let plain = |canonical: String| Selector {
            raw: text.into(),
            canonical,
            element_ref: None,
            bare: false,
        };
        match engine.as_str() {
            "ref" => {
                let value = value.trim();
                let n = parse_ref(value)
                    .ok_or_else(|| invalid(format!("ref= needs e<N>, got {value:?}")))?;
                Ok(Selector {
                    raw: text.into(),
                    canonical: format!("ref=e{n}"),
                    element_ref: Some(n),
                    bare: false,
                })
            }
            "role" => {
                let (role, name) = parse_role(value.trim()).ok_or_else(|| {
                    invalid(format!(
                        "role= needs <role> or <role>[name=<name>], got {:?}",
                        value.trim()
                    ))
                })?;
                let canonical = match name {
                    Some(name) => format!("role={role}[name={}]", quote(&name)),
                    None => format!("role={role}"),
                };
                Ok(plain(canonical))
            }
            "tag" => Ok(plain(format!("tag={}", value.to_lowercase()))),
            _ => Ok(plain(format!("{engine}={value}"))),
        }
    }

    /// The `ref=eN` selector of a ref, as [`Selector::parse`] reads `ref=eN` (what a bare `eN`
    /// the session issued stands for, docs/mcp.md#refs).
    ///
    /// ```
    /// let e7 = chromate::snapshot::ElementRef::new(7).unwrap();
    /// assert_eq!(chromate::Selector::from_element_ref(e7).canonical(), "ref=e7");
    /// ```
    pub fn from_element_ref(element_ref: crate::refs::ElementRef) -> Selector {
        let text = format!("ref={element_ref}");
        Selector {
            raw: text.clone(),
            canonical: text,
            element_ref: Some(element_ref.number()),
            bare: false,
        }
    }

    /// The canonical form for messages (`css=#save`, `role=button[name="Sign in"]`, `ref=e7`).
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// The selector as the caller wrote it.
    pub fn as_typed(&self) -> &str {
        &self.raw
    }

    /// The ref number of `ref=eN` or a bare `eN`.
    pub fn element_ref(&self) -> Option<u64> {
        self.element_ref
    }

    /// Whether this is a bare `eN` (only valid if the session issued it, docs/mcp.md#refs).
    pub fn is_bare_ref(&self) -> bool {
        self.bare
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.canonical)
    }
}

/// `^\s*e[1-9][0-9]*\s*$` → N.
fn bare_ref(text: &str) -> Option<u64> {
    let digits = text.trim().strip_prefix('e')?;
    valid_ref_digits(digits)
        .then(|| digits.parse().ok())
        .flatten()
}

/// `e<N>` / `E<N>` with N ≥ 1 → N.
fn parse_ref(value: &str) -> Option<u64> {
    let digits = value.strip_prefix(['e', 'E'])?;
    valid_ref_digits(digits)
        .then(|| digits.parse().ok())
        .flatten()
}

fn valid_ref_digits(digits: &str) -> bool {
    !digits.is_empty() && !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `role` or `role[name=<name>]` → (lower-case role, unescaped name).
fn parse_role(value: &str) -> Option<(String, Option<String>)> {
    let (role, rest) = match value.find('[') {
        Some(i) => (&value[..i], Some(&value[i..])),
        None => (value, None),
    };
    if role.is_empty() || !role.chars().all(|c| c.is_ascii_alphabetic() || c == '-') {
        return None;
    }
    let role = role.to_ascii_lowercase();
    let Some(rest) = rest else {
        return Some((role, None));
    };
    let inner = rest.strip_prefix("[name=")?.strip_suffix(']')?;
    let name = match inner.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let body = inner.strip_prefix(q)?.strip_suffix(q)?;
            let mut out = String::new();
            let mut chars = body.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => out.push(chars.next()?),
                    c if c == q => return None,
                    c => out.push(c),
                }
            }
            if body.ends_with('\\') && !body.ends_with("\\\\") {
                return None;
            }
            out
        }
        _ => {
            if inner.contains([']', '"', '\'']) {
                return None;
            }
            inner.to_string()
        }
    };
    Some((role, Some(name)))
}

/// Quotes a name for `role=…[name="…"]` (backslash before `"` and `\`).
fn quote(name: &str) -> String {
    let mut res = String::with_capacity(name.len() + 2);
    res.push('"');
    for c in name.chars() {
        if c == '"' || c == '\\' {
            res.push('\\');
        }
        res.push(c);
    }
    res.push('"');
    res
}

/// Where a ref's element lives: the frame whose isolated world holds it, and the number that
/// world's `refs` table knows it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefTarget {
    /// The frame (`None` = main frame).
    pub(crate) frame_id: Option<String>,
    /// The ref number in that world's table.
    pub(crate) element_ref: u64,
}

/// Turns `ref=eN` (or a bare `eN`) into the frame and number to resolve (docs/mcp.md#refs): a bare ref must
/// have been issued by this browser ([`Error::BareRef`]); an issued ref must belong to this tab
/// and to its frame's current document ([`Error::StaleRef`] with `unknown-ref` or
/// `document-changed`). Detached and moved elements are found by the page side at act time.
pub(crate) fn resolve_ref(page: &Page, selector: &Selector) -> Result<Option<RefTarget>> {
    let Some(number) = selector.element_ref() else {
        return Ok(None);
    };
    let text = format!("e{number}");
    let element_ref = if selector.is_bare_ref() {
        crate::page::resolve::bare_ref(page, &text)?
    } else {
        crate::refs::ElementRef::parse(&text).ok_or_else(|| {
            Error::invalid_argument_of("selector", format!("ref={text} is not a valid ref"))
        })?
    };
    let target = crate::page::resolve::resolve_ref(page, element_ref)?;
    Ok(Some(RefTarget {
        frame_id: Some(target.frame_id),
        element_ref: target.number,
    }))
}

/// The JS target object (`{selector}` or `{ref}`) and the frame to call in.
pub(crate) fn js_target(page: &Page, selector: &Selector) -> Result<(Option<String>, Value)> {
    match resolve_ref(page, selector)? {
        Some(target) => Ok((target.frame_id, json!({ "ref": target.element_ref }))),
        None => Ok((None, json!({ "selector": selector.as_typed() }))),
    }
}

#[cfg(test)]
mod tests;
