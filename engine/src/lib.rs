//! chromate: a Chrome DevTools Protocol engine.
//!
//! Launch or connect to Chromium, drive pages through typed CDP bindings, resolve selectors,
//! act with auto-waiting trusted input, snapshot what a person sees (refs and diffs), journal
//! console and network activity, intercept requests, save state, take screenshots and run
//! axe audits.
//!
//! The public API is a tree (listed by job in `ARCHITECTURE.md`): the handles every program
//! uses are at the root ([`Browser`], [`BrowserContext`], [`Page`], [`Locator`], [`Session`],
//! their options and [`Error`]); what one job needs lives in that job's module
//! ([`snapshot`], [`journal`], [`intercept`], [`capture`], [`audit`], [`oracle`], [`cdp`], …).
//! Everything else is crate-private.
//!
//! ```no_run
//! # async fn demo() -> chromate::Result<()> {
//! use std::time::Duration;
//! let browser = chromate::Browser::launch(chromate::LaunchOptions::default()).await?;
//! let page = browser.new_page("about:blank").await?;
//! page.goto("data:text/html,<title>hi</title>", chromate::WaitUntil::Load, Duration::from_secs(5)).await?;
//! assert_eq!(page.title().await?, "hi");
//! browser.close().await;
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

mod a11y;
pub mod actions;
pub mod browser;
pub mod cdp;
mod context;
mod downloads;
pub mod error;
pub(crate) mod input;
pub mod intercept;
pub mod journal;
pub(crate) mod js;
mod launch;
pub mod locators;
pub mod oracle;
pub mod page;
mod pdf;
mod policy;
mod probe;
mod redact;
mod refs;
mod rt;
mod screencast;
mod screenshot;
mod selector;
pub mod session;
pub mod snapshot;
pub mod storage;
mod transport;
pub mod wait;

pub use actions::Locator;
pub use browser::Browser;
pub use context::{BrowserContext, ContextOptions};
pub use error::{Error, ErrorCode, Result};
pub use launch::LaunchOptions;
pub use page::{Page, WaitUntil};
pub use selector::Selector;
pub use session::Session;
pub use transport::ConnectOptions;

/// Accessibility audits and the page probes of a site audit: axe-core's report
/// ([`audit::AuditReport`]) and what `Page::inspect` measures (vitals, links, resources,
/// overflow, controls).
pub mod audit {
    pub use crate::a11y::{AuditNode, AuditOptions, AuditReport, Impact, Violation, AXE_PATH_ENV};
    pub use crate::probe::{
        ControlIssue, LinkMethod, LinkStatus, Overflow, OverflowElement, PageInspection, PageLink,
        ProbeRect, ResourceElement, ResourceSize, Sitemap, Vitals,
    };
}

/// What a page gives back as files: screenshots, PDFs, screencast recordings and downloads.
pub mod capture {
    pub use crate::downloads::{DownloadLimit, DownloadOptions, DEFAULT_DOWNLOAD_LIMIT};
    pub use crate::pdf::PdfOptions;
    pub use crate::screencast::{Recording, Screencast, ScreencastFrame, ScreencastOptions};
    pub use crate::screenshot::{Screenshot, ScreenshotOptions, ScreenshotTarget};
}
