//! The Chrome DevTools Protocol, typed: generated bindings plus the traits that tie them to the
//! transport.
//!
//! The bindings come from `protocol-json/` through cdp-gen at build time; this module is the
//! only `include!` of them and nobody edits or copies them. Each domain is a module
//! (`cdp::page`, `cdp::runtime`, ...). The commands and events the engine uses always compile;
//! a domain's cargo feature (`domain-Page`, ...) adds the whole domain, `all-domains` every one.
//! Otherwise a domain holds only what something chosen reaches (the engine's methods, or `Page`
//! whole bringing `debugger::SearchMatch`). A command's params type implements [`Command`],
//! naming its method and its typed answer; an event type implements [`Event`].
//! [`CdpEvent::decode`] reads any event and never drops one: what it cannot decode comes back as
//! [`CdpEvent::Raw`] with the error.
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

/// Events that parsed as JSON but did not decode into their typed form, since the process
/// started ([`decode_failures`]).
static DECODE_FAILURES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many events the engine's state handlers could not decode into their typed form since
/// the process started (a browser whose protocol renamed a field the engine needs). Each is
/// also logged as a `tracing` warning naming the method and the field. Nonzero means waits
/// that depend on such events may time out: report it with the browser's version.
pub fn decode_failures() -> u64 {
    DECODE_FAILURES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The typed event `E` from its parameters, or `None` when they do not decode (a missing
/// required field, a wrong type). For the state handlers on the reader task, which skip an
/// event they cannot read; each failure is counted ([`decode_failures`]) and logged.
pub(crate) fn decode_event<E: Event>(params: &RawValue) -> Option<E> {
    match serde_json::from_str(params.get()) {
        Ok(event) => Some(event),
        Err(err) => {
            DECODE_FAILURES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            ::tracing::warn!(method = E::METHOD, error = %err, "cdp event did not decode; skipped");
            None
        }
    }
}

/// The answer of a command that returns no values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmptyReturns {}

impl<'de> serde::Deserialize<'de> for EmptyReturns {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        wire::deserialize(deserializer)
    }
}

impl<'de> wire::FromMap<'de> for EmptyReturns {
    fn from_map<A: serde::de::MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while wire::key(&mut map)?.is_some() {
            wire::skip(&mut map)?;
        }
        Ok(Self {})
    }
}

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
            #[inline]
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $value,)*
                    Self::Unrecognized(value) => value,
                }
            }
        }
        impl ::std::str::FromStr for $name {
            type Err = ::std::convert::Infallible;
            #[inline]
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

/// Serde for a newtype, as its inner value.
macro_rules! cdp_newtype_serde {
    ($name:ident, $inner:ty) => {
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                ::serde::Serialize::serialize(&self.0, serializer)
            }
        }
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                <$inner>::deserialize(deserializer).map(Self)
            }
        }
    };
}

/// A string identifier newtype (`FrameId`, `RequestId`, ...).
macro_rules! cdp_string {
    ($(#[$meta:meta])* pub struct $name:ident;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub String);
        cdp_newtype_serde!($name, String);
        impl $name {
            /// The identifier as sent on the wire.
            #[inline]
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }
        impl From<String> for $name {
            #[inline]
            fn from(value: String) -> Self {
                Self(value)
            }
        }
        impl From<&str> for $name {
            #[inline]
            fn from(value: &str) -> Self {
                Self(value.to_string())
            }
        }
        impl ::std::fmt::Display for $name {
            #[inline]
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
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub i64);
        cdp_newtype_serde!($name, i64);
    };
}

/// A number newtype (`TimeSinceEpoch`, `MonotonicTime`, ...).
macro_rules! cdp_number {
    ($(#[$meta:meta])* pub struct $name:ident;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
        pub struct $name(pub f64);
        cdp_newtype_serde!($name, f64);
    };
}

/// What the generated serde impls call, written once here so the generated text stays small.
///
/// Structs deserialize through [`wire::FromMap`]: one `match` over the wire names, unknown keys
/// skipped, `null` or a missing key leaving an optional field `None`, a missing required field
/// failing with serde's `missing field` error. Structs serialize as maps, leaving out `None`s.
mod wire {
    use std::borrow::Cow;
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
    use serde::ser::{Serialize, SerializeMap};

    /// A struct read from a JSON object.
    pub(super) trait FromMap<'de>: Sized {
        fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
    }

    /// `Deserialize::deserialize` of every generated struct.
    pub(super) fn deserialize<'de, D: Deserializer<'de>, T: FromMap<'de>>(
        deserializer: D,
    ) -> Result<T, D::Error> {
        deserializer.deserialize_map(MapVisitor(PhantomData))
    }

    struct MapVisitor<T>(PhantomData<T>);

    impl<'de, T: FromMap<'de>> Visitor<'de> for MapVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::from_map(map)
        }
    }

    /// An object key, borrowed from the input when it has no escapes.
    pub(super) struct Key<'de>(Cow<'de, str>);

    impl Key<'_> {
        pub(super) fn as_str(&self) -> &str {
            &self.0
        }
    }

    impl<'de> Deserialize<'de> for Key<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_str(KeyVisitor)
        }
    }

    struct KeyVisitor;

    impl<'de> Visitor<'de> for KeyVisitor {
        type Value = Key<'de>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }

        fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Key<'de>, E> {
            Ok(Key(Cow::Borrowed(value)))
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<Key<'de>, E> {
            Ok(Key(Cow::Owned(value.to_string())))
        }

        fn visit_string<E: de::Error>(self, value: String) -> Result<Key<'de>, E> {
            Ok(Key(Cow::Owned(value)))
        }
    }

    /// The next key of `map`, if any.
    pub(super) fn key<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Key<'de>>, A::Error> {
        map.next_key()
    }

    /// Reads the value of a field into `slot`.
    pub(super) fn value<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
        map: &mut A,
        slot: &mut Option<T>,
    ) -> Result<(), A::Error> {
        *slot = Some(map.next_value()?);
        Ok(())
    }

    /// Reads the value of an optional field into `slot`; `null` leaves it `None`.
    pub(super) fn optional<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
        map: &mut A,
        slot: &mut Option<T>,
    ) -> Result<(), A::Error> {
        *slot = map.next_value()?;
        Ok(())
    }

    /// Skips the value of a key this build does not know.
    pub(super) fn skip<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
        map.next_value::<IgnoredAny>().map(|_| ())
    }

    /// Serde's `missing field` error for the first of `fields` (name, missing) that is missing.
    pub(super) fn missing<E: de::Error>(fields: &[(&'static str, bool)]) -> E {
        let name = fields
            .iter()
            .find(|(_, missing)| *missing)
            .map_or("?", |(name, _)| name);
        E::missing_field(name)
    }

    /// Starts serializing a struct as a map.
    pub(super) fn begin<S: serde::Serializer>(serializer: S) -> Result<S::SerializeMap, S::Error> {
        serializer.serialize_map(None)
    }

    /// Writes a field.
    pub(super) fn entry<M: SerializeMap, T: Serialize>(
        map: &mut M,
        name: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        map.serialize_entry(name, value)
    }

    /// Writes an optional field, unless it is `None`.
    pub(super) fn entry_opt<M: SerializeMap, T: Serialize>(
        map: &mut M,
        name: &'static str,
        value: &Option<T>,
    ) -> Result<(), M::Error> {
        match value {
            Some(value) => map.serialize_entry(name, value),
            None => Ok(()),
        }
    }
}

// Protocol prose is not rustdoc: it has brackets, angle brackets and bare URLs.
#[allow(
    missing_docs,
    clippy::all,
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls,
    rustdoc::invalid_rust_codeblocks,
    reason = "generated code, documented with the protocol's own prose"
)]
mod generated {
    use super::{wire, Command, EmptyReturns, Event, RawEvent};
    include!(concat!(env!("OUT_DIR"), "/cdp.rs"));
}

pub use generated::*;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, value::RawValue};

    fn decode(method: &str, params: &str) -> CdpEvent {
        let raw = RawValue::from_string(params.to_string()).expect("test JSON is valid");
        CdpEvent::decode(method, &raw)
    }

    #[test]
    fn an_event_that_does_not_decode_is_skipped_and_counted() {
        let before = decode_failures();
        // `Page.lifecycleEvent` with its `name` renamed: the typed form needs it.
        let renamed = RawValue::from_string(
            r#"{"frameId":"F","loaderId":"L","eventName":"load","timestamp":1.0}"#.to_owned(),
        )
        .expect("test JSON is valid");
        assert!(decode_event::<page::EventLifecycleEvent>(&renamed).is_none());
        let fine = RawValue::from_string(
            r#"{"frameId":"F","loaderId":"L","name":"load","timestamp":1.0}"#.to_owned(),
        )
        .expect("test JSON is valid");
        assert!(decode_event::<page::EventLifecycleEvent>(&fine).is_some());
        // Other tests may decode at the same time: at least this one failure was counted.
        assert!(decode_failures() > before);
    }

    #[test]
    fn params_serialize_with_wire_names_and_without_absent_fields() {
        let params = page::NavigateParams::new("http://127.0.0.1/").frame_id("F1".into());
        let value = serde_json::to_value(&params).expect("serializes");
        assert_eq!(value, json!({"url": "http://127.0.0.1/", "frameId": "F1"}));
        let value = serde_json::to_value(page::EnableParams::default()).expect("serializes");
        assert_eq!(value, json!({}));
    }

    #[test]
    fn events_skip_unknown_keys_and_read_null_optionals_as_absent() {
        let event = decode(
            "Page.frameStoppedLoading",
            r#"{"frameId":"F1","newerField":{"a":[1,2]},"frameId2":null}"#,
        );
        let CdpEvent::PageFrameStoppedLoading(event) = event else {
            panic!("not decoded: {event:?}");
        };
        assert_eq!(event.frame_id.as_str(), "F1");
        let returns: runtime::EvaluateReturns = serde_json::from_value(json!({
            "result": {"type": "string", "value": "x", "description": null},
        }))
        .expect("deserializes");
        assert_eq!(returns.result.description, None);
        assert!(returns.exception_details.is_none());
        let empty: EmptyReturns = serde_json::from_str(r#"{"later":[{}]}"#).expect("reads");
        assert_eq!(empty, EmptyReturns {});
    }

    #[test]
    fn a_missing_required_field_or_a_non_object_comes_back_raw_with_the_error() {
        let CdpEvent::Raw(raw) = decode("Page.frameStoppedLoading", r#"{"other":1}"#) else {
            panic!("decoded without its required field");
        };
        assert_eq!(
            raw.error.as_deref(),
            Some("missing field `frameId` at line 1 column 11")
        );
        let CdpEvent::Raw(raw) = decode("Page.frameStoppedLoading", "[1]") else {
            panic!("decoded an array");
        };
        let error = raw.error.unwrap_or_default();
        assert!(error.contains("expected a JSON object"), "{error}");
        let CdpEvent::Raw(raw) = decode("Page.frameStoppedLoading", r#"{"frameId":7}"#) else {
            panic!("decoded a number as a frame id");
        };
        assert!(raw.error.is_some());
    }

    #[test]
    fn unknown_enum_values_and_escaped_keys_decode() {
        let returns: runtime::EvaluateReturns =
            serde_json::from_str(r#"{"result":{"type":"brand-new","\u0076alue":5}}"#)
                .expect("deserializes");
        assert_eq!(
            returns.result.r#type,
            runtime::RemoteObjectType::Unrecognized("brand-new".into())
        );
        assert_eq!(returns.result.value, Some(json!(5)));
    }
}
