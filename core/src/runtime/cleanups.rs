//! The background cleanups in flight (revokes of dropped leases, deletes of abandoned queue
//! keys), counted so that [`super::shutdown`] can wait for them: a runtime that shuts down
//! drops its tasks, and a revoke dropped that way leaves its lease (and every key on it) until
//! the TTL ends.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

#[derive(Default)]
pub(super) struct Cleanups {
    running: AtomicUsize,
    idle: Notify,
}

/// Counts one cleanup until its task ends, however it ends (finished, or dropped by a runtime
/// shutting down).
struct Running(Arc<Cleanups>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Cleanups {
    /// `fut`, counted while it runs.
    pub(super) fn track<F: Future<Output = ()> + Send + 'static>(self: &Arc<Self>, fut: F) -> impl Future<Output = ()> + Send + 'static {
        self.running.fetch_add(1, Ordering::AcqRel);
        let running = Running(self.clone());
        async move {
            fut.await;
            drop(running);
        }
    }

    /// Returns once no cleanup is running (the caller bounds the wait).
    pub(super) async fn idle(&self) {
        loop {
            // Created before the check: a `notify_waiters` after it wakes this one.
            let notified = self.idle.notified();
            if self.running.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}
