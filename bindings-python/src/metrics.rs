//! A core metrics snapshot as a Python dict, keyed by `Metrics::entries()`'s names.

use etcdlock::{MetricValue, Metrics};
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub fn to_dict<'py>(py: Python<'py>, m: &Metrics) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for e in m.entries() {
        match e.value {
            MetricValue::Counter(n) => d.set_item(e.name, n)?,
            MetricValue::Gauge(n) => d.set_item(e.name, n)?,
            MetricValue::Labeled { values, .. } => {
                let by = PyDict::new(py);
                for (label, n) in values {
                    by.set_item(label, n)?;
                }
                d.set_item(e.name, by)?;
            }
            MetricValue::Histogram(h) => {
                let hd = PyDict::new(py);
                hd.set_item("count", h.count)?;
                hd.set_item("sum", h.sum)?;
                hd.set_item("buckets", h.buckets.clone())?;
                d.set_item(e.name, hd)?;
            }
        }
    }
    Ok(d)
}
