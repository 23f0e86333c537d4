//! One browser shared by isolated sessions (`chromate mcp --http`, `chromate mcp --isolated`):
//! each session gets a browser context of its own in it (`Target.createBrowserContext`).
//!
//! Owns: launching (or connecting to) the shared browser on first need, relaunching it when it
//! was lost (a crash fails every session's pending calls at once, through the engine's closed
//! connection; the next call of any session lands here and relaunches), the origin policy every
//! session shares (it comes from the one configuration) and its `file:` block, and closing it
//! at exit. Does not own the contexts (each `Session` makes and disposes of its own) or any
//! tab.

use std::sync::Arc;

use crate::config::Config;

/// The shared browser slot; clones share it.
#[derive(Clone, Default)]
pub struct SharedBrowser {
    slot: Arc<tokio::sync::Mutex<Option<chromate::Browser>>>,
}

impl std::fmt::Debug for SharedBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBrowser").finish_non_exhaustive()
    }
}

impl SharedBrowser {
    /// The running browser, launched (or connected, with `options`) first if there is none or
    /// it was lost.
    pub async fn get(
        &self,
        config: &Config,
        options: &chromate::ConnectOptions,
    ) -> chromate::Result<chromate::Browser> {
        let mut slot = self.slot.lock().await;
        if let Some(browser) = slot.as_ref() {
            if !browser.is_closed() {
                return Ok(browser.clone());
            }
        }
        let browser = match &config.cdp_endpoint {
            Some(endpoint) => {
                chromate::Browser::connect_with(
                    endpoint,
                    options,
                    chromate::journal::Journal::new(),
                )
                .await?
            }
            None => chromate::Browser::launch(config.launch_options()).await?,
        };
        browser
            .set_origin_policy(crate::mocks::origin_policy(config))
            .await?;
        browser.set_file_urls_blocked(!config.file_urls).await?;
        if config.caps_webmcp {
            browser.enable_webmcp().await;
        }
        *slot = Some(browser.clone());
        Ok(browser)
    }

    /// Closes the browser (a connected one: only the connection) — at exit, once every
    /// session has disposed of its context.
    pub async fn close(&self) {
        let browser = self.slot.lock().await.take();
        if let Some(browser) = browser {
            browser.close().await;
        }
    }
}
