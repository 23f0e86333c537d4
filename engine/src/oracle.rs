//! Chrome's accessibility tree as the reference a snapshot is scored against: the controls a
//! page exposes ([`SCORED_ROLES`], as role + name multisets), read from
//! `Accessibility.getFullAXTree` in every frame of the page, from a chromate [`Snapshot`], or
//! from any tool's text snapshot (Playwright's YAML, chrome-devtools-mcp's `uid=` lines,
//! agent-browser's tree), and the recall and precision of one set against another.
//!
//! `chromate bench-snapshot` scores every tool with it, and the oracle and corpus tests score
//! chromate's own snapshot with it, so the figures a user gets and the ones CI asserts are
//! computed by the same code.

use std::collections::{BTreeMap, HashMap};

use crate::cdp::accessibility::GetFullAXTreeParams;
use crate::cdp::dom::{GetDocumentParams, QuerySelectorAllParams, RemoveNodeParams};
use crate::cdp::page::FrameId;
use crate::{actions::BrowserAccessibility, snapshot::LineKind, snapshot::Snapshot, Page, Result};

/// The roles scored, as the snapshot prints them: the controls a person acts on (a search box
/// counts as a textbox, a menu item that checks as a menu item) and headings.
pub const SCORED_ROLES: &[&str] = &[
    "link",
    "button",
    "textbox",
    "combobox",
    "checkbox",
    "radio",
    "heading",
    "tab",
    "menuitem",
    "option",
    "switch",
    "slider",
    "spinbutton",
];

/// One scored entry: role and name, both as the contract prints them.
pub type Control = (String, String);

/// A multiset of scored controls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Controls {
    counts: BTreeMap<Control, usize>,
}

/// Counts of one role (or of every scored role) of a listing against its reference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Score {
    /// Entries of the reference (Chrome's tree).
    pub reference: usize,
    /// Entries the scored listing has.
    pub listed: usize,
    /// Entries both have (per entry, the smaller count).
    pub matched: usize,
}

impl Score {
    /// Adds another page's or role's counts (pooling).
    pub fn add(&mut self, other: Score) {
        self.reference += other.reference;
        self.listed += other.listed;
        self.matched += other.matched;
    }

    /// The share of the reference's entries that are listed (1 for an empty reference).
    pub fn recall(&self) -> f64 {
        ratio(self.matched, self.reference)
    }

    /// The share of the listed entries that the reference has (1 for an empty listing).
    pub fn precision(&self) -> f64 {
        ratio(self.matched, self.listed)
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

/// The role a scored entry counts as: Chrome's and the peers' spellings mapped onto the
/// snapshot's (`searchbox` is a textbox; a details summary, Chrome's `DisclosureTriangle`, is
/// the snapshot's button, docs/mcp.md#snapshots; an option of a native select, Chrome's
/// `MenuListOption`, is an option; `menuitemcheckbox` and `menuitemradio` are menu items).
fn scored_role(role: &str) -> Option<&'static str> {
    let role = match role {
        "DisclosureTriangle" => "button",
        "searchbox" => "textbox",
        "MenuListOption" => "option",
        "menuitemcheckbox" | "menuitemradio" => "menuitem",
        other => other,
    };
    SCORED_ROLES.iter().copied().find(|r| *r == role)
}

/// A name as the contract prints it: whitespace normalised, private-use characters (icon-font
/// glyphs, which Chrome drops from names in some runs and keeps in others) and zero-width
/// characters (a zero-width space or joiner, a soft hyphen: not whitespace to Unicode, but
/// nothing a person sees, and tools differ in keeping them) left out, cut at 80 characters.
pub fn contract_name(name: &str) -> String {
    let visible: String = name
        .chars()
        .filter(|c| !is_private_use(*c) && !is_zero_width(*c))
        .collect();
    let normalised = visible.split_whitespace().collect::<Vec<_>>().join(" ");
    if normalised.chars().count() > 80 {
        let mut cut: String = normalised.chars().take(79).collect();
        cut.push('…');
        cut
    } else {
        normalised
    }
}

fn is_private_use(c: char) -> bool {
    matches!(u32::from(c), 0xE000..=0xF8FF | 0xF0000..=0x10FFFD)
}

fn is_zero_width(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'
    )
}

impl Controls {
    /// No controls.
    pub fn new() -> Controls {
        Controls::default()
    }

    /// Counts one control if its role is scored (the name is taken as the contract prints it).
    pub fn insert(&mut self, role: &str, name: &str) {
        if let Some(role) = scored_role(role) {
            *self
                .counts
                .entry((role.to_string(), contract_name(name)))
                .or_default() += 1;
        }
    }

    /// The scored controls of a chromate snapshot's semantic lines, with the options a native
    /// select's line lists (`options=["Dog", "Cat" (selected), +3 more]`: each option named
    /// is an `option`, as Chrome lists them under the select; the ones counted in `+3 more`
    /// are not listed, so not counted).
    pub fn from_snapshot(snapshot: &Snapshot) -> Controls {
        let mut controls = Controls::new();
        for line in &snapshot.lines {
            if line.kind == LineKind::Semantic {
                controls.insert(&line.role, line.name.as_deref().unwrap_or(""));
                for option in listed_options(line.options.as_deref().unwrap_or("")) {
                    controls.insert("option", &option);
                }
            }
        }
        controls
    }

    /// The scored controls of a text snapshot, of chromate or of another tool: each line's
    /// leading tree marks (`- `), handle (`e12: `, `uid=1_4 `) and indentation are skipped, the
    /// next word is the role, and a double-quoted string right after it is the name. Lines
    /// that do not read so are skipped. Names are read as each tool writes them: JSON-style
    /// escapes (chromate, Playwright, agent-browser); a YAML key Playwright single-quotes
    /// because it holds `: ` or `#` (`- 'link "a: b"'`, a quote doubled inside); and
    /// chrome-devtools-mcp's raw names, quotes and backslashes unescaped, which end at the
    /// quote after which only its `attr` and `attr="value"` words follow.
    ///
    /// In a YAML-style tree (Playwright MCP, agent-browser), an entry printed without a name
    /// whose line opens children (`- link [ref=e4]:`) is named from them, as its accessible
    /// name is: those tools leave out a name that the text below repeats.
    pub fn from_text(text: &str) -> Controls {
        let lines: Vec<&str> = text.lines().collect();
        let mut controls = Controls::new();
        for (i, line) in lines.iter().enumerate() {
            if let Some((role, mut name)) = parse_line(line) {
                if name.is_empty() && line.trim_end().ends_with(':') {
                    name = text_below(&lines, i);
                }
                controls.insert(role, &name);
                // chromate's select lines list their options after `options=`.
                if let Some((_, list)) = line.split_once(" options=[") {
                    for option in listed_options(list) {
                        controls.insert("option", &option);
                    }
                }
            }
        }
        controls
    }

    /// How many controls, in all.
    pub fn len(&self) -> usize {
        self.counts.values().sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Each distinct control with its count.
    pub fn iter(&self) -> impl Iterator<Item = (&Control, usize)> {
        self.counts.iter().map(|(c, n)| (c, *n))
    }

    /// How many times `control` is counted.
    pub fn count(&self, control: &Control) -> usize {
        self.counts.get(control).copied().unwrap_or(0)
    }

    /// The same controls with names compared regardless of whitespace: Chrome names a
    /// word-break opportunity (`<wbr>`) as a space that no one sees (`assert_ eq`), and tools
    /// differ in whether they print it; comparing across tools, that difference is not theirs.
    pub fn ignoring_whitespace(&self) -> Controls {
        let mut counts = BTreeMap::new();
        for ((role, name), n) in &self.counts {
            let name: String = name.chars().filter(|c| !c.is_whitespace()).collect();
            *counts.entry((role.clone(), name)).or_default() += n;
        }
        Controls { counts }
    }

    /// `listed` scored against `self` as the reference, for one role or (`None`) for all.
    pub fn score(&self, listed: &Controls, role: Option<&str>) -> Score {
        let of_role = |control: &Control| role.is_none_or(|r| control.0 == r);
        let total = |set: &Controls| -> usize {
            set.counts
                .iter()
                .filter(|(c, _)| of_role(c))
                .map(|(_, n)| n)
                .sum()
        };
        let matched = self
            .counts
            .iter()
            .filter(|(c, _)| of_role(c))
            .map(|(c, n)| (*n).min(listed.count(c)))
            .sum();
        Score {
            reference: total(self),
            listed: total(listed),
            matched,
        }
    }

    /// Every control `self` has more of than `other`: the control, `self`'s count and
    /// `other`'s.
    pub fn surplus_over<'a>(
        &'a self,
        other: &'a Controls,
    ) -> impl Iterator<Item = (&'a Control, usize, usize)> + 'a {
        self.counts.iter().filter_map(move |(c, n)| {
            let have = other.count(c);
            (have < *n).then_some((c, *n, have))
        })
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The text of the YAML children of `lines[at]`: each child's name, or its inline value
/// (`- code: "?"`, `- text: Unary`), `/url:` and other properties left out.
fn text_below(lines: &[&str], at: usize) -> String {
    let depth = indent(lines[at]);
    let mut parts = Vec::new();
    let mut skip_below: Option<usize> = None;
    for line in lines[at + 1..].iter().take_while(|l| indent(l) > depth) {
        let here = indent(line);
        if skip_below.is_some_and(|d| here > d) {
            continue;
        }
        skip_below = None;
        let item = line.trim_start();
        let Some(item) = item.strip_prefix("- ") else {
            continue;
        };
        if item.starts_with('/') {
            continue;
        }
        if let Some(quoted_name) = item
            .split_once(' ')
            .and_then(|(_, rest)| rest.strip_prefix('"'))
            .and_then(quoted)
        {
            parts.push(quoted_name);
            skip_below = Some(here);
            continue;
        }
        if let Some((_, value)) = item.split_once(": ") {
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(quoted)
                .unwrap_or_else(|| value.to_string());
            parts.push(value);
        }
    }
    parts.join(" ")
}

/// Role and name of one line of a text snapshot, if it has the shape of an entry.
fn parse_line(line: &str) -> Option<(&'static str, String)> {
    let mut rest = line.trim_start();
    rest = rest.strip_prefix("- ").unwrap_or(rest);
    // A YAML key single-quoted as a whole (Playwright): read what it quotes.
    if let Some(quoted_key) = rest.strip_prefix('\'') {
        let key = single_quoted(quoted_key)?;
        return parse_entry(&key, false);
    }
    // A handle first: `uid=1_4 ` (chrome-devtools-mcp, raw names) or `e12: ` (chromate).
    if let Some(after) = rest.strip_prefix("uid=") {
        return parse_entry(after.split_once(' ')?.1, true);
    }
    if let Some((handle, after)) = rest.split_once(": ") {
        if handle.len() > 1
            && handle.starts_with('e')
            && handle[1..].bytes().all(|b| b.is_ascii_digit())
        {
            rest = after;
        }
    }
    parse_entry(rest, false)
}

/// `role "name" …`: the role (as scored) and the name, escaped JSON-style or (`raw`, as
/// chrome-devtools-mcp writes it) not at all.
fn parse_entry(rest: &str, raw: bool) -> Option<(&'static str, String)> {
    let end = rest
        .find(|c: char| c.is_whitespace() || c == ':' || c == '[')
        .unwrap_or(rest.len());
    let role = scored_role(&rest[..end])?;
    let after = rest[end..].trim_start();
    let name = match after.strip_prefix('"') {
        Some(text) if raw => raw_quoted(text),
        Some(text) => quoted(text),
        None => None,
    };
    Some((role, name.unwrap_or_default()))
}

/// A name chrome-devtools-mcp printed between quotes without escaping anything: it ends at the
/// first quote after which the line reads as its attribute words (`focusable`,
/// `value="…"`, `[selected in the DevTools Elements panel]`), or at the line's last quote.
fn raw_quoted(text: &str) -> Option<String> {
    let quotes = text.match_indices('"').map(|(i, _)| i);
    let mut last = None;
    for at in quotes {
        if attribute_words(&text[at + 1..]) {
            return Some(text[..at].to_string());
        }
        last = Some(at);
    }
    last.map(|at| text[..at].to_string())
}

/// Whether `text` is nothing but chrome-devtools-mcp's attribute words, each after a space.
fn attribute_words(mut text: &str) -> bool {
    loop {
        if text.is_empty() || text == " [selected in the DevTools Elements panel]" {
            return true;
        }
        let Some(rest) = text.strip_prefix(' ') else {
            return false;
        };
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            return false;
        }
        text = &rest[end..];
        if let Some(value) = text.strip_prefix("=\"") {
            let Some(close) = value.find('"') else {
                return false;
            };
            text = &value[close + 1..];
        }
    }
}

/// The text of a YAML single-quoted scalar whose opening quote is gone (`''` is one quote);
/// `None` if it never closes.
fn single_quoted(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            if chars.peek() == Some(&'\'') {
                chars.next();
                out.push('\'');
            } else {
                return Some(out);
            }
        } else {
            out.push(c);
        }
    }
    None
}

/// The string up to the closing quote of a double-quoted string whose opening quote is gone,
/// with JSON's and YAML's escapes read (`\"`, `\\`, `\n`, `\t`, `\r`, `\b`, `\f`,
/// `\xNN`, `\uNNNN`); `None` if it never closes.
fn quoted(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'x' => out.push(hex_char(&mut chars, 2)?),
                'u' => out.push(hex_char(&mut chars, 4)?),
                other => out.push(other),
            },
            other => out.push(other),
        }
    }
    None
}

/// The labels a chromate select line's `options=` list names, in order: its JSON strings up to
/// the list's closing bracket (`(selected)`, `(disabled)` and `+N more` are not labels).
fn listed_options(list: &str) -> Vec<String> {
    let mut labels = Vec::new();
    let mut rest = list;
    loop {
        let Some(at) = rest.find(['"', ']']) else {
            return labels;
        };
        if rest[at..].starts_with(']') {
            return labels;
        }
        let text = &rest[at + 1..];
        let Some(label) = quoted(text) else {
            return labels;
        };
        // Past the closing quote: the label's escaped length is found again by scanning.
        let mut escaped = false;
        let Some(end) = text.char_indices().find_map(|(i, c)| {
            let closes = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            closes.then_some(i)
        }) else {
            return labels;
        };
        labels.push(label);
        rest = &text[end + 1..];
    }
}

/// The character whose code is the next `digits` hex digits ('\u{FFFD}' for a surrogate).
fn hex_char(chars: &mut std::str::Chars<'_>, digits: usize) -> Option<char> {
    let hex: String = chars.by_ref().take(digits).collect();
    let code = u32::from_str_radix(&hex, 16).ok()?;
    Some(char::from_u32(code).unwrap_or('\u{FFFD}'))
}

/// Chrome's roles of the native date and time fields, whose day, month, year, hour and minute
/// pieces Chrome lists as spin buttons of their own: parts of one control (the field), which
/// is what a person and the tools name.
const NATIVE_FIELDS: &[&str] = &["Date", "DateTime", "InputTime"];

/// Whether the node under `parent` (by id, in `parents`: id → parent id and role) is a piece
/// of a native date or time field.
fn inside_native_field(
    parents: &HashMap<String, (Option<String>, String)>,
    parent: Option<&str>,
) -> bool {
    let mut next = parent;
    // Bounded: a malformed tree with a loop ends here too.
    for _ in 0..64 {
        let Some((up, role)) = next.and_then(|id| parents.get(id)) else {
            return false;
        };
        if NATIVE_FIELDS.contains(&role.as_str()) {
            return true;
        }
        next = up.as_deref();
    }
    false
}

impl Page {
    /// Chrome's scored controls on the page now, in every frame (each frame's document is a
    /// tree of its own, read through the session that owns the frame): every node of
    /// `Accessibility.getFullAXTree` that is not ignored and has a scored role, by role and
    /// name, but the pieces of a native date or time field (the field is one control).
    pub async fn chrome_controls(&self) -> Result<Controls> {
        let mut controls = Controls::new();
        for (i, (frame_id, session)) in self.frame_sessions().into_iter().enumerate() {
            // The main frame (listed first) as the root frame, as Chrome reads it by default;
            // a child frame by its id.
            let params = if i == 0 {
                GetFullAXTreeParams::default()
            } else {
                GetFullAXTreeParams::default().frame_id(FrameId(frame_id.clone()))
            };
            let tree = match session.send(&params).await {
                Ok(tree) => tree,
                // A child frame that went away meanwhile has no controls to count.
                Err(_) if i > 0 && !self.frames().iter().any(|f| f.id == frame_id) => continue,
                Err(err) => return Err(err),
            };
            let parents: HashMap<String, (Option<String>, String)> = tree
                .nodes
                .iter()
                .map(|n| {
                    let role = n
                        .role
                        .as_ref()
                        .and_then(|r| r.value.as_ref())
                        .and_then(|v| v.as_str())
                        .unwrap_or("")
                        .to_string();
                    (
                        n.node_id.0.clone(),
                        (n.parent_id.as_ref().map(|p| p.0.clone()), role),
                    )
                })
                .collect();
            for node in tree.nodes.into_iter().filter(|n| !n.ignored) {
                if inside_native_field(&parents, node.parent_id.as_ref().map(|p| p.0.as_str())) {
                    continue;
                }
                let node = BrowserAccessibility::from_node(node);
                controls.insert(&node.role, &node.name);
            }
        }
        Ok(controls)
    }

    /// Takes the `<wbr>` elements out of the page (through the protocol, no page script):
    /// Chrome names a word-break opportunity as a space (`assert_ eq`), which no one sees, while
    /// the snapshot prints the name as it reads (`assert_eq`), on purpose. It changes the page:
    /// take it after the snapshot, before [`Page::chrome_controls`].
    pub async fn remove_word_breaks(&self) -> Result<usize> {
        let session = self.session();
        let document = session.send(&GetDocumentParams::default()).await?;
        let breaks = session
            .send(&QuerySelectorAllParams::new(document.root.node_id, "wbr"))
            .await?;
        let n = breaks.node_ids.len();
        for node_id in breaks.node_ids {
            session.send(&RemoveNodeParams::new(node_id)).await?;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::{contract_name, listed_options, Controls};

    #[test]
    fn a_select_lines_listed_options_count_as_options() {
        assert_eq!(
            listed_options(r#""Dog", "Cat \"x\" ]" (selected), "Fish" (disabled), +3 more] #pet"#),
            vec!["Dog", "Cat \"x\" ]", "Fish"]
        );
        assert!(listed_options("").is_empty());
        assert!(listed_options(r#""unclosed"#).is_empty());
        let text = "e37: combobox \"Pet kind\" value=\"c\" options=[\"Dog\", \"Cat\" (selected), +1 more] #pet-kind\n";
        let named: Vec<(String, String)> = Controls::from_text(text)
            .iter()
            .map(|(c, _)| c.clone())
            .collect();
        let pair = |r: &str, n: &str| (r.to_string(), n.to_string());
        assert_eq!(
            named,
            vec![
                pair("combobox", "Pet kind"),
                pair("option", "Cat"),
                pair("option", "Dog")
            ]
        );
    }

    #[test]
    fn text_snapshots_of_every_tool_read_as_role_and_name() {
        let text = "\
e3: link \"Home\" -> /\n\
  e4: button \"Say \\\"hi\\\"\"\n\
- heading \"Title\" [level=1] [ref=e2]\n\
  - link \"Docs\" [ref=e5]:\n\
    - /url: /docs\n\
  - button [ref=e6]\n\
uid=1_4 searchbox \"Search\"\n\
uid=1_5 DisclosureTriangle \"More\" expandable\n\
- generic [ref=e9]: text\n\
- paragraph: link \"not a link\"\n\
textbox:\n";
        let yaml = r#"- link [ref=e1] [cursor=pointer]:
  - /url: ops.html#try
  - code [ref=e2]: "?"
- heading [level=2] [ref=e3]:
  - link "Operator" [ref=e4]:
    - /url: '#op'
    - text: Operator
  - text: precedence
- button [ref=e5]
"#;
        let named: Vec<(String, String)> = Controls::from_text(yaml)
            .iter()
            .map(|(c, _)| c.clone())
            .collect();
        let pair = |r: &str, n: &str| (r.to_string(), n.to_string());
        assert_eq!(
            named,
            vec![
                pair("button", ""),
                pair("heading", "Operator precedence"),
                pair("link", "?"),
                pair("link", "Operator"),
            ]
        );
        let controls = Controls::from_text(text);
        let entries: Vec<(String, String, usize)> = controls
            .iter()
            .map(|((r, n), c)| (r.clone(), n.clone(), c))
            .collect();
        let want = |r: &str, n: &str| (r.to_string(), n.to_string(), 1);
        assert_eq!(
            entries,
            vec![
                want("button", ""),
                want("button", "More"),
                want("button", "Say \"hi\""),
                want("heading", "Title"),
                want("link", "Docs"),
                want("link", "Home"),
                want("textbox", ""),
                want("textbox", "Search"),
            ]
        );
    }

    /// Each tool's own way of writing a name: the lines are as the tools print them.
    #[test]
    fn names_read_as_each_tool_writes_them() {
        let text = format!(
            r#"uid=2_1 link "C:\path\to "file"" focusable url="https://h/x"
uid=2_2 button "say "hi" now" disableable disabled
uid=2_3 heading "Class "Vec"" level="2" [selected in the DevTools Elements panel]
uid=2_4 MenuListOption "Blue" selectable selected
- 'link "Note: see #2"' [ref=e7]
- 'button "it''s"' [ref=e8]
- tab "Tabé 1" [selected] [ref=e9]
- link "foot{zwsp}note" [ref=e10]
- menuitemcheckbox "Bold" [checked] [ref=e11]
e12: switch "Dark mode" checked
e13: slider "Volume" value=3
e14: spinbutton "Count"
"#,
            zwsp = '\u{200B}'
        );
        let entries: Vec<(String, String)> = Controls::from_text(&text)
            .iter()
            .map(|(c, _)| c.clone())
            .collect();
        let pair = |r: &str, n: &str| (r.to_string(), n.to_string());
        assert_eq!(
            entries,
            vec![
                pair("button", "it's"),
                pair("button", "say \"hi\" now"),
                pair("heading", "Class \"Vec\""),
                pair("link", "C:\\path\\to \"file\""),
                pair("link", "Note: see #2"),
                pair("link", "footnote"),
                pair("menuitem", "Bold"),
                pair("option", "Blue"),
                pair("slider", "Volume"),
                pair("spinbutton", "Count"),
                pair("switch", "Dark mode"),
                pair("tab", "Tabé 1"),
            ]
        );
    }

    #[test]
    fn scores_count_each_entry_up_to_the_smaller_count() {
        let mut reference = Controls::new();
        let mut listed = Controls::new();
        for _ in 0..3 {
            reference.insert("link", "a");
        }
        reference.insert("button", "b");
        listed.insert("link", "a");
        listed.insert("link", "a");
        listed.insert("heading", "extra");
        let all = reference.score(&listed, None);
        assert_eq!((all.reference, all.listed, all.matched), (4, 3, 2));
        assert_eq!(all.recall(), 0.5);
        assert!((all.precision() - 2.0 / 3.0).abs() < 1e-9);
        let links = reference.score(&listed, Some("link"));
        assert_eq!((links.reference, links.listed, links.matched), (3, 2, 2));
        assert_eq!(
            reference.surplus_over(&listed).count(),
            2,
            "the third link and the button"
        );
    }

    #[test]
    fn names_compare_as_the_contract_prints_them() {
        assert_eq!(contract_name("  a \n b\u{e001} "), "a b");
        assert_eq!(contract_name(&"x".repeat(90)).chars().count(), 80);
        let mut spaced = Controls::new();
        spaced.insert("link", "assert_ eq");
        let mut tight = Controls::new();
        tight.insert("link", "assert_eq");
        assert_eq!(spaced.score(&tight, None).matched, 0);
        assert_eq!(
            spaced
                .ignoring_whitespace()
                .score(&tight.ignoring_whitespace(), None)
                .matched,
            1
        );
    }
}
