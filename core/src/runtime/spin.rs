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
//! And only for the end of the wait: a reply seldom comes much sooner than the quickest replies of
//! late, so a caller first sleeps until [`NAP_MARGIN`] before that ([`Spin::nap`]; a timer wakes
//! it ahead of the reply, off the critical path) and spins only from there. Spinning from the
//! start of the call kept a whole round trip of CPU per call busy (bench/README.md, "Caller spin").
//!
//! Off by default; [`set_window`] (`runtime::set_caller_spin`, each binding's option) or
//! `ETCDLOCK_SPIN_US` (microseconds) turns it on.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Off unless asked for: on a busy host, spinning callers took CPU from etcd and the runtime and
/// the bindings ran slower with it than without (bench/README.md, "Caller spin").
const DEFAULT_WINDOW: Duration = Duration::ZERO;

/// How many callers spin right now.
static SPINNERS: AtomicUsize = AtomicUsize::new(0);

/// Share of recent replies that came within the window, as a moving average in 1/1024ths.
static HITS: HitRate = HitRate::new();

/// How long the quickest recent replies took (see [`Quick`]).
static QUICK: Quick = Quick::new();

/// How long before the quickest recent reply time a napping caller wakes to spin: more than a
/// timer's slack (50 µs by default on Linux) and a wake-up on a VM.
pub const NAP_MARGIN: Duration = Duration::from_micros(150);

/// The window in microseconds; `UNSET` until it is first read or set.
static WINDOW_US: AtomicU64 = AtomicU64::new(UNSET);
const UNSET: u64 = u64::MAX;

/// The longest window [`set_window`] takes: a wait longer than this is no reply from a local
/// etcd, and spinning through it would only burn CPU.
pub const MAX_WINDOW: Duration = Duration::from_millis(10);

/// How long a waiting caller spins before it sleeps: what [`set_window`] set, else
/// `ETCDLOCK_SPIN_US`, else the default.
pub fn window() -> Duration {
    let us = WINDOW_US.load(Ordering::Relaxed);
    if us != UNSET {
        return Duration::from_micros(us);
    }
    let from_env = std::env::var("ETCDLOCK_SPIN_US")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_WINDOW, Duration::from_micros)
        .min(MAX_WINDOW);
    // A concurrent `set_window` wins over the environment.
    let _ = WINDOW_US.compare_exchange(UNSET, from_env.as_micros() as u64, Ordering::Relaxed, Ordering::Relaxed);
    Duration::from_micros(WINDOW_US.load(Ordering::Relaxed))
}

/// Sets the window for every later wait of this process; `InvalidArgument` (and no change)
/// above [`MAX_WINDOW`]. Zero turns spinning, and the runtime's lingering, off.
pub fn set_window(window: Duration) -> crate::Result<()> {
    if window > MAX_WINDOW {
        return Err(crate::Error::new(
            crate::ErrorKind::InvalidArgument,
            format!("the caller spin must be at most {} µs, not {} µs", MAX_WINDOW.as_micros(), window.as_micros()),
        ));
    }
    WINDOW_US.store(window.as_micros() as u64, Ordering::Relaxed);
    Ok(())
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

    /// How long to sleep before spinning, measured from the start of the wait: until
    /// [`NAP_MARGIN`] before the quickest recent replies, within the window (zero: spin at once).
    pub fn nap(&self) -> Duration {
        QUICK.get().saturating_sub(NAP_MARGIN).min(self.until.saturating_duration_since(Instant::now()))
    }
}

/// Reports how long a caller waited for a reply (spinning or not), which decides whether the
/// next callers spin.
pub fn record(waited: Duration) {
    let hit = waited <= 2 * window();
    HITS.record(hit);
    if hit {
        QUICK.record(waited);
    }
}

/// A low quantile of recent reply times: it falls a quarter of the way towards a quicker reply
/// and rises a thirty-second of the way towards a slower one, so it settles among the quickest
/// quarter or so and follows a server that gets slower within a hundred replies.
pub(crate) struct Quick(AtomicU64);

impl Quick {
    pub(crate) const fn new() -> Quick {
        Quick(AtomicU64::new(0))
    }

    pub(crate) fn record(&self, waited: Duration) {
        let w = waited.as_nanos() as u64;
        let _ = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| {
            Some(if q == 0 { w } else if w < q { q - (q - w) / 4 } else { q + (w - q) / 32 })
        });
    }

    pub(crate) fn get(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
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
    use super::{HitRate, Quick};
    use std::time::Duration;

    #[test]
    fn the_quick_reply_time_settles_near_the_quickest_replies_and_follows_a_slower_server() {
        let q = Quick::new();
        let us = Duration::from_micros;
        // Replies of 400-700 µs: it settles in their quickest quarter or so.
        for i in 0..400u64 {
            q.record(us(400 + (i * 37) % 300));
        }
        assert!(q.get() >= us(400) && q.get() <= us(520), "{:?}", q.get());
        // The server gets twice as slow: within a hundred replies it follows.
        for i in 0..100u64 {
            q.record(us(800 + (i * 37) % 300));
        }
        assert!(q.get() >= us(700), "{:?}", q.get());
    }

    #[test]
    fn a_window_above_the_maximum_is_refused_and_changes_nothing() {
        let before = super::window();
        let err = super::set_window(super::MAX_WINDOW + Duration::from_micros(1)).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert_eq!(super::window(), before);
        super::set_window(before).unwrap();
        assert_eq!(super::window(), before);
    }

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
