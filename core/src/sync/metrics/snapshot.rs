//! A client's metrics read at one moment, and the one list of them ([`Metrics::entries`]) that
//! the Prometheus text and every binding's `metrics()` are made from, so that a metric added
//! here reaches all of them with the same name.

pub use crate::transport::stats::HistogramSnapshot;
use std::fmt::Write as _;

/// A client's lock and registry metrics at one moment ([`Client::metrics`](crate::Client::metrics)).
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// The client's name ([`Client::name`](crate::Client::name)): the `client` label of every
    /// series in [`Metrics::prometheus_text`].
    pub client: String,
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
    /// Requests to etcd sent and not answered yet.
    pub requests_in_flight: i64,
    /// Request attempts after a request's first (transient failures, a refreshed auth token).
    pub request_retries: u64,
    /// The keepalive and watch streams moved to the next member, by stream.
    pub stream_reopens: Vec<(&'static str, u64)>,
    /// Times KV requests left a member that failed, went silent or had no leader.
    pub member_switches: u64,
    /// Leases kept alive now (the shared lock leases too).
    pub leases_alive: i64,
    /// Watches open on the watch stream now: the client's, and one per waiting acquire and
    /// per held lock's monitor.
    pub watches_open: i64,
    /// From each lease keepalive sent to its answer.
    pub keepalive_rtt_seconds: HistogramSnapshot,
    /// Service instances registered now by this client's registrations.
    pub registrations_alive: i64,
    /// Registrations registered again after a loss, by the loss's reason: `expired`,
    /// `revoked`, `key_deleted`.
    pub reregistrations: Vec<(&'static str, u64)>,
    /// Instance sets returned by discoveries.
    pub discovery_snapshots: u64,
}

/// One metric's value in [`MetricEntry`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetricValue<'a> {
    /// Only goes up.
    Counter(u64),
    /// Goes up and down (how many now).
    Gauge(i64),
    /// A counter per value of one label (Prometheus `name{label="value"}`).
    Labeled {
        /// The label's name, e.g. `reason`.
        label: &'static str,
        /// Each label value with its count, in a fixed order (every value listed, zeros too).
        values: &'a [(&'static str, u64)],
    },
    /// A distribution of durations in seconds (Prometheus `_bucket`, `_sum`, `_count`).
    Histogram(&'a HistogramSnapshot),
}

/// One metric of a snapshot, named for a binding's snapshot (`name`, snake case) and for
/// Prometheus (`etcdlock_` + `prometheus`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricEntry<'a> {
    /// The snapshot's field name in the bindings (`acquisitions`, `lock_timeouts`, ...).
    pub name: &'static str,
    /// The Prometheus name without its `etcdlock_` prefix (`lock_acquisitions_total`, ...).
    pub prometheus: &'static str,
    /// One line saying what it counts: the Prometheus `# HELP` text.
    pub help: &'static str,
    /// The value at the snapshot's moment, and so the metric's type.
    pub value: MetricValue<'a>,
}

impl Metrics {
    /// All losses, whatever the reason.
    pub fn losses_total(&self) -> u64 {
        self.losses.iter().map(|(_, n)| n).sum()
    }

    /// Every metric, in a fixed order: what bindings turn into their own snapshot type.
    ///
    /// ```no_run
    /// # fn demo(client: etcdlock::Client) {
    /// use etcdlock::MetricValue;
    /// for e in client.metrics().entries() {
    ///     if let MetricValue::Counter(n) = e.value {
    ///         println!("{} = {n}", e.name);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn entries(&self) -> Vec<MetricEntry<'_>> {
        use MetricValue::*;
        let e = |name, prometheus, help, value| MetricEntry { name, prometheus, help, value };
        vec![
            e("acquisitions", "lock_acquisitions_total", "Acquires that took the lock.", Counter(self.acquisitions)),
            e("lock_timeouts", "lock_timeouts_total", "Acquires whose own timeout passed.", Counter(self.lock_timeouts)),
            e("would_block", "lock_would_block_total", "Try-once acquires that found the lock busy.", Counter(self.would_block)),
            e("acquire_failures", "lock_acquire_failures_total", "Acquires that failed otherwise.", Counter(self.acquire_failures)),
            e("releases", "lock_releases_total", "Releases that deleted the lock key.", Counter(self.releases)),
            e("release_failures", "lock_release_failures_total", "Releases that returned an error.", Counter(self.release_failures)),
            e("losses", "lock_losses_total", "Held locks lost, by reason.", Labeled { label: "reason", values: &self.losses }),
            e("lock_wait_seconds", "lock_wait_seconds", "How long acquires that took the lock waited.", Histogram(&self.lock_wait_seconds)),
            e("lock_hold_seconds", "lock_hold_seconds", "How long locks were held, until released or lost.", Histogram(&self.lock_hold_seconds)),
            e("requests_in_flight", "requests_in_flight", "Requests to etcd sent and not answered yet.", Gauge(self.requests_in_flight)),
            e("request_retries", "request_retries_total", "Request attempts after a request's first.", Counter(self.request_retries)),
            e("stream_reopens", "stream_reopens_total", "Keepalive and watch streams moved to the next member.", Labeled { label: "stream", values: &self.stream_reopens }),
            e("member_switches", "member_switches_total", "Times KV requests left a member that failed, went silent or had no leader.", Counter(self.member_switches)),
            e("leases_alive", "leases_alive", "Leases kept alive now.", Gauge(self.leases_alive)),
            e("watches_open", "watches_open", "Watches open on the watch stream now (also one per waiting acquire and held lock).", Gauge(self.watches_open)),
            e("keepalive_rtt_seconds", "keepalive_rtt_seconds", "From each lease keepalive sent to its answer.", Histogram(&self.keepalive_rtt_seconds)),
            e("registrations_alive", "registrations_alive", "Service instances registered now.", Gauge(self.registrations_alive)),
            e("reregistrations", "reregistrations_total", "Registrations registered again after a loss, by the loss's reason.", Labeled { label: "reason", values: &self.reregistrations }),
            e("discovery_snapshots", "discovery_snapshots_total", "Instance sets returned by discoveries.", Counter(self.discovery_snapshots)),
        ]
    }

    /// The Prometheus text exposition format (version 0.0.4), metric names prefixed `etcdlock_`,
    /// every series labelled `client="<name>"` (first; escaped as the format says), so that
    /// the texts of two clients of one process can be served together.
    pub fn prometheus_text(&self) -> String {
        let mut s = String::new();
        let client = format!("client=\"{}\"", escape_label_value(&self.client));
        for e in self.entries() {
            let (name, kind) = (e.prometheus, match e.value {
                MetricValue::Counter(_) | MetricValue::Labeled { .. } => "counter",
                MetricValue::Gauge(_) => "gauge",
                MetricValue::Histogram(_) => "histogram",
            });
            let _ = write!(s, "# HELP etcdlock_{name} {}\n# TYPE etcdlock_{name} {kind}\n", e.help);
            match e.value {
                MetricValue::Counter(v) => drop(writeln!(s, "etcdlock_{name}{{{client}}} {v}")),
                MetricValue::Gauge(v) => drop(writeln!(s, "etcdlock_{name}{{{client}}} {v}")),
                MetricValue::Labeled { label, values } => {
                    for (l, n) in values {
                        let _ = writeln!(s, "etcdlock_{name}{{{client},{label}=\"{l}\"}} {n}");
                    }
                }
                MetricValue::Histogram(h) => {
                    for (le, n) in &h.buckets {
                        let _ = writeln!(s, "etcdlock_{name}_bucket{{{client},le=\"{le}\"}} {n}");
                    }
                    let _ = write!(
                        s,
                        "etcdlock_{name}_bucket{{{client},le=\"+Inf\"}} {}\netcdlock_{name}_sum{{{client}}} {}\netcdlock_{name}_count{{{client}}} {}\n",
                        h.count, h.sum, h.count
                    );
                }
            }
        }
        s
    }

    /// Every metric at zero, for the client `client` before it connects (what a binding shows
    /// then).
    pub fn before_connect(client: &str) -> Metrics {
        Metrics { client: client.to_string(), ..Metrics::default() }
    }
}

/// A label value as the text format writes it: backslash, double quote and line feed escaped.
fn escape_label_value(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains(['\\', '"', '\n']) {
        return v.into();
    }
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    // covers: METRICS-LABEL-001
    #[test]
    fn every_series_carries_the_client_label_escaped() {
        let m = Metrics::before_connect("a\\b \"c\"\nd");
        let text = m.prometheus_text();
        let label = r#"client="a\\b \"c\"\nd""#;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.contains(&format!("{{{label}")), "{line}");
        }
        assert!(text.contains(&format!("etcdlock_lock_acquisitions_total{{{label}}} 0\n")), "{text}");
        assert!(text.contains(&format!("etcdlock_lock_losses_total{{{label},reason=\"expired\"}} 0\n")), "{text}");
        assert!(text.contains(&format!("etcdlock_lock_wait_seconds_bucket{{{label},le=\"+Inf\"}} 0\n")), "{text}");
        assert_eq!(escape_label_value("plain"), "plain");
    }
}
