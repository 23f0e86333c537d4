//! The pure half of request interception: URL globs, origin patterns and the policy, and the
//! decision for one request. No CDP here, so all of it is unit-tested from plain strings.

use std::fmt;

/// The answer a mock gives: status, body and content type. CORS headers are added per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockResponse {
    /// HTTP status.
    pub status: u16,
    /// Response body (UTF-8 text).
    pub body: String,
    /// `Content-Type` header.
    pub content_type: String,
}

/// What a rule does with a matching request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterceptAction {
    /// Answer with this response; the server is never asked.
    Fulfil(MockResponse),
    /// Fail the request with `net::ERR_BLOCKED_BY_CLIENT`.
    Block,
}

/// One interception rule: a URL glob and what happens to requests matching it.
///
/// ```
/// use chromate::intercept::{InterceptAction, InterceptRule};
/// let rule = InterceptRule::new("m1", "https://api.example.com/*", InterceptAction::Block);
/// assert!(rule.matches("https://api.example.com/users?page=2"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterceptRule {
    /// The caller's id for the rule (journalled with what it did).
    pub id: String,
    /// Glob over the full URL, see [`glob_matches`].
    pub pattern: String,
    /// What a match gets.
    pub action: InterceptAction,
}

impl InterceptRule {
    /// A rule with `id`, `pattern` and `action`.
    pub fn new(id: impl Into<String>, pattern: impl Into<String>, action: InterceptAction) -> Self {
        Self {
            id: id.into(),
            pattern: pattern.into(),
            action,
        }
    }

    /// Whether `url` matches the rule's pattern.
    pub fn matches(&self, url: &str) -> bool {
        glob_matches(&self.pattern, url)
    }
}

/// A glob over the full URL: `*` and `**` match any characters including `/`, everything else
/// is literal; a pattern without `?` ignores the URL's query.
///
/// ```
/// assert!(chromate::intercept::glob_matches("*/api/*", "http://127.0.0.1:8080/api/user?id=1"));
/// assert!(!chromate::intercept::glob_matches("*/api/user?id=2", "http://127.0.0.1:8080/api/user?id=1"));
/// ```
pub fn glob_matches(pattern: &str, url: &str) -> bool {
    if pattern.contains('?') {
        wildcard_match(pattern.as_bytes(), url.as_bytes())
    } else {
        wildcard_match(pattern.as_bytes(), strip_query(url).as_bytes())
    }
}

/// `https://a/b?x=1#f` → `https://a/b#f`.
fn strip_query(url: &str) -> String {
    match url.find('?') {
        None => url.to_owned(),
        Some(start) => {
            let fragment = url[start..].find('#').map_or("", |idx| &url[start + idx..]);
            format!("{}{fragment}", &url[..start])
        }
    }
}

/// Iterative `*` matching with backtracking to the last star: no recursion, so a hostile
/// pattern cannot blow the stack.
fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            while p < pattern.len() && pattern[p] == b'*' {
                p += 1;
            }
            star = Some((p, t));
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    while p < pattern.len() && pattern[p] == b'*' {
        p += 1;
    }
    p == pattern.len()
}

/// The port part of an [`OriginPattern`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortMatch {
    /// No port written: the scheme's default port.
    Default,
    /// `:*`: any port.
    Any,
    /// That port.
    Exact(u16),
}

/// One `scheme://host[:port]` origin pattern; the host may be `*` or start with `*.` (any
/// subdomain, at any depth); `file://` has an empty host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginPattern {
    /// Lower-case scheme.
    pub scheme: String,
    /// Lower-case host, `*`, `*.<domain>`, or empty for `file://`.
    pub host: String,
    /// Which ports match.
    pub port: PortMatch,
}

impl fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        match self.port {
            PortMatch::Default => Ok(()),
            PortMatch::Any => write!(f, ":*"),
            PortMatch::Exact(port) => write!(f, ":{port}"),
        }
    }
}

impl OriginPattern {
    /// Parses one `scheme://host[:port]` pattern (`*` may replace the port or a leading host
    /// label; `file://` alone); a bad one is [`crate::Error::InvalidArgument`] saying why.
    ///
    /// ```
    /// let pattern = chromate::intercept::OriginPattern::parse("https://*.example.com:*").unwrap();
    /// assert_eq!(pattern.to_string(), "https://*.example.com:*");
    /// ```
    pub fn parse(entry: &str) -> crate::Result<OriginPattern> {
        let bad = |why: &str| {
            crate::Error::invalid_argument_of("origin", format!("bad origin {entry:?}: {why}"))
        };
        let Some((scheme, rest)) = entry.split_once("://") else {
            return Err(bad("expected scheme://host[:port]"));
        };
        let scheme = scheme.to_ascii_lowercase();
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return Err(bad("invalid scheme"));
        }
        if rest.contains(['/', '?', '#', '@']) {
            return Err(bad(
                "only scheme://host[:port] is allowed, no path, query or user",
            ));
        }
        if scheme == "file" {
            if !rest.is_empty() {
                return Err(bad("the file origin is written file://"));
            }
            return Ok(OriginPattern {
                scheme,
                host: String::new(),
                port: PortMatch::Default,
            });
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || rest.starts_with('[') => {
                let port = match port {
                    "*" => PortMatch::Any,
                    digits => PortMatch::Exact(
                        digits
                            .parse::<u16>()
                            .map_err(|_| bad("port must be 0-65535 or *"))?,
                    ),
                };
                (host, port)
            }
            _ => (rest, PortMatch::Default),
        };
        let host = host.to_ascii_lowercase();
        if host.is_empty() {
            return Err(bad("missing host"));
        }
        let plain = host.strip_prefix("*.").unwrap_or(&host);
        let host_ok = host == "*"
            || (host.starts_with('[') && host.ends_with(']'))
            || (!plain.is_empty()
                && plain.split('.').all(|label| {
                    !label.is_empty()
                        && label
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                }));
        if !host_ok {
            return Err(bad("invalid host (`*` may only replace a leading label)"));
        }
        Ok(OriginPattern { scheme, host, port })
    }

    /// Whether the origin of `url` matches. URLs without an origin (`about:`, `data:`, `blob:`)
    /// match nothing.
    pub fn matches(&self, url: &str) -> bool {
        let Some(origin) = UrlOrigin::parse(url) else {
            return false;
        };
        if origin.scheme != self.scheme {
            return false;
        }
        if origin.scheme == "file" {
            return true;
        }
        let host_ok = match self.host.strip_prefix("*.") {
            _ if self.host == "*" => true,
            Some(domain) => origin
                .host
                .strip_suffix(domain)
                .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
            None => origin.host == self.host,
        };
        let port_ok = match self.port {
            PortMatch::Any => true,
            PortMatch::Exact(port) => origin.port == Some(port),
            PortMatch::Default => origin.port == default_port(&self.scheme),
        };
        host_ok && port_ok
    }
}

/// Allowed and blocked origins (the server's `--allowed-origins`/`--blocked-origins`). A
/// request is blocked if it matches a blocked pattern, or an allow list exists and it matches
/// none; `about:`, `data:` and `blob:` URLs are never blocked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginPolicy {
    /// `Some` = only these origins may load.
    pub allowed: Option<Vec<OriginPattern>>,
    /// These origins never load.
    pub blocked: Vec<OriginPattern>,
}

impl OriginPolicy {
    /// Whether the policy lets nothing through that it would not anyway (no lists at all).
    pub fn is_empty(&self) -> bool {
        self.allowed.is_none() && self.blocked.is_empty()
    }

    /// Whether a request to `url` is blocked.
    ///
    /// ```
    /// use chromate::intercept::{OriginPattern, OriginPolicy, PortMatch};
    /// let policy = OriginPolicy {
    ///     allowed: None,
    ///     blocked: vec![OriginPattern { scheme: "https".into(), host: "*.ads.test".into(), port: PortMatch::Default }],
    /// };
    /// assert!(policy.blocks("https://x.ads.test/pixel.gif"));
    /// assert!(!policy.blocks("data:text/plain,hi"));
    /// ```
    pub fn blocks(&self, url: &str) -> bool {
        if never_blocked(url) {
            return false;
        }
        if self.blocked.iter().any(|pattern| pattern.matches(url)) {
            return true;
        }
        match &self.allowed {
            Some(allowed) => !allowed.iter().any(|pattern| pattern.matches(url)),
            None => false,
        }
    }
}

fn never_blocked(url: &str) -> bool {
    let lower = url.get(..5).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("about") && url.as_bytes().get(5) == Some(&b':'))
        || lower.starts_with("data:")
        || lower.starts_with("blob:")
}

/// The default port of a scheme, when it has one.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        "ftp" => Some(21),
        _ => None,
    }
}

/// Scheme, host and effective port of a URL.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UrlOrigin {
    pub(crate) scheme: String,
    /// Lower case; an IPv6 literal keeps its brackets.
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
}

impl UrlOrigin {
    pub(crate) fn parse(url: &str) -> Option<Self> {
        let (scheme, rest) = url.split_once(':')?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme == "file" {
            return Some(Self {
                scheme,
                host: String::new(),
                port: None,
            });
        }
        let rest = rest.strip_prefix("//")?;
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
        let (host, port) = match host_port.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (host, Some(port.parse::<u16>().ok()?)),
            _ => (host_port, None),
        };
        if host.is_empty() {
            return None;
        }
        let port = port.or_else(|| default_port(&scheme));
        Some(Self {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
        })
    }
}

/// Why a request was failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockedBy {
    /// A block rule ([`InterceptAction::Block`]).
    Mock,
    /// The [`OriginPolicy`].
    OriginPolicy,
    /// A browser context's [`crate::policy::NetworkGuard`]: the target is on a private network.
    PrivateNetwork,
    /// The browser refuses `file:` URLs ([`crate::Browser::set_file_urls_blocked`]).
    FileAccess,
}

impl BlockedBy {
    /// `mock`, `origin-policy`, `private-network` or `file-access`, as the logs write
    /// it.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockedBy::Mock => "mock",
            BlockedBy::OriginPolicy => "origin-policy",
            BlockedBy::PrivateNetwork => "private-network",
            BlockedBy::FileAccess => "file-access",
        }
    }
}

/// What interception did to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interception {
    /// Answered by the mock `rule_id` with `status`.
    Mocked {
        /// The rule's id.
        rule_id: String,
        /// The status it answered with (204 for a preflight).
        status: u16,
    },
    /// Failed with `net::ERR_BLOCKED_BY_CLIENT`.
    Blocked {
        /// The rule or the policy.
        by: BlockedBy,
        /// The block rule's id (`None` for the policy).
        rule_id: Option<String>,
    },
}

/// The decision for one request: the policy first (a guard rail a mock cannot lift), then the
/// first matching rule in order; `None` = let it through.
pub(crate) fn decide<'a>(
    rules: &'a [InterceptRule],
    policy: &OriginPolicy,
    url: &str,
) -> Option<(Interception, Option<&'a MockResponse>)> {
    if policy.blocks(url) {
        let blocked = Interception::Blocked {
            by: BlockedBy::OriginPolicy,
            rule_id: None,
        };
        return Some((blocked, None));
    }
    let rule = rules.iter().find(|rule| rule.matches(url))?;
    Some(match &rule.action {
        InterceptAction::Block => (
            Interception::Blocked {
                by: BlockedBy::Mock,
                rule_id: Some(rule.id.clone()),
            },
            None,
        ),
        InterceptAction::Fulfil(response) => (
            Interception::Mocked {
                rule_id: rule.id.clone(),
                status: response.status,
            },
            Some(response),
        ),
    })
}

/// Response headers of a mock: content type, and CORS headers echoing the request's `Origin`
/// with credentials allowed. `request_headers` are the request's (any case).
pub(crate) fn mock_headers(
    response: &MockResponse,
    request_headers: &[(String, String)],
) -> Vec<(String, String)> {
    let mut res = vec![("Content-Type".to_owned(), response.content_type.clone())];
    res.extend(cors_headers(request_headers));
    res
}

/// The answer to a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) of a mocked
/// URL: 204 echoing the requested method and headers. `None` if the request is no preflight.
pub(crate) fn preflight_headers(
    method: &str,
    request_headers: &[(String, String)],
) -> Option<Vec<(String, String)>> {
    if !method.eq_ignore_ascii_case("OPTIONS") {
        return None;
    }
    let requested_method = header(request_headers, "access-control-request-method")?;
    let mut res = cors_headers(request_headers);
    res.push((
        "Access-Control-Allow-Methods".to_owned(),
        requested_method.to_owned(),
    ));
    if let Some(requested) = header(request_headers, "access-control-request-headers") {
        res.push((
            "Access-Control-Allow-Headers".to_owned(),
            requested.to_owned(),
        ));
    }
    res.push(("Access-Control-Max-Age".to_owned(), "600".to_owned()));
    Some(res)
}

fn cors_headers(request_headers: &[(String, String)]) -> Vec<(String, String)> {
    match header(request_headers, "origin") {
        Some(origin) => vec![
            ("Access-Control-Allow-Origin".to_owned(), origin.to_owned()),
            (
                "Access-Control-Allow-Credentials".to_owned(),
                "true".to_owned(),
            ),
            ("Vary".to_owned(), "Origin".to_owned()),
        ],
        None => Vec::new(),
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}
