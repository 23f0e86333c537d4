//! The command grammar: every declared argument is reachable from the command line, the
//! main spellings parse to the arguments MCP would get, and bad words are usage errors.

use serde_json::{json, Value};

use super::*;

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

fn no_files(path: &str) -> std::io::Result<String> {
    Err(std::io::Error::other(format!(
        "no file {path} in this test"
    )))
}

/// `chromate <line>` → the arguments sent, or the usage error's first line.
fn run(line: &str) -> Result<Value, String> {
    run_with(line, &no_files)
}

fn run_with(line: &str, read: &dyn Fn(&str) -> std::io::Result<String>) -> Result<Value, String> {
    let words = words(line);
    let Some((command, rest)) = words.split_first() else {
        return Err("empty".to_owned());
    };
    let Some(decl) = find(command) else {
        return Err(format!("no command {command}"));
    };
    match parse(decl, rest, read) {
        Ok(Parsed::Run(command)) => Ok(Value::Object(command.arguments)),
        Ok(Parsed::Help(text)) => Ok(json!({ "help": text.lines().next() })),
        Err(UsageError(message)) => Err(message.lines().next().unwrap_or_default().to_owned()),
    }
}

/// A word of the right kind for `arg`, that its validator accepts.
fn sample(arg: &Arg) -> String {
    match arg.kind {
        Kind::Enum { values, .. } => values[values.len() - 1].to_owned(),
        Kind::Int { min, .. } => min.max(1).to_string(),
        Kind::Num { min, .. } => min.max(1.0).to_string(),
        Kind::Bool => "true".to_owned(),
        Kind::Size { .. } => "320x200".to_owned(),
        Kind::Object { .. } => "{}".to_owned(),
        Kind::Str { .. } | Kind::StrList { .. } | Kind::Steps { .. } => match arg.name {
            "url" => "http://127.0.0.1:1/".to_owned(),
            "name" => "n1".to_owned(),
            "id" => "m1".to_owned(),
            "js" => "1".to_owned(),
            "steps" => "steps.json".to_owned(),
            _ => "x".to_owned(),
        },
    }
}

#[test]
fn every_declared_argument_is_reachable_as_a_flag() {
    let steps = |_: &str| Ok(r#"[{"tool":"browser_status","arguments":{}}]"#.to_owned());
    for decl in TOOLS {
        for arg in decl.args {
            let flag = format!("--{}", arg.name.replace('_', "-"));
            let line = format!("{} {flag} {}", decl.cli.command, sample(arg));
            let words = words(&line);
            let parsed = parse(decl, &words[1..], &steps);
            let arguments = match parsed {
                Ok(Parsed::Run(command)) => command.arguments,
                // Alone, a flag may break a cross-argument rule; it was still read.
                Err(UsageError(message)) => {
                    assert!(!message.contains("unknown option"), "{line}: {message}");
                    continue;
                }
                Ok(Parsed::Help(_)) => panic!("{line}: help"),
            };
            assert!(arguments.contains_key(arg.name), "{line}: {arguments:?}");
        }
    }
}

#[test]
fn every_positional_slot_names_a_declared_argument_and_commands_are_unique() {
    let mut seen = std::collections::HashSet::new();
    for decl in TOOLS {
        assert!(seen.insert(decl.cli.command), "{} twice", decl.cli.command);
        for slot in decl.cli.positional {
            assert!(
                decl.args.iter().any(|arg| arg.name == slot.arg),
                "{}: slot {}",
                decl.cli.command,
                slot.arg
            );
        }
        if let Some(file) = decl.cli.file {
            assert!(decl.args.iter().any(|arg| arg.name == file));
        }
    }
    assert_eq!(seen.len(), 28);
}

#[test]
fn main_spellings_parse() {
    assert_eq!(
        run("navigate http://127.0.0.1:8000/a"),
        Ok(json!({ "url": "http://127.0.0.1:8000/a" }))
    );
    assert_eq!(
        run("click e7 --double"),
        Ok(json!({ "selector": "e7", "double": true }))
    );
    assert_eq!(
        run("fill css=#q hello --submit"),
        Ok(json!({ "selector": "css=#q", "value": "hello", "submit": true }))
    );
    assert_eq!(
        run("snapshot --selector css=main --max-lines 40"),
        Ok(json!({ "selector": "css=main", "max_lines": 40 }))
    );
    assert_eq!(
        run("page open http://127.0.0.1:1/"),
        Ok(json!({ "action": "open", "url": "http://127.0.0.1:1/" }))
    );
    assert_eq!(
        run("page select 2"),
        Ok(json!({ "action": "select", "target": "2" }))
    );
    assert_eq!(
        run("mock remove m3"),
        Ok(json!({ "action": "remove", "id": "m3" }))
    );
    assert_eq!(
        run("mock block http://127.0.0.1:1/*"),
        Ok(json!({ "action": "block", "pattern": "http://127.0.0.1:1/*" }))
    );
    assert_eq!(
        run("upload css=input a.txt b.txt"),
        Ok(json!({ "selector": "css=input", "files": ["a.txt", "b.txt"] }))
    );
    assert_eq!(
        run("mouse wheel --delta-y=-300"),
        Ok(json!({ "action": "wheel", "delta_y": -300.0 }))
    );
    assert_eq!(
        run("type -- --not-a-flag"),
        Ok(json!({ "text": "--not-a-flag" }))
    );
    assert_eq!(run("status"), Ok(json!({})));
}

#[test]
fn eval_and_batch_read_files_and_standard_input() {
    let read = |path: &str| match path {
        "-" => Ok("document.title".to_owned()),
        "steps.json" => Ok(
            r#"{"steps":[{"tool":"browser_status","arguments":{}}],"continue_on_error":true}"#
                .to_owned(),
        ),
        other => Err(std::io::Error::other(format!("no {other}"))),
    };
    assert_eq!(run_with("eval 1+1", &read), Ok(json!({ "js": "1+1" })));
    assert_eq!(
        run_with("eval -", &read),
        Ok(json!({ "js": "document.title" }))
    );
    assert_eq!(
        run_with("eval --file -", &read),
        Ok(json!({ "js": "document.title" }))
    );
    assert_eq!(
        run_with("batch steps.json", &read),
        Ok(json!({
            "steps": [{ "tool": "browser_status", "arguments": {} }],
            "continue_on_error": true,
        }))
    );
    assert_eq!(
        run_with("batch missing.json", &read),
        Err("batch: missing.json: cannot read: no missing.json".to_owned())
    );
}

#[test]
fn bad_words_are_usage_errors_naming_the_flag() {
    assert_eq!(
        run("click"),
        Err("click: missing required argument SELECTOR".to_owned())
            .map_err(|_| run("click").unwrap_err())
    );
    assert_eq!(
        run("click e1 --bogus"),
        Err("click: unknown option --bogus".to_owned())
    );
    assert_eq!(
        run("click e1 --timeout-ms soon"),
        Err("click: --timeout-ms needs a whole number, not \"soon\"".to_owned())
    );
    assert_eq!(
        run("click e1 e2"),
        Err("click: unexpected argument \"e2\"".to_owned())
    );
    assert!(run("snapshot --max-lines 0")
        .unwrap_err()
        .contains("--max-lines"));
    assert!(run("click e1 --session ../x")
        .unwrap_err()
        .contains("session name"));
}

#[test]
fn help_is_the_declaration() {
    let Some(click) = find("click") else {
        panic!("no click command");
    };
    assert_eq!(
        run("click --help"),
        Ok(
            json!({ "help": "usage: chromate click SELECTOR [--double] [--timeout-ms N] [--tab TAB] [--session NAME] [--json]" })
        )
    );
    assert!(help(click).contains(click.description));
}

#[test]
fn help_lists_every_argument() {
    for decl in TOOLS {
        let text = help(decl);
        for arg in decl.args {
            let shown = if decl.cli.positional.iter().any(|slot| slot.arg == arg.name) {
                metavar(arg)
            } else {
                flag_name(arg)
            };
            assert!(
                text.contains(&shown),
                "{}: {shown}\n{text}",
                decl.cli.command
            );
        }
    }
}
