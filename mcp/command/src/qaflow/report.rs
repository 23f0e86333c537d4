//! A user flow's reports (docs/llm.md#qa-flow): the text the MCP tool answers and
//! `chromate qa-flow` prints, and JUnit XML (one test case per step, a failure per failed
//! step, skipped steps skipped, the outcome as a case of its own when there is one).

use super::{FlowResult, FlowStatus, StepStatus};
use crate::markup::escape as escape_xml;

/// The text report: the status, each step, the outcome, the findings.
pub fn text(result: &FlowResult) -> String {
    let status = match result.status {
        FlowStatus::Completed => "completed",
        FlowStatus::Failed => "failed",
        FlowStatus::Timeout => "timeout",
    };
    let mut out = format!(
        "qa-flow {status}: {} ({} of {} steps passed, {} ms, {} model calls; {} {})\n",
        result.url,
        result.metrics.steps_passed,
        result.metrics.steps_total,
        result.duration_ms,
        result.metrics.model_calls,
        result.provider,
        result.model
    );
    for step in &result.steps {
        let mark = match step.status {
            StepStatus::Success => "ok     ",
            StepStatus::Failed => "FAILED ",
            StepStatus::Skipped => "skipped",
        };
        out.push_str(&format!("  {mark} {}. {}", step.index, step.instruction));
        if let (Some(action), Some(target)) = (&step.action, &step.target) {
            out.push_str(&format!(" [{action} {target}]"));
        }
        out.push('\n');
        if let Some(error) = &step.error {
            out.push_str(&format!("          {error}\n"));
        }
        if let Some(shot) = &step.screenshot {
            out.push_str(&format!("          screenshot: {shot}\n"));
        }
    }
    match result.outcome_matched {
        Some(true) => out.push_str("expected outcome: matched\n"),
        Some(false) => out.push_str(&format!(
            "expected outcome: NOT matched: {}\n",
            result.outcome.as_deref().unwrap_or("")
        )),
        None => {}
    }
    if !result.findings.is_empty() {
        out.push_str(&format!("findings ({}):\n", result.findings.len()));
        for finding in &result.findings {
            out.push_str(&format!(
                "  {:<8} {} ({})\n",
                finding.severity.as_str(),
                finding.title,
                finding.source.as_deref().unwrap_or("chromate")
            ));
        }
    }
    out
}

/// JUnit XML: the journey as a test suite, each step a test case.
pub fn junit(result: &FlowResult) -> String {
    let outcome_case = result.outcome_matched.is_some();
    let tests = result.steps.len() + usize::from(outcome_case);
    let failures = result.metrics.steps_failed + usize::from(result.outcome_matched == Some(false));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"chromate qa-flow\" tests=\"{tests}\" failures=\"{failures}\" time=\"{:.3}\">\n",
        result.duration_ms as f64 / 1000.0
    ));
    out.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" skipped=\"{}\" time=\"{:.3}\">\n",
        escape_xml(&result.url),
        result.metrics.steps_skipped,
        result.duration_ms as f64 / 1000.0
    ));
    for step in &result.steps {
        out.push_str(&format!(
            "    <testcase classname=\"qa-flow\" name=\"{}. {}\" time=\"{:.3}\"",
            step.index,
            escape_xml(&step.instruction),
            step.duration_ms as f64 / 1000.0
        ));
        match step.status {
            StepStatus::Success => out.push_str("/>\n"),
            StepStatus::Skipped => out.push_str(
                ">\n      <skipped message=\"an earlier step failed\"/>\n    </testcase>\n",
            ),
            StepStatus::Failed => {
                let error = step.error.as_deref().unwrap_or("failed");
                out.push_str(&format!(
                    ">\n      <failure message=\"{}\" type=\"step-failed\">{}</failure>\n",
                    escape_xml(error),
                    escape_xml(&format!(
                        "{error}\naction: {}\ntarget: {}",
                        step.action.as_deref().unwrap_or("-"),
                        step.target.as_deref().unwrap_or("-")
                    ))
                ));
                if let Some(shot) = &step.screenshot {
                    out.push_str(&format!(
                        "      <system-out>[[ATTACHMENT|{}]]</system-out>\n",
                        escape_xml(shot)
                    ));
                }
                out.push_str("    </testcase>\n");
            }
        }
    }
    if let Some(matched) = result.outcome_matched {
        out.push_str("    <testcase classname=\"qa-flow\" name=\"expected outcome\"");
        if matched {
            out.push_str("/>\n");
        } else {
            let reason = result.outcome.as_deref().unwrap_or("not matched");
            out.push_str(&format!(
                ">\n      <failure message=\"{}\" type=\"outcome-not-matched\"/>\n    </testcase>\n",
                escape_xml(reason)
            ));
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
