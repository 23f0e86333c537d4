//! `chromate skill`: the agent skill (a `SKILL.md` in the agentskills.io format) that teaches
//! an agent with a shell to drive chromate, printed or installed where agents look for skills.
//!
//! Owns: the skill's text, which is the hand-written `SKILL.md` beside this file with its
//! command list made here from the tool declarations, so the skill never misses a command nor
//! names one that does not exist; the `skill` arguments; and `--install`, which writes it to
//! `DIR/.claude/skills/chromate/SKILL.md` (Claude Code) or `DIR/.agents/skills/chromate/SKILL.md`
//! (Codex and other agents) through a new file renamed into place, never through a symlink at
//! `SKILL.md`. Does not own the commands' grammar or help (`commands.rs`).

use std::fmt::Write as _;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{commands, Command, UsageError};
use chromate_command::tools::schema::Kind;
use chromate_command::tools::{ToolDecl, TOOLS};

/// The skill as written, with [`COMMANDS_MARKER`] where the command list goes.
const TEMPLATE: &str = include_str!("SKILL.md");

/// The line of [`TEMPLATE`] that [`text`] replaces with the command list.
const COMMANDS_MARKER: &str = "{{commands}}";

/// The commands that are not tools, as the skill lists them after the tools.
pub(crate) const SESSION_COMMANDS: &[(&str, &str)] = &[
    ("close", "End the session, its browser and its daemon."),
    ("sessions", "List this user's running sessions."),
];

pub(crate) const HELP: &str = "\
usage: chromate skill [--install [--agents] [--dir DIR]]

Prints chromate's agent skill: a SKILL.md in the agentskills.io format that teaches an agent
with a shell the loop (navigate, read, act by ref, read the diff), selectors, waits, errors,
sessions and every command. With --install, writes it where agents look for skills.

options:
  --install     write it to DIR/.claude/skills/chromate/SKILL.md (Claude Code) and print
                `wrote`, `updated` (a different file was there) or `unchanged`, then its path
  --agents      with --install: DIR/.agents/skills/chromate/SKILL.md instead (Codex, and
                other agents that read .agents/skills)
  --dir DIR     with --install: the project directory, which must exist (default: the
                current directory; your home directory for your personal skills)
  -h, --help    this help

--install creates the directories it needs and replaces a SKILL.md that differs (run it again
after upgrading chromate); it refuses a symlink at SKILL.md and never writes through one.
";

/// Which skills directory `--install` writes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `.claude/skills/chromate/SKILL.md`: Claude Code's project (or, in `~`, personal) skills.
    Claude,
    /// `.agents/skills/chromate/SKILL.md` (`--agents`): Codex's, and other agents'.
    Agents,
}

impl Layout {
    /// The skill's path below the directory it is installed in.
    pub(crate) fn relative_path(self) -> &'static str {
        match self {
            Layout::Claude => ".claude/skills/chromate/SKILL.md",
            Layout::Agents => ".agents/skills/chromate/SKILL.md",
        }
    }
}

/// `chromate skill --install [--agents] [--dir DIR]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Install {
    /// `--dir`; `None` is the current directory (and the path printed stays relative).
    pub(crate) dir: Option<PathBuf>,
    pub(crate) layout: Layout,
}

impl Install {
    /// Where the skill goes.
    pub(crate) fn target(&self) -> PathBuf {
        let relative = self.layout.relative_path();
        match &self.dir {
            Some(dir) => dir.join(relative),
            None => PathBuf::from(relative),
        }
    }
}

/// What `--install` found at the target, and so what it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing was there: the file is new.
    Wrote,
    /// A different `SKILL.md` was there and is replaced.
    Updated,
    /// The same text was there; nothing was written.
    Unchanged,
}

impl Outcome {
    fn word(self) -> &'static str {
        match self {
            Outcome::Wrote => "wrote",
            Outcome::Updated => "updated",
            Outcome::Unchanged => "unchanged",
        }
    }
}

/// Parses the words after `chromate skill`.
pub(crate) fn parse(args: &[String]) -> Result<Command, UsageError> {
    let mut install = false;
    let mut layout = Layout::Claude;
    let mut dir = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help(HELP.to_owned())),
            "--install" => install = true,
            "--agents" => layout = Layout::Agents,
            "--dir" => match args.next() {
                Some(value) => dir = Some(dir_value(value)?),
                None => return Err(UsageError("skill: --dir needs a directory".to_owned())),
            },
            other => match other.strip_prefix("--dir=") {
                Some(value) => dir = Some(dir_value(value)?),
                None => return Err(UsageError(format!("skill: unexpected argument {other:?}"))),
            },
        }
    }
    if !install {
        if dir.is_some() || layout == Layout::Agents {
            return Err(UsageError(
                "skill: --dir and --agents go with --install".to_owned(),
            ));
        }
        return Ok(Command::Skill { install: None });
    }
    Ok(Command::Skill {
        install: Some(Install { dir, layout }),
    })
}

fn dir_value(value: &str) -> Result<PathBuf, UsageError> {
    if value.is_empty() {
        Err(UsageError("skill: --dir needs a directory".to_owned()))
    } else {
        Ok(PathBuf::from(value))
    }
}

/// The whole `SKILL.md`: the template with its command list.
pub(crate) fn text() -> String {
    TEMPLATE.replacen(COMMANDS_MARKER, command_list().trim_end(), 1)
}

/// One line per command: the tools in declaration order, then `close` and `sessions`.
fn command_list() -> String {
    let mut list = String::new();
    for decl in TOOLS {
        let _ = writeln!(list, "- `{}` — {}", synopsis(decl), decl.description);
    }
    for (command, description) in SESSION_COMMANDS {
        let _ = writeln!(list, "- `{command}` — {description}");
    }
    list
}

/// `element dblclick|focus|scroll|clear|check|uncheck|select SELECTOR [VALUE] [--timeout-ms N]`:
/// the usage line without the common options, with the values of every choice spelled out so
/// an agent need not ask `--help` for them.
pub(crate) fn synopsis(decl: &ToolDecl) -> String {
    let mut line = decl.cli.command.to_owned();
    for slot in decl.cli.positional {
        let Some(arg) = decl.args.iter().find(|arg| arg.name == slot.arg) else {
            continue;
        };
        let name = match (slot.when, arg.kind) {
            (Some((_, value)), _) => format!("{}({value})", commands::metavar(arg)),
            (None, Kind::Enum { values, .. }) => values.join("|"),
            (None, _) => commands::metavar(arg),
        };
        if arg.required && slot.when.is_none() {
            let _ = write!(line, " {name}");
        } else {
            let _ = write!(line, " [{name}]");
        }
    }
    for arg in decl
        .args
        .iter()
        .filter(|arg| !commands::is_positional(decl, arg))
    {
        let flag = commands::flag_name(arg);
        let _ = match arg.kind {
            Kind::Bool => write!(line, " [{flag}]"),
            Kind::Enum { values, .. } => write!(line, " [{flag} {}]", values.join("|")),
            Kind::Int { .. } | Kind::Num { .. } => write!(line, " [{flag} N]"),
            _ => write!(line, " [{flag} {}]", arg.name.to_uppercase()),
        };
    }
    if decl.cli.file.is_some() {
        line.push_str(" [--file PATH]");
    }
    line
}

/// `chromate skill --install …`: installs the skill and says what it did; exit status 1 if it
/// could not.
pub(crate) fn run_install(install: &Install) -> ExitCode {
    match install_text(install, &text()) {
        Ok(outcome) => {
            println!("{} {}", outcome.word(), install.target().display());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("chromate: skill: {err}");
            ExitCode::from(1)
        }
    }
}

/// Writes `text` to the install target unless the same text is already there. The file is
/// written new beside the target and renamed over it, so a reader never sees half a file and
/// an old file's other hard links keep their text; a symlink (or anything but a regular file)
/// at the target is refused, and the read of an existing file never follows one either.
pub(crate) fn install_text(install: &Install, text: &str) -> io::Result<Outcome> {
    if let Some(dir) = &install.dir {
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("--dir {}: no such directory", dir.display()),
            ));
        }
    }
    let target = install.target();
    let shown = target.display();
    let refuse = |why: &str| {
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{shown} {why}; chromate replaces only a regular file there and never writes \
                 through a symlink (remove it, or choose another --dir)"
            ),
        )
    };
    let Some(parent) = target.parent() else {
        return Err(io::Error::other(format!("{shown} has no parent directory")));
    };
    fs::create_dir_all(parent).map_err(|err| annotate(parent, err))?;
    let outcome = match fs::symlink_metadata(&target) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Outcome::Wrote,
        Err(err) => return Err(annotate(&target, err)),
        Ok(meta) if meta.file_type().is_symlink() => return Err(refuse("is a symlink")),
        Ok(meta) if !meta.is_file() => return Err(refuse("is not a regular file")),
        // `read_file` opens with O_NOFOLLOW: a symlink swapped in since is not read through.
        Ok(_) => match chromate_command::private_fs::read_file(&target) {
            Ok(existing) if existing == text.as_bytes() => return Ok(Outcome::Unchanged),
            Ok(_) => Outcome::Updated,
            Err(_) if is_symlink(&target) => return Err(refuse("is a symlink")),
            Err(err) => return Err(annotate(&target, err)),
        },
    };
    let temporary = parent.join(format!(
        ".SKILL.md.{}.tmp",
        chromate_command::private_fs::random_suffix()
    ));
    let written = write_new(&temporary, text.as_bytes()).and_then(|()| {
        // rename replaces whatever is at the target now, a symlink planted since included,
        // without following it.
        fs::rename(&temporary, &target)
    });
    if let Err(err) = written {
        let _ = fs::remove_file(&temporary);
        return Err(annotate(&target, err));
    }
    Ok(outcome)
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

fn annotate(path: &Path, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("{}: {err}", path.display()))
}

/// Creates `path` as a new file (nothing may be there, not even a symlink) and writes `data`.
/// Mode 0644 before the umask: a skill is read by people and tools alike, and holds no secret.
fn write_new(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o644).custom_flags(libc::O_NOFOLLOW);
    }
    let mut file = options.open(path)?;
    file.write_all(data)?;
    file.flush()
}

#[cfg(test)]
mod tests;
