//! Saved state: the browser's cookies (`Storage.getCookies`/`setCookies`/`clearCookies`) and a
//! page's `localStorage`/`sessionStorage` for its current origin, read in chromate's world and
//! seeded into the next document of an origin before its scripts run.
//!
//! Owns the engine side of saving and loading login state. Does not own files, names or any
//! format on disk (the command layer writes those), nor IndexedDB, cache storage or service
//! workers.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::cdp::browser::BrowserContextID;
use crate::cdp::{network, page as cdp_page, runtime, storage};
use crate::error::{Error, Result};
use crate::page::{exception_error, Page, WaitUntil, WORLD_NAME};
use crate::Browser;

/// A browser cookie.
#[derive(Debug, Clone, PartialEq)]
pub struct Cookie {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
    /// Domain (a leading `.` for domain cookies).
    pub domain: String,
    /// Path.
    pub path: String,
    /// Expiry in seconds since the UNIX epoch; `-1` for a session cookie.
    pub expires: f64,
    /// `HttpOnly`.
    pub http_only: bool,
    /// `Secure`.
    pub secure: bool,
    /// `Strict`, `Lax` or `None`, when set.
    pub same_site: Option<String>,
}

/// A document's storage: its origin and every `localStorage` and `sessionStorage` item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageStorage {
    /// `scheme://host[:port]`; `None` for opaque origins (`about:blank`, `data:`).
    pub origin: Option<String>,
    /// `localStorage` items.
    pub local: BTreeMap<String, String>,
    /// `sessionStorage` items.
    pub session: BTreeMap<String, String>,
}

/// A protocol cookie as chromate's [`Cookie`].
pub(crate) fn cookie_from(c: network::Cookie) -> Cookie {
    Cookie {
        name: c.name,
        value: c.value,
        domain: c.domain,
        path: c.path,
        expires: c.expires,
        http_only: c.http_only,
        secure: c.secure,
        same_site: c.same_site.map(|same_site| same_site.as_str().to_owned()),
    }
}

/// The protocol's form of `cookies`; session cookies (`expires` ≤ 0) stay session cookies.
fn cookie_params(cookies: &[Cookie]) -> Vec<network::CookieParam> {
    cookies
        .iter()
        .map(|cookie| {
            let mut param = network::CookieParam::new(&cookie.name, &cookie.value)
                .domain(&cookie.domain)
                .path(&cookie.path)
                .secure(cookie.secure)
                .http_only(cookie.http_only);
            if cookie.expires > 0.0 {
                param = param.expires(network::TimeSinceEpoch(cookie.expires));
            }
            if let Some(same_site) = &cookie.same_site {
                // Any spelling passes through as given (an unknown one as `Unrecognized`).
                param = param.same_site(match same_site.parse() {
                    Ok(same_site) => same_site,
                    Err(never) => match never {},
                });
            }
            param
        })
        .collect()
}

impl Browser {
    /// Every cookie of the browser (all sites).
    ///
    /// ```no_run
    /// # async fn demo(browser: chromate::Browser) -> chromate::Result<()> {
    /// for cookie in browser.cookies().await? {
    ///     println!("{} on {}", cookie.name, cookie.domain);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn cookies(&self) -> Result<Vec<Cookie>> {
        let answer = self
            .session()
            .send(&storage::GetCookiesParams::default())
            .await?;
        Ok(answer.cookies.into_iter().map(cookie_from).collect())
    }

    /// Sets `cookies` in browser context `context` (`None`: the default one).
    pub(crate) async fn set_cookies_in(
        &self,
        context: Option<&str>,
        cookies: &[Cookie],
    ) -> Result<()> {
        if cookies.is_empty() {
            return Ok(());
        }
        let mut params = storage::SetCookiesParams::new(cookie_params(cookies));
        if let Some(context) = context {
            params = params.browser_context_id(BrowserContextID(context.to_owned()));
        }
        self.session().send(&params).await?;
        Ok(())
    }

    /// Deletes every cookie of browser context `context` (`None`: the default one).
    pub(crate) async fn clear_cookies_in(&self, context: Option<&str>) -> Result<()> {
        let mut params = storage::ClearCookiesParams::default();
        if let Some(context) = context {
            params = params.browser_context_id(BrowserContextID(context.to_owned()));
        }
        self.session().send(&params).await?;
        Ok(())
    }

    /// Sets `cookies` (adding to or overwriting the browser's). Session cookies (`expires`
    /// ≤ 0) stay session cookies.
    pub async fn set_cookies(&self, cookies: &[Cookie]) -> Result<()> {
        self.set_cookies_in(None, cookies).await
    }

    /// Deletes every cookie of the browser.
    pub async fn clear_cookies(&self) -> Result<()> {
        self.clear_cookies_in(None).await
    }
}

impl Page {
    /// The current document's origin and its `localStorage` and `sessionStorage` items, read
    /// in chromate's isolated world (the page cannot see or intercept the read).
    ///
    /// ```no_run
    /// # async fn demo(page: chromate::Page) -> chromate::Result<()> {
    /// let storage = page.storage().await?;
    /// println!("{:?} has {} keys", storage.origin, storage.local.len());
    /// # Ok(()) }
    /// ```
    pub async fn storage(&self) -> Result<PageStorage> {
        let value = self.call_storage(&json!({ "op": "read" })).await?;
        #[derive(Deserialize)]
        struct Read {
            origin: Option<String>,
            #[serde(default)]
            local: BTreeMap<String, Value>,
            #[serde(default)]
            session: BTreeMap<String, Value>,
        }
        let read: Read = serde_json::from_value(value).map_err(|source| Error::Decode {
            method: "storage.read".into(),
            source,
        })?;
        let text = |map: BTreeMap<String, Value>| {
            map.into_iter()
                .map(|(key, value)| match value {
                    Value::String(text) => (key, text),
                    other => (key, other.to_string()),
                })
                .collect()
        };
        Ok(PageStorage {
            origin: read.origin,
            local: text(read.local),
            session: text(read.session),
        })
    }

    /// Seeds `storage` into its origin (`storage.origin`, required): at once if the current
    /// document has that origin, else into the next document of that origin in this tab,
    /// before its scripts run (a new-document script, removed once it has been used). Returns
    /// whether it was seeded at once.
    pub async fn seed_storage(&self, storage: &PageStorage) -> Result<bool> {
        let Some(origin) = storage.origin.clone() else {
            return Err(Error::invalid_argument(
                "seed storage: the storage has no origin",
            ));
        };
        let arg = json!({
            "op": "seed", "origin": origin, "local": storage.local, "session": storage.session,
        });
        let now = self.call_storage(&arg).await?;
        if now.get("seeded").and_then(Value::as_bool) == Some(true) {
            return Ok(true);
        }
        let script = cdp_page::AddScriptToEvaluateOnNewDocumentParams::new(
            crate::js::storage_seed_script(&arg),
        )
        .world_name(WORLD_NAME);
        let added = self.session().send(&script).await?;
        let page = self.clone();
        crate::rt::spawn(async move {
            page.remove_seed_when_used(&origin, added.identifier).await;
        });
        Ok(false)
    }

    /// Waits until a document of `origin` has loaded its DOM in this tab (the seed script ran
    /// in it), then removes the seed script; gives up when the page closes.
    async fn remove_seed_when_used(&self, origin: &str, identifier: cdp_page::ScriptIdentifier) {
        let mut changes = self.state_changes();
        loop {
            if self.is_closed() {
                return;
            }
            if url_origin(&self.url()).as_deref() == Some(origin) {
                let _ = self
                    .wait_for_load_state(WaitUntil::DomContentLoaded, Duration::from_secs(60))
                    .await;
                let remove = cdp_page::RemoveScriptToEvaluateOnNewDocumentParams::new(identifier);
                let _ = self.session().send(&remove).await;
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Runs [`crate::js::STORAGE`] with `arg` in chromate's world of the main frame.
    async fn call_storage(&self, arg: &Value) -> Result<Value> {
        let (session, context_id) = self.isolated_context(None).await?;
        let params = runtime::CallFunctionOnParams::new(crate::js::STORAGE)
            .execution_context_id(runtime::ExecutionContextId(context_id))
            .arguments(vec![runtime::CallArgument {
                // As JSON text: `storage.js` says why.
                value: Some(Value::String(arg.to_string())),
                ..Default::default()
            }])
            .return_by_value(true);
        let answer = self.unless_dialog(session.send(&params)).await?;
        if let Some(details) = answer.exception_details {
            return Err(exception_error(&details));
        }
        Ok(answer.result.value.unwrap_or(Value::Null))
    }
}

/// `scheme://host[:port]` of an http(s) URL as browsers serialise origins (default port left
/// out); `None` for other URLs.
pub(crate) fn url_origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let host_port = host_port.to_ascii_lowercase();
    let default = if scheme == "http" { ":80" } else { ":443" };
    let host_port = host_port.strip_suffix(default).unwrap_or(&host_port);
    Some(format!("{scheme}://{host_port}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn origins_drop_default_ports_paths_and_users() {
        use super::url_origin;
        assert_eq!(
            url_origin("http://127.0.0.1:8080/a?b#c").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            url_origin("https://u@Example.com:443/").as_deref(),
            Some("https://example.com")
        );
        assert_eq!(url_origin("about:blank"), None);
    }
}
