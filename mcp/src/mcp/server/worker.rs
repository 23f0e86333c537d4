//! The tool-call worker (docs/mcp.md#tabs-for-parallel-agents): takes calls from the queue in
//! arrival order and starts each as a task of its own, under one rule. A call without `tab`
//! (and every call of a `--session` attach) holds the gate alone: it starts once every call
//! before it ended, and the calls after it wait for it, so such calls run one at a time in
//! arrival order as they always did. A call that names a tab shares the gate with the other
//! tab calls and waits only for the call before it on the same tab: calls on different tabs
//! run at the same time, calls on one tab in order. A browser_page `open` or `close` shares the
//! gate too, after the browser_page `open`/`close` before it (they change the tabs, one at a
//! time), never after calls on tabs: a close of a tab a call runs on ends that call
//! (`tab-closed`), and the calls on that tab that came after the close wait for it. The worker
//! takes the gate for each call before it looks at the next, so no call ever overtakes one that
//! came before it and needs the gate alone.

use super::*;

/// What a call holds while it runs.
enum Slot {
    /// The gate alone: a call without `tab`.
    Alone(tokio::sync::OwnedRwLockWriteGuard<()>),
    /// The gate shared, after the end of the call before it on the same tab (for a
    /// browser_page `open` or `close`, the one before it).
    Tab {
        gate: tokio::sync::OwnedRwLockReadGuard<()>,
        previous: Option<tokio::sync::oneshot::Receiver<()>>,
        /// Dropped when the call ends, which starts the next call on the tab (for a close
        /// that names a tab, on that tab too).
        done: Vec<tokio::sync::oneshot::Sender<()>>,
    },
}

/// The key of browser_page's `open` and `close` among the tabs' tails (no tab id has it).
const PAGE_CALLS: &str = "browser_page";

/// Where a call waits its turn.
enum Turn {
    Alone,
    Tab(String),
    /// A browser_page `open` or `close`; the tab a close names.
    Page(Option<String>),
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
        let slot = match turn(&shared, &call) {
            Turn::Alone => Slot::Alone(shared.gate.clone().write_owned().await),
            Turn::Tab(tab) => {
                let gate = shared.gate.clone().read_owned().await;
                let (done, tail) = tokio::sync::oneshot::channel();
                let previous = chromate_command::sync::lock(&shared.tails).insert(tab, tail);
                Slot::Tab {
                    gate,
                    previous,
                    done: vec![done],
                }
            }
            Turn::Page(closes) => {
                let gate = shared.gate.clone().read_owned().await;
                let (done, tail) = tokio::sync::oneshot::channel();
                let mut tails = chromate_command::sync::lock(&shared.tails);
                let previous = tails.insert(PAGE_CALLS.to_owned(), tail);
                let mut done = vec![done];
                if let Some(tab) = closes {
                    // Not after the calls running on the tab (the close ends them), but
                    // before the ones that come after it.
                    let (closed, tail) = tokio::sync::oneshot::channel();
                    tails.insert(tab, tail);
                    done.push(closed);
                }
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

/// How `call` takes its turn: alone, on its tab, or as a browser_page `open`/`close`. A
/// `--session` attach runs every call alone (in the daemon, one at a time).
fn turn(shared: &Shared, call: &QueuedCall) -> Turn {
    if shared.attached.is_some() {
        return Turn::Alone;
    }
    if chromate_command::runs_on_tab(call.decl, &call.arguments) {
        if let Some(tab) = chromate_command::session::tab_argument(&call.arguments) {
            return Turn::Tab(tab.to_owned());
        }
    }
    match chromate_command::opens_or_closes_a_tab(call.decl, &call.arguments) {
        Some(closes) => Turn::Page(closes.map(str::to_owned)),
        None => Turn::Alone,
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
