//! Per-client lock metrics: counters and two histograms, atomics only (recording allocates
//! nothing and takes no lock), read as a [`Metrics`] snapshot or as Prometheus text.

use crate::client::error::ErrorKind;
use crate::client::Client;
use crate::lease::lost::LostReason;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Upper bounds, in seconds, of the wait and hold histograms' buckets (`+Inf` follows).
pub const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

const REASONS: [LostReason; 4] = [LostReason::Expired, LostReason::Revoked, LostReason::KeyDeleted, LostReason::Closed];

#[derive(Default)]
struct Histogram {
    /// Per bucket (not cumulative); the last one is `+Inf`.
    counts: [AtomicU64; BUCKETS.len() + 1],
    sum_micros: AtomicU64,
}

impl Histogram {
    fn record(&self, d: Duration) {
        let s = d.as_secs_f64();
        let i = BUCKETS.iter().position(|&b| s <= b).unwrap_or(BUCKETS.len());
        self.counts[i].fetch_add(1, Relaxed);
        self.sum_micros.fetch_add(d.as_micros().min(u64::MAX as u128) as u64, Relaxed);
    }

    fn snapshot(&self) -> HistogramSnapshot {
        let mut cumulative = 0;
        let mut buckets = Vec::with_capacity(BUCKETS.len());
        for (i, &le) in BUCKETS.iter().enumerate() {
            cumulative += self.counts[i].load(Relaxed);
            buckets.push((le, cumulative));
        }
        let count = cumulative + self.counts[BUCKETS.len()].load(Relaxed);
        HistogramSnapshot { count, sum: self.sum_micros.load(Relaxed) as f64 / 1e6, buckets }
    }
}

/// What the client's locks record (kept in `sync::PerClient`).
#[derive(Default)]
pub(crate) struct LockMetrics {
    acquisitions: AtomicU64,
    lock_timeouts: AtomicU64,
    would_block: AtomicU64,
    acquire_failures: AtomicU64,
    releases: AtomicU64,
    release_failures: AtomicU64,
    losses: [AtomicU64; 4],
    wait: Histogram,
    hold: Histogram,
}

impl LockMetrics {
    /// One acquire ended: held after `waited`, or failed with `failed`.
    pub fn acquire(&self, waited: Duration, failed: Option<ErrorKind>) {
        match failed {
            None => {
                self.acquisitions.fetch_add(1, Relaxed);
                self.wait.record(waited);
            }
            Some(ErrorKind::LockTimeout) => drop(self.lock_timeouts.fetch_add(1, Relaxed)),
            Some(ErrorKind::WouldBlock) => drop(self.would_block.fetch_add(1, Relaxed)),
            Some(_) => drop(self.acquire_failures.fetch_add(1, Relaxed)),
        }
    }

    /// A release ended: `held` for so long, or it failed.
    pub fn release(&self, held: Duration, ok: bool) {
        if ok {
            self.releases.fetch_add(1, Relaxed);
            self.hold.record(held);
        } else {
            self.release_failures.fetch_add(1, Relaxed);
        }
    }

    /// A held lock was lost after `held`.
    pub fn lost(&self, reason: LostReason, held: Duration) {
        let i = REASONS.iter().position(|r| *r == reason).unwrap_or(0);
        self.losses[i].fetch_add(1, Relaxed);
        self.hold.record(held);
    }
}

/// A histogram read at one moment: `buckets` are cumulative `(upper bound in seconds, count)`.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    pub count: u64,
    /// Seconds, summed.
    pub sum: f64,
    pub buckets: Vec<(f64, u64)>,
}

/// A client's lock metrics at one moment ([`Client::metrics`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// Acquires that took the lock.
    pub acquisitions: u64,
    /// Acquires whose own timeout passed (`LockTimeout`).
    pub lock_timeouts: u64,
    /// Try-once acquires that found the lock busy (`WouldBlock`).
    pub would_block: u64,
    /// Acquires that failed otherwise (cancelled, closed, unreachable...).
    pub acquire_failures: u64,
    /// Releases that deleted the key.
    pub releases: u64,
    /// Releases that returned an error (not held any more, unreachable...).
    pub release_failures: u64,
    /// Held locks lost, by reason: `expired`, `revoked`, `key_deleted`, `closed`.
    pub losses: Vec<(&'static str, u64)>,
    /// How long acquires that took the lock waited.
    pub lock_wait_seconds: HistogramSnapshot,
    /// How long locks were held, until released or lost.
    pub lock_hold_seconds: HistogramSnapshot,
}

impl Metrics {
    /// All losses, whatever the reason.
    pub fn losses_total(&self) -> u64 {
        self.losses.iter().map(|(_, n)| n).sum()
    }

    /// The Prometheus text exposition format (version 0.0.4), metric names prefixed `etcdlock_`.
    pub fn prometheus_text(&self) -> String {
        let mut s = String::new();
        let mut counter = |name: &str, help: &str, v: u64| {
            let _ = write!(s, "# HELP etcdlock_{name} {help}\n# TYPE etcdlock_{name} counter\netcdlock_{name} {v}\n");
        };
        counter("lock_acquisitions_total", "Acquires that took the lock.", self.acquisitions);
        counter("lock_timeouts_total", "Acquires whose own timeout passed.", self.lock_timeouts);
        counter("lock_would_block_total", "Try-once acquires that found the lock busy.", self.would_block);
        counter("lock_acquire_failures_total", "Acquires that failed otherwise.", self.acquire_failures);
        counter("lock_releases_total", "Releases that deleted the lock key.", self.releases);
        counter("lock_release_failures_total", "Releases that returned an error.", self.release_failures);
        let _ = write!(s, "# HELP etcdlock_lock_losses_total Held locks lost, by reason.\n# TYPE etcdlock_lock_losses_total counter\n");
        for (reason, n) in &self.losses {
            let _ = writeln!(s, "etcdlock_lock_losses_total{{reason=\"{reason}\"}} {n}");
        }
        for (name, help, h) in [
            ("lock_wait_seconds", "How long acquires that took the lock waited.", &self.lock_wait_seconds),
            ("lock_hold_seconds", "How long locks were held, until released or lost.", &self.lock_hold_seconds),
        ] {
            let _ = write!(s, "# HELP etcdlock_{name} {help}\n# TYPE etcdlock_{name} histogram\n");
            for (le, n) in &h.buckets {
                let _ = writeln!(s, "etcdlock_{name}_bucket{{le=\"{le}\"}} {n}");
            }
            let _ = write!(s, "etcdlock_{name}_bucket{{le=\"+Inf\"}} {}\netcdlock_{name}_sum {}\netcdlock_{name}_count {}\n", h.count, h.sum, h.count);
        }
        s
    }
}

impl Client {
    /// This client's lock metrics so far (counters since connect; cheap: a few atomic reads).
    ///
    /// ```no_run
    /// # fn demo(client: etcdlock::Client) {
    /// let m = client.metrics();
    /// println!("{} acquisitions, mean wait {:.3} s", m.acquisitions, m.lock_wait_seconds.sum / m.lock_wait_seconds.count.max(1) as f64);
    /// print!("{}", m.prometheus_text());
    /// # }
    /// ```
    pub fn metrics(&self) -> Metrics {
        let m = &crate::sync::PerClient::of(self).metrics;
        Metrics {
            acquisitions: m.acquisitions.load(Relaxed),
            lock_timeouts: m.lock_timeouts.load(Relaxed),
            would_block: m.would_block.load(Relaxed),
            acquire_failures: m.acquire_failures.load(Relaxed),
            releases: m.releases.load(Relaxed),
            release_failures: m.release_failures.load(Relaxed),
            losses: REASONS.iter().zip(&m.losses).map(|(r, n)| (r.as_str(), n.load(Relaxed))).collect(),
            lock_wait_seconds: m.wait.snapshot(),
            lock_hold_seconds: m.hold.snapshot(),
        }
    }
}
