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

/// The snapshot as Prometheus families, for `etcdlock.prometheus`: one
/// `(name, help, type, label, value)` per `Metrics::entries()` entry, `name` with its `etcdlock_`
/// prefix, `type` one of `counter`, `gauge`, `histogram`, `label` the name of a labelled
/// counter's one label (else None), `value` an int, a dict by label value, or a histogram's
/// `(count, sum, [(le as the text writes it, cumulative count), ...])`.
pub fn families<'py>(py: Python<'py>, m: &Metrics) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    let out = pyo3::types::PyList::empty(py);
    for e in m.entries() {
        let name = format!("etcdlock_{}", e.prometheus);
        let (kind, label, value): (&str, Option<&str>, Bound<'py, PyAny>) = match e.value {
            MetricValue::Counter(n) => ("counter", None, n.into_pyobject(py)?.into_any()),
            MetricValue::Gauge(n) => ("gauge", None, n.into_pyobject(py)?.into_any()),
            MetricValue::Labeled { label, values } => {
                let by = PyDict::new(py);
                for (l, n) in values {
                    by.set_item(l, n)?;
                }
                ("counter", Some(label), by.into_any())
            }
            MetricValue::Histogram(h) => {
                let buckets: Vec<(String, u64)> = h.buckets.iter().map(|(le, n)| (le.to_string(), *n)).collect();
                ("histogram", None, (h.count, h.sum, buckets).into_pyobject(py)?.into_any())
            }
        };
        out.append((name, e.help, kind, label, value))?;
    }
    Ok(out)
}
