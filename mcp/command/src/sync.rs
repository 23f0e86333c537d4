//! The binary's one way to take a `std::sync::Mutex`: a lock whose holder panicked is taken
//! all the same. Every value these mutexes guard (queues, progress, roots, connection
//! tables) stays valid between two statements, so a panic elsewhere never makes it unusable,
//! and a server keeps serving its other sessions.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, poisoned or not.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
