//! Held-lock monitors: a task per guard that marks it lost when its lease is lost, its client
//! closes, or anyone deletes its key.
//!
//! Most locks are held briefly, so a monitor starts only when the lock has been held for
//! [`WATCH_OWN_KEY_AFTER`], or at once when somebody asks for the guard's lost signal (or the
//! guard inherits the watch of a long wait). Until then `is_held()` checks the lease and the
//! client itself, and a release costs nothing but its request: one queue per client starts
//! the late monitors in batches, instead of a task and a timer per acquisition.

use crate::lease::lost::LostReason;
use crate::runtime;
use crate::sync::guard::Shared;
use crate::sync::own_key::{OwnKey, WATCH_OWN_KEY_AFTER};
use crate::watch::hub::Subscription;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Monitors due within this much of each other start together.
const BATCH: Duration = Duration::from_millis(10);

/// A client's queue of guards whose monitor starts later.
pub(crate) struct Deferred {
    queue: Mutex<VecDeque<(Instant, Weak<Shared>)>>,
    wake: Notify,
}

impl Deferred {
    pub fn new(closed: CancellationToken) -> Arc<Deferred> {
        let deferred = Arc::new(Deferred { queue: Mutex::new(VecDeque::new()), wake: Notify::new() });
        runtime::spawn(run(deferred.clone(), closed));
        deferred
    }

    /// Starts the guard's monitor `WATCH_OWN_KEY_AFTER` from now, unless it started before.
    pub fn push(&self, guard: Weak<Shared>) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.push_back((Instant::now() + WATCH_OWN_KEY_AFTER, guard));
        if queue.len() == 1 {
            self.wake.notify_one();
        }
    }

    fn take_due(&self) -> Vec<Weak<Shared>> {
        let due = Instant::now() + BATCH;
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let n = queue.iter().take_while(|(at, _)| *at <= due).count();
        queue.drain(..n).map(|(_, guard)| guard).collect()
    }
}

async fn run(deferred: Arc<Deferred>, closed: CancellationToken) {
    loop {
        let next = deferred.queue.lock().unwrap_or_else(|e| e.into_inner()).front().map(|(at, _)| *at);
        let wait = async {
            match next {
                Some(at) => tokio::time::sleep_until(at).await,
                None => deferred.wake.notified().await,
            }
        };
        tokio::select! {
            _ = wait => {}
            _ = closed.cancelled() => return,
        }
        for guard in deferred.take_due() {
            if let Some(shared) = guard.upgrade() {
                start(&shared, None);
            }
        }
    }
}

/// Starts the guard's monitor unless it already runs or the guard was released.
pub(crate) fn start(shared: &Arc<Shared>, own_sub: Option<Subscription>) {
    if shared.released.load(Ordering::Acquire) || shared.monitored.swap(true, Ordering::AcqRel) {
        return;
    }
    // Stopped by aborting its task: a cancellation token would cost every held lock a
    // heap node and its future a slot.
    let task = runtime::spawn(monitor(Arc::downgrade(shared), own_sub)).abort_handle();
    let monitor = shared.monitor.get_or_init(|| task);
    // See `Shared::mark_released`.
    std::sync::atomic::fence(Ordering::SeqCst);
    if shared.released.load(Ordering::SeqCst) {
        monitor.abort();
    }
}

/// Holds only a weak reference, so it never keeps a dropped guard alive.
async fn monitor(shared: Weak<Shared>, own_sub: Option<Subscription>) {
    let Some((client, key, token, lease_lost, acquired)) =
        shared.upgrade().map(|s| (s.client.clone(), s.key.clone(), s.token, s.lease.lost(), s.acquired))
    else {
        return;
    };
    let mut own = OwnKey::new(&client, key, token, acquired + WATCH_OWN_KEY_AFTER, own_sub);
    let reason = tokio::select! {
        r = lease_lost.wait() => r,
        _ = client.inner.closed.cancelled() => LostReason::Closed,
        _ = own.deleted() => LostReason::KeyDeleted,
    };
    // Not when released meanwhile: the delete seen may be the release's own (`mark_released`
    // comes before it, so it is seen here).
    if let Some(s) = shared.upgrade().filter(|s| !s.released.load(Ordering::SeqCst)) {
        s.mark_lost(reason);
    }
}
