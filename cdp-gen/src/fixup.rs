//! Every deliberate deviation from the upstream protocol JSON, in one place.
//!
//! The JSON in `protocol-json/` is never edited; when the browser's real traffic disagrees with
//! what the JSON promises, the generator bends here and nowhere else. The deviations:
//!
//! 1. **Experimental fields the browser may omit.** A required field that is experimental, or
//!    whose type is experimental, is generated as `Option<T>` in types the client reads
//!    (returns, events and the types they reach). Experimental fields come and go between
//!    browser builds; one missing field must not fail a whole message.
//! 2. **Fields that real traffic omits although upstream calls them required.** Listed in
//!    [`OMITTED_BY_BROWSERS`]; each was seen missing in a recorded session (see the decode test
//!    in `tests/e2e/protocol.rs`). They are generated as `Option<T>`.
//! 3. **Unknown enum values.** Every string enum gets a catch-all `Unrecognized(String)`
//!    variant, so a newer browser's value decodes instead of failing.
//!
//! Choices that are not deviations (how names are formed, which impls are emitted) live in
//! `names.rs` and `emit/`.

/// `(domain, owner, field)` triples that browsers omit although upstream marks them required.
/// `owner` is a type id, or `command.returns` / `event` for command returns and event parameters.
pub(crate) const OMITTED_BY_BROWSERS: &[(&str, &str, &str)] = &[];

/// Whether a required field must still be generated as optional in types the client reads.
pub(crate) fn relax_required(
    domain: &str,
    owner: &str,
    field: &str,
    field_experimental: bool,
    type_experimental: bool,
) -> bool {
    field_experimental
        || type_experimental
        || OMITTED_BY_BROWSERS
            .iter()
            .any(|(d, o, f)| *d == domain && *o == owner && *f == field)
}
