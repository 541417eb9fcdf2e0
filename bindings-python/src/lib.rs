//! `etcdlock._native`: the PyO3 layer under the `etcdlock` Python package. It converts
//! types, errors and calling conventions; every behaviour lives in the core crate.
//!
//! Each call that talks to etcd returns an [`op::Op`], which the Python wrapper either waits
//! on (sync API, GIL released, Ctrl-C aware) or submits to an asyncio loop's [`bridge::Bridge`].

mod bridge;
mod cache;
mod client;
mod election;
mod errors;
mod follow;
mod lease;
mod lock;
mod lockset;
mod log;
mod metrics;
mod once;
mod op;
mod pool;
mod registry;
mod tasks;
mod watch;

use pyo3::prelude::*;
use std::time::Duration;

/// Whether the shared runtime runs in this process (import must not start it).
#[pyfunction]
fn _runtime_started() -> bool {
    etcdlock::runtime::runtime_started()
}

/// Closes every client of this process and stops the runtime, within about `timeout`
/// seconds. For the interpreter's exit hook.
#[pyfunction]
fn _shutdown(py: Python<'_>, timeout: f64) -> PyResult<()> {
    let timeout = Duration::try_from_secs_f64(timeout).unwrap_or(Duration::from_secs(2));
    op::SHUT_DOWN.store(etcdlock::runtime::current_pid(), std::sync::atomic::Ordering::Release);
    errors::IntoPy::py(py.detach(|| etcdlock::runtime::shutdown(timeout)))
}

/// Sets the caller spin, in seconds, for every later call of this process
/// (`etcdlock.set_caller_spin`).
#[pyfunction]
fn _set_caller_spin(seconds: f64) -> PyResult<()> {
    let window = Duration::try_from_secs_f64(seconds).map_err(|_| {
        errors::to_py(etcdlock::Error::new(etcdlock::ErrorKind::InvalidArgument, format!("the caller spin must be a number of seconds >= 0, not {seconds}")))
    })?;
    errors::IntoPy::py(etcdlock::runtime::set_caller_spin(window))
}

/// The caller spin in effect, in seconds.
#[pyfunction]
fn _caller_spin() -> f64 {
    etcdlock::runtime::caller_spin().as_secs_f64()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::NativeClient>()?;
    m.add_class::<lock::NativeLock>()?;
    m.add_class::<lockset::NativeLockSet>()?;
    m.add_class::<lease::NativeLease>()?;
    m.add_class::<watch::NativeWatch>()?;
    m.add_class::<cache::NativeCache>()?;
    m.add_class::<cache::NativeCacheEvents>()?;
    m.add_class::<election::NativeObserver>()?;
    m.add_class::<registry::NativeRegistration>()?;
    m.add_class::<registry::NativeRegistrationEvents>()?;
    m.add_class::<registry::NativeDiscovery>()?;
    m.add_class::<tasks::NativeTaskQueue>()?;
    m.add_class::<tasks::NativeTask>()?;
    m.add_class::<once::NativeOnceSlot>()?;
    m.add_class::<pool::NativePool>()?;
    m.add_class::<pool::NativePoolHolding>()?;
    m.add_class::<op::Op>()?;
    m.add_class::<bridge::Bridge>()?;
    m.add_function(wrap_pyfunction!(_runtime_started, m)?)?;
    m.add_function(wrap_pyfunction!(_shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(_set_caller_spin, m)?)?;
    m.add_function(wrap_pyfunction!(_caller_spin, m)?)?;
    m.add_function(wrap_pyfunction!(registry::grpc_endpoint, m)?)?;
    m.add_function(wrap_pyfunction!(registry::grpc_endpoint_addr, m)?)?;
    m.add_function(wrap_pyfunction!(log::_log_start, m)?)?;
    m.add_function(wrap_pyfunction!(log::_log_level, m)?)?;
    m.add("MAX_LOCK_SET", etcdlock::MAX_LOCK_SET)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
