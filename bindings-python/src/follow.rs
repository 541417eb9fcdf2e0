//! The waiting half of an election observer and of a discovery: the core's stream, made on the
//! first `next()` (connecting the client if needed), read by one `next()` at a time.

use crate::client::ClientInner;
use crate::op::{Convert, Op};
use etcdlock::{runtime, CancellationToken, Client, Error, ErrorKind, Follow, Result};
use pyo3::prelude::*;
use std::sync::Arc;

pub struct Following<S> {
    client: Arc<ClientInner>,
    make: Box<dyn Fn(&Client) -> Result<S> + Send + Sync>,
    stream: tokio::sync::Mutex<Option<S>>,
    closed: CancellationToken,
}

impl<S: Follow> Following<S> {
    pub fn new(client: Arc<ClientInner>, make: impl Fn(&Client) -> Result<S> + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Following { client, make: Box::new(make), stream: Default::default(), closed: CancellationToken::new() })
    }

    /// An op whose value is `(kind, convert(item))` for the next state, or `("end", None)` once
    /// closed (this stream, or the client). Cancellable: the stream's `next` is cancel-safe.
    pub fn next(self: &Arc<Self>, kind: &'static str, convert: fn(Python<'_>, S::Item) -> PyResult<Py<PyAny>>) -> Op {
        if let Err(e) = runtime::check_pid(self.client.pid) {
            return Op::fail(e);
        }
        let (this, cancel) = (self.clone(), CancellationToken::new());
        let token = cancel.clone();
        let end = || Ok(Box::new(|py: Python<'_>| Ok(("end", py.None()).into_pyobject(py)?.into_any().unbind())) as Convert);
        Op::cancellable(
            async move {
                if this.closed.is_cancelled() {
                    return end();
                }
                let mut slot = this.stream.lock().await;
                if slot.is_none() {
                    let client = this.client.get().await?;
                    *slot = Some((this.make)(&client)?);
                }
                let stream = slot.as_mut().expect("made above");
                let next = tokio::select! {
                    biased;
                    _ = token.cancelled() => return Err(Error::new(ErrorKind::Cancelled, "cancelled while waiting for the next state")),
                    _ = this.closed.cancelled() => return end(),
                    n = stream.next() => n,
                };
                match next {
                    Ok(item) => Ok(Box::new(move |py: Python<'_>| Ok((kind, convert(py, item)?).into_pyobject(py)?.into_any().unbind())) as Convert),
                    Err(e) if e.kind() == ErrorKind::Closed => end(),
                    Err(e) => Err(e),
                }
            },
            cancel,
            None,
        )
    }

    /// Ends it; a `next()` in progress returns the end.
    pub fn close(&self) {
        self.closed.cancel();
        if let Ok(mut slot) = self.stream.try_lock() {
            *slot = None;
        }
    }
}
