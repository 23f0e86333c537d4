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
//! The browser may also refuse `file:` URLs ([`crate::Browser::set_file_urls_blocked`]): every
//! `file:` request (a navigation, a redirect hop, a frame, a subresource) fails, whoever asked
//! for it. When nothing else needs interception, Fetch is then enabled for `file:` URLs only, so
//! network requests are not paused at all.
//!
//! A browser context may also carry a private-network guard (`policy/guard.rs`): its sessions are
//! intercepted while it exists, and a request (or redirect hop) whose host is, or resolves to,
//! a non-public address fails before it is sent. Literals and `localhost` are decided on the
//! reader task; a name is resolved in a spawned task, which records and then answers.
//!
//! Does not intercept responses, WebSockets or service-worker fetches, and does not rewrite
//! requests that pass: those continue untouched.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;

use crate::cdp::{decode_event, fetch, network};
use crate::error::Result;
use crate::rt::lock;
use crate::session::Session;

use crate::policy::{decide, guard, rules, GuardCheck};

pub use crate::policy::{
    classify_ip, glob_matches, AddressClass, BlockedBy, InterceptAction, InterceptRule,
    Interception, MockResponse, NetworkGuard, OriginPattern, OriginPolicy, PortMatch,
};

/// How many decisions are remembered for [`crate::Browser::interception`].
const RECORD_CAPACITY: usize = 2048;

/// The browser's interceptor: shared by the browser and every session handler.
#[derive(Default)]
pub(crate) struct Interceptor {
    config: Mutex<Config>,
    /// Sessions to intercept on, each with its browser context and whether Fetch is on there;
    /// changed under an async lock so that enables and disables reach each session in the
    /// order they were decided.
    sessions: tokio::sync::Mutex<Vec<Intercepted>>,
    /// The browser context of each session id (read on the reader task).
    contexts: Mutex<HashMap<String, String>>,
    /// `(network request id, url, what happened)`, newest last.
    record: Mutex<VecDeque<(String, String, Interception)>>,
}

#[derive(Default)]
struct Config {
    rules: Vec<InterceptRule>,
    policy: OriginPolicy,
    /// Every `file:` request fails.
    block_files: bool,
    /// Private-network guards by browser context id.
    guards: HashMap<String, NetworkGuard>,
    /// Rules of one browser context, by its id: a context with an entry uses these instead of
    /// the browser-wide [`Config::rules`].
    context_rules: HashMap<String, Vec<InterceptRule>>,
}

/// Which requests a session pauses with Fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Fetch off.
    Off,
    /// Only `file:` URLs (the file block alone).
    Files,
    /// Every request.
    All,
}

impl Config {
    /// Which requests a session of `context` needs paused.
    fn wanted(&self, context: Option<&str>) -> Want {
        if !self.rules_of(context).is_empty()
            || !self.policy.is_empty()
            || context.is_some_and(|context| self.guards.contains_key(context))
        {
            Want::All
        } else if self.block_files {
            Want::Files
        } else {
            Want::Off
        }
    }

    /// The rules that apply to a page of `context`: its own, else the browser-wide ones.
    fn rules_of(&self, context: Option<&str>) -> &[InterceptRule] {
        context
            .and_then(|context| self.context_rules.get(context))
            .unwrap_or(&self.rules)
    }
}

struct Intercepted {
    session: Session,
    context: Option<String>,
    enabled: Want,
}

impl Interceptor {
    /// Replaces the rules and turns Fetch on or off everywhere as needed.
    pub(crate) async fn set_rules(&self, rules: Vec<InterceptRule>) -> Result<()> {
        lock(&self.config).rules = rules;
        self.sync().await
    }

    /// Replaces the rules of browser context `context` (`None`: it goes back to the
    /// browser-wide rules) and turns Fetch on or off everywhere as needed.
    pub(crate) async fn set_context_rules(
        &self,
        context: &str,
        rules: Option<Vec<InterceptRule>>,
    ) -> Result<()> {
        {
            let mut config = lock(&self.config);
            match rules {
                Some(rules) => config.context_rules.insert(context.to_owned(), rules),
                None => config.context_rules.remove(context),
            };
        }
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

    /// Makes every `file:` request fail (`true`) or pass (`false`, the default).
    pub(crate) async fn set_files_blocked(&self, blocked: bool) -> Result<()> {
        lock(&self.config).block_files = blocked;
        self.sync().await
    }

    pub(crate) fn files_blocked(&self) -> bool {
        lock(&self.config).block_files
    }

    /// Sets (or with `None` removes) the private-network guard of browser context `context`.
    pub(crate) async fn set_guard(&self, context: &str, guard: Option<NetworkGuard>) -> Result<()> {
        {
            let mut config = lock(&self.config);
            match guard {
                Some(guard) => config.guards.insert(context.to_owned(), guard),
                None => config.guards.remove(context),
            };
        }
        self.sync().await
    }

    /// Brings every session's Fetch state in line with the configuration. Sessions that are
    /// gone (their command fails) are forgotten.
    fn sync<'a>(&'a self) -> crate::rt::Boxed<'a, Result<()>> {
        Box::pin(self.sync_unboxed())
    }

    async fn sync_unboxed(&self) -> Result<()> {
        let mut sessions = self.sessions.lock().await;
        let wanted: Vec<Want> = {
            let config = lock(&self.config);
            sessions
                .iter()
                .map(|entry| config.wanted(entry.context.as_deref()))
                .collect()
        };
        let answers =
            futures::future::join_all(sessions.iter().zip(&wanted).map(|(entry, &wanted)| {
                let session = entry.session.clone();
                let change = wanted != entry.enabled;
                async move {
                    match (change, wanted) {
                        (false, _) => Ok(()),
                        (true, Want::Off) => session
                            .send(&fetch::DisableParams::default())
                            .await
                            .map(|_| ()),
                        // `Fetch.enable` again replaces the patterns.
                        (true, want) => enable(&session, want).await,
                    }
                }
            }))
            .await;
        let mut kept = Vec::with_capacity(sessions.len());
        for ((mut entry, wanted), answer) in sessions.drain(..).zip(wanted).zip(answers) {
            if answer.is_ok() {
                entry.enabled = wanted;
                kept.push(entry);
            }
        }
        *sessions = kept;
        Ok(())
    }

    /// Adds a page or frame session of browser context `context` (during its set-up, before it
    /// runs) and enables Fetch on it if rules, a policy, its context's guard or the file block
    /// exist.
    pub(crate) async fn attach(&self, session: &Session, context: Option<&str>) -> Result<()> {
        let mut sessions = self.sessions.lock().await;
        sessions.retain(|entry| !entry.session.conn.is_closed());
        if let (Some(id), Some(context)) = (session.id(), context) {
            let mut contexts = lock(&self.contexts);
            contexts.retain(|known, _| {
                sessions
                    .iter()
                    .any(|entry| entry.session.id() == Some(known.as_str()))
            });
            contexts.insert(id.to_owned(), context.to_owned());
        }
        let wanted = lock(&self.config).wanted(context);
        sessions.push(Intercepted {
            session: session.clone(),
            context: context.map(str::to_owned),
            enabled: wanted,
        });
        if wanted != Want::Off {
            enable(session, wanted).await?;
        }
        Ok(())
    }

    /// Remembers what was done to a request, for [`Interceptor::interception`].
    fn remember(&self, network_id: &str, url: &str, what: &Interception) {
        let mut record = lock(&self.record);
        if record.len() >= RECORD_CAPACITY {
            record.pop_front();
        }
        record.push_back((network_id.to_owned(), url.to_owned(), what.clone()));
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

    /// Handles an event of `session` if it is `Fetch.requestPaused` (runs on the reader task):
    /// decides, records (here and in `journal`, before the request's outcome events can
    /// arrive) and spawns the answer. A host name a guard must resolve is decided, recorded
    /// and answered in a spawned task.
    pub(crate) fn on_event(
        self: &Arc<Self>,
        session: &Session,
        journal: &crate::journal::Journal,
        method: &str,
        params: &RawValue,
    ) {
        if method != "Fetch.requestPaused" {
            return;
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
                crate::rt::spawn(async move {
                    let _ = continued.await;
                });
            }
            return;
        };
        let session = session.clone();
        // Only the request stage is asked for; anything else goes on unchanged.
        if paused.response_status_code.is_some() || paused.response_error_reason.is_some() {
            let request_id = paused.request_id.clone();
            crate::rt::spawn(async move {
                let _ = session
                    .send(&fetch::ContinueResponseParams::new(request_id))
                    .await;
            });
            return;
        }
        let url = match &paused.request.url_fragment {
            Some(fragment) => format!("{}{fragment}", paused.request.url),
            None => paused.request.url.clone(),
        };
        let paused = Paused {
            network_id: paused
                .network_id
                .map_or_else(|| paused.request_id.0.clone(), |id| id.0),
            request_id: paused.request_id,
            method: paused.request.method,
            headers: headers.into_iter().collect(),
            url,
        };
        if lock(&self.config).block_files && is_file_url(&paused.url) {
            let blocked = Interception::Blocked {
                by: BlockedBy::FileAccess,
                rule_id: None,
            };
            self.conclude(&session, journal, paused, Some((blocked, None)));
            return;
        }
        let context = session
            .id()
            .and_then(|id| lock(&self.contexts).get(id).cloned());
        let guard = context
            .as_ref()
            .and_then(|context| lock(&self.config).guards.get(context).cloned());
        let check = guard.map_or(GuardCheck::Pass, |guard| guard.check(&paused.url));
        match check {
            GuardCheck::Known(class) if !class.is_public() => {
                self.conclude(&session, journal, paused, Some((private_block(), None)));
            }
            GuardCheck::Resolve(host, port) => {
                let interceptor = Arc::clone(self);
                let journal = journal.clone();
                crate::rt::spawn(async move {
                    let decision = match guard::resolve_blocks(&host, port).await {
                        Some(_) => Some((private_block(), None)),
                        None => interceptor.decide(context.as_deref(), &paused.url),
                    };
                    interceptor.conclude(&session, &journal, paused, decision);
                });
            }
            GuardCheck::Known(_) | GuardCheck::Pass => {
                let decision = self.decide(context.as_deref(), &paused.url);
                self.conclude(&session, journal, paused, decision);
            }
        }
    }

    /// The rules' and the policy's decision for `url`.
    fn decide(
        &self,
        context: Option<&str>,
        url: &str,
    ) -> Option<(Interception, Option<MockResponse>)> {
        let config = lock(&self.config);
        decide(config.rules_of(context), &config.policy, url)
            .map(|(what, response)| (what, response.cloned()))
    }

    /// Records what `decision` does to `paused` and spawns the answer (`None`: continue).
    fn conclude(
        &self,
        session: &Session,
        journal: &crate::journal::Journal,
        paused: Paused,
        decision: Option<(Interception, Option<MockResponse>)>,
    ) {
        let session = session.clone();
        let request_id = paused.request_id;
        let Some((what, response)) = decision else {
            crate::rt::spawn(async move {
                let _ = session
                    .send(&fetch::ContinueRequestParams::new(request_id))
                    .await;
            });
            return;
        };
        let answer = match response {
            None => Answer::Fail,
            Some(response) => match rules::preflight_headers(&paused.method, &paused.headers) {
                Some(preflight) => Answer::Fulfil {
                    status: 204,
                    headers: preflight,
                    body: String::new(),
                },
                None => Answer::Fulfil {
                    status: response.status,
                    headers: rules::mock_headers(&response, &paused.headers),
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
        self.remember(&paused.network_id, &paused.url, &what);
        journal.note_interception(&paused.network_id, what);
        crate::rt::spawn(async move {
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
    }
}

/// A paused request, as the decision needs it.
struct Paused {
    request_id: fetch::RequestId,
    network_id: String,
    method: String,
    headers: Vec<(String, String)>,
    url: String,
}

fn private_block() -> Interception {
    Interception::Blocked {
        by: BlockedBy::PrivateNetwork,
        rule_id: None,
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

/// Whether `url` has the `file:` scheme (any case).
fn is_file_url(url: &str) -> bool {
    url.get(..5)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("file:"))
}

async fn enable(session: &Session, want: Want) -> Result<()> {
    let url_pattern = match want {
        Want::Files => "file:*",
        Want::All | Want::Off => "*",
    };
    let pattern = fetch::RequestPattern::default()
        .url_pattern(url_pattern)
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

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"{\"a\":1}"), "eyJhIjoxfQ==");
    }
}
