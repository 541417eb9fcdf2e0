//! The waiting half of an election observer and of a discovery: the core's stream behind an
//! async mutex (so that a `next` future can own it: block_on needs 'static) and the token that
//! their close sets.

use crate::ffi::{self, FfiResult};
use etcdlock::{CancellationToken, Error, ErrorKind, Follow};
use std::sync::Arc;
use std::time::Duration;

pub(crate) struct Followed<S> {
    slot: Arc<tokio::sync::Mutex<Option<S>>>,
    closed: CancellationToken,
    /// "the observer", "the discovery": for the errors.
    what: &'static str,
}

impl<S: Follow> Followed<S> {
    pub fn new(stream: S, what: &'static str) -> Self {
        Followed { slot: Arc::new(tokio::sync::Mutex::new(Some(stream))), closed: CancellationToken::new(), what }
    }

    /// The next state within `timeout` (None: no limit): `Timeout` when none came (nothing is
    /// lost: `next` is cancel-safe, a later call reports it), `Closed` once closed.
    pub fn next(&self, timeout: Option<Duration>) -> FfiResult<S::Item> {
        let what = self.what;
        let closed_err = move || Error::new(ErrorKind::Closed, format!("{what} was closed"));
        if self.closed.is_cancelled() {
            return Err(closed_err().into());
        }
        let (slot, closed) = (self.slot.clone(), self.closed.clone());
        ffi::block(async move {
            let next = async {
                let mut slot = slot.lock().await;
                match slot.as_mut() {
                    Some(s) => s.next().await,
                    None => Err(closed_err()),
                }
            };
            let limited = async {
                match timeout {
                    None => next.await,
                    Some(t) => tokio::time::timeout(t, next)
                        .await
                        .map_err(|_| Error::new(ErrorKind::Timeout, format!("{what}: no change before the timeout")))?,
                }
            };
            tokio::select! {
                biased;
                _ = closed.cancelled() => Err(closed_err()),
                r = limited => r,
            }
        })
    }

    /// Ends it: a `next` waiting on another thread returns `Closed`, and so does every later
    /// one. The stream (its watch) stops now, unless a `next` still holds it (then the free does).
    pub fn close(&self) {
        self.closed.cancel();
        if let Ok(mut slot) = self.slot.try_lock() {
            *slot = None;
        }
    }
}
