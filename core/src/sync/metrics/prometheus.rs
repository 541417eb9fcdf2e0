//! The metrics of a client as a collector of the `prometheus` crate (cargo feature `prometheus`),
//! read from [`Client::metrics`] at each gather, so that they join the application's own
//! registry. Every series carries the `client` label ([`Client::name`]): the collectors of two
//! clients register side by side in one registry and their families are merged by name.
//!
//! The `prometheus` crate rather than the `metrics` facade: a collector is read when the registry
//! is gathered (the snapshot is already a set of running totals and cumulative buckets), where
//! the facade would need a task copying every value into its recorder on a timer, and could
//! not hand over a histogram's buckets as they are.

use super::{MetricValue, Metrics};
use crate::Client;
use ::prometheus::core::{Collector, Desc};
use ::prometheus::proto;
use std::collections::HashMap;

/// Reads a client's metrics when its registry is gathered. It keeps a handle of the client
/// (so the client stays open while registered): unregister it before dropping the client.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let opts = etcdlock::ClientOptions { name: Some("orders".into()), ..Default::default() };
/// let client = etcdlock::Client::connect(["http://127.0.0.1:2379"], opts).await?;
/// let registry = prometheus::Registry::new();
/// registry.register(Box::new(etcdlock::PrometheusCollector::new(&client)))?;
/// let text = prometheus::TextEncoder::new().encode_to_string(&registry.gather())?;
/// assert!(text.contains(r#"etcdlock_lock_acquisitions_total{client="orders"} 0"#));
/// # Ok(()) }
/// ```
pub struct PrometheusCollector {
    client: Client,
    descs: Vec<Desc>,
}

impl PrometheusCollector {
    /// A collector of `client`'s metrics, with the families of [`Metrics::entries`]
    /// (`etcdlock_` + each entry's Prometheus name, its help and type).
    pub fn new(client: &Client) -> PrometheusCollector {
        let snapshot = Metrics::before_connect(client.name());
        let descs = snapshot
            .entries()
            .iter()
            .map(|e| {
                let variable = match e.value {
                    MetricValue::Labeled { label, .. } => vec![label.to_string()],
                    _ => vec![],
                };
                let constant = HashMap::from([("client".to_string(), client.name().to_string())]);
                // Names and help are fixed and valid: a failure here is a bug in entries().
                Desc::new(format!("etcdlock_{}", e.prometheus), e.help.to_string(), variable, constant).expect("valid metric description")
            })
            .collect();
        PrometheusCollector { client: client.clone(), descs }
    }
}

impl Collector for PrometheusCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<proto::MetricFamily> {
        let m = self.client.metrics();
        m.entries().iter().map(|e| family(&m.client, e)).collect()
    }
}

fn label(name: &str, value: &str) -> proto::LabelPair {
    let mut l = proto::LabelPair::default();
    l.set_name(name.to_string());
    l.set_value(value.to_string());
    l
}

fn family(client: &str, e: &super::MetricEntry<'_>) -> proto::MetricFamily {
    let mut f = proto::MetricFamily::default();
    f.set_name(format!("etcdlock_{}", e.prometheus));
    f.set_help(e.help.to_string());
    let with = |extra: Option<(&str, &str)>| {
        let mut labels = vec![label("client", client)];
        labels.extend(extra.map(|(n, v)| label(n, v)));
        proto::Metric::from_label(labels)
    };
    let counter = |v: u64, extra| {
        let mut c = proto::Counter::default();
        c.set_value(v as f64);
        let mut m = with(extra);
        m.set_counter(c);
        m
    };
    let (kind, metrics) = match e.value {
        MetricValue::Counter(v) => (proto::MetricType::COUNTER, vec![counter(v, None)]),
        MetricValue::Labeled { label, values } => {
            (proto::MetricType::COUNTER, values.iter().map(|(l, v)| counter(*v, Some((label, l)))).collect())
        }
        MetricValue::Gauge(v) => {
            let mut g = proto::Gauge::default();
            g.set_value(v as f64);
            let mut m = with(None);
            m.set_gauge(g);
            (proto::MetricType::GAUGE, vec![m])
        }
        MetricValue::Histogram(h) => {
            let mut ph = proto::Histogram::default();
            ph.set_sample_count(h.count);
            ph.set_sample_sum(h.sum);
            let buckets = h
                .buckets
                .iter()
                .map(|(le, n)| {
                    let mut b = proto::Bucket::default();
                    b.set_upper_bound(*le);
                    b.set_cumulative_count(*n);
                    b
                })
                .collect();
            ph.set_bucket(buckets);
            let mut m = with(None);
            m.set_histogram(ph);
            (proto::MetricType::HISTOGRAM, vec![m])
        }
    };
    f.set_field_type(kind);
    f.set_metric(metrics);
    f
}
