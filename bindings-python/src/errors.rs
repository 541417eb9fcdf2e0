//! Core errors → Python exceptions. The classes live in `etcdlock/_errors.py` (some need two
//! bases, e.g. `LockTimeout(Error, TimeoutError)`), so they are imported, not created here.

use etcdlock::{Error, ErrorKind};
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::PyErr;

mod base {
    pyo3::import_exception!(etcdlock._errors, Error);
}
use base::Error as PyError;
pyo3::import_exception!(etcdlock._errors, LockTimeout);
pyo3::import_exception!(etcdlock._errors, Timeout);
pyo3::import_exception!(etcdlock._errors, LockLost);
pyo3::import_exception!(etcdlock._errors, NotHeld);
pyo3::import_exception!(etcdlock._errors, Unavailable);
pyo3::import_exception!(etcdlock._errors, Compacted);
pyo3::import_exception!(etcdlock._errors, Closed);
pyo3::import_exception!(etcdlock._errors, AuthError);
pyo3::import_exception!(etcdlock._errors, WrongContextError);
pyo3::import_exception!(etcdlock._errors, WouldBlock);

pub fn to_py(e: Error) -> PyErr {
    let msg = e.message().to_string();
    match e.kind() {
        ErrorKind::InvalidArgument => PyValueError::new_err(msg),
        ErrorKind::Unavailable => Unavailable::new_err(msg),
        ErrorKind::Timeout => Timeout::new_err(msg),
        ErrorKind::LockTimeout => LockTimeout::new_err(msg),
        ErrorKind::LockLost => LockLost::new_err(msg),
        ErrorKind::NotHeld => NotHeld::new_err(msg),
        ErrorKind::Compacted => Compacted::new_err((msg, e.compact_revision())),
        // Only our own cancel tokens produce it, and only the sync API's Ctrl-C path cancels
        // them outside asyncio (whose wrappers re-raise their own CancelledError).
        ErrorKind::Cancelled => PyKeyboardInterrupt::new_err(msg),
        ErrorKind::Closed => Closed::new_err(msg),
        ErrorKind::Auth => AuthError::new_err(msg),
        ErrorKind::WrongContext => WrongContextError::new_err(msg),
        ErrorKind::WouldBlock => WouldBlock::new_err(msg),
        _ => PyError::new_err(format!("{}: {msg}", e.kind().code())),
    }
}

/// `?`-friendly conversion for the many sync checks.
pub trait IntoPy<T> {
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}

pub fn closed() -> Error {
    Error::new(ErrorKind::Closed, "the client is closed")
}
