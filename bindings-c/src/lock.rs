//! Locks: acquire (with timeout and cancel), the held lock's accessors, release, free.

use crate::callback::{self, etcdlock_lost_cb, Slot};
use crate::cancel::etcdlock_cancel;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use crate::lock_async::Callbacks;
use etcdlock::{Client, Election, ErrorKind, LockGuard, LockOptions, Mutex, RwLock, Semaphore};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Wait without a time limit (for every `timeout_ms` argument).
pub const ETCDLOCK_WAIT_FOREVER: i64 = -1;

/// A held (or formerly held) lock. Its accessors may be called from any thread; it must not
/// be freed while another thread uses it.
pub struct etcdlock_lock {
    guard: Arc<LockGuard>,
    client: Client,
    lost: Arc<Slot>,
    /// Its client's, for release_async.
    callbacks: Arc<Callbacks>,
    /// release_async was called: the release is under way (etcdlock_lock_free must not start
    /// a second one, whose success would make the first report NOT_HELD).
    releasing: AtomicBool,
}

/// Acquires the lock `name` (a NUL-terminated string, not ending in '/'), whose holder's
/// lease has a TTL of `ttl_s` seconds and is kept alive in the background.
///
/// `timeout_ms`: 0 tries once (ETCDLOCK_E_WOULD_BLOCK if the lock is held or has waiters),
/// ETCDLOCK_WAIT_FOREVER waits without limit, otherwise ETCDLOCK_E_LOCK_TIMEOUT when it passes.
/// `cancel` (nullable): etcdlock_cancel_trigger makes the wait fail with
/// ETCDLOCK_E_CANCELLED. On every failure the queue key is removed before this returns.
/// Fair: waiters get the lock in arrival order (shared with `etcdctl lock` and Go's
/// concurrency.Mutex). On success writes the held lock to `*out`.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_acquire(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    out: *mut *mut etcdlock_lock,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let (mutex, opts) = unsafe { request(c, name, ttl_s, timeout_ms, cancel) }?;
        unsafe { acquire(c, Acquirer::Mutex(mutex), opts, out) }
    })
}

/// etcdlock_lock_acquire that also stores `value` (`value_len` bytes, at most 4096; NULL with
/// length 0 for none) in the queue key, for etcdlock_inspect to show: who holds or waits (a
/// host, a pid, a short text). etcdlock_lock_acquire stores nothing, as `etcdctl lock` does.
/// A longer value is ETCDLOCK_E_INVALID_ARGUMENT before anything is sent.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_acquire_with_value(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    value: *const u8,
    value_len: usize,
    out: *mut *mut etcdlock_lock,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let (mutex, opts) = unsafe { request_with_value(c, (name, ttl_s, timeout_ms, cancel), value, value_len) }?;
        unsafe { acquire(c, Acquirer::Mutex(mutex), opts, out) }
    })
}

/// The fencing token: strictly greater than every earlier holder's token for this name.
/// 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_fencing_token(lock: *const etcdlock_lock) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(lock, "lock") }?.guard.fencing_token()))
}

/// Cheap local check: not released, not lost, and the lease's conservative local deadline
/// has not passed. false for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_is_held(lock: *const etcdlock_lock) -> bool {
    ffi::value(false, || Ok(unsafe { ffi::arg(lock, "lock") }?.guard.is_held()))
}

/// Fills `*out` with the lock's health (held, lost or released; `ok` while held and not in
/// doubt): what a readiness probe answers. A permit, a read, a write and a leadership are
/// etcdlock_lock handles too. ETCDLOCK_E_INVALID_ARGUMENT for a NULL `lock` or `out`.
///
///     etcdlock_health h;
///     int status = etcdlock_lock_health(lock, &h) == ETCDLOCK_OK && h.ok ? 200 : 503;
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_health(lock: *const etcdlock_lock, out: *mut crate::health::etcdlock_health) -> c_int {
    crate::health::fill(out, || Ok(unsafe { ffi::arg(lock, "lock") }?.guard.health()))
}

/// Why the lock was lost (an ETCDLOCK_LOST_* reason), or 0 if it was not (or NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_lost_reason(lock: *const etcdlock_lock) -> c_int {
    ffi::value(0, || Ok(unsafe { ffi::arg(lock, "lock") }?.guard.lost_reason().map_or(0, callback::reason_code)))
}

/// This holder's queue key in etcd (`<name>/<lease hex>[-n]`), `*len` bytes, not
/// NUL-terminated; valid until the lock is freed. NULL for a NULL lock (`len` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_key(lock: *const etcdlock_lock, len: *mut usize) -> *const u8 {
    ffi::value(std::ptr::null(), || {
        let key = unsafe { ffi::arg(lock, "lock") }?.guard.key();
        if let Some(len) = unsafe { len.as_mut() } {
            *len = key.len();
        }
        Ok(key.as_ptr())
    })
}

/// The ID of the lease the lock is held with (shared by the client's locks of the same TTL).
/// 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_lease_id(lock: *const etcdlock_lock) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(lock, "lock") }?.guard.lease_id()))
}

/// Registers `cb`, called once with `user_data` and an ETCDLOCK_LOST_* reason when the lock
/// is lost (not when it is released): at once, on a library thread, if it is already lost.
/// A second registration replaces the first. No call happens after etcdlock_lock_release or
/// etcdlock_lock_free has returned. ETCDLOCK_E_NOT_HELD once the lock was released.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_on_lost(lock: *mut etcdlock_lock, cb: etcdlock_lost_cb, user_data: *mut c_void) -> c_int {
    ffi::status(|| {
        let lock = unsafe { ffi::arg(lock, "lock") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        if !lock.guard.is_held() && lock.guard.lost_reason().is_none() {
            return Err(etcdlock::Error::new(ErrorKind::NotHeld, "the lock was released").into());
        }
        lock.lost.arm(cb, user_data, lock.guard.lost());
        Ok(())
    })
}

/// Releases the lock: deletes its key only if it is still this holder's (fenced).
/// ETCDLOCK_E_NOT_HELD if it was already released or lost (a lost lock's key is still removed
/// if it was ours). Disarms the lost callback.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_release(lock: *mut etcdlock_lock) -> c_int {
    ffi::status(|| {
        let lock = unsafe { ffi::arg(lock, "lock") }?;
        let guard = lock.guard.clone();
        let r = ffi::block(async move { guard.release().await });
        if !matches!(&r, Err(f) if f.status == crate::status::ETCDLOCK_E_WRONG_THREAD) {
            lock.lost.disarm();
        }
        r
    })
}

/// Frees the lock, releasing it first if still held (in the background when called from a
/// library thread) and no etcdlock_lock_release_async is under way. No lost callback runs
/// after this returns. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_free(lock: *mut etcdlock_lock) {
    ffi::void(|| {
        let Some(lock) = (unsafe { ffi::from_raw(lock) }) else { return };
        lock.lost.disarm();
        // Only a held lock needs a round trip here (released: nothing to do; lost but not
        // released: dropping the guard deletes the key if still ours, in the background).
        if lock.guard.is_held() && !lock.releasing.load(Ordering::Acquire) && ffi::may_block() && !lock.client.is_closed() {
            let guard = lock.guard.clone();
            let _ = ffi::block(async move { guard.release().await });
        }
    })
}


impl etcdlock_lock {
    pub(crate) fn new(guard: LockGuard, client: Client, callbacks: Arc<Callbacks>) -> etcdlock_lock {
        etcdlock_lock { guard: Arc::new(guard), client, lost: Slot::new(), callbacks, releasing: AtomicBool::new(false) }
    }

    /// For release_async: the guard to release, once.
    pub(crate) fn start_release(&self) -> Arc<LockGuard> {
        self.releasing.store(true, Ordering::Release);
        self.guard.clone()
    }

    pub(crate) fn callbacks(&self) -> &Arc<Callbacks> {
        &self.callbacks
    }

    pub(crate) fn guard(&self) -> Arc<LockGuard> {
        self.guard.clone()
    }

    pub(crate) fn disarm_lost(&self) {
        self.lost.disarm();
    }
}

/// What an acquire takes: a mutex, a semaphore's permit, a read-write lock's read or write, or
/// an election's leadership. Each is a queue key of the core's held by its own rule, and each
/// gives a LockGuard, so one lock handle type serves them all.
pub(crate) enum Acquirer {
    Mutex(Mutex),
    Semaphore(Semaphore),
    Read(RwLock),
    Write(RwLock),
    Election(Election),
}

impl Acquirer {
    pub(crate) async fn acquire(self, opts: LockOptions) -> etcdlock::Result<LockGuard> {
        match self {
            Acquirer::Mutex(m) => m.lock_with(opts).await,
            Acquirer::Semaphore(s) => s.acquire_with(opts).await,
            Acquirer::Read(rw) => rw.read_with(opts).await,
            Acquirer::Write(rw) => rw.write_with(opts).await,
            Acquirer::Election(e) => e.campaign_with(opts).await.map(etcdlock::Leadership::into_guard),
        }
    }
}

/// Blocks until `acquirer` holds (within `opts`) and writes the held lock to `*out`.
pub(crate) unsafe fn acquire(c: &etcdlock_client, acquirer: Acquirer, opts: LockOptions, out: *mut *mut etcdlock_lock) -> ffi::FfiResult {
    let guard = ffi::block(async move { acquirer.acquire(opts).await })?;
    unsafe { *out = ffi::into_raw(etcdlock_lock::new(guard, c.client.clone(), c.callbacks.clone())) };
    Ok(())
}

/// The acquire arguments every kind shares, checked: the name, the TTL and how to wait.
pub(crate) unsafe fn wait_args(
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
) -> ffi::FfiResult<(Vec<u8>, LockOptions)> {
    let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
    let timeout = ffi::wait(timeout_ms)?;
    // The upper bound is core's to check.
    if ttl_s <= 0 {
        return Err(invalid(format!("ttl_s must be a positive number of seconds, got {ttl_s}")));
    }
    // SAFETY: NULL means no token; otherwise a live token from etcdlock_cancel_new.
    let cancel = unsafe { cancel.as_ref() }.map(|t| t.token.clone());
    Ok((name, LockOptions { timeout, cancel, ..Default::default() }))
}

/// The acquire arguments both mutex forms share, checked: the mutex for `name` and how to wait.
pub(crate) unsafe fn request(
    c: &etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
) -> ffi::FfiResult<(etcdlock::Mutex, LockOptions)> {
    let (name, opts) = unsafe { wait_args(name, ttl_s, timeout_ms, cancel) }?;
    Ok((c.client.mutex(name, ttl_s)?, opts))
}

/// A value for a queue key (`value_len` bytes at `value`, NULL with 0 for none), checked.
pub(crate) unsafe fn lock_value(value: *const u8, value_len: usize) -> ffi::FfiResult<Vec<u8>> {
    let value = unsafe { ffi::bytes(value, value_len, "value") }?;
    etcdlock::check_lock_value(value)?;
    Ok(value.to_vec())
}

/// [`request`] with the value an acquire stores in its queue key (`value_len` bytes at `value`,
/// NULL with 0 for none), checked before anything else is.
pub(crate) unsafe fn request_with_value(
    c: &etcdlock_client,
    (name, ttl_s, timeout_ms, cancel): (*const c_char, i64, i64, *const etcdlock_cancel),
    value: *const u8,
    value_len: usize,
) -> ffi::FfiResult<(etcdlock::Mutex, LockOptions)> {
    let value = unsafe { lock_value(value, value_len) }?;
    let (mutex, mut opts) = unsafe { request(c, name, ttl_s, timeout_ms, cancel) }?;
    opts.value = value;
    Ok((mutex, opts))
}
