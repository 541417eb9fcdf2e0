//! The boundary: panic catching, argument conversion, and running futures for blocking calls.

use crate::status::{set_last_error, status_of, ETCDLOCK_E_INTERNAL, ETCDLOCK_E_INVALID_ARGUMENT, ETCDLOCK_OK};
use std::ffi::CStr;
use std::future::Future;
use std::os::raw::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// A failed call: the status to return and the message for etcdlock_last_error.
pub(crate) struct Failure {
    pub status: c_int,
    pub message: String,
}

pub(crate) type FfiResult<T = ()> = Result<T, Failure>;

impl From<etcdlock::Error> for Failure {
    fn from(e: etcdlock::Error) -> Self {
        Failure { status: status_of(e.kind()), message: e.to_string() }
    }
}

pub(crate) fn invalid(message: impl Into<String>) -> Failure {
    Failure { status: ETCDLOCK_E_INVALID_ARGUMENT, message: format!("INVALID_ARGUMENT: {}", message.into()) }
}

fn panic_failure(payload: Box<dyn std::any::Any + Send>) -> Failure {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Failure { status: ETCDLOCK_E_INTERNAL, message: format!("INTERNAL: panic in etcdlock: {what}") }
}

/// Runs the body of a status-returning export: no panic crosses into C, and every failure
/// leaves its message for etcdlock_last_error.
pub(crate) fn status(body: impl FnOnce() -> FfiResult) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| Err(panic_failure(p))) {
        Ok(()) => ETCDLOCK_OK,
        Err(f) => {
            set_last_error(&f.message);
            f.status
        }
    }
}

/// Runs the body of a value-returning export (getters): `default` on failure.
pub(crate) fn value<T>(default: T, body: impl FnOnce() -> FfiResult<T>) -> T {
    match catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| Err(panic_failure(p))) {
        Ok(v) => v,
        Err(f) => {
            set_last_error(&f.message);
            default
        }
    }
}

/// Runs the body of a `void` export (the `_free` functions): nothing to report to.
pub(crate) fn void(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

/// A shared reference from a handle pointer, or INVALID_ARGUMENT for NULL.
pub(crate) unsafe fn arg<'a, T>(p: *const T, what: &str) -> FfiResult<&'a T> {
    // SAFETY: non-NULL handle pointers come from this library and are alive (caller's contract).
    unsafe { p.as_ref() }.ok_or_else(|| invalid(format!("{what} must not be NULL")))
}

/// Checks an output pointer (written only on success, by the caller of this).
pub(crate) fn out<T>(p: *mut *mut T, what: &str) -> FfiResult<*mut *mut T> {
    if p.is_null() {
        return Err(invalid(format!("{what} must not be NULL")));
    }
    Ok(p)
}

/// A byte buffer; NULL is allowed only with length 0.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize, what: &str) -> FfiResult<&'a [u8]> {
    if p.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(invalid(format!("{what} is NULL with a non-zero length"))) };
    }
    // SAFETY: the caller gives `len` readable bytes at `p`.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A NUL-terminated string, as bytes.
pub(crate) unsafe fn cstr<'a>(p: *const c_char, what: &str) -> FfiResult<&'a [u8]> {
    if p.is_null() {
        return Err(invalid(format!("{what} must not be NULL")));
    }
    // SAFETY: the caller gives a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// A NUL-terminated UTF-8 string.
pub(crate) unsafe fn utf8<'a>(p: *const c_char, what: &str) -> FfiResult<&'a str> {
    std::str::from_utf8(unsafe { cstr(p, what) }?).map_err(|_| invalid(format!("{what} is not valid UTF-8")))
}

/// A wait: -1 (ETCDLOCK_WAIT_FOREVER) is `None`, 0 and up are milliseconds.
pub(crate) fn wait(timeout_ms: i64) -> FfiResult<Option<Duration>> {
    match timeout_ms {
        -1 => Ok(None),
        t if t >= 0 => Ok(Some(Duration::from_millis(t as u64))),
        t => Err(invalid(format!("timeout_ms must be >= 0 or ETCDLOCK_WAIT_FOREVER (-1), got {t}"))),
    }
}

/// Blocks the calling thread on `fut` run by the core runtime. From a library thread this is
/// WRONG_THREAD (core refuses instead of deadlocking).
pub(crate) fn block<F, T>(fut: F) -> FfiResult<T>
where
    F: Future<Output = etcdlock::Result<T>> + Send + 'static,
    T: Send + 'static,
{
    Ok(etcdlock::runtime::block_on(fut)??)
}

/// Whether the calling thread may block (it is not one of the library's own threads).
pub(crate) fn may_block() -> bool {
    etcdlock::runtime::check_not_in_runtime().is_ok()
}

/// Moves a value to C as an owned pointer.
pub(crate) fn into_raw<T>(v: T) -> *mut T {
    Box::into_raw(Box::new(v))
}

/// Takes ownership back from C; NULL gives None (every `_free(NULL)` is a no-op).
pub(crate) unsafe fn from_raw<T>(p: *mut T) -> Option<Box<T>> {
    // SAFETY: non-NULL pointers were made by into_raw and are freed once (caller's contract).
    (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
}
