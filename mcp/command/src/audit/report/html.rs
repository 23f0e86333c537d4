//! The HTML report: one self-contained file (inline CSS, screenshots as `data:` URLs, no
//! script) — the summary, each audited page's full-page screenshot (the entry page's first)
//! with a numbered box on every finding of that page that has a box, the ranked findings with
//! their evidence as readable text, the metrics.

use base64::Engine as _;
use serde_json::Value;

use super::{summary, Report};
use crate::audit::findings::{short_url, AuditResult, Severity, Shot};
use crate::markup::escape;

pub(super) struct Html<'a> {
    pub shots: &'a [(String, Vec<u8>)],
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\
h1{font-size:1.4em}table{border-collapse:collapse;width:100%}\
td,th{border:1px solid #ccc;padding:4px 6px;text-align:left;vertical-align:top}\
.sev{font-weight:bold;text-transform:uppercase;font-size:12px}\
.critical{color:#fff;background:#8b0000}.high{color:#fff;background:#d9480f}\
.medium{background:#f0c36d}.low{background:#cfe3f5}.info{background:#eee}\
.shot{position:relative;display:inline-block;border:1px solid #999;max-width:100%}\
.shot img{display:block;max-width:100%}\
.mark{position:absolute;border:2px solid #d9480f;box-sizing:border-box}\
.mark span{position:absolute;top:-1.4em;left:-2px;background:#d9480f;color:#fff;font-size:11px;padding:0 3px}\
pre{white-space:pre-wrap;margin:0;font-size:12px;max-height:12em;overflow:auto}";

/// The document box of a finding (`evidence.rect`), if any.
fn rect(evidence: &Value) -> Option<(f64, f64, f64, f64)> {
    let rect = evidence.get("rect")?;
    let field = |name: &str| rect.get(name).and_then(Value::as_f64);
    Some((field("x")?, field("y")?, field("width")?, field("height")?))
}

/// One page's full-page screenshot with a numbered box on each of its findings that has one;
/// the entry page's is `#screenshot`.
fn shot_html(result: &AuditResult, shot: &Shot, bytes: &[u8], page: &str, entry: bool) -> String {
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    let (heading, id) = if entry {
        ("Entry page".to_owned(), " id=\"screenshot\"")
    } else {
        (format!("Page {}", escape(&short_url(page))), "")
    };
    let mut out = format!(
        "<h2>{heading}</h2>\n<div class=\"shot\"{id} data-page=\"{}\"><img alt=\"{}, full length\" src=\"data:image/png;base64,{data}\">\n",
        escape(page),
        escape(page)
    );
    let (width, height) = (f64::from(shot.width.max(1)), f64::from(shot.height.max(1)));
    for (index, finding) in result.findings.iter().enumerate() {
        if finding.page != page {
            continue;
        }
        let Some((x, y, w, h)) = rect(&finding.evidence) else {
            continue;
        };
        out.push_str(&format!(
            "<a class=\"mark\" href=\"#f{n}\" title=\"{}\" style=\"left:{:.3}%;top:{:.3}%;width:{:.3}%;height:{:.3}%\"><span>{n}</span></a>\n",
            escape(&finding.title),
            x / width * 100.0,
            y / height * 100.0,
            (w.max(2.0)) / width * 100.0,
            (h.max(2.0)) / height * 100.0,
            n = index + 1,
        ));
    }
    out.push_str("</div>\n");
    out
}

impl Report for Html<'_> {
    fn render(&self, result: &AuditResult) -> String {
        let title = format!("Audit of {}", result.url);
        let mut out = format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n<p id=\"summary\"><b>{}</b> in {:.1} s — {} pages, {} findings ({})</p>\n",
            escape(&title),
            escape(&title),
            result.status.as_str(),
            result.duration_ms as f64 / 1000.0,
            result.metrics.pages_audited,
            result.findings.len(),
            escape(&summary(result)),
        );
        // Each page as it looked, with its findings' boxes: the entry page first.
        let entry = result.pages.first().map(|page| page.url.as_str());
        for shot in result
            .screenshots
            .iter()
            .filter(|shot| shot.name == "full-page")
        {
            let Some((_, bytes)) = self.shots.iter().find(|(path, _)| *path == shot.path) else {
                continue;
            };
            // A result without `page` (an older one) had the entry page's only.
            let page = shot.page.as_deref().or(entry).unwrap_or(&result.url);
            out.push_str(&shot_html(result, shot, bytes, page, Some(page) == entry));
        }
        out.push_str("<h2>Findings</h2>\n");
        if result.findings.is_empty() {
            out.push_str("<p>No findings.</p>\n");
        } else {
            out.push_str("<table id=\"findings\"><thead><tr><th>#</th><th>severity</th><th>category</th><th>finding</th><th>page</th><th>selector</th><th>evidence</th></tr></thead><tbody>\n");
            for (index, finding) in result.findings.iter().enumerate() {
                let evidence = crate::markup::readable(&finding.evidence);
                out.push_str(&format!(
                    "<tr id=\"f{}\" class=\"finding\" data-severity=\"{}\"><td>{}</td><td><span class=\"sev {}\">{}</span></td><td>{}</td><td><b>{}</b><br>{}</td><td>{}</td><td><code>{}</code></td><td><pre>{}</pre></td></tr>\n",
                    index + 1,
                    finding.severity.as_str(),
                    index + 1,
                    finding.severity.as_str(),
                    finding.severity.as_str(),
                    finding.category.as_str(),
                    escape(&finding.title),
                    escape(&finding.description),
                    escape(&short_url(&finding.page)),
                    escape(finding.selector_hint.as_deref().unwrap_or("")),
                    escape(&evidence),
                ));
            }
            out.push_str("</tbody></table>\n");
        }
        if !result.suppressed.is_empty() {
            out.push_str(&format!(
                "<h2>Suppressed ({})</h2>\n<table id=\"suppressed\"><thead><tr><th>by</th><th>rule</th><th>finding</th><th>page</th><th>selector</th><th>reason</th></tr></thead><tbody>\n",
                result.suppressed.len()
            ));
            for set_aside in &result.suppressed {
                let finding = &set_aside.finding;
                out.push_str(&format!(
                    "<tr class=\"suppressed\" data-by=\"{}\"><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>\n",
                    escape(&set_aside.suppressed_by),
                    escape(&set_aside.suppressed_by),
                    escape(&finding.rule),
                    escape(&finding.title),
                    escape(&short_url(&finding.page)),
                    escape(finding.selector_hint.as_deref().unwrap_or("")),
                    escape(&set_aside.reason),
                ));
            }
            out.push_str("</tbody></table>\n");
        }
        if !result.warnings.is_empty() {
            out.push_str("<ul id=\"warnings\">");
            for warning in &result.warnings {
                out.push_str(&format!("<li>warning: {}</li>", escape(warning)));
            }
            out.push_str("</ul>\n");
        }
        let m = &result.metrics;
        out.push_str(&format!(
            "<h2>Metrics</h2>\n<ul id=\"metrics\"><li>LCP: {}</li><li>CLS: {}</li><li>TBT: {}</li><li>{} requests, {} KiB</li><li>{} console errors, {} http errors, {} broken links, {} a11y violations</li></ul>\n",
            m.lcp_ms.map_or("-".to_owned(), |v| format!("{v} ms")),
            m.cls.map_or("-".to_owned(), |v| format!("{v:.3}")),
            m.tbt_ms.map_or("-".to_owned(), |v| format!("{v} ms")),
            m.requests,
            m.bytes / 1024,
            m.console_errors,
            m.http_errors,
            m.broken_links,
            m.a11y_violations,
        ));
        let worst = result
            .findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::Info);
        out.push_str(&format!(
            "<footer>chromate {} · worst: {}</footer>\n</body></html>\n",
            env!("CARGO_PKG_VERSION"),
            worst.as_str()
        ));
        out
    }
}
