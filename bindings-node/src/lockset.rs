//! Lock sets (core `sync::lockset`): the members from JS, and a held set (one fencing token,
//! each member's key, the lost signal, fenced writes, one-Txn release). Conversions only; the
//! rules (one Txn puts every key, each waits by its own rule, no deadlock) are the core's.

use crate::lost::{self, LostCallback};
use crate::promise;
use etcdlock::{CancellationToken, Error, ErrorKind, LockOptions, LockSetGuard, Op, SetMember};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::sync::Arc;

/// One member as the wrapper passes it (it has checked the types): `mode` is `exclusive`,
/// `read`, `write` or `permit` (then `permits` is the semaphore's count).
#[napi(object)]
pub struct NativeSetMember {
    pub name: Buffer,
    pub mode: String,
    pub permits: Option<u32>,
}

fn member(m: NativeSetMember) -> etcdlock::Result<SetMember> {
    let name = m.name.to_vec();
    Ok(match (m.mode.as_str(), m.permits) {
        ("exclusive", None) => SetMember::exclusive(name),
        ("read", None) => SetMember::read(name),
        ("write", None) => SetMember::write(name),
        ("permit", Some(n)) => SetMember::permit(name, n),
        (mode, _) => return Err(Error::new(ErrorKind::InvalidArgument, format!("a lock set member is exclusive, read, write or permit (with permits), not {mode:?}"))),
    })
}

/// The most names a lock set may have (core `MAX_LOCK_SET`).
#[napi]
pub fn max_lock_set() -> u32 {
    etcdlock::MAX_LOCK_SET as u32
}

/// Takes the set `members` (core `Client::lock_set` then `LockSet::lock_with`): `timeoutMs`
/// absent = wait forever, 0 = try once (`WOULD_BLOCK`); `CANCELLED` once `cancel` fires. On
/// any failure no key is left in any queue.
pub fn acquire<'env>(
    env: &'env Env,
    client: &etcdlock::Client,
    members: Vec<NativeSetMember>,
    ttl: i64,
    opts: LockOptions,
) -> Result<PromiseRaw<'env, NativeLockSet>> {
    let set = members.into_iter().map(member).collect::<etcdlock::Result<Vec<_>>>().and_then(|m| client.lock_set(m, ttl));
    promise::spawn(env, async move { set?.lock_with(opts).await }, |_, guard| Ok(NativeLockSet::new(guard)))
}

#[napi]
pub struct NativeLockSet {
    guard: Arc<LockSetGuard>,
    /// Stops the onLost forwarder once released (or garbage-collected).
    stop: CancellationToken,
}

impl NativeLockSet {
    fn new(guard: LockSetGuard) -> Self {
        NativeLockSet { guard: Arc::new(guard), stop: CancellationToken::new() }
    }
}

impl Drop for NativeLockSet {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[napi]
impl NativeLockSet {
    /// The set's fencing token: the create revision every member's key shares.
    #[napi(getter)]
    pub fn fencing_token(&self) -> BigInt {
        BigInt::from(self.guard.fencing_token())
    }

    /// Each member's queue key, in the set's order.
    #[napi(getter)]
    pub fn keys(&self) -> Vec<Buffer> {
        self.guard.members().iter().map(|m| m.key().to_vec().into()).collect()
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

    /// Calls `cb(reason)` once on the JS thread when a member is lost; never keeps the process alive.
    #[napi(ts_args_type = "cb: (reason: 'expired' | 'revoked' | 'key_deleted' | 'closed') => void")]
    pub fn on_lost(&self, cb: LostCallback) {
        lost::forward(self.guard.lost(), self.stop.clone(), cb);
    }

    /// Releases every member in one Txn; the forwarder stops only when it succeeded (a failed
    /// release means a member had been lost, which onLost reports).
    #[napi]
    pub fn release<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let (guard, stop) = (self.guard.clone(), self.stop.clone());
        promise::spawn(env, async move { guard.release().await.inspect(|_| stop.cancel()) }, |_, ()| Ok(()))
    }

    /// Member `name`'s fence at the set's token in its string form (`etcdlock-fence.v1.q...`,
    /// which lib/fence.js parses); `NOT_HELD` once released or lost (as a lock's fence);
    /// `INVALID_ARGUMENT` for a name that is not a member.
    #[napi]
    pub fn fence<'env>(&self, env: &'env Env, name: &[u8]) -> Result<PromiseRaw<'env, String>> {
        let (guard, name) = (self.guard.clone(), name.to_vec());
        promise::spawn(
            env,
            async move {
                if !guard.is_held() {
                    return Err(Error::new(ErrorKind::NotHeld, "the lock set is not held: a fence is for a holding acquisition"));
                }
                guard.fence(&name).await
            },
            |_, f| Ok(f.to_string()),
        )
    }

    /// Fenced put: written only while every member is held (core `LockSetGuard::txn`).
    #[napi]
    pub fn put<'env>(&self, env: &'env Env, key: &[u8], value: &[u8], lease_id: Option<BigInt>) -> Result<PromiseRaw<'env, BigInt>> {
        let lease = lease_id.map_or(0, |b| b.get_i64().0);
        let op = Op::Put { key: key.to_vec(), value: value.to_vec(), lease };
        let guard = self.guard.clone();
        promise::spawn(env, async move { guard.txn(&[op]).await }, |_, rev| Ok(BigInt::from(rev)))
    }
}
