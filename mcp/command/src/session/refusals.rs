//! Engine errors and refusals as the tool errors the model reads: dialogs, stale and bare refs, a
//! container that is not editable, the recovery attached to a timeout.
//!
//! Owns [`Refusal`], every reason the session refuses a call before the page acts, and
//! [`ToolSession::refuse`], the one place a refusal becomes a tool error (its code, message,
//! hint and detail, and the recovery snapshot a stale ref of this session's gets).

use super::*;

/// Why a call is refused before its page acts (docs/mcp.md#refs, docs/error-codes.md).
#[derive(Debug, Clone)]
pub enum Refusal {
    /// BARE_REF: `eN` without `ref=`, a ref this session never issued.
    BareRef { number: u64 },
    /// STALE_REF `no-snapshot`: a ref with no snapshot since the session started or the
    /// baseline was reset.
    NoSnapshot { number: u64 },
    /// STALE_REF with its reason: a ref this session issued that no longer resolves.
    StaleRef {
        number: u64,
        reason: chromate::error::StaleReason,
    },
    /// STATE_INVALID `dialog-open`: the page has a dialog open; `resolving` is the ref the
    /// call named, which is not even resolved then.
    DialogOpen {
        dialog: chromate::page::Dialog,
        resolving: Option<u64>,
    },
}

impl ToolSession {
    /// `refusal` as the tool error the model reads: the one place a refusal becomes one. On a
    /// page (`Some`), a stale ref the session issued gets a recovery snapshot that becomes
    /// the baseline, and a dialog the page keeps reopening names the way out of the tab.
    pub async fn refuse(
        &mut self,
        verb: &str,
        page: Option<&chromate::Page>,
        refusal: Refusal,
    ) -> ToolError {
        match refusal {
            Refusal::BareRef { number } => {
                let err = chromate::Error::BareRef {
                    element_ref: format!("e{number}"),
                };
                from_engine(verb, &err)
            }
            Refusal::NoSnapshot { number } => {
                let error = no_snapshot(verb, number);
                let Some(page) = page else {
                    return error;
                };
                let issued = chromate::snapshot::ElementRef::new(number)
                    .is_some_and(|element_ref| page.has_issued_ref(element_ref))
                    || self.issued_by_earlier_browser(number);
                if issued {
                    self.attach_recovery(page, error).await
                } else {
                    error
                }
            }
            Refusal::StaleRef { number, reason } => {
                let error = ToolError::new(
                    ToolErrorCode::StaleRef,
                    format!("{verb}: ref=e{number} is stale: {}", reason.explain()),
                )
                .with_hint("take a fresh snapshot and use the new ref; refs are never reassigned")
                .with_detail(json!({ "ref": format!("e{number}"), "reason": reason.as_str() }));
                match page {
                    Some(page) => self.attach_recovery(page, error).await,
                    None => error,
                }
            }
            Refusal::DialogOpen { dialog, resolving } => {
                let mut error = dialog_blocks(verb, &dialog);
                if let Some(trap) = page.and_then(|page| self.dialog_trap(page)) {
                    let reopens = page.map_or(0, chromate::Page::dialog_reopens);
                    error = error
                        .with_hint(trap)
                        .with_detail_key("reopened", json!(reopens));
                }
                if let Some(number) = resolving {
                    error.message = format!(
                        "{verb}: cannot resolve ref=e{number} while a dialog is open: {}",
                        dialog.message
                    );
                }
                error
            }
        }
    }
}

/// STALE_REF `no-snapshot` for `ref=e<number>` (docs/mcp.md#refs).
fn no_snapshot(verb: &str, number: u64) -> ToolError {
    ToolError::new(
        ToolErrorCode::StaleRef,
        format!(
            "{verb}: ref=e{number} is stale: no snapshot since the session started or the baseline was reset"
        ),
    )
    .with_hint("take a fresh snapshot and use the new ref; refs are never reassigned")
    .with_detail(json!({ "ref": format!("e{number}"), "reason": "no-snapshot" }))
}

/// STATE_INVALID `a dialog is open: <message>` (docs/error-codes.md).
fn dialog_blocks(verb: &str, dialog: &chromate::page::Dialog) -> ToolError {
    ToolError::new(
        ToolErrorCode::StateInvalid,
        format!("{verb}: a dialog is open: {}", dialog.message),
    )
    .with_hint("answer it with browser_dialog accept or dismiss (browser_dialog inspect shows it)")
    .with_detail(json!({ "reason": "dialog-open", "dialog": { "type": dialog.kind, "message": dialog.message } }))
}

impl ToolSession {
    /// An engine error as a tool error; a lost browser becomes DRIVER_ERROR
    /// `reason:"browser-closed"` and is forgotten, so the next call relaunches.
    pub fn engine_error(&mut self, verb: &str, err: &chromate::Error) -> ToolError {
        let lost = self
            .browser
            .live
            .as_ref()
            .is_some_and(|live| live.browser.is_closed());
        let mut error = from_engine(verb, err);
        // A dialog the page keeps reopening: the hint names the way out of the tab.
        if let chromate::Error::DialogOpen { .. } = err {
            let active = self.browser.live.as_ref().and_then(Live::active_tab);
            if let Some(trap) = active.and_then(|tab| self.dialog_trap(&tab.page)) {
                let reopens = active.map_or(0, |tab| tab.page.dialog_reopens());
                error = error
                    .with_hint(trap)
                    .with_detail_key("reopened", json!(reopens));
            }
        }
        if let Some(chromate::error::Recovery::RendererStuck { .. }) = err.recovery() {
            self.browser.stuck_tab = self
                .browser
                .live
                .as_ref()
                .and_then(Live::active_tab)
                .map(|tab| tab.page.target_id().to_owned());
        }
        if let (chromate::Error::NavigationFailed { url, net_error }, Some(live)) =
            (err, &self.browser.live)
        {
            if let Some(by) = self.mocks.blocked_by(&live.browser, url, net_error) {
                let hint = match by {
                    "file-access" => crate::tools::FILE_URL_HINT,
                    "origin-policy" => "the URL's origin is outside --allowed-origins or inside --blocked-origins; navigate elsewhere or restart with other origin lists",
                    _ => "a browser_mock block rule matches this URL; browser_mock action=list shows it, action=remove lifts it",
                };
                error = error
                    .with_detail_key("blockedBy", json!(by))
                    .with_hint(hint);
            }
        }
        if lost && error.code == ToolErrorCode::DriverError {
            error = ToolError::new(
                ToolErrorCode::DriverError,
                format!("{verb}: the browser closed during the call"),
            )
            .with_hint("the next call relaunches the browser; refs and tabs from before are gone")
            .with_detail(json!({ "reason": "browser-closed" }));
        }
        self.drop_lost_browser();
        error
    }

    /// The way out of a tab whose page reopens its dialog as soon as it is answered (the second
    /// time in a row or more within a second), if `page` is such a tab: answering again will not
    /// free it, a new tab and closing this one will.
    pub fn dialog_trap(&self, page: &chromate::Page) -> Option<String> {
        let reopens = page.dialog_reopens();
        if reopens < 2 {
            return None;
        }
        let id = self
            .browser
            .live
            .as_ref()?
            .tabs
            .iter()
            .find(|tab| tab.page.target_id() == page.target_id())?
            .id
            .clone();
        Some(format!(
            "the page reopened its dialog as soon as it was answered ({reopens} times in a row), so answering will not free this tab: leave it with browser_page action=open, then browser_page action=close target={id}"
        ))
    }

    /// The observation of a tab whose dialog is open: the dialog, and the way out when the page
    /// keeps reopening it.
    pub fn dialog_notice(&self, page: &chromate::Page, dialog: &chromate::page::Dialog) -> String {
        let mut notice = format!(
            "dialog open: {}\n(snapshot skipped — accept or dismiss it first)",
            dialog.message
        );
        if let Some(trap) = self.dialog_trap(page) {
            notice.push_str(&format!("\n({trap})"));
        }
        notice
    }

    /// Handles a failed element call (docs/mcp.md#refs): a STALE_REF on a ref
    /// selector gets a recovery snapshot that becomes the baseline.
    pub async fn element_error(
        &mut self,
        verb: &str,
        page: &chromate::Page,
        err: &chromate::Error,
    ) -> ToolError {
        let mut error = self.engine_error(verb, err);
        // The page's ref table forgets a ref when its document is replaced;
        // a ref this session did issue is then `document-changed` (docs/mcp.md#refs),
        // not `unknown-ref`.
        if let chromate::Error::StaleRef {
            element_ref,
            reason: chromate::error::StaleReason::UnknownRef,
        } = err
        {
            let issued = chromate::snapshot::ElementRef::parse(element_ref)
                .is_some_and(|element_ref| page.has_issued_ref(element_ref));
            if issued {
                let reason = chromate::error::StaleReason::DocumentChanged;
                error.message = format!("{verb}: ref={element_ref} is stale: {}", reason.explain());
                error = error.with_detail_key("reason", json!(reason.as_str()));
            }
        }
        if error.code == ToolErrorCode::StaleRef {
            error = self.attach_recovery(page, error).await;
        }
        error
    }

    /// Attaches a recovery snapshot (docs/mcp.md#refs) to a STALE_REF error, when the
    /// browser runs without a dialog.
    pub fn attach_recovery<'a>(
        &'a mut self,
        page: &'a chromate::Page,
        error: ToolError,
    ) -> crate::Boxed<'a, ToolError> {
        Box::pin(self.attach_recovery_unboxed(page, error))
    }

    async fn attach_recovery_unboxed(
        &mut self,
        page: &chromate::Page,
        error: ToolError,
    ) -> ToolError {
        let reason = error
            .detail
            .as_ref()
            .and_then(|detail| detail.get("reason"))
            .and_then(|reason| reason.as_str())
            .unwrap_or("");
        if reason == "unknown-ref" || page.is_closed() || page.dialog().is_some() {
            return error;
        }
        match self
            .take_snapshot(page, chromate::snapshot::SnapshotOptions::default())
            .await
        {
            Ok(snapshot) => {
                let mut error = error;
                error.recovery_snapshot = Some(snapshot.render());
                error.hint = Some(
                    "pick a current ref from recoverySnapshot; the failed call was not retried"
                        .to_owned(),
                );
                self.shown.baseline = Some(snapshot);
                error
            }
            Err(_) => error,
        }
    }

    /// NOT_EDITABLE (docs/error-codes.md): fill/clear on a ref whose baseline line is a `(container)`
    /// fails at once, pointing at the first editable field inside it (or a
    /// button or link that may reveal one).
    pub fn container_not_editable(
        &self,
        verb: &str,
        selector: &chromate::Selector,
    ) -> Option<ToolError> {
        let number = selector.element_ref()?;
        let lines = &self.shown.baseline.as_ref()?.lines;
        let position = lines.iter().position(|line| {
            line.element_ref.map(chromate::snapshot::ElementRef::number) == Some(number)
        })?;
        let container = &lines[position];
        if !container.container {
            return None;
        }
        let inside: Vec<&chromate::snapshot::Line> = lines[position + 1..]
            .iter()
            .take_while(|line| line.depth > container.depth)
            .collect();
        let named = |line: &chromate::snapshot::Line| {
            let element_ref = line.element_ref.map(|r| r.to_string()).unwrap_or_default();
            (element_ref, line.name.clone().unwrap_or_default())
        };
        let field = inside.iter().find(|line| {
            matches!(
                line.role.as_str(),
                "textbox" | "searchbox" | "combobox" | "spinbutton"
            )
        });
        let reveal = inside
            .iter()
            .find(|line| matches!(line.role.as_str(), "button" | "link"));
        let (hint, alternative) = match (field, reveal) {
            (Some(line), _) => {
                let (element_ref, name) = named(line);
                (
                    format!("fill ref={element_ref} ({name:?})"),
                    Some(element_ref),
                )
            }
            (None, Some(line)) => {
                let (element_ref, name) = named(line);
                (
                    format!("click ref={element_ref} ({name:?}) to reveal an editable field"),
                    Some(element_ref),
                )
            }
            (None, None) => (
                "choose an editable field inside this container from a fresh snapshot".to_owned(),
                None,
            ),
        };
        let mut detail = json!({ "target": format!("ref=e{number}"), "role": container.role });
        if let Some(alternative) = alternative {
            detail["alternative"] = json!(alternative);
        }
        Some(
            ToolError::new(
                ToolErrorCode::NotEditable,
                format!(
                    "{verb}: ref=e{number} is a {} container, not an editable field",
                    container.role
                ),
            )
            .with_hint(hint)
            .with_detail(detail),
        )
    }

    /// docs/mcp.md#refs: a ref selector with no baseline is STALE_REF `no-snapshot`, whether or
    /// not the session issued it (row 3 comes after); a ref it issued gets a recovery
    /// snapshot (docs/mcp.md#refs), whose refs work on the next call.
    pub async fn check_ref_baseline(
        &mut self,
        verb: &str,
        page: &chromate::Page,
        ref_number: Option<u64>,
    ) -> Result<(), ToolError> {
        match ref_number {
            Some(number) if self.shown.baseline.is_none() => Err(self
                .refuse(verb, Some(page), Refusal::NoSnapshot { number })
                .await),
            _ => Ok(()),
        }
    }
}
