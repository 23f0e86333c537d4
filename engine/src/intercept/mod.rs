//! Request interception: a browser-wide rule set (mocks that fulfil, rules that block) and an
//! origin policy, applied with the Fetch domain to every page and out-of-process frame session.
//!
//! Owns: the rules and the policy (changeable at any time), the list of sessions to intercept
//! on, turning `Fetch.enable` on and off on all of them as rules come and go (with no rule and
//! no policy, Fetch stays off: it costs a round trip per request), answering
//! `Fetch.requestPaused`, and a bounded record of what it did per network request id, read by
//! log capture through [`crate::Browser::interception`]. Decisions are made on the transport's
//! reader task (a glob match, no I/O) and recorded before the answer is sent, so the record is
//! there before the request's `Network.*` outcome events arrive; the answer itself is spawned.
//!
//! Does not intercept responses, WebSockets or service-worker fetches, and does not rewrite
//! requests that pass: those continue untouched.

mod rules;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use serde_json::value::RawValue;

use crate::cdp::{decode_event, fetch, network};
use crate::error::Result;
use crate::session::Session;
use crate::transport::lock;

use rules::decide;
pub use rules::{
    glob_matches, BlockedBy, InterceptAction, InterceptRule, Interception, MockResponse,
    OriginPattern, OriginPolicy, PortMatch,
};

/// How many decisions are remembered for [`crate::Browser::interception`].
const RECORD_CAPACITY: usize = 2048;

/// The browser's interceptor: shared by the browser and every session handler.
#[derive(Default)]
pub(crate) struct Interceptor {
    config: Mutex<Config>,
    /// Sessions to intercept on, and whether Fetch is on; changed under an async lock so that
    /// enables and disables reach each session in the order they were decided.
    sessions: tokio::sync::Mutex<Sessions>,
    /// `(network request id, url, what happened)`, newest last.
    record: Mutex<VecDeque<(String, String, Interception)>>,
}

#[derive(Default)]
struct Config {
    rules: Vec<InterceptRule>,
    policy: OriginPolicy,
}

#[derive(Default)]
struct Sessions {
    list: Vec<Session>,
    enabled: bool,
}

impl Interceptor {
    /// Replaces the rules and turns Fetch on or off everywhere as needed.
    pub(crate) async fn set_rules(&self, rules: Vec<InterceptRule>) -> Result<()> {
        lock(&self.config).rules = rules;
        self.sync().await
    }

    /// Replaces the origin policy and turns Fetch on or off everywhere as needed.
    pub(crate) async fn set_policy(&self, policy: OriginPolicy) -> Result<()> {
        lock(&self.config).policy = policy;
        self.sync().await
    }

    pub(crate) fn policy(&self) -> OriginPolicy {
        lock(&self.config).policy.clone()
    }

    fn wanted(&self) -> bool {
        let config = lock(&self.config);
        !config.rules.is_empty() || !config.policy.is_empty()
    }

    /// Brings every session's Fetch state in line with the configuration. Sessions that are
    /// gone (their command fails) are forgotten.
    async fn sync(&self) -> Result<()> {
        let mut sessions = self.sessions.lock().await;
        let wanted = self.wanted();
        if wanted == sessions.enabled {
            return Ok(());
        }
        let answers = futures::future::join_all(sessions.list.iter().map(|session| {
            let session = session.clone();
            async move {
                if wanted {
                    enable(&session).await
                } else {
                    session
                        .send(&fetch::DisableParams::default())
                        .await
                        .map(|_| ())
                }
            }
        }))
        .await;
        let mut answers = answers.into_iter();
        sessions
            .list
            .retain(|_| answers.next().is_some_and(|a| a.is_ok()));
        sessions.enabled = wanted;
        Ok(())
    }

    /// Adds a page or frame session (during its set-up, before it runs) and enables Fetch on it
    /// if rules or a policy exist.
    pub(crate) async fn attach(&self, session: &Session) -> Result<()> {
        let mut sessions = self.sessions.lock().await;
        sessions.list.retain(|s| !s.conn.is_closed());
        sessions.list.push(session.clone());
        if sessions.enabled {
            enable(session).await?;
        }
        Ok(())
    }

    /// What was done to network request `request_id`, if anything.
    pub(crate) fn interception(&self, request_id: &str) -> Option<Interception> {
        lock(&self.record)
            .iter()
            .rev()
            .find(|(id, _, _)| id == request_id)
            .map(|(_, _, what)| what.clone())
    }

    /// What was last done to a request for `url`, if anything.
    pub(crate) fn interception_for_url(&self, url: &str) -> Option<Interception> {
        lock(&self.record)
            .iter()
            .rev()
            .find(|(_, seen, _)| seen == url)
            .map(|(_, _, what)| what.clone())
    }

    /// Handles an event of `session` if it is `Fetch.requestPaused` (runs on the reader task:
    /// decides and records at once, spawns the answer). Returns the network request id and what
    /// was done when a rule or the policy acted, for the journal.
    pub(crate) fn on_event(
        &self,
        session: &Session,
        method: &str,
        params: &RawValue,
    ) -> Option<(String, Interception)> {
        if method != "Fetch.requestPaused" {
            return None;
        }
        let decoded = decode_event::<fetch::EventRequestPaused>(params).and_then(|mut paused| {
            // Header values are strings; anything else fails the decode, as a field of the
            // wrong type would.
            let headers = std::mem::take(&mut paused.request.headers);
            let headers = serde_json::from_value::<BTreeMap<String, String>>(headers).ok()?;
            Some((paused, headers))
        });
        let Some((paused, headers)) = decoded else {
            // Never leave a request paused: if only the id can be read, let it go on.
            let request_id = serde_json::from_str::<serde_json::Value>(params.get())
                .ok()
                .and_then(|params| params.get("requestId")?.as_str().map(str::to_owned));
            if let Some(request_id) = request_id {
                let continued = session.send(&fetch::ContinueRequestParams::new(fetch::RequestId(
                    request_id,
                )));
                crate::spawn(async move {
                    let _ = continued.await;
                });
            }
            return None;
        };
        let request_id = paused.request_id.clone();
        let session = session.clone();
        // Only the request stage is asked for; anything else goes on unchanged.
        if paused.response_status_code.is_some() || paused.response_error_reason.is_some() {
            crate::spawn(async move {
                let _ = session
                    .send(&fetch::ContinueResponseParams::new(request_id))
                    .await;
            });
            return None;
        }
        let url = match &paused.request.url_fragment {
            Some(fragment) => format!("{}{fragment}", paused.request.url),
            None => paused.request.url.clone(),
        };
        let decision = {
            let config = lock(&self.config);
            decide(&config.rules, &config.policy, &url)
                .map(|(what, response)| (what, response.cloned()))
        };
        let Some((what, response)) = decision else {
            crate::spawn(async move {
                let _ = session
                    .send(&fetch::ContinueRequestParams::new(request_id))
                    .await;
            });
            return None;
        };
        let headers: Vec<(String, String)> = headers.into_iter().collect();
        let answer = match response {
            None => Answer::Fail,
            Some(response) => match rules::preflight_headers(&paused.request.method, &headers) {
                Some(preflight) => Answer::Fulfil {
                    status: 204,
                    headers: preflight,
                    body: String::new(),
                },
                None => Answer::Fulfil {
                    status: response.status,
                    headers: rules::mock_headers(&response, &headers),
                    body: response.body,
                },
            },
        };
        let what = match (what, &answer) {
            (Interception::Mocked { rule_id, .. }, Answer::Fulfil { status, .. }) => {
                Interception::Mocked {
                    rule_id,
                    status: *status,
                }
            }
            (other, _) => other,
        };
        let network_id = paused
            .network_id
            .map_or_else(|| paused.request_id.0.clone(), |id| id.0);
        {
            let mut record = lock(&self.record);
            if record.len() >= RECORD_CAPACITY {
                record.pop_front();
            }
            record.push_back((network_id.clone(), url, what.clone()));
        }
        crate::spawn(async move {
            let _ = match answer {
                Answer::Fail => session
                    .send(&fetch::FailRequestParams::new(
                        request_id,
                        network::ErrorReason::BlockedByClient,
                    ))
                    .await
                    .map(|_| ()),
                Answer::Fulfil {
                    status,
                    headers,
                    body,
                } => {
                    let headers = headers
                        .into_iter()
                        .map(|(name, value)| fetch::HeaderEntry::new(name, value))
                        .collect();
                    let params = fetch::FulfillRequestParams::new(request_id, i64::from(status))
                        .response_headers(headers)
                        .body(serde_json::Value::String(base64(body.as_bytes())));
                    session.send(&params).await.map(|_| ())
                }
            };
        });
        Some((network_id, what))
    }
}

enum Answer {
    Fail,
    Fulfil {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

async fn enable(session: &Session) -> Result<()> {
    let pattern = fetch::RequestPattern::default()
        .url_pattern("*")
        .request_stage(fetch::RequestStage::Request);
    session
        .send(&fetch::EnableParams::default().patterns(vec![pattern]))
        .await
        .map(|_| ())
}

/// Standard padded base64, as `Fetch.fulfillRequest` wants its body.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl crate::Browser {
    /// Replaces the browser-wide interception rules (mocks and blocks), first match wins. Takes
    /// effect for every tab and frame at once; with no rules and no origin policy, interception
    /// is switched off entirely.
    ///
    /// ```no_run
    /// # async fn demo(browser: chromate::Browser) -> chromate::Result<()> {
    /// use chromate::{InterceptAction, InterceptRule, MockResponse};
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

#[cfg(test)]
mod tests;
