//! Snapshot diffs for post-action observations (docs/mcp.md#observations).
//!
//! A pure function of two snapshots. Lines compare without their `eN: ` prefix (indentation
//! kept) as multisets, so removing one of three identical buttons shows. Among identical lines
//! the ones with the same ref pair up first, so the `-`/`+` lines name the element that really
//! went or came when the page kept its refs. This module does not decide what the baseline is.

use std::collections::HashMap;

use super::{Line, Snapshot};

/// How many new text lines beyond the view's text budget a diff shows (docs/mcp.md#observations).
pub const NEW_UNLISTED: usize = 10;

/// What changed between a baseline and a new snapshot, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Diff {
    /// No baseline, or another document: the whole new snapshot.
    Full(String),
    /// The same document (a hash or history change of its URL included: a same-document
    /// navigation): the header, with the new URL, and the lines that went and came.
    Changes {
        /// The new snapshot's header line.
        header: String,
        /// Baseline lines now missing, in the baseline's document order, with their refs.
        removed: Vec<String>,
        /// New lines absent from the baseline, in document order, with their refs; then new
        /// text beyond the view's text budget (no refs), at most [`NEW_UNLISTED`] lines and a
        /// count of the rest.
        added: Vec<String>,
    },
}

impl Diff {
    /// Whether the accessibility lines are unchanged (always `false` for a full rendering).
    pub fn is_unchanged(&self) -> bool {
        matches!(self, Diff::Changes { removed, added, .. } if removed.is_empty() && added.is_empty())
    }

    /// The observation text (docs/mcp.md#observations): the full snapshot, or the header with `- line`s then `+ line`s, or the
    /// header and `(no a11y changes)`.
    pub fn render(&self) -> String {
        match self {
            Diff::Full(text) => text.clone(),
            Diff::Changes {
                header,
                removed,
                added,
            } => {
                let mut res = header.clone();
                if removed.is_empty() && added.is_empty() {
                    res.push_str("\n(no a11y changes)");
                }
                for line in removed {
                    res.push_str("\n- ");
                    res.push_str(line);
                }
                for line in added {
                    res.push_str("\n+ ");
                    res.push_str(line);
                }
                res
            }
        }
    }
}

/// Compares `current` with `baseline` (docs/mcp.md#observations): the full rendering when there is no
/// baseline or the document id differs, else (the URL may have changed within the document: a
/// hash link, a history route) the removed and added lines under the new header.
///
/// ```no_run
/// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
/// let before = page.snapshot(chromate::snapshot::SnapshotOptions::default()).await?;
/// let after = page.snapshot(chromate::snapshot::SnapshotOptions::default()).await?;
/// assert!(chromate::snapshot::diff(Some(&before), &after).is_unchanged());
/// # Ok(()) }
/// ```
pub fn diff(baseline: Option<&Snapshot>, current: &Snapshot) -> Diff {
    let Some(baseline) = baseline else {
        return Diff::Full(current.render());
    };
    if baseline.document_id != current.document_id {
        return Diff::Full(current.render());
    }
    // Listed and unlisted lines compare together: text that moved into or out of the view's
    // budget did not come or go.
    let old_lines: Vec<&Line> = baseline.lines.iter().chain(&baseline.unlisted).collect();
    let new_lines: Vec<&Line> = current.lines.iter().chain(&current.unlisted).collect();
    let old_keys: Vec<String> = old_lines.iter().map(|l| l.render_without_ref()).collect();
    let new_keys: Vec<String> = new_lines.iter().map(|l| l.render_without_ref()).collect();
    // Line indices by key, in document order.
    let mut old_by_key: HashMap<&str, Vec<usize>> = HashMap::new();
    for (idx, key) in old_keys.iter().enumerate() {
        old_by_key.entry(key).or_default().push(idx);
    }
    let mut new_by_key: HashMap<&str, Vec<usize>> = HashMap::new();
    for (idx, key) in new_keys.iter().enumerate() {
        new_by_key.entry(key).or_default().push(idx);
    }
    let mut old_matched = vec![false; old_keys.len()];
    let mut new_matched = vec![false; new_keys.len()];
    for (key, old_idxs) in &old_by_key {
        let Some(new_idxs) = new_by_key.get(key) else {
            continue;
        };
        // Same key and same ref first, then the rest in document order.
        for &o in old_idxs {
            let element_ref = old_lines[o].element_ref;
            if element_ref.is_none() {
                continue;
            }
            if let Some(&n) = new_idxs
                .iter()
                .find(|&&n| !new_matched[n] && new_lines[n].element_ref == element_ref)
            {
                old_matched[o] = true;
                new_matched[n] = true;
            }
        }
        let free_new: Vec<usize> = new_idxs
            .iter()
            .filter(|&&n| !new_matched[n])
            .copied()
            .collect();
        let free_old: Vec<usize> = old_idxs
            .iter()
            .filter(|&&o| !old_matched[o])
            .copied()
            .collect();
        for (o, n) in free_old.into_iter().zip(free_new) {
            old_matched[o] = true;
            new_matched[n] = true;
        }
    }
    let removed = baseline
        .lines
        .iter()
        .zip(&old_matched)
        .filter(|(_, matched)| !**matched)
        .map(|(line, _)| line.to_string())
        .collect();
    let mut added: Vec<String> = current
        .lines
        .iter()
        .zip(&new_matched)
        .filter(|(_, matched)| !**matched)
        .map(|(line, _)| line.to_string())
        .collect();
    let new_text: Vec<String> = current
        .unlisted
        .iter()
        .zip(&new_matched[current.lines.len()..])
        .filter(|(_, matched)| !**matched)
        .map(|(line, _)| line.to_string())
        .collect();
    let rest = new_text.len().saturating_sub(NEW_UNLISTED);
    added.extend(new_text.into_iter().take(NEW_UNLISTED));
    if rest > 0 {
        added.push(format!(
            "\u{2026} {rest} more new text lines (browser_read reads the page's text)"
        ));
    }
    Diff::Changes {
        header: current.header(),
        removed,
        added,
    }
}
