//! Once-per-period jobs (core `sync::once`): the options from JS, and the slot a trigger won
//! (done, release, the lost signal). Conversions only; the slots are the core's.

use crate::lost::{self, LostCallback};
use crate::promise;
use etcdlock::{CancellationToken, Error, ErrorKind, OnceOptions, OnceSlot, Op};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// The latest trigger time taken, in ms since the epoch: a JS `Date`'s own limit.
const MAX_AT_MS: f64 = 8.64e15;

/// A once-per-period job's options from JS (the wrapper has checked the types: `everyMs` and
/// `atMs` are numbers, `ttl` and `keepPeriods` whole numbers), checked as core checks them.
pub(crate) fn options(name: &[u8], every_ms: f64, ttl: i64, at_ms: Option<f64>, keep_periods: u32) -> etcdlock::Result<OnceOptions> {
    let invalid = |m: String| Error::new(ErrorKind::InvalidArgument, m);
    // Core's first checks first, so a bad name is named as such whatever the other options.
    etcdlock::check_lock_name(name)?;
    etcdlock::check_ttl(ttl)?;
    let every = Duration::try_from_secs_f64(every_ms / 1000.0).map_err(|_| invalid(format!("every must be a number of milliseconds (at least 1000), not {every_ms:?}")))?;
    let at = match at_ms {
        None => None,
        Some(v) if v.is_nan() => return Err(invalid("at must be a valid Date or a number of milliseconds since the epoch, not NaN".into())),
        Some(v) if v < 0.0 => return Err(invalid(format!("a trigger time before 1970: at = {v:?}"))),
        Some(v) if v > MAX_AT_MS => return Err(invalid(format!("at must be at most {MAX_AT_MS} ms since the epoch (a Date's range), not {v:?}"))),
        Some(v) => Some(UNIX_EPOCH + Duration::from_secs_f64(v / 1000.0)),
    };
    // Done marks live on a lease of every × keepPeriods, which core multiplies (out of a
    // Duration's range, a panic) and then checks against etcd's largest TTL: refused here, in
    // JS terms.
    if every >= Duration::from_secs(1) && keep_periods >= 2 {
        let secs = every.checked_mul(keep_periods).map(|k| k.as_secs() + u64::from(k.subsec_nanos() > 0));
        if secs.is_none_or(|s| s > etcdlock::MAX_TTL_SECS as u64) {
            return Err(invalid(format!(
                "done marks are kept every × keepPeriods = {every_ms} ms × {keep_periods}, beyond etcd's largest lease TTL ({} s)",
                etcdlock::MAX_TTL_SECS
            )));
        }
    }
    let opts = OnceOptions { every, ttl_secs: ttl, at, keep_periods };
    etcdlock::check_once(name, &opts)?;
    Ok(opts)
}

/// Checks a once-per-period job's name and options as core does (the wrapper calls it before
/// anything else, so bad options are `INVALID_ARGUMENT` whatever the connection's state).
#[napi]
pub fn check_once(env: Env, name: &[u8], every_ms: f64, ttl: i64, at_ms: Option<f64>, keep_periods: u32) -> Result<()> {
    options(name, every_ms, ttl, at_ms, keep_periods).map(drop).map_err(|e| crate::error::to_js(&env, e))
}

/// Claims the period's slot of job `name` on `client`: resolves to the slot, or null when the
/// period's job is done or another trigger runs it.
pub(crate) fn once<'env>(env: &'env Env, client: &etcdlock::Client, name: &[u8], every_ms: f64, ttl: i64, at_ms: Option<f64>, keep_periods: u32) -> Result<PromiseRaw<'env, Option<NativeOnceSlot>>> {
    let opts = options(name, every_ms, ttl, at_ms, keep_periods).map_err(|e| crate::error::to_js(env, e))?;
    let (client, name) = (client.clone(), name.to_vec());
    promise::spawn(env, async move { client.once(name, opts).await }, |_, slot| Ok(slot.map(NativeOnceSlot::new)))
}

#[napi]
pub struct NativeOnceSlot {
    slot: Arc<OnceSlot>,
    /// Stops the onLost forwarder once done or released (or garbage-collected).
    stop: CancellationToken,
}

impl NativeOnceSlot {
    fn new(slot: OnceSlot) -> Self {
        NativeOnceSlot { slot: Arc::new(slot), stop: CancellationToken::new() }
    }
}

impl Drop for NativeOnceSlot {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[napi]
impl NativeOnceSlot {
    /// The slot's index: its period boundary is `slot * every` ms after the epoch.
    #[napi(getter)]
    pub fn slot(&self) -> i64 {
        self.slot.slot()
    }

    #[napi(getter)]
    pub fn fencing_token(&self) -> BigInt {
        BigInt::from(self.slot.fencing_token())
    }

    #[napi]
    pub fn is_held(&self) -> bool {
        self.slot.is_held()
    }

    #[napi]
    pub fn lost_reason(&self) -> Option<String> {
        self.slot.lost_reason().map(|r| r.as_str().to_string())
    }

    /// One call's view of the hold (core `Health`).
    #[napi]
    pub fn health(&self) -> crate::health::NativeHealth {
        crate::health::to_js(self.slot.health())
    }

    /// Calls `cb(reason)` once on the JS thread when the claim is lost; never keeps the process alive.
    #[napi(ts_args_type = "cb: (reason: 'expired' | 'revoked' | 'key_deleted' | 'closed') => void")]
    pub fn on_lost(&self, cb: LostCallback) {
        lost::forward(self.slot.lost(), self.stop.clone(), cb);
    }

    /// Marks the period's job done and ends the claim, in one fenced Txn (`NOT_HELD`, nothing
    /// marked, if the claim was lost). The forwarder stops only when it succeeded.
    #[napi]
    pub fn done<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let (slot, stop) = (self.slot.clone(), self.stop.clone());
        promise::spawn(env, async move { slot.done().await.inspect(|_| stop.cancel()) }, |_, ()| Ok(()))
    }

    /// Ends the claim without marking the job done: the next trigger in the period runs it.
    #[napi]
    pub fn release<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let (slot, stop) = (self.slot.clone(), self.stop.clone());
        promise::spawn(env, async move { slot.release().await.inspect(|_| stop.cancel()) }, |_, ()| Ok(()))
    }

    /// Fenced put: written only while the claim holds (core `OnceSlot::txn`; the job's own keys
    /// under `<name>/` are refused).
    #[napi]
    pub fn put<'env>(&self, env: &'env Env, key: &[u8], value: &[u8], lease_id: Option<BigInt>) -> Result<PromiseRaw<'env, BigInt>> {
        let lease = lease_id.map_or(0, |b| b.get_i64().0);
        let op = Op::Put { key: key.to_vec(), value: value.to_vec(), lease };
        let slot = self.slot.clone();
        promise::spawn(env, async move { slot.txn(&[op]).await }, |_, rev| Ok(BigInt::from(rev)))
    }
}
