//! The vision capability's tool (`chromate mcp --caps vision`): `describe_screenshot`, its
//! declaration, arguments and handler. What a description does is `crate::vision`; the
//! provider client is `crate::llm`.
//!
//! Owns: the places a screenshot may be read from for a session (its artifacts, the flows'
//! default output directory, the working directory and the client's roots, unless
//! `--allow-unrestricted-file-access`) and the call's cancellation.

use std::path::PathBuf;

use super::schema::{tool_args, Arg, Capability, Cli, Hints, Runs, Slot, ToolDecl};
use super::{cancelled_error, ToolContext};
use crate::error::{ToolError, ToolOutput};

pub const DESCRIBE_SCREENSHOT: ToolDecl = ToolDecl {
    name: "describe_screenshot",
    title: "Describe screenshot",
    verb: "describe",
    description: "Describe a PNG or JPEG screenshot with a vision model (Anthropic, OpenAI or Ollama; docs/llm.md): by default structured metadata (page_type, summary, visible_text, controls, issues), or prose with structured_metadata false. The file must be under the session's artifacts, the flows' output directory or the working directory; the image is sent to the provider.",
    hints: Hints::S,
    observes: false,
    cli: Cli::new("describe", &[Slot::arg("screenshot_path")]),
    args: DescribeArgs::ARGS,
    capability: Capability::Vision,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

tool_args! {
    /// The arguments of describe_screenshot, in schema order.
    pub struct DescribeArgs {
        screenshot_path: String = Arg::string("screenshot_path", "The PNG or JPEG to describe (relative to the working directory, or absolute)")
            .min_len(1)
            .max_len(4096)
            .required(),
        provider: Option<String> = Arg::string("provider", "anthropic, openai or ollama (default: CHROMATE_LLM_PROVIDER, else the first whose key is set, else ollama)").max_len(32),
        model: Option<String> = Arg::string("model", "The model (default: CHROMATE_LLM_MODEL, else the provider's default)").max_len(200),
        structured_metadata: Option<bool> = Arg::boolean("structured_metadata", "Answer the JSON metadata of docs/llm.md (default true); false = a prose description"),
        prompt: Option<String> = Arg::string("prompt", "Your own instruction; the metadata schema's instruction is kept after it").max_len(4000),
    }
}

/// The directories a session's screenshots may be read from.
fn roots(ctx: &ToolContext<'_>) -> Vec<PathBuf> {
    let mut roots = vec![
        ctx.session.artifacts.dir().to_path_buf(),
        crate::vision::flows_default_dir(),
        ctx.session.working_dir(),
    ];
    roots.extend(ctx.session.upload_roots());
    roots
}

pub async fn describe(
    ctx: &mut ToolContext<'_>,
    args: DescribeArgs,
) -> Result<ToolOutput, ToolError> {
    let verb = DESCRIBE_SCREENSHOT.verb;
    let image = crate::vision::check_image(
        verb,
        "screenshot_path",
        std::path::Path::new(&args.screenshot_path),
        &ctx.session.working_dir(),
        &roots(ctx),
        ctx.session.config.unrestricted_file_access,
    )?;
    let provider = crate::vision::provider(verb, args.provider.as_deref(), args.model.as_deref())?;
    ctx.progress.set_phase(format!(
        "asking {} ({})",
        provider.kind.as_str(),
        provider.model
    ));
    let described = crate::vision::describe(
        verb,
        &provider,
        &image,
        args.prompt.as_deref(),
        args.structured_metadata.unwrap_or(true),
    );
    match ctx.cancel.run(described).await {
        None => Err(cancelled_error(verb)),
        Some(outcome) => outcome.map(ToolOutput::new),
    }
}
