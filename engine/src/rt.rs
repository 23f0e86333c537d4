//! Runtime helpers every floor of the engine uses: spawning a background task, locking a
//! mutex, and the type of a future boxed where it is made. A leaf: it imports no other engine
//! module, so any module may import it without climbing the engine's floors (see
//! ARCHITECTURE.md#floors).

use std::sync::Mutex;

/// Runs `task` in the background on the current tokio runtime.
///
/// Every background task goes through here as one boxed future type, so tokio's task machinery
/// is compiled once for the crate instead of once per spawned future (it was a sixth of the
/// crate's generated code).
pub(crate) fn spawn(task: impl std::future::Future<Output = ()> + Send + 'static) {
    let task: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> = Box::pin(task);
    tokio::spawn(task);
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it: every critical
/// section in the engine leaves the data consistent.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A future boxed where it is made. rustc compiles an `async fn`'s state machine into every
/// codegen unit, in every crate, that awaits it; the few large ones that many callers await
/// return this instead, so their code exists once (ARCHITECTURE.md, "Futures boxed where they
/// are made").
pub(crate) type Boxed<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
