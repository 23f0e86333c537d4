//! Calls into chromate's isolated world: the world made (and chromate's page scripts installed)
//! on demand in a frame, found again after its document changed, and page functions called in
//! it by name.

use std::sync::Arc;

use serde_json::Value;

use super::evaluate::{exception_error, remote_value};
use super::Page;
use crate::cdp::{page as cdp_page, runtime};
use crate::error::{Error, Result};
use crate::rt::lock;
use crate::session::Session;
use crate::wait::changes::{self, Check};

/// chromate's isolated world name.
pub(crate) const WORLD_NAME: &str = "chromate";

/// How many new documents one call into a frame follows before it fails
/// [`Error::DocumentKeepsChanging`]: a page that navigates or reloads itself without pause
/// would otherwise be chased until the call's deadline.
pub(crate) const DOCUMENT_CHANGES: u32 = 10;

/// How long a call whose document went away waits for the next one to commit before it tries
/// again anyway.
const NEXT_DOCUMENT: std::time::Duration = std::time::Duration::from_millis(500);

/// Whether `err` is the browser saying the frame's document, or its execution context, went
/// away under a command: the frame navigated (or is navigating) to another document.
pub(crate) fn document_gone(err: &Error) -> bool {
    const GONE: [&str; 5] = [
        // "Cannot find context with specified id", "Execution context was destroyed."
        "context",
        "Inspected target navigated or closed",
        "No frame for given id found",
        "Frame with the given id was not found",
        "Could not create isolated world",
    ];
    matches!(err, Error::Protocol { message, .. } if GONE.iter().any(|gone| message.contains(gone)))
}

impl Page {
    /// Calls one of chromate's page functions (`"snapshot.take"`) with `arg` in the isolated
    /// world of `frame_id` (the main frame if `None`), returning its JSON result.
    pub(crate) async fn call_isolated(
        &self,
        frame_id: Option<&str>,
        function: &str,
        arg: &Value,
    ) -> Result<Value> {
        self.call_isolated_with(frame_id, function, std::slice::from_ref(arg))
            .await
    }

    /// [`Page::call_isolated`] for page functions taking several arguments
    /// (`actionability.setValue(target, value)`).
    pub(crate) fn call_isolated_with<'a>(
        &'a self,
        frame_id: Option<&'a str>,
        function: &'a str,
        args: &'a [Value],
    ) -> crate::rt::Boxed<'a, Result<Value>> {
        Box::pin(self.call_isolated_with_unboxed(frame_id, function, args))
    }

    async fn call_isolated_with_unboxed(
        &self,
        frame_id: Option<&str>,
        function: &str,
        args: &[Value],
    ) -> Result<Value> {
        self.call_isolated_declaration(frame_id, function, crate::js::call_spread(function), args)
            .await
    }

    /// [`Page::call_isolated_with`] for a whole function declaration from `js/` (`function` names
    /// it in errors).
    pub(crate) async fn call_isolated_declaration(
        &self,
        frame_id: Option<&str>,
        function: &str,
        declaration: String,
        args: &[Value],
    ) -> Result<Value> {
        // The document went away between lookup and call (the frame navigated): the call
        // follows the frame to its next document, a bounded number of times.
        let mut changes = 0;
        loop {
            let document = self.document_of(frame_id);
            let attempt = async {
                let (session, context_id) = self.isolated_context(frame_id).await?;
                let params = runtime::CallFunctionOnParams::new(declaration.clone())
                    .execution_context_id(runtime::ExecutionContextId(context_id))
                    .arguments(args.iter().map(call_argument).collect())
                    .return_by_value(true)
                    .await_promise(true);
                self.unless_dialog(session.send(&params)).await
            };
            match attempt.await {
                Ok(answer) => {
                    if let Some(details) = answer.exception_details {
                        return Err(exception_error(&details));
                    }
                    return remote_value(answer.result);
                }
                Err(err) if document_gone(&err) => {
                    self.forget_isolated_world(frame_id);
                    changes += 1;
                    if changes >= DOCUMENT_CHANGES {
                        tracing::debug!("{function}: the document changed {changes} times");
                        return Err(Error::DocumentKeepsChanging { changes });
                    }
                    self.wait_for_next_document(frame_id, document.as_deref())
                        .await;
                }
                Err(other) => return Err(other),
            }
        }
    }

    /// The loader id of `frame_id`'s document (the main frame's if `None`).
    fn document_of(&self, frame_id: Option<&str>) -> Option<String> {
        let state = lock(&self.shared.state);
        let frame_id = frame_id.map(str::to_owned).or(state.main_frame.clone())?;
        state.frames.get(&frame_id)?.loader_id.clone()
    }

    /// Forgets chromate's world in `frame_id` (the main frame if `None`): its document went
    /// away, and the next call makes the world again in the new one.
    fn forget_isolated_world(&self, frame_id: Option<&str>) {
        self.shared.update(|s| {
            let Some(frame) = frame_id.map(str::to_owned).or(s.main_frame.clone()) else {
                return;
            };
            let session = s.frames.get(&frame).and_then(|f| f.session.clone());
            s.contexts
                .retain(|_, c| !c.isolated || c.frame_id != frame || c.session != session);
        });
    }

    /// Waits until `frame_id` shows another document than `document` (the navigation that
    /// took it away committed), the page closes, or [`NEXT_DOCUMENT`] or the call's deadline
    /// passes, whichever comes first.
    async fn wait_for_next_document(&self, frame_id: Option<&str>, document: Option<&str>) {
        let mut version = self.shared.version.subscribe();
        let cap = tokio::time::Instant::now() + NEXT_DOCUMENT;
        let deadline = crate::wait::current().map_or(cap, |call| call.at().min(cap));
        let _ = changes::until(&mut version, deadline, || {
            let moved = self.document_of(frame_id).as_deref() != document;
            if moved || lock(&self.shared.state).closed.is_some() {
                Check::Done(())
            } else {
                Check::Pending
            }
        })
        .await;
    }

    /// Like [`Page::call_isolated`] but returns the result as a remote object: its object id
    /// (`None` for `null`/`undefined`) and the session it lives in, for DOM commands on elements.
    pub(crate) async fn call_isolated_object(
        &self,
        frame_id: Option<&str>,
        function: &str,
        arg: &Value,
    ) -> Result<Option<(Session, runtime::RemoteObjectId)>> {
        let declaration = crate::js::call_one(function);
        let (session, context_id) = self.isolated_context(frame_id).await?;
        let params = runtime::CallFunctionOnParams::new(declaration)
            .execution_context_id(runtime::ExecutionContextId(context_id))
            .arguments(vec![call_argument(arg)]);
        let answer = self.unless_dialog(session.send(&params)).await?;
        if let Some(details) = answer.exception_details {
            return Err(exception_error(&details));
        }
        Ok(answer.result.object_id.map(|id| (session, id)))
    }

    /// The session and execution context of chromate's world in a frame, created if missing.
    pub(crate) fn isolated_context<'a>(
        &'a self,
        frame_id: Option<&'a str>,
    ) -> crate::rt::Boxed<'a, Result<(Session, i64)>> {
        Box::pin(self.isolated_context_unboxed(frame_id))
    }

    async fn isolated_context_unboxed(&self, frame_id: Option<&str>) -> Result<(Session, i64)> {
        let (frame_id, frame_session) = {
            let state = lock(&self.shared.state);
            let frame_id = match frame_id {
                Some(id) => id.to_string(),
                None => state.main_frame.clone().ok_or(Error::PageClosed)?,
            };
            let frame_session = state.frames.get(&frame_id).and_then(|f| f.session.clone());
            if let Some(((_, ctx), _)) = state
                .contexts
                .iter()
                .find(|(_, c)| c.isolated && c.frame_id == frame_id)
            {
                let session = self.session_for(frame_session.clone());
                return Ok((session, *ctx));
            }
            (frame_id, frame_session)
        };
        let session = self.session_for(frame_session);
        let world = cdp_page::CreateIsolatedWorldParams::new(cdp_page::FrameId(frame_id))
            .world_name(WORLD_NAME);
        let created = session.send(&world).await?;
        let context_id = created.execution_context_id.0;
        let install = runtime::EvaluateParams::new(crate::js::install_source())
            .context_id(runtime::ExecutionContextId(context_id));
        let answer = session.send(&install).await?;
        if let Some(details) = answer.exception_details {
            return Err(exception_error(&details));
        }
        Ok((session, context_id))
    }

    /// Every frame of the page with the session that owns it (an out-of-process frame's own
    /// session, else the page's), the main frame first.
    pub(crate) fn frame_sessions(&self) -> Vec<(String, Session)> {
        let frames = self.frames();
        let owners: Vec<(String, Option<Arc<str>>)> = {
            let state = lock(&self.shared.state);
            frames
                .into_iter()
                .map(|f| {
                    let owner = state.frames.get(&f.id).and_then(|s| s.session.clone());
                    (f.id, owner)
                })
                .collect()
        };
        owners
            .into_iter()
            .map(|(id, owner)| (id, self.session_for(owner)))
            .collect()
    }

    fn session_for(&self, id: Option<Arc<str>>) -> Session {
        match id {
            None => self.session.clone(),
            Some(id) => Session {
                conn: self.session.conn.clone(),
                id: Some(id),
                timeout: self.session.timeout,
            },
        }
    }
}

fn call_argument(arg: &Value) -> runtime::CallArgument {
    runtime::CallArgument {
        value: Some(arg.clone()),
        unserializable_value: None,
        object_id: None,
    }
}
