//! Model → `TokenStream`, one domain module at a time.
//!
//! `types.rs` emits named types, `commands.rs` params/returns pairs and their `Command` impls,
//! `events.rs` event structs, their `Event` impls and the crate-wide event enum. This module
//! holds what they share: docs, field types and struct bodies.
//!
//! The emitted code expects, in the module that includes it, the traits `Command` and `Event`,
//! the types `EmptyReturns` and `RawEvent`, the macros `cdp_enum!`, `cdp_string!`,
//! `cdp_integer!` and `cdp_number!`, and the serde helpers module `wire` (see
//! `engine/src/cdp/mod.rs`). Keeping those hand-written keeps the generated text, and so its
//! compile time, small.

pub(crate) mod commands;
pub(crate) mod events;
pub(crate) mod types;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::fixup;
use crate::model::{Items, Property};
use crate::names;
use crate::plan::{Directions, Plan};

/// Where the protocol documentation of an item lives.
pub(crate) enum DocLink<'a> {
    Domain,
    Type(&'a str),
    Method(&'a str),
    Event(&'a str),
}

/// `#[doc]` attributes from an upstream description, with status notes and a link.
pub(crate) fn doc_attrs(
    description: Option<&str>,
    experimental: bool,
    deprecated: bool,
    domain: &str,
    link: DocLink<'_>,
) -> TokenStream {
    let mut lines: Vec<String> = Vec::new();
    if let Some(text) = description {
        // Leading whitespace would turn protocol prose into doctests; trim every line.
        lines.extend(text.lines().map(|line| format!(" {}", line.trim())));
    }
    let mut notes = Vec::new();
    if experimental {
        notes.push("**Experimental.**");
    }
    if deprecated {
        notes.push("**Deprecated.**");
    }
    if !notes.is_empty() {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!(" {}", notes.join(" ")));
    }
    let anchor = match link {
        DocLink::Domain => String::new(),
        DocLink::Type(id) => format!("#type-{id}"),
        DocLink::Method(name) => format!("#method-{name}"),
        DocLink::Event(name) => format!("#event-{name}"),
    };
    if !matches!(link, DocLink::Type(_) if description.is_none()) {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!(
            " <https://chromedevtools.github.io/devtools-protocol/tot/{domain}/{anchor}>"
        ));
    }
    quote! { #( #[doc = #lines] )* }
}

/// A struct field: its Rust type, plus any inline enum type it needed.
pub(crate) struct FieldType {
    pub(crate) tokens: TokenStream,
    pub(crate) extra: Option<TokenStream>,
}

/// Builds the Rust type of a property. `owner` names the inline enum, if one is needed.
pub(crate) fn field_type(
    plan: &Plan<'_>,
    domain: &str,
    owner: &str,
    prop: &Property,
    boxed: bool,
) -> FieldType {
    if let Some(reference) = &prop.reference {
        let tokens = ref_path(plan, domain, reference);
        let tokens = if boxed { quote!(Box<#tokens>) } else { tokens };
        return FieldType {
            tokens,
            extra: None,
        };
    }
    let kind = prop.kind.as_deref().unwrap_or("any");
    if kind == "string" {
        if let Some(values) = &prop.enum_values {
            let name = format_ident!("{}{}", owner, names::pascal(&prop.name));
            let doc = doc_attrs(
                prop.description.as_deref(),
                false,
                false,
                domain,
                DocLink::Domain,
            );
            let extra = types::enum_tokens(&name, values, doc);
            return FieldType {
                tokens: quote!(#name),
                extra: Some(extra),
            };
        }
    }
    if kind == "array" {
        let item = match &prop.items {
            Some(items) => items_type(plan, domain, items),
            None => quote!(::serde_json::Value),
        };
        return FieldType {
            tokens: quote!(Vec<#item>),
            extra: None,
        };
    }
    FieldType {
        tokens: primitive(kind),
        extra: None,
    }
}

/// The Rust type of an array's items.
pub(crate) fn items_type(plan: &Plan<'_>, domain: &str, items: &Items) -> TokenStream {
    match (&items.reference, items.kind.as_deref()) {
        (Some(reference), _) => ref_path(plan, domain, reference),
        (None, Some(kind)) => primitive(kind),
        (None, None) => quote!(::serde_json::Value),
    }
}

/// The Rust type of a JSON primitive; objects without properties and `any` are `Value`.
pub(crate) fn primitive(kind: &str) -> TokenStream {
    match kind {
        "string" => quote!(String),
        "integer" => quote!(i64),
        "number" => quote!(f64),
        "boolean" => quote!(bool),
        _ => quote!(::serde_json::Value),
    }
}

/// `NodeId` within the domain, `super::dom::NodeId` across domains.
pub(crate) fn ref_path(plan: &Plan<'_>, domain: &str, reference: &str) -> TokenStream {
    let (target_domain, id) = plan.resolve(domain, reference);
    let ident = names::type_ident(&id);
    if target_domain == domain {
        quote!(#ident)
    } else {
        let module = names::field_ident(&target_domain);
        quote!(super::#module::#ident)
    }
}

/// Whether the type behind a property's `$ref` is experimental.
fn ref_is_experimental(plan: &Plan<'_>, domain: &str, prop: &Property) -> bool {
    prop.reference
        .as_ref()
        .and_then(|reference| plan.type_def(&plan.resolve(domain, reference)))
        .is_some_and(|ty| ty.experimental)
}

/// How a struct is used, which decides derives and field shapes.
pub(crate) struct StructShape<'a> {
    pub(crate) domain: &'a str,
    /// The owner name used by `fixup` and box decisions (type id, or `cmd.returns`/`event`).
    pub(crate) owner_key: &'a str,
    pub(crate) name: &'a proc_macro2::Ident,
    pub(crate) dirs: Directions,
    pub(crate) doc: TokenStream,
    /// Params get a constructor and setters.
    pub(crate) builder: bool,
}

/// A struct with serde impls for the directions it travels, plus inline enums it needs.
pub(crate) fn struct_tokens(
    plan: &Plan<'_>,
    shape: &StructShape<'_>,
    props: &[Property],
) -> TokenStream {
    let StructShape {
        domain,
        owner_key,
        name,
        dirs,
        doc,
        builder,
    } = shape;
    let mut extras = Vec::new();
    let mut fields = Vec::new();
    let mut required = Vec::new();
    let mut optional = Vec::new();
    let mut wire = Vec::new();
    for prop in props {
        let ident = names::field_ident(&prop.name);
        let boxed = plan.is_boxed(domain, owner_key, &prop.name);
        let FieldType { tokens: ty, extra } =
            field_type(plan, domain, &name.to_string(), prop, boxed);
        extras.extend(extra);
        let relaxed = dirs.de
            && !prop.optional
            && fixup::relax_required(
                domain,
                owner_key,
                &prop.name,
                prop.experimental,
                ref_is_experimental(plan, domain, prop),
            );
        let is_optional = prop.optional || relaxed;
        wire.push(WireField {
            ident: ident.clone(),
            name: prop.name.clone(),
            ty: ty.clone(),
            optional: is_optional,
        });
        let field_doc = doc_attrs_plain(
            prop.description.as_deref(),
            prop.experimental,
            prop.deprecated,
        );
        let full_ty = if is_optional {
            quote!(Option<#ty>)
        } else {
            ty.clone()
        };
        fields.push(quote! { #field_doc pub #ident: #full_ty, });
        if is_optional {
            optional.push((ident, ty));
        } else {
            required.push((ident, ty));
        }
    }
    let mut derives = vec![quote!(Debug), quote!(Clone)];
    if *builder && required.is_empty() {
        derives.push(quote!(Default));
    }
    let ser_impl = if dirs.ser {
        serialize_tokens(name, &wire)
    } else {
        quote!()
    };
    let de_impl = if dirs.de {
        deserialize_tokens(name, &wire)
    } else {
        quote!()
    };
    let builder_impl = if *builder && !fields.is_empty() {
        builder_tokens(name, &required, &optional)
    } else {
        quote!()
    };
    quote! {
        #doc
        #[derive(#(#derives),*)]
        pub struct #name { #(#fields)* }
        #ser_impl
        #de_impl
        #builder_impl
        #(#extras)*
    }
}

/// A struct field as it travels: its Rust name and type, its wire name, whether it may be absent.
pub(crate) struct WireField {
    ident: proc_macro2::Ident,
    name: String,
    ty: TokenStream,
    optional: bool,
}

/// `Serialize` as a JSON object, leaving out absent optional fields. Hand-emitted rather than
/// derived: serde's derive costs the build several times the code (see `wire` in the engine).
fn serialize_tokens(name: &proc_macro2::Ident, fields: &[WireField]) -> TokenStream {
    let entries = fields.iter().map(|field| {
        let WireField {
            ident,
            name,
            optional,
            ..
        } = field;
        if *optional {
            quote!(wire::entry_opt(&mut __map, #name, &self.#ident)?;)
        } else {
            quote!(wire::entry(&mut __map, #name, &self.#ident)?;)
        }
    });
    let map = if fields.is_empty() {
        quote!(__map)
    } else {
        quote!(mut __map)
    };
    quote! {
        impl ::serde::Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, __serializer: S) -> Result<S::Ok, S::Error> {
                let #map = wire::begin(__serializer)?;
                #(#entries)*
                ::serde::ser::SerializeMap::end(__map)
            }
        }
    }
}

/// `Deserialize` from a JSON object through `wire::FromMap`: one match over the wire names;
/// unknown keys are skipped, absent or `null` optional fields are `None`.
///
/// The fields gather in one tuple and the required ones are checked by one pattern, so an early
/// return drops one value and each body stays linear in its fields: with a local and a `?` per
/// field, drop elaboration and borrow checking grew with fields × exits.
fn deserialize_tokens(name: &proc_macro2::Ident, fields: &[WireField]) -> TokenStream {
    let slot_types = fields
        .iter()
        .map(|WireField { ty, .. }| quote!(Option<#ty>));
    let nones = fields.iter().map(|_| quote!(None));
    let arms = fields.iter().enumerate().map(|(index, field)| {
        let index = proc_macro2::Literal::usize_unsuffixed(index);
        let name = &field.name;
        if field.optional {
            quote!(#name => wire::optional(&mut __map, &mut __fields.#index),)
        } else {
            quote!(#name => wire::value(&mut __map, &mut __fields.#index),)
        }
    });
    let patterns = fields.iter().map(
        |WireField {
             ident, optional, ..
         }| {
            if *optional {
                quote!(#ident)
            } else {
                quote!(Some(#ident))
            }
        },
    );
    let idents = fields.iter().map(|WireField { ident, .. }| ident);
    let missing = fields
        .iter()
        .enumerate()
        .filter(|(_, field)| !field.optional)
        .map(|(index, field)| {
            let index = proc_macro2::Literal::usize_unsuffixed(index);
            let name = &field.name;
            quote!((#name, __fields.#index.is_none()))
        })
        .collect::<Vec<_>>();
    let missing_arm = if missing.is_empty() {
        quote!()
    } else {
        quote!(__fields => Err(wire::missing(&[#(#missing),*])),)
    };
    quote! {
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                wire::deserialize(deserializer)
            }
        }
        impl<'de> wire::FromMap<'de> for #name {
            fn from_map<A: ::serde::de::MapAccess<'de>>(mut __map: A) -> Result<Self, A::Error> {
                let mut __fields: (#(#slot_types,)*) = (#(#nones,)*);
                while let Some(__key) = wire::key(&mut __map)? {
                    match __key.as_str() {
                        #(#arms)*
                        _ => wire::skip(&mut __map),
                    }?;
                }
                match __fields {
                    (#(#patterns,)*) => Ok(Self { #(#idents),* }),
                    #missing_arm
                }
            }
        }
    }
}

/// `new(required...)` plus one setter per optional field.
fn builder_tokens(
    name: &proc_macro2::Ident,
    required: &[(proc_macro2::Ident, TokenStream)],
    optional: &[(proc_macro2::Ident, TokenStream)],
) -> TokenStream {
    let arg = |ty: &TokenStream| {
        if ty.to_string() == "String" {
            (quote!(impl Into<String>), quote!(.into()))
        } else {
            (ty.clone(), quote!())
        }
    };
    let params = required.iter().map(|(ident, ty)| {
        let (arg_ty, _) = arg(ty);
        quote!(#ident: #arg_ty)
    });
    let inits = required.iter().map(|(ident, ty)| {
        let (_, conv) = arg(ty);
        quote!(#ident: #ident #conv)
    });
    let nones = optional.iter().map(|(ident, _)| quote!(#ident: None));
    let setters = optional.iter().map(|(ident, ty)| {
        let (arg_ty, conv) = arg(ty);
        quote! {
            #[doc = " Sets the optional field of the same name."]
            #[inline]
            pub fn #ident(mut self, #ident: #arg_ty) -> Self {
                self.#ident = Some(#ident #conv);
                self
            }
        }
    });
    let new_fn = if required.is_empty() {
        quote!()
    } else {
        quote! {
            #[doc = " Builds the value from its required fields; optional ones start empty."]
            #[inline]
            pub fn new(#(#params),*) -> Self {
                Self { #(#inits,)* #(#nones,)* }
            }
        }
    };
    quote! {
        impl #name {
            #new_fn
            #(#setters)*
        }
    }
}

/// Field docs: the description and status notes, no link.
fn doc_attrs_plain(description: Option<&str>, experimental: bool, deprecated: bool) -> TokenStream {
    let mut lines: Vec<String> = description
        .map(|t| t.lines().map(|l| format!(" {}", l.trim())).collect())
        .unwrap_or_default();
    if experimental || deprecated {
        let note = match (experimental, deprecated) {
            (true, true) => " **Experimental.** **Deprecated.**",
            (true, false) => " **Experimental.**",
            _ => " **Deprecated.**",
        };
        lines.push(note.to_string());
    }
    quote! { #( #[doc = #lines] )* }
}
