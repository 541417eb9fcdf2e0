//! Acquire and release without blocking a thread: the outcome arrives in a callback.
//!
//! For event-loop programs, and for many locks at once: 64 threads blocked in
//! etcdlock_lock_acquire cost two context switches per call, which on a small machine is a
//! fifth of etcd's own throughput; 64 calls in flight here cost none.

use crate::cancel::etcdlock_cancel;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid, FfiResult, Failure};
use crate::lock::{etcdlock_lock, Acquirer};
use crate::status::{set_last_error, ETCDLOCK_OK};
use std::future::Future;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Called once with the outcome of etcdlock_lock_acquire_async: `status` ETCDLOCK_OK and the
/// held lock (the callee owns it: etcdlock_lock_free), or an error status and NULL (the
/// message is in etcdlock_last_error on this thread, during the call).
///
/// Runs on a library thread that also serves the library's I/O: it must return quickly.
/// Blocking etcdlock calls made from it return ETCDLOCK_E_WRONG_THREAD; the `_async` ones work.
pub type etcdlock_lock_cb = Option<unsafe extern "C" fn(user_data: *mut c_void, status: c_int, lock: *mut etcdlock_lock)>;

/// Called once with the outcome of an `_async` call that yields no value, on a library
/// thread, under the same rules as etcdlock_lock_cb.
pub type etcdlock_done_cb = Option<unsafe extern "C" fn(user_data: *mut c_void, status: c_int)>;

/// Starts etcdlock_lock_acquire (same arguments and semantics) without blocking: returns
/// ETCDLOCK_OK at once and calls `cb` exactly once later, also when the client is freed or
/// etcdlock_shutdown runs first (ETCDLOCK_E_CLOSED), and before etcdlock_client_free returns.
/// Bad arguments return their status here, and then `cb` is never called. `cb` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_acquire_async(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
) -> c_int {
    unsafe { acquire_async(client, name, ttl_s, timeout_ms, cancel, (std::ptr::null(), 0), cb, user_data) }
}

/// etcdlock_lock_acquire_async that also stores `value` in the queue key, as
/// etcdlock_lock_acquire_with_value does (at most 4096 bytes, NULL with length 0 for none; a
/// longer value is ETCDLOCK_E_INVALID_ARGUMENT here, and `cb` is never called).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_acquire_with_value_async(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    value: *const u8,
    value_len: usize,
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
) -> c_int {
    unsafe { acquire_async(client, name, ttl_s, timeout_ms, cancel, (value, value_len), cb, user_data) }
}

#[allow(clippy::too_many_arguments)]
unsafe fn acquire_async(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    (value, value_len): (*const u8, usize),
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        let (mutex, opts) = unsafe { crate::lock::request_with_value(c, (name, ttl_s, timeout_ms, cancel), value, value_len) }?;
        start_acquire(c, Acquirer::Mutex(mutex), opts, cb, user_data);
        Ok(())
    })
}

/// Starts `acquirer`'s acquire on the runtime; `cb` gets the held lock or the failure, once.
/// The arguments are checked already: from here on, only `cb` reports.
pub(crate) fn start_acquire(
    c: &etcdlock_client,
    acquirer: Acquirer,
    opts: etcdlock::LockOptions,
    cb: unsafe extern "C" fn(*mut c_void, c_int, *mut etcdlock_lock),
    user_data: *mut c_void,
) {
    let (client, callbacks) = (c.client.clone(), c.callbacks.clone());
    spawn(&c.callbacks, user_data, async move { acquirer.acquire(opts).await }, move |user_data, outcome| {
        let (status, lock) = match outcome {
            Ok(guard) => (ETCDLOCK_OK, ffi::into_raw(etcdlock_lock::new(guard, client, callbacks))),
            Err(f) => (failed(&f), std::ptr::null_mut()),
        };
        // SAFETY: the caller registered a valid function for this user_data.
        unsafe { cb(user_data, status, lock) };
    });
}

/// Starts etcdlock_lock_release (same semantics) without blocking: returns ETCDLOCK_OK at once
/// and calls `cb`, if not NULL, exactly once when the release is done (at the latest before
/// etcdlock_client_free of the lock's client returns). The lost callback is disarmed before
/// this returns. The lock may be freed before `cb` runs.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_release_async(lock: *mut etcdlock_lock, cb: etcdlock_done_cb, user_data: *mut c_void) -> c_int {
    ffi::status(|| {
        let lock = unsafe { ffi::arg(lock, "lock") }?;
        lock.disarm_lost();
        let guard = lock.start_release();
        spawn(lock.callbacks(), user_data, async move { guard.release().await }, move |user_data, outcome| {
            let status = outcome.err().map_or(ETCDLOCK_OK, |f| failed(&f));
            if let Some(cb) = cb {
                // SAFETY: the caller registered a valid function for this user_data.
                unsafe { cb(user_data, status) };
            }
        });
        Ok(())
    })
}

pub(crate) fn failed(f: &Failure) -> c_int {
    set_last_error(&f.message);
    f.status
}

/// A client's `_async` callbacks not yet returned, so that etcdlock_client_free can wait for
/// them: none runs after it returns.
#[derive(Default)]
pub(crate) struct Callbacks {
    owed: Mutex<usize>,
    none_owed: Condvar,
}

impl Callbacks {
    /// Waits until every owed callback has returned, for at most `limit`.
    pub fn wait_all(&self, limit: Duration) {
        let owed = self.owed.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.none_owed.wait_timeout_while(owed, limit, |n| *n > 0);
    }
}

/// One owed callback, counted until it is dropped (after the callback returned).
struct Owed(Arc<Callbacks>);

impl Owed {
    fn new(callbacks: &Arc<Callbacks>) -> Owed {
        *callbacks.owed.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        Owed(callbacks.clone())
    }
}

impl Drop for Owed {
    fn drop(&mut self) {
        let mut owed = self.0.owed.lock().unwrap_or_else(|p| p.into_inner());
        *owed -= 1;
        if *owed == 0 {
            self.0.none_owed.notify_all();
        }
    }
}

/// The caller's user_data, carried to the library thread that calls back with it.
struct UserData(*mut c_void);

// SAFETY: user_data is the C caller's; callbacks are documented to run on a library thread.
unsafe impl Send for UserData {}

impl UserData {
    /// Taken whole (a closure using the field would capture the bare pointer, which is not Send).
    fn get(self) -> *mut c_void {
        self.0
    }
}

/// Runs `fut` on the shared runtime and hands its outcome to `deliver` exactly once (core's
/// `spawn_call`: also CLOSED if the runtime shuts down first, INTERNAL if it panicked),
/// counted as owed to `callbacks` until `deliver` has returned.
pub(crate) fn spawn<T: Send + 'static>(
    callbacks: &Arc<Callbacks>,
    user_data: *mut c_void,
    fut: impl Future<Output = etcdlock::Result<T>> + Send + 'static,
    deliver: impl FnOnce(*mut c_void, FfiResult<T>) + Send + 'static,
) {
    let (owed, user_data) = (Owed::new(callbacks), UserData(user_data));
    etcdlock::runtime::linger::spawn_call(fut, move |outcome| {
        deliver(user_data.get(), outcome.map_err(Failure::from));
        drop(owed);
    });
}
