//! An election's observer: the current leader first, then each change, one per `next()`.
//! Campaigning is a lock handle's acquire (`lock.rs`, kind `Candidate`).

use crate::client::ClientInner;
use crate::op::{Op, Outcome};
use etcdlock::{runtime, CancellationToken, Error, ErrorKind, Leader, Observer};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Arc;

/// `(value, key, revision, lease)`, or None for no leader.
pub fn leader_value(leader: Option<Leader>) -> Outcome {
    Ok(Box::new(move |py| {
        let Some(l) = leader else { return Ok(py.None()) };
        let t = (PyBytes::new(py, &l.value), PyBytes::new(py, &l.key), l.revision, l.lease);
        Ok(t.into_pyobject(py)?.into_any().unbind())
    }))
}

struct Shared {
    client: Arc<ClientInner>,
    name: Vec<u8>,
    ttl: i64,
    /// Made on the first `next()`; locked by one `next()` at a time.
    observer: tokio::sync::Mutex<Option<Observer>>,
    closed: CancellationToken,
}

#[pyclass(frozen, name = "Observer", module = "etcdlock._native")]
pub struct NativeObserver {
    shared: Arc<Shared>,
}

impl NativeObserver {
    pub fn new(client: Arc<ClientInner>, name: Vec<u8>, ttl: i64) -> Self {
        let shared = Shared { client, name, ttl, observer: Default::default(), closed: CancellationToken::new() };
        NativeObserver { shared: Arc::new(shared) }
    }
}

#[pymethods]
impl NativeObserver {
    /// The next change: `("leader", (value, key, revision, lease) or None)`, or `("end", None)`
    /// once closed (this observer, or the client).
    fn next(&self) -> Op {
        if let Err(e) = runtime::check_pid(self.shared.client.pid) {
            return Op::fail(e);
        }
        let (shared, cancel) = (self.shared.clone(), CancellationToken::new());
        let token = cancel.clone();
        let end = || Ok(Box::new(|py: Python<'_>| Ok(("end", py.None()).into_pyobject(py)?.into_any().unbind())) as crate::op::Convert);
        Op::cancellable(
            async move {
                if shared.closed.is_cancelled() {
                    return end();
                }
                let mut slot = shared.observer.lock().await;
                if slot.is_none() {
                    let client = shared.client.get().await?;
                    *slot = Some(client.election(shared.name.clone(), shared.ttl)?.observe());
                }
                let observer = slot.as_mut().expect("made above");
                // Observer::next may be dropped at any await: a change it had not read yet is
                // read by the next call.
                let next = tokio::select! {
                    biased;
                    _ = token.cancelled() => return Err(Error::new(ErrorKind::Cancelled, "observe cancelled")),
                    _ = shared.closed.cancelled() => return end(),
                    n = observer.next() => n,
                };
                match next {
                    Ok(leader) => {
                        let convert = leader_value(leader)?;
                        Ok(Box::new(move |py: Python<'_>| Ok(("leader", convert(py)?).into_pyobject(py)?.into_any().unbind())) as crate::op::Convert)
                    }
                    Err(e) if e.kind() == ErrorKind::Closed => end(),
                    Err(e) => Err(e),
                }
            },
            cancel,
            None,
        )
    }

    /// Ends the observer; a `next()` in progress returns the end.
    fn close(&self) {
        self.shared.closed.cancel();
        if let Ok(mut slot) = self.shared.observer.try_lock() {
            *slot = None;
        }
    }
}
