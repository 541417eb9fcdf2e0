//! Once-per-period jobs: the slot a caller won, or None. Translation only.

use crate::bridge::Bridge;
use crate::client::ClientInner;
use crate::errors::IntoPy;
use crate::op::{value, Convert, Op};
use etcdlock::{runtime, CancellationToken, Error, ErrorKind, OnceOptions, OnceSlot, Op as TxnOp};
use pyo3::prelude::*;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// Claims the period's slot of job `name`; the op's value is a `OnceSlot` or None.
pub fn once(client: Arc<ClientInner>, name: Vec<u8>, every: f64, ttl: i64, at: Option<f64>, keep_periods: u32) -> Result<Op, Error> {
    let bad = |what: &str, v: f64| Error::new(ErrorKind::InvalidArgument, format!("{what} must be a positive number of seconds, not {v}"));
    let every_d = Duration::try_from_secs_f64(every).map_err(|_| bad("every", every))?;
    let at = at
        .map(|s| {
            if s < 0.0 {
                return Err(Error::new(ErrorKind::InvalidArgument, "a trigger time before 1970"));
            }
            Duration::try_from_secs_f64(s).map(|d| UNIX_EPOCH + d).map_err(|_| bad("at", s))
        })
        .transpose()?;
    let opts = OnceOptions { every: every_d, ttl_secs: ttl, at, keep_periods };
    etcdlock::check_once(&name, &opts)?;
    let pid = client.pid;
    Ok(Op::new(async move {
        let c = client.get().await?;
        match c.once(name, opts).await? {
            None => value(None::<()>),
            Some(slot) => {
                let native = NativeOnceSlot { slot: Arc::new(slot), stop: CancellationToken::new(), pid };
                Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, native)?.into_any())) as Convert)
            }
        }
    }))
}

#[pyclass(frozen, name = "OnceSlot", module = "etcdlock._native")]
pub struct NativeOnceSlot {
    slot: Arc<OnceSlot>,
    stop: CancellationToken,
    pid: u32,
}

impl Drop for NativeOnceSlot {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[pymethods]
impl NativeOnceSlot {
    #[getter]
    fn slot(&self) -> i64 {
        self.slot.slot()
    }
    #[getter]
    fn fencing_token(&self) -> i64 {
        self.slot.fencing_token()
    }
    fn is_held(&self) -> PyResult<bool> {
        runtime::check_pid(self.pid).py()?;
        Ok(self.slot.is_held())
    }
    fn lost_reason(&self) -> PyResult<Option<&'static str>> {
        runtime::check_pid(self.pid).py()?;
        Ok(self.slot.lost_reason().map(|r| r.as_str()))
    }
    fn health(&self) -> PyResult<crate::lock::HealthTuple> {
        runtime::check_pid(self.pid).py()?;
        Ok(crate::lock::health_tuple(self.slot.health()))
    }
    /// Marks the period's job done and ends the claim (fenced).
    fn done(&self) -> Op {
        let (slot, stop) = (self.slot.clone(), self.stop.clone());
        Op::new(async move {
            let r = slot.done().await;
            stop.cancel();
            r?;
            value(())
        })
    }
    /// Writes `value` at `key` (on `lease` if given) only while the claim holds (fenced).
    #[pyo3(signature = (key, value, lease=None))]
    fn put(&self, key: &[u8], value: &[u8], lease: Option<&crate::lease::NativeLease>) -> Op {
        if let Err(e) = runtime::check_pid(self.pid) {
            return Op::fail(e);
        }
        let (slot, key, val) = (self.slot.clone(), key.to_vec(), value.to_vec());
        let lease = lease.map_or(0, |l| l.lease.id());
        Op::new(async move { crate::op::value(slot.txn(&[TxnOp::Put { key, value: val, lease }]).await?) })
    }
    /// Ends the claim without marking the job done: the next trigger in the period runs it.
    fn release(&self) -> Op {
        let (slot, stop) = (self.slot.clone(), self.stop.clone());
        Op::new(async move {
            let r = slot.release().await;
            stop.cancel();
            r?;
            value(())
        })
    }
    fn watch_lost(&self, bridge: &Bridge, id: u64) -> PyResult<()> {
        runtime::check_pid(self.pid).py()?;
        crate::lock::spawn_lost_watcher(self.slot.lost(), self.stop.clone(), bridge, id);
        Ok(())
    }
}
