//! Generates the CDP bindings into `$OUT_DIR/cdp.rs`; the only code that reads `protocol-json/`.
//!
//! Which domains compile is decided by the `domain-*` cargo features (`all-domains` for every
//! one); cdp-gen adds, from other domains, only the types the chosen ones reference.

use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let protocol = manifest_dir.join("../protocol-json/protocol.json");
    println!("cargo::rerun-if-changed={}", protocol.display());
    println!("cargo::rerun-if-changed=build.rs");
    let json = match std::fs::read_to_string(&protocol) {
        Ok(json) => json,
        Err(err) => panic!("reading {}: {err}", protocol.display()),
    };
    let selection = if std::env::var_os("CARGO_FEATURE_ALL_DOMAINS").is_some() {
        cdp_gen::DomainSelection::All
    } else {
        let all = cdp_gen::domain_names(&json).unwrap_or_else(|err| panic!("{err}"));
        let chosen = all
            .into_iter()
            .filter(|domain| {
                let var = format!("CARGO_FEATURE_DOMAIN_{}", domain.to_uppercase());
                std::env::var_os(var).is_some()
            })
            .collect();
        cdp_gen::DomainSelection::Only(chosen)
    };
    // Unformatted output: rustc does not need prettyplease, and skipping it saves build time.
    // `cargo codegen` writes the formatted version for people to read.
    let (src, _) = cdp_gen::generate_unformatted(&json, &selection)
        .unwrap_or_else(|err| panic!("generating CDP bindings: {err}"));
    let out = PathBuf::from(env("OUT_DIR")).join("cdp.rs");
    if let Err(err) = std::fs::write(&out, src) {
        panic!("writing {}: {err}", out.display());
    }
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo sets {name} for build scripts"))
}
