//! What a client's connection counts as it goes (requests sent again, streams reopened, KV
//! requests moved to another member, keepalive round trips): atomics only, so that recording
//! allocates nothing and takes no lock. Kept here, the lowest per-client layer, so that the
//! channel, the streams, the keepalive loop and the request path each record their own;
//! `Client::metrics` (sync/metrics) reads them with the lock metrics.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Upper bounds, in seconds, of every histogram's buckets (`+Inf` follows).
pub const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

/// Durations in [`BUCKETS`]: one atomic add for the bucket, one for the sum.
#[derive(Default)]
pub(crate) struct Histogram {
    /// Per bucket (not cumulative); the last one is `+Inf`.
    counts: [AtomicU64; BUCKETS.len() + 1],
    sum_micros: AtomicU64,
}

impl Histogram {
    pub fn record(&self, d: Duration) {
        let s = d.as_secs_f64();
        let i = BUCKETS.iter().position(|&b| s <= b).unwrap_or(BUCKETS.len());
        self.counts[i].fetch_add(1, Relaxed);
        self.sum_micros.fetch_add(d.as_micros().min(u64::MAX as u128) as u64, Relaxed);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
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

/// A histogram read at one moment: `buckets` are cumulative `(upper bound in seconds, count)`.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// How many durations were observed.
    pub count: u64,
    /// Seconds, summed.
    pub sum: f64,
    /// `(upper bound in seconds, how many observations were at most that)`, bounds ascending;
    /// the `+Inf` bucket is not listed (it is `count`).
    pub buckets: Vec<(f64, u64)>,
}

/// The long-lived streams, as `Paths` names them.
pub(crate) const STREAMS: [&str; 2] = ["keepalive", "watch"];

/// One client's connection counters.
#[derive(Default)]
pub(crate) struct ConnStats {
    /// Request attempts after a request's first (transient failures, a refreshed auth token).
    pub retries: AtomicU64,
    /// Per stream of [`STREAMS`]: moved to the next member after it broke or went silent.
    reopens: [AtomicU64; STREAMS.len()],
    /// The KV channel left a member (failed, silent, or without a leader).
    pub member_switches: AtomicU64,
    /// From a keepalive sent to its answer.
    pub keepalive_rtt: Histogram,
}

impl ConnStats {
    pub fn reopened(&self, stream: &str) {
        if let Some(i) = STREAMS.iter().position(|s| *s == stream) {
            self.reopens[i].fetch_add(1, Relaxed);
        }
    }

    pub fn reopens(&self) -> Vec<(&'static str, u64)> {
        STREAMS.iter().zip(&self.reopens).map(|(s, n)| (*s, n.load(Relaxed))).collect()
    }
}
