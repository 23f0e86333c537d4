//! `GenError`: everything that can go wrong while turning protocol JSON into Rust.
//!
//! Every variant names the protocol path it is about (`Page.navigate.params.url`), so a
//! failure in a 1.6 MB input points at the one entry to look at.

/// An error from the generator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenError {
    /// The input is not protocol JSON of the expected shape.
    #[error("protocol json does not parse")]
    Parse(#[source] serde_json::Error),
    /// A `$ref` names a type that no domain defines.
    #[error("{path}: unknown type reference `{target}`")]
    UnknownRef {
        /// Where the reference stands.
        path: String,
        /// The reference as written.
        target: String,
    },
    /// A type, property or item has a shape the generator does not understand.
    #[error("{path}: unsupported shape: {what}")]
    Unsupported {
        /// Where the shape stands.
        path: String,
        /// What is wrong with it.
        what: String,
    },
    /// A requested domain is not in the protocol.
    #[error("unknown domain `{0}` (not in the protocol json)")]
    UnknownDomain(String),
    /// A requested command or event is not in the protocol.
    #[error("unknown command or event `{0}` (not in the protocol json)")]
    UnknownMethod(String),
    /// Two generated items would share one Rust name.
    #[error("{path}: generated name `{name}` collides with another item")]
    NameCollision {
        /// Where the second item stands.
        path: String,
        /// The contested name.
        name: String,
    },
    /// The generated tokens are not valid Rust (a generator bug).
    #[cfg(feature = "format")]
    #[error("generated code does not parse as rust")]
    Syntax(#[source] syn::Error),
}
