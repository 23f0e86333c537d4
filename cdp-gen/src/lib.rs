//! cdp-gen turns the Chrome DevTools Protocol JSON (`/json/protocol`) into typed Rust.
//!
//! The engine's build script calls [`generate_unformatted`]; the `cdp-gen` binary prints the same
//! code formatted so people can read it (`cargo codegen`; `generate`, behind the default `format`
//! feature, which brings syn and prettyplease). Output shape, one module per domain with anything
//! selected:
//! named types (structs, string enums with a catch-all, newtypes for ids), a params/returns
//! pair per command tied by the `Command` trait, a struct per event with the `Event` trait, and
//! one `CdpEvent` enum with a decoder that never drops an event.
//!
//! It does not decide which domains or methods a crate needs (the caller passes a
//! [`DomainSelection`]) and
//! holds no runtime code: the traits and macros the output expects are the engine's
//! (`engine/src/cdp/mod.rs`).

mod emit;
mod error;
mod fixup;
mod format;
mod model;
mod names;
mod plan;

use std::collections::HashSet;

use proc_macro2::TokenStream;
use quote::quote;

pub use error::GenError;
pub use plan::DomainSelection;

/// Facts about one generation run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Domains generated whole (commands and events too), in protocol order.
    pub domains: Vec<String>,
    /// Commands generated.
    pub commands: usize,
    /// Events generated.
    pub events: usize,
    /// Named types generated.
    pub types: usize,
}

/// Generates formatted Rust source for `selection` from protocol JSON text.
///
/// ```
/// let json = r#"{"version":{"major":"1","minor":"3"},"domains":[{"domain":"Demo",
///   "commands":[{"name":"ping"}]}]}"#;
/// let (src, stats) = cdp_gen::generate(json, &cdp_gen::DomainSelection::All).unwrap();
/// assert!(src.contains("pub struct PingParams"));
/// assert_eq!(stats.commands, 1);
/// ```
#[cfg(feature = "format")]
pub fn generate(json: &str, selection: &DomainSelection) -> Result<(String, Stats), GenError> {
    let (tokens, stats) = generate_tokens(json, selection)?;
    Ok((format::format(tokens)?, stats))
}

/// Like [`generate`], without formatting: one item part per line is all the compiler needs, and
/// it saves the build script prettyplease's work.
pub fn generate_unformatted(
    json: &str,
    selection: &DomainSelection,
) -> Result<(String, Stats), GenError> {
    let (tokens, stats) = generate_tokens(json, selection)?;
    Ok((format::lines(tokens), stats))
}

/// The names of every domain in the protocol JSON, in order.
pub fn domain_names(json: &str) -> Result<Vec<String>, GenError> {
    let protocol: model::Protocol = serde_json::from_str(json).map_err(GenError::Parse)?;
    Ok(protocol.domains.into_iter().map(|d| d.domain).collect())
}

fn generate_tokens(
    json: &str,
    selection: &DomainSelection,
) -> Result<(TokenStream, Stats), GenError> {
    let protocol: model::Protocol = serde_json::from_str(json).map_err(GenError::Parse)?;
    let plan = plan::Plan::new(&protocol, selection)?;
    let mut stats = Stats::default();
    let mut modules = TokenStream::new();
    for domain in &plan.domains {
        check_collisions(domain)?;
        let module = names::field_ident(&domain.domain);
        let doc = emit::doc_attrs(
            domain.description.as_deref(),
            domain.experimental,
            domain.deprecated,
            &domain.domain,
            emit::DocLink::Domain,
        );
        let types = emit::types::domain_types(&plan, domain)?;
        let commands = emit::commands::domain_commands(&plan, domain);
        let events = emit::events::domain_events(&plan, domain);
        let mut imports = Vec::new();
        if !domain.commands.is_empty() {
            imports.push(quote!(Command));
        }
        if domain.commands.iter().any(|c| c.returns.is_empty()) {
            imports.push(quote!(EmptyReturns));
        }
        if !domain.events.is_empty() {
            imports.push(quote!(Event));
        }
        if [&types, &commands, &events]
            .iter()
            .any(|tokens| mentions(tokens, "wire"))
        {
            imports.push(quote!(wire));
        }
        let imports = (!imports.is_empty()).then(|| quote!(use super::{#(#imports),*};));
        modules.extend(quote! {
            #doc
            pub mod #module {
                #imports
                #types
                #commands
                #events
            }
        });
        if plan.is_whole(&domain.domain) {
            stats.domains.push(domain.domain.clone());
        }
        stats.commands += domain.commands.len();
        stats.events += domain.events.len();
        stats.types += domain.types.len();
    }
    let event_enum = emit::events::event_enum(&plan);
    let protocol_version = format!("{}.{}", protocol.version.major, protocol.version.minor);
    let domain_list = &stats.domains;
    let commands: Vec<String> = plan
        .domains
        .iter()
        .flat_map(|d| {
            d.commands
                .iter()
                .map(move |c| format!("{}.{}", d.domain, c.name))
        })
        .collect();
    let events: Vec<String> = plan
        .domains
        .iter()
        .flat_map(|d| {
            d.events
                .iter()
                .map(move |e| format!("{}.{}", d.domain, e.name))
        })
        .collect();
    let tokens = quote! {
        /// The protocol version the bindings were generated from.
        pub const PROTOCOL_VERSION: &str = #protocol_version;
        /// The domains compiled into this build with their commands and events, in protocol
        /// order (a domain that is only referenced compiles just the types referenced).
        pub const DOMAINS: &[&str] = &[#(#domain_list),*];
        /// Every command method compiled into this build.
        pub const COMMANDS: &[&str] = &[#(#commands),*];
        /// Every event method compiled into this build.
        pub const EVENTS: &[&str] = &[#(#events),*];
        #modules
        #event_enum
    };
    Ok((tokens, stats))
}

/// Whether `tokens` use the identifier `name` anywhere.
fn mentions(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|tree| match tree {
        proc_macro2::TokenTree::Ident(ident) => ident == name,
        proc_macro2::TokenTree::Group(group) => mentions(&group.stream(), name),
        _ => false,
    })
}

/// Fails if two items of one domain module would share a Rust name.
fn check_collisions(domain: &model::Domain) -> Result<(), GenError> {
    let mut seen = HashSet::new();
    let mut claim = |name: String, path: String| {
        if seen.insert(name.clone()) {
            Ok(())
        } else {
            Err(GenError::NameCollision { path, name })
        }
    };
    let d = &domain.domain;
    for ty in &domain.types {
        claim(ty.id.clone(), format!("{d}.{}", ty.id))?;
    }
    for command in &domain.commands {
        let base = names::pascal(&command.name);
        claim(format!("{base}Params"), format!("{d}.{}", command.name))?;
        if !command.returns.is_empty() {
            claim(format!("{base}Returns"), format!("{d}.{}", command.name))?;
        }
    }
    for event in &domain.events {
        claim(
            format!("Event{}", names::pascal(&event.name)),
            format!("{d}.{}", event.name),
        )?;
    }
    Ok(())
}
