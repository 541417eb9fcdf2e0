//! Pools of named slots (core `sync::pool`): the options from JS, a pool handle (acquire, add
//! and remove slots, the slots' states) and a holding (its slots and tokens, the lost signal,
//! fenced writes, release). Conversions only; the rules are the core's.

use crate::lock::CancelToken;
use crate::lost::{self, LostCallback};
use crate::promise;
use etcdlock::{CancellationToken, Error, ErrorKind, Op, Pool, PoolAcquire, PoolGuard, PoolOptions, SlotState};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::time::Duration;

/// A pool's options from JS (the wrapper has checked the types: `slots` strings or `size` a
/// whole number, `reuseDelayMs` a number >= 0), checked as core checks them.
pub(crate) fn options(name: &[u8], slots: Option<Vec<String>>, size: Option<u32>, ttl: i64, reuse_delay_ms: f64) -> etcdlock::Result<PoolOptions> {
    let reuse_delay = Duration::try_from_secs_f64(reuse_delay_ms / 1000.0).map_err(|_| {
        Error::new(ErrorKind::InvalidArgument, format!("reuseDelay must be a number of milliseconds >= 0 that etcd can time, not {reuse_delay_ms:?}"))
    })?;
    let base = match (slots, size) {
        (Some(s), None) => PoolOptions::named(s),
        (None, Some(n)) => PoolOptions::size(n as usize),
        _ => return Err(Error::new(ErrorKind::InvalidArgument, "a pool takes either slots or size")),
    };
    let opts = base.ttl(ttl).reuse_delay(reuse_delay);
    etcdlock::check_pool(name, &opts).map_err(js_names)?;
    Ok(opts)
}

/// Core's messages name its methods and options; here they are the wrapper's.
fn js_names(e: Error) -> Error {
    if e.kind() != ErrorKind::InvalidArgument {
        return e;
    }
    let m = e.message().replace("add_slots / remove_slots", "addSlots / removeSlots").replace("reuse_delay", "reuseDelay");
    Error::new(ErrorKind::InvalidArgument, m)
}

/// Checks a pool's name and options as core does (the wrapper's synchronous `client.pool()`
/// throws before anything is sent).
#[napi]
pub fn check_pool(env: Env, name: &[u8], slots: Option<Vec<String>>, size: Option<u32>, ttl: i64, reuse_delay_ms: f64) -> Result<()> {
    options(name, slots, size, ttl, reuse_delay_ms).map(drop).map_err(|e| crate::error::to_js(&env, e))
}

/// The most slots a pool may have (core `MAX_POOL_SLOTS`).
#[napi]
pub fn max_pool_slots() -> u32 {
    etcdlock::MAX_POOL_SLOTS as u32
}

/// The most slots one acquire may take (core `MAX_POOL_COUNT`).
#[napi]
pub fn max_pool_count() -> u32 {
    etcdlock::MAX_POOL_COUNT as u32
}

/// One slot of a pool as read: `state` is `free`, `held`, `resting` (its holder died; it rests
/// until its lease ends) or `dead` (its holder died; it rests the reuse delay once a request
/// sees it).
#[napi(object, use_nullable = true)]
pub struct NativeSlotInfo {
    pub id: String,
    pub state: String,
    /// Held: the slot's fencing token.
    pub token: Option<BigInt>,
    /// Held: the holder's lease; resting: the lease it rests on.
    pub lease: Option<BigInt>,
    /// Seconds that lease has left (null: gone or not applicable).
    pub ttl: Option<i64>,
    /// Held: the acquisition's fencing token.
    pub acquisition: Option<BigInt>,
    /// Held: the acquisition's owner (null without one).
    pub owner: Option<String>,
}

pub(crate) fn slot_info(s: etcdlock::SlotInfo) -> NativeSlotInfo {
    let mut info = NativeSlotInfo { id: s.id, state: String::new(), token: None, lease: None, ttl: None, acquisition: None, owner: None };
    match s.state {
        SlotState::Free => info.state = "free".into(),
        SlotState::Held { token, lease, ttl, acquisition, owner } => {
            info.state = "held".into();
            info.token = Some(BigInt::from(token));
            info.lease = Some(BigInt::from(lease));
            info.ttl = ttl;
            info.acquisition = Some(BigInt::from(acquisition));
            info.owner = (!owner.is_empty()).then_some(owner);
        }
        SlotState::Resting { lease, ttl } => {
            info.state = "resting".into();
            info.lease = Some(BigInt::from(lease));
            info.ttl = ttl;
        }
        SlotState::Dead => info.state = "dead".into(),
    }
    info
}

#[napi]
pub struct NativePool {
    pool: Pool,
}

impl NativePool {
    pub fn new(pool: Pool) -> Self {
        NativePool { pool }
    }
}

#[napi]
impl NativePool {
    /// Takes `count` slots: `timeoutMs` absent = wait forever, 0 = try once (`WOULD_BLOCK`),
    /// otherwise `LOCK_TIMEOUT` when it passes; `CANCELLED` once `cancel` fires. With `owner`,
    /// a live holding of this client acquired with the same owner is returned instead.
    #[napi]
    pub fn acquire<'env>(&self, env: &'env Env, count: u32, owner: Option<String>, timeout_ms: Option<f64>, cancel: Option<&CancelToken>) -> Result<PromiseRaw<'env, NativePoolHolding>> {
        let pool = self.pool.clone();
        let opts = PoolAcquire { count: count as usize, owner, timeout: timeout_ms.map(crate::client::ms), cancel: cancel.map(|c| c.token.clone()) };
        promise::spawn(env, async move { pool.acquire_with(opts).await.map_err(js_names) }, |_, g| Ok(NativePoolHolding::new(g)))
    }

    /// Adds slots; resolves to the pool's slots after.
    #[napi]
    pub fn add_slots<'env>(&self, env: &'env Env, ids: Vec<String>) -> Result<PromiseRaw<'env, Vec<String>>> {
        let pool = self.pool.clone();
        promise::spawn(env, async move { pool.add_slots(ids).await.map_err(js_names) }, |_, s| Ok(s))
    }

    /// Removes slots (a held one goes when its holder releases it); resolves to the pool's slots after.
    #[napi]
    pub fn remove_slots<'env>(&self, env: &'env Env, ids: Vec<String>) -> Result<PromiseRaw<'env, Vec<String>>> {
        let pool = self.pool.clone();
        promise::spawn(env, async move { pool.remove_slots(ids).await.map_err(js_names) }, |_, s| Ok(s))
    }

    /// Every slot of the pool, in its order, read at one revision (empty if it is not defined yet).
    #[napi]
    pub fn slots<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Vec<NativeSlotInfo>>> {
        let pool = self.pool.clone();
        promise::spawn(env, async move { pool.slots().await }, |_, s| Ok(s.into_iter().map(slot_info).collect()))
    }
}

#[napi]
pub struct NativePoolHolding {
    guard: PoolGuard,
    /// Stops the onLost forwarder once released (or garbage-collected).
    stop: CancellationToken,
}

impl NativePoolHolding {
    fn new(guard: PoolGuard) -> Self {
        NativePoolHolding { guard, stop: CancellationToken::new() }
    }
}

impl Drop for NativePoolHolding {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[napi]
impl NativePoolHolding {
    /// The slot ids held, in the pool's order.
    #[napi(getter)]
    pub fn slots(&self) -> Vec<String> {
        self.guard.slots().into_iter().map(str::to_string).collect()
    }

    /// Each slot with its fencing token (its key's create revision), in the pool's order.
    #[napi(getter)]
    pub fn tokens(&self) -> Vec<(String, BigInt)> {
        self.guard.tokens().iter().map(|(s, t)| (s.clone(), BigInt::from(*t))).collect()
    }

    /// The acquisition's fencing token: larger for every later acquisition from this pool.
    #[napi(getter)]
    pub fn fencing_token(&self) -> BigInt {
        BigInt::from(self.guard.fencing_token())
    }

    #[napi(getter)]
    pub fn owner(&self) -> Option<String> {
        self.guard.owner().map(str::to_string)
    }

    #[napi(getter)]
    pub fn lease_id(&self) -> BigInt {
        BigInt::from(self.guard.lease_id())
    }

    #[napi]
    pub fn is_held(&self) -> bool {
        self.guard.is_held()
    }

    #[napi]
    pub fn lost_reason(&self) -> Option<String> {
        self.guard.lost_reason().map(|r| r.as_str().to_string())
    }

    /// One call's view of the hold (core `Health`).
    #[napi]
    pub fn health(&self) -> crate::health::NativeHealth {
        crate::health::to_js(self.guard.health())
    }

    /// Calls `cb(reason)` once on the JS thread when the holding is lost; never keeps the process alive.
    #[napi(ts_args_type = "cb: (reason: 'expired' | 'revoked' | 'key_deleted' | 'closed') => void")]
    pub fn on_lost(&self, cb: LostCallback) {
        lost::forward(self.guard.lost(), self.stop.clone(), cb);
    }

    /// Gives every slot back at once, fenced; the forwarder stops only when it succeeded.
    #[napi]
    pub fn release<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let (guard, stop) = (self.guard.clone(), self.stop.clone());
        promise::spawn(env, async move { guard.release().await.inspect(|_| stop.cancel()) }, |_, ()| Ok(()))
    }

    /// The fence of slot `slot` in its string form (`etcdlock-fence.v1.k.<cluster>.<token>.<key
    /// hex>`: the slot's key `<pool>/slot/<id>` at its token, which lib/fence.js parses);
    /// `INVALID_ARGUMENT` for a slot this holding does not hold. As core's `PoolGuard::fence`,
    /// also after the release (it then no longer checks).
    #[napi]
    pub fn fence<'env>(&self, env: &'env Env, slot: String) -> Result<PromiseRaw<'env, String>> {
        let guard = self.guard.clone();
        promise::spawn(env, async move { guard.fence(&slot).await }, |_, f| Ok(f.to_string()))
    }

    /// Fenced put: written only while every slot is held (core `PoolGuard::txn`).
    #[napi]
    pub fn put<'env>(&self, env: &'env Env, key: &[u8], value: &[u8], lease_id: Option<BigInt>) -> Result<PromiseRaw<'env, BigInt>> {
        let lease = lease_id.map_or(0, |b| b.get_i64().0);
        let op = Op::Put { key: key.to_vec(), value: value.to_vec(), lease };
        let guard = self.guard.clone();
        promise::spawn(env, async move { guard.txn(&[op]).await }, |_, rev| Ok(BigInt::from(rev)))
    }
}
