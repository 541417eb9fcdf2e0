//! Process-level calls: shutdown, the caller spin and the library version.

use crate::ffi::{self, invalid};
use std::os::raw::{c_char, c_int};
use std::time::Duration;

/// Optional, before exit: closes every client (revoking their leases, within `timeout_ms`)
/// and stops the library's threads. Free your handles first; calls on handles that survive
/// fail with ETCDLOCK_E_CLOSED. A later etcdlock_client_new starts the library afresh.
/// ETCDLOCK_WAIT_FOREVER waits up to a day. ETCDLOCK_E_WRONG_THREAD from a library thread.
#[no_mangle]
pub extern "C" fn etcdlock_shutdown(timeout_ms: i64) -> c_int {
    ffi::status(|| {
        let t = match ffi::wait(timeout_ms)? {
            Some(t) => t,
            None => Duration::from_secs(86_400),
        };
        if t > Duration::from_secs(86_400) {
            return Err(invalid("timeout_ms must be at most a day"));
        }
        Ok(etcdlock::runtime::shutdown(t)?)
    })
}

/// How long a thread waiting in a blocking call may keep its CPU before it sleeps, for every
/// later call of this process, in microseconds: off (0) by default; the ETCDLOCK_SPIN_US
/// environment variable sets it too. With it, the library's threads also linger for the next
/// `_async` call. Spinning saves the wake-up of a sleeping thread when a local etcd answers
/// quickly, for CPU: worth it on a host with idle cores, not on a busy one. It happens only around
/// the time a reply is due, only while recent replies came within it, and by at most half the
/// CPUs' worth of threads. ETCDLOCK_E_INVALID_ARGUMENT (and no change) below 0 or above 10000.
#[no_mangle]
pub extern "C" fn etcdlock_set_caller_spin_us(us: i64) -> c_int {
    ffi::status(|| {
        let us = u64::try_from(us).map_err(|_| invalid("the caller spin must be >= 0 microseconds"))?;
        Ok(etcdlock::runtime::set_caller_spin(Duration::from_micros(us))?)
    })
}

/// The caller spin in effect, in microseconds (see etcdlock_set_caller_spin_us).
#[no_mangle]
pub extern "C" fn etcdlock_caller_spin_us() -> i64 {
    etcdlock::runtime::caller_spin().as_micros() as i64
}

/// The library version, "MAJOR.MINOR.PATCH" (static string). Compare with ETCDLOCK_VERSION
/// to detect a header/library mismatch.
#[no_mangle]
pub extern "C" fn etcdlock_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
