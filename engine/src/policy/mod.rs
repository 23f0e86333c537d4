//! What a request may do, decided without the browser: mock and block rules with their URL
//! globs, origin patterns and the origin policy, the private-network guard's address classes,
//! and what interception did to a request ([`Interception`], which the journal records). No CDP
//! here: `intercept/` applies these decisions to the browser's sessions.

pub(crate) mod guard;
pub(crate) mod rules;

pub(crate) use guard::GuardCheck;
pub use guard::{classify_ip, AddressClass, NetworkGuard};
pub(crate) use rules::decide;
pub use rules::{
    glob_matches, BlockedBy, InterceptAction, InterceptRule, Interception, MockResponse,
    OriginPattern, OriginPolicy, PortMatch,
};

#[cfg(test)]
mod tests;
