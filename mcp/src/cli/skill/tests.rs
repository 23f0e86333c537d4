//! Unit tests for the agent skill: its front matter, that its command list is exactly the
//! commands there are, that every command line it shows parses, its size, `skill`'s arguments,
//! and installing it (new, unchanged, updated, refused through a symlink).

use std::collections::BTreeSet;

use expect_test::expect;

use super::*;
use crate::cli::parse_args;

/// Every command the skill may name: the tools, the session commands, and the rest of argv.
fn known_commands() -> BTreeSet<&'static str> {
    let mut known: BTreeSet<&str> = TOOLS.iter().map(|decl| decl.cli.command).collect();
    known.extend(SESSION_COMMANDS.iter().map(|(command, _)| *command));
    known.extend(["skill", "mcp", "init", "bench-snapshot"]);
    known
}

/// The front matter's `key: value` lines, and the body after it.
fn front_matter(text: &str) -> (Vec<(String, String)>, String) {
    let Some(rest) = text.strip_prefix("---\n") else {
        panic!("the skill does not start with ---");
    };
    let Some((matter, body)) = rest.split_once("\n---\n") else {
        panic!("the front matter is not closed by ---");
    };
    let fields = matter
        .lines()
        .map(|line| match line.split_once(": ") {
            Some((key, value)) => (key.to_owned(), value.to_owned()),
            None => panic!("front matter line is not `key: value`: {line:?}"),
        })
        .collect();
    (fields, body.to_owned())
}

/// Whether `value` reads back as itself when YAML parses it as a plain scalar: no indicator
/// first, no `: ` or ` #` inside, no trailing space.
fn is_plain_yaml_scalar(value: &str) -> bool {
    let first = value.chars().next();
    !value.is_empty()
        && !first.is_some_and(|c| "-?:,[]{}#&*!|>'\"%@`".contains(c))
        && !value.contains(": ")
        && !value.contains(" #")
        && !value.ends_with(' ')
        && !value.ends_with(':')
}

#[test]
fn the_front_matter_names_the_skill_and_describes_it_in_at_most_1024_characters() {
    let text = text();
    assert!(
        text.starts_with("---\nname: chromate\ndescription: "),
        "{}",
        &text[..80]
    );
    let (fields, body) = front_matter(&text);
    let keys: Vec<&str> = fields.iter().map(|(key, _)| key.as_str()).collect();
    assert_eq!(keys, ["name", "description", "compatibility"]);
    for (key, value) in &fields {
        assert!(
            is_plain_yaml_scalar(value),
            "{key}: {value:?} is not plain YAML"
        );
    }
    let description = &fields[1].1;
    let chars = description.chars().count();
    assert!((1..=1024).contains(&chars), "description: {chars} chars");
    // What it does and when to use it.
    assert!(description.contains("Use it when"), "{description}");
    let compatibility = fields[2].1.chars().count();
    assert!(compatibility <= 500, "compatibility: {compatibility} chars");
    assert!(body.starts_with("\n# chromate\n"), "{}", &body[..40]);
    assert!(!text.contains(COMMANDS_MARKER));
    assert_eq!(TEMPLATE.matches(COMMANDS_MARKER).count(), 1);
}

#[test]
fn the_command_list_is_every_command_and_only_those() {
    let text = text();
    let Some((_, list)) = text.split_once("\n## Commands\n\n") else {
        panic!("no Commands section");
    };
    let listed: Vec<&str> = list
        .lines()
        .take_while(|line| line.starts_with("- `"))
        .filter_map(|line| line.strip_prefix("- `"))
        .filter_map(|line| line.split([' ', '`']).next())
        .collect();
    let mut expected: Vec<&str> = TOOLS.iter().map(|decl| decl.cli.command).collect();
    expected.extend(SESSION_COMMANDS.iter().map(|(command, _)| *command));
    assert_eq!(listed, expected);
}

#[test]
fn every_command_the_skill_names_exists() {
    // Commands are shown as code: `chromate click e5`, and the list's `click SELECTOR …`.
    let text = text();
    let known = known_commands();
    let mut unknown = Vec::new();
    for span in code_spans(&text) {
        for (at, _) in span.match_indices("chromate ") {
            let word: String = span[at + "chromate ".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            // `chromate <command>` is the synopsis, not a command.
            if !word.is_empty() && !known.contains(word.as_str()) {
                unknown.push(word);
            }
        }
    }
    assert!(unknown.is_empty(), "unknown commands: {unknown:?}");
}

/// Splits a shell command line: words, 'single' and "double" quotes.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, ' ' | '\n') => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The text between backticks (a fenced block's lines count as one span).
fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The command lines the prose shows in `code spans`: not the generated list, not synopses,
/// not a bare name (`chromate click`, which [`every_command_the_skill_names_exists`] checks).
fn example_lines(text: &str) -> Vec<String> {
    let prose = match text.split_once("\n## Commands\n") {
        Some((prose, _)) => prose,
        None => text,
    };
    code_spans(prose)
        .into_iter()
        .filter(|span| span.starts_with("chromate ") && !span.contains('<'))
        .filter(|span| span.split_whitespace().count() > 2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_example_command_line_parses() {
    let text = text();
    let examples = example_lines(&text);
    assert!(examples.len() >= 10, "{examples:?}");
    // Files the examples name: a script for eval, steps for batch.
    let read = |path: &str| -> std::io::Result<String> {
        Ok(if path.ends_with(".js") || path == "-" {
            "1 + 1".to_owned()
        } else {
            r#"[{"tool":"browser_status","arguments":{}}]"#.to_owned()
        })
    };
    for example in &examples {
        let words = shell_words(example);
        let (command, rest) = match words.split_first() {
            Some((_, rest)) if !rest.is_empty() => (rest[0].as_str(), &rest[1..]),
            _ => panic!("not a command line: {example:?}"),
        };
        let parsed = match commands::find(command) {
            Some(decl) => commands::parse(decl, rest, &read).map(|_| ()),
            None => parse_args(&words[1..]).map(|_| ()),
        };
        if let Err(UsageError(message)) = parsed {
            panic!("{example:?} does not parse: {message}");
        }
    }
}

#[test]
fn mcp_tool_names_are_browser_and_the_command_except_eval() {
    // The skill says hints and batch steps name tools so: keep it true.
    for decl in TOOLS {
        let expected = match decl.cli.command {
            "eval" => "browser_advanced_eval".to_owned(),
            command => format!("browser_{command}"),
        };
        assert_eq!(decl.name, expected);
    }
    assert!(text().contains("`browser_click` is `chromate click`"));
    assert!(text().contains("`browser_advanced_eval` is `chromate eval`"));
}

#[test]
fn the_skill_stays_compact() {
    // Agents pay for every byte: a budget, so growth is a decision.
    let bytes = text().len();
    assert!(bytes <= 10 * 1024, "SKILL.md is {bytes} bytes");
}

#[test]
fn the_synopsis_spells_out_choices() {
    let synopses: Vec<String> = ["element", "page", "eval", "type"]
        .iter()
        .filter_map(|command| commands::find(command))
        .map(synopsis)
        .collect();
    expect![[r#"
        element dblclick|focus|scroll|clear|check|uncheck|select SELECTOR [VALUE] [--timeout-ms N] [--tab TAB]
        page list|open|select|close [URL(open)] [TARGET] [--timeout-ms N]
        eval JS [--timeout-ms N] [--tab TAB] [--file PATH]
        type TEXT [--tab TAB]"#]]
    .assert_eq(&synopses.join("\n"));
}

fn check(args: &str, expect: expect_test::Expect) {
    let args: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
    let actual = match parse_args(&args) {
        Ok(Command::Skill { install }) => format!("skill {install:?}"),
        Ok(Command::Help(text)) => format!("help {}", text.lines().next().unwrap_or_default()),
        Ok(other) => format!("other {other:?}"),
        Err(UsageError(message)) => format!(
            "usage error: {}",
            message.lines().next().unwrap_or_default()
        ),
    };
    expect.assert_eq(&actual);
}

#[test]
fn skill_arguments_parse() {
    check("skill", expect!["skill None"]);
    check(
        "skill --install",
        expect!["skill Some(Install { dir: None, layout: Claude })"],
    );
    check(
        "skill --install --agents --dir /tmp/p",
        expect![[r#"skill Some(Install { dir: Some("/tmp/p"), layout: Agents })"#]],
    );
    check(
        "skill --dir=/tmp/p --install",
        expect![[r#"skill Some(Install { dir: Some("/tmp/p"), layout: Claude })"#]],
    );
    check(
        "skill --help",
        expect!["help usage: chromate skill [--install [--agents] [--dir DIR]]"],
    );
    check(
        "skill --agents",
        expect!["usage error: skill: --dir and --agents go with --install"],
    );
    check(
        "skill --install --dir",
        expect!["usage error: skill: --dir needs a directory"],
    );
    check(
        "skill --force",
        expect![[r#"usage error: skill: unexpected argument "--force""#]],
    );
}

#[test]
fn the_top_help_names_the_skill() {
    assert!(crate::cli::TOP_HELP.contains("chromate skill [--install"));
}

fn temp() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("cannot create a temp dir: {err}"),
    }
}

fn read(path: &Path) -> String {
    match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => panic!("{}: {err}", path.display()),
    }
}

fn install_in(dir: &Path, layout: Layout) -> Install {
    Install {
        dir: Some(dir.to_path_buf()),
        layout,
    }
}

#[test]
fn install_writes_then_leaves_unchanged_then_updates() {
    let project = temp();
    let install = install_in(project.path(), Layout::Claude);
    let target = project.path().join(".claude/skills/chromate/SKILL.md");
    assert_eq!(install.target(), target);
    assert_eq!(install_text(&install, "one").ok(), Some(Outcome::Wrote));
    assert_eq!(read(&target), "one");
    assert_eq!(install_text(&install, "one").ok(), Some(Outcome::Unchanged));
    assert_eq!(install_text(&install, "two").ok(), Some(Outcome::Updated));
    assert_eq!(read(&target), "two");
    // No temporary file is left beside it.
    let names: Vec<String> = match fs::read_dir(project.path().join(".claude/skills/chromate")) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(err) => panic!("{err}"),
    };
    assert_eq!(names, ["SKILL.md"]);
}

#[test]
fn install_with_agents_writes_the_agents_directory_and_the_real_skill() {
    let project = temp();
    let install = install_in(project.path(), Layout::Agents);
    assert_eq!(install_text(&install, &text()).ok(), Some(Outcome::Wrote));
    let written = read(&project.path().join(".agents/skills/chromate/SKILL.md"));
    assert_eq!(written, text());
    assert!(!project.path().join(".claude").exists());
}

#[test]
fn install_without_dir_is_relative_to_the_current_directory() {
    let install = Install {
        dir: None,
        layout: Layout::Claude,
    };
    assert_eq!(
        install.target(),
        PathBuf::from(".claude/skills/chromate/SKILL.md")
    );
}

#[test]
fn install_needs_an_existing_dir() {
    let base = temp();
    let missing = base.path().join("nope");
    let install = install_in(&missing, Layout::Claude);
    let err = install_text(&install, "x").expect_err("a missing --dir is refused");
    assert!(err.to_string().contains("no such directory"), "{err}");
    assert!(!missing.exists(), "nothing is created for a mistyped --dir");
}

#[cfg(unix)]
#[test]
fn install_refuses_a_symlink_at_the_target_and_never_writes_through_it() {
    use std::os::unix::fs::symlink;
    let project = temp();
    let elsewhere = temp();
    let victim = elsewhere.path().join("victim.txt");
    if let Err(err) = fs::write(&victim, "keep me") {
        panic!("{err}");
    }
    let skill_dir = project.path().join(".claude/skills/chromate");
    if let Err(err) = fs::create_dir_all(&skill_dir) {
        panic!("{err}");
    }
    let target = skill_dir.join("SKILL.md");
    if let Err(err) = symlink(&victim, &target) {
        panic!("{err}");
    }
    let install = install_in(project.path(), Layout::Claude);
    let err = install_text(&install, "planted").expect_err("a symlink is refused");
    assert!(err.to_string().contains("is a symlink"), "{err}");
    assert_eq!(read(&victim), "keep me");
    assert!(fs::symlink_metadata(&target).is_ok_and(|meta| meta.file_type().is_symlink()));
    // A dangling one (its target not made yet) is refused too, and not created.
    let later = elsewhere.path().join("later.txt");
    if let Err(err) = fs::remove_file(&target).and_then(|()| symlink(&later, &target)) {
        panic!("{err}");
    }
    assert!(install_text(&install, "planted").is_err());
    assert!(!later.exists());
}

#[test]
fn install_refuses_a_directory_at_the_target() {
    let project = temp();
    let target = project.path().join(".claude/skills/chromate/SKILL.md");
    if let Err(err) = fs::create_dir_all(&target) {
        panic!("{err}");
    }
    let install = install_in(project.path(), Layout::Claude);
    let err = install_text(&install, "x").expect_err("a directory is refused");
    assert!(err.to_string().contains("is not a regular file"), "{err}");
}
