//! Process-level calls: shutdown and the library version; starting the core runtime with
//! SIGPIPE blocked in its threads.

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

/// Starts the core runtime, if it is not running, with SIGPIPE blocked in its threads.
///
/// The library's threads write to sockets; a member that closes a connection meanwhile makes
/// such a write fail with EPIPE, and the kernel also sends SIGPIPE to the writing thread, whose
/// default action ends the process (Rust, Python and Node.js processes ignore SIGPIPE; a C
/// program usually does not). Threads inherit the signal mask of the thread that creates them,
/// so the runtime is built while this thread blocks SIGPIPE, and this thread's mask is then
/// restored: the program's own dispositions and masks stay as they were.
pub(crate) fn start_runtime() {
    if etcdlock::runtime::runtime_started() {
        return;
    }
    #[cfg(not(unix))]
    let _ = etcdlock::runtime::handle();
    // SAFETY: plain libc calls on local, initialised signal sets.
    #[cfg(unix)]
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        let blocked = libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old) == 0;
        let _ = etcdlock::runtime::handle();
        if blocked {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
    }
}
