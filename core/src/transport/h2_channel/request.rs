//! A unary request on its way: what is kept to send it again, and its answer to come.

use super::conn;
use bytes::Bytes;
use http::uri::{Authority, Scheme};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tonic::Status;

/// A unary request as the caller made it: sent once, or twice (see `STALL`).
pub(super) struct Unary {
    pub head: http::request::Parts,
    pub path: http::uri::PathAndQuery,
    pub body: Bytes,
}

impl Unary {
    /// The request's head for one member: its address, the caller's headers, and the time
    /// left to the deadline, measured now (after any wait for a connection).
    pub fn head(&self, scheme: Scheme, authority: Authority) -> Result<http::Request<()>, Status> {
        let uri = http::Uri::builder()
            .scheme(scheme)
            .authority(authority)
            .path_and_query(self.path.clone())
            .build()
            .map_err(|e| Status::internal(e.to_string()))?;
        let mut head = http::Request::builder()
            .method(self.head.method.clone())
            .version(self.head.version)
            .uri(uri)
            .body(())
            .map_err(|e| Status::internal(e.to_string()))?;
        *head.headers_mut() = self.head.headers.clone();
        if let Some(t) = conn::grpc_timeout() {
            head.headers_mut().insert("grpc-timeout", t);
        }
        Ok(head)
    }
}

/// A request's answer to come, counted in its connection's `Conn::waiting` until then.
pub(super) struct Pending {
    response: h2::client::ResponseFuture,
    _waiting: Waiting,
}

impl Pending {
    pub fn new(response: h2::client::ResponseFuture, waiting: &Arc<AtomicUsize>) -> Pending {
        Pending { response, _waiting: Waiting::new(waiting) }
    }
}

impl Future for Pending {
    type Output = Result<http::Response<h2::RecvStream>, h2::Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.response).poll(cx)
    }
}

/// The first of `a` and `b` to succeed; when both fail, `a`'s error.
pub(super) async fn first_ok<T, E>(a: impl Future<Output = Result<T, E>>, b: impl Future<Output = Result<T, E>>) -> Result<T, E> {
    tokio::pin!(a, b);
    tokio::select! {
        r = &mut a => match r {
            Ok(v) => Ok(v),
            Err(e) => b.await.map_err(|_| e),
        },
        r = &mut b => match r {
            Ok(v) => Ok(v),
            Err(_) => a.await,
        },
    }
}

/// Counts a request in `Conn::waiting` while it lives.
struct Waiting(Arc<AtomicUsize>);

impl Waiting {
    fn new(count: &Arc<AtomicUsize>) -> Waiting {
        count.fetch_add(1, Ordering::Relaxed);
        Waiting(count.clone())
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
