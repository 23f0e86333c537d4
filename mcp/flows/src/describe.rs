//! A flow's captures described by a vision model (`vision_describe = true`, `flows run
//! --describe`; docs/llm.md#flows): each PNG capture sent once, its sidecar `<capture>.json`
//! rewritten with a `vision` object (`provider`, `model`, `metadata`).
//!
//! Owns: the one provider per flow, the rule that a capture whose description fails (after
//! the provider client's retries) keeps its sidecar as it was and does not fail the flow (the
//! reason is in `run.json`'s `descriptions` and `index.md`), and those two renderings.

use serde_json::{json, Value};

use super::report;
use super::run::FlowResult;
use chromate_command::call::Cancel;
use chromate_command::vision;

/// Describes the PNG captures of `result` (a PDF is not an image a model reads).
pub async fn describe_captures(result: &mut FlowResult, cancel: &Cancel) {
    let pngs: Vec<_> = result
        .captures
        .iter()
        .filter(|capture| capture.format == "png")
        .cloned()
        .collect();
    if pngs.is_empty() {
        return;
    }
    let provider = match vision::provider("describe", None, None) {
        Ok(provider) => provider,
        Err(error) => {
            for capture in &pngs {
                result
                    .descriptions
                    .push((capture.name.clone(), Err(error.message.clone())));
            }
            return;
        }
    };
    for capture in pngs {
        let outcome = async {
            let image =
                vision::check_image("describe", "capture", &capture.path, &result.dir, &[], true)?;
            vision::describe("describe", &provider, &image, None, true).await
        };
        let outcome = match cancel.run(outcome).await {
            None => Err("cancelled".to_owned()),
            Some(Err(error)) => Err(error.message),
            Some(Ok(described)) => {
                let vision = json!({
                    "provider": described["provider"],
                    "model": described["model"],
                    "metadata": described["metadata"],
                });
                let mut sidecar = capture.to_json();
                sidecar["vision"] = vision.clone();
                report::write_json(&result.dir, &format!("{}.json", capture.name), &sidecar)
                    .map(|()| vision)
                    .map_err(|err| format!("the sidecar could not be written: {err}"))
            }
        };
        result.descriptions.push((capture.name.clone(), outcome));
    }
}

/// `run.json`'s `descriptions`: `[{name, described, summary?, error?}]`.
pub fn to_json(descriptions: &[(String, Result<Value, String>)]) -> Value {
    descriptions
        .iter()
        .map(|(name, outcome)| match outcome {
            Ok(vision) => json!({
                "name": name,
                "described": true,
                "summary": vision["metadata"]["summary"],
            }),
            Err(error) => json!({ "name": name, "described": false, "error": error }),
        })
        .collect()
}

/// The `## Descriptions` section of `index.md`.
pub fn index_section(descriptions: &[(String, Result<Value, String>)]) -> String {
    if descriptions.is_empty() {
        return String::new();
    }
    let mut text = String::from("\n## Descriptions\n\n");
    for (name, outcome) in descriptions {
        let line = match outcome {
            Ok(vision) => {
                let metadata = &vision["metadata"];
                let issues = metadata["issues"].as_array().map_or(0, Vec::len);
                format!(
                    "- {name} ({}): {} {}{}",
                    metadata["page_type"].as_str().unwrap_or("page"),
                    metadata["summary"].as_str().unwrap_or("").trim(),
                    if issues == 0 {
                        "No issues noticed.".to_owned()
                    } else {
                        format!(
                            "{issues} issue{} noticed.",
                            if issues == 1 { "" } else { "s" }
                        )
                    },
                    format_args!(" [{name}.json]({name}.json)"),
                )
            }
            Err(error) => format!("- {name}: not described: {error}"),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text
}
