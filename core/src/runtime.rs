//! The one background runtime per process that every client, and every binding, shares.
//!
//! It is created lazily on first use, so importing a binding starts no threads. Its threads are
//! named `etcdlock-rt-*`. A forked child cannot use its parent's runtime (the threads did not
//! survive the fork), so the runtime is keyed by PID: a child gets a fresh one on first use and
//! objects created by the parent refuse to work in the child (see [`check_pid`]).

use crate::error::{Error, ErrorKind, Result};
use std::future::Future;
use std::sync::Mutex;
use tokio::runtime::{Handle, Runtime};

/// Threads of the shared runtime. Two is enough: the work is network-bound and the machine
/// class we target has two cores.
const WORKER_THREADS: usize = 2;

static RUNTIME: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);

/// The process's current id (cheap: a syscall, no allocation).
pub fn current_pid() -> u32 {
    std::process::id()
}

/// The shared runtime of this process, created on first call.
pub fn runtime() -> &'static Runtime {
    let pid = current_pid();
    let mut slot = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((owner, rt)) = *slot {
        if owner == pid {
            return rt;
        }
        // Inherited through fork: its worker threads do not exist here. Dropping it would try
        // to join them, so it is deliberately leaked.
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name_fn(|| {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            format!("etcdlock-rt-{}", N.fetch_add(1, Ordering::Relaxed))
        })
        .enable_all()
        .build()
        .expect("cannot start the etcdlock runtime");
    let rt: &'static Runtime = Box::leak(Box::new(rt));
    *slot = Some((pid, rt));
    rt
}

/// Whether the shared runtime has been started in this process (for tests and bindings that
/// promise not to start threads on import).
pub fn runtime_started() -> bool {
    matches!(*RUNTIME.lock().unwrap_or_else(|p| p.into_inner()), Some((pid, _)) if pid == current_pid())
}

/// Spawns a background task on the shared runtime.
pub fn spawn<F>(fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    runtime().spawn(fut)
}

/// Errors with [`ErrorKind::WrongContext`] when an object created by process `owner` is used
/// in another one (a forked child).
pub fn check_pid(owner: u32) -> Result<()> {
    if owner == current_pid() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::WrongContext,
            "this object was created before fork() in the parent process; create a new client in the child",
        ))
    }
}

/// Runs `fut` to completion on the shared runtime, blocking the calling thread.
///
/// For blocking binding entry points. Errors with [`ErrorKind::WrongContext`] instead of
/// deadlocking when called from a thread that is already inside a tokio runtime (a library
/// callback, or a user's async code).
pub fn block_on<F>(fut: F) -> Result<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if Handle::try_current().is_ok() {
        return Err(Error::new(
            ErrorKind::WrongContext,
            "blocking etcdlock call made from inside an async runtime thread (e.g. a callback); use the async API or another thread",
        ));
    }
    let handle = runtime().spawn(fut);
    match futures_block_on(handle) {
        Ok(v) => Ok(v),
        Err(e) if e.is_cancelled() => Err(Error::new(ErrorKind::Cancelled, "operation cancelled")),
        Err(e) => Err(Error::new(ErrorKind::Internal, format!("background task panicked: {e}"))),
    }
}

/// Waits for a spawned task from a plain thread. The task runs on the runtime's workers, so
/// this thread only parks; it never drives the runtime itself.
fn futures_block_on<T: Send + 'static>(
    handle: tokio::task::JoinHandle<T>,
) -> std::result::Result<T, tokio::task::JoinError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = tx.send(handle.await);
    });
    rx.recv().unwrap_or_else(|_| panic!("etcdlock runtime shut down"))
}
