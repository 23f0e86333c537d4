//! Downloads of the browser's own tabs, as methods of [`Browser`] over its download manager
//! (`downloads.rs`).

use std::time::Duration;

use super::Browser;
use crate::downloads::DownloadOptions;
use crate::error::Result;

impl Browser {
    /// Saves every download of this browser's own tabs (not those of a [`BrowserContext`]
    /// chromate made, which has its own) into `options.dir` from now on, never showing a
    /// dialog; each is journalled (kind `download`) when it ends. A download over
    /// `options.limit` is canceled.
    ///
    /// A browser that refuses the directory (a remote one, through [`Browser::connect`]) still
    /// reports its downloads: they are journalled as not saved, with the browser's answer as
    /// the reason, and the error is returned.
    ///
    /// [`Browser::connect`]: crate::Browser::connect
    /// [`BrowserContext`]: crate::BrowserContext
    pub async fn enable_downloads(&self, options: DownloadOptions) -> Result<()> {
        self.downloads().enable(self.session(), None, options).await
    }

    /// Waits until every download of the browser's own tabs begun so far has ended and been
    /// journalled, up to `timeout`. Returns whether none is left. (An observation after an action waits
    /// briefly, so the call that started a small download reports it.)
    pub async fn wait_for_downloads(&self, timeout: Duration) -> bool {
        self.downloads().wait(None, timeout).await
    }

    /// Whether downloads of the browser's own tabs are being saved
    /// ([`Browser::enable_downloads`](crate::Browser::enable_downloads) succeeded).
    pub fn downloads_enabled(&self) -> bool {
        self.downloads().is_saving(None)
    }
}
