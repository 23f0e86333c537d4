//! The audit (`docs/cli.md#audits`): open a URL in a browser context of its own, follow its
//! same-origin links breadth-first, and gather what is broken — runtime errors, failed and
//! refused requests, broken links, axe violations, layout defects and slow pages — as ranked
//! findings with durable selectors.
//!
//! Owns: the crawl (depth, page budget, a few pages at a time, one deadline for the whole
//! audit, partial results when it passes), what is collected from each page (its journal,
//! the engine's page inspection, axe, link checks from inside the page), the context's
//! private-network guard and its SSRF_BLOCKED error, the pages' screenshots, and the
//! [`findings::AuditResult`]. Judgements are not here: what a page's evidence amounts to
//! (which errors, requests, violations, layout defects, slow metrics and links are findings)
//! is `judge.rs`; severities, thresholds, ids and ranking are `findings.rs`; the report
//! formats `report/`. Does not own argument declarations
//! (`tools/qa.rs`) or any front end's output.

pub mod findings;
pub mod focus;
pub mod gate;
pub(crate) mod judge;
pub mod report;
mod sitemap;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::error::{from_engine, ToolError, ToolErrorCode};
use crate::sync::lock;
use findings::{
    AuditResult, AuditedPage, Category, ExternalLink, Finding, Metrics, Severity, Status,
};
use judge::{
    a11y_findings, broken_links, layout_findings, network_findings, runtime_findings,
    speed_findings,
};

/// Pages audited at the same time.
const PARALLEL: usize = 3;
/// The longest a page may take to settle after its load (network quiet for 500 ms). A fetch
/// whose body the page never reads ends once its announced body has arrived (Chromium
/// reports no `loadingFinished` for it); one without a `Content-Length` that is never read
/// still holds the page to this cap.
const SETTLE: Duration = Duration::from_secs(3);
/// Each link check attempt (HEAD, then GET).
const LINK_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest one navigation may take.
const NAVIGATION: Duration = Duration::from_secs(30);
/// Controls smaller than this (CSS px) in either direction are small tap targets.
const MIN_TARGET: u32 = 24;
/// How long a failed navigation's journal entry may trail its answer.
const FAILURE_SETTLE: Duration = Duration::from_secs(1);
/// How long disposing of the context may take after the audit.
const DISPOSE: Duration = Duration::from_secs(5);

/// The login state an audit starts with (`browser_state`'s saved state, or a Playwright
/// storage-state file): set in its context before the first page loads.
#[derive(Debug, Clone, Default)]
pub struct Login {
    pub cookies: Vec<chromate::storage::Cookie>,
    /// localStorage by origin, seeded into each audited page before its scripts run.
    pub storage: Vec<chromate::storage::PageStorage>,
}

/// What to audit.
#[derive(Debug, Clone)]
pub struct AuditRequest {
    pub url: String,
    /// More entry pages, audited like `url` (depth 0) in the same run.
    pub more_urls: Vec<String>,
    /// A sitemap whose same-origin pages are entry pages too (when it is `url` itself, `url`
    /// is not audited as a page).
    pub sitemap: Option<String>,
    pub login: Option<Login>,
    pub max_depth: u32,
    pub max_pages: u32,
    pub viewport: Option<(u32, u32)>,
    pub wait_until: chromate::WaitUntil,
    pub timeout: Duration,
    pub focus: Option<String>,
    pub screenshots: bool,
    pub block_private_network: bool,
    /// Origins `--block-private-network` lets through.
    pub allow_private: Vec<chromate::intercept::OriginPattern>,
    /// Read the entry page's snapshot text for the `focus` model pass ([`focus`]).
    pub page_text: bool,
}

/// A link target's check.
#[derive(Debug, Clone)]
enum LinkState {
    /// Some page is checking it now.
    Pending,
    Done(chromate::audit::LinkStatus, Option<String>),
}

/// What the crawl gathered so far; kept when the deadline cuts it short.
#[derive(Default)]
struct Gathered {
    findings: Vec<Finding>,
    pages: Vec<AuditedPage>,
    metrics: Metrics,
    /// Same-origin link targets and their checks.
    links: HashMap<String, LinkState>,
    /// Who links to each same-origin target: `(page, selector)`, in discovery order.
    referrers: BTreeMap<String, Vec<(String, String)>>,
    external: BTreeMap<String, Vec<String>>,
    /// The server's origin policy: off-origin links are checked only when its allow list
    /// lets them through.
    policy: chromate::intercept::OriginPolicy,
    /// The entry pages' origins, as they loaded: a link is same-origin when it goes to one.
    origins: HashSet<String>,
    /// The screenshots taken: the entry page's first, then each other page's.
    shots: Vec<TakenShot>,
    /// The entry page could not be audited.
    entry_failed: bool,
    /// The entry page's snapshot text, when the request asks for it.
    page_text: Option<String>,
}

/// Runs the audit on `browser` and returns its result; `Err` only when the audit could not run
/// at all (no context, the entry refused by the guard, axe missing). Screenshots come back as
/// PNG bytes for the caller to store.
pub async fn run(
    browser: &chromate::Browser,
    request: &AuditRequest,
    progress: &crate::call::Progress,
) -> Result<(AuditResult, Vec<TakenShot>), ToolError> {
    let started = Instant::now();
    let deadline = started + request.timeout;
    let options = chromate::ContextOptions {
        viewport: request.viewport,
        guard: request
            .block_private_network
            .then(|| chromate::intercept::NetworkGuard {
                exempt: request.allow_private.clone(),
            }),
    };
    let context = browser
        .new_context(options)
        .await
        .map_err(|err| from_engine("audit", &err))?;
    if let Some(login) = &request.login {
        if let Err(err) = context.set_cookies(&login.cookies).await {
            let _ = tokio::time::timeout(DISPOSE, context.dispose()).await;
            return Err(from_engine("audit", &err));
        }
    }
    let state = Mutex::new(Gathered {
        policy: browser.origin_policy(),
        ..Gathered::default()
    });
    let mut warnings = Vec::new();
    let entries = match &request.sitemap {
        None => None,
        Some(sitemap) => {
            progress.set_phase(format!("audit: reading the sitemap {sitemap}"));
            let read = sitemap::pages(&context, browser, sitemap, request.max_pages as usize);
            let read = tokio::time::timeout_at(deadline.into(), read).await;
            let (pages, cut) = match read {
                Ok(Ok(read)) => read,
                Ok(Err(error)) => {
                    let _ = tokio::time::timeout(DISPOSE, context.dispose()).await;
                    return Err(error);
                }
                Err(_) => (
                    Vec::new(),
                    vec!["the deadline passed while reading the sitemap".to_owned()],
                ),
            };
            warnings.extend(cut);
            let mut entries: Vec<String> = Vec::new();
            if request.url != *sitemap {
                entries.push(request.url.clone());
            }
            entries.extend(request.more_urls.iter().cloned());
            entries.extend(pages);
            Some(entries)
        }
    };
    // The entry pages as one request: the first is `url`, the others `more_urls`.
    let resolved;
    let crawled = match entries {
        None => request,
        Some(mut entries) => {
            if entries.is_empty() {
                let _ = tokio::time::timeout(DISPOSE, context.dispose()).await;
                return Err(ToolError::invalid_argument(
                    "audit: the sitemap lists no page of its origin",
                    "sitemap",
                    "check the sitemap's <loc> entries, or audit the pages by URL",
                ));
            }
            let first = entries.remove(0);
            resolved = AuditRequest {
                url: first,
                more_urls: entries,
                sitemap: None,
                ..request.clone()
            };
            &resolved
        }
    };
    let crawl = crawl(browser, &context, crawled, &state, progress);
    let outcome = tokio::time::timeout_at(deadline.into(), crawl).await;
    let _ = tokio::time::timeout(DISPOSE, context.dispose()).await;
    let status = match outcome {
        Ok(Err(error)) => return Err(error),
        Ok(Ok(())) => Status::Completed,
        Err(_) => Status::Timeout,
    };
    let mut gathered = std::mem::take(&mut *lock(&state));
    let status = match (status, gathered.entry_failed) {
        (Status::Completed, true) => Status::Failed,
        (status, _) => status,
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut found = std::mem::take(&mut gathered.findings);
    found.extend(broken_links(&gathered));
    findings::dedupe(&mut found);
    findings::rank(&mut found, request.focus.as_deref());
    let mut metrics = gathered.metrics.clone();
    metrics.pages_audited = gathered.pages.len() as u64;
    metrics.broken_links = found.iter().filter(|f| f.rule == "links.broken").count() as u64;
    metrics.duration_ms = duration_ms;
    let result = AuditResult {
        status,
        url: request.url.clone(),
        duration_ms,
        findings: found,
        metrics,
        screenshots: Vec::new(),
        pages: gathered.pages.clone(),
        external_links: gathered
            .external
            .iter()
            .map(|(url, pages)| ExternalLink {
                url: url.clone(),
                pages: pages.clone(),
                checked: matches!(gathered.links.get(url), Some(LinkState::Done(..))),
            })
            .collect(),
        focus: request.focus.clone(),
        suppressed: Vec::new(),
        warnings,
        model_pass: None,
        page_text: gathered.page_text.take(),
    };
    Ok((result, std::mem::take(&mut gathered.shots)))
}

/// Breadth-first over same-origin links, `PARALLEL` pages at a time.
async fn crawl(
    browser: &chromate::Browser,
    context: &chromate::BrowserContext,
    request: &AuditRequest,
    state: &Mutex<Gathered>,
    progress: &crate::call::Progress,
) -> Result<(), ToolError> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut level = Vec::new();
    for url in std::iter::once(&request.url).chain(&request.more_urls) {
        if seen.insert(without_fragment(url)) {
            level.push(url.clone());
        }
    }
    let mut queued = level.len() as u32;
    for depth in 0..=request.max_depth {
        let mut next: Vec<String> = Vec::new();
        for chunk in level.chunks(PARALLEL) {
            let audits = chunk
                .iter()
                .map(|url| audit_page(browser, context, request, url, depth, state));
            let outcomes = futures::future::join_all(audits).await;
            for outcome in outcomes {
                let (landed, links) = outcome?;
                if let Some(landed) = landed {
                    seen.insert(without_fragment(&landed));
                }
                if depth >= request.max_depth {
                    continue;
                }
                for link in links {
                    if queued < request.max_pages && seen.insert(link.clone()) {
                        queued += 1;
                        next.push(link);
                    }
                }
            }
            let gathered = lock(state);
            progress.set_phase(format!(
                "audit: {} pages audited, {} queued, {} findings",
                gathered.pages.len(),
                queued as usize - gathered.pages.len(),
                gathered.findings.len()
            ));
            if gathered.entry_failed {
                return Ok(());
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    Ok(())
}

/// What one page's audit leads to: the URL it landed on (after redirects), and the same-origin
/// links on it whose check found an HTML page (the next level of the crawl).
type PageOutcome = (Option<String>, Vec<String>);

/// Audits one page in its own tab of the context.
async fn audit_page(
    browser: &chromate::Browser,
    context: &chromate::BrowserContext,
    request: &AuditRequest,
    url: &str,
    depth: u32,
    state: &Mutex<Gathered>,
) -> Result<PageOutcome, ToolError> {
    let page = context
        .new_page("about:blank")
        .await
        .map_err(|err| from_engine("audit", &err))?;
    if let Some(login) = &request.login {
        for storage in &login.storage {
            if let Err(err) = page.seed_storage(storage).await {
                let _ = browser.close_page(&page).await;
                return Err(from_engine("audit", &err));
            }
        }
    }
    let res = inspect_page(&page, context, request, url, depth, state).await;
    let _ = browser.close_page(&page).await;
    res
}

fn inspect_page<'a>(
    page: &'a chromate::Page,
    context: &'a chromate::BrowserContext,
    request: &'a AuditRequest,
    url: &'a str,
    depth: u32,
    state: &'a Mutex<Gathered>,
) -> crate::Boxed<'a, Result<PageOutcome, ToolError>> {
    Box::pin(inspect_page_unboxed(
        page, context, request, url, depth, state,
    ))
}

async fn inspect_page_unboxed(
    page: &chromate::Page,
    context: &chromate::BrowserContext,
    request: &AuditRequest,
    url: &str,
    depth: u32,
    state: &Mutex<Gathered>,
) -> Result<PageOutcome, ToolError> {
    let entry = depth == 0;
    // With several entry pages one that fails is a finding, not the audit's failure.
    let only_entry = entry && request.more_urls.is_empty();
    let journal = context.journal();
    let _ = page.record_vitals().await;
    let since = journal.cursor();
    let navigation = page.goto(url, request.wait_until, NAVIGATION).await;
    let navigation = match navigation {
        Ok(navigation) => navigation,
        Err(err) => {
            // The failed document's journal entry may trail the navigation's answer a little.
            let failed = chromate::journal::LogFilter {
                kinds: vec![chromate::journal::LogKind::RequestFailed],
                ..chromate::journal::LogFilter::default()
            };
            let _ = journal.wait_for(&failed, since, FAILURE_SETTLE).await;
            let entries = page_entries(journal, page, since, journal.cursor());
            if let Some(hop) = guard_refusal(&entries) {
                if entry {
                    return Err(ssrf_blocked(&hop));
                }
            }
            let finding = Finding::new(
                "network.page-load",
                if entry {
                    Severity::Critical
                } else {
                    Severity::High
                },
                Category::Network,
                url,
                format!("Page did not load: {}", findings::cut(&err.to_string(), 100)),
            )
            .describe("the document failed at network level or did not load in time")
            .evidence(json!({ "url": url, "error": err.to_string(), "code": from_engine("audit", &err).code.as_str() }))
            .keyed("");
            let mut gathered = lock(state);
            gathered.findings.push(finding);
            gathered.pages.push(AuditedPage {
                url: url.to_owned(),
                depth,
                status: None,
                findings: 1,
                vitals: None,
                settled: None,
            });
            gathered.entry_failed |= only_entry;
            return Ok((None, Vec::new()));
        }
    };
    let page_url = navigation.url.clone();
    if let Some(status) = navigation.status.filter(|status| *status >= 400) {
        let finding = Finding::new(
            "network.document-status",
            findings::http_severity(status, true),
            Category::Network,
            &page_url,
            format!("Page answered HTTP {status}"),
        )
        .describe("the audited document itself is an HTTP error")
        .evidence(json!({ "url": page_url, "status": status }))
        .keyed("");
        let mut gathered = lock(state);
        gathered.findings.push(finding);
        gathered.metrics.http_errors += 1;
        gathered.pages.push(AuditedPage {
            url: page_url.clone(),
            depth,
            status: Some(status),
            findings: 1,
            vitals: None,
            settled: None,
        });
        gathered.entry_failed |= only_entry;
        return Ok((Some(page_url), Vec::new()));
    }
    let settled = page
        .wait_for_load_state(chromate::WaitUntil::NetworkIdle, SETTLE)
        .await
        .is_ok();
    let inspection = page
        .inspect_for_audit(MIN_TARGET)
        .await
        .map_err(|err| from_engine("audit", &err))?;
    if entry {
        lock(state).origins.insert(inspection.origin.clone());
    }
    if entry && url == request.url && request.page_text {
        let options = chromate::snapshot::SnapshotOptions {
            max_lines: focus::PAGE_LINES,
            ..chromate::snapshot::SnapshotOptions::default()
        };
        if let Ok(Ok(snapshot)) =
            tokio::time::timeout(Duration::from_secs(10), page.snapshot(options)).await
        {
            lock(state).page_text = Some(snapshot.render());
        }
    }
    if entry && url == request.url {
        if request.screenshots {
            let mut shots = screenshots(page, &page_url, true).await;
            // The entry page's come first, whichever page finished first.
            let mut gathered = lock(state);
            shots.append(&mut gathered.shots);
            gathered.shots = shots;
        }
    } else if request.screenshots {
        let mut shots = screenshots(page, &page_url, false).await;
        lock(state).shots.append(&mut shots);
    }
    let a11y_options = chromate::audit::AuditOptions {
        max_violations: 50,
        max_nodes: 10,
        max_total_nodes: 200,
        ..chromate::audit::AuditOptions::default()
    };
    let a11y = match page.audit_accessibility(a11y_options).await {
        Ok(report) => Some(report),
        // axe missing is the audit's failure, once, on the entry page.
        Err(err) if entry => return Err(from_engine("audit", &err)),
        Err(_) => None,
    };
    let cut = journal.cursor();
    let entries = page_entries(journal, page, since, cut);
    let mut found = Vec::new();
    let mut metrics = Metrics::default();
    runtime_findings(&entries, &page_url, &mut found, &mut metrics);
    network_findings(&entries, &page_url, &inspection, &mut found, &mut metrics);
    let axe_selectors = a11y
        .as_ref()
        .map(|report| a11y_findings(report, &page_url, &mut found, &mut metrics))
        .unwrap_or_default();
    layout_findings(&inspection, &page_url, &axe_selectors, &mut found);
    speed_findings(&inspection.vitals, &page_url, &mut found);
    metrics.requests = inspection.vitals.requests;
    metrics.bytes = inspection.vitals.bytes;
    if entry {
        metrics.lcp_ms = inspection.vitals.lcp.map(|lcp| lcp.round() as u64);
        metrics.cls = Some(inspection.vitals.cls);
        metrics.tbt_ms = Some(inspection.vitals.tbt.round() as u64);
    }
    // Links: same-origin targets are checked once per audit, from inside a page of their
    // origin; others are listed, and checked (opaquely) when the origin policy's allow list
    // lets them through.
    let mut to_check = Vec::new();
    let mut off_origin = Vec::new();
    let mut same_origin = Vec::new();
    {
        let mut gathered = lock(state);
        for link in &inspection.links {
            let same = gathered.origins.contains(&link.origin);
            if same || allows_checking(&gathered.policy, &link.url) {
                // A link to check: who links to it, and whether it is new to the audit.
                gathered
                    .referrers
                    .entry(link.url.clone())
                    .or_default()
                    .push((page_url.clone(), link.selector.clone()));
                if !gathered.links.contains_key(&link.url) {
                    gathered.links.insert(link.url.clone(), LinkState::Pending);
                    let queue = if same { &mut to_check } else { &mut off_origin };
                    queue.push(link.url.clone());
                }
            }
            if same {
                same_origin.push(link.url.clone());
            } else {
                let pages = gathered.external.entry(link.url.clone()).or_default();
                if !pages.contains(&page_url) {
                    pages.push(page_url.clone());
                }
            }
        }
        let n_found = found.len() as u64;
        gathered.findings.append(&mut found);
        add_metrics(&mut gathered.metrics, &metrics);
        gathered.pages.push(AuditedPage {
            url: page_url.clone(),
            depth,
            status: navigation.status,
            findings: n_found,
            vitals: Some(page_vitals(&inspection.vitals)),
            settled: Some(settled),
        });
    }
    let checked_since = journal.cursor();
    let checks = page
        .check_links(&to_check, LINK_TIMEOUT)
        .await
        .unwrap_or_default();
    let mut checks = checks;
    checks.extend(check_off_origin(journal, page, &off_origin).await);
    let after = page_entries(journal, page, checked_since, journal.cursor());
    let mut gathered = lock(state);
    for check in checks {
        // The browser's reason for a failed check, from the journal (`net::ERR_…`, a block).
        // Only a check that got no answer has one (a GET's body is aborted on purpose).
        let failure = after
            .iter()
            .rev()
            .filter(|_| check.status.is_none())
            .find_map(|entry| match &entry.data {
                chromate::journal::LogData::RequestFailed {
                    url,
                    failure,
                    blocked_by,
                    ..
                } if *url == check.url => Some(
                    if blocked_by.as_deref()
                        == Some(chromate::intercept::BlockedBy::PrivateNetwork.as_str())
                    {
                        "SSRF_BLOCKED".to_owned()
                    } else {
                        failure.clone()
                    },
                ),
                _ => None,
            });
        gathered
            .links
            .insert(check.url.clone(), LinkState::Done(check, failure));
    }
    let next = same_origin
        .into_iter()
        .filter(|url| match gathered.links.get(url) {
            Some(LinkState::Done(check, _)) => {
                check.status.is_some_and(|status| status < 400)
                    && check.content_type.to_ascii_lowercase().contains("html")
            }
            _ => false,
        })
        .collect();
    Ok((Some(page_url), next))
}

fn page_vitals(vitals: &chromate::audit::Vitals) -> findings::PageVitals {
    findings::PageVitals {
        lcp_ms: vitals.lcp.map(|lcp| lcp.round() as u64),
        cls: vitals.cls,
        tbt_ms: vitals.tbt.round() as u64,
        long_tasks: vitals.long_tasks,
        requests: vitals.requests,
        bytes: vitals.bytes,
        complete: vitals.recorded && !vitals.hidden,
    }
}

fn add_metrics(total: &mut Metrics, page: &Metrics) {
    total.console_errors += page.console_errors;
    total.http_errors += page.http_errors;
    total.a11y_violations += page.a11y_violations;
    total.requests += page.requests;
    total.bytes += page.bytes;
    if page.lcp_ms.is_some() {
        total.lcp_ms = page.lcp_ms;
    }
    if page.cls.is_some() {
        total.cls = page.cls;
    }
    if page.tbt_ms.is_some() {
        total.tbt_ms = page.tbt_ms;
    }
}

/// The context journal's entries of `page` with `since < seq <= until`.
fn page_entries(
    journal: &chromate::journal::Journal,
    page: &chromate::Page,
    since: u64,
    until: u64,
) -> Vec<chromate::journal::LogEntry> {
    journal
        .list(&chromate::journal::LogFilter::default(), since, 5000)
        .entries
        .into_iter()
        .filter(|entry| entry.page == page.target_id() && entry.seq <= until)
        .collect()
}

/// The URL a private-network guard refused, if it refused one.
pub(crate) fn guard_refusal(entries: &[chromate::journal::LogEntry]) -> Option<String> {
    entries.iter().find_map(|entry| match &entry.data {
        chromate::journal::LogData::RequestFailed {
            url, blocked_by, ..
        } if blocked_by.as_deref()
            == Some(chromate::intercept::BlockedBy::PrivateNetwork.as_str()) =>
        {
            Some(url.clone())
        }
        _ => None,
    })
}

/// The class of a URL's host for messages: an address literal's class, `loopback` for
/// `localhost`, else `private network` (a name that resolved there).
fn host_class(url: &str) -> String {
    let authority = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(host, _)| host),
    };
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return chromate::intercept::classify_ip(ip).as_str().to_owned();
    }
    if host == "localhost" || host.ends_with(".localhost") {
        return "loopback".to_owned();
    }
    "private network".to_owned()
}

/// SSRF_BLOCKED for the entry page's hop to `hop`.
pub fn ssrf_blocked(hop: &str) -> ToolError {
    let class = host_class(hop);
    ToolError::new(
        ToolErrorCode::SsrfBlocked,
        format!("audit: {hop} is a {class} address; --block-private-network refused the request at that hop"),
    )
    .with_hint(
        "--block-private-network refuses loopback, private, link-local and unique-local targets, \
         redirect hops included; drop the flag to audit a local server, or trust one origin with \
         --allow-private ORIGIN",
    )
    .with_detail(json!({ "url": hop, "class": class, "reason": "private-network" }))
}

/// A screenshot the audit took, for the caller to store.
#[derive(Debug, Clone)]
pub struct TakenShot {
    /// `viewport` or `full-page`.
    pub name: String,
    /// The page it shows.
    pub page: String,
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// A full-page capture of `page`, and of the entry page its viewport too.
async fn screenshots(page: &chromate::Page, url: &str, entry: bool) -> Vec<TakenShot> {
    let mut shots = Vec::new();
    let targets: &[(&str, chromate::capture::ScreenshotTarget)] = if entry {
        &[
            ("viewport", chromate::capture::ScreenshotTarget::Viewport),
            ("full-page", chromate::capture::ScreenshotTarget::FullPage),
        ]
    } else {
        &[("full-page", chromate::capture::ScreenshotTarget::FullPage)]
    };
    for (name, target) in targets {
        let options = chromate::capture::ScreenshotOptions {
            target: target.clone(),
            ..chromate::capture::ScreenshotOptions::default()
        };
        if let Ok(shot) = page.screenshot(options).await {
            shots.push(TakenShot {
                name: (*name).to_owned(),
                page: url.to_owned(),
                png: shot.png,
                width: shot.width,
                height: shot.height,
            });
        }
    }
    shots
}

/// Whether an off-origin link may be checked: only when the server's origin policy has an allow
/// list (`--allowed-origins`) that lets it through, so an audit of a page never reaches out to
/// the origins it merely links to unless the operator named them.
fn allows_checking(policy: &chromate::intercept::OriginPolicy, url: &str) -> bool {
    policy.allowed.is_some() && !policy.blocks(url)
}

/// Checks links to other origins from the page (HEAD, then GET when HEAD fails or is
/// refused). Their answers are opaque to the page, so each status comes from the network log:
/// the response to that URL and method, waited for a moment as it may trail the fetch's answer.
/// An opaque answer with no logged response (a redirect elsewhere) counts as reached.
async fn check_off_origin(
    journal: &chromate::journal::Journal,
    page: &chromate::Page,
    urls: &[String],
) -> Vec<chromate::audit::LinkStatus> {
    let mut checks = opaque_round(journal, page, urls, chromate::audit::LinkMethod::Head).await;
    let refused: Vec<String> = checks
        .iter()
        .filter(|check| check.method == "HEAD" && matches!(check.status, Some(405 | 501)))
        .map(|check| check.url.clone())
        .collect();
    if !refused.is_empty() {
        let again = opaque_round(journal, page, &refused, chromate::audit::LinkMethod::Get).await;
        checks.retain(|check| !refused.contains(&check.url));
        checks.extend(again);
    }
    checks
}

async fn opaque_round(
    journal: &chromate::journal::Journal,
    page: &chromate::Page,
    urls: &[String],
    first: chromate::audit::LinkMethod,
) -> Vec<chromate::audit::LinkStatus> {
    let since = journal.cursor();
    let mut checks = page
        .check_links_opaque(urls, first, LINK_TIMEOUT)
        .await
        .unwrap_or_default();
    for check in &mut checks {
        if !check.opaque {
            continue;
        }
        let answered = chromate::journal::LogFilter {
            kinds: vec![chromate::journal::LogKind::Response],
            contains: Some(check.url.clone()),
            ..chromate::journal::LogFilter::default()
        };
        let _ = journal.wait_for(&answered, since, FAILURE_SETTLE).await;
        let entries = page_entries(journal, page, since, journal.cursor());
        check.status = entries.iter().rev().find_map(|entry| match &entry.data {
            chromate::journal::LogData::Response {
                url,
                method,
                status,
                ..
            } if *url == check.url && *method == check.method => Some(*status),
            _ => None,
        });
    }
    checks
}

/// `url` without its `#fragment`.
pub fn without_fragment(url: &str) -> String {
    url.split('#').next().unwrap_or(url).to_owned()
}

#[cfg(test)]
mod tests;
