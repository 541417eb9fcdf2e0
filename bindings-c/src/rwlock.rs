//! Read-write locks: any number of readers together, or one writer alone, in arrival order (a
//! waiting writer holds back later readers). A read or a write is an etcdlock_lock (fencing
//! token, fenced writes, lost callbacks, release, free). A plain lock on the same name is a
//! writer.

use crate::cancel::etcdlock_cancel;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use crate::lock::{etcdlock_lock, Acquirer};
use crate::lock_async::etcdlock_lock_cb;
use std::os::raw::{c_char, c_int, c_void};

/// Takes the read-write lock `name` (a NUL-terminated string, not ending in '/') for reading,
/// with a lease of `ttl_s` seconds kept alive in the background, and writes it to `*out` as a
/// held lock. Readers hold together; a reader waits for every writer that came before it
/// (holding or waiting). `timeout_ms`, `cancel` and the cleanup on failure are
/// etcdlock_lock_acquire's (0: ETCDLOCK_E_WOULD_BLOCK when a writer holds or waits).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_rwlock_read(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    out: *mut *mut etcdlock_lock,
) -> c_int {
    unsafe { blocking(client, name, ttl_s, timeout_ms, cancel, out, false) }
}

/// Takes the read-write lock `name` for writing: alone, after every reader and writer that
/// came before it has released. Otherwise as etcdlock_rwlock_read (0: ETCDLOCK_E_WOULD_BLOCK
/// when anyone holds or waits).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_rwlock_write(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    out: *mut *mut etcdlock_lock,
) -> c_int {
    unsafe { blocking(client, name, ttl_s, timeout_ms, cancel, out, true) }
}

/// Starts etcdlock_rwlock_read without blocking, under the rules of
/// etcdlock_lock_acquire_async (`cb` exactly once; bad arguments return their status here and
/// `cb` is never called). `cb` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_rwlock_read_async(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
) -> c_int {
    unsafe { start(client, name, ttl_s, timeout_ms, cancel, cb, user_data, false) }
}

/// Starts etcdlock_rwlock_write without blocking, as etcdlock_rwlock_read_async.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_rwlock_write_async(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
) -> c_int {
    unsafe { start(client, name, ttl_s, timeout_ms, cancel, cb, user_data, true) }
}

unsafe fn blocking(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    out: *mut *mut etcdlock_lock,
    write: bool,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let (acquirer, opts) = unsafe { request(c, name, ttl_s, timeout_ms, cancel, write) }?;
        unsafe { crate::lock::acquire(c, acquirer, opts, out) }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn start(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
    write: bool,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        let (acquirer, opts) = unsafe { request(c, name, ttl_s, timeout_ms, cancel, write) }?;
        crate::lock_async::start_acquire(c, acquirer, opts, cb, user_data);
        Ok(())
    })
}

unsafe fn request(
    c: &etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    write: bool,
) -> ffi::FfiResult<(Acquirer, etcdlock::LockOptions)> {
    let (name, opts) = unsafe { crate::lock::wait_args(name, ttl_s, timeout_ms, cancel) }?;
    let rw = c.client.rwlock(name, ttl_s)?;
    Ok((if write { Acquirer::Write(rw) } else { Acquirer::Read(rw) }, opts))
}
