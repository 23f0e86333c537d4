//! `cdp-gen`: prints or writes the generated bindings so people can read them.
//!
//! ```text
//! cdp-gen <protocol.json> [--domains Page,Runtime.evaluate] [-o OUT.rs] [--stats]
//! ```
//! Without `--domains` every domain is generated. An entry with a dot is one command or event;
//! without, a whole domain.

use std::process::ExitCode;

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("cdp-gen: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut input = None;
    let mut output = None;
    let mut domains = None;
    let mut stats_only = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-o" | "--output" => output = Some(args.next().ok_or("-o needs a path")?),
            "--domains" => domains = Some(args.next().ok_or("--domains needs a list")?),
            "--stats" => stats_only = true,
            "-h" | "--help" => {
                println!(
                    "usage: cdp-gen <protocol.json> [--domains Page,Runtime.evaluate] [-o OUT.rs] [--stats]"
                );
                return Ok(());
            }
            _ if input.is_none() && !arg.starts_with('-') => input = Some(arg),
            _ => return Err(format!("unexpected argument `{arg}`")),
        }
    }
    let input = input.ok_or("missing protocol json path (try --help)")?;
    let json = std::fs::read_to_string(&input).map_err(|err| format!("reading {input}: {err}"))?;
    let selection = match domains {
        Some(list) => cdp_gen::DomainSelection::Only(
            list.split(',')
                .map(|d| d.trim().to_string())
                .filter(|d| !d.is_empty())
                .collect(),
        ),
        None => cdp_gen::DomainSelection::All,
    };
    let started = std::time::Instant::now();
    let (src, stats) = cdp_gen::generate(&json, &selection).map_err(|err| error_chain(&err))?;
    let elapsed = started.elapsed();
    if stats_only {
        println!(
            "{} domains, {} commands, {} events, {} types, {} bytes in {:.1} ms",
            stats.domains.len(),
            stats.commands,
            stats.events,
            stats.types,
            src.len(),
            elapsed.as_secs_f64() * 1000.0
        );
        return Ok(());
    }
    match output {
        Some(path) => {
            if let Some(parent) = std::path::Path::new(&path).parent() {
                std::fs::create_dir_all(parent).map_err(|err| format!("creating {path}: {err}"))?;
            }
            std::fs::write(&path, src).map_err(|err| format!("writing {path}: {err}"))
        }
        None => {
            print!("{src}");
            Ok(())
        }
    }
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut res = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        res.push_str(": ");
        res.push_str(&cause.to_string());
        source = cause.source();
    }
    res
}
