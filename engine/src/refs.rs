//! The ref table (docs/mcp.md#refs): one session-wide counter shared by every page of a [`crate::Browser`], and for
//! each issued ref the page, frame and document it was issued in.
//!
//! The elements themselves live only in the page: each isolated world keeps its own
//! `refs.js` table (number → element). This module owns the numbers and decides what it can
//! without the page (`unknown-ref`, `document-changed`); the page answers the rest (`detached`,
//! `ambiguous`) through `page/resolve.rs`, which also resolves refs on a page: this module knows
//! nothing of pages. It does not parse selectors, and it does not know about
//! baselines (`no-snapshot` is the command layer's concept).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::error::{Error, Result, StaleReason};
use crate::rt::lock;

/// A snapshot ref: a session-wide element number, printed as `e12`.
///
/// ```
/// let element_ref = chromate::snapshot::ElementRef::parse("e12").unwrap();
/// assert_eq!(element_ref.to_string(), "e12");
/// assert_eq!(element_ref.number(), 12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ElementRef(pub(crate) u64);

impl ElementRef {
    /// The ref numbered `number` (refs start at 1); `None` for 0.
    pub fn new(number: u64) -> Option<Self> {
        (number > 0).then_some(ElementRef(number))
    }

    /// The number after the `e`.
    pub fn number(self) -> u64 {
        self.0
    }

    /// Parses `e<N>` or `E<N>` (N ≥ 1, no leading zero, no spaces); anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let digits = text.strip_prefix(['e', 'E'])?;
        if digits.is_empty()
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        digits.parse().ok().map(ElementRef)
    }
}

impl std::fmt::Display for ElementRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "e{}", self.0)
    }
}

/// Where an issued ref was minted: the page (target id), the frame whose isolated world holds
/// its element, and that frame's document (loader id) at the time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issued {
    pub(crate) target_id: Arc<str>,
    pub(crate) frame_id: String,
    pub(crate) loader_id: Option<String>,
}

/// What the table knows of an issued number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefRecord {
    /// Issued in a document its frame may still show.
    Live(Issued),
    /// Issued in a document its frame has since left (navigated or reloaded): stale for good.
    Retired,
}

/// Consecutive numbers issued in one document (`doc: None` once that document is gone).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    start: u64,
    /// Exclusive.
    end: u64,
    doc: Option<Issued>,
}

/// The issued numbers as runs, sorted and disjoint. A walk mints a contiguous range per
/// document, and when a frame moves to a new document its older runs are retired and merge,
/// so a long session that navigates thousands of times keeps a few runs, not one entry per
/// element ever listed.
#[derive(Debug)]
struct RefState {
    /// The next number to mint.
    next: u64,
    runs: Vec<Run>,
}

impl RefState {
    /// The index of the run holding `number`.
    fn find(&self, number: u64) -> Option<usize> {
        let idx = self.runs.partition_point(|run| run.end <= number);
        self.runs
            .get(idx)
            .filter(|run| run.start <= number)
            .map(|_| idx)
    }

    /// Records `minted` (the first record of a number wins). Before that, every run of
    /// `target_id` whose document `shows` says its page no longer shows is retired.
    fn record(
        &mut self,
        target_id: &str,
        minted: Vec<(u64, Issued)>,
        shows: &dyn Fn(&Issued) -> bool,
    ) {
        for run in &mut self.runs {
            let gone = run
                .doc
                .as_ref()
                .is_some_and(|doc| *doc.target_id == *target_id && !shows(doc));
            if gone {
                run.doc = None;
            }
        }
        for (number, issued) in minted {
            if self.find(number).is_some() {
                continue;
            }
            let idx = self.runs.partition_point(|run| run.end <= number);
            self.runs.insert(
                idx,
                Run {
                    start: number,
                    end: number + 1,
                    doc: Some(issued),
                },
            );
        }
        self.merge();
    }

    /// Joins touching runs of the same document (or both retired).
    fn merge(&mut self) {
        let mut merged: Vec<Run> = Vec::with_capacity(self.runs.len());
        for run in self.runs.drain(..) {
            match merged.last_mut() {
                Some(last) if last.end == run.start && last.doc == run.doc => last.end = run.end,
                _ => merged.push(run),
            }
        }
        self.runs = merged;
    }

    fn lookup(&self, number: u64) -> Option<RefRecord> {
        let run = &self.runs[self.find(number)?];
        Some(match &run.doc {
            Some(issued) => RefRecord::Live(issued.clone()),
            None => RefRecord::Retired,
        })
    }
}

/// The browser-wide ref table. Each [`crate::Page`] holds an `Arc` of its browser's table.
#[derive(Debug)]
pub(crate) struct RefTable {
    state: Mutex<RefState>,
}

impl Default for RefTable {
    fn default() -> Self {
        Self {
            state: Mutex::new(RefState {
                next: 1,
                runs: Vec::new(),
            }),
        }
    }
}

/// The numbers one minting call (a snapshot walk, an audit's refs) may use:
/// `start..limit`, taken from the counter when the call begins, so that two tabs mint at the
/// same time without sharing a number or waiting for each other. Every minting call knows how
/// many it may mint at most (a walk: its line budgets; an audit: its node cap).
///
/// [`Reservation::finish`] gives the unused end back when no later reservation was taken
/// meanwhile, so numbering stays gap-free for calls one after the other; two calls at once
/// leave the first one's unused numbers unused. A reservation dropped without `finish` (its
/// call cancelled, the page's answer lost) keeps all its numbers: the page may have minted any
/// of them.
#[must_use = "a reservation's unused numbers come back only through finish"]
pub(crate) struct Reservation<'a> {
    table: &'a RefTable,
    /// The first number the call may mint.
    pub(crate) start: u64,
    /// One past the last number the call may mint.
    pub(crate) limit: u64,
}

impl Reservation<'_> {
    /// Ends the call, whose page handed back `next` as its next number: the numbers from
    /// `next` to the limit come back unless a later reservation was taken. A `next` outside
    /// `start..=limit` (a page that minted beyond its reservation) gives nothing back.
    pub(crate) fn finish(self, next: u64) {
        let mut state = lock(&self.table.state);
        if state.next == self.limit && (self.start..=self.limit).contains(&next) {
            state.next = next;
        } else {
            state.next = state.next.max(next);
        }
    }

    /// Ends a call that failed: the numbers it may have minted stay used, and so does anything
    /// up to `next`.
    pub(crate) fn keep(self, next: u64) {
        let mut state = lock(&self.table.state);
        state.next = state.next.max(next);
    }
}

impl RefTable {
    /// The next number a walk may mint.
    pub(crate) fn next(&self) -> u64 {
        lock(&self.state).next
    }

    /// Reserves `count` numbers for one minting call (see [`Reservation`]).
    pub(crate) fn reserve(&self, count: u64) -> Reservation<'_> {
        let mut state = lock(&self.state);
        let start = state.next;
        let limit = start.saturating_add(count);
        state.next = limit;
        Reservation {
            table: self,
            start,
            limit,
        }
    }

    /// Moves the counter to at least `next` (never back), so no number is minted twice.
    pub(crate) fn advance_to(&self, next: u64) {
        let mut state = lock(&self.state);
        state.next = state.next.max(next);
    }

    /// Records the refs a walk of `target_id` minted; the first record of a number wins.
    /// Refs of that page's documents that `shows` says are gone (a frame navigated, reloaded
    /// or was removed) are retired first.
    pub(crate) fn record(
        &self,
        target_id: &str,
        minted: Vec<(u64, Issued)>,
        shows: &dyn Fn(&Issued) -> bool,
    ) {
        lock(&self.state).record(target_id, minted, shows);
    }

    /// What is known of `number`: `None` if it was never issued.
    pub(crate) fn lookup(&self, number: u64) -> Option<RefRecord> {
        lock(&self.state).lookup(number)
    }

    pub(crate) fn has_issued(&self, number: u64) -> bool {
        lock(&self.state).find(number).is_some()
    }

    /// How many runs the table holds (a measure of its memory, for tests).
    #[cfg(test)]
    pub(crate) fn run_count(&self) -> usize {
        lock(&self.state).runs.len()
    }
}

/// Where to find a ref's element: ask `refs.lookup(number)` in the isolated world of
/// `frame_id` (a same-origin iframe's elements live in the table of the frame that walked them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefTarget {
    /// The frame whose isolated world holds the element (pass to `Page::call_isolated`).
    pub(crate) frame_id: String,
    /// The number to pass to `refs.lookup` / `refs.status` or as `ref=e<number>`.
    pub(crate) number: u64,
}

pub(super) fn stale(element_ref: ElementRef, reason: StaleReason) -> Error {
    Error::StaleRef {
        element_ref: element_ref.to_string(),
        reason,
    }
}

/// A status of the page's ref table (`refs.lookup`/`refs.status` in `engine/src/js/refs.js`;
/// also the `reason` of a `{status: "stale-ref"}` from `actionability`/`locators`, and the
/// `status` of a selector's `{error: "stale-ref"}`), one variant per string the script writes:
/// a unit test reads them from the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RefStatus {
    /// The element is there.
    Ok,
    /// Collected or disconnected.
    Detached,
    /// Now in another document.
    Ambiguous,
    /// Never minted in this world: the frame's world was replaced, so its document changed.
    Unknown,
}

impl RefStatus {
    /// Decodes the status `method` answered; anything else (another string, not a string) is
    /// [`Error::UnknownStatus`] naming it, never a default.
    pub(crate) fn decode(method: &str, answer: Value) -> Result<RefStatus> {
        serde_json::from_value(answer.clone()).map_err(|_| Error::UnknownStatus {
            method: method.into(),
            status: match answer {
                Value::String(text) => text,
                other => other.to_string(),
            },
        })
    }

    /// Why a ref with this status is stale; `None` for [`RefStatus::Ok`].
    pub(crate) fn stale_reason(self) -> Option<StaleReason> {
        match self {
            RefStatus::Ok => None,
            RefStatus::Detached => Some(StaleReason::Detached),
            RefStatus::Ambiguous => Some(StaleReason::Ambiguous),
            RefStatus::Unknown => Some(StaleReason::DocumentChanged),
        }
    }
}

/// The `StaleRef` for the ref-table status a page script gave with its `stale-ref` answer
/// (`method` names the script for an unknown one). A stale-ref answer whose status is `ok`
/// contradicts itself and is [`Error::UnknownStatus`] too.
pub(crate) fn stale_from_status(
    method: &str,
    element_ref: ElementRef,
    status: Option<&Value>,
) -> Error {
    let status = status.cloned().unwrap_or(Value::Null);
    match RefStatus::decode(method, status) {
        Ok(status) => match status.stale_reason() {
            Some(reason) => stale(element_ref, reason),
            None => Error::UnknownStatus {
                method: method.into(),
                status: "stale-ref with ref status ok".into(),
            },
        },
        Err(err) => err,
    }
}
