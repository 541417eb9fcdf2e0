//! The task queue: a handle that puts and claims, and a claimed task (fenced writes, ack,
//! nack, the lost signal). Translation only; the queue is the core's.

use crate::bridge::Bridge;
use crate::client::ClientInner;
use crate::errors::IntoPy;
use crate::op::{value, Convert, Op, Undo};
use etcdlock::{runtime, CancellationToken, ClaimOptions, Error, ErrorKind, Op as TxnOp, QueueOptions, Task, TaskOptions, TaskQueue};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

pub(crate) fn seconds(what: &str, s: Option<f64>) -> Result<Option<Duration>, Error> {
    s.map(|s| Duration::try_from_secs_f64(s).map_err(|_| Error::new(ErrorKind::InvalidArgument, format!("{what} must be a non-negative number of seconds, not {s}"))))
        .transpose()
}

#[pyclass(frozen, name = "TaskQueue", module = "etcdlock._native")]
pub struct NativeTaskQueue {
    client: Arc<ClientInner>,
    name: Vec<u8>,
    opts: QueueOptions,
    /// The core's handle, made on first use (the client connects lazily).
    queue: Arc<OnceCell<TaskQueue>>,
}

impl NativeTaskQueue {
    /// Checks the name and options at once, as the core does; sends nothing.
    pub fn new(client: Arc<ClientInner>, name: Vec<u8>, ttl: i64, max_attempts: u32, max_processing: Option<f64>) -> Result<Self, Error> {
        let max_processing = seconds("max_processing", max_processing)?;
        let opts = QueueOptions { ttl_secs: ttl, max_attempts, max_processing };
        etcdlock::check_queue(&name, &opts)?;
        Ok(NativeTaskQueue { client, name, opts, queue: Default::default() })
    }

    /// The core's handle, for a future.
    fn handle(&self) -> impl std::future::Future<Output = Result<TaskQueue, Error>> + Send + 'static {
        let (client, name, opts, cell) = (self.client.clone(), self.name.clone(), self.opts.clone(), self.queue.clone());
        async move {
            let c = client.get().await?;
            Ok(cell.get_or_try_init(|| async { c.queue(name, opts) }).await?.clone())
        }
    }
}

#[pymethods]
impl NativeTaskQueue {
    #[getter]
    fn name<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.name)
    }

    /// Puts an item; the op's value is its id (str).
    #[pyo3(signature = (payload, id=None, priority=0, delay=None))]
    fn put(&self, payload: Vec<u8>, id: Option<String>, priority: i32, delay: Option<f64>) -> Op {
        let delay = match seconds("delay", delay) {
            Ok(d) => d,
            Err(e) => return Op::fail(e),
        };
        let q = self.handle();
        Op::new(async move { value(q.await?.put(&payload, TaskOptions { id, priority, delay }).await?) })
    }

    /// Claims the next item; the op's value is a `Task`. `timeout`: None waits, 0 tries once
    /// (`WouldBlock`), otherwise `LockTimeout`.
    #[pyo3(signature = (timeout=None, worker=None))]
    fn claim(&self, timeout: Option<f64>, worker: Option<Vec<u8>>) -> Op {
        let timeout = match seconds("timeout", timeout) {
            Ok(t) => t,
            Err(e) => return Op::fail(e),
        };
        let (q, pid) = (self.handle(), self.client.pid);
        let cancel = CancellationToken::new();
        let made: Arc<std::sync::Mutex<Option<Arc<Task>>>> = Default::default();
        let fut = {
            let (cancel, made) = (cancel.clone(), made.clone());
            async move {
                let task = Arc::new(q.await?.claim(ClaimOptions { timeout, cancel: Some(cancel), worker: worker.unwrap_or_default() }).await?);
                *made.lock().unwrap() = Some(task.clone());
                let native = NativeTask { task, stop: CancellationToken::new(), pid };
                Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, native)?.into_any())) as Convert)
            }
        };
        // A claim that succeeded after the caller gave up is given back.
        let undo: Undo = Box::new(move || {
            Box::pin(async move {
                let task = made.lock().unwrap().take();
                if let Some(t) = task {
                    let _ = t.nack().await;
                }
            })
        });
        Op::cancellable(fut, cancel, Some(undo))
    }

    /// `{"pending", "pending_by_priority", "delayed", "claimed", "dead", "revision"}`.
    fn stats(&self) -> Op {
        let q = self.handle();
        Op::new(async move {
            let s = q.await?.stats().await?;
            Ok(Box::new(move |py: Python<'_>| {
                let d = PyDict::new(py);
                d.set_item("pending", s.pending)?;
                d.set_item("pending_by_priority", s.pending_by_priority.into_iter().collect::<Vec<_>>())?;
                d.set_item("delayed", s.delayed)?;
                d.set_item("claimed", s.claimed)?;
                d.set_item("dead", s.dead)?;
                d.set_item("revision", s.revision)?;
                Ok(d.into_any().unbind())
            }) as Convert)
        })
    }

    /// `[(id, payload, attempts, priority), ...]`.
    fn dead(&self) -> Op {
        let q = self.handle();
        Op::new(async move {
            let dead = q.await?.dead().await?;
            Ok(Box::new(move |py: Python<'_>| {
                let list: Vec<_> = dead.into_iter().map(|d| (d.id, PyBytes::new(py, &d.payload), d.attempts, d.priority)).collect();
                Ok(list.into_pyobject(py)?.into_any().unbind())
            }) as Convert)
        })
    }

    fn requeue_dead(&self, id: String) -> Op {
        let q = self.handle();
        Op::new(async move { value(q.await?.requeue_dead(&id).await?) })
    }

    fn delete_dead(&self, id: String) -> Op {
        let q = self.handle();
        Op::new(async move { value(q.await?.delete_dead(&id).await?) })
    }
}

#[pyclass(frozen, name = "Task", module = "etcdlock._native")]
pub struct NativeTask {
    pub task: Arc<Task>,
    /// Stops the lost-callback watcher once the task ended (acked, nacked, dropped).
    stop: CancellationToken,
    pid: u32,
}

impl Drop for NativeTask {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl NativeTask {
    pub fn check(&self) -> Result<(), Error> {
        runtime::check_pid(self.pid)
    }
}

#[pymethods]
impl NativeTask {
    #[getter]
    fn id(&self) -> &str {
        self.task.id()
    }
    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.task.payload())
    }
    #[getter]
    fn priority(&self) -> i32 {
        self.task.priority()
    }
    #[getter]
    fn attempts(&self) -> u32 {
        self.task.attempts()
    }
    #[getter]
    fn fencing_token(&self) -> i64 {
        self.task.fencing_token()
    }
    fn is_held(&self) -> PyResult<bool> {
        self.check().py()?;
        Ok(self.task.is_held())
    }
    /// The claim's fence, as `(kind, name, token, cluster)`; `NotHeld` once the claim ended or
    /// was lost.
    fn fence(&self) -> Op {
        if let Err(e) = self.check() {
            return Op::fail(e);
        }
        if !self.task.is_held() {
            return Op::fail(Error::new(etcdlock::ErrorKind::NotHeld, "the task's claim ended or was lost: a fence is for a holding claim"));
        }
        let task = self.task.clone();
        Op::new(async move { crate::lock::fence_value(task.fence().await?) })
    }
    fn lost_reason(&self) -> PyResult<Option<&'static str>> {
        self.check().py()?;
        Ok(self.task.lost_reason().map(|r| r.as_str()))
    }
    fn health(&self) -> PyResult<crate::lock::HealthTuple> {
        self.check().py()?;
        Ok(crate::lock::health_tuple(self.task.health()))
    }

    /// Acks, with `puts` (key, value) and `deletes` in the same fenced Txn.
    #[pyo3(signature = (puts=Vec::new(), deletes=Vec::new()))]
    fn ack(&self, puts: Vec<(Vec<u8>, Vec<u8>)>, deletes: Vec<Vec<u8>>) -> Op {
        if let Err(e) = self.check() {
            return Op::fail(e);
        }
        let (task, stop) = (self.task.clone(), self.stop.clone());
        let ops: Vec<TxnOp> = puts.into_iter().map(|(k, v)| TxnOp::put(k, v)).chain(deletes.into_iter().map(TxnOp::delete)).collect();
        Op::new(async move {
            let r = task.ack_with(&ops).await;
            stop.cancel();
            value(r?)
        })
    }

    /// Gives the item back, not claimable before `delay` seconds if given.
    #[pyo3(signature = (delay=None))]
    fn nack(&self, delay: Option<f64>) -> Op {
        if let Err(e) = self.check() {
            return Op::fail(e);
        }
        let delay = match seconds("delay", delay) {
            Ok(d) => d,
            Err(e) => return Op::fail(e),
        };
        let (task, stop) = (self.task.clone(), self.stop.clone());
        Op::new(async move {
            let r = match delay {
                Some(d) => task.nack_after(d).await,
                None => task.nack().await,
            };
            stop.cancel();
            r?;
            value(())
        })
    }

    /// Reports on `bridge` under `id` when the claim is lost: the reason, or None once it
    /// ended otherwise.
    fn watch_lost(&self, bridge: &Bridge, id: u64) -> PyResult<()> {
        self.check().py()?;
        crate::lock::spawn_lost_watcher(self.task.lost(), self.stop.clone(), bridge, id);
        Ok(())
    }
}
