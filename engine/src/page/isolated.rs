//! Calls into chromate's isolated world: the world made (and chromate's page scripts installed)
//! on demand in a frame, found again after its document changed, and page functions called in
//! it by name.

use std::sync::Arc;

use serde_json::Value;

use super::evaluate::{exception_error, remote_value};
use super::Page;
use crate::cdp::{page as cdp_page, runtime};
use crate::error::{Error, Result};
use crate::session::Session;
use crate::transport::lock;

/// chromate's isolated world name.
pub(crate) const WORLD_NAME: &str = "chromate";

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
    pub(crate) async fn call_isolated_with(
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
        let mut last_error = None;
        for _ in 0..3 {
            let (session, context_id) = self.isolated_context(frame_id).await?;
            let params = runtime::CallFunctionOnParams::new(declaration.clone())
                .execution_context_id(runtime::ExecutionContextId(context_id))
                .arguments(args.iter().map(call_argument).collect())
                .return_by_value(true)
                .await_promise(true);
            match self.unless_dialog(session.send(&params)).await {
                Ok(answer) => {
                    if let Some(details) = answer.exception_details {
                        return Err(exception_error(&details));
                    }
                    return remote_value(answer.result);
                }
                // The document went away between lookup and call: find the new world.
                Err(Error::Protocol { message, .. }) if message.contains("context") => {
                    self.shared.update(|s| {
                        s.contexts.retain(|_, c| {
                            c.session.as_deref() != session.id()
                                || !c.isolated
                                || Some(c.frame_id.as_str()) != frame_id
                        });
                    });
                    last_error = Some(Error::StateInvalid {
                        message: format!("the frame's document changed during {function}"),
                    });
                }
                Err(other) => return Err(other),
            }
        }
        Err(last_error.unwrap_or(Error::PageClosed))
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
    pub(crate) async fn isolated_context(&self, frame_id: Option<&str>) -> Result<(Session, i64)> {
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
