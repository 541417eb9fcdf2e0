//! An election's observer: the current leader first, then each change, one per `next()`.
//! Campaigning is a lock handle's acquire (`lock.rs`, kind `Candidate`).

use crate::client::ClientInner;
use crate::follow::Following;
use crate::op::{Op, Outcome};
use etcdlock::{Leader, Observer};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Arc;

/// `(value, key, revision, lease)`, or None for no leader.
pub fn leader_value(leader: Option<Leader>) -> Outcome {
    Ok(Box::new(move |py| leader_py(py, leader)))
}

fn leader_py(py: Python<'_>, leader: Option<Leader>) -> PyResult<Py<PyAny>> {
    let Some(l) = leader else { return Ok(py.None()) };
    let t = (PyBytes::new(py, &l.value), PyBytes::new(py, &l.key), l.revision, l.lease);
    Ok(t.into_pyobject(py)?.into_any().unbind())
}

#[pyclass(frozen, name = "Observer", module = "etcdlock._native")]
pub struct NativeObserver(Arc<Following<Observer>>);

impl NativeObserver {
    pub fn new(client: Arc<ClientInner>, name: Vec<u8>, ttl: i64) -> Self {
        NativeObserver(Following::new(client, move |c| Ok(c.election(name.clone(), ttl)?.observe())))
    }
}

#[pymethods]
impl NativeObserver {
    /// The next change: `("leader", (value, key, revision, lease) or None)`, or `("end", None)`
    /// once closed (this observer, or the client).
    fn next(&self) -> Op {
        self.0.next("leader", leader_py)
    }

    /// Ends the observer; a `next()` in progress returns the end.
    fn close(&self) {
        self.0.close();
    }
}
