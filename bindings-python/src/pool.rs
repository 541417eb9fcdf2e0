//! Pools of named slots: a handle that acquires and changes the slots, and a holding (its slot
//! ids and tokens, fenced writes, the lost signal, release). Translation only; the pool is the
//! core's.

use crate::bridge::Bridge;
use crate::client::ClientInner;
use crate::errors::IntoPy;
use crate::op::{value, Convert, Op, Undo};
use crate::tasks::seconds;
use etcdlock::{runtime, CancellationToken, Client, Error, ErrorKind, Op as TxnOp, Pool, PoolAcquire, PoolGuard, PoolOptions, SlotInfo, SlotState, MAX_POOL_SLOTS};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::OnceCell;

fn invalid(msg: String) -> Error {
    Error::new(ErrorKind::InvalidArgument, msg)
}

#[pyclass(frozen, name = "Pool", module = "etcdlock._native")]
pub struct NativePool {
    client: Arc<ClientInner>,
    name: Vec<u8>,
    opts: PoolOptions,
    /// Neither slots nor size given: the pool as defined in etcd (`Client::join_pool`).
    join: bool,
    /// The core's handle, made on first use (the client connects lazily).
    pool: Arc<OnceCell<Pool>>,
}

impl NativePool {
    /// Checks the name and definition at once, as the core does; sends nothing. `slots` or
    /// `size` (the Python wrapper passes at most one); neither joins the pool as defined in etcd
    /// (then `reuse_delay` is the stored one, and the wrapper passes none).
    pub fn new(client: Arc<ClientInner>, name: Vec<u8>, slots: Option<Vec<String>>, size: Option<i64>, ttl: i64, reuse_delay: Option<f64>) -> Result<Self, Error> {
        let slots = match (slots, size) {
            (None, None) => {
                etcdlock::check_lock_name(&name)?;
                etcdlock::check_ttl(ttl)?;
                let opts = PoolOptions { slots: Vec::new(), ttl_secs: ttl, reuse_delay: Default::default() };
                return Ok(NativePool { client, name, opts, join: true, pool: Default::default() });
            }
            (Some(s), None) => s,
            // Bounded before the ids are made (the core would refuse it after).
            (None, Some(n)) if !(0..=MAX_POOL_SLOTS as i64).contains(&n) => return Err(invalid(format!("a pool has 1 to {MAX_POOL_SLOTS} slots, got {n}"))),
            (None, Some(n)) => PoolOptions::size(n as usize).slots,
            (Some(_), Some(_)) => return Err(invalid("give the slots or the size of the pool, not both".into())),
        };
        let reuse_delay = seconds("reuse_delay", reuse_delay)?.unwrap_or_default();
        let opts = PoolOptions { slots, ttl_secs: ttl, reuse_delay };
        etcdlock::check_pool(&name, &opts)?;
        Ok(NativePool { client, name, opts, join: false, pool: Default::default() })
    }

    /// The core's handle, for a future.
    fn handle(&self) -> impl std::future::Future<Output = Result<(Client, Pool), Error>> + Send + 'static {
        let (client, name, opts, cell, join) = (self.client.clone(), self.name.clone(), self.opts.clone(), self.pool.clone(), self.join);
        async move {
            let c = client.get().await?;
            let make = || async { if join { c.join_pool(name, opts.ttl_secs) } else { c.pool(name, opts) } };
            let pool = cell.get_or_try_init(make).await?.clone();
            Ok((c, pool))
        }
    }

    fn change(&self, ids: Vec<String>, add: bool) -> Op {
        let p = self.handle();
        Op::new(async move {
            let (_, pool) = p.await?;
            value(if add { pool.add_slots(ids).await? } else { pool.remove_slots(ids).await? })
        })
    }
}

#[pymethods]
impl NativePool {
    #[getter]
    fn name<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.name)
    }

    /// Acquires `count` slots; the op's value is a `PoolHolding`. `timeout`: None waits, 0 tries
    /// once (`WouldBlock`), otherwise `LockTimeout`. `owner`: an acquire with the owner of a
    /// live holding of this client returns that holding.
    #[pyo3(signature = (count, owner=None, timeout=None))]
    fn acquire(&self, count: i64, owner: Option<String>, timeout: Option<f64>) -> Op {
        // Python's ints are unbounded; below zero is out of the core's range.
        let Ok(count) = usize::try_from(count) else {
            return Op::fail(invalid(format!("count must be 1 to the pool's size, got {count}")));
        };
        let timeout = match seconds("timeout", timeout) {
            Ok(t) => t,
            Err(e) => return Op::fail(e),
        };
        let (p, inner) = (self.handle(), self.client.clone());
        let cancel = CancellationToken::new();
        // A holding this op made (not one an owner already had), for undoing it if the caller
        // gave up meanwhile.
        let made: Arc<Mutex<Option<Arc<Holding>>>> = Default::default();
        let fut = {
            let (cancel, made) = (cancel.clone(), made.clone());
            async move {
                let (_, pool) = p.await?;
                // The core gives back slots taken by an acquire cancelled before it returned.
                let guard = pool.acquire_with(PoolAcquire { count, owner, timeout, cancel: Some(cancel) }).await?;
                let (holding, new) = share(&inner, pool.name(), guard);
                if new {
                    *made.lock().unwrap() = Some(holding.clone());
                }
                let native = NativePoolHolding { holding, pid: inner.pid };
                Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, native)?.into_any())) as Convert)
            }
        };
        let undo: Undo = Box::new(move || {
            Box::pin(async move {
                let holding = made.lock().unwrap().take();
                if let Some(h) = holding {
                    let _ = h.guard.release().await;
                    h.stop.cancel();
                }
            })
        });
        Op::cancellable(fut, cancel, Some(undo))
    }

    /// Adds slots; the op's value is the pool's slot ids after.
    fn add_slots(&self, ids: Vec<String>) -> Op {
        self.change(ids, true)
    }

    /// Removes slots (a held one goes at its release); the op's value is the ids after.
    fn remove_slots(&self, ids: Vec<String>) -> Op {
        self.change(ids, false)
    }

    /// Every slot, read at one revision: see [`slot_tuples`].
    fn slots(&self) -> Op {
        let p = self.handle();
        Op::new(async move {
            let (_, pool) = p.await?;
            value(slot_tuples(pool.slots().await?))
        })
    }
}

/// The slots of the pool `name`, or None if none is defined there.
pub fn inspect_pool(client: Arc<ClientInner>, name: Vec<u8>) -> Op {
    Op::new(async move {
        let c = client.get().await?;
        value(c.inspect_pool(name).await?.map(slot_tuples))
    })
}

type SlotTuple = (String, &'static str, Option<i64>, Option<i64>, Option<i64>, Option<String>, Option<i64>);

/// `(id, state, token, lease, ttl, owner, acquisition)` per slot: `state` is `"free"`,
/// `"held"` (token, lease, its seconds left, owner or None, the acquisition's token),
/// `"resting"` (lease and seconds left) or `"dead"`; what does not apply is None.
fn slot_tuples(slots: Vec<SlotInfo>) -> Vec<SlotTuple> {
    slots
        .into_iter()
        .map(|s| match s.state {
            SlotState::Free => (s.id, "free", None, None, None, None, None),
            SlotState::Held { token, lease, ttl, acquisition, owner } => {
                (s.id, "held", Some(token), Some(lease), ttl, Some(owner).filter(|o| !o.is_empty()), Some(acquisition))
            }
            SlotState::Resting { lease, ttl } => (s.id, "resting", None, Some(lease), ttl, None, None),
            SlotState::Dead => (s.id, "dead", None, None, None, None, None),
        })
        .collect()
}

/// One holding, shared by every Python handle on it (an acquire with the owner of a live
/// holding returns another handle on the same one).
pub struct Holding {
    guard: PoolGuard,
    /// Stops the lost-callback watchers once the holding is released (through any handle) or
    /// no handle is left.
    stop: CancellationToken,
}

impl Drop for Holding {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// This client's holdings by (pool name, acquisition token), while some handle keeps them.
pub type Holdings = Mutex<HashMap<(Vec<u8>, i64), Weak<Holding>>>;

/// The shared holding of `guard`, and whether it is new (not one an owner already had).
fn share(inner: &ClientInner, name: &[u8], guard: PoolGuard) -> (Arc<Holding>, bool) {
    let mut map = inner.pool_holdings.lock().unwrap();
    map.retain(|_, w| w.strong_count() > 0);
    let key = (name.to_vec(), guard.fencing_token());
    if let Some(h) = map.get(&key).and_then(Weak::upgrade) {
        return (h, false);
    }
    let h = Arc::new(Holding { guard, stop: CancellationToken::new() });
    map.insert(key, Arc::downgrade(&h));
    (h, true)
}

#[pyclass(frozen, name = "PoolHolding", module = "etcdlock._native")]
pub struct NativePoolHolding {
    holding: Arc<Holding>,
    pid: u32,
}

impl NativePoolHolding {
    fn guard(&self) -> PyResult<&PoolGuard> {
        runtime::check_pid(self.pid).py()?;
        Ok(&self.holding.guard)
    }
}

#[pymethods]
impl NativePoolHolding {
    /// The slot ids held, in the pool's order.
    #[getter]
    fn slots(&self) -> Vec<String> {
        self.holding.guard.slots().into_iter().map(str::to_string).collect()
    }
    /// Each slot id with its fencing token.
    #[getter]
    fn tokens(&self) -> Vec<(String, i64)> {
        self.holding.guard.tokens().to_vec()
    }
    #[getter]
    fn fencing_token(&self) -> i64 {
        self.holding.guard.fencing_token()
    }
    #[getter]
    fn owner(&self) -> Option<String> {
        self.holding.guard.owner().map(str::to_string)
    }
    #[getter]
    fn lease_id(&self) -> i64 {
        self.holding.guard.lease_id()
    }
    fn is_held(&self) -> PyResult<bool> {
        Ok(self.guard()?.is_held())
    }
    fn lost_reason(&self) -> PyResult<Option<&'static str>> {
        Ok(self.guard()?.lost_reason().map(|r| r.as_str()))
    }
    fn health(&self) -> PyResult<crate::lock::HealthTuple> {
        Ok(crate::lock::health_tuple(self.guard()?.health()))
    }

    /// Writes `value` at `key` (on `lease` if given) only while every slot is held (fenced).
    #[pyo3(signature = (key, value, lease=None))]
    fn put(&self, key: &[u8], value: &[u8], lease: Option<&crate::lease::NativeLease>) -> Op {
        if let Err(e) = runtime::check_pid(self.pid) {
            return Op::fail(e);
        }
        let (holding, key, val) = (self.holding.clone(), key.to_vec(), value.to_vec());
        let lease = lease.map_or(0, |l| l.lease.id());
        Op::new(async move { crate::op::value(holding.guard.txn(&[TxnOp::Put { key, value: val, lease }]).await?) })
    }

    /// The fence of slot `slot`, as `(kind, name, token, cluster)` (kind `"k"`: the slot's key
    /// `<pool>/slot/<id>` at the slot's token); `InvalidArgument` for a slot this holding does
    /// not hold. As the core's, also after the release (it then no longer checks).
    fn fence(&self, slot: String) -> Op {
        if let Err(e) = runtime::check_pid(self.pid) {
            return Op::fail(e);
        }
        let holding = self.holding.clone();
        Op::new(async move { crate::lock::fence_value(holding.guard.fence(&slot).await?) })
    }

    /// Gives every slot back at once (fenced). `NotHeld` if already released or lost.
    fn release(&self) -> Op {
        if let Err(e) = runtime::check_pid(self.pid) {
            return Op::fail(e);
        }
        let holding = self.holding.clone();
        Op::new(async move {
            let r = holding.guard.release().await;
            // After the release: a loss it discovers still reaches on_lost callbacks.
            holding.stop.cancel();
            r?;
            value(())
        })
    }

    /// Reports on `bridge` under `id` when the holding is lost: the reason, or None once it
    /// ended otherwise (released, dropped).
    fn watch_lost(&self, bridge: &Bridge, id: u64) -> PyResult<()> {
        let guard = self.guard()?;
        crate::lock::spawn_lost_watcher(guard.lost(), self.holding.stop.clone(), bridge, id);
        Ok(())
    }
}
