//! Target attach and page set-up: the browser session's state handler (targets created,
//! changed, destroyed, attached, detached; downloads), every page paused at attach until its
//! set-up commands (sent in parallel) are written, then resumed without waiting for their
//! answers (a tab opened without an opener answers them only once it runs); frames in other
//! processes (OOPIFs) and dedicated workers attached to their page's session and set up the
//! same way. Where each session's events go is `router.rs`.

use std::sync::{Arc, Weak};

use serde_json::value::RawValue;

use super::router::{Capture, Router};
use super::{Inner, TargetInfo};
use crate::cdp::{
    decode_event, emulation, inspector, log, network, page as cdp_page, runtime, target,
};
use crate::error::Result;
use crate::page::{Page, Shared};
use crate::rt::lock;
use crate::session::Session;
use crate::transport::Connection;

/// The browser session's state handler (runs on the reader task; must not block).
pub(super) fn on_browser_event(weak: &Weak<Inner>, method: &str, params: &RawValue) {
    let Some(inner) = weak.upgrade() else { return };
    match method {
        "Target.targetCreated" | "Target.targetInfoChanged" => {
            // Both events carry just `targetInfo`.
            if let Some(event) = decode_event::<target::EventTargetInfoChanged>(params) {
                let info = TargetInfo::from(event.target_info);
                lock(&inner.targets).insert(info.id.clone(), info);
                inner.changed.send_modify(|v| *v += 1);
            }
        }
        "Target.targetDestroyed" | "Target.targetCrashed" => {
            // Both events carry `targetId`; only it is needed here.
            if let Some(event) = decode_event::<target::EventTargetDestroyed>(params) {
                let target_id = event.target_id.0;
                lock(&inner.targets).remove(&target_id);
                let crashed = method == "Target.targetCrashed";
                for page in lock(&inner.pages)
                    .iter()
                    .filter(|pg| pg.target_id() == target_id)
                {
                    if crashed {
                        page.shared.mark_crashed();
                    } else {
                        page.shared.mark_closed("the page was closed");
                    }
                }
                lock(&inner.pages).retain(|pg| pg.target_id() != target_id);
                inner.changed.send_modify(|v| *v += 1);
            }
        }
        "Target.attachedToTarget" => {
            let Some(event) = decode_event::<target::EventAttachedToTarget>(params) else {
                return;
            };
            attach_target(&inner, weak, event.session_id.as_str(), &event.target_info);
        }
        "Browser.downloadWillBegin" | "Browser.downloadProgress" => {
            let origin_of = |frame_id: &str| download_origin(&inner, frame_id);
            inner
                .downloads
                .handle_event(&inner.session, method, params, origin_of);
        }
        "Target.detachedFromTarget" => {
            if let Some(event) = decode_event::<target::EventDetachedFromTarget>(params) {
                let session_id = event.session_id.as_str();
                inner.conn.remove_handler(session_id);
                for page in lock(&inner.pages)
                    .iter()
                    .filter(|pg| pg.session().id() == Some(session_id))
                {
                    page.shared.mark_closed("the page was detached");
                }
            }
        }
        _ => {}
    }
}

/// The tab `frame_id` belongs to (a main frame's id is its tab's target id), its context and
/// journal: a tab not found yet is taken as the browser's own (its downloads are never saved
/// in a context's directory).
fn download_origin(inner: &Inner, frame_id: &str) -> crate::downloads::DownloadOrigin {
    let (page, context) = lock(&inner.pages)
        .iter()
        .find(|page| page.frames().iter().any(|frame| frame.id == frame_id))
        .map_or_else(
            || (frame_id.to_owned(), None),
            |page| (page.target_id().to_owned(), page.context.clone()),
        );
    let journal = context
        .as_deref()
        .and_then(|id| {
            lock(&inner.contexts)
                .get(id)
                .map(|state| state.journal.clone())
        })
        .unwrap_or_else(|| inner.journal.clone());
    crate::downloads::DownloadOrigin {
        page,
        context: context.map(|id| id.to_string()),
        journal,
    }
}

/// A target attached to the browser session, or a page (popup) attached to a page's session:
/// pages get their state handler at once (before their first event can arrive), are set up in
/// parallel, resumed, then listed; anything else is resumed and left alone.
fn attach_target(
    inner: &Arc<Inner>,
    weak: &Weak<Inner>,
    session_id: &str,
    target_info: &target::TargetInfo,
) {
    let session = Session::new(inner.conn.clone(), Some(session_id));
    if target_info.r#type != "page" {
        // Not ours to drive (service workers, shared workers...): let it run.
        crate::rt::spawn(async move {
            let _ = session
                .send(&runtime::RunIfWaitingForDebuggerParams::default())
                .await;
        });
        return;
    }
    if lock(&inner.pages)
        .iter()
        .any(|p| p.target_id() == target_info.target_id.as_str())
    {
        return;
    }
    let shared = Shared::new();
    // A page of a context chromate made journals there, with that context's viewport.
    let own_context = target_info.browser_context_id.as_ref().and_then(|id| {
        let contexts = lock(&inner.contexts);
        contexts
            .get(id.as_str())
            .map(|state| (Arc::<str>::from(id.as_str()), state.clone()))
    });
    let page = Page {
        session: session.clone(),
        target_id: Arc::from(target_info.target_id.as_str()),
        shared: shared.clone(),
        refs: Arc::clone(&inner.refs),
        context: own_context.as_ref().map(|(id, _)| Arc::clone(id)),
    };
    let journal = own_context
        .as_ref()
        .map_or_else(|| inner.journal.clone(), |(_, state)| state.journal.clone());
    // Installed before this handler returns, so none of the page's events is missed.
    let capture = Capture {
        journal,
        page: Arc::clone(&page.target_id),
        context: page.context.clone(),
    };
    Router::page(&session, &shared, weak, capture).install(&session);
    let viewport = own_context
        .as_ref()
        .and_then(|(_, state)| state.viewport)
        .or(inner.viewport);
    let webmcp = inner.webmcp.load(std::sync::atomic::Ordering::SeqCst);
    if webmcp {
        // Its frames attached from now on get the domain too (`on_child_attached`).
        shared
            .webmcp_enabled
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
    let weak = weak.clone();
    let intercept = Arc::clone(&inner.intercept);
    crate::rt::spawn(async move {
        // Interception is on (when rules exist) before the page runs its first request.
        let _ = intercept
            .attach(page.session(), page.context.as_deref())
            .await;
        if set_up_page(&page, viewport, webmcp).await.is_ok() {
            if let Some(inner) = weak.upgrade() {
                let mut pages = lock(&inner.pages);
                // A popup may attach through both the browser and its opener: list it once.
                if !pages.iter().any(|p| p.target_id() == page.target_id()) {
                    pages.push(page);
                }
                drop(pages);
                inner.changed.send_modify(|v| *v += 1);
            }
        }
    });
}

/// An out-of-process iframe (or a worker) attached to a page: route its events into the page's
/// state under its own session, set it up, and resume it.
pub(super) fn on_child_attached(
    conn: &Connection,
    shared: &Arc<Shared>,
    browser: &Weak<Inner>,
    capture: &Capture,
    params: &RawValue,
) {
    let Some(p) = decode_event::<target::EventAttachedToTarget>(params) else {
        return;
    };
    if p.target_info.r#type == "page" {
        // A popup can attach through its opener's session; it is a page like any other.
        if let Some(inner) = browser.upgrade() {
            attach_target(&inner, browser, p.session_id.as_str(), &p.target_info);
        }
        return;
    }
    let session = Session::new(conn.clone(), Some(p.session_id.as_str()));
    let intercept = browser.upgrade().map(|inner| Arc::clone(&inner.intercept));
    let is_frame = p.target_info.r#type == "iframe";
    if is_frame {
        Router::frame(&session, shared, intercept.clone(), capture.clone()).install(&session);
    }
    let is_worker = p.target_info.r#type == "worker";
    if is_worker {
        Router::worker(capture.clone()).install(&session);
    }
    let context = capture.context.clone();
    let webmcp = shared
        .webmcp_enabled
        .load(std::sync::atomic::Ordering::SeqCst);
    crate::rt::spawn(async move {
        if is_frame {
            if let Some(intercept) = &intercept {
                let _ = intercept.attach(&session, context.as_deref()).await;
            }
            let _ = set_up_document_session(&session).await;
            if webmcp {
                let _ = session
                    .send(&crate::cdp::web_mcp::EnableParams::default())
                    .await;
            }
        }
        if is_worker {
            // Workers without a Network domain still report their console.
            let _ = tokio::join!(
                session.send(&runtime::EnableParams::default()),
                session.send(&network::EnableParams::default()),
            );
        }
        let _ = session
            .send(&runtime::RunIfWaitingForDebuggerParams::default())
            .await;
    });
}

/// Set-up of a page session: the set-up of every document session
/// ([`set_up_document_session`]), the Log domain, auto-attach for frames, viewport, WebMCP
/// when the browser has it on; all in parallel, then resume.
async fn set_up_page(page: &Page, viewport: Option<(u32, u32)>, webmcp: bool) -> Result<()> {
    let session = page.session();
    let auto_attach = target::SetAutoAttachParams::new(true, true).flatten(true);
    let document = set_up_document_session(session);
    let log_enable = session.send(&log::EnableParams::default());
    let attach = session.send(&auto_attach);
    let metrics = async {
        match viewport {
            Some((width, height)) => session
                .send(&emulation::SetDeviceMetricsOverrideParams::new(
                    i64::from(width),
                    i64::from(height),
                    1.0,
                    false,
                ))
                .await
                .map(|_| ()),
            None => Ok(()),
        }
    };
    let tree = session.send(&cdp_page::GetFrameTreeParams::default());
    // `Browser::enable_webmcp`: the page's tools, from its first document on. A browser
    // without the feature may refuse it; the page then offers none.
    let webmcp = async {
        if webmcp {
            let _ = session
                .send(&crate::cdp::web_mcp::EnableParams::default())
                .await;
        }
    };
    // The resume is written right after the set-up commands, without waiting for their
    // answers: a tab opened without an opener (`noopener`, which every `target=_blank` link
    // implies) has no renderer until it runs, so its Page and Runtime commands are answered
    // only once it has resumed. The session delivers commands in order (each is written when
    // `join!` first polls it, in the order listed), so the set-up is in before the target
    // runs, as it is for every other page. Resumed whatever happens: a target left waiting for
    // its debugger would hang forever (a popup stuck on about:blank).
    let resume = session.send(&runtime::RunIfWaitingForDebuggerParams::default());
    let (document, log_enable, attach, metrics, tree, (), resumed) =
        tokio::join!(document, log_enable, attach, metrics, tree, webmcp, resume);
    if let Ok(tree) = &tree {
        seed_frames(page, &tree.frame_tree);
    }
    document?;
    log_enable?;
    attach?;
    metrics?;
    resumed?;
    Ok(())
}

/// Records frames that existed before the page was attached (`Page.getFrameTree`) and that no
/// event has reported since.
fn seed_frames(page: &Page, tree: &cdp_page::FrameTree) {
    // The answer is applied after the reader task has already applied any event that followed
    // it (a popup's first navigation commits quickly): never overwrite what events reported.
    if !page.shared.has_navigated(&tree.frame.id.0) {
        let mut frame = tree.frame.clone();
        // The seed records the URL without its fragment, as it always has; the frame's next
        // `Page.frameNavigated` or `navigatedWithinDocument` brings the full URL.
        frame.url_fragment = None;
        page.shared.frame_navigated(None, frame, false);
    }
    for child in tree.child_frames.iter().flatten() {
        seed_frames(page, child);
    }
}

/// The set-up every session of a document shares, a page's and an out-of-process frame's: the
/// Page domain and its lifecycle events, Runtime, Network, Inspector (whose
/// `Inspector.targetCrashed` tells the page its renderer is gone while a command waits on it),
/// chromate's world on every new document (the current one included) and the main-world timer
/// count the wait after `load` reads; all in parallel, written in that order.
async fn set_up_document_session(session: &Session) -> Result<()> {
    let script = cdp_page::AddScriptToEvaluateOnNewDocumentParams::new(crate::js::install_source())
        .world_name(crate::page::WORLD_NAME)
        .run_immediately(true);
    // The one main-world script (`js/pending.js`): the page's timers live there.
    let pending = cdp_page::AddScriptToEvaluateOnNewDocumentParams::new(crate::js::PENDING)
        .run_immediately(true);
    let (
        page_enable,
        lifecycle,
        runtime_enable,
        network_enable,
        inspector_enable,
        world,
        main_world,
    ) = tokio::join!(
        session.send(&cdp_page::EnableParams::default()),
        session.send(&cdp_page::SetLifecycleEventsEnabledParams::new(true)),
        session.send(&runtime::EnableParams::default()),
        session.send(&network::EnableParams::default()),
        session.send(&inspector::EnableParams::default()),
        session.send(&script),
        session.send(&pending),
    );
    page_enable?;
    lifecycle?;
    runtime_enable?;
    network_enable?;
    inspector_enable?;
    world?;
    main_world?;
    Ok(())
}
