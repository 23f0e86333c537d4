//! The audit's sitemap (`docs/cli.md#several-pages-and-sitemaps`): the pages a `sitemap.xml`
//! lists, or the sitemaps a sitemap index lists and their pages, read from inside a tab of the
//! audit's context on the sitemap's origin (its cookies apply), same-origin only and bounded:
//! at most [`MAX_SITEMAPS`] sitemaps of an index, at most the audit's page budget of pages, each
//! cut said in a warning.

use std::time::Duration;

use serde_json::json;

use crate::error::{from_engine, ToolError};

/// Sitemaps of an index read at most.
pub(super) const MAX_SITEMAPS: usize = 20;
/// A sitemap's size at most (the protocol's own limit is 50 MB; a site that large is not
/// audited page by page).
const MAX_BYTES: usize = 10 * 1024 * 1024;
/// Each sitemap's fetch.
const FETCH: Duration = Duration::from_secs(15);
/// Loading the sitemap itself in the tab.
const NAVIGATION: Duration = Duration::from_secs(30);

/// `scheme://host[:port]` of an absolute URL, lowercased.
pub(super) fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    (!authority.is_empty()).then(|| format!("{scheme}://{authority}").to_ascii_lowercase())
}

fn sitemap_error(url: &str, why: &str) -> ToolError {
    ToolError::invalid_argument(
        format!("audit: the sitemap {url}: {why}"),
        "sitemap",
        "give the URL of a sitemap.xml (<urlset>) or sitemap index (<sitemapindex>) the site serves",
    )
    .with_detail_key("url", json!(url))
}

/// The pages the sitemap at `url` lists (an index's sitemaps' pages), same-origin, at most
/// `max_pages`; and the warnings of what was left out.
pub(super) async fn pages(
    context: &chromate::BrowserContext,
    browser: &chromate::Browser,
    url: &str,
    max_pages: usize,
) -> Result<(Vec<String>, Vec<String>), ToolError> {
    let origin = origin_of(url).ok_or_else(|| sitemap_error(url, "not an absolute URL"))?;
    let page = context
        .new_page("about:blank")
        .await
        .map_err(|err| from_engine("audit", &err))?;
    let outcome = read_all(&page, url, &origin, max_pages).await;
    let _ = browser.close_page(&page).await;
    outcome
}

async fn read_all(
    page: &chromate::Page,
    url: &str,
    origin: &str,
    max_pages: usize,
) -> Result<(Vec<String>, Vec<String>), ToolError> {
    // A document of the sitemap's origin to fetch from: the sitemap itself.
    page.goto(url, chromate::WaitUntil::Load, NAVIGATION)
        .await
        .map_err(|err| sitemap_error(url, &err.to_string()))?;
    let read = |target: String| async move {
        page.read_sitemap(&target, FETCH, MAX_BYTES)
            .await
            .map_err(|err| sitemap_error(&target, &engine_reason(&err)))
    };
    let top = read(url.to_owned()).await?;
    let mut warnings = Vec::new();
    let mut off_origin = 0usize;
    let mut locs = Vec::new();
    if top.kind == "sitemapindex" {
        let mut children: Vec<String> = Vec::new();
        for loc in top.locs {
            if origin_of(&loc).as_deref() == Some(origin) {
                children.push(loc);
            } else {
                off_origin += 1;
            }
        }
        if children.len() > MAX_SITEMAPS {
            warnings.push(format!(
                "the sitemap index {url} lists {} sitemaps; only the first {MAX_SITEMAPS} were read",
                children.len()
            ));
            children.truncate(MAX_SITEMAPS);
        }
        for child in children {
            let sitemap = read(child.clone()).await?;
            if sitemap.kind != "urlset" {
                warnings.push(format!(
                    "{child} is a sitemap index inside an index: skipped"
                ));
                continue;
            }
            locs.extend(sitemap.locs);
        }
    } else {
        locs = top.locs;
    }
    let mut pages: Vec<String> = Vec::new();
    for loc in locs {
        if origin_of(&loc).as_deref() != Some(origin) {
            off_origin += 1;
        } else if !pages.contains(&loc) {
            pages.push(loc);
        }
    }
    if off_origin > 0 {
        warnings.push(format!(
            "the sitemap {url} lists {off_origin} URLs of other origins: not audited (same-origin only)"
        ));
    }
    if pages.len() > max_pages {
        warnings.push(format!(
            "the sitemap {url} lists {} pages; only the first {max_pages} were audited (--max-pages)",
            pages.len()
        ));
        pages.truncate(max_pages);
    }
    Ok((pages, warnings))
}

/// The engine's message without its method prefix (`audit.sitemap: `).
fn engine_reason(err: &chromate::Error) -> String {
    let text = err.to_string();
    match text.split_once("audit.sitemap: ") {
        Some((_, reason)) => reason.to_owned(),
        None => text,
    }
}
