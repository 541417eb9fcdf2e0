//! The service registry: a registration kept by the core and its events, one-off reads of a
//! service's instances, and discoveries (one set per `next()`).

use crate::client::ClientInner;
use crate::errors::IntoPy;
use crate::follow::Following;
use crate::op::{value, Convert, Op, Outcome};
use etcdlock::{runtime, CancellationToken, Discovery, Error, ErrorKind, Instances, RegisterOptions, Registration, RegistrationEvent, RegistrationEvents};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Arc;

/// `(revision, [(name, value, lease, mod_revision), ...])`.
pub fn instances_value(set: Instances) -> Outcome {
    Ok(Box::new(move |py| Ok(instances_tuple(py, &set)?.unbind())))
}

fn instances_tuple<'py>(py: Python<'py>, set: &Instances) -> PyResult<Bound<'py, PyAny>> {
    let list: Vec<_> = set
        .instances
        .iter()
        .map(|i| (PyBytes::new(py, &i.name), PyBytes::new(py, &i.value), i.lease, i.mod_revision))
        .collect();
    Ok((set.revision, list).into_pyobject(py)?.into_any())
}

/// A `(kind, data)` pair, the shape `next()` methods return.
fn tagged(kind: &'static str, data: impl for<'py> IntoPyObject<'py> + Send + 'static) -> Outcome {
    Ok(Box::new(move |py: Python<'_>| Ok((kind, data).into_pyobject(py)?.into_any().unbind())))
}

fn end() -> Outcome {
    tagged("end", None::<()>)
}

/// Registers `<service>/<instance>`; the op's value is the `Registration`.
pub fn register(client: Arc<ClientInner>, service: Vec<u8>, instance: Vec<u8>, value: Vec<u8>, ttl: i64, replace: bool) -> Op {
    Op::new(async move {
        let c = client.get().await?;
        let reg = c.register_with(service, instance, value, RegisterOptions { ttl, replace }).await?;
        // Subscribed before anything can happen to it: no event is missed.
        let events = reg.events();
        let native = NativeRegistration {
            reg: Arc::new(reg),
            events: Arc::new(tokio::sync::Mutex::new(events)),
            closed: CancellationToken::new(),
            client,
        };
        Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, native)?.into_any())) as Convert)
    })
}

#[pyclass(frozen, name = "Registration", module = "etcdlock._native")]
pub struct NativeRegistration {
    reg: Arc<Registration>,
    /// Read by one events reader at a time.
    events: Arc<tokio::sync::Mutex<RegistrationEvents>>,
    /// Set by `close()` and drop: a waiting events reader returns the end.
    closed: CancellationToken,
    client: Arc<ClientInner>,
}

impl Drop for NativeRegistration {
    fn drop(&mut self) {
        // The core's Registration drop deregisters in the background; an events reader
        // holds only the events, and ends now.
        self.closed.cancel();
    }
}

#[pymethods]
impl NativeRegistration {
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.reg.key())
    }

    fn lease_id(&self) -> PyResult<Option<i64>> {
        runtime::check_pid(self.client.pid).py()?;
        Ok(self.reg.lease_id())
    }

    fn is_registered(&self) -> PyResult<bool> {
        runtime::check_pid(self.client.pid).py()?;
        Ok(self.reg.is_registered())
    }

    /// Replaces the value; the write's revision (`NotHeld` while registering again).
    fn update(&self, value: Vec<u8>) -> Op {
        let reg = self.reg.clone();
        Op::new(async move { crate::op::value(reg.update(value).await?) })
    }

    /// Deregisters (idempotent); a waiting events reader returns the end.
    fn close(&self) -> Op {
        self.closed.cancel();
        let reg = self.reg.clone();
        Op::new(async move {
            reg.close().await?;
            value(())
        })
    }

    /// The events from registration on, for one reader (a callback pump). It holds neither
    /// this handle nor the registration: dropping them ends it.
    fn events(&self) -> NativeRegistrationEvents {
        NativeRegistrationEvents { events: self.events.clone(), closed: self.closed.clone(), pid: self.client.pid }
    }
}

#[pyclass(frozen, name = "RegistrationEvents", module = "etcdlock._native")]
pub struct NativeRegistrationEvents {
    events: Arc<tokio::sync::Mutex<RegistrationEvents>>,
    closed: CancellationToken,
    pid: u32,
}

#[pymethods]
impl NativeRegistrationEvents {
    /// The next event: `("lost", reason)`, `("restored", lease)`, `("taken_over", None)`, or
    /// `("end", None)` once the registration is closed or gone.
    fn next(&self) -> Op {
        if let Err(e) = runtime::check_pid(self.pid) {
            return Op::fail(e);
        }
        let (events, closed, cancel) = (self.events.clone(), self.closed.clone(), CancellationToken::new());
        let token = cancel.clone();
        Op::cancellable(
            async move {
                let mut events = events.lock().await;
                // RegistrationEvents::next is cancel-safe (a broadcast receiver).
                let event = tokio::select! {
                    biased;
                    _ = token.cancelled() => return Err(Error::new(ErrorKind::Cancelled, "waiting for an event cancelled")),
                    _ = closed.cancelled() => return end(),
                    e = events.next() => e,
                };
                match event {
                    Some(RegistrationEvent::Lost(reason)) => tagged("lost", reason.as_str()),
                    Some(RegistrationEvent::Restored { lease }) => tagged("restored", lease),
                    Some(RegistrationEvent::TakenOver) => tagged("taken_over", None::<()>),
                    None => end(),
                }
            },
            cancel,
            None,
        )
    }
}

#[pyclass(frozen, name = "Discovery", module = "etcdlock._native")]
pub struct NativeDiscovery(Arc<Following<Discovery>>);

impl NativeDiscovery {
    pub fn new(client: Arc<ClientInner>, service: Vec<u8>) -> Self {
        NativeDiscovery(Following::new(client, move |c| c.discover(&service)))
    }
}

#[pymethods]
impl NativeDiscovery {
    /// The next set: `("set", (revision, instances))`, or `("end", None)` once closed (this
    /// discovery, or the client).
    fn next(&self) -> Op {
        self.0.next("set", |py, set| Ok(instances_tuple(py, &set)?.unbind()))
    }

    /// Ends the discovery (its watch too); a `next()` in progress returns the end.
    fn close(&self) {
        self.0.close();
    }
}

/// The value that makes an instance resolvable by etcd's Go gRPC resolver.
#[pyfunction]
pub fn grpc_endpoint<'py>(py: Python<'py>, addr: &str) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &etcdlock::grpc_endpoint(addr))
}

/// The address in such a value, or None.
#[pyfunction]
pub fn grpc_endpoint_addr(value: &[u8]) -> Option<String> {
    etcdlock::grpc_endpoint_addr(value)
}
