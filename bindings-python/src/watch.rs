//! A watch: started once (confirmed by etcd), then read one event per `next()`.

use crate::client::ClientInner;
use crate::op::{value, Convert, Op};
use etcdlock::{runtime, CancellationToken, Error, ErrorKind, EventType, Result, Watch, WatchEvent, WatchOptions};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::VecDeque;
use std::sync::Arc;

/// Events taken from the core per crossing into the runtime; the rest wait in `ready`.
const MAX_BATCH: usize = 256;

struct Shared {
    client: Arc<ClientInner>,
    key: Vec<u8>,
    opts: WatchOptions,
    /// The core watch; None before start and after close. Locked by one `next()` at a time.
    watch: tokio::sync::Mutex<Option<Watch>>,
    started: std::sync::atomic::AtomicBool,
    /// Events read from the core (a batch at a time) but not yet handed to Python, one per
    /// `next()`; a `next()` whose caller gave up (Ctrl-C) leaves its event here too.
    ready: std::sync::Mutex<VecDeque<WatchEvent>>,
    closed: CancellationToken,
}

impl Shared {
    /// Starts the core watch unless it already ran; `slot` is the locked watch.
    async fn ensure_started(&self, slot: &mut Option<Watch>) -> Result<()> {
        use std::sync::atomic::Ordering;
        if self.started.load(Ordering::Acquire) {
            return Ok(());
        }
        let client = self.client.get().await?;
        *slot = Some(client.watch(self.key.clone(), self.opts.clone()).await?);
        self.started.store(true, Ordering::Release);
        Ok(())
    }

    /// A result that pops the oldest ready event when Python takes it.
    fn pop_ready(self: Arc<Self>) -> Convert {
        Box::new(move |py| {
            let Some(e) = self.ready.lock().unwrap().pop_front() else {
                return Ok(py.None());
            };
            let kind = match e.event_type {
                EventType::Put => "put",
                EventType::Delete => "delete",
            };
            let t = (kind, PyBytes::new(py, &e.kv.key), PyBytes::new(py, &e.kv.value), e.kv.mod_revision);
            Ok(t.into_pyobject(py)?.into_any().unbind())
        })
    }
}

#[pyclass(frozen, name = "Watch", module = "etcdlock._native")]
pub struct NativeWatch {
    shared: Arc<Shared>,
}

impl NativeWatch {
    /// Checks the arguments at once (ValueError), as the core does; nothing is sent yet.
    pub fn new(client: Arc<ClientInner>, key: Vec<u8>, prefix: bool, start_revision: Option<i64>) -> PyResult<Self> {
        let opts = WatchOptions { prefix, start_revision, prev_kv: false };
        crate::errors::IntoPy::py(opts.check(&key))?;
        Ok(NativeWatch {
            shared: Arc::new(Shared {
                client,
                key,
                opts,
                watch: Default::default(),
                started: Default::default(),
                ready: Default::default(),
                closed: CancellationToken::new(),
            }),
        })
    }
}

#[pymethods]
impl NativeWatch {
    /// Creates the watch on the server and waits for its confirmation (idempotent).
    fn start(&self) -> Op {
        let shared = self.shared.clone();
        Op::new(async move {
            if shared.closed.is_cancelled() {
                return value(());
            }
            let mut slot = shared.watch.lock().await;
            shared.ensure_started(&mut slot).await?;
            value(())
        })
    }

    /// The next event as `(type, key, value, revision)`, or None once closed.
    fn next(&self) -> Op {
        if let Err(e) = runtime::check_pid(self.shared.client.pid) {
            return Op::fail(e);
        }
        let (shared, cancel) = (self.shared.clone(), CancellationToken::new());
        let token = cancel.clone();
        Op::cancellable(
            async move {
                if !shared.ready.lock().unwrap().is_empty() {
                    return Ok(shared.pop_ready());
                }
                if shared.closed.is_cancelled() {
                    return value(None::<()>);
                }
                let mut slot = shared.watch.lock().await;
                tokio::select! {
                    biased;
                    _ = token.cancelled() => return Err(Error::new(ErrorKind::Cancelled, "watch read cancelled")),
                    _ = shared.closed.cancelled() => {}
                    r = shared.ensure_started(&mut slot) => r?,
                }
                let Some(watch) = slot.as_mut() else { return value(None::<()>) };
                // next_batch is cancel-safe: events are only taken out when they are returned.
                let next = tokio::select! {
                    biased;
                    _ = token.cancelled() => return Err(Error::new(ErrorKind::Cancelled, "watch read cancelled")),
                    _ = shared.closed.cancelled() => None,
                    n = watch.next_batch(MAX_BATCH) => n,
                };
                match next {
                    Some(Ok(events)) => {
                        shared.ready.lock().unwrap().extend(events);
                        Ok(shared.clone().pop_ready())
                    }
                    Some(Err(e)) => Err(e),
                    None => {
                        *slot = None; // closed: cancel it on the server now
                        value(None::<()>)
                    }
                }
            },
            cancel,
            None,
        )
    }

    /// Stops the watch; a `next()` in progress returns None.
    fn close(&self) {
        self.shared.closed.cancel();
        if let Ok(mut slot) = self.shared.watch.try_lock() {
            *slot = None;
        }
    }

    fn check(&self) -> PyResult<()> {
        crate::errors::IntoPy::py(runtime::check_pid(self.shared.client.pid))
    }
}
