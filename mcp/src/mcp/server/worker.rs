//! The tool-call worker (docs/mcp.md#tabs-for-parallel-agents): takes calls from the queue in
//! arrival order and starts each as a task of its own, under one rule. A call without `tab`
//! (and every call of a `--session` attach) holds the gate alone: it starts once every call
//! before it ended, and the calls after it wait for it, so such calls run one at a time in
//! arrival order as they always did. A call that names a tab shares the gate with the other
//! tab calls and waits only for the call before it on the same tab: calls on different tabs
//! run at the same time, calls on one tab in order. The worker takes the gate for each call
//! before it looks at the next, so no call ever overtakes one that came before it and needs
//! the gate alone.

use super::*;

/// What a call holds while it runs.
enum Slot {
    /// The gate alone: a call without `tab`.
    Alone(tokio::sync::OwnedRwLockWriteGuard<()>),
    /// The gate shared, after the end of the call before it on the same tab.
    Tab {
        gate: tokio::sync::OwnedRwLockReadGuard<()>,
        previous: Option<tokio::sync::oneshot::Receiver<()>>,
        /// Dropped when the call ends, which starts the next call on the tab.
        done: tokio::sync::oneshot::Sender<()>,
    },
}

pub(super) async fn run_worker(shared: Arc<Shared>) {
    loop {
        let (call, seq, cancel_rx) = loop {
            let notified = shared.wake.notified();
            {
                let mut queue = shared.queue();
                if queue.closed {
                    return;
                }
                // Popping and recording it under one lock: a cancel always finds the call in
                // one place or the other.
                if let Some(call) = queue.pending.pop_front() {
                    let (cancel_tx, cancel_rx) = watch::channel(false);
                    let seq = queue.next_seq;
                    queue.next_seq += 1;
                    queue.running.push(RunningCall {
                        seq,
                        id: call.id.clone(),
                        cancel: cancel_tx,
                        abort: None,
                    });
                    break (call, seq, cancel_rx);
                }
            }
            notified.await;
        };
        let tab = chromate_command::session::tab_argument(&call.arguments)
            .filter(|_| shared.attached.is_none())
            .filter(|_| chromate_command::runs_on_tab(call.decl, &call.arguments))
            .map(str::to_owned);
        let slot = match tab {
            None => Slot::Alone(shared.gate.clone().write_owned().await),
            Some(tab) => {
                let gate = shared.gate.clone().read_owned().await;
                let (done, tail) = tokio::sync::oneshot::channel();
                let previous = chromate_command::sync::lock(&shared.tails).insert(tab, tail);
                Slot::Tab {
                    gate,
                    previous,
                    done,
                }
            }
        };
        if shared.queue().closed {
            call.progress.with_state(|state| state.finished = true);
            return;
        }
        start(&shared, call, seq, cancel_rx, slot);
    }
}

/// Starts `call` as a task holding `slot`; its answer goes out when it ends.
fn start(
    shared: &Arc<Shared>,
    call: QueuedCall,
    seq: u64,
    cancel_rx: watch::Receiver<bool>,
    slot: Slot,
) {
    let progress = call.progress.clone();
    let id = call.id.clone();
    let task_shared = shared.clone();
    let cancel = Cancel::new(cancel_rx.clone());
    let handle = tokio::spawn(async move {
        match slot {
            // Cancelled while it waited for its turn: it never runs, as a queued call.
            Slot::Alone(_) if cancel.is_cancelled() => Value::Null,
            Slot::Alone(_gate) => {
                call.progress
                    .set_phase(format!("running {}", call.decl.name));
                let mut session = task_shared.session.lock().await;
                let attached = task_shared.attached.as_ref();
                let envelope = execute(&mut session, attached, call, cancel).await;
                if let Some(projection) = &task_shared.webmcp {
                    projection.publish(&mut session);
                }
                envelope
            }
            Slot::Tab {
                gate,
                previous,
                done,
            } => {
                if let Some(previous) = previous {
                    let _ = previous.await;
                }
                if cancel.is_cancelled() {
                    return Value::Null;
                }
                call.progress
                    .set_phase(format!("running {}", call.decl.name));
                let envelope = execute_on_tab(&task_shared, call, cancel).await;
                drop(done);
                drop(gate);
                envelope
            }
        }
    });
    if let Some(running) = shared
        .queue()
        .running
        .iter_mut()
        .find(|running| running.seq == seq)
    {
        running.abort = Some(handle.abort_handle());
    }
    let shared = shared.clone();
    tokio::spawn(async move {
        let envelope = match handle.await {
            Ok(envelope) => envelope,
            Err(join_error) => RpcError::new(
                id.clone(),
                jsonrpc::INTERNAL_ERROR,
                format!("internal error: tool call failed: {join_error}"),
            )
            .to_json(),
        };
        let cancelled = *cancel_rx.borrow();
        shared.queue().running.retain(|running| running.seq != seq);
        progress.with_state(|state| {
            if !state.finished && !cancelled {
                shared.outbox.send(&envelope);
            }
            state.finished = true;
        });
    });
}

/// Runs one validated call against the session (or the attached one); returns the response
/// envelope.
async fn execute(
    session: &mut ToolSession,
    attached: Option<&Attached>,
    call: QueuedCall,
    cancel: Cancel,
) -> Value {
    let decl = call.decl;
    // A tool that runs in browsers of its own (the flows) runs here, attached or not.
    let reply = match attached {
        Some(attached) if !matches!(decl.runs, Runs::Detached(_)) => {
            remote(attached, &call, &cancel, session.config.file_urls).await
        }
        _ => chromate_command::run(session, decl, call.arguments, &cancel, &call.progress).await,
    };
    respond(session, decl, &call.id, call.era, &reply)
}

/// A call on a tab: the session is locked only around it (`chromate_command::run_shared`) and
/// to answer.
async fn execute_on_tab(shared: &Shared, call: QueuedCall, cancel: Cancel) -> Value {
    let decl = call.decl;
    let reply = chromate_command::run_shared(
        &shared.session,
        decl,
        call.arguments,
        &cancel,
        &call.progress,
    )
    .await;
    let mut session = shared.session.lock().await;
    let envelope = respond(&mut session, decl, &call.id, call.era, &reply);
    if let Some(projection) = &shared.webmcp {
        projection.publish(&mut session);
    }
    envelope
}

/// The response envelope of `reply`: its result for the call's era, capped
/// (docs/mcp.md#results).
fn respond(
    session: &mut ToolSession,
    decl: &ToolDecl,
    id: &Value,
    era: Era,
    reply: &Reply,
) -> Value {
    let result = era.decorate(
        "tools/call",
        call_result(reply, session.config.structured_content),
    );
    let mut envelope = jsonrpc::response(id, result);
    let cap = session.artifacts.limits().max_response_bytes;
    let artifacts = &mut session.artifacts;
    cap_response(&mut envelope, cap, |full_json| {
        match artifacts.write(&format!("{}.json", decl.name), full_json.as_bytes()) {
            Ok(path) => Some(path.display().to_string()),
            Err(WriteError::Quota | WriteError::Io(_)) => None,
        }
    });
    envelope
}
