//! The flows capability's five tools (`capture_url`, `capture_element`, `run_flow`,
//! `list_flows`, `describe_flow`), which a front end offers beside the 28 when asked to
//! (`chromate mcp --caps flows`): their declarations, their validation and running one call.
//!
//! Owns: the argument names and result shapes of the screenshot-and-flow tools they stand for
//! (`url`, `name`, `selector`, `output_dir`, `wait_until`, `timeout_ms`, `viewport_width`,
//! `viewport_height`, `animations`, `mask`, `mask_color`; `flow_name`, `config_path`), and the
//! rule that a flow whose step fails is a result with `error` set, not a tool error, while a
//! flow name the file does not have is a tool error listing the names. Each capture and each
//! flow runs in a headless browser of its own (as `chromate capture` and `chromate flows run`
//! do), never in the session's tabs. Does not own any wire format.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use serde_json::{json, Map, Value};

use super::capture::{
    ANIMATIONS, MASK, MASK_COLOR, NAME, NAME_PATTERN, OUTPUT_DIR, SELECTOR, TIMEOUT_MS, URL,
    VIEWPORT_HEIGHT, VIEWPORT_WIDTH, WAIT_UNTIL,
};
use super::run::{Event, RunOptions};
use super::{file, output, report};
use chromate_command::call::{Cancel, Progress};
use chromate_command::config::Config;
use chromate_command::error::{ToolError, ToolErrorCode};
use chromate_command::tools::schema::{Arg, Capability, Cli, Hints, Runs, ToolDecl};
use chromate_command::{Done, Failed, Reply};

const FLOW_NAME: Arg = Arg::string("flow_name", "The flow's name in the flow file")
    .min_len(1)
    .max_len(128)
    .pattern(&NAME_PATTERN)
    .required();
const CONFIG_PATH: Arg = Arg::string(
    "config_path",
    "The flow file (default: CHROMATE_FLOWS, else ./chromate.toml)",
)
.min_len(1)
.max_len(4096);

/// `capture_url`.
pub const CAPTURE_URL: ToolDecl = ToolDecl {
    name: "capture_url",
    title: "Capture URL",
    verb: "capture",
    description: "Load a URL in a fresh headless browser and save a deterministic PNG (animations frozen, masks applied) to output_dir/name.png.",
    hints: Hints::S,
    observes: false,
    cli: Cli::new("capture", &[]),
    args: &[
        URL.required(),
        NAME,
        SELECTOR,
        OUTPUT_DIR,
        WAIT_UNTIL,
        TIMEOUT_MS,
        VIEWPORT_WIDTH,
        VIEWPORT_HEIGHT,
        ANIMATIONS,
        MASK,
        MASK_COLOR,
    ],
    capability: Capability::Flows,
    runs: Runs::Detached(capture),
    spill: None,
    negative: None,
};

/// `capture_element`.
pub const CAPTURE_ELEMENT: ToolDecl = ToolDecl {
    name: "capture_element",
    title: "Capture element",
    verb: "capture",
    description: "Load a URL in a fresh headless browser and save a deterministic PNG of one element's box to output_dir/name.png.",
    hints: Hints::S,
    observes: false,
    cli: Cli::new("capture", &[]),
    args: &[
        URL.required(),
        NAME,
        SELECTOR.required(),
        OUTPUT_DIR,
        WAIT_UNTIL,
        TIMEOUT_MS,
        VIEWPORT_WIDTH,
        VIEWPORT_HEIGHT,
        ANIMATIONS,
        MASK,
        MASK_COLOR,
    ],
    capability: Capability::Flows,
    runs: Runs::Detached(capture),
    spill: None,
    negative: None,
};

/// `run_flow`.
pub const RUN_FLOW: ToolDecl = ToolDecl {
    name: "run_flow",
    title: "Run flow",
    verb: "run_flow",
    description: "Run one named flow of the flow file in a fresh headless browser; returns its captures, video paths, and error and failed_step_index when a step failed.",
    hints: Hints::S,
    observes: false,
    cli: Cli::new("flows", &[]),
    args: &[FLOW_NAME, CONFIG_PATH, OUTPUT_DIR],
    capability: Capability::Flows,
    runs: Runs::Detached(run_flow),
    spill: None,
    negative: None,
};

/// `list_flows`.
pub const LIST_FLOWS: ToolDecl = ToolDecl {
    name: "list_flows",
    title: "List flows",
    verb: "list_flows",
    description: "List the flows of the flow file with their steps and captures.",
    hints: Hints::L,
    observes: false,
    cli: Cli::new("flows", &[]),
    args: &[CONFIG_PATH],
    capability: Capability::Flows,
    runs: Runs::Detached(list_flows),
    spill: None,
    negative: None,
};

/// `describe_flow`.
pub const DESCRIBE_FLOW: ToolDecl = ToolDecl {
    name: "describe_flow",
    title: "Describe flow",
    verb: "describe_flow",
    description: "What the last run of a flow left on disk (no browser): index_md and each capture with its metadata.",
    hints: Hints::L,
    observes: false,
    cli: Cli::new("flows", &[]),
    args: &[FLOW_NAME, CONFIG_PATH, OUTPUT_DIR],
    capability: Capability::Flows,
    runs: Runs::Detached(describe_flow),
    spill: None,
    negative: None,
};

/// The five, in tools/list order: a front end adds them to its registry
/// (`chromate_command::tools::Registry::new`).
pub const FLOW_TOOLS: &[&ToolDecl] = &[
    &CAPTURE_URL,
    &CAPTURE_ELEMENT,
    &RUN_FLOW,
    &LIST_FLOWS,
    &DESCRIBE_FLOW,
];

/// The future a flows tool's call is.
type Call<'a> = Pin<Box<dyn Future<Output = Reply> + Send + 'a>>;

/// `capture_url` and `capture_element`: the model reads the record's compact JSON, as for
/// every tool; the command line prints the path.
fn capture<'a>(
    config: &'a Config,
    arguments: Map<String, Value>,
    cancel: &'a Cancel,
    _progress: &'a Progress,
) -> Call<'a> {
    Box::pin(async move {
        match super::capture_once(config.clone(), arguments, cancel).await {
            Reply::Done(mut done) => {
                done.text = done.result.to_string();
                Reply::Done(done)
            }
            failed => failed,
        }
    })
}

/// `run_flow`.
fn run_flow<'a>(
    config: &'a Config,
    arguments: Map<String, Value>,
    cancel: &'a Cancel,
    progress: &'a Progress,
) -> Call<'a> {
    Box::pin(async move { reply(run_one_flow(config, &arguments, cancel, progress).await) })
}

/// `list_flows`.
fn list_flows<'a>(
    config: &'a Config,
    arguments: Map<String, Value>,
    _cancel: &'a Cancel,
    _progress: &'a Progress,
) -> Call<'a> {
    Box::pin(
        async move { reply(load(config, &arguments).map(|flow_file| super::list(&flow_file))) },
    )
}

/// `describe_flow`.
fn describe_flow<'a>(
    config: &'a Config,
    arguments: Map<String, Value>,
    _cancel: &'a Cancel,
    _progress: &'a Progress,
) -> Call<'a> {
    Box::pin(async move { reply(describe(config, &arguments)) })
}

/// A flows tool's outcome as its reply: the result's compact JSON and the files it names.
fn reply(outcome: Result<Value, ToolError>) -> Reply {
    match outcome {
        Ok(result) => Reply::Done(Done {
            text: result.to_string(),
            links: paths_of(&result),
            result,
            observation: None,
            observation_full: None,
            is_error: false,
            negative: false,
        }),
        Err(error) => Reply::Failed(Failed {
            error: error.to_json(),
            text: error.to_text(None),
        }),
    }
}

fn text_argument<'a>(arguments: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    arguments.get(name).and_then(Value::as_str)
}

/// The flow file `config_path` names (else `CHROMATE_FLOWS`, else `./chromate.toml`); a file
/// that does not check is INVALID_ARGUMENT naming its file, line and key.
fn load(config: &Config, arguments: &Map<String, Value>) -> Result<file::FlowFile, ToolError> {
    let path = file::locate(text_argument(arguments, "config_path"), &|name| {
        std::env::var(name).ok()
    });
    file::load(&path, config).map_err(|err| {
        ToolError::new(ToolErrorCode::InvalidArgument, format!("flows: {err}"))
            .with_hint("fix the flow file at the line named; nothing was run")
            .with_detail(json!({
                "argument": "config_path",
                "path": err.path.display().to_string(),
                "line": err.line,
                "key": err.key,
            }))
    })
}

async fn run_one_flow(
    config: &Config,
    arguments: &Map<String, Value>,
    cancel: &Cancel,
    progress: &Progress,
) -> Result<Value, ToolError> {
    let flow_file = load(config, arguments)?;
    let name = text_argument(arguments, "flow_name").unwrap_or_default();
    if flow_file.flow(name).is_none() {
        return Err(super::run::missing_flow(name, &flow_file));
    }
    let options = RunOptions {
        names: vec![name.to_owned()],
        output_dir: text_argument(arguments, "output_dir").map(str::to_owned),
        ffmpeg: std::env::var_os("CHROMATE_FFMPEG")
            .filter(|value| !value.is_empty())
            .map(PathBuf::from),
        ..RunOptions::default()
    };
    let mut on_event = |event: Event<'_>| {
        if let Event::Step {
            flow,
            index,
            total,
            label,
            ..
        } = event
        {
            progress.set_phase(format!("{flow}: {label}"));
            progress.set_steps(index as u64, total as u64);
        }
    };
    let report = super::run::run(config, &flow_file, &options, cancel, &mut on_event).await?;
    // A failed step is this flow's result, with `error` and `failed_step_index` set.
    let mut result = report
        .flows
        .first()
        .map(super::run::FlowResult::to_json)
        .unwrap_or(Value::Null);
    if let Some(object) = result.as_object_mut() {
        object.insert(
            "report_html".to_owned(),
            json!(report.report_html.map(|path| path.display().to_string())),
        );
    }
    Ok(result)
}

fn describe(config: &Config, arguments: &Map<String, Value>) -> Result<Value, ToolError> {
    let name = text_argument(arguments, "flow_name").unwrap_or_default();
    // The flow file, where there is one, says whether the name is a flow at all.
    if let Ok(flow_file) = load(config, arguments) {
        if flow_file.flow(name).is_none() {
            return Err(super::run::missing_flow(name, &flow_file));
        }
    }
    let dir = output::existing_dir(text_argument(arguments, "output_dir"));
    report::describe(&dir, name)
}

/// The capture and video files a result names, handed back as links.
fn paths_of(result: &Value) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = result["captures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|capture| capture["path"].as_str())
        .map(PathBuf::from)
        .collect();
    for key in ["video_path", "video_mp4_path"] {
        if let Some(path) = result[key].as_str() {
            paths.push(PathBuf::from(path));
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_five_tools_take_the_argument_names_of_the_tools_they_stand_for() {
        let names = |decl: &ToolDecl| decl.args.iter().map(|arg| arg.name).collect::<Vec<_>>();
        let capture_args = [
            "url",
            "name",
            "selector",
            "output_dir",
            "wait_until",
            "timeout_ms",
            "viewport_width",
            "viewport_height",
            "animations",
            "mask",
            "mask_color",
        ];
        assert_eq!(names(&CAPTURE_URL), capture_args);
        assert_eq!(names(&CAPTURE_ELEMENT), capture_args);
        assert!(CAPTURE_ELEMENT.args[2].required && !CAPTURE_URL.args[2].required);
        assert_eq!(names(&RUN_FLOW), ["flow_name", "config_path", "output_dir"]);
        assert_eq!(names(&LIST_FLOWS), ["config_path"]);
        assert_eq!(
            names(&DESCRIBE_FLOW),
            ["flow_name", "config_path", "output_dir"]
        );
        for decl in FLOW_TOOLS {
            assert!(
                chromate_command::tools::find(decl.name).is_none(),
                "{} is not one of the 28",
                decl.name
            );
        }
        // Every capture tool argument is a capture option, checked by the same validator.
        for arg in CAPTURE_URL.args {
            assert!(super::super::capture::CAPTURE
                .args
                .iter()
                .any(|option| option.name == arg.name));
        }
    }
}
