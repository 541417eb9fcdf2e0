//! A lock handle in the style of `threading.Lock`: one object, any number of threads or tasks
//! acquiring it (each acquisition queues in etcd; they exclude each other), and at most one
//! holding acquisition at a time, which `release()` releases from whichever thread. The same
//! handle takes a semaphore's permit, a read-write lock's read or write, or an election's
//! leadership: each is a queue key of the core's that holds by its own rule.

use crate::bridge::Bridge;
use crate::client::{bytes_value, ClientInner};
use crate::errors::IntoPy;
use crate::op::{value, Op, Undo};
use etcdlock::{runtime, CancellationToken, Client, Election, Error, ErrorKind, Fence, FenceKind, LockGuard, LockOptions, LostSignal, Mutex, Result, RwLock, Semaphore};
use pyo3::types::PyBytes;
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

/// What a handle acquires.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Mutex,
    /// N permits, `count` of them per acquisition.
    Semaphore(u32, u32),
    Read,
    Write,
    /// An election's candidate: holding is leading.
    Candidate,
}

/// The core handle that acquires for one [`Kind`].
enum Acquirer {
    Mutex(Mutex),
    Semaphore(Semaphore),
    /// A read-write lock, and whether this handle writes.
    Rw(RwLock, bool),
    Election(Election),
}

impl Acquirer {
    /// Checks the arguments as the core does; sends nothing.
    pub fn new(client: &Client, name: &[u8], ttl: i64, kind: Kind) -> Result<Acquirer> {
        let name = name.to_vec();
        Ok(match kind {
            Kind::Mutex => Acquirer::Mutex(client.mutex(name, ttl)?),
            Kind::Semaphore(n, count) => Acquirer::Semaphore(client.semaphore(name, n, ttl)?.with_count(count)?),
            Kind::Read | Kind::Write => Acquirer::Rw(client.rwlock(name, ttl)?, matches!(kind, Kind::Write)),
            Kind::Candidate => Acquirer::Election(client.election(name, ttl)?),
        })
    }

    async fn lock_with(&self, opts: LockOptions) -> Result<LockGuard> {
        match self {
            Acquirer::Mutex(m) => m.lock_with(opts).await,
            Acquirer::Semaphore(s) => s.acquire_with(opts).await,
            Acquirer::Rw(rw, false) => rw.read_with(opts).await,
            Acquirer::Rw(rw, true) => rw.write_with(opts).await,
            Acquirer::Election(e) => e.campaign_with(opts).await.map(etcdlock::Leadership::into_guard),
        }
    }
}

struct Shared {
    client: Arc<ClientInner>,
    name: Vec<u8>,
    ttl: i64,
    kind: Kind,
    /// Stored in each acquisition's queue key (LockOptions::value).
    value: Vec<u8>,
    acquirer: OnceCell<Arc<Acquirer>>,
    state: std::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    held: Option<Held>,
    /// The latest acquisition, held or not (for `key` and `lost_reason`).
    last: Option<Arc<LockGuard>>,
}

/// The holding acquisition, and the token that stops its lost-callback watcher.
struct Held {
    guard: Arc<LockGuard>,
    stop: CancellationToken,
}

impl Drop for Held {
    fn drop(&mut self) {
        // Released or replaced: its watcher must not report the guard's end as a loss.
        self.stop.cancel();
    }
}

impl Shared {
    async fn acquirer(&self) -> Result<Arc<Acquirer>> {
        let client = self.client.get().await?;
        let a = self.acquirer.get_or_try_init(|| async { Acquirer::new(&client, &self.name, self.ttl, self.kind).map(Arc::new) }).await?;
        Ok(a.clone())
    }

    fn set_held(&self, guard: Arc<LockGuard>) {
        let mut st = self.state.lock().unwrap();
        st.last = Some(guard.clone());
        // A previous acquisition still stored here was lost (acquisitions exclude each other).
        st.held = Some(Held { guard, stop: CancellationToken::new() });
    }

    /// Takes the holding acquisition out if it is `guard` (or any, when None).
    fn take_held(&self, guard: Option<&Arc<LockGuard>>) -> Option<Held> {
        let mut st = self.state.lock().unwrap();
        match (&st.held, guard) {
            (Some(h), Some(g)) if !Arc::ptr_eq(&h.guard, g) => None,
            _ => st.held.take(),
        }
    }
}

#[pyclass(frozen, name = "Lock", module = "etcdlock._native")]
pub struct NativeLock {
    shared: Arc<Shared>,
}

impl NativeLock {
    /// Checks the arguments at once, as the core does, if the client is connected (else on
    /// first use).
    pub fn new(client: Arc<ClientInner>, name: Vec<u8>, ttl: i64, kind: Kind, value: Vec<u8>) -> Result<Self> {
        let made = client.connected().map(|c| Acquirer::new(c, &name, ttl, kind)).transpose()?;
        let acquirer = match made {
            Some(a) => OnceCell::new_with(Some(Arc::new(a))),
            None => OnceCell::new(),
        };
        Ok(NativeLock { shared: Arc::new(Shared { client, name, ttl, kind, value, acquirer, state: Default::default() }) })
    }

    fn check(&self) -> Result<()> {
        runtime::check_pid(self.shared.client.pid)
    }

    /// The guard of the holding acquisition, for fenced writes.
    pub fn held_guard(&self) -> Result<Option<Arc<LockGuard>>> {
        self.check()?;
        Ok(self.shared.state.lock().unwrap().held.as_ref().map(|h| h.guard.clone()))
    }
}

#[pymethods]
impl NativeLock {
    /// Queues for the lock. `timeout`: None waits forever, 0 tries once. Resolves to True, or
    /// False when it timed out or (try once) the lock was busy.
    #[pyo3(signature = (timeout=None))]
    fn acquire(&self, timeout: Option<f64>) -> PyResult<Op> {
        self.check().py()?;
        let timeout = timeout.map(Duration::try_from_secs_f64).transpose().map_err(|_| {
            pyo3::exceptions::PyValueError::new_err("timeout must be a non-negative number of seconds")
        })?;
        let (shared, cancel) = (self.shared.clone(), CancellationToken::new());
        // The acquisition this op made, for undoing it if the caller gave up meanwhile.
        let made: Arc<std::sync::Mutex<Option<Arc<LockGuard>>>> = Default::default();
        let fut = {
            let (shared, cancel, made) = (shared.clone(), cancel.clone(), made.clone());
            async move {
                let acquirer = shared.acquirer().await?;
                let opts = LockOptions { timeout, cancel: Some(cancel.clone()), value: shared.value.clone() };
                // The core releases an acquisition that succeeds after `cancel` fired and fails
                // it as Cancelled; one cancelled after this returns is reverted by `undo`.
                match acquirer.lock_with(opts).await {
                    Ok(guard) => {
                        let guard = Arc::new(guard);
                        *made.lock().unwrap() = Some(guard.clone());
                        shared.set_held(guard);
                        value(true)
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => value(false),
                    Err(e) if e.kind() == ErrorKind::LockTimeout && timeout.is_some() => value(false),
                    Err(e) => Err(e),
                }
            }
        };
        let undo: Undo = Box::new(move || {
            Box::pin(async move {
                let guard = made.lock().unwrap().take();
                if let Some(g) = guard {
                    drop(shared.take_held(Some(&g)));
                    let _ = g.release().await;
                }
            })
        });
        Ok(Op::cancellable(fut, cancel, Some(undo)))
    }

    /// Releases the holding acquisition (fenced). `NotHeld` if there is none, or it was lost.
    fn release(&self) -> Op {
        if let Err(e) = self.check() {
            return Op::fail(e);
        }
        let Some(held) = self.shared.take_held(None) else {
            return Op::fail(Error::new(ErrorKind::NotHeld, "the lock is not held"));
        };
        Op::new(async move {
            let r = held.guard.release().await;
            drop(held); // after release: a loss it discovers still reaches on_lost callbacks
            r?;
            value(())
        })
    }

    /// Replaces the value the holding acquisition's key carries (an election's proclamation);
    /// returns the write's revision. `NotHeld`, nothing written, if it does not hold.
    fn set_value(&self, value: &[u8]) -> Op {
        let guard = match self.held_guard() {
            Ok(Some(g)) => g,
            Ok(None) => return Op::fail(Error::new(ErrorKind::NotHeld, "not held")),
            Err(e) => return Op::fail(e),
        };
        let value = value.to_vec();
        Op::new(async move { crate::op::value(guard.set_value(&value).await?) })
    }

    /// Cheap local check: an acquisition holds it, not released, not known lost.
    fn is_held(&self) -> PyResult<bool> {
        Ok(self.held_guard().py()?.is_some_and(|g| g.is_held()))
    }

    /// The holding acquisition's fencing token, or None.
    fn fencing_token(&self) -> PyResult<Option<i64>> {
        Ok(self.held_guard().py()?.filter(|g| g.is_held()).map(|g| g.fencing_token()))
    }

    /// The holding acquisition's fence, as `(kind, name, token, cluster)` (what
    /// `etcdlock.fencing.Fence` is made of); `NotHeld` if nothing holds (released or lost).
    fn fence(&self) -> Op {
        let guard = match self.held_guard() {
            Ok(Some(g)) if g.is_held() => g,
            Ok(_) => return Op::fail(Error::new(ErrorKind::NotHeld, "the lock is not held: a fence is for a holding acquisition")),
            Err(e) => return Op::fail(e),
        };
        Op::new(async move { fence_value(guard.fence().await?) })
    }

    /// The latest acquisition's queue key, or None before the first.
    fn key(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.check().py()?;
        let key = self.shared.state.lock().unwrap().last.as_ref().map(|g| g.key().to_vec());
        key.map(|k| bytes_value(k).py().and_then(|c| c(py))).transpose()
    }

    /// The ID of the latest acquisition's lease, or None before the first.
    fn lease_id(&self) -> PyResult<Option<i64>> {
        self.check().py()?;
        Ok(self.shared.state.lock().unwrap().last.as_ref().map(|g| g.lease_id()))
    }

    /// The latest acquisition's health (see `etcdlock.Health`); idle before the first.
    fn health(&self) -> PyResult<HealthTuple> {
        self.check().py()?;
        let last = self.shared.state.lock().unwrap().last.clone();
        Ok(health_tuple(last.map_or_else(|| etcdlock::Health::idle(&self.shared.name), |g| g.health())))
    }

    /// Why the latest acquisition was lost, or None.
    fn lost_reason(&self) -> PyResult<Option<&'static str>> {
        self.check().py()?;
        Ok(self.shared.state.lock().unwrap().last.as_ref().and_then(|g| g.lost_reason()).map(|r| r.as_str()))
    }

    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        bytes_value(self.shared.name.clone()).py().and_then(|c| c(py))
    }

    /// Reports on `bridge` under `id` when the holding acquisition is lost: the reason, or
    /// None once it ended otherwise (released, replaced). False when nothing is held.
    fn watch_lost(&self, bridge: &Bridge, id: u64) -> PyResult<bool> {
        self.check().py()?;
        let st = self.shared.state.lock().unwrap();
        let Some(held) = st.held.as_ref() else { return Ok(false) };
        spawn_lost_watcher(held.guard.lost(), held.stop.clone(), bridge, id);
        Ok(true)
    }
}

/// A core [`etcdlock::Health`] as the tuple `etcdlock.Health` is built from: `(state,
/// lost_reason, name, fencing_token, lease_id, exclusive_for seconds or None, ok)`.
pub type HealthTuple = (&'static str, Option<&'static str>, String, i64, i64, Option<f64>, bool);

pub fn health_tuple(h: etcdlock::Health) -> HealthTuple {
    let ok = h.is_ok();
    (h.state.as_str(), h.lost_reason().map(|r| r.as_str()), h.name.clone(), h.fencing_token, h.lease_id, h.exclusive_for().map(|d| d.as_secs_f64()), ok)
}

/// A fence as the tuple `(kind, name, token, cluster)` that `etcdlock.fencing.Fence` is built from.
pub fn fence_value(f: Fence) -> crate::op::Outcome {
    let kind = match f.kind {
        FenceKind::Queue => "q",
        FenceKind::Key => "k",
    };
    Ok(Box::new(move |py| (kind, PyBytes::new(py, &f.name), f.token, f.cluster).into_py_any(py)))
}

/// Waits for a lost signal in the background; holds no Python object.
pub fn spawn_lost_watcher(signal: LostSignal, stop: CancellationToken, bridge: &Bridge, id: u64) {
    let sink = bridge.sink(id);
    runtime::spawn(async move {
        let reason = tokio::select! {
            biased;
            _ = stop.cancelled() => None,
            r = signal.wait() => Some(r.as_str()),
        };
        sink.send(value(reason));
    });
}
