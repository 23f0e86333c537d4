//! Calls that name a tab (docs/mcp.md#tabs-for-parallel-agents): a session forked for one call
//! on one tab — that tab as its active one, the tab's own baseline and tripwire cursor, its own
//! artifact names — and merged back when the call ends, so calls on other tabs can run at the
//! same time on forks of their own. A fork never launches a browser, never picks another tab
//! when its own goes, and names no new tab but the one that replaces its crashed tab (from the
//! ids it shares with the session, [`TabIds`]); the session names the others, at the merge. The
//! session's active tab is never changed by one, but for that replacement when the crashed tab
//! was the active one.

use super::*;

/// What a forked session remembers of its fork.
#[derive(Debug)]
pub(crate) struct Fork {
    /// The tab it acts on.
    tab: String,
    /// The session's revision when it was forked.
    revision: u64,
    /// The tab that replaced its tab when that crashed ([`ToolSession::adopt_replacement`]).
    replaced_by: Option<String>,
}

/// The `p<N>` ids a session gives its tabs, shared with its forks: the next number, and the
/// ids forks gave tabs they opened (a crashed tab's replacement), which the session keeps when
/// it meets those tabs. Every other new tab is named by the session alone, when it syncs.
#[derive(Debug)]
pub(crate) struct TabIds {
    next: u64,
    named: std::collections::HashMap<String, String>,
}

impl Default for TabIds {
    fn default() -> TabIds {
        TabIds {
            next: 1,
            named: std::collections::HashMap::new(),
        }
    }
}

impl TabIds {
    /// The id of a tab the session meets: the one a fork gave it, else the next.
    pub(crate) fn name(&mut self, target: &str) -> String {
        self.named.remove(target).unwrap_or_else(|| self.next_id())
    }

    /// A fork's tab gets its id now.
    fn reserve(&mut self, target: &str) -> String {
        let id = self.next_id();
        self.named.insert(target.to_owned(), id.clone());
        id
    }

    fn next_id(&mut self) -> String {
        let id = format!("p{}", self.next);
        self.next += 1;
        id
    }
}

/// The `tab` a call names (validated as `p<N>` by its tool's declaration), if any.
pub fn tab_argument(arguments: &serde_json::Map<String, serde_json::Value>) -> Option<&str> {
    arguments.get("tab").and_then(serde_json::Value::as_str)
}

impl ToolSession {
    /// The tab this session acts on, when it was forked for a call on one.
    pub fn forked_tab(&self) -> Option<&str> {
        self.fork.as_ref().map(|fork| fork.tab.as_str())
    }

    /// A session for one call on tab `tab` (an id `p<N>`): the same browser, tabs, mocks,
    /// configuration and directory, with `tab` as its active tab and that tab's baseline.
    /// INVALID_ARGUMENT `unknown-tab`, listing the open tabs, when no open tab has that id
    /// (or no browser runs). [`ToolSession::merge_tab`] takes back what the call changed.
    pub fn fork_tab(&mut self, tab: &str, verb: &str) -> Result<ToolSession, ToolError> {
        self.drop_lost_browser();
        self.sync_tabs();
        let Some(live) = self.browser.live.as_ref().filter(|live| {
            live.tabs
                .iter()
                .any(|open| open.id == tab && !open.page.is_closed())
        }) else {
            return Err(unknown_tab(verb, tab, self.browser.live.as_ref()));
        };
        let baseline = if live.active.as_deref() == Some(tab) {
            self.shown.baseline.clone()
        } else {
            self.shown.tab_baselines.get(tab).cloned()
        };
        let forked_live = Live {
            browser: live.browser.clone(),
            tabs: live.tabs.clone(),
            active: Some(tab.to_owned()),
            own_targets: live.own_targets.clone(),
            context: live.context.clone(),
        };
        let mut journal = self.journal.clone();
        journal.observed = self
            .shown
            .tab_observed
            .get(tab)
            .copied()
            .unwrap_or(self.journal.observed);
        journal.last_tripwire = None;
        Ok(ToolSession {
            config: self.config.clone(),
            server_pid: self.server_pid,
            artifacts: self.artifacts.fork(tab),
            mocks: self.mocks.clone(),
            journal,
            trace: None,
            client_roots: self.client_roots.clone(),
            call_dir: self.call_dir.clone(),
            namespace: self.namespace.clone(),
            one_shot: self.one_shot,
            wait_for_match: self.wait_for_match,
            call_deadline: None,
            browser: SessionBrowser {
                live: Some(forked_live),
                shared: self.browser.shared.clone(),
                tab_ids: self.browser.tab_ids.clone(),
                next_ref: self.browser.next_ref,
                crashed_tab: self
                    .browser
                    .crashed_tab
                    .clone()
                    .filter(|crashed| crashed.id == tab),
                replacements: self.browser.replacements.clone(),
                ..SessionBrowser::default()
            },
            shown: Shown {
                baseline,
                revision: self.shown.revision,
                ..Shown::default()
            },
            fork: Some(Fork {
                tab: tab.to_owned(),
                revision: self.shown.revision,
                replaced_by: None,
            }),
        })
    }

    /// Takes back what a call on a [`ToolSession::fork_tab`] fork changed: the tab's baseline
    /// and tripwire cursor, the snapshot count, the files it wrote, the downloads it reported,
    /// the tabs it opened; then re-reads the tabs (a popup it opened gets its id here).
    pub fn merge_tab(&mut self, fork: ToolSession) {
        let Some(Fork {
            tab,
            revision,
            replaced_by,
        }) = fork.fork
        else {
            return;
        };
        let was_active = self
            .browser
            .live
            .as_ref()
            .is_some_and(|live| live.active.as_deref() == Some(tab.as_str()));
        self.shown.revision += fork.shown.revision.saturating_sub(revision);
        self.artifacts.absorb(&fork.artifacts);
        self.journal.downloads_observed = self
            .journal
            .downloads_observed
            .max(fork.journal.downloads_observed);
        self.journal
            .errors_drained
            .extend(fork.journal.errors_drained.iter().copied());
        if fork.journal.last_tripwire.is_some() {
            self.journal.last_tripwire = fork.journal.last_tripwire;
        }
        self.shown
            .tab_observed
            .insert(tab.clone(), fork.journal.observed);
        if let (Some(live), Some(forked)) = (self.browser.live.as_mut(), fork.browser.live.as_ref())
        {
            for target in &forked.own_targets {
                if !live.own_targets.contains(target) {
                    live.own_targets.push(target.clone());
                }
            }
        }
        // The fork reported (and replaced) the crash of its tab.
        if self
            .browser
            .crashed_tab
            .as_ref()
            .is_some_and(|crashed| crashed.id == tab)
            && fork.browser.crashed_tab.is_none()
        {
            self.browser.crashed_tab = None;
        }
        self.sync_tabs();
        // The crashed tab was the active one: its replacement is, as after a call without tab.
        if let (true, Some(new_id), Some(live)) =
            (was_active, replaced_by, self.browser.live.as_mut())
        {
            if live.tabs.iter().any(|open| open.id == new_id) {
                live.active = Some(new_id);
                self.browser.crashed_tab = None;
                self.shown.baseline = None;
            }
        }
        let live = self.browser.live.as_ref();
        let open = live.is_some_and(|live| live.tabs.iter().any(|open| open.id == tab));
        let active = live.is_some_and(|live| live.active.as_deref() == Some(tab.as_str()));
        if !open {
            self.shown.tab_baselines.remove(&tab);
            self.shown.tab_observed.remove(&tab);
        } else if active {
            self.shown.baseline = fork.shown.baseline;
        } else {
            match fork.shown.baseline {
                Some(baseline) => {
                    self.shown.tab_baselines.insert(tab, baseline);
                }
                None => {
                    self.shown.tab_baselines.remove(&tab);
                }
            }
        }
    }

    /// A fork's call that failed on a tab closed meanwhile: its error becomes DRIVER_ERROR
    /// `tab-closed`, naming the tab.
    pub(crate) fn report_closed_tab(
        &self,
        verb: &str,
        outcome: &mut Result<crate::error::ToolOutput, ToolError>,
    ) {
        let Some(fork) = &self.fork else {
            return;
        };
        let closed = self.browser.live.as_ref().is_none_or(|live| {
            live.tabs
                .iter()
                .find(|open| open.id == fork.tab)
                .is_none_or(|open| open.page.is_closed())
        });
        if closed && outcome.is_err() {
            *outcome = Err(tab_closed(verb, &fork.tab));
        }
    }

    /// A fork's tab crashed and `page` replaced it: the new tab's id, given now (the session
    /// keeps it when it meets the tab), so that the crash's error can name it; the new tab is
    /// the fork's from here.
    pub(super) fn adopt_replacement(&mut self, page: chromate::Page) -> Option<String> {
        let fork = self.fork.as_mut()?;
        let live = self.browser.live.as_mut()?;
        let id = crate::sync::lock(&self.browser.tab_ids).reserve(page.target_id());
        self.journal
            .page_ids
            .insert(page.target_id().to_owned(), id.clone());
        live.tabs.push(Tab {
            id: id.clone(),
            page,
        });
        live.active = Some(id.clone());
        self.shown.baseline = None;
        fork.replaced_by = Some(id.clone());
        Some(id)
    }

    /// The error of a fork whose tab is gone: a fork never falls back on another tab.
    pub(super) fn forked_tab_gone(&self, verb: &str) -> Option<ToolError> {
        self.fork.as_ref().map(|fork| tab_closed(verb, &fork.tab))
    }

    /// INVALID_ARGUMENT `other-tab` when `number` is a ref a snapshot of another open tab
    /// issued and this session was forked for a call on `tab`: a ref belongs to its tab.
    pub(crate) fn check_ref_tab(
        &self,
        verb: &str,
        page: &chromate::Page,
        number: u64,
    ) -> Result<(), ToolError> {
        let (Some(tab), Some(live)) = (self.forked_tab(), self.browser.live.as_ref()) else {
            return Ok(());
        };
        let Some(target) =
            chromate::snapshot::ElementRef::new(number).and_then(|r| page.ref_target(r))
        else {
            return Ok(());
        };
        if target == page.target_id() {
            return Ok(());
        }
        let Some(owner) = live
            .tabs
            .iter()
            .find(|open| open.page.target_id() == target)
        else {
            return Ok(());
        };
        Err(ToolError::new(
            ToolErrorCode::InvalidArgument,
            format!(
                "{verb}: ref e{number} belongs to tab {}, not to tab {tab}",
                owner.id
            ),
        )
        .with_hint(format!(
            "pass tab: \"{}\" to act on it there, or take a snapshot of tab {tab} for its refs",
            owner.id
        ))
        .with_detail(json!({
            "argument": "selector",
            "reason": "other-tab",
            "ref": format!("e{number}"),
            "tab": owner.id,
        })))
    }
}

/// INVALID_ARGUMENT `unknown-tab`: no open tab has id `tab`; the open ones are listed.
fn unknown_tab(verb: &str, tab: &str, live: Option<&Live>) -> ToolError {
    let open: Vec<&Tab> = live
        .map(|live| live.tabs.iter().filter(|t| !t.page.is_closed()).collect())
        .unwrap_or_default();
    let listed = if open.is_empty() {
        "none (no browser runs yet: open one with browser_navigate or browser_page action=open)"
            .to_owned()
    } else {
        open.iter()
            .map(|t| format!("{} {}", t.id, t.page.url()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ids: Vec<&str> = open.iter().map(|t| t.id.as_str()).collect();
    ToolError::new(
        ToolErrorCode::InvalidArgument,
        format!("{verb}: no open tab {tab}; open tabs: {listed}"),
    )
    .with_hint("pass a tab id from browser_page list, or leave tab out for the active tab")
    .with_detail(json!({ "argument": "tab", "reason": "unknown-tab", "allowed": ids }))
}

/// DRIVER_ERROR `tab-closed`: the tab a call named was closed while it ran.
fn tab_closed(verb: &str, tab: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::DriverError,
        format!("{verb}: the tab {tab} was closed while the call ran"),
    )
    .with_hint("list the tabs with browser_page list; open one with browser_page action=open")
    .with_detail(json!({ "reason": "tab-closed", "tab": tab }))
}
