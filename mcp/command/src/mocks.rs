//! The session's mock table (docs/mcp.md#mocks) and URL glob matching, shared by browser_mock and the
//! navigation tools.
//!
//! Owns: the table (ids `m<N>` never reused, at most 20 active, creation order), the default
//! content type, handing the table and the origin policy (docs/mcp.md#origin-policy) to the engine ([`install`], at
//! launch and relaunch and after every change), and naming what blocked a navigation
//! ([`blocked_by`]). Does not intercept requests itself: the engine's interceptor
//! (`chromate::Browser::set_intercept_rules`) matches each request with the same glob
//! ([`glob_matches`]). The tool's arguments and answers are `tools/mock.rs`.

use serde_json::{json, Value};

use crate::config::Config;
use crate::error::{ToolError, ToolErrorCode};

/// Most active mocks (docs/mcp.md#mocks).
pub const MAX_MOCKS: usize = 20;

/// What a matching request gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MockKind {
    /// Answered with this response (plus CORS headers, docs/mcp.md#mocks).
    Respond {
        status: u16,
        body: String,
        content_type: String,
    },
    /// Failed with `net::ERR_BLOCKED_BY_CLIENT`.
    Block,
}

/// One active mock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockRule {
    pub id: String,
    pub pattern: String,
    pub kind: MockKind,
}

impl MockRule {
    pub fn to_json(&self) -> Value {
        match &self.kind {
            MockKind::Respond { status, .. } => {
                json!({ "id": self.id, "pattern": self.pattern, "kind": "mock", "status": status })
            }
            MockKind::Block => json!({ "id": self.id, "pattern": self.pattern, "kind": "block" }),
        }
    }
}

/// The session's mocks, in creation order.
#[derive(Debug, Default, Clone)]
pub struct MockTable {
    rules: Vec<MockRule>,
    next_id: u64,
}

impl MockTable {
    /// Adds a rule; STATE_INVALID at the limit.
    pub fn add(&mut self, pattern: &str, kind: MockKind) -> Result<&MockRule, ToolError> {
        if self.rules.len() >= MAX_MOCKS {
            return Err(ToolError::new(
                ToolErrorCode::StateInvalid,
                format!("mock: limit reached ({MAX_MOCKS} active)"),
            )
            .with_hint("remove mocks with browser_mock action=remove or action=clear")
            .with_detail(json!({ "reason": "mock-limit" })));
        }
        self.next_id += 1;
        self.rules.push(MockRule {
            id: format!("m{}", self.next_id),
            pattern: pattern.to_owned(),
            kind,
        });
        let last = self.rules.len() - 1;
        Ok(&self.rules[last])
    }

    /// Removes by id; returns false if no such mock is active.
    pub fn remove(&mut self, id: &str) -> bool {
        let before = self.rules.len();
        self.rules.retain(|rule| rule.id != id);
        self.rules.len() != before
    }

    /// Removes all; returns how many there were.
    pub fn clear(&mut self) -> usize {
        std::mem::take(&mut self.rules).len()
    }

    pub fn rules(&self) -> &[MockRule] {
        &self.rules
    }

    /// The first rule (in creation order) matching `url`.
    pub fn find(&self, url: &str) -> Option<&MockRule> {
        self.rules
            .iter()
            .find(|rule| glob_matches(&rule.pattern, url))
    }
}

/// A glob over the full URL (docs/mcp.md#mocks); `*` and `**` match any characters
/// (including `/`), everything else is literal; a pattern without `?`
/// ignores the URL's query. The engine's matcher, so the table and the
/// browser always agree.
pub fn glob_matches(pattern: &str, url: &str) -> bool {
    chromate::intercept::glob_matches(pattern, url)
}

impl MockTable {
    /// The table as the engine's rules, in creation order.
    pub fn engine_rules(&self) -> Vec<chromate::intercept::InterceptRule> {
        self.rules
            .iter()
            .map(|rule| {
                let action = match &rule.kind {
                    MockKind::Respond {
                        status,
                        body,
                        content_type,
                    } => chromate::intercept::InterceptAction::Fulfil(
                        chromate::intercept::MockResponse {
                            status: *status,
                            body: body.clone(),
                            content_type: content_type.clone(),
                        },
                    ),
                    MockKind::Block => chromate::intercept::InterceptAction::Block,
                };
                chromate::intercept::InterceptRule::new(
                    rule.id.clone(),
                    rule.pattern.clone(),
                    action,
                )
            })
            .collect()
    }
}

/// The origin lists of the configuration as the engine's policy (docs/mcp.md#origin-policy).
pub fn origin_policy(config: &Config) -> chromate::intercept::OriginPolicy {
    chromate::intercept::OriginPolicy {
        allowed: config.allowed_origins.clone(),
        blocked: config.blocked_origins.clone(),
    }
}

impl MockTable {
    /// Installs the table and the origin policy into a browser that just
    /// started, before its first tab loads anything (docs/mcp.md#origin-policy, docs/mcp.md#mocks).
    pub async fn install(
        &self,
        browser: &chromate::Browser,
        config: &Config,
    ) -> chromate::Result<()> {
        browser.set_origin_policy(origin_policy(config)).await?;
        browser.set_file_urls_blocked(!config.file_urls).await?;
        browser.set_intercept_rules(self.engine_rules()).await
    }

    /// What blocked a failed navigation to `url`, for NAVIGATION_FAILED
    /// `detail.blockedBy` (docs/mcp.md#origin-policy, docs/error-codes.md): `origin-policy`, `mock` or `file-access`; `None`
    /// when chromate did not block it.
    pub fn blocked_by(
        &self,
        browser: &chromate::Browser,
        url: &str,
        net_error: &str,
    ) -> Option<&'static str> {
        blocked_by(browser, self, url, net_error)
    }
}

fn blocked_by(
    browser: &chromate::Browser,
    table: &MockTable,
    url: &str,
    net_error: &str,
) -> Option<&'static str> {
    if net_error != "net::ERR_BLOCKED_BY_CLIENT" {
        return None;
    }
    if let Some(chromate::intercept::Interception::Blocked { by, .. }) =
        browser.interception_for_url(url)
    {
        return Some(by.as_str());
    }
    let policy = browser.origin_policy();
    if policy.blocks(url) {
        return Some(chromate::intercept::BlockedBy::OriginPolicy.as_str());
    }
    if table
        .find(url)
        .is_some_and(|rule| rule.kind == MockKind::Block)
    {
        return Some(chromate::intercept::BlockedBy::Mock.as_str());
    }
    // A redirect hop to a blocked origin: the requested URL itself passed.
    (!policy.is_empty()).then_some(chromate::intercept::BlockedBy::OriginPolicy.as_str())
}

/// `application/json` if the body parses as JSON, else `text/plain; charset=utf-8`.
pub fn default_content_type(body: &str) -> &'static str {
    if serde_json::from_str::<Value>(body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    }
}
