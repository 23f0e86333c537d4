//! A serde mirror of the protocol JSON that browsers publish at `/json/protocol`.
//!
//! It only reads; it neither checks references nor decides names (see `plan` and `names`).

use serde::Deserialize;

/// The whole protocol document.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Protocol {
    /// Protocol version (`1.3`).
    pub(crate) version: Version,
    /// Every domain the browser reports.
    pub(crate) domains: Vec<Domain>,
}

/// `{"major": "1", "minor": "3"}`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Version {
    /// Major version.
    pub(crate) major: String,
    /// Minor version.
    pub(crate) minor: String,
}

/// One domain: `Page`, `Runtime`, ...
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Domain {
    /// Domain name as upstream spells it.
    pub(crate) domain: String,
    /// Upstream description.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// Marked experimental upstream.
    #[serde(default)]
    pub(crate) experimental: bool,
    /// Marked deprecated upstream.
    #[serde(default)]
    pub(crate) deprecated: bool,
    /// Named types.
    #[serde(default)]
    pub(crate) types: Vec<TypeDef>,
    /// Commands (methods).
    #[serde(default)]
    pub(crate) commands: Vec<Command>,
    /// Events.
    #[serde(default)]
    pub(crate) events: Vec<Event>,
}

/// A named type of a domain.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct TypeDef {
    /// Type name (`NodeId`).
    pub(crate) id: String,
    /// Upstream description.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// JSON type: `object`, `string`, `integer`, `number`, `array`.
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// Allowed string values, for string enums.
    #[serde(rename = "enum", default)]
    pub(crate) enum_values: Option<Vec<String>>,
    /// Fields, for objects.
    #[serde(default)]
    pub(crate) properties: Option<Vec<Property>>,
    /// Item type, for arrays.
    #[serde(default)]
    pub(crate) items: Option<Box<Items>>,
    /// Marked experimental upstream.
    #[serde(default)]
    pub(crate) experimental: bool,
    /// Marked deprecated upstream.
    #[serde(default)]
    pub(crate) deprecated: bool,
}

/// A property of an object type, a command parameter or return value, or an event parameter.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Property {
    /// Field name as sent on the wire.
    pub(crate) name: String,
    /// Upstream description.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// May be absent.
    #[serde(default)]
    pub(crate) optional: bool,
    /// Marked experimental upstream.
    #[serde(default)]
    pub(crate) experimental: bool,
    /// Marked deprecated upstream.
    #[serde(default)]
    pub(crate) deprecated: bool,
    /// A named type (`DOM.NodeId` or, within the domain, `NodeId`).
    #[serde(rename = "$ref", default)]
    pub(crate) reference: Option<String>,
    /// An inline JSON type.
    #[serde(rename = "type", default)]
    pub(crate) kind: Option<String>,
    /// Item type, for arrays.
    #[serde(default)]
    pub(crate) items: Option<Box<Items>>,
    /// Allowed string values, for inline string enums.
    #[serde(rename = "enum", default)]
    pub(crate) enum_values: Option<Vec<String>>,
}

/// The item type of an array.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Items {
    /// A named type.
    #[serde(rename = "$ref", default)]
    pub(crate) reference: Option<String>,
    /// An inline JSON type.
    #[serde(rename = "type", default)]
    pub(crate) kind: Option<String>,
}

/// A command (`Page.navigate`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Command {
    /// Method name without the domain.
    pub(crate) name: String,
    /// Upstream description.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// Marked experimental upstream.
    #[serde(default)]
    pub(crate) experimental: bool,
    /// Marked deprecated upstream.
    #[serde(default)]
    pub(crate) deprecated: bool,
    /// Parameters.
    #[serde(default)]
    pub(crate) parameters: Vec<Property>,
    /// Return values.
    #[serde(default)]
    pub(crate) returns: Vec<Property>,
    /// Another domain that implements this command.
    #[serde(default)]
    pub(crate) redirect: Option<String>,
}

/// An event (`Page.loadEventFired`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Event {
    /// Event name without the domain.
    pub(crate) name: String,
    /// Upstream description.
    #[serde(default)]
    pub(crate) description: Option<String>,
    /// Marked experimental upstream.
    #[serde(default)]
    pub(crate) experimental: bool,
    /// Marked deprecated upstream.
    #[serde(default)]
    pub(crate) deprecated: bool,
    /// Parameters.
    #[serde(default)]
    pub(crate) parameters: Vec<Property>,
}
