//! The client: connect, KV, leases, locks and watches, each one core call.

use crate::election::{NativeLeader, NativeObserver};
use crate::lease::NativeLease;
use crate::lock::{CancelToken, NativeLock};
use crate::once::NativeOnceSlot;
use crate::pool::NativePool;
use crate::promise;
use crate::registry::{NativeDiscovery, NativeInstances, NativeRegistration};
use crate::tasks::{NativeTask, NativeTaskQueue};
use crate::watch::NativeWatch;
use etcdlock::{CancellationToken, ClientOptions, LockOptions, Op, Pem, RegisterOptions, TlsOptions, WatchOptions};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::time::Duration;

#[napi]
pub struct NativeClient {
    client: etcdlock::Client,
    /// Cancelled by `close()`: ends what waits on a cache (`cache.rs`), which core's closing
    /// does not.
    closed: CancellationToken,
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
    pub tls: Option<ConnectTls>,
    /// Resolved already (`resolveClientName`), so that it is known before the connection.
    pub name: Option<String>,
}

/// TLS settings: PEM text (the wrapper turns strings into bytes), checked by core at connect.
#[napi(object)]
pub struct ConnectTls {
    pub ca: Option<Buffer>,
    pub cert: Option<Buffer>,
    pub key: Option<Buffer>,
    pub server_name: Option<String>,
}

impl From<ConnectTls> for TlsOptions {
    fn from(t: ConnectTls) -> TlsOptions {
        let pem = |b: Option<Buffer>| b.map(|b| Pem::Bytes(b.to_vec()));
        TlsOptions { ca: pem(t.ca), cert: pem(t.cert), key: pem(t.key), server_name: t.server_name }
    }
}

/// Milliseconds from JS: non-positive or NaN is zero, and too many for a `Duration` (Infinity
/// included) is the longest one, which core takes as "wait forever" for a lock and rejects as
/// a client timeout.
pub(crate) fn ms(v: f64) -> Duration {
    if v.is_nan() || v <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(v / 1000.0).unwrap_or(Duration::MAX)
}

/// An acquire's options: `timeoutMs` absent = wait forever, 0 = try once.
fn lock_options(timeout_ms: Option<f64>, cancel: Option<&CancelToken>, value: Option<&[u8]>) -> LockOptions {
    LockOptions { timeout: timeout_ms.map(ms), cancel: cancel.map(|c| c.token.clone()), value: value.map(<[u8]>::to_vec).unwrap_or_default() }
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
        copts.tls = opts.tls.map(TlsOptions::from);
        copts.name = opts.name;
        let endpoints = opts.endpoints;
        promise::spawn(env, async move { etcdlock::Client::connect(endpoints, copts).await }, |_, client| {
            Ok(NativeClient { client, closed: CancellationToken::new() })
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
        value: Option<&[u8]>,
    ) -> Result<PromiseRaw<'env, NativeLock>> {
        let mutex = self.client.mutex(name.to_vec(), ttl);
        let opts = lock_options(timeout_ms, cancel, value);
        promise::spawn(env, async move { mutex?.lock_with(opts).await }, |_, guard| Ok(NativeLock::new(guard)))
    }

    /// Takes `count` (absent: one) of `permits` of the semaphore `name` (core checks 1 to
    /// MAX_PERMITS, `count` 1 to `permits`, and that the participants agree): options as `lock`'s.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn semaphore<'env>(
        &self,
        env: &'env Env,
        name: &[u8],
        permits: u32,
        ttl: i64,
        timeout_ms: Option<f64>,
        cancel: Option<&CancelToken>,
        value: Option<&[u8]>,
        count: Option<u32>,
    ) -> Result<PromiseRaw<'env, NativeLock>> {
        let sem = self.client.semaphore(name.to_vec(), permits, ttl).and_then(|s| match count {
            Some(c) => s.with_count(c),
            None => Ok(s),
        });
        let opts = lock_options(timeout_ms, cancel, value);
        promise::spawn(env, async move { sem?.acquire_with(opts).await }, |_, guard| Ok(NativeLock::new(guard)))
    }

    /// Takes the lock set `members` (1 to 64 names, each exclusive, read, write or one permit):
    /// options as `lock`'s; core checks the members and TTL.
    #[napi]
    pub fn lock_set<'env>(
        &self,
        env: &'env Env,
        members: Vec<crate::lockset::NativeSetMember>,
        ttl: i64,
        timeout_ms: Option<f64>,
        cancel: Option<&CancelToken>,
        value: Option<&[u8]>,
    ) -> Result<PromiseRaw<'env, crate::lockset::NativeLockSet>> {
        crate::lockset::acquire(env, &self.client, members, ttl, lock_options(timeout_ms, cancel, value))
    }

    /// Reads (or with `write`, writes) the read-write lock `name`: options as `lock`'s.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn rwlock<'env>(
        &self,
        env: &'env Env,
        name: &[u8],
        ttl: i64,
        write: bool,
        timeout_ms: Option<f64>,
        cancel: Option<&CancelToken>,
        value: Option<&[u8]>,
    ) -> Result<PromiseRaw<'env, NativeLock>> {
        let rw = self.client.rwlock(name.to_vec(), ttl);
        let opts = lock_options(timeout_ms, cancel, value);
        let fut = async move {
            let rw = rw?;
            if write {
                rw.write_with(opts).await
            } else {
                rw.read_with(opts).await
            }
        };
        promise::spawn(env, fut, |_, guard| Ok(NativeLock::new(guard)))
    }

    /// Campaigns in the election `name`, proposing `value`; resolves once leading. The
    /// leadership is a lock whose `setValue` proclaims and whose `release` resigns.
    #[napi]
    pub fn campaign<'env>(
        &self,
        env: &'env Env,
        name: &[u8],
        ttl: i64,
        value: &[u8],
        timeout_ms: Option<f64>,
        cancel: Option<&CancelToken>,
    ) -> Result<PromiseRaw<'env, NativeLock>> {
        let election = self.client.election(name.to_vec(), ttl);
        let opts = lock_options(timeout_ms, cancel, Some(value));
        let fut = async move { election?.campaign_with(opts).await.map(etcdlock::Leadership::into_guard) };
        promise::spawn(env, fut, |_, guard| Ok(NativeLock::new(guard)))
    }

    /// The leader of the election `name` now, or null.
    #[napi]
    pub fn leader<'env>(&self, env: &'env Env, name: &[u8], ttl: i64) -> Result<PromiseRaw<'env, Option<NativeLeader>>> {
        let election = self.client.election(name.to_vec(), ttl);
        promise::spawn(env, async move { election?.leader().await }, |_, l| Ok(l.map(crate::election::to_js)))
    }

    /// An observer of the election `name` (sends nothing until its first `next()`).
    #[napi]
    pub fn observe(&self, env: Env, name: &[u8], ttl: i64) -> Result<NativeObserver> {
        let election = self.client.election(name.to_vec(), ttl).map_err(|e| crate::error::to_js(&env, e))?;
        Ok(NativeObserver::new(election.observe()))
    }

    /// A handle on the task queue `name` (sends nothing; core checks the name and options).
    #[napi]
    pub fn queue(&self, env: Env, name: &[u8], ttl: i64, max_attempts: u32, max_processing_ms: Option<f64>) -> Result<NativeTaskQueue> {
        let opts = crate::tasks::queue_options(ttl, max_attempts, max_processing_ms);
        let q = opts.and_then(|o| self.client.queue(name.to_vec(), o)).map_err(|e| crate::error::to_js(&env, e))?;
        Ok(NativeTaskQueue::new(q))
    }

    /// A handle on the pool `name` (sends nothing; core checks the name and options): `slots`
    /// or `size` slots named `0` to `size - 1`, `reuseDelayMs` how long a dead holder's slot
    /// rests.
    #[napi]
    pub fn pool(&self, env: Env, name: &[u8], slots: Option<Vec<String>>, size: Option<u32>, ttl: i64, reuse_delay_ms: f64) -> Result<NativePool> {
        let opts = crate::pool::options(name, slots, size, ttl, reuse_delay_ms);
        let p = opts.and_then(|o| self.client.pool(name.to_vec(), o)).map_err(|e| crate::error::to_js(&env, e))?;
        Ok(NativePool::new(p))
    }

    /// Claims the period's slot of the once-per-period job `name` (core `Client::once`): the
    /// slot, or null when the period's job is done or another trigger runs it. `everyMs` and
    /// `atMs` (absent: now) in milliseconds; core checks the name and options.
    #[napi]
    pub fn once<'env>(&self, env: &'env Env, name: &[u8], every_ms: f64, ttl: i64, at_ms: Option<f64>, keep_periods: u32) -> Result<PromiseRaw<'env, Option<NativeOnceSlot>>> {
        crate::once::once(env, &self.client, name, every_ms, ttl, at_ms, keep_periods)
    }

    /// The queue of lock `name` as etcd has it now.
    #[napi]
    pub fn inspect<'env>(&self, env: &'env Env, name: &[u8]) -> Result<PromiseRaw<'env, LockState>> {
        let (client, name) = (self.client.clone(), name.to_vec());
        promise::spawn(env, async move { client.inspect(&name).await }, |_, s| {
            let entry = |e: etcdlock::QueueEntry| QueueEntry {
                key: e.key.into(),
                fencing_token: BigInt::from(e.fencing_token),
                lease: BigInt::from(e.lease),
                ttl: e.ttl,
                value: e.value.into(),
                mode: e.mode,
            };
            Ok(LockState {
                holder: s.holder.map(entry),
                holders: s.holders.into_iter().map(entry).collect(),
                waiters: s.waiters.into_iter().map(entry).collect(),
                revision: BigInt::from(s.revision),
            })
        })
    }

    /// The slots of the pool `name` as etcd has them now, or null if no pool is defined there.
    #[napi]
    pub fn inspect_pool<'env>(&self, env: &'env Env, name: &[u8]) -> Result<PromiseRaw<'env, Option<Vec<crate::pool::NativeSlotInfo>>>> {
        let (client, name) = (self.client.clone(), name.to_vec());
        promise::spawn(env, async move { client.inspect_pool(name).await }, |_, s| Ok(s.map(|v| v.into_iter().map(crate::pool::slot_info).collect())))
    }

    /// Registers `instance` of `service` with `value` on a lease of its own (core
    /// `register_with`); resolves once registered. The registration's events are subscribed
    /// here, so none is missed before the wrapper listens.
    #[napi]
    pub fn register<'env>(
        &self,
        env: &'env Env,
        service: &[u8],
        instance: &[u8],
        value: &[u8],
        ttl: i64,
        replace: bool,
    ) -> Result<PromiseRaw<'env, NativeRegistration>> {
        let (client, service, instance, value) = (self.client.clone(), service.to_vec(), instance.to_vec(), value.to_vec());
        let fut = async move {
            crate::registry::check_service(&service)?;
            crate::registry::check_value(&value)?;
            let reg = client.register_with(service, instance, value, RegisterOptions { ttl, replace }).await?;
            let events = reg.events();
            Ok((reg, events))
        };
        promise::spawn(env, fut, |_, (reg, events)| Ok(NativeRegistration::new(reg, events)))
    }

    /// The instances of `service` now (one read).
    #[napi]
    pub fn instances<'env>(&self, env: &'env Env, service: &[u8]) -> Result<PromiseRaw<'env, NativeInstances>> {
        let (client, service) = (self.client.clone(), service.to_vec());
        promise::spawn(env, async move { crate::registry::check_service(&service)?; client.instances(service).await }, |_, set| Ok(crate::registry::instances_to_js(set)))
    }

    /// A discovery of `service`'s instance sets (sends nothing until its first `next()`).
    #[napi]
    pub fn discover(&self, env: Env, service: &[u8]) -> Result<NativeDiscovery> {
        let d = crate::registry::check_service(service).and_then(|_| self.client.discover(service)).map_err(|e| crate::error::to_js(&env, e))?;
        Ok(NativeDiscovery::new(d))
    }

    /// This client's metrics now (no I/O).
    #[napi]
    pub fn metrics(&self) -> Vec<crate::metrics::MetricItem> {
        crate::metrics::items(&self.client.metrics())
    }

    /// The client's name: the `client` label of its metrics.
    #[napi]
    pub fn name(&self) -> String {
        self.client.name().to_string()
    }

    /// The same in the Prometheus text format.
    #[napi]
    pub fn metrics_text(&self) -> String {
        self.client.metrics().prometheus_text()
    }

    #[napi]
    pub fn lease<'env>(&self, env: &'env Env, ttl: i64) -> Result<PromiseRaw<'env, NativeLease>> {
        let client = self.client.clone();
        promise::spawn(env, async move { client.lease(ttl).await }, |_, l| Ok(NativeLease::new(l)))
    }

    /// Writes `value` at `key` (on `lease` if given). With `ifClaimed`, only while that task's
    /// claim holds (core `Task::txn`): `NOT_HELD`, nothing written, otherwise.
    #[napi]
    pub fn put<'env>(
        &self,
        env: &'env Env,
        key: &[u8],
        value: &[u8],
        lease: Option<&NativeLease>,
        if_claimed: Option<&NativeTask>,
    ) -> Result<PromiseRaw<'env, BigInt>> {
        let (client, key, value) = (self.client.clone(), key.to_vec(), value.to_vec());
        let lease = lease.map(|l| l.lease.clone());
        if let Some(task) = if_claimed {
            let task = task.task.clone();
            let op = Op::Put { key, value, lease: lease.as_ref().map_or(0, |l| l.id()) };
            return promise::spawn(env, async move { task.txn(&[op]).await }, |_, rev| Ok(BigInt::from(rev)));
        }
        promise::spawn(env, async move { client.put(&key, &value, lease.as_ref()).await }, |_, rev| Ok(BigInt::from(rev)))
    }

    /// Whether the acquisition a fence (its string form) names still holds, now: one
    /// linearizable read. False for another cluster's fence; a malformed one is INVALID_ARGUMENT.
    #[napi]
    pub fn check_fence<'env>(&self, env: &'env Env, fence: String) -> Result<PromiseRaw<'env, bool>> {
        let client = self.client.clone();
        promise::spawn(env, async move { client.check_fence(&etcdlock::Fence::parse(&fence)?).await }, |_, holds| Ok(holds))
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

    /// Loads `prefix` at one revision into a local copy that follows etcd from there.
    #[napi]
    pub fn cache<'env>(&self, env: &'env Env, prefix: &[u8]) -> Result<PromiseRaw<'env, crate::cache::NativeCache>> {
        let (client, closed, prefix) = (self.client.clone(), self.closed.clone(), prefix.to_vec());
        promise::spawn(env, async move { client.cache(prefix).await.map(|c| (client, c)) }, move |_, (client, c)| Ok(crate::cache::NativeCache::new(client, closed, c)))
    }

    /// Idempotent. Pending calls reject with `CLOSED`; leases are revoked (bounded).
    #[napi]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        self.closed.cancel();
        let client = self.client.clone();
        promise::spawn(
            env,
            async move {
                client.close().await;
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

/// One acquisition in a lock's queue.
#[napi(object, use_nullable = true)]
pub struct QueueEntry {
    pub key: Buffer,
    pub fencing_token: BigInt,
    pub lease: BigInt,
    /// Seconds the lease has left; null when it is gone.
    pub ttl: Option<i64>,
    pub value: Buffer,
    /// `read`/`write` for a read-write lock's key, `permits=N` for a semaphore's, `` otherwise.
    pub mode: String,
}

/// A lock's queue at one revision.
#[napi(object, use_nullable = true)]
pub struct LockState {
    pub holder: Option<QueueEntry>,
    /// Every key that holds, oldest first.
    pub holders: Vec<QueueEntry>,
    pub waiters: Vec<QueueEntry>,
    pub revision: BigInt,
}
