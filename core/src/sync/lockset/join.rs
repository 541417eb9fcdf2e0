//! Waiting on every member at once (the core has no `futures` dependency for two loops).

use crate::error::Result;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// All of `futures`, polled together: their outputs in order, or the first error (the rest
/// are dropped, which ends their waits).
pub(super) async fn try_join_all<T, F: Future<Output = Result<T>>>(futures: impl IntoIterator<Item = F>) -> Result<Vec<T>> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut done: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (f, out) in futures.iter_mut().zip(done.iter_mut()) {
            if out.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(Ok(v)) => *out = Some(v),
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => {}
                }
            }
        }
        if done.iter().all(Option::is_some) {
            Poll::Ready(Ok(done.iter_mut().map(|o| o.take().expect("all done")).collect()))
        } else {
            Poll::Pending
        }
    })
    .await
}

/// The output of whichever of `futures` ends first.
pub(super) async fn first<T, F: Future<Output = T>>(futures: impl IntoIterator<Item = F>) -> T {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    std::future::poll_fn(|cx| futures.iter_mut().find_map(|f| match f.as_mut().poll(cx) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }).map_or(Poll::Pending, Poll::Ready))
    .await
}
