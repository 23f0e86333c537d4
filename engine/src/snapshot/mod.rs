//! Snapshots (docs/mcp.md#snapshots): what a person can see and use on the page, as numbered lines.
//!
//! The walk runs in the page (`js/snapshot.js`) and returns line records; this module drives it
//! frame by frame (a cross-origin iframe is walked in its own frame's isolated world with the
//! budgets left and its lines spliced in place, two spaces deeper), records every newly minted
//! ref in the browser-wide table (`refs.rs`), and renders the contract's text (`render.rs`) and
//! diffs ([`diff`]). It does not keep a baseline or count revisions: that is the command layer's.

pub(crate) mod diff;
use crate::refs;
pub(crate) mod render;

#[cfg(test)]
mod tests;

use std::future::Future;
use std::pin::Pin;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::cdp::{dom, runtime};
use crate::error::{Error, Result};
use crate::{Page, Selector};

pub use diff::{diff, Diff, NEW_UNLISTED};
pub use refs::ElementRef;

/// What to snapshot and how much.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// The semantic line budget (docs/mcp.md#snapshots); evidence (10) and ordinary text (7) keep theirs.
    pub max_lines: usize,
    /// Only this element's subtree: any selector (docs/mcp.md#selectors; top document), or a ref (`ref=e7`, or a
    /// bare `e7` this browser issued) in whichever frame holds it; parsed by the caller, once.
    pub scope: Option<Selector>,
    /// Pages a snapshot too long for its budget: lists only what comes after this element in
    /// document order (the [`Snapshot::next_after`] of the previous page), at the depths of the
    /// whole snapshot.
    pub after: Option<ElementRef>,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        Self {
            max_lines: 80,
            scope: None,
            after: None,
        }
    }
}

/// A snapshot of one tab.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The top document's URL (full; the header cuts it).
    pub url: String,
    /// The top document's title.
    pub title: String,
    /// Opaque; changes whenever the tab's document is replaced (navigation, reload, another
    /// tab).
    pub document_id: String,
    /// The tab's target id.
    pub target_id: String,
    /// The listed elements in document order, iframe content spliced in.
    pub lines: Vec<Line>,
    /// Text lines beyond the text budget (at most [`UNLISTED_TEXT`], no refs), in document
    /// order: the view does not show them; a diff shows those that are new
    /// (docs/mcp.md#observations), so that text an action makes appear is seen.
    pub unlisted: Vec<Line>,
    /// Whether a budget left something out.
    pub truncated: bool,
    /// When the semantic budget left elements out: the last ref shown, to pass as
    /// [`SnapshotOptions::after`] for the next page.
    pub next_after: Option<ElementRef>,
    /// Time spent walking inside the page(s), in milliseconds.
    pub page_ms: f64,
}

/// How many text lines beyond the text budget a snapshot keeps unlisted ([`Snapshot::unlisted`]).
pub const UNLISTED_TEXT: u64 = 40;

/// What kind of candidate a line lists (docs/mcp.md#snapshots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Controls, landmarks, headings, images, shadow hosts, elements with a role.
    Semantic,
    /// An `iframe` (its content follows, indented).
    Iframe,
    /// Status and result text (`output`, live regions, `#status`…).
    Evidence,
    /// Ordinary `p`, `dt`, `dd` text.
    Text,
    /// The `#shadow-root (open)` marker; it has no ref.
    ShadowRoot,
}

/// A `checked` flag (docs/mcp.md#snapshots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// `(checked)`.
    True,
    /// `(checked=mixed)`.
    Mixed,
}

/// One listed element (docs/mcp.md#snapshots).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Line {
    /// Indentation in levels of two spaces.
    pub depth: usize,
    /// The element's ref (`None` only for the shadow-root marker).
    pub element_ref: Option<ElementRef>,
    /// `button`, `text`, `x-card`, …
    pub role: String,
    /// The line's candidate class.
    pub kind: LineKind,
    /// Whether the line prints `(container)`.
    pub container: bool,
    /// The accessible name, already cut at 80.
    pub name: Option<String>,
    /// Heading level.
    pub level: Option<u32>,
    /// Link destination, as short as it reads against the document (docs/mcp.md#snapshots): `#fragment`,
    /// relative under the document's directory, the path from the site's root, or absolute for
    /// another origin.
    pub href: Option<String>,
    /// Field value (secrets are never here).
    pub value: Option<String>,
    /// A native select's options, rendered (docs/mcp.md#snapshots): `["Dog", "Cat" (selected),
    /// +12 more]`.
    pub options: Option<String>,
    /// `#id`, `[data-testid="…"]` or `tag[name="…"]`.
    pub hint: Option<String>,
    /// `(disabled)`.
    pub disabled: bool,
    /// `(checked)` or `(checked=mixed)`.
    pub checked: Option<Checked>,
    /// `(selected)`.
    pub selected: bool,
    /// `(expanded=…)`.
    pub expanded: Option<String>,
    /// `(pressed=…)`.
    pub pressed: Option<String>,
    /// `(current=…)`.
    pub current: Option<String>,
}

/// A line record's `kind` as `engine/src/js/snapshot.js` writes it (its `classify` returns,
/// the shadow-root marker, an iframe line): a kind the Rust side does not know fails to decode
/// instead of passing for a semantic line; a unit test reads the script's literals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "lowercase")]
enum RecordKind {
    Semantic,
    Iframe,
    Evidence,
    Text,
    Shadow,
}

/// A line record's `checked` as `snapshot.js` writes it: `true` or `"mixed"` (absent when
/// unchecked); another word fails to decode instead of reading as unchecked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
enum RecordChecked {
    Flag(bool),
    Mixed(MixedWord),
}

/// The one word `checked` takes besides a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum MixedWord {
    Mixed,
}

/// A line record as `snapshot.take` returns it (`takeJson` sends the same, as JSON text).
#[derive(Debug, Deserialize)]
struct LineRecord {
    depth: usize,
    #[serde(default, rename = "ref")]
    number: u64,
    #[serde(default)]
    role: String,
    kind: RecordKind,
    #[serde(default)]
    container: bool,
    name: Option<String>,
    level: Option<u32>,
    href: Option<String>,
    value: Option<String>,
    options: Option<String>,
    hint: Option<String>,
    #[serde(default)]
    disabled: bool,
    checked: Option<RecordChecked>,
    #[serde(default)]
    selected: bool,
    expanded: Option<String>,
    pressed: Option<String>,
    current: Option<String>,
    #[serde(default)]
    unlisted: bool,
}

impl LineRecord {
    fn into_line(self, depth_offset: usize) -> Line {
        let kind = match self.kind {
            RecordKind::Iframe => LineKind::Iframe,
            RecordKind::Evidence => LineKind::Evidence,
            RecordKind::Text => LineKind::Text,
            RecordKind::Shadow => LineKind::ShadowRoot,
            RecordKind::Semantic => LineKind::Semantic,
        };
        let checked = match self.checked {
            Some(RecordChecked::Mixed(MixedWord::Mixed)) => Some(Checked::Mixed),
            Some(RecordChecked::Flag(true)) => Some(Checked::True),
            Some(RecordChecked::Flag(false)) | None => None,
        };
        Line {
            depth: self.depth + depth_offset,
            element_ref: (kind != LineKind::ShadowRoot)
                .then(|| ElementRef::new(self.number))
                .flatten(),
            role: self.role,
            kind,
            container: self.container,
            name: self.name,
            level: self.level,
            href: self.href,
            value: self.value,
            options: self.options,
            hint: self.hint,
            disabled: self.disabled,
            checked,
            selected: self.selected,
            expanded: self.expanded,
            pressed: self.pressed,
            current: self.current,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize)]
struct Budgets {
    semantic: u64,
    evidence: u64,
    text: u64,
    #[serde(default)]
    unlisted: u64,
}

impl Budgets {
    /// The most refs a walk with these budgets mints: one per listed line (unlisted text has
    /// no ref; a shadow root's marker takes a semantic line but mints nothing).
    fn mintable(&self) -> u64 {
        self.semantic
            .saturating_add(self.evidence)
            .saturating_add(self.text)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Piece {
    lines: Vec<LineRecord>,
    next_ref: u64,
    budgets: Budgets,
    #[serde(default)]
    truncated: bool,
    #[serde(default)]
    more: bool,
    /// In the piece where `more` became true: the last ref listed before the cut (0: none).
    cut_ref: Option<u64>,
    #[serde(default)]
    skipping: bool,
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    ms: f64,
    paused: Option<Paused>,
}

#[derive(Debug, Deserialize)]
struct Paused {
    token: u64,
    depth: usize,
}

/// The running state of one snapshot walk across frames.
struct Walk {
    lines: Vec<Line>,
    unlisted: Vec<Line>,
    /// Newly minted refs and the frame whose world holds them.
    minted: Vec<(u64, String)>,
    /// The numbers this walk may mint ([`crate::refs::Reservation`]).
    reserved: std::ops::Range<u64>,
    next_ref: u64,
    budgets: Budgets,
    /// How many options a native select's line lists (docs/mcp.md#snapshots).
    max_options: u64,
    truncated: bool,
    /// The semantic budget left elements out.
    more: bool,
    /// The last ref listed before the semantic budget left an element out.
    cut_after: Option<u64>,
    /// A paged walk's `after` element, while it has not been reached.
    after: Option<u64>,
    title: Option<String>,
    url: Option<String>,
    page_ms: f64,
}

impl Walk {
    /// The last ref listed so far (0: none).
    fn last_ref(&self) -> u64 {
        self.lines
            .iter()
            .rev()
            .find_map(|line| line.element_ref)
            .map_or(0, ElementRef::number)
    }

    fn absorb(&mut self, piece: Piece, frame_id: &str, depth_offset: usize) -> Option<Paused> {
        if self.title.is_none() {
            self.title = Some(piece.title);
            self.url = Some(piece.url);
        }
        for record in piece.lines {
            if record.kind != RecordKind::Shadow && self.reserved.contains(&record.number) {
                self.minted.push((record.number, frame_id.to_string()));
            }
            if record.unlisted {
                self.unlisted.push(record.into_line(depth_offset));
                continue;
            }
            self.lines.push(record.into_line(depth_offset));
        }
        self.next_ref = self.next_ref.max(piece.next_ref);
        self.budgets = piece.budgets;
        self.truncated |= piece.truncated;
        if piece.more && !self.more {
            self.more = true;
            self.cut_after = piece.cut_ref.filter(|number| *number > 0);
        }
        if !piece.skipping {
            self.after = None;
        }
        self.page_ms += piece.ms;
        piece.paused
    }
}

/// A `{ok: false}` answer of the page walk (`engine/src/js/snapshot.js`, with the selector
/// errors of `engine/src/js/selector.js`), one variant per `error` the scripts write: a unit
/// test reads them from the scripts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "error", rename_all = "kebab-case")]
enum WalkFailure {
    /// The scope selector matches nothing.
    NoMatch { canonical: Option<String> },
    /// The browser rejected the scope selector (`reason`, `browserMessage`: from the raw answer).
    #[serde(rename = "invalid selector")]
    InvalidSelector { canonical: Option<String> },
    /// A scope ref no longer resolves (the walk resolves refs before it starts, so rare).
    StaleRef,
    /// `resume` was given a token the page does not hold.
    UnknownToken,
}

impl WalkFailure {
    /// The script's word for it, for messages.
    fn as_str(&self) -> &'static str {
        match self {
            WalkFailure::NoMatch { .. } => "no-match",
            WalkFailure::InvalidSelector { .. } => "invalid selector",
            WalkFailure::StaleRef => "stale-ref",
            WalkFailure::UnknownToken => "unknown-token",
        }
    }
}

/// Decodes a `takeJson`/`resumeJson` answer (the JSON text of a `take`/`resume` result), or the
/// error it reports.
fn decode_piece(answer: Value, scope: Option<&str>) -> Result<Piece> {
    let decode_error = |source| Error::Decode {
        method: "snapshot.take".into(),
        source,
    };
    let value: Value = match answer {
        // `JSON.stringify` escapes a lone surrogate of page text as `\ud800`.
        Value::String(text) => {
            serde_json::from_str(&crate::transport::replace_lone_surrogates_str(&text))
                .map_err(decode_error)?
        }
        other => other,
    };
    if value.get("ok") == Some(&Value::Bool(false)) {
        let failure: WalkFailure = serde_json::from_value(value.clone()).map_err(decode_error)?;
        let canonical = |given: Option<String>| {
            given
                .or_else(|| scope.map(str::to_owned))
                .unwrap_or_default()
        };
        return Err(match failure {
            WalkFailure::NoMatch { canonical: given } => Error::NoMatch {
                verb: "snapshot".into(),
                selector: canonical(given),
            },
            WalkFailure::InvalidSelector { canonical: given } => {
                Error::invalid_selector("snapshot", &canonical(given), &value)
            }
            WalkFailure::StaleRef | WalkFailure::UnknownToken => Error::StateInvalid {
                message: format!("snapshot: the page walk failed ({})", failure.as_str()),
            },
        });
    }
    serde_json::from_value(value).map_err(decode_error)
}

/// Where the walk starts.
enum Scope {
    Whole,
    Selector(String),
    Ref(u64),
}

/// Whether an error of a child frame's walk ends the whole snapshot (rather than leaving that
/// frame's content out, as for a frame that has not loaded yet).
fn is_fatal(err: &Error) -> bool {
    matches!(
        err,
        Error::DialogOpen { .. }
            | Error::PageClosed
            | Error::PageCrashed { .. }
            | Error::ConnectionClosed { .. }
    )
}

impl Page {
    /// Snapshots the tab (docs/mcp.md#snapshots): every listed element with its ref, iframes included.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let snapshot = page.snapshot(chromate::snapshot::SnapshotOptions::default()).await?;
    /// println!("{}", snapshot.render());
    /// # Ok(()) }
    /// ```
    pub fn snapshot<'a>(
        &'a self,
        options: SnapshotOptions,
    ) -> crate::rt::Boxed<'a, Result<Snapshot>> {
        Box::pin(self.snapshot_unboxed(options))
    }

    async fn snapshot_unboxed(&self, options: SnapshotOptions) -> Result<Snapshot> {
        let (scope, scope_frame) = match &options.scope {
            None => (Scope::Whole, None),
            Some(selector) => match scope_ref(self, selector)? {
                Some(element_ref) => {
                    let target = crate::page::resolve::resolve_live_ref(self, element_ref).await?;
                    (Scope::Ref(target.number), Some(target.frame_id))
                }
                None => (Scope::Selector(selector.as_typed().to_owned()), None),
            },
        };
        if let Some(after) = options.after {
            crate::page::resolve::resolve_live_ref(self, after).await?;
        }
        // A document that is replaced during the walk is walked again, up to
        // `DOCUMENT_CHANGES` times; a walk that fails for another reason, twice more.
        let mut changes = 0;
        let mut failures = 0;
        loop {
            let frame_id = match &scope_frame {
                Some(id) => id.clone(),
                None => self.main_frame_id().ok_or(Error::PageClosed)?,
            };
            let main_frame = self.main_frame_id().ok_or(Error::PageClosed)?;
            let document_before = self.frame_loader_id(&main_frame);
            let budgets = Budgets {
                semantic: options.max_lines as u64,
                evidence: 10,
                text: 7,
                unlisted: UNLISTED_TEXT,
            };
            // Every listed line may mint a ref, and nothing else does: the budgets bound what
            // this walk mints, so another tab's walk runs at the same time from after them.
            let reservation = self.refs.reserve(budgets.mintable());
            let mut walk = Walk {
                lines: Vec::new(),
                unlisted: Vec::new(),
                minted: Vec::new(),
                reserved: reservation.start..reservation.limit,
                next_ref: reservation.start,
                budgets,
                max_options: max_options(options.max_lines),
                truncated: false,
                more: false,
                cut_after: None,
                after: options.after.map(ElementRef::number),
                title: None,
                url: None,
                page_ms: 0.0,
            };
            let walked = walk_frame(self, frame_id, &scope, 0, &mut walk).await;
            // Numbers the page saw are never minted again, whatever happened.
            match &walked {
                Ok(()) => reservation.finish(walk.next_ref),
                Err(_) => reservation.keep(walk.next_ref),
            }
            self.record_refs(walk.minted.iter().cloned());
            if let Err(err) = walked {
                match err {
                    Error::StateInvalid { .. } if failures < 2 => {
                        failures += 1;
                        continue;
                    }
                    other => return Err(other),
                }
            }
            let document_after = self.frame_loader_id(&main_frame);
            if document_after != document_before {
                changes += 1;
                if changes >= crate::page::DOCUMENT_CHANGES {
                    return Err(Error::DocumentKeepsChanging { changes });
                }
                continue;
            }
            if let (Some(after), Some(_)) = (options.after, walk.after) {
                return Err(Error::invalid_argument_of("after", format!(
                        "snapshot: after={after} is not shown on the page now (hidden, or outside the scope); take a new snapshot"
                    )));
            }
            let next_after = walk.cut_after.and_then(ElementRef::new);
            return Ok(Snapshot {
                url: walk.url.unwrap_or_default(),
                title: walk.title.unwrap_or_default(),
                document_id: document_after.unwrap_or_default(),
                target_id: self.target_id.to_string(),
                lines: walk.lines,
                unlisted: walk.unlisted,
                truncated: walk.truncated,
                next_after,
                page_ms: walk.page_ms,
            });
        }
    }

    /// The frame a cross-origin iframe element of a paused walk shows: `snapshot.pausedFrame`
    /// (as an object) and `DOM.describeNode`. `None` if the frame has no document yet.
    async fn paused_frame(&self, frame_id: &str, token: u64) -> Result<Option<String>> {
        let (session, context_id) = self.isolated_context(Some(frame_id)).await?;
        let params =
            runtime::CallFunctionOnParams::new(crate::js::call_one("snapshot.pausedFrame"))
                .execution_context_id(runtime::ExecutionContextId(context_id))
                .arguments(vec![runtime::CallArgument {
                    value: Some(Value::from(token)),
                    unserializable_value: None,
                    object_id: None,
                }]);
        let answer = self.unless_dialog(session.send(&params)).await?;
        if let Some(details) = answer.exception_details {
            return Err(crate::page::exception_error(&details));
        }
        let Some(object_id) = answer.result.object_id else {
            return Ok(None);
        };
        let described = session
            .send(&dom::DescribeNodeParams::default().object_id(object_id.clone()))
            .await;
        let _ = session
            .send(&runtime::ReleaseObjectParams::new(object_id))
            .await;
        Ok(described?.node.frame_id.map(|id| id.0))
    }
}

/// The ref a scope names (`ref=e7`, or a bare `e7` this browser issued: one it never issued is
/// [`Error::BareRef`]), or `None` for any other selector.
pub(crate) fn scope_ref(page: &Page, selector: &Selector) -> Result<Option<ElementRef>> {
    let Some(number) = selector.element_ref() else {
        return Ok(None);
    };
    if selector.is_bare_ref() {
        return crate::page::resolve::bare_ref(page, &format!("e{number}")).map(Some);
    }
    ElementRef::new(number).map(Some).ok_or_else(|| {
        Error::invalid_argument_of(
            "ref",
            format!("{}: e{number} is not a ref like e7", selector.canonical()),
        )
    })
}

/// How many options a native select's line lists in a snapshot of `max_lines` lines
/// (docs/mcp.md#snapshots): 10, or one per 50 lines asked, up to 100, so that the default view
/// stays as it is and a full view (`max_lines` 5000) lists what Chrome's tree lists.
fn max_options(max_lines: usize) -> u64 {
    (max_lines as u64 / 50).clamp(10, 100)
}

/// Walks one frame's document (or the scope inside it) in its isolated world, descending into
/// cross-origin iframes where the page walk pauses.
fn walk_frame<'a>(
    page: &'a Page,
    frame_id: String,
    scope: &'a Scope,
    depth_offset: usize,
    walk: &'a mut Walk,
) -> Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>> {
    Box::pin(async move {
        let mut args = json!({
            "nextRef": walk.next_ref,
            "budgets": walk.budgets,
            "maxOptions": walk.max_options,
        });
        if let Some(after) = walk.after {
            args["after"] = Value::from(after);
        }
        args["lastRef"] = Value::from(walk.last_ref());
        let scope_text = match scope {
            Scope::Whole => None,
            Scope::Selector(selector) => {
                args["scopeSelector"] = Value::from(selector.as_str());
                Some(selector.as_str())
            }
            Scope::Ref(number) => {
                args["scopeRef"] = Value::from(*number);
                None
            }
        };
        let answer = page
            .call_isolated(Some(&frame_id), "snapshot.takeJson", &args)
            .await?;
        let mut piece = decode_piece(answer, scope_text)?;
        loop {
            let Some(paused) = walk.absorb(piece, &frame_id, depth_offset) else {
                return Ok(());
            };
            match page.paused_frame(&frame_id, paused.token).await {
                Ok(Some(child)) => {
                    let child_walk = walk_frame(
                        page,
                        child,
                        &Scope::Whole,
                        depth_offset + paused.depth,
                        walk,
                    )
                    .await;
                    if let Err(err) = child_walk {
                        if is_fatal(&err) {
                            return Err(err);
                        }
                    }
                }
                Ok(None) => {}
                Err(err) if is_fatal(&err) => return Err(err),
                Err(_) => {}
            }
            let resume = json!({
                "token": paused.token,
                "nextRef": walk.next_ref,
                "budgets": walk.budgets,
                "truncated": walk.truncated,
                "more": walk.more,
                "skipping": walk.after.is_some(),
                "lastRef": walk.last_ref(),
            });
            let answer = page
                .call_isolated(Some(&frame_id), "snapshot.resumeJson", &resume)
                .await?;
            piece = decode_piece(answer, scope_text)?;
        }
    })
}
