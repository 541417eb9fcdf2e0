//! A resilient watch (core `Watch`), read in batches by the wrapper's async iterator.

use crate::promise;
use etcdlock::{CancellationToken, EventType, WatchEvent};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::sync::Arc;

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

#[napi]
pub struct NativeWatch {
    watch: Arc<tokio::sync::Mutex<etcdlock::Watch>>,
    closed: CancellationToken,
}

impl NativeWatch {
    pub fn new(watch: etcdlock::Watch) -> Self {
        NativeWatch { watch: Arc::new(tokio::sync::Mutex::new(watch)), closed: CancellationToken::new() }
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
        let (watch, closed) = (self.watch.clone(), self.closed.clone());
        let fut = async move {
            let mut w = watch.lock().await;
            let batch = tokio::select! {
                biased;
                _ = closed.cancelled() => None,
                b = w.next_batch(MAX_BATCH) => b,
            };
            batch.transpose()
        };
        promise::spawn(env, fut, |_, batch: Option<Vec<WatchEvent>>| Ok(batch.map(|b| b.into_iter().map(to_js).collect())))
    }

    /// Stops the watch; a pending `next()` resolves `null`.
    #[napi]
    pub fn close(&self) {
        self.closed.cancel();
        let watch = self.watch.clone();
        etcdlock::runtime::spawn(async move { watch.lock().await.close() });
    }
}
