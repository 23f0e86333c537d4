//! `BrowserContext`: an isolated browser context (`Target.createBrowserContext`) — its own
//! cookies, storage and cache, its own tabs and its own logs journal — that chromate makes for
//! a job such as an audit and disposes of at the end.
//!
//! Owns: creating and disposing of the context, opening its pages, its journal (every page of
//! the context, popups included, journals there instead of in the browser's), the viewport its
//! pages are set up with, its downloads, and its private-network guard (`policy/guard.rs`). Pages of a
//! context are never in [`Browser::pages`], so a session's tab list never sees them.
//!
//! Does not own the pages' set-up (`browser/attach.rs` does it as for any page) or what a job
//! does with them.

use std::time::Duration;

use crate::browser::ContextState;
use crate::cdp::{browser as cdp_browser, storage, target};
use crate::downloads::DownloadOptions;
use crate::error::Result;
use crate::journal::Journal;
use crate::page::Page;
use crate::policy::NetworkGuard;
use crate::rt::lock;
use crate::storage::Cookie;
use crate::Browser;

/// How a [`BrowserContext`] is made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextOptions {
    /// The viewport (CSS px) of its pages; the browser's when `None`.
    pub viewport: Option<(u32, u32)>,
    /// Refuse requests to private networks (redirect hops included), but for the guard's exempt
    /// origins.
    pub guard: Option<NetworkGuard>,
}

/// An isolated browser context. Its pages close and its cookies go when it is disposed of (or
/// when chromate's connection to the browser ends).
#[derive(Clone)]
pub struct BrowserContext {
    browser: Browser,
    id: String,
    journal: Journal,
}

impl std::fmt::Debug for BrowserContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserContext")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Browser {
    /// Makes an isolated browser context.
    ///
    /// ```no_run
    /// # async fn demo(browser: chromate::Browser) -> chromate::Result<()> {
    /// let context = browser.new_context(chromate::ContextOptions::default()).await?;
    /// let page = context.new_page("about:blank").await?;
    /// assert!(browser.pages().iter().all(|tab| tab.target_id() != page.target_id()));
    /// context.dispose().await?;
    /// # Ok(()) }
    /// ```
    pub async fn new_context(&self, options: ContextOptions) -> Result<BrowserContext> {
        self.new_context_with_journal(options, Journal::new()).await
    }

    /// [`Browser::new_context`], its pages journalling into `journal` (which a caller keeps
    /// across contexts, so `seq` never restarts).
    pub async fn new_context_with_journal(
        &self,
        options: ContextOptions,
        journal: Journal,
    ) -> Result<BrowserContext> {
        let created = self
            .session()
            .send(&target::CreateBrowserContextParams::default().dispose_on_detach(true))
            .await?;
        let id = created
            .browser_context_id
            .ok_or_else(|| crate::Error::StateInvalid {
                message: "Target.createBrowserContext answered without a context id".into(),
            })?
            .as_str()
            .to_owned();
        journal.mark_capturing();
        lock(self.contexts()).insert(
            id.clone(),
            ContextState {
                journal: journal.clone(),
                viewport: options.viewport,
            },
        );
        let context = BrowserContext {
            browser: self.clone(),
            id,
            journal,
        };
        if let Some(guard) = options.guard {
            if let Err(err) = self.interceptor().set_guard(&context.id, Some(guard)).await {
                let _ = context.dispose().await;
                return Err(err);
            }
        }
        Ok(context)
    }
}

impl BrowserContext {
    /// The protocol's id of the context.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The journal of the context's pages (console, errors, network).
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Opens a tab in the context, waits until it is set up, and navigates it to `url`
    /// (waiting for `load`) unless it is `about:blank`.
    pub async fn new_page(&self, url: &str) -> Result<Page> {
        // A window of its own: a background tab of a shared window is hidden, and a hidden
        // page neither paints nor shifts, so pages audited side by side would measure nothing.
        let params = target::CreateTargetParams::new("about:blank")
            .browser_context_id(cdp_browser::BrowserContextID(self.id.clone()))
            .new_window(true);
        let created = self.browser.session().send(&params).await?;
        let page = self
            .browser
            .wait_for_page(&created.target_id.0, crate::browser::ATTACH_TIMEOUT)
            .await?;
        if url != "about:blank" {
            page.goto(url, crate::WaitUntil::Load, crate::browser::NEW_PAGE_LOAD)
                .await?;
        }
        Ok(page)
    }

    /// The context's open pages, in attach order.
    pub fn pages(&self) -> Vec<Page> {
        self.browser
            .all_pages()
            .into_iter()
            .filter(|page| page.context.as_deref() == Some(self.id.as_str()))
            .collect()
    }

    /// Opens a tab in the context without navigating it, in the browser's shared window (a
    /// session's tabs, not an audit's side-by-side pages).
    pub async fn new_tab(&self) -> Result<Page> {
        let params = target::CreateTargetParams::new("about:blank")
            .browser_context_id(cdp_browser::BrowserContextID(self.id.clone()));
        let created = self.browser.session().send(&params).await?;
        self.browser
            .wait_for_page(&created.target_id.0, crate::browser::ATTACH_TIMEOUT)
            .await
    }

    /// Replaces the interception rules of the context's pages (mocks and blocks, as
    /// [`Browser::set_intercept_rules`]); other contexts and the browser's own pages keep
    /// theirs.
    pub async fn set_intercept_rules(
        &self,
        rules: Vec<crate::policy::InterceptRule>,
    ) -> Result<()> {
        self.browser
            .interceptor()
            .set_context_rules(&self.id, Some(rules))
            .await
    }

    /// Every cookie of the context.
    pub async fn cookies(&self) -> Result<Vec<Cookie>> {
        let params = storage::GetCookiesParams::default()
            .browser_context_id(cdp_browser::BrowserContextID(self.id.clone()));
        let answer = self.browser.session().send(&params).await?;
        Ok(answer
            .cookies
            .into_iter()
            .map(crate::storage::cookie_from)
            .collect())
    }

    /// Sets `cookies` in the context (adding to or overwriting its own).
    pub async fn set_cookies(&self, cookies: &[Cookie]) -> Result<()> {
        self.browser.set_cookies_in(Some(&self.id), cookies).await
    }

    /// Deletes every cookie of the context.
    pub async fn clear_cookies(&self) -> Result<()> {
        self.browser.clear_cookies_in(Some(&self.id)).await
    }

    /// The browser the context lives in.
    pub fn browser(&self) -> &Browser {
        &self.browser
    }

    /// Disposes of the context: its pages close, its cookies and storage are gone, its guard
    /// is lifted.
    pub fn dispose<'a>(self) -> crate::rt::Boxed<'a, Result<()>> {
        Box::pin(self.dispose_unboxed())
    }

    async fn dispose_unboxed(self) -> Result<()> {
        let pages = self.pages();
        lock(self.browser.contexts()).remove(&self.id);
        self.browser.downloads().forget(&self.id);
        let _ = self.browser.interceptor().set_guard(&self.id, None).await;
        let _ = self
            .browser
            .interceptor()
            .set_context_rules(&self.id, None)
            .await;
        let params = target::DisposeBrowserContextParams::new(cdp_browser::BrowserContextID(
            self.id.clone(),
        ));
        let res = self.browser.session().send(&params).await.map(|_| ());
        for page in pages {
            page.shared
                .mark_closed("its browser context was disposed of");
        }
        res
    }

    /// Saves every download of this context's tabs into `options.dir` from now on, as
    /// [`Browser::enable_downloads`](crate::Browser::enable_downloads) does for the browser's
    /// own tabs: the context's downloads go to its directory and its journal only, and no
    /// other context's ever do.
    ///
    /// ```no_run
    /// # async fn demo(browser: chromate::Browser) -> chromate::Result<()> {
    /// let context = browser.new_context(chromate::ContextOptions::default()).await?;
    /// context.enable_downloads(chromate::capture::DownloadOptions::new("/tmp/agent-1")).await?;
    /// # Ok(()) }
    /// ```
    pub async fn enable_downloads(&self, options: DownloadOptions) -> Result<()> {
        let browser = self.browser();
        browser
            .downloads()
            .enable(browser.session(), Some(self.id()), options)
            .await
    }

    /// Waits until every download of this context begun so far has ended and been
    /// journalled, up to `timeout`; whether none is left.
    pub async fn wait_for_downloads(&self, timeout: Duration) -> bool {
        self.browser()
            .downloads()
            .wait(Some(self.id()), timeout)
            .await
    }

    /// Whether downloads of this context are being saved.
    pub fn downloads_enabled(&self) -> bool {
        self.browser().downloads().is_saving(Some(self.id()))
    }
}
