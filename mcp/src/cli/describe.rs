//! `chromate describe FILE [--provider P] [--model M] [--prompt TEXT] [--text] [--json]`
//! (docs/llm.md#describe): a screenshot described by a vision model, run in this process (no
//! session, no browser).
//!
//! Owns the command's flags and its output: the structured metadata as indented JSON, the
//! prose with `--text`, the whole result with `--json`; an error on stderr and exit status 1;
//! 2 for usage errors. The description itself is `chromate_command::vision`.

use std::process::ExitCode;

use serde_json::Value;

use super::words::{Dashes, Words};
use super::UsageError;
use chromate_command::config::{Config, McpFlags};
use chromate_command::{vision, Done, Failed, Reply};

pub(crate) const HELP: &str = "\
usage: chromate describe FILE [--provider anthropic|openai|ollama] [--model MODEL]
                              [--prompt TEXT] [--text] [--json]
                              [--allow-unrestricted-file-access]

Describes a PNG or JPEG screenshot with a vision model: by default the structured metadata of
docs/llm.md (page_type, summary, visible_text, controls, issues) as JSON. The image is sent to
the provider. FILE must be under the working directory, the session artifacts' root or the
flows' output directory. docs/llm.md.

options:
  --provider NAME     anthropic, openai or ollama (else CHROMATE_LLM_PROVIDER, else the first
                      provider whose key is set, else ollama)
  --model MODEL       the model (else CHROMATE_LLM_MODEL, else the provider's default)
  --prompt TEXT       your own instruction (the metadata schema's instruction stays after it)
  --text              a prose description instead of the metadata
  --json              print the whole result object
  --allow-unrestricted-file-access
                      describe a file anywhere
  -h, --help          this help

environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, CHROMATE_LLM_BASE_URL, CHROMATE_LLM_TIMEOUT_MS.
exit status: 0; 1 when the provider fails or the file is refused; 2 for a usage error.
";

/// `chromate describe`, parsed.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct DescribeCommand {
    pub(crate) file: String,
    pub(crate) provider: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) prompt: Option<String>,
    pub(crate) text: bool,
    pub(crate) json: bool,
    pub(crate) unrestricted: bool,
}

/// Parses the words after `describe`; `Ok(None)` for `--help`.
pub(crate) fn parse(words: &[String]) -> Result<Option<DescribeCommand>, UsageError> {
    let mut command = DescribeCommand::default();
    let usage = |message: String| UsageError(format!("describe: {message}"));
    let mut words = Words::new(words, Dashes::Any);
    let mut positional = Vec::new();
    while let Some(flag) = words.next_flag(&mut positional) {
        let name = flag.name;
        let mut value = || words.text_value(&flag).map_err(usage);
        match name {
            "-h" | "--help" => return Ok(None),
            "--provider" => command.provider = Some(value()?),
            "--model" => command.model = Some(value()?),
            "--prompt" => command.prompt = Some(value()?),
            "--text" if flag.is_bare() => command.text = true,
            "--json" if flag.is_bare() => command.json = true,
            "--allow-unrestricted-file-access" if flag.is_bare() => command.unrestricted = true,
            _ => return Err(usage(format!("unknown option {:?}", flag.written))),
        }
    }
    let mut positional = positional.into_iter();
    let file = positional.next();
    if let Some(word) = positional.next() {
        return Err(usage(format!("one FILE only, not also {word:?}")));
    }
    command.file = file.ok_or_else(|| UsageError("describe: missing FILE".to_owned()))?;
    Ok(Some(command))
}

/// Runs `chromate describe`.
pub(crate) fn run(command: &DescribeCommand) -> ExitCode {
    let (config, _warnings) =
        Config::resolve(McpFlags::default(), &|name| std::env::var(name).ok());
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    let roots = [
        cwd.clone(),
        config.artifacts_root.clone(),
        vision::flows_default_dir(),
    ];
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("chromate: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let image = vision::check_image(
            "describe",
            "FILE",
            std::path::Path::new(&command.file),
            &cwd,
            &roots,
            command.unrestricted,
        )?;
        let provider = vision::provider(
            "describe",
            command.provider.as_deref(),
            command.model.as_deref(),
        )?;
        vision::describe(
            "describe",
            &provider,
            &image,
            command.prompt.as_deref(),
            !command.text,
        )
        .await
    });
    let reply = match outcome {
        Ok(result) => {
            let text = match (&result["metadata"], result["description"].as_str()) {
                (Value::Null, Some(description)) => description.to_owned(),
                (metadata, _) => {
                    serde_json::to_string_pretty(metadata).unwrap_or_else(|_| metadata.to_string())
                }
            };
            Reply::Done(Done {
                text,
                links: Vec::new(),
                result,
                observation: None,
                observation_full: None,
                is_error: false,
                negative: false,
            })
        }
        Err(error) => Reply::Failed(Failed {
            error: error.to_json(),
            text: error.to_text(None),
        }),
    };
    super::run::print_reply(&reply, command.json)
}
