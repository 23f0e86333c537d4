//! The browser's request rules: mocks, blocks, the origin policy and `file:` URLs, as methods of
//! [`Browser`] over its interceptor (`intercept/`).

use super::Browser;
use crate::error::Result;
use crate::policy::{InterceptRule, Interception, OriginPolicy};

impl Browser {
    /// Replaces the browser-wide interception rules (mocks and blocks), first match wins. Takes
    /// effect for every tab and frame at once; with no rules and no origin policy, interception
    /// is switched off entirely.
    ///
    /// ```no_run
    /// # async fn demo(browser: chromate::Browser) -> chromate::Result<()> {
    /// use chromate::intercept::{InterceptAction, InterceptRule, MockResponse};
    /// let user = MockResponse { status: 200, body: r#"{"name":"ann"}"#.into(), content_type: "application/json".into() };
    /// browser.set_intercept_rules(vec![
    ///     InterceptRule::new("m1", "*/api/user", InterceptAction::Fulfil(user)),
    ///     InterceptRule::new("m2", "*/ads/*", InterceptAction::Block),
    /// ]).await?;
    /// # Ok(()) }
    /// ```
    pub async fn set_intercept_rules(&self, rules: Vec<InterceptRule>) -> Result<()> {
        self.interceptor().set_rules(rules).await
    }

    /// Replaces the origin policy: requests (redirect hops included) to origins it blocks fail
    /// with `net::ERR_BLOCKED_BY_CLIENT`; a blocked navigation is [`crate::Error::NavigationFailed`].
    pub async fn set_origin_policy(&self, policy: OriginPolicy) -> Result<()> {
        self.interceptor().set_policy(policy).await
    }

    /// The origin policy in force.
    pub fn origin_policy(&self) -> OriginPolicy {
        self.interceptor().policy()
    }

    /// Makes every `file:` request of every page and frame fail with
    /// `net::ERR_BLOCKED_BY_CLIENT` (`true`), or lets them through (`false`, the default): a
    /// navigation, a redirect hop, a frame or a subresource, whoever asked for it. The block
    /// comes before mocks and the origin policy; [`crate::Browser::interception`] records it as
    /// [`crate::policy::BlockedBy::FileAccess`].
    pub async fn set_file_urls_blocked(&self, blocked: bool) -> Result<()> {
        self.interceptor().set_files_blocked(blocked).await
    }

    /// Whether `file:` requests are refused ([`crate::Browser::set_file_urls_blocked`]).
    pub fn file_urls_blocked(&self) -> bool {
        self.interceptor().files_blocked()
    }

    /// What interception did to the request with this network request id (the `requestId` of
    /// `Network.*` events), if anything. Recorded before the request's outcome events are sent,
    /// so a handler of `Network.responseReceived` or `Network.loadingFailed` always finds it;
    /// the newest 2048 decisions are kept.
    pub fn interception(&self, request_id: &str) -> Option<Interception> {
        self.interceptor().interception(request_id)
    }

    /// What interception last did to a request for `url` (fragment included), if anything.
    pub fn interception_for_url(&self, url: &str) -> Option<Interception> {
        self.interceptor().interception_for_url(url)
    }
}
