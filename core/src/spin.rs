//! How a thread that waits for a reply from the runtime waits: it keeps its CPU (yielding it in
//! a loop) for up to [`window`] before it sleeps.
//!
//! A local etcd answers within that, so the reply needs no wake-up of a sleeping thread, which
//! on a VM (a halted vCPU woken by an interrupt) cost ~40 us per call here: a sixth of a local
//! etcd round trip. Spinning made a Python lock/release cycle ~20 % faster, and a Node one
//! ~20 % (there the JS thread polls its event loop instead of sleeping in it). At most half
//! the CPUs' worth of callers spin at once, so that many waiting threads cannot starve the
//! runtime, or a local etcd, of CPU: the others sleep at once.
//!
//! `ETCDLOCK_SPIN_US` sets the window in microseconds (`0`: never spin).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const DEFAULT_WINDOW: Duration = Duration::from_millis(1);

/// How many callers spin right now.
static SPINNERS: AtomicUsize = AtomicUsize::new(0);

/// How long a waiting caller spins before it sleeps.
pub fn window() -> Duration {
    static W: OnceLock<Duration> = OnceLock::new();
    *W.get_or_init(|| {
        std::env::var("ETCDLOCK_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(DEFAULT_WINDOW, Duration::from_micros)
    })
}

/// Half the CPUs (at least one): the other half stays for the runtime's threads.
fn max_spinners() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)))
}

/// One caller's permission to spin, until [`Spin::expired`]; gives its place back on drop.
pub struct Spin {
    until: Instant,
}

impl Spin {
    /// Permission to spin for [`window`] (or `limit`, if shorter) from now; `None` when
    /// spinning is off or enough callers spin already.
    pub fn start(limit: Option<Duration>) -> Option<Spin> {
        let window = limit.map_or(window(), |l| l.min(window()));
        if window.is_zero() {
            return None;
        }
        if SPINNERS.fetch_add(1, Ordering::AcqRel) >= max_spinners() {
            SPINNERS.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Spin { until: Instant::now() + window })
    }

    /// Spins for a full window from now (another call started).
    pub fn extend(&mut self) {
        self.until = Instant::now() + window();
    }

    pub fn expired(&self) -> bool {
        Instant::now() >= self.until
    }
}

impl Drop for Spin {
    fn drop(&mut self) {
        SPINNERS.fetch_sub(1, Ordering::AcqRel);
    }
}
