//! Process-level calls: shutdown and the library version.

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

/// The library version, "MAJOR.MINOR.PATCH" (static string). Compare with ETCDLOCK_VERSION
/// to detect a header/library mismatch.
#[no_mangle]
pub extern "C" fn etcdlock_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
