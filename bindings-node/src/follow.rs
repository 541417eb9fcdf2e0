//! The waiting half of an election observer and of a discovery: the core's stream, read by one
//! `next()` at a time, and the token that `close()` (or garbage collection) sets.

use etcdlock::{CancellationToken, ErrorKind, Follow};
use std::future::Future;
use std::sync::Arc;

pub struct Followed<S> {
    /// `None` once closed: the stream's watch is dropped then, not at garbage collection.
    slot: Arc<tokio::sync::Mutex<Option<S>>>,
    closed: CancellationToken,
}

impl<S: Follow> Followed<S> {
    pub fn new(stream: S) -> Self {
        Followed { slot: Arc::new(tokio::sync::Mutex::new(Some(stream))), closed: CancellationToken::new() }
    }

    /// The next state, or `None` once closed (this stream, or the client).
    pub fn next(&self) -> impl Future<Output = etcdlock::Result<Option<S::Item>>> + Send + 'static {
        let (slot, closed) = (self.slot.clone(), self.closed.clone());
        async move {
            if closed.is_cancelled() {
                return Ok(None);
            }
            let mut guard = slot.lock().await;
            let Some(stream) = guard.as_mut() else { return Ok(None) };
            // `next` is cancel-safe: what a call cut off by the close had read is not lost.
            let next = tokio::select! {
                biased;
                _ = closed.cancelled() => return Ok(None),
                n = stream.next() => n,
            };
            match next {
                Ok(item) => Ok(Some(item)),
                Err(e) if e.kind() == ErrorKind::Closed => Ok(None),
                Err(e) => Err(e),
            }
        }
    }

    /// Ends it: a pending `next()` resolves `None`, and the stream is dropped (its watch
    /// stopped) as soon as that `next()` lets go of it.
    pub fn close(&self) {
        self.closed.cancel();
        let slot = self.slot.clone();
        etcdlock::runtime::spawn(async move {
            drop(slot.lock().await.take());
        });
    }
}

impl<S> Drop for Followed<S> {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}
