//! Per-client lock and registry metrics: counters, gauges and two histograms, atomics only (recording allocates
//! nothing and takes no lock), read with the connection's (transport/stats.rs) as a
//! [`Metrics`] snapshot or as Prometheus text.

mod snapshot;
#[cfg(feature = "prometheus")]
mod prometheus;

pub use snapshot::{MetricEntry, MetricValue, Metrics};
#[cfg(feature = "prometheus")]
pub use self::prometheus::PrometheusCollector;

use crate::error::ErrorKind;
use crate::client::Client;
use crate::lease::lost::LostReason;
use crate::transport::stats::{ConnStats, Histogram};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

const REASONS: [LostReason; 4] = [LostReason::Expired, LostReason::Revoked, LostReason::KeyDeleted, LostReason::Closed];
/// The losses a registration comes back from (a closed client ends it).
const REREGISTER_REASONS: usize = 3;

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
    registrations_alive: AtomicI64,
    reregistrations: [AtomicU64; REREGISTER_REASONS],
    discovery_snapshots: AtomicU64,
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

    /// A registration became registered (`true`) or stopped being registered.
    pub fn registered(&self, up: bool) {
        self.registrations_alive.fetch_add(if up { 1 } else { -1 }, Relaxed);
    }

    /// A registration lost for `reason` was registered again.
    pub fn reregistered(&self, reason: LostReason) {
        if let Some(i) = REASONS[..REREGISTER_REASONS].iter().position(|r| *r == reason) {
            self.reregistrations[i].fetch_add(1, Relaxed);
        }
    }

    /// A discovery returned a set.
    pub fn discovered(&self) {
        self.discovery_snapshots.fetch_add(1, Relaxed);
    }
}

impl Client {
    /// This client's metrics so far: the lock counters and histograms, the connection's
    /// counters since connect, and gauges read now (in-flight requests, leases, watches).
    /// Cheap: atomic reads, and a count of the client's leases.
    ///
    /// ```no_run
    /// # fn demo(client: etcdlock::Client) {
    /// let m = client.metrics();
    /// println!("{} acquisitions, mean wait {:.3} s", m.acquisitions, m.lock_wait_seconds.sum / m.lock_wait_seconds.count.max(1) as f64);
    /// print!("{}", m.prometheus_text());
    /// # }
    /// ```
    pub fn metrics(&self) -> Metrics {
        let inner = &self.inner;
        let gauges = Gauges { in_flight: inner.in_flight() as i64, leases: inner.keeper.alive() as i64, watches: inner.hub.open() };
        let mut m = crate::sync::PerClient::of(self).metrics.snapshot(&inner.stats, gauges);
        m.client.clone_from(&inner.name);
        m
    }
}

/// What is read now rather than counted.
#[derive(Default)]
struct Gauges {
    in_flight: i64,
    leases: i64,
    watches: i64,
}

impl LockMetrics {
    fn snapshot(&self, conn: &ConnStats, now: Gauges) -> Metrics {
        Metrics {
            client: String::new(),
            acquisitions: self.acquisitions.load(Relaxed),
            lock_timeouts: self.lock_timeouts.load(Relaxed),
            would_block: self.would_block.load(Relaxed),
            acquire_failures: self.acquire_failures.load(Relaxed),
            releases: self.releases.load(Relaxed),
            release_failures: self.release_failures.load(Relaxed),
            losses: REASONS.iter().zip(&self.losses).map(|(r, n)| (r.as_str(), n.load(Relaxed))).collect(),
            lock_wait_seconds: self.wait.snapshot(),
            lock_hold_seconds: self.hold.snapshot(),
            requests_in_flight: now.in_flight,
            request_retries: conn.retries.load(Relaxed),
            stream_reopens: conn.reopens(),
            member_switches: conn.member_switches.load(Relaxed),
            leases_alive: now.leases,
            watches_open: now.watches,
            keepalive_rtt_seconds: conn.keepalive_rtt.snapshot(),
            registrations_alive: self.registrations_alive.load(Relaxed),
            reregistrations: REASONS.iter().zip(&self.reregistrations).map(|(r, n)| (r.as_str(), n.load(Relaxed))).collect(),
            discovery_snapshots: self.discovery_snapshots.load(Relaxed),
        }
    }
}

/// Nothing counted yet, and no client name ([`Metrics::before_connect`] gives one).
impl Default for Metrics {
    fn default() -> Metrics {
        LockMetrics::default().snapshot(&ConnStats::default(), Gauges::default())
    }
}
