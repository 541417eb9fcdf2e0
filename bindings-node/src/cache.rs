//! A prefix cache (core `Cache`): its reads are local and answered at once on the JS thread;
//! `waitFor` and the events wait on core's runtime. Closing the cache, or its client, ends both.

use crate::error::to_js;
use crate::lock::CancelToken;
use crate::promise;
use etcdlock::{Cache, CacheEvent, CacheEventKind, CacheEvents, CancellationToken, Error, ErrorKind, KeyValue};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One key of the copy.
#[napi(object)]
pub struct NativeCacheEntry {
    pub key: Buffer,
    pub value: Buffer,
    pub create_revision: BigInt,
    pub mod_revision: BigInt,
    pub version: BigInt,
    pub lease: BigInt,
}

/// The whole copy (in key order) and the revision it is at, read together.
#[napi(object)]
pub struct NativeCacheSnapshot {
    pub entries: Vec<NativeCacheEntry>,
    pub revision: BigInt,
}

/// A change of the copy: `type` is `'put'`, `'delete'` or `'resynced'`.
#[napi(object)]
pub struct NativeCacheEvent {
    pub r#type: String,
    pub key: Buffer,
    pub value: Buffer,
    /// Absent when the copy did not have the key.
    pub prev_value: Option<Buffer>,
    pub revision: BigInt,
}

fn entry(kv: KeyValue) -> NativeCacheEntry {
    NativeCacheEntry {
        key: kv.key.into(),
        value: kv.value.into(),
        create_revision: BigInt::from(kv.create_revision),
        mod_revision: BigInt::from(kv.mod_revision),
        version: BigInt::from(kv.version),
        lease: BigInt::from(kv.lease),
    }
}

fn event(e: CacheEvent) -> NativeCacheEvent {
    let kind = match e.kind {
        CacheEventKind::Put => "put",
        CacheEventKind::Delete => "delete",
        CacheEventKind::Resynced => "resynced",
    };
    NativeCacheEvent { r#type: kind.into(), key: e.key.into(), value: e.value.into(), prev_value: e.prev_value.map(Into::into), revision: BigInt::from(e.revision) }
}

fn closed_cache() -> Error {
    Error::new(ErrorKind::Closed, "the cache is closed")
}

#[napi]
pub struct NativeCache {
    client: etcdlock::Client,
    /// Cancelled by the client's `close()`: core's closing ends neither `wait_for` nor the events.
    client_closed: CancellationToken,
    prefix: Vec<u8>,
    /// None once closed: the copy stops following etcd when its last clone is dropped.
    cache: Mutex<Option<Cache>>,
    closed: CancellationToken,
}

impl Drop for NativeCache {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

impl NativeCache {
    pub fn new(client: etcdlock::Client, client_closed: CancellationToken, cache: Cache) -> Self {
        let prefix = cache.prefix().to_vec();
        NativeCache { client, client_closed, prefix, cache: Mutex::new(Some(cache)), closed: CancellationToken::new() }
    }

    /// The core cache; `CLOSED` once this cache or its client is closed.
    fn cache(&self) -> etcdlock::Result<Cache> {
        if self.client.is_closed() || self.client_closed.is_cancelled() {
            return Err(Error::new(ErrorKind::Closed, "the client is closed"));
        }
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).clone().ok_or_else(closed_cache)
    }

    fn with<T>(&self, env: &Env, f: impl FnOnce(&Cache) -> T) -> Result<T> {
        self.cache().map(|c| f(&c)).map_err(|e| to_js(env, e))
    }
}

#[napi]
impl NativeCache {
    #[napi]
    pub fn prefix(&self) -> Buffer {
        self.prefix.clone().into()
    }

    /// The value of `key` in the copy, or null.
    #[napi]
    pub fn get(&self, env: Env, key: &[u8]) -> Result<Option<Buffer>> {
        self.with(&env, |c| c.get(key).map(|kv| kv.value.into()))
    }

    #[napi]
    pub fn snapshot(&self, env: Env) -> Result<NativeCacheSnapshot> {
        let (map, revision) = self.with(&env, Cache::snapshot)?;
        Ok(NativeCacheSnapshot { entries: map.into_values().map(entry).collect(), revision: BigInt::from(revision) })
    }

    /// The revision the copy is at.
    #[napi]
    pub fn revision(&self, env: Env) -> Result<BigInt> {
        self.with(&env, |c| BigInt::from(c.revision()))
    }

    #[napi]
    pub fn size(&self, env: Env) -> Result<f64> {
        self.with(&env, |c| c.len() as f64)
    }

    /// Resolves once the copy is at `revision` or later; rejects `TIMEOUT` after `timeoutMs`
    /// (absent: no limit), `CANCELLED` when `cancel` fires, `CLOSED` if the cache or the client
    /// is closed meanwhile.
    #[napi]
    pub fn wait_for<'env>(&self, env: &'env Env, revision: BigInt, timeout_ms: Option<f64>, cancel: Option<&CancelToken>) -> Result<PromiseRaw<'env, ()>> {
        let cache = self.cache();
        let revision = revision.get_i64().0;
        let timeout = timeout_ms.map_or(Duration::MAX, crate::client::ms);
        let (closed, client_closed) = (self.closed.clone(), self.client_closed.clone());
        let cancel = cancel.map_or_else(CancellationToken::new, |c| c.token.clone());
        let fut = async move {
            let cache = cache?;
            tokio::select! {
                biased;
                _ = cancel.cancelled() => Err(Error::new(ErrorKind::Cancelled, "waiting for the cache cancelled")),
                _ = closed.cancelled() => Err(closed_cache()),
                _ = client_closed.cancelled() => Err(Error::new(ErrorKind::Closed, "the client is closed")),
                r = cache.wait_for(revision, timeout) => r,
            }
        };
        promise::spawn(env, fut, |_, ()| Ok(()))
    }

    /// The copy's changes from now on, for one reader.
    #[napi]
    pub fn events(&self, env: Env) -> Result<NativeCacheEvents> {
        let events = self.with(&env, Cache::events)?;
        Ok(NativeCacheEvents {
            events: Arc::new(tokio::sync::Mutex::new(Some(events))),
            closed: CancellationToken::new(),
            cache_closed: self.closed.clone(),
            client_closed: self.client_closed.clone(),
        })
    }

    /// Stops following etcd (idempotent): later calls are `CLOSED`, waits end.
    #[napi]
    pub fn close(&self) {
        self.closed.cancel();
        drop(self.cache.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}

#[napi]
pub struct NativeCacheEvents {
    /// None once ended; read by one `next()` at a time.
    events: Arc<tokio::sync::Mutex<Option<CacheEvents>>>,
    closed: CancellationToken,
    cache_closed: CancellationToken,
    client_closed: CancellationToken,
}

impl Drop for NativeCacheEvents {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

#[napi]
impl NativeCacheEvents {
    /// The next event, or null once ended (this reader, the cache or the client closed).
    #[napi]
    pub fn next<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Option<NativeCacheEvent>>> {
        let (events, closed, cache_closed, client_closed) = (self.events.clone(), self.closed.clone(), self.cache_closed.clone(), self.client_closed.clone());
        let fut = async move {
            let mut slot = events.lock().await;
            let Some(events) = slot.as_mut() else { return Ok(None) };
            // CacheEvents::next is cancel-safe (a broadcast receiver).
            let next = tokio::select! {
                biased;
                _ = closed.cancelled() => None,
                _ = cache_closed.cancelled() => None,
                _ = client_closed.cancelled() => None,
                e = events.next() => e,
            };
            if next.is_none() {
                *slot = None;
            }
            Ok(next)
        };
        promise::spawn(env, fut, |_, e: Option<CacheEvent>| Ok(e.map(event)))
    }

    /// Ends this reader; a pending `next()` resolves null.
    #[napi]
    pub fn close(&self) {
        self.closed.cancel();
    }
}
