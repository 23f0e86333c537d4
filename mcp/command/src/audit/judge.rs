//! Judgements on one page's evidence: which runtime errors, failed or refused requests, axe
//! violations, layout defects, slow metrics and broken links become findings, with their
//! severity and a durable selector. The evidence is gathered by `mod.rs`; the finding types,
//! thresholds and ranking are `findings.rs`.

use super::*;

/// Uncaught errors, unhandled rejections, `console.error` and `console.warn`, one finding per
/// message and place (with its count).
pub(crate) fn runtime_findings(
    entries: &[chromate::journal::LogEntry],
    page: &str,
    found: &mut Vec<Finding>,
    metrics: &mut Metrics,
) {
    let mut by_key: BTreeMap<String, (Finding, u64)> = BTreeMap::new();
    for entry in entries {
        let (rule, severity, text, origin, stack, method) = match &entry.data {
            chromate::journal::LogData::Error {
                method,
                text,
                origin,
                stack,
            } => {
                let rule = if method == "unhandledrejection" {
                    "runtime.unhandled-rejection"
                } else {
                    "runtime.exception"
                };
                (rule, Severity::High, text, origin, stack.clone(), method)
            }
            chromate::journal::LogData::Console {
                level: chromate::journal::LogLevel::Error,
                method,
                text,
                origin,
            } => (
                "runtime.console-error",
                Severity::Medium,
                text,
                origin,
                None,
                method,
            ),
            chromate::journal::LogData::Console {
                level: chromate::journal::LogLevel::Warn,
                method,
                text,
                origin,
            } => (
                "runtime.console-warn",
                Severity::Low,
                text,
                origin,
                None,
                method,
            ),
            _ => continue,
        };
        if severity >= Severity::Medium {
            metrics.console_errors += 1;
        }
        let key = format!("{rule}\n{text}\n{}", origin.as_deref().unwrap_or(""));
        let slot = by_key.entry(key).or_insert_with(|| {
            let description = match rule {
                "runtime.exception" => "an uncaught exception during load and settle",
                "runtime.unhandled-rejection" => "a promise rejection nobody handled",
                "runtime.console-error" => "the page called console.error",
                _ => "the page called console.warn",
            };
            let finding = Finding::new(
                rule,
                severity,
                Category::Functional,
                page,
                findings::cut(text, 120),
            )
            .describe(description)
            .evidence(json!({
                "message": text,
                "method": method,
                "origin": origin,
                "stack": stack,
            }))
            .keyed(&format!("{text}\n{}", origin.as_deref().unwrap_or("")));
            (finding, 0)
        });
        slot.1 += 1;
    }
    for (_, (mut finding, count)) in by_key {
        finding.evidence["count"] = json!(count);
        found.push(finding);
    }
}

/// Responses ≥ 400, failed and refused requests, images that did not decode, mixed content.
pub(super) fn network_findings(
    entries: &[chromate::journal::LogEntry],
    page: &str,
    inspection: &chromate::audit::PageInspection,
    found: &mut Vec<Finding>,
    metrics: &mut Metrics,
) {
    let mut failed_urls: HashSet<String> = HashSet::new();
    for (index, entry) in entries.iter().enumerate() {
        match &entry.data {
            chromate::journal::LogData::Response {
                url,
                method,
                status,
                mime_type,
                ..
            } if *status >= 400 => {
                failed_urls.insert(url.clone());
                if url == page || findings::incidental(url) {
                    continue;
                }
                metrics.http_errors += 1;
                found.push(
                    Finding::new(
                        "network.http-error",
                        findings::http_severity(*status, false),
                        Category::Network,
                        page,
                        format!(
                            "{method} {} answered {status}",
                            findings::cut(&findings::short_url(url), 90)
                        ),
                    )
                    .describe("a request of the page got an HTTP error status")
                    .evidence(json!({
                        "url": url,
                        "method": method,
                        "status": status,
                        "mime_type": mime_type,
                        "duration_ms": duration_to(entries, index, url),
                    }))
                    .keyed(url),
                );
            }
            chromate::journal::LogData::RequestFailed {
                url,
                method,
                failure,
                blocked_by,
            } => {
                failed_urls.insert(url.clone());
                let private = blocked_by.as_deref()
                    == Some(chromate::intercept::BlockedBy::PrivateNetwork.as_str());
                // The user's own policy and mocks block on purpose; an abort is the page's
                // (a navigation away, a cancelled fetch).
                if (blocked_by.is_some() && !private)
                    || failure == "net::ERR_ABORTED"
                    || findings::incidental(url)
                {
                    continue;
                }
                metrics.http_errors += 1;
                let (rule, title, description, code) = if private {
                    (
                        "network.ssrf-blocked",
                        format!("{method} {} refused: private network", findings::cut(&findings::short_url(url), 80)),
                        "--block-private-network refused a request to a loopback, private, link-local or unique-local address",
                        Some("SSRF_BLOCKED"),
                    )
                } else {
                    (
                        "network.request-failed",
                        format!(
                            "{method} {} failed: {failure}",
                            findings::cut(&findings::short_url(url), 80)
                        ),
                        "a request of the page failed at network level",
                        None,
                    )
                };
                found.push(
                    Finding::new(rule, Severity::Medium, Category::Network, page, title)
                        .describe(description)
                        .evidence(json!({
                            "url": url,
                            "method": method,
                            "error": failure,
                            "code": code,
                            "duration_ms": duration_to(entries, index, url),
                        }))
                        .keyed(url),
                );
            }
            _ => {}
        }
    }
    for image in &inspection.images {
        if failed_urls.contains(&image.url) {
            continue;
        }
        found.push(
            Finding::new(
                "network.image-decode",
                Severity::Medium,
                Category::Network,
                page,
                format!(
                    "Image did not decode: {}",
                    findings::cut(&findings::short_url(&image.url), 90)
                ),
            )
            .describe("the image loaded but the browser could not decode it")
            .at(Some(image.selector.clone()))
            .evidence(json!({ "url": image.url }))
            .keyed(&image.url),
        );
    }
    for resource in &inspection.mixed {
        found.push(
            Finding::new(
                "network.mixed-content",
                Severity::High,
                Category::Network,
                page,
                format!("Mixed content: {}", findings::cut(&resource.url, 90)),
            )
            .describe("an https page asks for a resource over plain http")
            .at(Some(resource.selector.clone()))
            .evidence(json!({ "url": resource.url }))
            .keyed(&resource.url),
        );
    }
}

/// Milliseconds from the latest request for `url` before `entries[index]` to it.
pub(super) fn duration_to(
    entries: &[chromate::journal::LogEntry],
    index: usize,
    url: &str,
) -> Option<u64> {
    let end = entries.get(index)?.time;
    let start = entries[..index]
        .iter()
        .rev()
        .find_map(|entry| match &entry.data {
            chromate::journal::LogData::Request { url: sent, .. } if sent == url => {
                Some(entry.time)
            }
            _ => None,
        })?;
    end.duration_since(start)
        .ok()
        .and_then(|elapsed| u64::try_from(elapsed.as_millis()).ok())
}

/// One finding per axe violation (its first node's selector, every reported node in the
/// evidence); returns every reported node's selector.
pub(super) fn a11y_findings(
    report: &chromate::audit::AuditReport,
    page: &str,
    found: &mut Vec<Finding>,
    metrics: &mut Metrics,
) -> HashSet<String> {
    let mut selectors = HashSet::new();
    metrics.a11y_violations += report.violations.len() as u64;
    for violation in &report.violations {
        let nodes: Vec<Value> = violation
            .nodes
            .iter()
            .map(|node| {
                json!({
                    "selector": node.selector,
                    "target": node.target,
                    "html": findings::cut(&node.html, 300),
                    "summary": findings::cut(&node.failure_summary, 500),
                })
            })
            .collect();
        selectors.extend(
            violation
                .nodes
                .iter()
                .filter_map(|node| node.selector.clone()),
        );
        let first = violation
            .nodes
            .first()
            .and_then(|node| node.selector.clone());
        found.push(
            Finding::new(
                &format!("a11y.{}", violation.id),
                findings::axe_severity(violation.impact),
                Category::Accessibility,
                page,
                violation.help.clone(),
            )
            .describe(violation.description.clone())
            .at(first)
            .evidence(json!({
                "rule": violation.id,
                "impact": violation.impact.as_str(),
                "help_url": violation.help_url,
                "tags": violation.tags,
                "nodes": nodes,
            }))
            .keyed(""),
        );
    }
    selectors
}

/// Horizontal overflow and the controls' problems; a control axe already reported for the
/// same reason is not reported twice.
pub(super) fn layout_findings(
    inspection: &chromate::audit::PageInspection,
    page: &str,
    axe_selectors: &HashSet<String>,
    found: &mut Vec<Finding>,
) {
    let overflow = &inspection.overflow;
    if overflow.width > overflow.viewport + 1.0 {
        let selector = overflow
            .element
            .as_ref()
            .map(|element| element.selector.clone());
        found.push(
            Finding::new(
                "layout.horizontal-overflow",
                Severity::Medium,
                Category::Visual,
                page,
                format!(
                    "Page is wider than the viewport ({} px > {} px)",
                    overflow.width, overflow.viewport
                ),
            )
            .describe("the document scrolls sideways: something is wider than the viewport")
            .at(selector)
            .evidence(json!({
                "viewport": overflow.viewport,
                "width": overflow.width,
                "rect": overflow.element.as_ref().map(|element| rect_json(&element.rect)),
            }))
            .keyed(""),
        );
    }
    for issue in &inspection.controls {
        let Some((rule, severity, category, title)) = findings::control_rule(&issue.kind) else {
            continue;
        };
        let axe_covers = matches!(issue.kind.as_str(), "nameless" | "small-target")
            && axe_selectors.contains(&issue.selector);
        if axe_covers {
            continue;
        }
        let mut evidence = json!({
            "tag": issue.tag,
            "role": issue.role,
            "name": issue.name,
            "rect": rect_json(&issue.rect),
        });
        if let Some(size) = &issue.size {
            evidence["size"] = json!(size);
        }
        if let Some(covered_by) = &issue.covered_by {
            evidence["covered_by"] = json!(covered_by);
        }
        let description = match issue.kind.as_str() {
            "covered" => "another element sits on top of the control's middle, even scrolled into view, so a click there does not reach it",
            "off-screen" => "the control lies outside the viewport however the page and its scroll containers are scrolled, where nobody can reach it",
            "zero-size" => "the control is rendered with no width or no height",
            "nameless" => "the control has no accessible name, so assistive technology cannot announce it",
            _ => "targets under 24×24 CSS px are hard to hit (WCAG 2.5.8)",
        };
        found.push(
            Finding::new(rule, severity, category, page, title)
                .describe(description)
                .at(Some(issue.selector.clone()))
                .evidence(evidence)
                .keyed(&issue.selector),
        );
    }
}

pub(super) fn rect_json(rect: &chromate::audit::ProbeRect) -> Value {
    json!({ "x": rect.x, "y": rect.y, "width": rect.width, "height": rect.height })
}

/// LCP, CLS, TBT, bytes and requests against their thresholds.
pub(super) fn speed_findings(
    vitals: &chromate::audit::Vitals,
    page: &str,
    found: &mut Vec<Finding>,
) {
    if let Some(lcp) = vitals.lcp {
        found.extend(findings::speed_finding(
            &findings::LCP,
            lcp,
            page,
            vitals.lcp_selector.clone(),
        ));
    }
    found.extend(findings::speed_finding(
        &findings::CLS,
        vitals.cls,
        page,
        vitals.cls_selector.clone(),
    ));
    if !vitals.recorded || vitals.hidden {
        tracing::warn!(
            page,
            recorded = vitals.recorded,
            hidden = vitals.hidden,
            "web vitals incomplete"
        );
    }
    let mut tbt = findings::speed_finding(&findings::TBT, vitals.tbt, page, None);
    if let Some(finding) = &mut tbt {
        finding.evidence["long_tasks"] = json!(vitals.long_tasks);
        finding.evidence["longest_task_ms"] = json!(vitals.longest_task);
    }
    found.extend(tbt);
    let mut bytes = findings::speed_finding(&findings::BYTES, vitals.bytes as f64, page, None);
    if let Some(finding) = &mut bytes {
        let largest: Vec<Value> = vitals
            .largest
            .iter()
            .map(|resource| json!({ "url": resource.url, "bytes": resource.bytes }))
            .collect();
        finding.evidence["largest"] = json!(largest);
    }
    found.extend(bytes);
    found.extend(findings::speed_finding(
        &findings::REQUESTS,
        vitals.requests as f64,
        page,
        None,
    ));
}

/// One finding per broken same-origin target, on the first page that links to it, with every
/// referring page in its evidence.
pub(super) fn broken_links(gathered: &Gathered) -> Vec<Finding> {
    let mut found = Vec::new();
    for (url, referrers) in &gathered.referrers {
        let Some(LinkState::Done(check, failure)) = gathered.links.get(url) else {
            continue;
        };
        let broken_status = check.status.filter(|status| *status >= 400);
        let error = failure.clone().or_else(|| check.error.clone());
        let (severity, what) = match (broken_status, &error) {
            (Some(status), _) => (Severity::High, format!("answers {status}")),
            (None, Some(error)) if error == "timeout" => (Severity::Medium, "timed out".to_owned()),
            (None, Some(error)) => (Severity::High, format!("failed: {error}")),
            (None, None) => continue,
        };
        let Some((page, selector)) = referrers.first() else {
            continue;
        };
        let referrers: Vec<Value> = referrers
            .iter()
            .map(|(page, selector)| json!({ "page": page, "selector": selector }))
            .collect();
        found.push(
            Finding::new(
                "links.broken",
                severity,
                Category::Functional,
                page,
                format!(
                    "Broken link: {} {what}",
                    findings::cut(&findings::short_url(url), 90)
                ),
            )
            .describe(if gathered.external.contains_key(url) {
                "a link to another origin, which the origin policy allows, leads nowhere (checked with HEAD, then GET)"
            } else {
                "a same-origin link leads nowhere (checked with HEAD, then GET)"
            })
            .at(Some(selector.clone()))
            .evidence(json!({
                "url": url,
                "status": check.status,
                "method": check.method,
                "error": error,
                "code": (error.as_deref() == Some("SSRF_BLOCKED")).then_some("SSRF_BLOCKED"),
                "referrers": referrers,
            }))
            .keyed(url),
        );
    }
    found
}
