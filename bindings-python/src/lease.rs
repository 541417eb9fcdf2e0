//! A lease kept alive in the background by the core.

use crate::bridge::Bridge;
use crate::client::ClientInner;
use crate::errors::IntoPy;
use crate::lock::spawn_lost_watcher;
use crate::op::{value, Op};
use etcdlock::{runtime, CancellationToken, Lease};
use pyo3::prelude::*;
use std::sync::Arc;

#[pyclass(frozen, name = "Lease", module = "etcdlock._native")]
pub struct NativeLease {
    pub lease: Lease,
    /// Keeps the client handle (and its connection) alive as long as the lease.
    _client: Arc<ClientInner>,
    /// Stops lost-callback watchers when this handle goes away (its drop revokes the lease,
    /// which is not news to anyone still listening).
    stop: CancellationToken,
}

impl NativeLease {
    pub fn new(client: Arc<ClientInner>, lease: Lease) -> Self {
        NativeLease { lease, _client: client, stop: CancellationToken::new() }
    }

    fn check(&self) -> PyResult<()> {
        runtime::check_pid(self._client.pid).py()
    }
}

impl Drop for NativeLease {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[pymethods]
impl NativeLease {
    #[getter]
    fn id(&self) -> PyResult<i64> {
        self.check()?;
        Ok(self.lease.id())
    }

    /// The TTL the server granted, in seconds.
    #[getter]
    fn ttl(&self) -> PyResult<i64> {
        self.check()?;
        Ok(self.lease.ttl())
    }

    fn is_alive(&self) -> PyResult<bool> {
        self.check()?;
        Ok(self.lease.is_alive())
    }

    /// Seconds left before the conservative local deadline (0 once lost).
    fn remaining(&self) -> PyResult<f64> {
        self.check()?;
        Ok(self.lease.remaining().as_secs_f64())
    }

    fn lost_reason(&self) -> PyResult<Option<&'static str>> {
        self.check()?;
        Ok(self.lease.lost_reason().map(|r| r.as_str()))
    }

    /// Revokes the lease, deleting every key attached to it. Idempotent.
    fn revoke(&self) -> Op {
        let lease = self.lease.clone();
        Op::new(async move {
            lease.revoke().await?;
            value(())
        })
    }

    /// Reports on `bridge` under `id`: the reason once the lease is lost, or None when this
    /// handle was dropped first.
    fn watch_lost(&self, bridge: &Bridge, id: u64) -> PyResult<()> {
        self.check()?;
        spawn_lost_watcher(self.lease.lost(), self.stop.clone(), bridge, id);
        Ok(())
    }
}
