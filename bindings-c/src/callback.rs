//! Lost callbacks: run on a library thread, at most once, and never after the handle's
//! `_free` (or a release) has returned.

use etcdlock::{CancellationToken, LostReason, LostSignal};
use parking_lot::ReentrantMutex;
use std::cell::Cell;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The lock or lease is lost because its lease expired (no keepalive acknowledged in time,
/// or the server reported it gone, e.g. after `etcdctl lease revoke`).
pub const ETCDLOCK_LOST_EXPIRED: c_int = 1;
/// The lease was revoked through this library.
pub const ETCDLOCK_LOST_REVOKED: c_int = 2;
/// The lock key was deleted (by an operator, or by a revoke from elsewhere).
pub const ETCDLOCK_LOST_KEY_DELETED: c_int = 3;
/// The client was closed (etcdlock_client_free or etcdlock_shutdown).
pub const ETCDLOCK_LOST_CLOSED: c_int = 4;

/// Called once when a lock or lease is lost, on a library thread, with the `user_data` given
/// at registration and an `ETCDLOCK_LOST_*` reason. It must not block for long, and blocking
/// etcdlock calls made from it return ETCDLOCK_E_WRONG_THREAD.
pub type etcdlock_lost_cb = Option<unsafe extern "C" fn(user_data: *mut c_void, reason: c_int)>;

pub(crate) fn reason_code(r: LostReason) -> c_int {
    match r {
        LostReason::Expired => ETCDLOCK_LOST_EXPIRED,
        LostReason::Revoked => ETCDLOCK_LOST_REVOKED,
        LostReason::KeyDeleted => ETCDLOCK_LOST_KEY_DELETED,
        LostReason::Closed => ETCDLOCK_LOST_CLOSED,
    }
}

#[derive(Clone, Copy)]
struct Target {
    cb: unsafe extern "C" fn(*mut c_void, c_int),
    user_data: *mut c_void,
}

// SAFETY: user_data is the C caller's; the documented contract is that callbacks run on a
// library thread, so the caller accepts it crossing threads.
unsafe impl Send for Target {}

/// One registration slot. The lock is held while the callback runs, so `disarm` from another
/// thread waits for a running callback to return; it is reentrant so that a callback may free
/// its own handle (disarm on the same thread) without deadlocking.
pub(crate) struct Slot {
    target: ReentrantMutex<Cell<Option<Target>>>,
    started: AtomicBool,
    /// Stops the task waiting for the loss.
    stop: CancellationToken,
}

impl Slot {
    pub fn new() -> Arc<Slot> {
        Arc::new(Slot { target: ReentrantMutex::new(Cell::new(None)), started: AtomicBool::new(false), stop: CancellationToken::new() })
    }

    /// Registers `cb` (replacing an earlier registration that has not fired). The first
    /// registration starts the task that waits for `signal`.
    pub fn arm(self: &Arc<Slot>, cb: unsafe extern "C" fn(*mut c_void, c_int), user_data: *mut c_void, signal: LostSignal) {
        self.target.lock().set(Some(Target { cb, user_data }));
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let slot = self.clone();
        etcdlock::runtime::spawn(async move {
            let reason = tokio::select! {
                r = signal.wait() => r,
                _ = slot.stop.cancelled() => return,
            };
            // Off the async workers: slow C code must not stall the library's I/O. Blocking
            // pool threads still count as library threads (WRONG_THREAD for blocking calls).
            let _ = tokio::task::spawn_blocking(move || slot.fire(reason_code(reason))).await;
        });
    }

    /// Calls the registered callback, at most once, unless disarmed.
    fn fire(&self, reason: c_int) {
        let g = self.target.lock();
        if let Some(t) = g.take() {
            // SAFETY: the C caller registered a valid function for this user_data.
            unsafe { (t.cb)(t.user_data, reason) };
        }
    }

    /// No callback runs after this returns (it waits for one running on another thread).
    pub fn disarm(&self) {
        self.stop.cancel();
        self.target.lock().set(None);
    }
}
