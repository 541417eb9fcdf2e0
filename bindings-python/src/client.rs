//! The client handle shared by the sync and async Python clients.
//!
//! It connects lazily (once, on first use) so that `AsyncClient(...)` can be constructed
//! without blocking; the sync `Client` connects in its constructor.

use crate::errors::{closed, IntoPy};
use crate::lease::NativeLease;
use crate::election::NativeObserver;
use crate::lock::{Kind, NativeLock};
use crate::op::{value, Op};
use crate::registry::NativeDiscovery;
use crate::watch::NativeWatch;
use etcdlock::{runtime, CancellationToken, Client, ClientOptions, Error, ErrorKind, Op as TxnOp, Pem, Result, TlsOptions};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

pub struct ClientInner {
    endpoints: Vec<String>,
    opts: ClientOptions,
    client: OnceCell<Client>,
    /// Set by `close()`, also before (or while) the connection is made.
    closed: AtomicBool,
    /// Cancelled by `close()`: ends what waits on a cache (`cache.rs`), which the core's
    /// closing does not.
    pub closing: CancellationToken,
    pub pid: u32,
    /// The pool holdings Python handles share (`pool.rs`).
    pub pool_holdings: crate::pool::Holdings,
}

impl ClientInner {
    /// Errors in a forked child and after close.
    pub fn check(&self) -> Result<()> {
        runtime::check_pid(self.pid)?;
        if self.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        Ok(())
    }

    /// The connected core client, connecting on first use.
    pub async fn get(self: &Arc<Self>) -> Result<Client> {
        self.check()?;
        let c = self
            .client
            .get_or_try_init(|| async {
                Client::connect(self.endpoints.clone(), self.opts.clone()).await
            })
            .await?
            .clone();
        if self.closed.load(Ordering::Acquire) {
            c.close().await; // close() ran while we were connecting
            return Err(closed());
        }
        Ok(c)
    }

    /// The client's name (resolved when the handle was made, kept by the connection).
    pub fn name(&self) -> &str {
        self.opts.name.as_deref().unwrap_or_default()
    }

    /// The core client if already connected.
    pub fn connected(&self) -> Option<&Client> {
        self.client.get()
    }
}

/// Raw bytes as a Python `bytes`.
pub fn bytes_value(v: Vec<u8>) -> crate::op::Outcome {
    Ok(Box::new(move |py| Ok(PyBytes::new(py, &v).into_any().unbind())))
}

#[pyclass(frozen, name = "Client", module = "etcdlock._native")]
pub struct NativeClient {
    pub inner: Arc<ClientInner>,
}

impl NativeClient {
    /// Any handle, its arguments checked at once (ValueError), connected or not.
    fn handle(&self, name: &[u8], ttl: i64, kind: Kind, value: Option<&[u8]>) -> PyResult<NativeLock> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(name).py()?;
        etcdlock::check_ttl(ttl).py()?;
        let value = value.unwrap_or_default();
        etcdlock::check_lock_value(value).py()?;
        NativeLock::new(self.inner.clone(), name.to_vec(), ttl, kind, value.to_vec()).py()
    }

    /// Zeros before the (lazy) connection: nothing was counted yet.
    fn snapshot(&self) -> etcdlock::Metrics {
        self.inner.connected().map(Client::metrics).unwrap_or_else(|| etcdlock::Metrics::before_connect(self.inner.name()))
    }
}

#[pymethods]
impl NativeClient {
    /// Arguments are checked by the Python wrapper; nothing is sent (and no file is read)
    /// until `connect()` runs. Any of `ca_file`, `cert_file`, `key_file`, `server_name` turns
    /// on the TLS options (files read by the core on connect); none leaves `tls` unset, so
    /// `https://` endpoints use the system's roots.
    #[new]
    #[pyo3(signature = (endpoints, timeout, user=None, password=None, ca_file=None, cert_file=None, key_file=None, server_name=None, name=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        endpoints: Vec<String>,
        timeout: f64,
        user: Option<String>,
        password: Option<String>,
        ca_file: Option<PathBuf>,
        cert_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
        server_name: Option<String>,
        name: Option<String>,
    ) -> PyResult<Self> {
        let timeout = Duration::try_from_secs_f64(timeout)
            .map_err(|_| pyo3::exceptions::PyValueError::new_err("timeout must be a positive number of seconds"))?;
        let tls = if ca_file.is_some() || cert_file.is_some() || key_file.is_some() || server_name.is_some() {
            Some(TlsOptions {
                ca: ca_file.map(Pem::File),
                cert: cert_file.map(Pem::File),
                key: key_file.map(Pem::File),
                server_name,
            })
        } else {
            None
        };
        let mut opts = ClientOptions {
            connect_timeout: timeout,
            request_timeout: timeout,
            user: user.zip(password),
            tls,
            name,
            ..ClientOptions::default()
        };
        // Now, not on connect: the name shows in metrics before the (lazy) connection, and a
        // bad one (empty) is a ValueError from the constructor.
        opts.resolve_name().py()?;
        let pid = runtime::current_pid();
        Ok(NativeClient { inner: Arc::new(ClientInner { endpoints, opts, client: OnceCell::new(), closed: AtomicBool::new(false), closing: CancellationToken::new(), pid, pool_holdings: Default::default() }) })
    }

    fn connect(&self) -> Op {
        let inner = self.inner.clone();
        Op::new(async move {
            inner.get().await?;
            value(())
        })
    }

    /// Closes the client: every lease revoked (bounded), every wait ends with `Closed`.
    fn close(&self) -> Op {
        if let Err(e) = runtime::check_pid(self.inner.pid) {
            return Op::fail(e);
        }
        self.inner.closed.store(true, Ordering::Release);
        self.inner.closing.cancel();
        let client = self.inner.connected().cloned();
        Op::new(async move {
            if let Some(c) = client {
                c.close().await;
            }
            value(())
        })
    }

    fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    fn check(&self) -> PyResult<()> {
        self.inner.check().py()
    }

    /// Writes `value` at `key`; returns the revision. With `if_held`, only while that lock is
    /// held (checked by etcd in the same transaction), else `NotHeld` and nothing written.
    #[pyo3(signature = (key, value, lease=None, if_held=None, if_claimed=None))]
    fn put(&self, key: &[u8], value: &[u8], lease: Option<&NativeLease>, if_held: Option<&NativeLock>, if_claimed: Option<&crate::tasks::NativeTask>) -> Op {
        let (inner, key, val) = (self.inner.clone(), key.to_vec(), value.to_vec());
        let lease = lease.map(|l| l.lease.clone());
        if let Some(task) = if_claimed {
            if let Err(e) = task.check() {
                return Op::fail(e);
            }
            let task = task.task.clone();
            return Op::new(async move {
                let op = TxnOp::Put { key, value: val, lease: lease.as_ref().map_or(0, |l| l.id()) };
                crate::op::value(task.txn(&[op]).await?)
            });
        }
        let guard = match if_held.map(|l| l.held_guard()) {
            None => None,
            Some(Ok(Some(g))) => Some(g),
            Some(Ok(None)) => return Op::fail(Error::new(ErrorKind::NotHeld, "if_held: the lock is not held")),
            Some(Err(e)) => return Op::fail(e),
        };
        Op::new(async move {
            let client = inner.get().await?;
            let revision = match guard {
                Some(g) => {
                    let op = TxnOp::Put { key, value: val, lease: lease.as_ref().map_or(0, |l| l.id()) };
                    g.txn(&[op]).await?
                }
                None => client.put(&key, &val, lease.as_ref()).await?,
            };
            crate::op::value(revision)
        })
    }

    /// Whether the acquisition the fence (its string form) names still holds, now: one
    /// linearizable read. False for another etcd cluster's fence; a malformed one is ValueError.
    fn check_fence(&self, fence: &str) -> Op {
        let inner = self.inner.clone();
        let fence = match etcdlock::Fence::parse(fence) {
            Ok(f) => f,
            Err(e) => return Op::fail(e),
        };
        Op::new(async move {
            let client = inner.get().await?;
            value(client.check_fence(&fence).await?)
        })
    }

    /// The value at `key`, or None.
    fn get(&self, key: &[u8]) -> Op {
        let (inner, key) = (self.inner.clone(), key.to_vec());
        Op::new(async move {
            let client = inner.get().await?;
            match client.get(&key).await? {
                Some(kv) => bytes_value(kv.value),
                None => value(None::<()>),
            }
        })
    }

    /// Deletes `key`; whether it existed.
    fn delete(&self, key: &[u8]) -> Op {
        let (inner, key) = (self.inner.clone(), key.to_vec());
        Op::new(async move {
            let client = inner.get().await?;
            value(client.delete(&key).await?)
        })
    }

    /// Grants a lease kept alive in the background. The TTL is checked at once (ValueError).
    fn lease(&self, ttl: i64) -> PyResult<Op> {
        etcdlock::check_ttl(ttl).py()?;
        let inner = self.inner.clone();
        Ok(Op::new(async move {
            let client = inner.get().await?;
            let lease = client.lease(ttl).await?;
            let native = NativeLease::new(inner, lease);
            Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, native)?.into_any())) as crate::op::Convert)
        }))
    }

    /// Claims the period's slot of the job `name` (`at`: the trigger time in seconds since the
    /// epoch, now if None); the op's value is a `OnceSlot`, or None when not ours. The options
    /// are checked at once.
    #[pyo3(signature = (name, every, ttl, at=None, keep_periods=3))]
    fn once(&self, name: &[u8], every: f64, ttl: i64, at: Option<f64>, keep_periods: u32) -> PyResult<Op> {
        self.inner.check().py()?;
        crate::once::once(self.inner.clone(), name.to_vec(), every, ttl, at, keep_periods).py()
    }

    /// A task queue handle; sends nothing. Name, TTL and max_attempts are checked at once.
    #[pyo3(signature = (name, ttl, max_attempts, max_processing=None))]
    fn queue(&self, name: &[u8], ttl: i64, max_attempts: u32, max_processing: Option<f64>) -> PyResult<crate::tasks::NativeTaskQueue> {
        self.inner.check().py()?;
        crate::tasks::NativeTaskQueue::new(self.inner.clone(), name.to_vec(), ttl, max_attempts, max_processing).py()
    }

    /// A pool handle; sends nothing. The name and definition (`slots` or `size`, TTL, reuse
    /// delay in seconds) are checked at once; neither `slots` nor `size`: the pool as defined in
    /// etcd.
    #[pyo3(signature = (name, ttl, reuse_delay=None, slots=None, size=None))]
    fn pool(&self, name: &[u8], ttl: i64, reuse_delay: Option<f64>, slots: Option<Vec<String>>, size: Option<i64>) -> PyResult<crate::pool::NativePool> {
        self.inner.check().py()?;
        crate::pool::NativePool::new(self.inner.clone(), name.to_vec(), slots, size, ttl, reuse_delay).py()
    }

    /// The slots of the pool `name` (see `Pool.slots`), or None if no pool is defined there.
    fn inspect_pool(&self, name: &[u8]) -> PyResult<Op> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(name).py()?;
        Ok(crate::pool::inspect_pool(self.inner.clone(), name.to_vec()))
    }

    /// A lock handle; sends nothing. Name and TTL are checked at once (ValueError), connected
    /// or not, by the core's checks.
    #[pyo3(signature = (name, ttl, value=None))]
    fn lock(&self, name: &[u8], ttl: i64, value: Option<&[u8]>) -> PyResult<NativeLock> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(name).py()?;
        etcdlock::check_ttl(ttl).py()?;
        self.handle(name, ttl, Kind::Mutex, value)
    }

    /// A lock set handle; sends nothing. `members` as `(name, mode, permits)` (see
    /// `lockset.rs`); members, TTL and value are checked at once by the core's checks
    /// (ValueError), all of them if connected, else the rest on first use.
    #[pyo3(signature = (members, ttl, value=None))]
    fn lock_set(&self, members: Vec<crate::lockset::MemberArg<'_>>, ttl: i64, value: Option<&[u8]>) -> PyResult<crate::lockset::NativeLockSet> {
        self.inner.check().py()?;
        crate::lockset::NativeLockSet::new(self.inner.clone(), members, ttl, value.unwrap_or_default().to_vec()).py()
    }

    /// A handle that takes `count` of `permits` (1 to 1024) of the semaphore `name` per
    /// acquisition (the core checks `count` once connected).
    #[pyo3(signature = (name, permits, ttl, value=None, count=1))]
    fn semaphore(&self, name: &[u8], permits: u32, ttl: i64, value: Option<&[u8]>, count: i64) -> PyResult<NativeLock> {
        // Python's ints are unbounded; what does not fit the core's u32 is out of its range.
        let count = u32::try_from(count)
            .map_err(|_| Error::new(ErrorKind::InvalidArgument, format!("count must be 1 to the semaphore's {permits} permits, got {count}")))
            .py()?;
        self.handle(name, ttl, Kind::Semaphore(permits, count), value)
    }

    /// A handle that reads (or with `write`, writes) the read-write lock `name`.
    #[pyo3(signature = (name, ttl, write, value=None))]
    fn rwlock(&self, name: &[u8], ttl: i64, write: bool, value: Option<&[u8]>) -> PyResult<NativeLock> {
        self.handle(name, ttl, if write { Kind::Write } else { Kind::Read }, value)
    }

    /// A candidate of the election `name`, proposing `value`: holding is leading.
    fn candidate(&self, name: &[u8], ttl: i64, value: &[u8]) -> PyResult<NativeLock> {
        self.handle(name, ttl, Kind::Candidate, Some(value))
    }

    /// The leader of election `name`: `(value, key, revision, lease)`, or None.
    fn leader(&self, name: &[u8], ttl: i64) -> PyResult<Op> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(name).py()?;
        let (inner, name) = (self.inner.clone(), name.to_vec());
        Ok(Op::new(async move {
            let client = inner.get().await?;
            let leader = client.election(name, ttl)?.leader().await?;
            crate::election::leader_value(leader)
        }))
    }

    /// An observer of election `name`'s leader; it starts with its first `next()`.
    fn observe(&self, name: &[u8], ttl: i64) -> PyResult<NativeObserver> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(name).py()?;
        Ok(NativeObserver::new(self.inner.clone(), name.to_vec(), ttl))
    }

    /// The queue of lock `name`: `(holders, waiters, revision)`, each entry a tuple
    /// `(key, fencing_token, lease, ttl or None, value, mode)`. The name is checked at once.
    fn inspect(&self, name: &[u8]) -> PyResult<Op> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(name).py()?;
        let (inner, name) = (self.inner.clone(), name.to_vec());
        Ok(Op::new(async move {
            let client = inner.get().await?;
            let s = client.inspect(&name).await?;
            let revision = s.revision;
            Ok(Box::new(move |py: Python<'_>| {
                let bytes = |b: &[u8]| pyo3::types::PyBytes::new(py, b).into_any().unbind();
                let conv = |e: &etcdlock::QueueEntry| (bytes(&e.key), e.fencing_token, e.lease, e.ttl, bytes(&e.value), e.mode.clone());
                let holders: Vec<_> = s.holders.iter().map(conv).collect();
                let waiters: Vec<_> = s.waiters.iter().map(conv).collect();
                Ok((holders, waiters, revision).into_pyobject(py)?.into_any().unbind())
            }) as crate::op::Convert)
        }))
    }

    /// The client's metrics now (no I/O): a dict of `etcdlock::Metrics::entries()`, counters
    /// and gauges as ints, labelled counters as dicts, histograms as
    /// `{"count": int, "sum": float, "buckets": [(upper bound, cumulative count), ...]}`.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        crate::metrics::to_dict(py, &self.snapshot())
    }

    /// The snapshot as Prometheus families (`etcdlock.prometheus`; see `metrics::families`).
    fn metric_families<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
        crate::metrics::families(py, &self.snapshot())
    }

    /// The client's name: the `client` label of its metrics.
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// The same in the Prometheus text format.
    fn metrics_text(&self) -> String {
        self.snapshot().prometheus_text()
    }

    /// Registers `<service>/<instance>` = `value` on a lease of `ttl` seconds of its own, kept
    /// registered by the core; the op's value is a `Registration`. Service, TTL and value are
    /// checked at once (ValueError), the instance name by the core.
    fn register(&self, service: &[u8], instance: &[u8], value: &[u8], ttl: i64, replace: bool) -> PyResult<Op> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(service).py()?;
        etcdlock::check_ttl(ttl).py()?;
        etcdlock::check_lock_value(value).py()?;
        Ok(crate::registry::register(self.inner.clone(), service.to_vec(), instance.to_vec(), value.to_vec(), ttl, replace))
    }

    /// `service`'s instances now: `(revision, [(name, value, lease, mod_revision), ...])`.
    fn instances(&self, service: &[u8]) -> PyResult<Op> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(service).py()?;
        let (inner, service) = (self.inner.clone(), service.to_vec());
        Ok(Op::new(async move {
            let client = inner.get().await?;
            crate::registry::instances_value(client.instances(&service).await?)
        }))
    }

    /// A discovery of `service`'s instance sets; it starts with its first `next()`.
    fn discover(&self, service: &[u8]) -> PyResult<NativeDiscovery> {
        self.inner.check().py()?;
        etcdlock::check_lock_name(service).py()?;
        Ok(NativeDiscovery::new(self.inner.clone(), service.to_vec()))
    }

    /// Loads the prefix into a local copy that follows etcd; the op's value is a `Cache`.
    fn cache(&self, prefix: &[u8]) -> PyResult<Op> {
        self.inner.check().py()?;
        Ok(crate::cache::load(self.inner.clone(), prefix.to_vec()))
    }

    /// A watch handle; it starts (is confirmed by etcd) with `start()` or the first `next()`.
    #[pyo3(signature = (key, prefix=false, start_revision=None))]
    fn watch(&self, key: &[u8], prefix: bool, start_revision: Option<i64>) -> PyResult<NativeWatch> {
        self.inner.check().py()?;
        NativeWatch::new(self.inner.clone(), key.to_vec(), prefix, start_revision)
    }
}
