//! The private-network guard: which addresses a request may reach when a browser context
//! refuses private networks (an audit's `--block-private-network`), and the address classifier
//! it rests on.
//!
//! Owns: [`AddressClass`] and [`classify_ip`] (loopback, private, link-local, unique-local,
//! unspecified, reserved, public — IPv4-mapped and NAT64 IPv6 addresses are classified by the
//! IPv4 address they carry), [`NetworkGuard`] (the exempt origins), and the decision for one
//! host: an IP literal or a `localhost` name is decided at once, any other name only after it
//! is resolved (every address it resolves to must be public). Pure except [`resolve_blocks`],
//! which asks the system resolver; everything else is unit-tested from plain values.
//!
//! Does not stop DNS rebinding between this check and the browser's own resolution: the guard
//! keeps an audit from wandering into private networks by links and redirects, it is not a
//! sandbox.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::rules::UrlOrigin;
use super::OriginPattern;

/// What kind of network an address belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`, and `localhost` names.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, the shared `100.64/10`, and the deprecated IPv6
    /// site-local `fec0::/10`.
    Private,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`.
    UniqueLocal,
    /// `0.0.0.0/8`, `::` (reaches the local host on Linux).
    Unspecified,
    /// Multicast, broadcast and the reserved `240/4`: never a web server.
    Reserved,
    /// Anything else.
    Public,
}

impl AddressClass {
    /// `loopback`, `private`, `link-local`, `unique-local`, `unspecified`, `reserved`,
    /// `public`.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link-local",
            AddressClass::UniqueLocal => "unique-local",
            AddressClass::Unspecified => "unspecified",
            AddressClass::Reserved => "reserved",
            AddressClass::Public => "public",
        }
    }

    /// Whether the guard lets a request reach it (only public addresses).
    pub fn is_public(self) -> bool {
        self == AddressClass::Public
    }
}

/// The class of an IP address.
///
/// ```
/// use chromate::intercept::{classify_ip, AddressClass};
/// assert_eq!(classify_ip("10.1.2.3".parse().unwrap()), AddressClass::Private);
/// assert_eq!(classify_ip("::ffff:127.0.0.1".parse().unwrap()), AddressClass::Loopback);
/// assert_eq!(classify_ip("93.184.215.14".parse().unwrap()), AddressClass::Public);
/// ```
pub fn classify_ip(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, _, _] = ip.octets();
    match (a, b) {
        (127, _) => AddressClass::Loopback,
        (0, _) => AddressClass::Unspecified,
        (10, _) | (192, 168) => AddressClass::Private,
        (172, 16..=31) | (100, 64..=127) => AddressClass::Private,
        (169, 254) => AddressClass::LinkLocal,
        (224..=255, _) => AddressClass::Reserved,
        _ => AddressClass::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    if ip.is_loopback() {
        return AddressClass::Loopback;
    }
    if ip.is_unspecified() {
        return AddressClass::Unspecified;
    }
    let segments = ip.segments();
    // `::ffff:a.b.c.d` (IPv4-mapped) and `64:ff9b::a.b.c.d` (NAT64) carry an IPv4 address.
    let embedded = match segments {
        [0, 0, 0, 0, 0, 0xffff, high, low] | [0x64, 0xff9b, 0, 0, 0, 0, high, low] => {
            Some(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low)))
        }
        _ => None,
    };
    if let Some(v4) = embedded {
        return classify_v4(v4);
    }
    match segments[0] {
        first if first & 0xfe00 == 0xfc00 => AddressClass::UniqueLocal,
        first if first & 0xffc0 == 0xfe80 => AddressClass::LinkLocal,
        first if first & 0xffc0 == 0xfec0 => AddressClass::Private,
        first if first & 0xff00 == 0xff00 => AddressClass::Reserved,
        _ => AddressClass::Public,
    }
}

/// A browser context's guard: requests to non-public addresses fail, except to the exempt
/// origins (a trusted dev or staging host named on purpose).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkGuard {
    /// Origins the guard lets through whatever their address.
    pub exempt: Vec<OriginPattern>,
}

/// What the guard makes of one request URL before any resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GuardCheck {
    /// Not a network URL (`data:`, `about:`), or an exempt origin.
    Pass,
    /// An address literal or a `localhost` name of this class.
    Known(AddressClass),
    /// A name to resolve first: host and port.
    Resolve(String, u16),
}

impl NetworkGuard {
    /// The check for `url`.
    pub(crate) fn check(&self, url: &str) -> GuardCheck {
        let Some(origin) = UrlOrigin::parse(url) else {
            return GuardCheck::Pass;
        };
        if !matches!(
            origin.scheme.as_str(),
            "http" | "https" | "ws" | "wss" | "ftp"
        ) {
            return GuardCheck::Pass;
        }
        if self.exempt.iter().any(|pattern| pattern.matches(url)) {
            return GuardCheck::Pass;
        }
        let host = origin
            .host
            .strip_prefix('[')
            .and_then(|host| host.strip_suffix(']'))
            .unwrap_or(&origin.host);
        let host = host.trim_end_matches('.');
        if let Ok(ip) = host.parse::<IpAddr>() {
            return GuardCheck::Known(classify_ip(ip));
        }
        if host == "localhost" || host.ends_with(".localhost") {
            return GuardCheck::Known(AddressClass::Loopback);
        }
        GuardCheck::Resolve(host.to_owned(), origin.port.unwrap_or(80))
    }
}

/// The first non-public class `host` resolves to, `None` when every address is public. A name
/// that does not resolve is let through: the browser's own lookup then fails the request.
pub(crate) async fn resolve_blocks(host: &str, port: u16) -> Option<AddressClass> {
    let addresses = tokio::net::lookup_host((host, port)).await.ok()?;
    addresses
        .map(|address| classify_ip(address.ip()))
        .find(|class| !class.is_public())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{policy::OriginPattern, policy::PortMatch};

    fn class(text: &str) -> &'static str {
        classify_ip(text.parse().expect("an address")).as_str()
    }

    #[test]
    fn ipv4_ranges_are_classified() {
        for (address, expected) in [
            ("127.0.0.1", "loopback"),
            ("127.255.255.254", "loopback"),
            ("10.0.0.1", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("172.32.0.1", "public"),
            ("172.15.255.255", "public"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "private"),
            ("100.128.0.1", "public"),
            ("169.254.169.254", "link-local"),
            ("0.0.0.0", "unspecified"),
            ("224.0.0.1", "reserved"),
            ("255.255.255.255", "reserved"),
            ("8.8.8.8", "public"),
            ("192.169.0.1", "public"),
        ] {
            assert_eq!(class(address), expected, "{address}");
        }
    }

    #[test]
    fn ipv6_ranges_are_classified() {
        for (address, expected) in [
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fc00::1", "unique-local"),
            ("fd12:3456::1", "unique-local"),
            ("fec0::1", "private"),
            ("ff02::1", "reserved"),
            ("::ffff:10.0.0.1", "private"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.1.1", "link-local"),
            ("64:ff9b::c0a8:101", "private"),
            ("2001:4860:4860::8888", "public"),
            ("::ffff:8.8.8.8", "public"),
        ] {
            assert_eq!(class(address), expected, "{address}");
        }
    }

    #[test]
    fn the_guard_checks_literals_and_localhost_at_once_and_resolves_other_names() {
        let guard = NetworkGuard::default();
        for (url, expected) in [
            (
                "http://127.0.0.1:8080/x",
                GuardCheck::Known(AddressClass::Loopback),
            ),
            (
                "http://[::1]:8080/",
                GuardCheck::Known(AddressClass::Loopback),
            ),
            (
                "https://[fd00::2]/",
                GuardCheck::Known(AddressClass::UniqueLocal),
            ),
            (
                "http://app.localhost:3000/",
                GuardCheck::Known(AddressClass::Loopback),
            ),
            (
                "http://LOCALHOST./",
                GuardCheck::Known(AddressClass::Loopback),
            ),
            (
                "http://192.168.0.10/admin",
                GuardCheck::Known(AddressClass::Private),
            ),
            (
                "https://example.test/a",
                GuardCheck::Resolve("example.test".to_owned(), 443),
            ),
        ] {
            assert_eq!(guard.check(url), expected, "{url}");
        }
        assert_eq!(guard.check("data:text/plain,hi"), GuardCheck::Pass);
        assert_eq!(guard.check("about:blank"), GuardCheck::Pass);
    }

    #[test]
    fn exempt_origins_pass_the_guard() {
        let guard = NetworkGuard {
            exempt: vec![OriginPattern {
                scheme: "http".into(),
                host: "127.0.0.1".into(),
                port: PortMatch::Exact(4000),
            }],
        };
        assert_eq!(guard.check("http://127.0.0.1:4000/page"), GuardCheck::Pass);
        assert_eq!(
            guard.check("http://127.0.0.1:4001/page"),
            GuardCheck::Known(AddressClass::Loopback)
        );
    }
}
