//! A monotonic clock that keeps counting while the machine is suspended.
//!
//! Lease deadlines must not stand still during a suspend: the server's lease keeps expiring
//! while we sleep. `std::time::Instant` (CLOCK_MONOTONIC) stops during suspend on Linux,
//! CLOCK_BOOTTIME does not.

use std::time::Duration;

/// Time since boot, including suspend.
pub fn now() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    #[cfg(target_os = "linux")]
    let clock = libc::CLOCK_BOOTTIME;
    #[cfg(not(target_os = "linux"))]
    let clock = libc::CLOCK_MONOTONIC;
    // SAFETY: clock_gettime only writes the timespec we pass.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    debug_assert_eq!(rc, 0);
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
