//! Semaphores: up to `permits` permits of one name taken at once (one each, or `count` at once),
//! served in arrival order. A permit (or `count` of them) is an etcdlock_lock (fencing token, fenced writes, lost callbacks, release, free).

use crate::cancel::etcdlock_cancel;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use crate::lock::{etcdlock_lock, Acquirer};
use crate::lock_async::etcdlock_lock_cb;
use std::os::raw::{c_char, c_int, c_void};

/// The largest `permits` a semaphore may have.
pub const ETCDLOCK_MAX_PERMITS: u32 = 1024;

/// Takes one of the `permits` permits (1..ETCDLOCK_MAX_PERMITS) of the semaphore `name` (a
/// NUL-terminated string, not ending in '/'), with a lease of `ttl_s` seconds kept alive in the
/// background, and writes it to `*out` as a held lock (etcdlock_lock_release gives it back).
///
/// `timeout_ms`, `cancel` and the cleanup on failure are etcdlock_lock_acquire's: 0 tries once
/// (ETCDLOCK_E_WOULD_BLOCK when every permit is taken or others wait), otherwise
/// ETCDLOCK_E_LOCK_TIMEOUT when it passes; the queue key is removed before a failure returns.
/// Fair: permits go in arrival order. Every participant must give the same `permits`: a
/// different count from the one the current holders and waiters use is
/// ETCDLOCK_E_INVALID_ARGUMENT (the message names the count in use) and leaves nothing; the
/// count may change once nobody participates. A name a plain lock (etcdlock_lock_acquire) uses
/// is ETCDLOCK_E_INVALID_ARGUMENT too.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_semaphore_acquire(
    client: *mut etcdlock_client,
    name: *const c_char,
    permits: u32,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    out: *mut *mut etcdlock_lock,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let (acquirer, opts) = unsafe { request(c, name, permits, ttl_s, timeout_ms, cancel) }?;
        unsafe { crate::lock::acquire(c, acquirer, opts, out) }
    })
}

/// Starts etcdlock_semaphore_acquire (same arguments and semantics) without blocking, under
/// the rules of etcdlock_lock_acquire_async: ETCDLOCK_OK at once and `cb` called exactly once
/// later with the permit or the failure; bad arguments return their status here and `cb` is
/// never called. `cb` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_semaphore_acquire_async(
    client: *mut etcdlock_client,
    name: *const c_char,
    permits: u32,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        let (acquirer, opts) = unsafe { request(c, name, permits, ttl_s, timeout_ms, cancel) }?;
        crate::lock_async::start_acquire(c, acquirer, opts, cb, user_data);
        Ok(())
    })
}

/// etcdlock_semaphore_acquire that takes `count` of the `permits` permits at once (1 to
/// `permits`; 0 or more is ETCDLOCK_E_INVALID_ARGUMENT before anything is sent): one key, one
/// fencing token, released together. Admission stays in arrival order with a head-of-line rule:
/// a request for `count` waits at the head until that many permits are free, and later requests
/// (for one permit too) wait behind it, so it is never starved by smaller ones.
/// etcdlock_semaphore_acquire is this with `count` 1. etcdlock_inspect shows such a key's mode as
/// "permits=N,count=K".
#[no_mangle]
pub unsafe extern "C" fn etcdlock_semaphore_acquire_with_count(
    client: *mut etcdlock_client,
    name: *const c_char,
    permits: u32,
    count: u32,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    out: *mut *mut etcdlock_lock,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let (acquirer, opts) = unsafe { request_count(c, name, permits, count, ttl_s, timeout_ms, cancel) }?;
        unsafe { crate::lock::acquire(c, acquirer, opts, out) }
    })
}

/// Starts etcdlock_semaphore_acquire_with_count (same arguments and semantics) without
/// blocking, under the rules of etcdlock_semaphore_acquire_async. `cb` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_semaphore_acquire_with_count_async(
    client: *mut etcdlock_client,
    name: *const c_char,
    permits: u32,
    count: u32,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        let (acquirer, opts) = unsafe { request_count(c, name, permits, count, ttl_s, timeout_ms, cancel) }?;
        crate::lock_async::start_acquire(c, acquirer, opts, cb, user_data);
        Ok(())
    })
}

unsafe fn request(
    c: &etcdlock_client,
    name: *const c_char,
    permits: u32,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
) -> ffi::FfiResult<(Acquirer, etcdlock::LockOptions)> {
    unsafe { request_count(c, name, permits, 1, ttl_s, timeout_ms, cancel) }
}

unsafe fn request_count(
    c: &etcdlock_client,
    name: *const c_char,
    permits: u32,
    count: u32,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
) -> ffi::FfiResult<(Acquirer, etcdlock::LockOptions)> {
    let (name, opts) = unsafe { crate::lock::wait_args(name, ttl_s, timeout_ms, cancel) }?;
    Ok((Acquirer::Semaphore(c.client.semaphore(name, permits, ttl_s)?.with_count(count)?), opts))
}
