//! Events: one struct per event with its `Event` impl, and, across all generated domains, the
//! `CdpEvent` enum with its decoder. An event the decoder cannot read comes back as
//! `CdpEvent::Raw` carrying the exact error; nothing is dropped.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{doc_attrs, struct_tokens, DocLink, StructShape};
use crate::model::{Domain, Event};
use crate::names;
use crate::plan::{Directions, Plan};

/// Every event struct of `domain`.
pub(crate) fn domain_events(plan: &Plan<'_>, domain: &Domain) -> TokenStream {
    domain
        .events
        .iter()
        .map(|event| event_tokens(plan, domain, event))
        .collect()
}

fn event_tokens(plan: &Plan<'_>, domain: &Domain, event: &Event) -> TokenStream {
    let name = format_ident!("Event{}", names::pascal(&event.name));
    let method = format!("{}.{}", domain.domain, event.name);
    let doc = doc_attrs(
        event.description.as_deref(),
        event.experimental,
        event.deprecated,
        &domain.domain,
        DocLink::Event(&event.name),
    );
    let shape = StructShape {
        domain: &domain.domain,
        owner_key: "event",
        name: &name,
        dirs: Directions {
            ser: false,
            de: true,
        },
        doc,
        builder: false,
    };
    let body = struct_tokens(plan, &shape, &event.parameters);
    quote! {
        #body
        impl Event for #name {
            const METHOD: &'static str = #method;
        }
    }
}

/// `CdpEvent`, `CdpEvent::method` and `decode_event` over every generated domain.
pub(crate) fn event_enum(plan: &Plan<'_>) -> TokenStream {
    let mut variants = Vec::new();
    let mut methods = Vec::new();
    let mut arms = Vec::new();
    for domain in &plan.domains {
        let module = names::field_ident(&domain.domain);
        for event in &domain.events {
            let variant = format_ident!("{}{}", domain.domain, names::pascal(&event.name));
            let ty = format_ident!("Event{}", names::pascal(&event.name));
            let method = format!("{}.{}", domain.domain, event.name);
            let doc = format!(" `{method}`");
            variants.push(quote!(#[doc = #doc] #variant(Box<#module::#ty>)));
            methods.push(quote!(Self::#variant(_) => #method));
            arms.push(quote!(#method => #module::#ty::deserialize(&mut de).map(|e| Self::#variant(Box::new(e)))));
        }
    }
    quote! {
        /// Any event of the generated domains, decoded; `Raw` when it could not be.
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum CdpEvent {
            #(#variants,)*
            /// An event of a domain that was not generated, or one that failed to decode.
            Raw(RawEvent),
        }

        impl CdpEvent {
            /// The protocol method name (`Page.loadEventFired`).
            #[inline]
            pub fn method(&self) -> &str {
                match self {
                    #(#methods,)*
                    Self::Raw(raw) => &raw.method,
                }
            }

            /// Decodes an event from its method name and raw parameters. Never fails: what
            /// cannot be decoded comes back as `Raw` with the decoding error.
            // Inline so that only a crate that calls it compiles it, with the readers of every
            // event it reaches: a quarter of the bindings' build time for those that don't.
            #[inline]
            pub fn decode(method: &str, params: &::serde_json::value::RawValue) -> Self {
                use ::serde::Deserialize as _;
                // One deserializer type for every event keeps the instantiated code small.
                let mut de = ::serde_json::Deserializer::from_str(params.get());
                let res = match method {
                    #(#arms,)*
                    _ => return Self::Raw(RawEvent::new(method, params, None)),
                };
                match res.and_then(|event| de.end().map(|()| event)) {
                    Ok(event) => event,
                    Err(err) => Self::Raw(RawEvent::new(method, params, Some(err.to_string()))),
                }
            }
        }
    }
}
