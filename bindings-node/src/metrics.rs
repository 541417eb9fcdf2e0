//! A core metrics snapshot for JS: `Metrics::entries()` as a list the wrapper (`metrics.js`)
//! turns into one object with camel-case names.

use etcdlock::{MetricValue, Metrics};
use napi_derive::napi;

/// One metric; which fields are set depends on `kind`.
#[napi(object)]
pub struct MetricItem {
    /// The core's name, snake case (`lock_wait_seconds`).
    pub name: String,
    /// 'counter' | 'gauge' | 'labeled' | 'histogram'
    pub kind: String,
    /// Counters and gauges.
    pub value: Option<f64>,
    /// Labelled counters: `[label value, count]` pairs.
    pub labels: Option<Vec<(String, f64)>>,
    /// Histograms: how many, their sum in seconds, and `[upper bound, cumulative count]` pairs.
    pub count: Option<f64>,
    pub sum: Option<f64>,
    pub buckets: Option<Vec<(f64, f64)>>,
}

pub fn items(m: &Metrics) -> Vec<MetricItem> {
    m.entries()
        .into_iter()
        .map(|e| {
            let mut item = MetricItem { name: e.name.into(), kind: String::new(), value: None, labels: None, count: None, sum: None, buckets: None };
            item.kind = match e.value {
                MetricValue::Counter(n) => {
                    item.value = Some(n as f64);
                    "counter"
                }
                MetricValue::Gauge(n) => {
                    item.value = Some(n as f64);
                    "gauge"
                }
                MetricValue::Labeled { values, .. } => {
                    item.labels = Some(values.iter().map(|(l, n)| (l.to_string(), *n as f64)).collect());
                    "labeled"
                }
                MetricValue::Histogram(h) => {
                    (item.count, item.sum) = (Some(h.count as f64), Some(h.sum));
                    item.buckets = Some(h.buckets.iter().map(|(le, n)| (*le, *n as f64)).collect());
                    "histogram"
                }
            }
            .into();
            item
        })
        .collect()
}

/// What a client not connected yet reports: nothing counted.
#[napi]
pub fn empty_metrics() -> Vec<MetricItem> {
    items(&Metrics::default())
}

#[napi]
pub fn empty_metrics_text() -> String {
    Metrics::default().prometheus_text()
}
