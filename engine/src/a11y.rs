//! Accessibility audits with axe-core, run in chromate's isolated world.
//!
//! axe-core is a declared, pinned dependency (`engine/axe/package.json`, installed by
//! `.ci/setup.sh` or `npm ci --prefix engine/axe`); it is never downloaded at run time.
//! It is built into the binary when the pinned package was installed at build time (`build.rs`);
//! [`axe_source`] picks `CHROMATE_AXE_PATH` over that, and `axe/axe.min.js` next to the
//! executable when there is no built-in copy (see [`axe_candidates`]). Its source is evaluated
//! into the isolated world of the audited frame once per document, out of page scripts' reach;
//! `js/a11y.js` runs it and gives each reported node its ref, minted from the
//! browser-wide counter ([`crate::snapshot`]'s table) like a snapshot would.
//!
//! This module does not render results, cut strings to output bounds or keep a baseline.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::cdp::runtime;
use crate::error::{Error, Result};
use crate::js;
use crate::refs;
use crate::selector::{self, Selector};
use crate::{snapshot::ElementRef, Page};

/// The environment variable naming `axe.min.js`.
pub const AXE_PATH_ENV: &str = "CHROMATE_AXE_PATH";

/// An axe impact level, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Impact {
    /// `minor`.
    #[default]
    Minor,
    /// `moderate`.
    Moderate,
    /// `serious`.
    Serious,
    /// `critical`.
    Critical,
}

impl Impact {
    /// axe's name of the level.
    pub fn as_str(self) -> &'static str {
        match self {
            Impact::Minor => "minor",
            Impact::Moderate => "moderate",
            Impact::Serious => "serious",
            Impact::Critical => "critical",
        }
    }

    /// Parses axe's name of a level.
    pub fn parse(text: &str) -> Option<Impact> {
        match text {
            "minor" => Some(Impact::Minor),
            "moderate" => Some(Impact::Moderate),
            "serious" => Some(Impact::Serious),
            "critical" => Some(Impact::Critical),
            _ => None,
        }
    }
}

/// What to audit and how much to report.
///
/// ```
/// let options = chromate::audit::AuditOptions { min_impact: chromate::audit::Impact::Serious, ..Default::default() };
/// assert_eq!(options.max_nodes, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditOptions {
    /// Only this element's subtree (the first match of a selector or a ref, docs/mcp.md#selectors), parsed by the
    /// caller, once.
    pub scope: Option<Selector>,
    /// Violations below this impact are dropped (and not counted).
    pub min_impact: Impact,
    /// Run only these rule ids (empty = all).
    pub rules: Vec<String>,
    /// Skip these rule ids.
    pub disable_rules: Vec<String>,
    /// Most violations reported.
    pub max_violations: usize,
    /// Most nodes reported per violation.
    pub max_nodes: usize,
    /// Most nodes reported in all.
    pub max_total_nodes: usize,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            scope: None,
            min_impact: Impact::Minor,
            rules: Vec::new(),
            disable_rules: Vec::new(),
            max_violations: 20,
            max_nodes: 3,
            max_total_nodes: 50,
        }
    }
}

/// One element a violation was found on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditNode {
    /// The element's ref (existing or newly issued); `None` in other frames or closed roots.
    pub element_ref: Option<ElementRef>,
    /// A durable selector for the element (the locator suggestions' rules, else a unique CSS path;
    /// never a ref); `None` where the ref is.
    pub selector: Option<String>,
    /// axe's CSS path; shadow parts joined ` >>> `.
    pub target: String,
    /// The element's outer HTML as axe reports it.
    pub html: String,
    /// axe's failure summary (several lines).
    pub failure_summary: String,
}

/// One failed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Violation {
    /// The rule id (`image-alt`).
    pub id: String,
    /// The rule's impact.
    pub impact: Impact,
    /// All of axe's tags (`wcag2a`, `wcag111`, `cat.text-alternatives`…).
    pub tags: Vec<String>,
    /// One line of help.
    pub help: String,
    /// What the rule checks.
    pub description: String,
    /// axe's documentation link.
    pub help_url: String,
    /// The reported nodes (bounded).
    pub nodes: Vec<AuditNode>,
}

/// The result of [`Page::audit_accessibility`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditReport {
    /// Reported violations (bounded by the options).
    pub violations: Vec<Violation>,
    /// Violations at or above the minimum impact in the whole audit.
    pub n_violations: usize,
    /// Rules that passed.
    pub n_passes: usize,
    /// Rules axe could not decide.
    pub n_incomplete: usize,
    /// Whether a bound left violations or nodes out.
    pub truncated: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawReport {
    violations: Vec<RawViolation>,
    counts: RawCounts,
    truncated: bool,
}

#[derive(Debug, Deserialize)]
struct RawCounts {
    violations: usize,
    passes: usize,
    incomplete: usize,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawViolation {
    id: String,
    impact: String,
    tags: Vec<String>,
    help: String,
    description: String,
    help_url: String,
    nodes: Vec<RawNode>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawNode {
    index: usize,
    target: String,
    html: String,
    failure_summary: String,
}

/// Where axe-core comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AxeSource {
    /// A file: `CHROMATE_AXE_PATH`, or `axe/axe.min.js` next to the executable.
    File(PathBuf),
    /// The copy built into this binary ([`js::AXE`]).
    Embedded(&'static str),
}

/// Where axe-core is looked for, in order: only `CHROMATE_AXE_PATH` when it is set (a wrong
/// explicit path is an error, not a silent fallback), else the copy built in, else
/// `axe/axe.min.js` next to the executable. Never the checkout the binary was built in: a copied
/// binary must not depend on it.
pub(crate) fn axe_candidates() -> Vec<AxeSource> {
    if let Some(path) = std::env::var_os(AXE_PATH_ENV).filter(|p| !p.is_empty()) {
        return vec![AxeSource::File(PathBuf::from(path))];
    }
    let mut res = Vec::new();
    if let Some(embedded) = js::AXE {
        res.push(AxeSource::Embedded(embedded));
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(PathBuf::from))
    {
        res.push(AxeSource::File(dir.join("axe/axe.min.js")));
    }
    res
}

/// The axe-core this build uses, or a STATE_INVALID error naming every path tried and how to
/// get axe-core.
pub(crate) fn axe_source() -> Result<AxeSource> {
    let candidates = axe_candidates();
    let found = candidates.iter().find(|source| match source {
        AxeSource::File(path) => path.is_file(),
        AxeSource::Embedded(_) => true,
    });
    if let Some(found) = found {
        return Ok(found.clone());
    }
    let tried: Vec<String> = candidates
        .iter()
        .filter_map(|source| match source {
            AxeSource::File(path) => Some(path.display().to_string()),
            AxeSource::Embedded(_) => None,
        })
        .collect();
    Err(not_installed(&tried, js::AXE.is_some()))
}

/// The STATE_INVALID error for no axe-core: the paths tried and how to get it, which depends on
/// whether this build has a copy built in (then only `CHROMATE_AXE_PATH` can be wrong).
fn not_installed(tried: &[String], built_in: bool) -> Error {
    let how = if built_in {
        format!("; unset {AXE_PATH_ENV} to use the axe-core built into chromate")
    } else {
        "; this chromate was built without axe-core: release builds (`npm install -g chromate-mcp`, the release archives) and `cargo install chromate-mcp` embed it, and a build from a checkout does after `npm ci --prefix engine/axe` (or `bash .ci/setup.sh browser`)".to_string()
    };
    Error::StateInvalid {
        message: format!(
            "a11y: axe-core is not installed (tried: {}); set {AXE_PATH_ENV} to an axe.min.js (`npm install axe-core@{}` puts one in node_modules/axe-core/){how}",
            tried.join(", "),
            env!("CHROMATE_AXE_VERSION"),
        ),
    }
}

impl Page {
    /// Audits the page (or a subtree) with axe-core in chromate's isolated world and gives each
    /// reported node its ref.
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let report = page.audit_accessibility(chromate::audit::AuditOptions::default()).await?;
    /// for violation in &report.violations {
    ///     println!("{} ({} nodes)", violation.id, violation.nodes.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn audit_accessibility(&self, options: AuditOptions) -> Result<AuditReport> {
        let (frame_id, mut args) = match &options.scope {
            None => (None, json!({})),
            Some(parsed) => selector::js_target(self, parsed)?,
        };
        self.ensure_axe(frame_id.as_deref()).await?;
        if let Value::Object(map) = &mut args {
            map.insert("minImpact".into(), json!(options.min_impact.as_str()));
            map.insert("rules".into(), json!(options.rules));
            map.insert("disableRules".into(), json!(options.disable_rules));
            map.insert("maxViolations".into(), json!(options.max_violations));
            map.insert("maxNodes".into(), json!(options.max_nodes));
            map.insert("maxTotalNodes".into(), json!(options.max_total_nodes));
        }
        let answer = self
            .call_isolated(frame_id.as_deref(), "a11y.run", &args)
            .await?;
        if answer.get("ok") == Some(&Value::Bool(false)) {
            let scope = options.scope.as_ref().map_or("", Selector::as_typed);
            return Err(run_error(&answer, scope));
        }
        let raw: RawReport = serde_json::from_value(answer).map_err(|source| Error::Decode {
            method: "a11y.run".into(),
            source,
        })?;
        let (refs, selectors) = self
            .assign_audit_refs(frame_id.as_deref(), options.max_total_nodes)
            .await?;
        let violations = raw
            .violations
            .into_iter()
            .map(|v| Violation {
                id: v.id,
                impact: Impact::parse(&v.impact).unwrap_or_default(),
                tags: v.tags,
                help: v.help,
                description: v.description,
                help_url: v.help_url,
                nodes: v
                    .nodes
                    .into_iter()
                    .map(|n| AuditNode {
                        element_ref: refs.get(n.index).copied().flatten(),
                        selector: selectors.get(n.index).cloned().flatten(),
                        target: n.target,
                        html: n.html,
                        failure_summary: n.failure_summary,
                    })
                    .collect(),
            })
            .collect();
        Ok(AuditReport {
            violations,
            n_violations: raw.counts.violations,
            n_passes: raw.counts.passes,
            n_incomplete: raw.counts.incomplete,
            truncated: raw.truncated,
        })
    }

    /// Evaluates axe-core into the isolated world of `frame_id` unless it is already there.
    async fn ensure_axe(&self, frame_id: Option<&str>) -> Result<()> {
        let ready = self
            .call_isolated(frame_id, "a11y.ready", &Value::Null)
            .await?;
        if ready == Value::Bool(true) {
            return Ok(());
        }
        let source = match axe_source()? {
            AxeSource::Embedded(embedded) => embedded.to_string(),
            AxeSource::File(path) => {
                std::fs::read_to_string(&path).map_err(|source| Error::Io {
                    context: format!("a11y: reading {}", path.display()),
                    source,
                })?
            }
        };
        let (session, context_id) = self.isolated_context(frame_id).await?;
        let params = runtime::EvaluateParams::new(source)
            .context_id(runtime::ExecutionContextId(context_id));
        let answer = self.unless_dialog(session.send(&params)).await?;
        if let Some(details) = answer.exception_details {
            return Err(crate::page::exception_error(&details));
        }
        Ok(())
    }

    /// Mints or looks up the refs of the last run's nodes, recording new ones in the
    /// browser-wide table; with each node's durable selector.
    async fn assign_audit_refs(
        &self,
        frame_id: Option<&str>,
        max_total_nodes: usize,
    ) -> Result<(Vec<Option<ElementRef>>, Vec<Option<String>>)> {
        // The page mints at most one ref per node it kept, and it keeps at most
        // `max_total_nodes` (`limit` holds it to that): another tab mints at the same time
        // from after them.
        let reservation = self.refs.reserve(max_total_nodes as u64);
        let first_new = reservation.start;
        let limit = reservation.limit;
        let answer = match self
            .call_isolated(
                frame_id,
                "a11y.assignRefs",
                &json!({ "nextRef": first_new, "limit": limit }),
            )
            .await
        {
            Ok(answer) => answer,
            Err(err) => {
                reservation.keep(first_new);
                return Err(err);
            }
        };
        match answer.get("nextRef").and_then(Value::as_u64) {
            Some(next) => reservation.finish(next),
            None => reservation.keep(first_new),
        }
        let frame = match frame_id {
            Some(id) => id.to_string(),
            None => self.main_frame_id().ok_or(Error::PageClosed)?,
        };
        let numbers: Vec<Option<u64>> = answer
            .get("refs")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(Value::as_u64).collect())
            .unwrap_or_default();
        self.record_refs(
            numbers
                .iter()
                .flatten()
                .filter(|number| (first_new..limit).contains(*number))
                .map(|number| (*number, frame.clone())),
        );
        let selectors = answer
            .get("selectors")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|selector| selector.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok((
            numbers
                .into_iter()
                .map(|n| n.and_then(ElementRef::new))
                .collect(),
            selectors,
        ))
    }
}

/// A `{ok: false}` answer of `a11y.run` (`engine/src/js/a11y.js`, with the selector errors of
/// `engine/src/js/selector.js`), one variant per `error` the scripts write: a unit test reads
/// them from the scripts.
#[derive(Debug, Deserialize)]
#[serde(tag = "error", rename_all = "kebab-case")]
enum RunFailure {
    /// axe-core is not in the page's isolated world.
    AxeMissing,
    /// Rule ids axe does not know.
    UnknownRule {
        #[serde(default)]
        ids: Vec<String>,
    },
    /// The scope matches nothing.
    NoMatch { canonical: Option<String> },
    /// The scope's ref no longer resolves; `status` is the ref table's.
    StaleRef {
        #[serde(rename = "ref")]
        element_ref: Option<u64>,
        status: Option<Value>,
    },
    /// The browser rejected the scope selector (`reason`, `browserMessage`: from the raw answer).
    #[serde(rename = "invalid selector")]
    InvalidSelector,
    /// A newer audit of the document began while this one ran (this one was abandoned).
    Superseded,
}

/// The error for a `{ok:false}` answer of `a11y.run`; one the Rust side does not know is
/// [`Error::Decode`] naming `a11y.run`.
fn run_error(answer: &Value, scope: &str) -> Error {
    let failure: RunFailure = match serde_json::from_value(answer.clone()) {
        Ok(failure) => failure,
        Err(source) => {
            return Error::Decode {
                method: "a11y.run".into(),
                source,
            }
        }
    };
    match failure {
        RunFailure::UnknownRule { ids } => Error::invalid_argument_of(
            "rules",
            format!("a11y: unknown axe rule id {}", ids.join(", ")),
        ),
        RunFailure::NoMatch { canonical } => Error::NoMatch {
            verb: "a11y".into(),
            selector: canonical.unwrap_or_else(|| scope.to_owned()),
        },
        RunFailure::StaleRef {
            element_ref,
            status,
        } => match element_ref.and_then(ElementRef::new) {
            Some(element_ref) => refs::stale_from_status("a11y.run", element_ref, status.as_ref()),
            None => Error::StateInvalid {
                message: format!("a11y: {scope} is stale"),
            },
        },
        RunFailure::AxeMissing => Error::StateInvalid {
            message: "a11y: axe-core did not load in the page's isolated world".into(),
        },
        RunFailure::InvalidSelector => Error::invalid_selector("a11y", scope, answer),
        RunFailure::Superseded => Error::StateInvalid {
            message: "a11y: a newer audit of this document replaced this one".into(),
        },
    }
}

#[cfg(test)]
mod tests;
