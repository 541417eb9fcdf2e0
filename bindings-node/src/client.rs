//! The client: connect, KV, leases, locks and watches, each one core call.

use crate::lease::NativeLease;
use crate::lock::{CancelToken, NativeLock};
use crate::promise;
use crate::watch::NativeWatch;
use etcdlock::{CancellationToken, ClientOptions, ErrorKind, LockOptions, WatchOptions};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// A lock name's core `Mutex` stays cached this long after its last acquire, so that a loop
/// of lock/release reuses the handle's lease (two round trips per cycle, as in Rust) instead
/// of granting and revoking one every time.
const MUTEX_IDLE: Duration = Duration::from_secs(10);

/// Bound on close() waiting for cancelled acquires to clean up (core's default request timeout).
const CANCEL_BOUND: Duration = Duration::from_secs(5);

type MutexCache = Arc<Mutex<HashMap<(Vec<u8>, i64), (Arc<etcdlock::Mutex>, Instant)>>>;

#[napi]
pub struct NativeClient {
    client: etcdlock::Client,
    mutexes: MutexCache,
    acquiring: Arc<Acquiring>,
}

/// Acquires in flight, so that close() can cancel them first.
///
/// Workaround for a core race: when `Client::close` cancels a waiting `lock_with`, its cleanup
/// may run `Lease::revoke` concurrently with close's `Keeper::revoke_all`; the revoke takes the
/// lease out of the keeper, then fails with CLOSED, so nobody deletes the queue key and other
/// waiters wait for its TTL. Cancelling the acquires while the client is still open lets core's
/// own cleanup delete their keys; they then report CLOSED, as core would.
#[derive(Default)]
struct Acquiring {
    tokens: Mutex<HashMap<u64, CancellationToken>>,
    next: AtomicU64,
    closing: AtomicBool,
    idle: tokio::sync::Notify,
}

impl Acquiring {
    fn start(&self, token: CancellationToken) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if self.closing.load(Ordering::Acquire) {
            token.cancel();
        }
        self.tokens.lock().unwrap_or_else(|p| p.into_inner()).insert(id, token);
        id
    }

    fn done(&self, id: u64) {
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        tokens.remove(&id);
        if tokens.is_empty() {
            self.idle.notify_waiters();
        }
    }

    /// Cancels every acquire in flight and waits (bounded) until their cleanup is done.
    async fn cancel_all(&self, bound: Duration) {
        self.closing.store(true, Ordering::Release);
        let _ = tokio::time::timeout(bound, async {
            loop {
                let idle = self.idle.notified();
                {
                    let tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
                    if tokens.is_empty() {
                        return;
                    }
                    tokens.values().for_each(CancellationToken::cancel);
                }
                idle.await;
            }
        })
        .await;
    }
}

/// Connection options; the wrapper validates them and fills the defaults.
#[napi(object)]
pub struct ConnectOptions {
    pub endpoints: Vec<String>,
    pub connect_timeout_ms: f64,
    pub request_timeout_ms: f64,
    pub user: Option<String>,
    pub password: Option<String>,
    pub max_in_flight: Option<u32>,
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(if v.is_finite() && v > 0.0 { v / 1000.0 } else { 0.0 })
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn connect<'env>(env: &'env Env, opts: ConnectOptions) -> Result<PromiseRaw<'env, NativeClient>> {
        let mut copts = ClientOptions {
            connect_timeout: ms(opts.connect_timeout_ms),
            request_timeout: ms(opts.request_timeout_ms),
            ..Default::default()
        };
        if let Some(user) = opts.user {
            copts.user = Some((user, opts.password.unwrap_or_default()));
        }
        if let Some(n) = opts.max_in_flight {
            copts.max_in_flight = n as usize;
        }
        let endpoints = opts.endpoints;
        promise::spawn(env, async move { etcdlock::Client::connect(endpoints, copts).await }, |_, client| {
            let mutexes: MutexCache = Default::default();
            sweep(&client, &mutexes);
            Ok(NativeClient { client, mutexes, acquiring: Default::default() })
        })
    }

    /// Acquires `name`: `timeoutMs` absent = wait forever, 0 = try once.
    #[napi]
    pub fn lock<'env>(
        &self,
        env: &'env Env,
        name: &[u8],
        ttl: i64,
        timeout_ms: Option<f64>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, NativeLock>> {
        let mutex = self.mutex(name, ttl);
        // A child of the caller's token: cancelled by the AbortSignal or by close().
        let token = cancel.map_or_else(CancellationToken::new, |c| c.token.child_token());
        let caller = cancel.map(|c| c.token.clone());
        let acquiring = self.acquiring.clone();
        let id = acquiring.start(token.clone());
        let opts = LockOptions { timeout: timeout_ms.map(ms), cancel: Some(token) };
        let fut = async move {
            let r = match mutex {
                Ok(m) => m.lock_with(opts).await,
                Err(e) => Err(e),
            };
            acquiring.done(id);
            match r {
                // Cancelled by close(), not by the caller: report it as core's close would.
                Err(e) if e.kind() == ErrorKind::Cancelled && !caller.is_some_and(|c| c.is_cancelled()) => {
                    Err(etcdlock::Error::new(ErrorKind::Closed, "the client is closed"))
                }
                r => r,
            }
        };
        promise::spawn(env, fut, |_, guard| Ok(NativeLock::new(guard)))
    }

    #[napi]
    pub fn lease<'env>(&self, env: &'env Env, ttl: i64) -> Result<PromiseRaw<'env, NativeLease>> {
        let client = self.client.clone();
        promise::spawn(env, async move { client.lease(ttl).await }, |_, l| Ok(NativeLease::new(l)))
    }

    #[napi]
    pub fn put<'env>(&self, env: &'env Env, key: &[u8], value: &[u8], lease: Option<&NativeLease>) -> Result<PromiseRaw<'env, BigInt>> {
        let (client, key, value) = (self.client.clone(), key.to_vec(), value.to_vec());
        let lease = lease.map(|l| l.lease.clone());
        promise::spawn(env, async move { client.put(&key, &value, lease.as_ref()).await }, |_, rev| Ok(BigInt::from(rev)))
    }

    #[napi]
    pub fn get<'env>(&self, env: &'env Env, key: &[u8]) -> Result<PromiseRaw<'env, Option<Buffer>>> {
        let (client, key) = (self.client.clone(), key.to_vec());
        promise::spawn(env, async move { client.get(&key).await }, |_, kv| Ok(kv.map(|kv| kv.value.into())))
    }

    #[napi]
    pub fn delete<'env>(&self, env: &'env Env, key: &[u8]) -> Result<PromiseRaw<'env, bool>> {
        let (client, key) = (self.client.clone(), key.to_vec());
        promise::spawn(env, async move { client.delete(&key).await }, |_, existed| Ok(existed))
    }

    /// Resolves once etcd confirmed the watch.
    #[napi]
    pub fn watch<'env>(
        &self,
        env: &'env Env,
        key: &[u8],
        prefix: bool,
        start_revision: Option<BigInt>,
        prev_kv: bool,
    ) -> Result<PromiseRaw<'env, NativeWatch>> {
        let (client, key) = (self.client.clone(), key.to_vec());
        let opts = WatchOptions { prefix, start_revision: start_revision.map(|b| b.get_i64().0), prev_kv };
        promise::spawn(env, async move { client.watch(key, opts).await }, |_, w| Ok(NativeWatch::new(w)))
    }

    /// Idempotent. Pending calls reject with `CLOSED`; leases are revoked (bounded).
    #[napi]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let (client, mutexes, acquiring) = (self.client.clone(), self.mutexes.clone(), self.acquiring.clone());
        promise::spawn(
            env,
            async move {
                acquiring.cancel_all(CANCEL_BOUND).await;
                client.close().await;
                mutexes.lock().unwrap_or_else(|p| p.into_inner()).clear();
                Ok(())
            },
            |_, ()| Ok(()),
        )
    }

    #[napi]
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

impl NativeClient {
    /// The cached core handle for (name, ttl), created (and validated by core) on first use.
    fn mutex(&self, name: &[u8], ttl: i64) -> etcdlock::Result<Arc<etcdlock::Mutex>> {
        let mut cache = self.mutexes.lock().unwrap_or_else(|p| p.into_inner());
        let key = (name.to_vec(), ttl);
        if let Some((m, used)) = cache.get_mut(&key) {
            *used = Instant::now();
            return Ok(m.clone());
        }
        let m = Arc::new(self.client.mutex(name.to_vec(), ttl)?);
        cache.insert(key, (m.clone(), Instant::now()));
        Ok(m)
    }
}

/// Drops cached handles idle for MUTEX_IDLE (their lease is then revoked by core once no held
/// lock uses it). Ends with the client.
fn sweep(client: &etcdlock::Client, mutexes: &MutexCache) {
    let (client, weak) = (client.clone(), Arc::downgrade(mutexes));
    etcdlock::runtime::spawn(async move {
        while !client.is_closed() {
            tokio::time::sleep(MUTEX_IDLE / 2).await;
            let Some(cache) = weak.upgrade() else { return };
            let now = Instant::now();
            cache
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|_, (m, used)| Arc::strong_count(m) > 1 || now.duration_since(*used) < MUTEX_IDLE);
        }
    });
}
