//! The one background runtime per process that every client, and every binding, shares.
//!
//! It is created lazily on first use, so importing a binding starts no threads. Its threads are
//! named `etcdlock-rt-N` ([`DEFAULT_WORKER_THREADS`]: one worker; `ETCDLOCK_WORKER_THREADS`
//! overrides). A forked child cannot use its parent's runtime (the threads did not survive the
//! fork), so the runtime is keyed by PID: a child gets a fresh one on first use, and objects
//! created by the parent refuse to work in the child (see [`check_pid`]). [`shutdown`] closes
//! every client and stops the runtime, for bindings to call at interpreter or process exit.

mod cleanups;
pub(crate) mod clock;
#[doc(hidden)]
pub mod pause;
#[doc(hidden)]
pub use clock::{rate_for_tests, suspend_for_tests};
#[doc(hidden)]
pub use pause::pause_at_for_tests;
pub mod log;
#[doc(hidden)]
pub mod linger;
#[doc(hidden)]
pub mod spin;

use crate::error::{Error, ErrorKind, Result};
use crate::runtime::spin::Spin;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::runtime::{Handle, Runtime};

/// One worker. A call's own work on the runtime is a few microseconds of protocol, so one
/// worker is far from busy at the rates etcd serves; a second one costs more than it gives:
/// tokio's scheduler wakes the idle worker to look for work on nearly every call that comes
/// from outside the runtime (a binding's thread), and the wake-up, the search and the park
/// again cost every binding time and CPU on each call (bench/README.md "The runtime's worker
/// count" has the measurements).
pub const DEFAULT_WORKER_THREADS: usize = 1;

struct Slot {
    pid: u32,
    runtime: Runtime,
    cleanups: Arc<cleanups::Cleanups>,
}

static SLOT: Mutex<Option<Slot>> = Mutex::new(None);

/// What [`shutdown`] needs of each thing it must close (a client): the runtime knows nothing
/// else of it, so that the lowest layer imports none above it.
pub(crate) trait Closing: Send + Sync {
    /// Marks it closed, so that its pending and future calls fail, without waiting.
    fn cancel(&self);
    /// Frees what it holds on the server (its leases), bounded by its own request timeout.
    fn release(self: Arc<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// Everything registered in this process (weakly), so that `shutdown` can close it.
static CLOSING: Mutex<Vec<Weak<dyn Closing>>> = Mutex::new(Vec::new());

/// The process id, cached: `getpid` is a system call, and every request checks it. A
/// `pthread_atfork` child handler refreshes it in a forked child.
static PID: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// Set on the runtime's own worker threads, so that tasks spawned there skip `SLOT`.
    static RUNTIME_HANDLE: std::cell::RefCell<Option<Handle>> = const { std::cell::RefCell::new(None) };
}

/// The process's current id.
pub fn current_pid() -> u32 {
    match PID.load(Ordering::Relaxed) {
        0 => {
            static AT_FORK: std::sync::Once = std::sync::Once::new();
            AT_FORK.call_once(|| {
                extern "C" fn refresh() {
                    PID.store(std::process::id(), Ordering::Relaxed);
                }
                // SAFETY: registers a handler that only makes a system call and an atomic store,
                // both async-signal-safe, as a forked child's handler must be.
                unsafe { libc::pthread_atfork(None, None, Some(refresh)) };
            });
            let pid = std::process::id();
            PID.store(pid, Ordering::Relaxed);
            pid
        }
        pid => pid,
    }
}

fn build() -> Runtime {
    let workers = std::env::var("ETCDLOCK_WORKER_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(DEFAULT_WORKER_THREADS);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name_fn(|| {
            use std::sync::atomic::AtomicUsize;
            static N: AtomicUsize = AtomicUsize::new(0);
            format!("etcdlock-rt-{}", N.fetch_add(1, Ordering::Relaxed))
        })
        .on_thread_start(|| {
            block_sigpipe();
            RUNTIME_HANDLE.with(|h| *h.borrow_mut() = Some(Handle::current()))
        })
        .enable_all()
        .build()
        .expect("cannot start the etcdlock runtime")
}

/// Blocks SIGPIPE on the calling (runtime) thread. A write to a connection the member closed
/// raises it, and its default action ends the process: C programs rarely ignore it as Rust,
/// Python and Node do. Blocked, the write fails with EPIPE and the connection is replaced.
fn block_sigpipe() {
    #[cfg(unix)]
    // SAFETY: sigemptyset/sigaddset initialise the set we own; pthread_sigmask changes only
    // this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// A handle on the shared runtime of this process, creating it on first call.
pub fn handle() -> Handle {
    let pid = current_pid();
    let mut slot = SLOT.lock().unwrap_or_else(|p| p.into_inner());
    match slot.as_ref() {
        Some(s) if s.pid == pid => return s.runtime.handle().clone(),
        Some(_) => {
            // Inherited through fork: its worker threads do not exist here, and dropping it
            // would wait for them forever. Leak it.
            std::mem::forget(slot.take());
            CLOSING.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
        None => {}
    }
    let runtime = build();
    let handle = runtime.handle().clone();
    *slot = Some(Slot { pid, runtime, cleanups: Default::default() });
    handle
}

/// How long a thread waiting for the runtime's reply (a blocking binding call, Node's event
/// loop) may keep its CPU before it sleeps, for every later call of this process: the caller
/// spin. Off by default (`ETCDLOCK_SPIN_US` sets it in microseconds); with it, the runtime's
/// workers also linger for a binding's next call. It saves the wake-up of a sleeping thread when
/// a local etcd answers quickly, for CPU: worth it on a host with idle cores, not on a busy one
/// (see bench/README.md, "Caller spin"). A blocking caller spends it only around the time a reply
/// is due, only while recent replies came within it, and at most half the CPUs' worth of callers
/// spin at once. `InvalidArgument` (nothing changes) above 10 ms.
///
/// ```
/// use std::time::Duration;
/// etcdlock::runtime::set_caller_spin(Duration::from_micros(1000))?; // for a host with idle cores
/// assert_eq!(etcdlock::runtime::caller_spin(), Duration::from_millis(1));
/// assert!(etcdlock::runtime::set_caller_spin(Duration::from_secs(1)).is_err());
/// # Ok::<(), etcdlock::Error>(())
/// ```
pub fn set_caller_spin(window: Duration) -> Result<()> {
    spin::set_window(window)
}

/// The caller spin in effect ([`set_caller_spin`]).
pub fn caller_spin() -> Duration {
    spin::window()
}

/// Whether the shared runtime is running in this process (bindings promise not to start
/// threads on import; tests check it).
pub fn runtime_started() -> bool {
    matches!(SLOT.lock().unwrap_or_else(|p| p.into_inner()).as_ref(), Some(s) if s.pid == current_pid())
}

/// Spawns a background task on the shared runtime.
pub fn spawn<F>(fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match RUNTIME_HANDLE.with(|h| h.borrow().clone()) {
        Some(h) => h.spawn(fut),
        None => handle().spawn(fut),
    }
}

/// Spawns background cleanup only if the runtime is running: a destructor that runs after
/// [`shutdown`] must not start a new runtime (shutdown already closed every client). A
/// shutdown waits for the cleanups in flight, within its timeout.
pub(crate) fn spawn_cleanup<F>(fut: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let slot = SLOT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = slot.as_ref().filter(|s| s.pid == current_pid()) {
        s.runtime.spawn(s.cleanups.track(fut));
    }
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
    Blocking::start(fut)?.wait(None).map(|v| v.expect("waited without a time limit"))
}

/// A future running on the shared runtime, which a blocking caller waits for (in slices, if it
/// must also look at something else meanwhile, such as Python's signal handlers).
pub struct Blocking<T> {
    task: tokio::task::JoinHandle<T>,
}

impl<T: Send + 'static> Blocking<T> {
    /// Starts `fut` on the shared runtime. [`ErrorKind::WrongContext`] on a runtime thread.
    pub fn start<F: Future<Output = T> + Send + 'static>(fut: F) -> Result<Blocking<T>> {
        check_not_in_runtime()?;
        Ok(Blocking { task: spawn(fut) })
    }

    /// Waits until the future is done (`Some`), or at most `limit` (`None` then). `Closed`
    /// if the runtime shut down under it, `Internal` if it panicked.
    pub fn wait(&mut self, limit: Option<Duration>) -> Result<Option<T>> {
        struct Unpark(std::thread::Thread);
        impl std::task::Wake for Unpark {
            fn wake(self: std::sync::Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
        let mut cx = std::task::Context::from_waker(&waker);
        let start = std::time::Instant::now();
        // Sleep until shortly before the reply is due, yield the CPU in a loop until it comes
        // (see `spin`), and sleep again if it does not come within the window.
        let mut spin = Spin::start(limit);
        if let Some(nap) = spin.as_ref().map(Spin::nap).filter(|n| !n.is_zero()) {
            std::thread::park_timeout(nap);
        }
        let result = loop {
            if let std::task::Poll::Ready(r) = std::pin::Pin::new(&mut self.task).poll(&mut cx) {
                break Some(r);
            }
            if spin.as_ref().is_some_and(|s| !s.expired()) {
                std::thread::yield_now();
                continue;
            }
            spin = None;
            let waited = start.elapsed();
            match limit {
                None => std::thread::park(),
                Some(l) if waited < l => std::thread::park_timeout(l - waited),
                Some(_) => break None,
            }
        };
        crate::runtime::spin::record(start.elapsed());
        match result {
            None => Ok(None),
            Some(Ok(v)) => Ok(Some(v)),
            Some(Err(e)) if e.is_panic() => Err(Error::new(ErrorKind::Internal, format!("etcdlock task panicked: {e}"))),
            Some(Err(_)) => Err(Error::new(ErrorKind::Closed, "the etcdlock runtime shut down")),
        }
    }
}

/// Errors with [`ErrorKind::WrongContext`] on a thread that runs async tasks (where blocking
/// would deadlock or starve the runtime).
pub fn check_not_in_runtime() -> Result<()> {
    if Handle::try_current().is_ok() {
        return Err(Error::new(
            ErrorKind::WrongContext,
            "blocking etcdlock call made from inside an async runtime thread (e.g. a callback); use the async API or another thread",
        ));
    }
    Ok(())
}

pub(crate) fn register(target: Weak<dyn Closing>) {
    let mut targets = CLOSING.lock().unwrap_or_else(|p| p.into_inner());
    targets.retain(|c| c.strong_count() > 0);
    targets.push(target);
}

/// Closes every client of this process (revoking their leases, bounded by `timeout`) and
/// stops the runtime. For exit hooks: a later call starts a fresh runtime. Must not be called
/// from a runtime thread.
pub fn shutdown(timeout: Duration) -> Result<()> {
    check_not_in_runtime()?;
    if !runtime_started() {
        return Ok(());
    }
    let cleanups = SLOT.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|s| s.cleanups.clone());
    let targets: Vec<_> = CLOSING.lock().unwrap_or_else(|p| p.into_inner()).drain(..).filter_map(|w| w.upgrade()).collect();
    // Cancel every client before revoking anything: revoking one client's lease frees its
    // locks, which would wake waiters of another client only to cut them off a moment later.
    for target in &targets {
        target.cancel();
    }
    let closing = async move {
        let revokes: Vec<_> = targets.into_iter().map(|target| spawn(target.release())).collect();
        for r in revokes {
            let _ = r.await;
        }
        // Then the cleanups started before or during the close (a lease dropped just before
        // exit): the runtime's shutdown would drop them.
        if let Some(cleanups) = cleanups {
            cleanups.idle().await;
        }
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    spawn(async move {
        let _ = tokio::time::timeout(timeout, closing).await;
        let _ = tx.send(());
    });
    let _ = rx.recv_timeout(timeout.saturating_add(Duration::from_millis(100)));
    let slot = SLOT.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(s) = slot {
        s.runtime.shutdown_timeout(timeout);
    }
    Ok(())
}
