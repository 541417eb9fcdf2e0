//! A core metrics snapshot for JS: `Metrics::entries()` as a list the wrapper (`metrics.js`)
//! turns into one object with camel-case names.

use etcdlock::{MetricValue, Metrics};
use napi_derive::napi;

/// One metric; which fields are set depends on `kind`.
#[napi(object)]
pub struct MetricItem {
    /// The core's name, snake case (`lock_wait_seconds`).
    pub name: String,
    /// Its Prometheus family name (`etcdlock_lock_wait_seconds`) and help (`etcdlock/prometheus`).
    pub prometheus: String,
    pub help: String,
    /// 'counter' | 'gauge' | 'labeled' | 'histogram'
    pub kind: String,
    /// Counters and gauges.
    pub value: Option<f64>,
    /// Labelled counters: the label's name, and `[label value, count]` pairs.
    pub label: Option<String>,
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
            let prometheus = format!("etcdlock_{}", e.prometheus);
            let mut item = MetricItem { name: e.name.into(), prometheus, help: e.help.into(), kind: String::new(), value: None, label: None, labels: None, count: None, sum: None, buckets: None };
            item.kind = match e.value {
                MetricValue::Counter(n) => {
                    item.value = Some(n as f64);
                    "counter"
                }
                MetricValue::Gauge(n) => {
                    item.value = Some(n as f64);
                    "gauge"
                }
                MetricValue::Labeled { label, values } => {
                    item.label = Some(label.into());
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

/// The same as text, under the client's name.
#[napi]
pub fn empty_metrics_text(client: String) -> String {
    Metrics::before_connect(&client).prometheus_text()
}

/// The name a client gets (core `ClientOptions::resolve_name`): `name` checked (INVALID_ARGUMENT
/// when empty), or the next default (`etcdlock-<n>`), known before the connection.
#[napi]
pub fn resolve_client_name(env: napi::Env, name: Option<String>) -> napi::Result<String> {
    let mut opts = etcdlock::ClientOptions { name, ..Default::default() };
    opts.resolve_name().map(str::to_string).map_err(|e| crate::error::to_js(&env, e))
}
