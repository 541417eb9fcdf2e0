//! A resilient watch (core `Watch`), read in batches by the wrapper's async iterator.

use crate::promise;
use etcdlock::{CancellationToken, EventType, WatchEvent};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// Events already received are handed over together, up to this many per promise.
const MAX_BATCH: usize = 256;

#[napi(object)]
pub struct NativeEvent {
    /// `'put'` or `'delete'`.
    pub r#type: String,
    pub key: Buffer,
    pub value: Buffer,
    pub revision: BigInt,
    pub create_revision: BigInt,
    pub version: BigInt,
    pub lease: BigInt,
    pub prev_value: Option<Buffer>,
}

fn to_js(e: WatchEvent) -> NativeEvent {
    let revision = e.revision();
    NativeEvent {
        r#type: match e.event_type {
            EventType::Put => "put",
            EventType::Delete => "delete",
        }
        .to_string(),
        key: e.kv.key.into(),
        value: e.kv.value.into(),
        revision: BigInt::from(revision),
        create_revision: BigInt::from(e.kv.create_revision),
        version: BigInt::from(e.kv.version),
        lease: BigInt::from(e.kv.lease),
        prev_value: e.prev_kv.map(|kv| kv.value.into()),
    }
}

struct State {
    watch: etcdlock::Watch,
    /// An error met while draining a batch, reported by the following call.
    error: Option<etcdlock::Error>,
}

#[napi]
pub struct NativeWatch {
    state: Arc<tokio::sync::Mutex<State>>,
    closed: CancellationToken,
}

impl NativeWatch {
    pub fn new(watch: etcdlock::Watch) -> Self {
        NativeWatch { state: Arc::new(tokio::sync::Mutex::new(State { watch, error: None })), closed: CancellationToken::new() }
    }
}

impl Drop for NativeWatch {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

#[napi]
impl NativeWatch {
    /// The next events (at least one), or `null` once closed. Rejects on a fatal error
    /// (e.g. `COMPACTED`), after which the watch is finished.
    #[napi]
    pub fn next<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Option<Vec<NativeEvent>>>> {
        let (state, closed) = (self.state.clone(), self.closed.clone());
        let fut = async move {
            let mut guard = state.lock().await;
            let state = &mut *guard;
            if let Some(e) = state.error.take() {
                return Err(e);
            }
            let w = &mut state.watch;
            let first = tokio::select! {
                biased;
                _ = closed.cancelled() => None,
                e = w.next() => e,
            };
            let Some(first) = first else { return Ok(None) };
            let mut batch = vec![first?];
            // Take whatever else is already buffered without waiting (core's next() is
            // cancel-safe: events are queued before they are returned).
            while batch.len() < MAX_BATCH {
                let mut cx = Context::from_waker(Waker::noop());
                match pin!(w.next()).poll(&mut cx) {
                    Poll::Ready(Some(Ok(e))) => batch.push(e),
                    Poll::Ready(Some(Err(e))) => {
                        state.error = Some(e);
                        break;
                    }
                    // The end is reported by the next call.
                    _ => break,
                }
            }
            Ok(Some(batch))
        };
        promise::spawn(env, fut, |_, batch: Option<Vec<WatchEvent>>| Ok(batch.map(|b| b.into_iter().map(to_js).collect())))
    }

    /// Stops the watch; a pending `next()` resolves `null`.
    #[napi]
    pub fn close(&self) {
        self.closed.cancel();
        let state = self.state.clone();
        etcdlock::runtime::spawn(async move { state.lock().await.watch.close() });
    }
}
