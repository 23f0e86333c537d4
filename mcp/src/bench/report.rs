//! The report of a `bench-snapshot` run: a table (per page and tool, then per tool over all
//! pages), JSON (the same figures, every sample), or a self-contained HTML page (inline CSS
//! and SVG charts, no script and no external asset).

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{percentile, tokens, Measured, Run};

/// The report's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Table,
    Json,
    Html,
}

impl Format {
    pub(crate) fn parse(name: &str) -> Option<Format> {
        match name {
            "table" | "text" => Some(Format::Table),
            "json" => Some(Format::Json),
            "html" => Some(Format::Html),
            _ => None,
        }
    }
}

pub(crate) fn render(run: &Run, format: Format) -> String {
    match format {
        Format::Table => table(run),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&to_json(run)).unwrap_or_default();
            text.push('\n');
            text
        }
        Format::Html => html(run),
    }
}

/// One tool's figures over every page it measured.
struct Summary {
    name: String,
    pages: usize,
    failed: usize,
    /// Per-page median times: their median and p90.
    time_median: f64,
    time_p90: f64,
    bytes_median: f64,
    tokens_median: Option<f64>,
    estimate_median: f64,
    score: chromate::oracle::Score,
}

fn summaries(run: &Run) -> Vec<Summary> {
    run.tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let measured: Vec<&Measured> = run
                .pages
                .iter()
                .filter_map(|p| p.results.get(i).and_then(|r| r.as_ref().ok()))
                .collect();
            let failed = run
                .pages
                .iter()
                .filter(|p| p.results.get(i).is_some_and(|r| r.is_err()))
                .count();
            let times: Vec<f64> = measured.iter().map(|m| m.median_ms()).collect();
            let bytes: Vec<f64> = measured.iter().map(|m| m.bytes as f64).collect();
            let estimates: Vec<f64> = measured
                .iter()
                .map(|m| tokens::estimate(m.bytes) as f64)
                .collect();
            let counted: Option<Vec<f64>> = measured
                .iter()
                .map(|m| m.tokens.map(|t| t as f64))
                .collect();
            let mut score = chromate::oracle::Score::default();
            for (page, m) in run.pages.iter().zip(&measured) {
                if page.reference.is_some() {
                    score.add(m.score);
                }
            }
            Summary {
                name: tool.name.clone(),
                pages: measured.len(),
                failed,
                time_median: percentile(&times, 0.5),
                time_p90: percentile(&times, 0.9),
                bytes_median: percentile(&bytes, 0.5),
                tokens_median: counted
                    .filter(|c| !c.is_empty())
                    .map(|c| percentile(&c, 0.5)),
                estimate_median: percentile(&estimates, 0.5),
                score,
            }
        })
        .collect()
}

fn tokens_cell(tokens: Option<usize>) -> String {
    tokens.map_or_else(|| "-".to_string(), |t| t.to_string())
}

/// The per-tool summary, as the table ends with it.
pub(crate) fn summary_table(run: &Run) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<22} {:>5} {:>10} {:>10} {:>9} {:>8} {:>8} {:>7} {:>9}",
        "tool (all pages)",
        "pages",
        "median ms",
        "p90 ms",
        "bytes",
        "tokens",
        "bytes/4",
        "recall",
        "precision"
    );
    for s in summaries(run) {
        let _ = writeln!(
            out,
            "{:<22} {:>5} {:>10.1} {:>10.1} {:>9.0} {:>8} {:>8.0} {:>7.3} {:>9.3}{}",
            s.name,
            s.pages,
            s.time_median,
            s.time_p90,
            s.bytes_median,
            s.tokens_median
                .map_or_else(|| "-".to_string(), |t| format!("{t:.0}")),
            s.estimate_median,
            s.score.recall(),
            s.score.precision(),
            if s.failed > 0 {
                format!("  ({} pages failed)", s.failed)
            } else {
                String::new()
            }
        );
    }
    for (name, why) in &run.skipped {
        let _ = writeln!(out, "skipped: {name}: {why}");
    }
    if tokens::TOKENIZER.is_none() {
        let _ = writeln!(out, "note: {}", tokens::HOW_TO_COUNT);
    }
    out
}

fn table(run: &Run) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<40} {:<22} {:>9} {:>9} {:>8} {:>7} {:>8} {:>8} {:>7} {:>9}",
        "page",
        "tool",
        "median ms",
        "p90 ms",
        "bytes",
        "tokens",
        "bytes/4",
        "controls",
        "recall",
        "precision"
    );
    for page in &run.pages {
        let label = short(&page.label, 40);
        for (tool, result) in run.tools.iter().zip(&page.results) {
            match result {
                Ok(m) => {
                    let _ = writeln!(
                        out,
                        "{label:<40} {:<22} {:>9.1} {:>9.1} {:>8} {:>7} {:>8} {:>8} {:>7} {:>9}",
                        tool.name,
                        m.median_ms(),
                        m.p90_ms(),
                        m.bytes,
                        tokens_cell(m.tokens),
                        tokens::estimate(m.bytes),
                        m.score.listed,
                        ratio_cell(page.reference.map(|_| m.score.recall())),
                        ratio_cell(page.reference.map(|_| m.score.precision())),
                    );
                    if !m.missing.is_empty() || !m.extra.is_empty() {
                        let _ = writeln!(
                            out,
                            "<tr class=\"differences\"><td></td><td colspan=\"10\" class=\"tool\"><details><summary>{} missing, {} extra</summary>{}{}</details></td></tr>",
                            m.missing.iter().map(|(_, n)| n).sum::<usize>(),
                            m.extra.iter().map(|(_, n)| n).sum::<usize>(),
                            control_list("missing (in Chrome's tree, not in the full view)", &m.missing),
                            control_list("extra (in the full view, not in Chrome's tree)", &m.extra),
                        );
                    }
                }
                Err(why) => {
                    let _ = writeln!(out, "{label:<40} {:<22} failed: {why}", tool.name);
                }
            }
        }
        let _ = writeln!(
            out,
            "{label:<40} {:<22} {:>9} {:>9} {:>8} {:>7} {:>8} {:>8}",
            "(chrome's tree)",
            "",
            "",
            "",
            "",
            "",
            page.reference
                .map_or_else(|| "-".to_string(), |n| n.to_string())
        );
    }
    out.push('\n');
    out.push_str(&summary_table(run));
    let _ = writeln!(
        out,
        "time: the default-view snapshot call as the client sees it, {} per page; bytes and \
         tokens: that view; controls, recall, precision: the full view against Chrome's \
         accessibility tree in every frame; every tool and the reference read {} ms after \
         their navigation",
        run.repeat, run.wait_ms
    );
    out
}

fn ratio_cell(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

/// `text` cut to `width` characters, keeping its end (where a path differs).
fn short(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        text.to_string()
    } else {
        let tail: String = text.chars().skip(n - (width - 1)).collect();
        format!("…{tail}")
    }
}

/// `[[role, name, count], …]`.
fn controls_json(controls: &[(chromate::oracle::Control, usize)]) -> Value {
    controls
        .iter()
        .map(|((role, name), n)| json!([role, name, n]))
        .collect()
}

fn to_json(run: &Run) -> Value {
    let tools: Vec<Value> = run
        .tools
        .iter()
        .map(|t| {
            json!({"name": t.name, "kind": t.kind, "status": "measured",
                   "command": t.command, "version": t.version})
        })
        .chain(
            run.skipped
                .iter()
                .map(|(name, why)| json!({"name": name, "status": "skipped", "reason": why})),
        )
        .collect();
    let pages: Vec<Value> = run
        .pages
        .iter()
        .map(|page| {
            let results: Vec<Value> = run
                .tools
                .iter()
                .zip(&page.results)
                .map(|(tool, result)| match result {
                    Ok(m) => json!({
                        "tool": tool.name,
                        "time_ms": {"median": m.median_ms(), "p90": m.p90_ms(), "samples": m.samples_ms},
                        "bytes": m.bytes,
                        "tokens": m.tokens,
                        "tokens_estimate": tokens::estimate(m.bytes),
                        "controls": m.controls,
                        "full": {
                            "bytes": m.full_bytes,
                            "controls": m.score.listed,
                            "matched": m.score.matched,
                            "recall": page.reference.map(|_| m.score.recall()),
                            "precision": page.reference.map(|_| m.score.precision()),
                            "missing": controls_json(&m.missing),
                            "extra": controls_json(&m.extra),
                        },
                    }),
                    Err(why) => json!({"tool": tool.name, "error": why}),
                })
                .collect();
            json!({"url": page.url, "label": page.label,
                   "reference": {"controls": page.reference}, "results": results})
        })
        .collect();
    let summary: Vec<Value> = summaries(run)
        .into_iter()
        .map(|s| {
            json!({
                "tool": s.name, "pages": s.pages, "failed": s.failed,
                "time_ms": {"median": s.time_median, "p90": s.time_p90},
                "bytes_median": s.bytes_median,
                "tokens_median": s.tokens_median,
                "tokens_estimate_median": s.estimate_median,
                "reference_controls": s.score.reference,
                "controls": s.score.listed,
                "matched": s.score.matched,
                "recall": s.score.recall(),
                "precision": s.score.precision(),
            })
        })
        .collect();
    json!({
        "chromate": env!("CARGO_PKG_VERSION"),
        "browser": run.browser,
        "browser_version": run.browser_version,
        "wait_ms": run.wait_ms,
        "scored_roles": chromate::oracle::SCORED_ROLES,
        "tokenizer": tokens::TOKENIZER,
        "repeat": run.repeat,
        "tools": tools,
        "pages": pages,
        "summary": summary,
    })
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One colour per tool, in order.
const COLOURS: &[&str] = &[
    "#1b7f5b", "#3b6fd4", "#c2571a", "#8a3fb8", "#7a7a7a", "#b8a21b",
];

/// A horizontal grouped bar chart: one group per page, one bar per tool.
fn chart(run: &Run, title: &str, unit: &str, value: impl Fn(&Measured) -> Option<f64>) -> String {
    let n_tools = run.tools.len().max(1);
    let bar = 10.0;
    let group = bar * n_tools as f64 + 8.0;
    let label_w = 260.0;
    let plot_w = 520.0;
    let height = 30.0 + group * run.pages.len() as f64 + 10.0;
    let max = run
        .pages
        .iter()
        .flat_map(|p| p.results.iter())
        .filter_map(|r| r.as_ref().ok().and_then(&value))
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut svg = format!(
        "<figure><figcaption>{}</figcaption><svg class=\"chart\" role=\"img\" aria-label=\"{}\" \
         xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {} {height:.0}\">",
        escape(&format!("{title} (log scale)")),
        escape(title),
        label_w + plot_w + 80.0,
        label_w + plot_w + 80.0
    );
    for (i, page) in run.pages.iter().enumerate() {
        let y0 = 24.0 + group * i as f64;
        let _ = write!(
            svg,
            "<text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
            label_w - 6.0,
            y0 + group / 2.0,
            escape(&short(&page.label, 40))
        );
        for (t, result) in page.results.iter().enumerate() {
            let Some(v) = result.as_ref().ok().and_then(&value) else {
                continue;
            };
            let w = (log_share(v, max) * plot_w).max(1.0);
            let y = y0 + bar * t as f64;
            let _ = write!(
                svg,
                "<rect class=\"bar\" x=\"{label_w:.0}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\" \
                 fill=\"{}\"><title>{}: {v:.3} {unit}</title></rect>\
                 <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"9\">{}</text>",
                bar - 1.0,
                COLOURS[t % COLOURS.len()],
                escape(&run.tools[t].name),
                label_w + w + 3.0,
                y + bar - 2.0,
                number(v)
            );
        }
    }
    svg.push_str("</svg></figure>\n");
    svg
}

/// Where `v` sits between 0 and `max` on a log scale (`ln(1 + v)`): a bar ten times shorter
/// than the longest stays visible.
fn log_share(v: f64, max: f64) -> f64 {
    let scale = |x: f64| (1.0 + x.max(0.0) * LOG_UNIT).ln();
    (scale(v) / scale(max)).clamp(0.0, 1.0)
}

/// Values below 1 (recall, precision) keep their spread on the log scale when multiplied.
const LOG_UNIT: f64 = 100.0;

fn number(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.5 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn html(run: &Run) -> String {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>chromate bench-snapshot</title><style>\
         body{font:14px system-ui,sans-serif;margin:2em;color:#222}\
         table{border-collapse:collapse;margin:1em 0}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}\
         td:first-child,th:first-child,td.tool,th.tool{text-align:left}figure{margin:1.5em 0}\
         figcaption{font-weight:600;margin-bottom:4px}.legend span{display:inline-block;margin-right:1em}\
         .swatch{display:inline-block;width:10px;height:10px;margin-right:4px}\
         </style></head><body>\n<h1>Snapshot cost</h1>\n",
    );
    let _ = writeln!(
        out,
        "<p>chromate {} · browser {} ({}) · {} timed default-view snapshots per page and tool · \
         every tool and the reference read {} ms after their navigation · tokens: {}</p>",
        env!("CARGO_PKG_VERSION"),
        escape(&run.browser),
        escape(&run.browser_version),
        run.repeat,
        run.wait_ms,
        tokens::TOKENIZER.map_or_else(|| escape(tokens::HOW_TO_COUNT), str::to_string)
    );
    out.push_str("<p class=\"legend\">");
    for (i, tool) in run.tools.iter().enumerate() {
        let _ = write!(
            out,
            "<span class=\"tool\"><i class=\"swatch\" style=\"background:{}\"></i>{}{}</span>",
            COLOURS[i % COLOURS.len()],
            escape(&tool.name),
            tool.version
                .as_ref()
                .map_or_else(String::new, |v| format!(" ({})", escape(v)))
        );
    }
    out.push_str("</p>\n<ul class=\"commands\">");
    for tool in &run.tools {
        let _ = write!(
            out,
            "<li>{}: <code>{}</code></li>",
            escape(&tool.name),
            escape(&tool.command)
        );
    }
    out.push_str("</ul>\n");
    for (name, why) in &run.skipped {
        let _ = writeln!(
            out,
            "<p class=\"skipped\">skipped: {}: {}</p>",
            escape(name),
            escape(why)
        );
    }
    out.push_str("<h2>All pages</h2>\n<table id=\"summary\"><tr><th>tool</th><th>pages</th><th>median ms</th><th>p90 ms</th><th>median bytes</th><th>median tokens</th><th>median bytes/4</th><th>recall</th><th>precision</th></tr>\n");
    for s in summaries(run) {
        let _ = writeln!(
            out,
            "<tr class=\"summary\"><td class=\"tool\">{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.0}</td><td>{}</td><td>{:.0}</td><td>{:.3}</td><td>{:.3}</td></tr>",
            escape(&s.name),
            s.pages,
            s.time_median,
            s.time_p90,
            s.bytes_median,
            s.tokens_median.map_or_else(|| "-".to_string(), |t| format!("{t:.0}")),
            s.estimate_median,
            s.score.recall(),
            s.score.precision()
        );
    }
    out.push_str("</table>\n");
    out.push_str(&chart(
        run,
        "Default-view snapshot time, median (ms)",
        "ms",
        |m| Some(m.median_ms()),
    ));
    if tokens::TOKENIZER.is_some() {
        out.push_str(&chart(
            run,
            "Default-view tokens (o200k_base)",
            "tokens",
            |m| m.tokens.map(|t| t as f64),
        ));
    } else {
        out.push_str(&chart(run, "Default-view bytes", "bytes", |m| {
            Some(m.bytes as f64)
        }));
    }
    out.push_str(&chart(
        run,
        "Full-view recall against Chrome's tree",
        "",
        |m| Some(m.score.recall()),
    ));
    out.push_str("<h2>Per page</h2>\n<table id=\"pages\"><tr><th>page</th><th class=\"tool\">tool</th><th>median ms</th><th>p90 ms</th><th>bytes</th><th>tokens</th><th>bytes/4</th><th>controls</th><th>Chrome's</th><th>recall</th><th>precision</th></tr>\n");
    for page in &run.pages {
        for (tool, result) in run.tools.iter().zip(&page.results) {
            // A page the run served itself (a file or directory) lived at a port that is gone
            // once the run ends: its label is not a link.
            let label = if page.label == page.url {
                format!(
                    "<a href=\"{}\">{}</a>",
                    escape(&page.url),
                    escape(&short(&page.label, 60))
                )
            } else {
                escape(&short(&page.label, 60))
            };
            match result {
                Ok(m) => {
                    let _ = writeln!(
                        out,
                        "<tr class=\"result\"><td>{label}</td><td class=\"tool\">{}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        escape(&tool.name),
                        m.median_ms(),
                        m.p90_ms(),
                        m.bytes,
                        tokens_cell(m.tokens),
                        tokens::estimate(m.bytes),
                        m.score.listed,
                        page.reference.map_or_else(|| "-".to_string(), |n| n.to_string()),
                        ratio_cell(page.reference.map(|_| m.score.recall())),
                        ratio_cell(page.reference.map(|_| m.score.precision())),
                    );
                }
                Err(why) => {
                    let _ = writeln!(
                        out,
                        "<tr class=\"result failed\"><td>{label}</td><td class=\"tool\">{}</td><td colspan=\"9\">failed: {}</td></tr>",
                        escape(&tool.name),
                        escape(why)
                    );
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "</table>\n<p>Time: the default-view snapshot call as the client sees it. Bytes and \
         tokens: that view; chromate's default view is 80 semantic lines (its budget), the \
         peers' is their whole tree. Controls ({}), recall and precision: each tool's full view \
         against Chrome's accessibility tree in every frame (<code>Accessibility.getFullAXTree</code>), \
         by role and name, all read {} ms after the navigation. Charts are on a log scale. \
         Reproduce with <code>chromate bench-snapshot --format html --output FILE</code> on \
         the same pages.</p>\n</body></html>",
        escape(&chromate::oracle::SCORED_ROLES.join(", ")),
        run.wait_ms
    );
    out
}

/// A titled list of controls with their counts, for a page's missing or extra entries.
fn control_list(title: &str, controls: &[(chromate::oracle::Control, usize)]) -> String {
    if controls.is_empty() {
        return String::new();
    }
    let mut out = format!("<p>{}</p><ul>", escape(title));
    for ((role, name), n) in controls {
        let times = if *n > 1 {
            format!(" ×{n}")
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<li>{} &quot;{}&quot;{times}</li>",
            escape(role),
            escape(name)
        );
    }
    out.push_str("</ul>");
    out
}
