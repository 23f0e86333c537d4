//! Named protocol types: structs, string enums, and newtypes for identifiers and arrays.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::{doc_attrs, items_type, struct_tokens, DocLink, StructShape};
use crate::model::{Domain, TypeDef};
use crate::names;
use crate::plan::Plan;
use crate::GenError;

/// Every named type of `domain`.
pub(crate) fn domain_types(plan: &Plan<'_>, domain: &Domain) -> Result<TokenStream, GenError> {
    let mut res = TokenStream::new();
    for ty in &domain.types {
        res.extend(type_tokens(plan, domain, ty)?);
    }
    Ok(res)
}

fn type_tokens(plan: &Plan<'_>, domain: &Domain, ty: &TypeDef) -> Result<TokenStream, GenError> {
    let name = names::type_ident(&ty.id);
    let doc = doc_attrs(
        ty.description.as_deref(),
        ty.experimental,
        ty.deprecated,
        &domain.domain,
        DocLink::Type(&ty.id),
    );
    let tokens = match (ty.kind.as_str(), &ty.enum_values, &ty.properties) {
        ("string", Some(values), _) => enum_tokens(&name, values, doc),
        ("string", None, _) => quote!(cdp_string! { #doc pub struct #name; }),
        ("integer", _, _) => quote!(cdp_integer! { #doc pub struct #name; }),
        ("number", _, _) => quote!(cdp_number! { #doc pub struct #name; }),
        ("array", _, _) => {
            let item = match &ty.items {
                Some(items) => items_type(plan, &domain.domain, items),
                None => quote!(::serde_json::Value),
            };
            let dirs = plan.directions(&(domain.domain.clone(), ty.id.clone()));
            let ser = dirs.ser.then(|| {
                quote! {
                    impl ::serde::Serialize for #name {
                        fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                            ::serde::Serialize::serialize(&self.0, serializer)
                        }
                    }
                }
            });
            let de = dirs.de.then(|| {
                quote! {
                    impl<'de> ::serde::Deserialize<'de> for #name {
                        fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                            <Vec<#item>>::deserialize(deserializer).map(Self)
                        }
                    }
                }
            });
            quote! {
                #doc
                #[derive(Debug, Clone)]
                pub struct #name(pub Vec<#item>);
                #ser
                #de
            }
        }
        ("object", _, Some(props)) if !props.is_empty() => {
            let dirs = plan.directions(&(domain.domain.clone(), ty.id.clone()));
            let shape = StructShape {
                domain: &domain.domain,
                owner_key: &ty.id,
                name: &name,
                dirs,
                doc,
                builder: dirs.ser,
            };
            struct_tokens(plan, &shape, props)
        }
        ("object", _, _) | ("any", _, _) => quote!(#doc pub type #name = ::serde_json::Value;),
        (other, _, _) => {
            return Err(GenError::Unsupported {
                path: format!("{}.{}", domain.domain, ty.id),
                what: format!("type `{other}`"),
            })
        }
    };
    Ok(tokens)
}

/// A string enum through `cdp_enum!`, which adds the `Unrecognized(String)` catch-all.
pub(crate) fn enum_tokens(name: &Ident, values: &[String], doc: TokenStream) -> TokenStream {
    let mut seen = std::collections::HashSet::new();
    let variants = values.iter().map(|value| {
        let mut variant = names::pascal(value);
        if variant == "Self" {
            variant.push('_');
        }
        while !seen.insert(variant.clone()) || variant == "Unrecognized" {
            variant.push('_');
        }
        let ident = names::type_ident(&variant);
        quote!(#ident = #value)
    });
    quote! {
        cdp_enum! { #doc pub enum #name { #(#variants),* } }
    }
}
