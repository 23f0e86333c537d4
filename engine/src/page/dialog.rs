//! JavaScript dialogs: the one open, waiting for one, answering it, and failing a command at
//! once when a dialog blocks the page.

use std::time::{Duration, Instant};

use super::Page;
use crate::cdp::page as cdp_page;
use crate::error::{Error, Result};
use crate::rt::lock;
use crate::wait::changes::{self, Check, Waited};

/// A JavaScript dialog that is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    /// The dialog's message.
    pub message: String,
    /// The default answer of a prompt.
    pub default_prompt: Option<String>,
}

impl Page {
    /// The open JavaScript dialog, if any.
    pub fn dialog(&self) -> Option<Dialog> {
        lock(&self.shared.state).dialog.clone()
    }

    /// Runs `fut`, but fails with [`Error::DialogOpen`] as soon as a dialog blocks the page, and
    /// with [`Error::PageCrashed`] or [`Error::ConnectionClosed`] as soon as the tab crashes or
    /// closes.
    pub(crate) async fn unless_dialog<T>(
        &self,
        fut: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        let mut version = self.shared.version.subscribe();
        tokio::pin!(fut);
        loop {
            {
                let state = lock(&self.shared.state);
                if let Some(dialog) = &state.dialog {
                    return Err(Error::DialogOpen {
                        message: dialog.message.clone(),
                    });
                }
                // A crashed or closed tab never answers: fail at once instead of at the
                // command timeout.
                if let Some(gone) = state.gone_error() {
                    return Err(gone);
                }
            }
            tokio::select! {
                res = &mut fut => return res,
                changed = version.changed() => {
                    if changed.is_err() {
                        return fut.await;
                    }
                }
            }
        }
    }

    /// Waits until a dialog is open, up to `timeout`.
    pub async fn wait_for_dialog(&self, timeout: Duration) -> Result<Dialog> {
        let deadline = Instant::now() + timeout;
        let mut version = self.shared.version.subscribe();
        let waited = changes::until(&mut version, deadline.into(), || {
            match lock(&self.shared.state).dialog.clone() {
                Some(dialog) => Check::Done(dialog),
                None => Check::Pending,
            }
        })
        .await;
        match waited {
            Waited::Done(dialog) => Ok(dialog),
            Waited::Gone => Err(Error::PageClosed),
            Waited::TimedOut => Err(Error::Timeout {
                what: "a dialog to open".into(),
                timeout,
            }),
        }
    }

    /// Accepts the open dialog, answering a prompt with `prompt_text`.
    pub async fn accept_dialog(&self, prompt_text: Option<&str>) -> Result<Dialog> {
        self.answer_dialog(true, prompt_text).await
    }

    /// Dismisses the open dialog.
    pub async fn dismiss_dialog(&self) -> Result<Dialog> {
        self.answer_dialog(false, None).await
    }

    /// How many times in a row the open dialog reopened within a second of the previous one's
    /// answer (0 when none is open, or it opened later): at 2 or more, the page reopens it as
    /// soon as it is answered, and answering will not free the tab.
    pub fn dialog_reopens(&self) -> u32 {
        let state = lock(&self.shared.state);
        match state.dialog {
            Some(_) => state.dialog_reopens,
            None => 0,
        }
    }

    async fn answer_dialog(&self, accept: bool, prompt_text: Option<&str>) -> Result<Dialog> {
        let (dialog, serial) = {
            let state = lock(&self.shared.state);
            let dialog = state.dialog.clone().ok_or_else(|| Error::StateInvalid {
                message: "no dialog is open".into(),
            })?;
            (dialog, state.dialogs_opened)
        };
        let mut params = cdp_page::HandleJavaScriptDialogParams::new(accept);
        if let Some(text) = prompt_text {
            params = params.prompt_text(text);
        }
        self.session.send(&params).await?;
        self.shared
            .update(|s| s.dialog_answered(serial, Instant::now()));
        Ok(dialog)
    }
}
