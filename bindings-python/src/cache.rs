//! A prefix cache (core `Cache`): its reads are local and answered at once; `wait_for` and the
//! events wait on the runtime. Closing the cache, or its client, ends both.

use crate::client::ClientInner;
use crate::errors::IntoPy;
use crate::op::{value, Convert, Op, Outcome};
use etcdlock::{runtime, Cache, CacheEvent, CacheEventKind, CacheEvents, CancellationToken, Error, ErrorKind, Result};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::{Arc, RwLock};
use std::time::Duration;

fn closed_cache() -> Error {
    Error::new(ErrorKind::Closed, "the cache is closed")
}

/// Loads `prefix` at one revision; the op's value is a `Cache` following it from there.
pub fn load(client: Arc<ClientInner>, prefix: Vec<u8>) -> Op {
    Op::new(async move {
        let c = client.get().await?;
        let cache = c.cache(prefix.clone()).await?;
        let native = NativeCache { client, prefix, cache: RwLock::new(Some(cache)), closed: CancellationToken::new() };
        Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, native)?.into_any())) as Convert)
    })
}

#[pyclass(frozen, name = "Cache", module = "etcdlock._native")]
pub struct NativeCache {
    client: Arc<ClientInner>,
    prefix: Vec<u8>,
    /// None once closed: the core copy stops following etcd when its last clone is dropped.
    cache: RwLock<Option<Cache>>,
    /// Set by `close()`: a waiting `wait_for` raises `Closed`, an events reader ends.
    closed: CancellationToken,
}

impl NativeCache {
    /// The core cache; `Closed` once this cache or its client is closed (or in a forked child).
    fn cache(&self) -> Result<Cache> {
        self.client.check()?;
        self.cache.read().unwrap_or_else(|e| e.into_inner()).clone().ok_or_else(closed_cache)
    }
}

#[pymethods]
impl NativeCache {
    #[getter]
    fn prefix<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.prefix)
    }

    /// The revision the copy is at.
    fn revision(&self) -> PyResult<i64> {
        Ok(self.cache().py()?.revision())
    }

    /// The value of `key` in the copy, or None.
    fn get<'py>(&self, py: Python<'py>, key: &[u8]) -> PyResult<Option<Bound<'py, PyBytes>>> {
        Ok(self.cache().py()?.get(key).map(|kv| PyBytes::new(py, &kv.value)))
    }

    /// `({key: value}, revision)`, read together.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyDict>, i64)> {
        let (map, revision) = self.cache().py()?.snapshot();
        let dict = PyDict::new(py);
        for (key, kv) in map {
            dict.set_item(PyBytes::new(py, &key), PyBytes::new(py, &kv.value))?;
        }
        Ok((dict, revision))
    }

    fn len(&self) -> PyResult<usize> {
        Ok(self.cache().py()?.len())
    }

    /// Waits until the copy is at `revision` or later: `Timeout` after `timeout` seconds (None:
    /// no limit), `Closed` if the cache or the client is closed meanwhile.
    #[pyo3(signature = (revision, timeout=None))]
    fn wait_for(&self, revision: i64, timeout: Option<f64>) -> Op {
        let cache = match self.cache() {
            Ok(c) => c,
            Err(e) => return Op::fail(e),
        };
        let timeout = match timeout.map(Duration::try_from_secs_f64) {
            None => Duration::MAX,
            Some(Ok(t)) => t,
            Some(Err(_)) => return Op::fail(Error::new(ErrorKind::InvalidArgument, "timeout must be a positive number of seconds")),
        };
        let (closed, client_closed, cancel) = (self.closed.clone(), self.client.closing.clone(), CancellationToken::new());
        let token = cancel.clone();
        Op::cancellable(
            async move {
                tokio::select! {
                    biased;
                    _ = token.cancelled() => Err(Error::new(ErrorKind::Cancelled, "waiting for the cache cancelled")),
                    _ = closed.cancelled() => Err(closed_cache()),
                    _ = client_closed.cancelled() => Err(crate::errors::closed()),
                    r = cache.wait_for(revision, timeout) => r.and_then(|()| value(())),
                }
            },
            cancel,
            None,
        )
    }

    /// The copy's changes from now on, for one reader.
    fn events(&self) -> PyResult<NativeCacheEvents> {
        let events = self.cache().py()?.events();
        Ok(NativeCacheEvents {
            shared: Arc::new(EventsShared {
                events: tokio::sync::Mutex::new(Some(events)),
                cache_closed: self.closed.clone(),
                client_closed: self.client.closing.clone(),
                closed: CancellationToken::new(),
            }),
            pid: self.client.pid,
        })
    }

    /// Stops following etcd (idempotent): later calls raise `Closed`, waits end.
    fn close(&self) {
        self.closed.cancel();
        drop(self.cache.write().unwrap_or_else(|e| e.into_inner()).take());
    }

    fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }
}

struct EventsShared {
    /// None once ended. Read by one `next()` at a time.
    events: tokio::sync::Mutex<Option<CacheEvents>>,
    cache_closed: CancellationToken,
    client_closed: CancellationToken,
    /// This reader's own `close()`.
    closed: CancellationToken,
}

/// `(type, key, value, prev_value or None, revision)`.
fn event_value(e: CacheEvent) -> Outcome {
    let kind = match e.kind {
        CacheEventKind::Put => "put",
        CacheEventKind::Delete => "delete",
        CacheEventKind::Resynced => "resynced",
    };
    Ok(Box::new(move |py: Python<'_>| {
        let prev = e.prev_value.map(|v| PyBytes::new(py, &v));
        let t = (kind, PyBytes::new(py, &e.key), PyBytes::new(py, &e.value), prev, e.revision);
        Ok(t.into_pyobject(py)?.into_any().unbind())
    }))
}

#[pyclass(frozen, name = "CacheEvents", module = "etcdlock._native")]
pub struct NativeCacheEvents {
    shared: Arc<EventsShared>,
    pid: u32,
}

#[pymethods]
impl NativeCacheEvents {
    /// The next event as `(type, key, value, prev_value, revision)`, or None once ended (this
    /// reader, the cache or the client closed).
    fn next(&self) -> Op {
        if let Err(e) = runtime::check_pid(self.pid) {
            return Op::fail(e);
        }
        let (shared, cancel) = (self.shared.clone(), CancellationToken::new());
        let token = cancel.clone();
        Op::cancellable(
            async move {
                let mut slot = shared.events.lock().await;
                let Some(events) = slot.as_mut() else { return value(None::<()>) };
                // CacheEvents::next is cancel-safe (a broadcast receiver).
                let next = tokio::select! {
                    biased;
                    _ = token.cancelled() => return Err(Error::new(ErrorKind::Cancelled, "waiting for a cache event cancelled")),
                    _ = shared.closed.cancelled() => None,
                    _ = shared.cache_closed.cancelled() => None,
                    _ = shared.client_closed.cancelled() => None,
                    e = events.next() => e,
                };
                match next {
                    Some(e) => event_value(e),
                    None => {
                        *slot = None;
                        value(None::<()>)
                    }
                }
            },
            cancel,
            None,
        )
    }

    /// Ends this reader; a `next()` in progress returns None.
    fn close(&self) {
        self.shared.closed.cancel();
    }
}
