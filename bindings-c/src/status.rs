//! Status codes, the core error mapping, and the thread-local last error message.

use etcdlock::ErrorKind;
use std::cell::RefCell;
use std::os::raw::{c_char, c_int};

/// Success.
pub const ETCDLOCK_OK: c_int = 0;
/// Bad input (NULL pointer, bad name, key, TTL or timeout); nothing was sent.
pub const ETCDLOCK_E_INVALID_ARGUMENT: c_int = 1;
/// etcd could not be reached, or had no leader, in time.
pub const ETCDLOCK_E_UNAVAILABLE: c_int = 2;
/// A deadline passed: a request's (the client's request_timeout_ms), or for the calls that wait
/// for what comes next (etcdlock_watch_next, etcdlock_observer_next,
/// etcdlock_registration_next_event, etcdlock_discovery_next, etcdlock_cache_stream_next) the
/// call's: nothing arrived in time, and nothing is lost; for etcdlock_cache_wait_for, the cache
/// did not reach the revision in time. A request cut off so may or may not have been applied.
pub const ETCDLOCK_E_TIMEOUT: c_int = 3;
/// A try-once acquire (timeout_ms = 0) found the lock held or queued, or etcdlock_register found
/// the instance registered by another registrant (without ETCDLOCK_REGISTER_REPLACE).
pub const ETCDLOCK_E_WOULD_BLOCK: c_int = 4;
/// The lease (or the lock key) was lost: the lock is not, or no longer, held.
pub const ETCDLOCK_E_LOCK_LOST: c_int = 5;
/// The operation needs a held lock and it is not held (released, lost, or never was), or a
/// registration that is not registered now (being registered again, taken over, or closed).
pub const ETCDLOCK_E_NOT_HELD: c_int = 6;
/// The watch's start revision was compacted away.
pub const ETCDLOCK_E_COMPACTED: c_int = 7;
/// The call was cancelled through its etcdlock_cancel token.
pub const ETCDLOCK_E_CANCELLED: c_int = 8;
/// The client (or the library, after etcdlock_shutdown) is closed, a cache is closed, or a
/// watch, an observer, a discovery, a registration's events or a cache's events have ended.
pub const ETCDLOCK_E_CLOSED: c_int = 9;
/// Authentication or permission failure.
pub const ETCDLOCK_E_AUTH: c_int = 10;
/// A blocking call from a library thread (e.g. inside a callback), which would deadlock, or
/// use in a fork()ed child of a handle its parent created.
pub const ETCDLOCK_E_WRONG_THREAD: c_int = 11;
/// A bug (including a caught panic) or an unexpected server answer.
pub const ETCDLOCK_E_INTERNAL: c_int = 12;
/// A lock acquire's timeout passed before the lock was taken (nothing is left behind).
pub const ETCDLOCK_E_LOCK_TIMEOUT: c_int = 13;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records this thread's last error message.
pub(crate) fn set_last_error(message: &str) {
    let _ = LAST_ERROR.try_with(|m| {
        let mut m = m.borrow_mut();
        m.clear();
        // A NUL inside would cut the C string short silently; make it visible instead.
        m.extend(message.chars().map(|c| if c == '\0' { '?' } else { c }));
    });
}

/// The status for a core error kind. ErrorKind is non-exhaustive: an unknown kind is a bug
/// on our side (a new core kind the binding has not mapped yet).
pub(crate) fn status_of(kind: ErrorKind) -> c_int {
    match kind {
        ErrorKind::InvalidArgument => ETCDLOCK_E_INVALID_ARGUMENT,
        ErrorKind::Unavailable => ETCDLOCK_E_UNAVAILABLE,
        ErrorKind::Timeout => ETCDLOCK_E_TIMEOUT,
        ErrorKind::LockTimeout => ETCDLOCK_E_LOCK_TIMEOUT,
        ErrorKind::WouldBlock => ETCDLOCK_E_WOULD_BLOCK,
        ErrorKind::LockLost => ETCDLOCK_E_LOCK_LOST,
        ErrorKind::NotHeld => ETCDLOCK_E_NOT_HELD,
        ErrorKind::Compacted => ETCDLOCK_E_COMPACTED,
        ErrorKind::Cancelled => ETCDLOCK_E_CANCELLED,
        ErrorKind::Closed => ETCDLOCK_E_CLOSED,
        ErrorKind::Auth => ETCDLOCK_E_AUTH,
        ErrorKind::WrongContext => ETCDLOCK_E_WRONG_THREAD,
        ErrorKind::Internal => ETCDLOCK_E_INTERNAL,
        _ => ETCDLOCK_E_INTERNAL,
    }
}

/// The name of a status code (`"ETCDLOCK_E_TIMEOUT"`), or `"ETCDLOCK_E_UNKNOWN"`.
/// The string is static: never free it.
#[no_mangle]
pub extern "C" fn etcdlock_status_str(status: c_int) -> *const c_char {
    let s: &'static [u8] = match status {
        ETCDLOCK_OK => b"ETCDLOCK_OK\0",
        ETCDLOCK_E_INVALID_ARGUMENT => b"ETCDLOCK_E_INVALID_ARGUMENT\0",
        ETCDLOCK_E_UNAVAILABLE => b"ETCDLOCK_E_UNAVAILABLE\0",
        ETCDLOCK_E_TIMEOUT => b"ETCDLOCK_E_TIMEOUT\0",
        ETCDLOCK_E_LOCK_TIMEOUT => b"ETCDLOCK_E_LOCK_TIMEOUT\0",
        ETCDLOCK_E_WOULD_BLOCK => b"ETCDLOCK_E_WOULD_BLOCK\0",
        ETCDLOCK_E_LOCK_LOST => b"ETCDLOCK_E_LOCK_LOST\0",
        ETCDLOCK_E_NOT_HELD => b"ETCDLOCK_E_NOT_HELD\0",
        ETCDLOCK_E_COMPACTED => b"ETCDLOCK_E_COMPACTED\0",
        ETCDLOCK_E_CANCELLED => b"ETCDLOCK_E_CANCELLED\0",
        ETCDLOCK_E_CLOSED => b"ETCDLOCK_E_CLOSED\0",
        ETCDLOCK_E_AUTH => b"ETCDLOCK_E_AUTH\0",
        ETCDLOCK_E_WRONG_THREAD => b"ETCDLOCK_E_WRONG_THREAD\0",
        ETCDLOCK_E_INTERNAL => b"ETCDLOCK_E_INTERNAL\0",
        _ => b"ETCDLOCK_E_UNKNOWN\0",
    };
    s.as_ptr().cast()
}

/// Copies the message of this thread's last failed call into `buf` (at most `buf_len - 1`
/// bytes, always NUL-terminated when `buf_len > 0`). Returns the message's full length
/// (excluding the NUL), like snprintf: a result `>= buf_len` means it was truncated.
/// `buf` may be NULL when `buf_len` is 0, to ask for the length. Successful calls do not
/// clear the message.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_last_error(buf: *mut c_char, buf_len: usize) -> usize {
    let copy = || {
        LAST_ERROR
            .try_with(|m| {
                let m = m.borrow();
                if !buf.is_null() && buf_len > 0 {
                    let n = m.len().min(buf_len - 1);
                    // SAFETY: the caller gives a buffer of buf_len writable bytes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(m.as_ptr(), buf.cast::<u8>(), n);
                        *buf.add(n) = 0;
                    }
                }
                m.len()
            })
            .unwrap_or(0)
    };
    std::panic::catch_unwind(copy).unwrap_or(0)
}
