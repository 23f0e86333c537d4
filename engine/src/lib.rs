//! chromate: a Chrome DevTools Protocol engine.
//!
//! Launch or connect to Chromium, drive pages through typed CDP bindings, resolve selectors,
//! act with auto-waiting trusted input, snapshot what a person sees (refs and diffs), journal
//! console and network activity, intercept requests, save state, take screenshots and run
//! axe audits. The public API is what this file re-exports (listed by job in
//! `ARCHITECTURE.md`); everything else is crate-private.
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
mod actions;
mod browser;
mod capture;
pub mod cdp;
mod context;
mod downloads;
mod error;
pub(crate) mod input;
mod intercept;
pub(crate) mod js;
mod launch;
mod locators;
mod oracle;
mod page;
mod pdf;
mod policy;
mod probe;
mod redact;
mod refs;
mod rt;
mod screencast;
mod screenshot;
mod selector;
mod session;
mod snapshot;
mod storage;
mod transport;
mod wait;

pub use a11y::{AuditNode, AuditOptions, AuditReport, Impact, Violation, AXE_PATH_ENV};
pub use actions::{
    BrowserAccessibility, ClickOptions, ElementState, FindOptions, FindResult, FoundElement,
    Locator, ReadText, SelectedOption, TextMatch,
};
pub use browser::{Browser, BrowserVersion, TargetInfo};
pub use capture::{
    DownloadState, Journal, LogData, LogEntry, LogFilter, LogKind, LogLevel, LogList,
};
pub use context::{BrowserContext, ContextOptions};
pub use downloads::{DownloadLimit, DownloadOptions, DEFAULT_DOWNLOAD_LIMIT};
pub use error::{Error, ErrorCode, Recovery, Result, StaleReason, UnmetState};
pub use input::{Key, KeyChord, Modifier, MouseButton};
pub use launch::{find_browser, LaunchOptions};
pub use locators::{CandidateStatus, LocatorCandidate, LocatorSuggestions, LocatorTarget};
pub use oracle::{contract_name, Control, Controls, Score, SCORED_ROLES};
pub use page::{Dialog, FrameInfo, NavigationResult, Page, WaitUntil};
pub use page::{Settled, SETTLE_CAP, SETTLE_WINDOW};
pub use page::{WebMcpOutcome, WebMcpTool, MAX_TOOLS_PER_PAGE};
pub use pdf::PdfOptions;
pub use policy::{
    classify_ip, glob_matches, AddressClass, BlockedBy, InterceptAction, InterceptRule,
    Interception, MockResponse, NetworkGuard, OriginPattern, OriginPolicy, PortMatch,
};
pub use probe::{
    ControlIssue, LinkMethod, LinkStatus, Overflow, OverflowElement, PageInspection, PageLink,
    ProbeRect, ResourceElement, ResourceSize, Sitemap, Vitals,
};
pub use screencast::{Recording, Screencast, ScreencastFrame, ScreencastOptions};
pub use screenshot::{Screenshot, ScreenshotOptions, ScreenshotTarget};
pub use selector::Selector;
pub use session::{
    EventStream, EventStreamError, RawEventStream, Session, DEFAULT_COMMAND_TIMEOUT,
};
pub use snapshot::{
    diff, Checked, Diff, ElementRef, Line, LineKind, Snapshot, SnapshotOptions, NEW_UNLISTED,
    UNLISTED_TEXT,
};
pub use storage::{Cookie, PageStorage};
pub use transport::{ConnectOptions, DEFAULT_CONNECT_TIMEOUT};
pub use transport::{EventMessage, EVENT_QUEUE};
pub use wait::{bounded, DEFAULT_TIMEOUT, NAVIGATION_TIMEOUT};
