//! One call into the core, run either blocking (sync API) or handed to an asyncio loop
//! (async API). Native methods build an `Op`; the Python wrapper picks the calling convention.
//!
//! Either way the future runs on the core's one runtime, and no Python object goes into it:
//! the outcome is a Rust closure that builds the Python value later, on a Python thread.

use crate::bridge::Bridge;
use crate::errors::to_py;
use etcdlock::{runtime, CancellationToken, Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Builds the Python result; runs with the GIL, on the thread that receives the outcome.
pub type Convert = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;
pub type Outcome = Result<Convert, Error>;
pub type BoxFut = Pin<Box<dyn Future<Output = Outcome> + Send>>;
/// Undoes a success that arrived after the caller gave up (Ctrl-C): e.g. releases the lock.
pub type Undo = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

/// The process whose exit hook shut the runtime down (0: none).
pub static SHUT_DOWN: AtomicU32 = AtomicU32::new(0);

/// How often a blocked main thread wakes up to let Python run signal handlers (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// A Python value for an outcome.
pub fn value<T>(v: T) -> Outcome
where
    T: for<'py> IntoPyObject<'py> + Send + 'static,
{
    Ok(Box::new(move |py| v.into_py_any(py)))
}

/// A call not yet started. Single use.
#[pyclass(frozen, module = "etcdlock._native")]
pub struct Op {
    fut: Mutex<Option<BoxFut>>,
    cancel: Option<CancellationToken>,
    undo: Mutex<Option<Undo>>,
}

impl Op {
    pub fn new(fut: impl Future<Output = Outcome> + Send + 'static) -> Op {
        Op { fut: Mutex::new(Some(Box::pin(fut))), cancel: None, undo: Mutex::new(None) }
    }

    /// An op that stops early when `cancel` fires; `undo` reverts a success nobody will see.
    pub fn cancellable(fut: impl Future<Output = Outcome> + Send + 'static, cancel: CancellationToken, undo: Option<Undo>) -> Op {
        Op { fut: Mutex::new(Some(Box::pin(fut))), cancel: Some(cancel), undo: Mutex::new(undo) }
    }

    /// An op that fails at once (checks that need no I/O still report through the op, so
    /// both calling conventions raise them the same way).
    pub fn fail(e: Error) -> Op {
        Op::new(async move { Err(e) })
    }

    pub(crate) fn take(&self) -> PyResult<BoxFut> {
        if SHUT_DOWN.load(Ordering::Acquire) == runtime::current_pid() {
            // After the exit hook: fail instead of starting a fresh runtime while Python exits.
            return Err(to_py(runtime_gone()));
        }
        self.fut.lock().unwrap().take().ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("operation already started"))
    }
}

#[pymethods]
impl Op {
    /// Runs the call, blocking this thread with the GIL released.
    ///
    /// The future runs on the core runtime (`runtime::Blocking`, which spins briefly before it
    /// sleeps: a local etcd answers within that). The main thread wakes every 20 ms to let
    /// Python run signal handlers; when one raises (Ctrl-C), a cancellable call is cancelled and
    /// its cleanup awaited before the exception propagates. Other threads get no signals and
    /// sleep until the call is done.
    fn wait(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let mut task = runtime::Blocking::start(self.take()?).map_err(to_py)?;
        let slice = is_main_thread().then_some(SIGNAL_POLL);
        loop {
            if let Some(outcome) = py.detach(|| exiting_parks(task.wait(slice))).map_err(to_py)? {
                return outcome.map_err(to_py).and_then(|convert| convert(py));
            }
            if let Err(interrupt) = py.check_signals() {
                if let Some(cancel) = &self.cancel {
                    cancel.cancel();
                    let outcome = py.detach(|| exiting_parks(task.wait(None)));
                    let undo = self.undo.lock().unwrap().take();
                    if let (Ok(Some(Ok(_))), Some(undo)) = (outcome, undo) {
                        let _ = py.detach(|| runtime::block_on(undo()));
                    }
                }
                return Err(interrupt);
            }
        }
    }

    /// Runs the call on the core runtime; its outcome is queued on `bridge` under `id`.
    fn submit(&self, bridge: &Bridge, id: u64) -> PyResult<()> {
        let fut = self.take()?;
        let sink = bridge.sink(id);
        runtime::spawn(async move { sink.send(fut.await) });
        Ok(())
    }

    /// Cancels a cancellable call (a no-op for others); its outcome still arrives.
    fn cancel(&self) {
        if let Some(c) = &self.cancel {
            c.cancel();
        }
    }

    /// For the async API: the undo step of a success that arrived after `cancel()`.
    fn undo(&self) -> Option<Op> {
        let undo = self.undo.lock().unwrap().take()?;
        Some(Op::new(async move {
            undo().await;
            value(())
        }))
    }
}

/// Returns `r`, unless the exit hook has run (`SHUT_DOWN`): then this thread never returns to
/// Python. Python is finalizing by the time a call the hook's close woke would take the GIL
/// back, and CPython (3.13 and older) ends a thread that asks for the GIL then with
/// `pthread_exit`, whose forced unwind through this call's Rust frames crashed the process
/// (SIGSEGV at exit in about one run in five of a script that leaves a daemon thread waiting
/// for a lock: tests/test_process.py, RT-EXIT-001). Only daemon threads can be waiting here then
/// (Python joined the others before its exit hooks); the process ends under them.
fn exiting_parks<T>(r: T) -> T {
    if SHUT_DOWN.load(Ordering::Acquire) == runtime::current_pid() {
        loop {
            std::thread::park();
        }
    }
    r
}

/// Whether this is the process's main thread (asked once per thread). Linux: the main
/// thread's thread id is the process id; macOS and the BSDs: pthread_main_np.
fn is_main_thread() -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn ask() -> bool {
        // SAFETY: gettid takes no arguments and cannot fail.
        (unsafe { libc::syscall(libc::SYS_gettid) }) as u32 == std::process::id()
    }
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd", target_os = "openbsd"))]
    fn ask() -> bool {
        // SAFETY: no arguments; returns 1 on the main thread.
        unsafe { libc::pthread_main_np() == 1 }
    }
    thread_local! {
        static MAIN: bool = ask();
    }
    MAIN.with(|m| *m)
}

pub fn runtime_gone() -> Error {
    Error::new(ErrorKind::Closed, "the etcdlock runtime shut down")
}
