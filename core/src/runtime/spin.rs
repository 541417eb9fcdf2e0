//! How a thread that waits for a reply from the runtime waits: it keeps its CPU (yielding it in
//! a loop) for up to [`window`] before it sleeps.
//!
//! A local etcd answers within that, so the reply needs no wake-up of a sleeping thread, which
//! on a VM (a halted vCPU woken by an interrupt) is a sizeable share of a local etcd round trip.
//! Sparing it makes the bindings' lock/release cycles clearly faster, Node's most (there the JS
//! thread polls its event loop instead of sleeping in it). At most half
//! the CPUs' worth of callers spin at once, so that many waiting threads cannot starve the
//! runtime, or a local etcd, of CPU: the others sleep at once.
//!
//! Only while it pays: callers [`record`] how long each wait took, and nobody spins while fewer
//! than a quarter of the recent replies came within twice the window (an etcd a few
//! milliseconds away). Spinning for those would burn a window of CPU per call and save nothing.
//! The bar is low on purpose: calls that wait for a held lock also count as late, and a local
//! etcd's replies sometimes miss the window on a busy machine. A higher bar (half of them) turned
//! spinning off so often there that the bindings' uncontended loops fell further behind the
//! core's than with no rule at all.
//!
//! `ETCDLOCK_SPIN_US` sets the window in microseconds (`0`: never spin).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const DEFAULT_WINDOW: Duration = Duration::from_millis(1);

/// How many callers spin right now.
static SPINNERS: AtomicUsize = AtomicUsize::new(0);

/// Share of recent replies that came within the window, as a moving average in 1/1024ths.
static HITS: HitRate = HitRate::new();

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
        if window.is_zero() || !HITS.worth_it() {
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

/// Reports how long a caller waited for a reply (spinning or not), which decides whether the
/// next callers spin.
pub fn record(waited: Duration) {
    HITS.record(waited <= 2 * window());
}

pub(crate) struct HitRate(AtomicU32);

impl HitRate {
    const ONE: u32 = 1024;

    pub(crate) const fn new() -> HitRate {
        HitRate(AtomicU32::new(Self::ONE))
    }

    /// Moves the average an eighth of the way towards this sample.
    pub(crate) fn record(&self, hit: bool) {
        let sample = if hit { Self::ONE } else { 0 };
        let _ = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| Some(old - old / 8 + sample / 8));
    }

    pub(crate) fn worth_it(&self) -> bool {
        self.0.load(Ordering::Relaxed) >= Self::ONE / 4
    }
}

impl Drop for Spin {
    fn drop(&mut self) {
        SPINNERS.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::HitRate;

    #[test]
    fn spinning_stops_when_replies_come_late_and_resumes_when_they_come_in_time() {
        let rate = HitRate::new();
        assert!(rate.worth_it());
        let mut misses = 0;
        while rate.worth_it() {
            rate.record(false);
            misses += 1;
        }
        assert_eq!(misses, 11, "a dozen late replies in a row stop it");
        // Late replies (or lock waits) mixed in among quick ones do not.
        for i in 0..100 {
            rate.record(i % 2 == 0);
        }
        assert!(rate.worth_it());
        for _ in 0..11 {
            rate.record(false);
        }
        assert!(!rate.worth_it());
        let mut hits = 0;
        while !rate.worth_it() {
            rate.record(true);
            hits += 1;
        }
        assert!(hits <= 3, "quick replies resume it within {hits} calls");
    }
}
