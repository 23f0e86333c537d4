//! The Chrome DevTools Protocol, typed: generated bindings plus the traits that tie them to the
//! transport.
//!
//! The bindings come from `protocol-json/` through cdp-gen at build time; this module is the
//! only `include!` of them and nobody edits or copies them. Each domain is a module
//! (`cdp::page`, `cdp::runtime`, ...), present when its cargo feature (or a feature that
//! references it) is on. A command's params type implements [`Command`], naming its method and
//! its typed answer; an event type implements [`Event`]. [`CdpEvent::decode`] reads any event and
//! never drops one: what it cannot decode comes back as [`CdpEvent::Raw`] with the error.
//!
//! Escape hatch: `Session::send_raw` sends any method with JSON params and answers JSON.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

/// A protocol command: the params type names its method and its typed answer.
pub trait Command: Serialize {
    /// The protocol method (`Page.navigate`).
    const METHOD: &'static str;
    /// What the browser answers.
    type Returns: DeserializeOwned;
}

/// A protocol event type.
pub trait Event: DeserializeOwned {
    /// The protocol method (`Page.loadEventFired`).
    const METHOD: &'static str;
}

/// The answer of a command that returns no values.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct EmptyReturns {}

/// An event kept as JSON: from a domain this build does not compile, or one that failed to
/// decode (then `error` says why).
#[derive(Debug, Clone)]
pub struct RawEvent {
    /// The protocol method.
    pub method: String,
    /// The parameters as received.
    pub params: Box<RawValue>,
    /// The decoding error, if decoding was attempted and failed.
    pub error: Option<String>,
}

impl RawEvent {
    fn new(method: &str, params: &RawValue, error: Option<String>) -> Self {
        Self {
            method: method.to_string(),
            params: params.to_owned(),
            error,
        }
    }
}

/// A string enum with a catch-all `Unrecognized(String)` for values newer browsers add.
macro_rules! cdp_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($variant:ident = $value:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $(#[doc = concat!("`\"", $value, "\"`")] $variant,)*
            /// A value this build does not know.
            Unrecognized(String),
        }
        impl $name {
            /// The protocol spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $value,)*
                    Self::Unrecognized(value) => value,
                }
            }
        }
        impl ::std::str::FromStr for $name {
            type Err = ::std::convert::Infallible;
            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Ok(match value {
                    $($value => Self::$variant,)*
                    _ => Self::Unrecognized(value.to_string()),
                })
            }
        }
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <::std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                Ok(match value.parse() {
                    Ok(parsed) => parsed,
                    Err(never) => match never {},
                })
            }
        }
    };
}

/// A string identifier newtype (`FrameId`, `RequestId`, ...).
macro_rules! cdp_string {
    ($(#[$meta:meta])* pub struct $name:ident;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);
        impl $name {
            /// The identifier as sent on the wire.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }
        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_string())
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

/// An integer identifier newtype (`NodeId`, `BackendNodeId`, ...).
macro_rules! cdp_integer {
    ($(#[$meta:meta])* pub struct $name:ident;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);
    };
}

/// A number newtype (`TimeSinceEpoch`, `MonotonicTime`, ...).
macro_rules! cdp_number {
    ($(#[$meta:meta])* pub struct $name:ident;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub f64);
    };
}

// Protocol prose is not rustdoc: it has brackets, angle brackets and bare URLs.
#[allow(
    missing_docs,
    clippy::all,
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls,
    rustdoc::invalid_rust_codeblocks
)]
mod generated {
    use super::{Command, EmptyReturns, Event, RawEvent};
    include!(concat!(env!("OUT_DIR"), "/cdp.rs"));
}

pub use generated::*;
