//! Unit tests of the report writers on a typical result: the text report's size and order,
//! SARIF's shape, JUnit's counts, Markdown's escaping. SARIF is validated against its schema
//! and the HTML report loaded in Chromium in `mcp/tests/e2e/audit.rs`.

use serde_json::{json, Value};

use super::*;
use crate::audit::findings::{
    AuditResult, AuditedPage, Category, Finding, Metrics, Severity, Status,
};

fn typical() -> AuditResult {
    let page = "http://127.0.0.1:4000/index.html";
    let mut findings = vec![
        Finding::new(
            "a11y.image-alt",
            Severity::Critical,
            Category::Accessibility,
            page,
            "Images must have alternate text",
        )
        .at(Some("css=main > img".into()))
        .evidence(json!({ "help_url": "https://dequeuniversity.com/rules/axe/4.10/image-alt" }))
        .keyed(""),
        Finding::new(
            "runtime.exception",
            Severity::High,
            Category::Functional,
            page,
            "TypeError: x is undefined",
        )
        .describe("an uncaught exception during load and settle")
        .keyed("x"),
        Finding::new(
            "layout.covered",
            Severity::High,
            Category::Visual,
            page,
            "Control is covered by another element",
        )
        .at(Some("role=button[name=\"Buy | now\"]".into()))
        .evidence(json!({ "rect": { "x": 10, "y": 20, "width": 100, "height": 30 } }))
        .keyed("b"),
        Finding::new(
            "links.broken",
            Severity::High,
            Category::Functional,
            page,
            "Broken link: /gone.html answers 404",
        )
        .keyed("gone"),
        Finding::new(
            "speed.lcp",
            Severity::Medium,
            Category::Performance,
            page,
            "Largest contentful paint is 3100 ms (needs-improvement)",
        )
        .keyed(""),
        Finding::new(
            "runtime.console-warn",
            Severity::Low,
            Category::Functional,
            page,
            "deprecated <api> & stuff",
        )
        .keyed("w"),
    ];
    crate::audit::findings::rank(&mut findings, None);
    AuditResult {
        model_pass: None,
        page_text: None,
        status: Status::Completed,
        url: page.to_owned(),
        duration_ms: 1834,
        findings,
        metrics: Metrics {
            pages_audited: 1,
            lcp_ms: Some(3100),
            cls: Some(0.0),
            ..Metrics::default()
        },
        screenshots: Vec::new(),
        pages: vec![AuditedPage {
            url: page.to_owned(),
            depth: 0,
            status: Some(200),
            findings: 6,
            vitals: None,
            settled: None,
        }],
        external_links: Vec::new(),
        focus: None,
        suppressed: Vec::new(),
        warnings: Vec::new(),
    }
}

#[test]
fn the_text_report_is_ranked_one_line_per_finding_and_small() {
    let result = typical();
    let text = render(Format::Text, &result, Options::default());
    assert!(text.len() < 4096, "{} bytes", text.len());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 6 + 1, "{text}");
    assert!(lines[0].starts_with("audit http://127.0.0.1:4000/index.html completed in 1.8 s: 1 page, 6 findings (1 critical, 3 high, 1 medium, 1 low)"), "{text}");
    assert!(lines[1].starts_with("critical accessibility"), "{text}");
    assert!(lines[1].ends_with("css=main > img"), "{text}");
    assert!(lines[6].starts_with("low "), "{text}");
    assert!(
        lines[7].starts_with("metrics: LCP 3100 ms, CLS 0.000"),
        "{text}"
    );
}

#[test]
fn many_findings_are_cut_with_a_count() {
    let mut result = typical();
    let template = result.findings[5].clone();
    for n in 0..60 {
        let mut finding = template.clone();
        finding.id = format!("x{n}");
        result.findings.push(finding);
    }
    let text = render(Format::Text, &result, Options::default());
    assert!(text.len() < 4096, "{} bytes", text.len());
    assert!(
        text.contains("… 41 more (--format json lists them all)"),
        "{text}"
    );
}

#[test]
fn sarif_has_one_rule_per_rule_and_one_result_per_finding() {
    let result = typical();
    let sarif: Value =
        serde_json::from_str(&render(Format::Sarif, &result, Options::default())).expect("json");
    assert_eq!(sarif["version"], json!("2.1.0"));
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], json!("chromate"));
    assert_eq!(
        run["tool"]["driver"]["rules"].as_array().map(Vec::len),
        Some(6)
    );
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), 6);
    assert_eq!(results[0]["level"], json!("error"));
    assert_eq!(results[0]["ruleId"], json!("a11y.image-alt"));
    assert_eq!(
        results[0]["locations"][0]["logicalLocations"][0]["name"],
        json!("css=main > img")
    );
    assert_eq!(
        run["tool"]["driver"]["rules"][0]["helpUri"],
        json!("https://dequeuniversity.com/rules/axe/4.10/image-alt")
    );
    assert_eq!(results[5]["level"], json!("note"));
    assert_eq!(run["invocations"][0]["executionSuccessful"], json!(true));
    assert_eq!(
        run["tool"]["driver"]["informationUri"],
        json!("https://github.com/chromate-dev/chromate/blob/main/docs/cli.md#audits")
    );
    // Every rule has its help as text and Markdown, linking the table of findings.
    for rule in run["tool"]["driver"]["rules"].as_array().expect("rules") {
        let text = rule["help"]["text"].as_str().unwrap_or_default();
        let markdown = rule["help"]["markdown"].as_str().unwrap_or_default();
        assert!(text.contains("docs/cli.md#findings"), "{rule}");
        assert!(
            markdown.starts_with(&format!("**`{}`**", rule["id"].as_str().unwrap_or("?"))),
            "{rule}"
        );
        assert!(
            rule["helpUri"]
                .as_str()
                .is_some_and(|uri| uri.starts_with("https://")),
            "{rule}"
        );
    }
    let covered_result = results
        .iter()
        .find(|r| r["ruleId"] == json!("layout.covered"))
        .expect("layout.covered");
    let covered = &run["tool"]["driver"]["rules"]
        [usize::try_from(covered_result["ruleIndex"].as_u64().expect("ruleIndex")).expect("index")];
    assert!(
        covered["help"]["text"]
            .as_str()
            .is_some_and(|text| text.starts_with("Another element sits on a control's middle")),
        "{covered}"
    );
    // The page as the physical location, the durable selector as the logical one.
    for result in results {
        assert_eq!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            json!("http://127.0.0.1:4000/index.html")
        );
    }
    assert_eq!(
        covered_result["locations"][0]["logicalLocations"][0],
        json!({ "name": "role=button[name=\"Buy | now\"]", "fullyQualifiedName": "role=button[name=\"Buy | now\"]", "kind": "element" }),
        "{results:#?}"
    );
}

#[test]
fn junit_has_a_case_per_rule_and_page_named_by_rule_failing_at_the_threshold() {
    let result = typical();
    let xml = render(Format::Junit, &result, Options::default());
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"),
        "{xml}"
    );
    // Six rules on the one page; without --fail-on every one above info fails.
    assert_eq!(xml.matches("<testcase ").count(), 6, "{xml}");
    assert!(xml.contains("tests=\"6\" failures=\"6\""), "{xml}");
    // Names are rule ids: no measured value (the LCP's 3100 ms) in a name, so a CI system's
    // history follows a case from run to run.
    assert!(
        xml.contains("<testcase classname=\"chromate.audit.performance\" name=\"speed.lcp\">"),
        "{xml}"
    );
    for name in xml.split(" name=\"").skip(1) {
        let name = name.split('"').next().unwrap_or_default();
        assert!(!name.contains("3100"), "a measured value in {name}");
    }
    assert!(xml.contains("deprecated &lt;api&gt; &amp; stuff"), "{xml}");
    // --fail-on high: the medium and low rules pass, their findings kept as output.
    let xml = render(
        Format::Junit,
        &result,
        Options {
            shots: &[],
            fail_on: Some(Severity::High),
        },
    );
    assert_eq!(xml.matches("<failure ").count(), 4, "{xml}");
    assert_eq!(xml.matches("<system-out>").count(), 2, "{xml}");
    assert!(xml.contains("tests=\"6\" failures=\"4\""), "{xml}");
}

#[test]
fn markdown_escapes_table_cells() {
    let result = typical();
    let md = render(Format::Markdown, &result, Options::default());
    assert!(
        md.starts_with("# Audit of http://127.0.0.1:4000/index.html\n"),
        "{md}"
    );
    assert!(md.contains("`role=button[name=\"Buy \\| now\"]`"), "{md}");
    // HTML in prose is shown, not taken for a tag (GitHub drops unknown tags).
    assert!(
        md.contains("| deprecated &lt;api&gt; &amp; stuff |"),
        "{md}"
    );
    assert!(!md.contains("<api>"), "{md}");
    assert_eq!(
        md.lines().filter(|line| line.starts_with("| ")).count(),
        1 + 6
    );
}

#[test]
fn fail_on_compares_with_the_worst_finding() {
    let result = typical();
    assert!(fails(&result, Severity::Critical));
    let mut mild = typical();
    mild.findings.retain(|f| f.severity <= Severity::Medium);
    assert!(!fails(&mild, Severity::High));
    assert!(fails(&mild, Severity::Medium));
    assert!(fails(&mild, Severity::Low));
}

#[test]
fn the_html_report_marks_boxed_findings_without_script() {
    let mut result = typical();
    result.screenshots.push(crate::audit::findings::Shot {
        name: "full-page".into(),
        path: "/tmp/shot.png".into(),
        width: 1280,
        height: 800,
        page: Some("http://127.0.0.1:4000/index.html".into()),
    });
    // A crawled page's screenshot, with a finding of its own boxed on it.
    let other = "http://127.0.0.1:4000/about.html";
    result.pages.push(AuditedPage {
        url: other.to_owned(),
        depth: 1,
        status: Some(200),
        findings: 1,
        vitals: None,
        settled: None,
    });
    result.findings.push(
        Finding::new(
            "layout.zero-size",
            Severity::Medium,
            Category::Visual,
            other,
            "Control has no size",
        )
        .evidence(json!({ "rect": { "x": 1, "y": 2, "width": 0, "height": 0 } }))
        .keyed("z"),
    );
    result.screenshots.push(crate::audit::findings::Shot {
        name: "full-page".into(),
        path: "/tmp/about.png".into(),
        width: 1280,
        height: 600,
        page: Some(other.into()),
    });
    let shots = vec![
        ("/tmp/shot.png".to_owned(), vec![0x89, b'P', b'N', b'G']),
        ("/tmp/about.png".to_owned(), vec![0x89, b'P', b'N', b'H']),
    ];
    let html = render(
        Format::Html,
        &result,
        Options {
            shots: &shots,
            fail_on: None,
        },
    );
    assert!(html.starts_with("<!doctype html>"));
    assert!(!html.contains("<script"), "no script in the report");
    assert!(
        html.contains("src=\"data:image/png;base64,iVBORw==\""),
        "embedded screenshot"
    );
    assert_eq!(
        html.matches("class=\"mark\"").count(),
        2,
        "one boxed finding on each page"
    );
    assert!(
        html.contains("<h2>Page /about.html</h2>\n<div class=\"shot\" data-page=\"http://127.0.0.1:4000/about.html\"><img alt=\"http://127.0.0.1:4000/about.html, full length\" src=\"data:image/png;base64,iVBOSA==\">\n<a class=\"mark\" href=\"#f7\""),
        "{html}"
    );
    assert_eq!(html.matches("id=\"screenshot\"").count(), 1);
    assert_eq!(html.matches("<tr id=\"f").count(), 7);
    // Evidence as lines, not JSON.
    assert!(
        html.contains("<pre>rect:\n  height: 30\n  width: 100\n  x: 10\n  y: 20</pre>"),
        "{html}"
    );
    assert!(
        !html.contains("{&quot;") && !html.contains("\"rect\":"),
        "{html}"
    );
}

#[test]
fn evidence_reads_as_indented_lines() {
    let evidence = json!({
        "nodes": [
            { "selector": "css=img", "html": "<img src=a.png>", "summary": "Fix any:\n  add alt" },
            { "selector": "css=p > img", "html": "<img>" },
        ],
        "count": 3,
        "mocked": false,
        "referrers": ["/a", "/b"],
        "stack": null,
    });
    expect_test::expect![[r#"
        count: 3
        mocked: no
        nodes:
          - html: <img src=a.png>
            selector: css=img
            summary: Fix any:
                add alt
          - html: <img>
            selector: css=p > img
        referrers:
          - /a
          - /b
        stack: none"#]]
    .assert_eq(&crate::markup::readable(&evidence));
    assert_eq!(crate::markup::readable(&json!({})), "(none)");
}

#[test]
fn suppressed_findings_are_listed_in_every_format_and_never_fail() {
    let mut result = typical();
    let ignores = crate::audit::gate::parse(
        "[[ignore]]\nrule = \"a11y.*\"\nreason = \"ticket <42>\"\n\n[[ignore]]\nrule = \"none.*\"\nreason = \"old\"\n",
    )
    .expect("parses")
    .ignores;
    let before = result.findings.len();
    crate::audit::gate::apply_ignores(&mut result, &ignores, "chromate-audit.toml");
    assert!(!result.suppressed.is_empty());
    assert_eq!(result.findings.len() + result.suppressed.len(), before);
    assert!(result.findings.iter().all(|f| !f.rule.starts_with("a11y.")));
    assert_eq!(
        result.warnings,
        ["chromate-audit.toml line 5: stale [[ignore]] entry (rule = \"none.*\"): it matches no finding of this run"]
    );
    let options = Options {
        fail_on: Some(Severity::Critical),
        ..Options::default()
    };
    let sarif: Value =
        serde_json::from_str(&render(Format::Sarif, &result, options)).expect("sarif");
    let suppressed: Vec<&Value> = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r.get("suppressions").is_some())
        .collect();
    assert_eq!(suppressed.len(), result.suppressed.len());
    assert_eq!(
        suppressed[0]["suppressions"][0]["justification"],
        json!("ticket <42>")
    );
    let junit = render(Format::Junit, &result, options);
    assert!(
        junit.contains("<skipped message=\"suppressed: ticket &lt;42&gt;\"/>"),
        "{junit}"
    );
    for format in [Format::Text, Format::Markdown, Format::Html, Format::Json] {
        let text = render(format, &result, options);
        assert!(
            text.contains("ticket") && text.contains("stale"),
            "{format:?}: {text}"
        );
    }
    // The one critical finding is the ignored image-alt: nothing fails at critical now.
    assert!(!fails(&result, Severity::Critical));
    assert!(fails(&result, Severity::High));
}
