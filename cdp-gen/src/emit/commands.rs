//! Commands: a params struct (required fields in `new`, optional ones as setters), a returns
//! struct, and the `Command` impl tying them to the method name.
//!
//! A command that returns nothing answers `EmptyReturns` instead of its own empty struct, which
//! saves a few hundred near-identical types.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{doc_attrs, struct_tokens, DocLink, StructShape};
use crate::model::{Command, Domain};
use crate::names;
use crate::plan::{Directions, Plan};

/// Every command of `domain`.
pub(crate) fn domain_commands(plan: &Plan<'_>, domain: &Domain) -> TokenStream {
    domain
        .commands
        .iter()
        .map(|command| command_tokens(plan, domain, command))
        .collect()
}

fn command_tokens(plan: &Plan<'_>, domain: &Domain, command: &Command) -> TokenStream {
    let base = names::pascal(&command.name);
    let params = format_ident!("{}Params", base);
    let method = format!("{}.{}", domain.domain, command.name);
    let mut description = command.description.clone().unwrap_or_default();
    if let Some(redirect) = &command.redirect {
        description.push_str(&format!("\n\nImplemented by the `{redirect}` domain."));
    }
    let doc = doc_attrs(
        Some(description.as_str()).filter(|d| !d.is_empty()),
        command.experimental,
        command.deprecated,
        &domain.domain,
        DocLink::Method(&command.name),
    );
    let params_shape = StructShape {
        domain: &domain.domain,
        owner_key: &format!("{}.params", command.name),
        name: &params,
        dirs: Directions {
            ser: true,
            de: false,
        },
        doc,
        builder: true,
    };
    let params_tokens = struct_tokens(plan, &params_shape, &command.parameters);
    let (returns_ty, returns_tokens) = if command.returns.is_empty() {
        (quote!(EmptyReturns), quote!())
    } else {
        let returns = format_ident!("{}Returns", base);
        let doc_line = format!(" What `{method}` answers.");
        let shape = StructShape {
            domain: &domain.domain,
            owner_key: &format!("{}.returns", command.name),
            name: &returns,
            dirs: Directions {
                ser: false,
                de: true,
            },
            doc: quote!(#[doc = #doc_line]),
            builder: false,
        };
        (
            quote!(#returns),
            struct_tokens(plan, &shape, &command.returns),
        )
    };
    quote! {
        #params_tokens
        #returns_tokens
        impl Command for #params {
            const METHOD: &'static str = #method;
            type Returns = #returns_ty;
        }
    }
}
