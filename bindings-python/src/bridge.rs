//! Hands outcomes from the core runtime to Python without calling into Python from a runtime
//! thread: tasks push `(id, outcome)` onto a queue and write one byte to a pipe; Python
//! watches the pipe's read end (an asyncio loop with `add_reader`, or the sync callback
//! thread with `select`) and calls `drain()`, which builds the Python values with the GIL.
//!
//! So runtime threads never wait for the GIL, and tasks hold no Python objects.

use crate::op::{runtime_gone, Op, Outcome};
use etcdlock::runtime;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[pyclass(frozen, module = "etcdlock._native")]
pub struct Bridge {
    shared: Arc<Shared>,
}

struct Shared {
    queue: Mutex<Vec<(u64, Outcome)>>,
    /// A wake-up byte is in the pipe (or about to be): later pushes need not write another.
    notified: AtomicBool,
    read: OwnedFd,
    write: OwnedFd,
}

impl Shared {
    fn push(&self, id: u64, outcome: Outcome) {
        self.queue.lock().unwrap().push((id, outcome));
        if !self.notified.swap(true, Ordering::AcqRel) {
            self.wake();
        }
    }

    fn wake(&self) {
        let byte = 1u8;
        // SAFETY: writes one byte from a valid buffer to an fd we own. A full pipe (EAGAIN)
        // already guarantees a wake-up, so the result is ignored.
        unsafe { libc::write(self.write.as_raw_fd(), (&byte as *const u8).cast(), 1) };
    }
}

/// Where one task's outcome goes. Dropped without sending (the runtime shut down under the
/// task), it reports `Closed`, so no awaiting Python future hangs.
pub struct Sink {
    shared: Option<Arc<Shared>>,
    id: u64,
}

impl Sink {
    pub fn send(mut self, outcome: Outcome) {
        if let Some(s) = self.shared.take() {
            s.push(self.id, outcome);
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some(s) = self.shared.take() {
            s.push(self.id, Err(runtime_gone()));
        }
    }
}

impl Bridge {
    pub fn sink(&self, id: u64) -> Sink {
        Sink { shared: Some(self.shared.clone()), id }
    }

    /// Makes sinks into this bridge without holding the Python object (for the log sink).
    pub fn sink_factory(&self) -> impl Fn(u64) -> Sink + Send + Sync + 'static {
        let shared = self.shared.clone();
        move |id| Sink { shared: Some(shared.clone()), id }
    }
}

#[pymethods]
impl Bridge {
    #[new]
    fn new() -> PyResult<Bridge> {
        let (read, write) = nonblocking_pipe()?;
        Ok(Bridge { shared: Arc::new(Shared { queue: Mutex::new(Vec::new()), notified: AtomicBool::new(false), read, write }) })
    }

    /// The pipe's read end: readable when `drain()` has something.
    #[getter]
    fn fd(&self) -> i32 {
        self.shared.read.as_raw_fd()
    }

    /// Starts `(op, id)` pairs with one wake-up of the runtime: an event loop submits what
    /// one of its iterations produced together, instead of waking a runtime thread per call.
    fn submit_many(&self, items: Vec<(PyRef<'_, Op>, u64)>) -> PyResult<()> {
        let mut jobs = Vec::with_capacity(items.len());
        for (op, id) in items {
            jobs.push((op.take()?, self.sink(id)));
        }
        runtime::spawn(async move {
            for (fut, sink) in jobs {
                tokio::spawn(async move { sink.send(fut.await) });
            }
        });
        Ok(())
    }

    /// Wakes the reader with nothing queued (to stop the callback thread).
    fn wake(&self) {
        self.shared.wake();
    }

    /// Empties the pipe and the queue: a list of `(id, exception or None, value)`.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let mut buf = [0u8; 256];
        // SAFETY: reads into a valid buffer from an fd we own; stops at EAGAIN or EOF.
        while unsafe { libc::read(self.shared.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
        // Cleared after emptying the pipe and before taking the queue: a push that still saw
        // it set is in the queue we take; any later push writes a new byte.
        self.shared.notified.store(false, Ordering::Release);
        let items = std::mem::take(&mut *self.shared.queue.lock().unwrap());
        let mut out = Vec::with_capacity(items.len());
        for (id, outcome) in items {
            let converted = outcome.map_err(crate::errors::to_py).and_then(|convert| convert(py));
            let tuple = match converted {
                Ok(v) => (id, py.None(), v).into_pyobject(py)?,
                Err(e) => (id, e.into_value(py).into_any(), py.None()).into_pyobject(py)?,
            };
            out.push(tuple);
        }
        Ok(out)
    }
}

/// A pipe whose two ends are non-blocking and close-on-exec: pipe2 where the platform has it
/// (Linux, the BSDs), pipe + fcntl elsewhere (macOS).
fn nonblocking_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "netbsd", target_os = "openbsd"))]
    // SAFETY: pipe2 fills the two-element array on success.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "netbsd", target_os = "openbsd")))]
    // SAFETY: pipe fills the two-element array on success.
    let rc = unsafe { libc::pipe(fds.as_mut_ptr()) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "netbsd", target_os = "openbsd")))]
    for fd in [&read, &write] {
        // SAFETY: fcntl on an fd we own; F_SETFL/F_SETFD take an int flag argument.
        unsafe {
            let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            if fl < 0
                || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK) != 0
                || libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok((read, write))
}
