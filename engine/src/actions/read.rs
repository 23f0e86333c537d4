//! Reads that never wait (find, exists, read): one check of the
//! current page; zero matches is NO_MATCH except where the contract says otherwise.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{Error, Result};

use super::{status, Locator, Status};

/// Paging for [`Locator::find`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FindOptions {
    /// All matches (paged) rather than the first.
    pub all: bool,
    /// Page size, 1..=500.
    pub limit: usize,
    /// Index of the first match returned.
    pub offset: usize,
}

impl Default for FindOptions {
    fn default() -> Self {
        Self {
            all: false,
            limit: 20,
            offset: 0,
        }
    }
}

/// One match of [`Locator::find`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FoundElement {
    /// Its index among all matches.
    pub index: usize,
    /// Lower-case tag.
    pub tag: String,
    /// Collapsed rendered text, at most 60 characters.
    pub text: String,
    /// Visibility (docs/mcp.md#actionability).
    pub visible: bool,
}

/// The answer of [`Locator::find`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FindResult {
    /// Total matches.
    pub count: usize,
    /// Offset of `matches[0]`.
    pub offset: usize,
    /// The page size used.
    pub limit: usize,
    /// The matches of this page.
    pub matches: Vec<FoundElement>,
    /// More matches than returned.
    pub truncated: bool,
    /// The offset of the next page, if any.
    pub next_offset: Option<usize>,
}

/// Text read from the page, capped at 32 KiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadText {
    /// The text (or `None` for an absent attribute).
    pub text: Option<String>,
    /// Whether it was cut.
    pub truncated: bool,
    /// Its full size in bytes.
    pub total_bytes: usize,
}

impl Locator {
    /// Lists matches without waiting; `all: false` and zero matches is NO_MATCH.
    pub async fn find(&self, options: FindOptions) -> Result<FindResult> {
        self.bounded(async {
            let answer = self
                .call(
                    "actionability.find",
                    json!({"all": options.all, "limit": options.limit, "offset": options.offset}),
                )
                .await?;
            let status = status("actionability.find", &answer)?;
            self.target_status("find", status, &answer)?;
            let res: FindResult = decode("actionability.find", answer)?;
            if !options.all && res.count == 0 {
                return Err(self.no_match("find"));
            }
            Ok(res)
        })
        .await
    }

    /// One check: whether anything matches, and how many.
    pub async fn exists(&self) -> Result<(bool, usize)> {
        self.bounded(async {
            let answer = self.call("actionability.exists", json!({})).await?;
            let status = status("actionability.exists", &answer)?;
            self.target_status("exists", status, &answer)?;
            let count = answer.get("count").and_then(Value::as_u64).unwrap_or(0);
            Ok((count > 0, usize::try_from(count).unwrap_or(usize::MAX)))
        })
        .await
    }

    async fn read(&self, fields: Value) -> Result<Value> {
        self.bounded(async {
            let answer = self.call("actionability.read", fields).await?;
            let status = status("actionability.read", &answer)?;
            match status {
                Status::NoValue => {
                    Err(Error::invalid_argument_of("selector", format!(
                        "read: {} is a <{}>, which has no value (only input, textarea and select do)",
                        self.selector.canonical(),
                        answer.get("tag").and_then(Value::as_str).unwrap_or("element")
                    )))
                }
                _ => {
                    self.target_status("read", status, &answer)?;
                    Ok(answer)
                }
            }
        })
        .await
    }

    /// The rendered text (`innerText`, trimmed) of the first match.
    pub async fn text(&self) -> Result<ReadText> {
        let answer = self.read(json!({"field": "text"})).await?;
        Ok(read_text(&answer, "text"))
    }

    /// The full value of attribute `name` of the first match (`text: None` if absent).
    pub async fn attribute(&self, name: &str) -> Result<ReadText> {
        let answer = self.read(json!({"field": "attr", "name": name})).await?;
        Ok(read_text(&answer, "value"))
    }

    /// The `value` property of the first match (input, textarea or select).
    pub async fn value(&self) -> Result<ReadText> {
        let answer = self.read(json!({"field": "value"})).await?;
        Ok(read_text(&answer, "value"))
    }

    async fn is(&self, what: &str) -> Result<bool> {
        let answer = self.read(json!({"field": "is", "what": what})).await?;
        Ok(answer.get("result").and_then(Value::as_bool) == Some(true))
    }

    /// Whether the first match is visible (docs/mcp.md#actionability); no match is `false`.
    pub async fn is_visible(&self) -> Result<bool> {
        self.is("visible").await
    }

    /// Whether the first match is enabled (docs/mcp.md#actionability).
    pub async fn is_enabled(&self) -> Result<bool> {
        self.is("enabled").await
    }

    /// Whether the first match is checked (`checked` or `aria-checked="true"`).
    pub async fn is_checked(&self) -> Result<bool> {
        self.is("checked").await
    }

    /// Chrome's own accessibility view of the first match (`Accessibility.getPartialAXTree`),
    /// without waiting; `None` when nothing matches or Chrome ignores the node. Useful to check
    /// chromate's snapshot against the browser.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// if let Some(node) = page.locator("#save")?.browser_accessibility().await? {
    ///     println!("{} {:?}", node.role, node.name);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn browser_accessibility(&self) -> Result<Option<BrowserAccessibility>> {
        self.bounded(async {
            use crate::cdp::accessibility::GetPartialAXTreeParams;
            let (frame_id, arg) = crate::selector::js_target(&self.page, &self.selector)?;
            let object = self
                .page
                .call_isolated_object(frame_id.as_deref(), "actionability.element", &arg)
                .await?;
            let Some((session, object_id)) = object else {
                return Ok(None);
            };
            let params = GetPartialAXTreeParams::default()
                .object_id(object_id)
                .fetch_relatives(false);
            let tree = session.send(&params).await?;
            let Some(node) = tree.nodes.into_iter().find(|n| !n.ignored) else {
                return Ok(None);
            };
            Ok(Some(BrowserAccessibility::from_node(node)))
        })
        .await
    }
}

/// Chrome's own accessibility view of one element
/// ([`Locator::browser_accessibility`]): what `Accessibility.getPartialAXTree` or
/// `getFullAXTree` report for its node.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrowserAccessibility {
    /// The role as Chrome spells it (`button`, `image`, `DisclosureTriangle`, …).
    pub role: String,
    /// The accessible name, as Chrome computed it (not normalised).
    pub name: String,
    /// The accessible description (`title` when it is not the name, `aria-describedby`, …).
    pub description: String,
    /// The `expanded` state, when the node has one.
    pub expanded: Option<bool>,
    /// The DOM node the accessibility node stands for.
    pub backend_node_id: Option<i64>,
}

impl BrowserAccessibility {
    /// The view of one node of an accessibility tree.
    pub fn from_node(node: crate::cdp::accessibility::AXNode) -> Self {
        use crate::cdp::accessibility::{AXPropertyName, AXValue};
        let text = |value: Option<AXValue>| {
            value
                .and_then(|v| v.value)
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let expanded = node
            .properties
            .iter()
            .flatten()
            .find(|p| p.name == AXPropertyName::Expanded)
            .and_then(|p| p.value.value.as_ref())
            .and_then(Value::as_bool);
        Self {
            role: text(node.role),
            name: text(node.name),
            description: text(node.description),
            expanded,
            backend_node_id: node.backend_dom_node_id.map(|id| id.0),
        }
    }
}

fn read_text(answer: &Value, key: &str) -> ReadText {
    ReadText {
        text: answer.get(key).and_then(Value::as_str).map(String::from),
        truncated: answer.get("truncated").and_then(Value::as_bool) == Some(true),
        total_bytes: answer
            .get("totalBytes")
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0),
    }
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(method: &str, value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|source| Error::Decode {
        method: method.into(),
        source,
    })
}
