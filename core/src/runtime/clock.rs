//! A monotonic clock that keeps counting while the machine is suspended.
//!
//! Lease deadlines must not stand still during a suspend: the server's lease keeps expiring
//! while we sleep. `std::time::Instant` (CLOCK_MONOTONIC), and so every tokio timer, stops during
//! suspend on Linux; CLOCK_BOOTTIME does not. A timer for a moment of this clock therefore wakes
//! at least every [`CHECK`] to look at it: after a suspend it is late by at most that.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often a wait for a moment of this clock looks at it.
pub(crate) const CHECK: Duration = Duration::from_millis(250);

/// Time added by [`suspend_for_tests`].
static SKIPPED_NANOS: AtomicU64 = AtomicU64::new(0);

/// Set by [`rate_for_tests`]: from the real reading `RATE_FROM`, this clock advances `rate` times
/// as fast (the rate's f64 bits; 0 while unset).
static RATE_BITS: AtomicU64 = AtomicU64::new(0);
static RATE_FROM: AtomicU64 = AtomicU64::new(0);

/// Time since boot, including suspend.
pub fn now() -> Duration {
    let real = boottime() + Duration::from_nanos(SKIPPED_NANOS.load(Ordering::Acquire));
    match RATE_BITS.load(Ordering::Acquire) {
        0 => real,
        bits => {
            let from = Duration::from_nanos(RATE_FROM.load(Ordering::Acquire));
            from + real.saturating_sub(from).mul_f64(f64::from_bits(bits))
        }
    }
}

fn boottime() -> Duration {
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

/// How long from now until `at` (a moment of [`now`]), as the time to sleep before looking
/// again: at most [`CHECK`].
pub(crate) fn check_in(at: Duration) -> Duration {
    at.saturating_sub(now()).min(CHECK)
}

/// For tests (the fault tool kit): this process's clock jumps `by` ahead of CLOCK_MONOTONIC, as it
/// does for a machine suspended that long. Process-wide and for good: use it in a test process of
/// its own.
#[doc(hidden)]
pub fn suspend_for_tests(by: Duration) {
    SKIPPED_NANOS.fetch_add(by.as_nanos() as u64, Ordering::AcqRel);
}

/// For tests (the fault tool kit): from now on this process's clock runs `rate` times as fast as
/// the machine's (below 1: slower than etcd's, as a process whose clock drifts), for the lease
/// deadlines and everything else timed on it. Set once, before anything is timed, in a test
/// process of its own.
#[doc(hidden)]
pub fn rate_for_tests(rate: f64) {
    assert!(rate > 0.0 && rate.is_finite(), "a clock rate must be positive");
    RATE_FROM.store(now().as_nanos() as u64, Ordering::Release);
    RATE_BITS.store(rate.to_bits(), Ordering::Release);
}
