//! A held lock, semaphore permit, read, write or leadership (core `LockGuard`) and the cancel token an acquire can be aborted with.

use crate::lost::{self, LostCallback};
use crate::promise;
use etcdlock::{CancellationToken, LockGuard, Op};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::sync::Arc;

/// Cancels a pending acquire (the wrapper cancels it when the AbortSignal fires).
#[napi]
pub struct CancelToken {
    pub(crate) token: CancellationToken,
}

#[napi]
impl CancelToken {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        CancelToken { token: CancellationToken::new() }
    }

    #[napi]
    pub fn cancel(&self) {
        self.token.cancel();
    }
}

#[napi]
pub struct NativeLock {
    guard: Arc<LockGuard>,
    /// Stops the onLost forwarder once released (or garbage-collected).
    stop: CancellationToken,
}

impl NativeLock {
    pub fn new(guard: LockGuard) -> Self {
        NativeLock { guard: Arc::new(guard), stop: CancellationToken::new() }
    }
}

impl Drop for NativeLock {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[napi]
impl NativeLock {
    #[napi(getter)]
    pub fn fencing_token(&self) -> BigInt {
        BigInt::from(self.guard.fencing_token())
    }

    #[napi(getter)]
    pub fn key(&self) -> Buffer {
        self.guard.key().to_vec().into()
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

    /// Calls `cb(reason)` once on the JS thread when lost; never keeps the process alive.
    #[napi(ts_args_type = "cb: (reason: 'expired' | 'revoked' | 'key_deleted' | 'closed') => void")]
    pub fn on_lost(&self, cb: LostCallback) {
        lost::forward(self.guard.lost(), self.stop.clone(), cb);
    }

    /// Fenced release; the forwarder stops only when it succeeded (a failed release means the
    /// lock had been lost, which onLost reports).
    #[napi]
    pub fn release<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let (guard, stop) = (self.guard.clone(), self.stop.clone());
        promise::spawn(
            env,
            async move {
                let r = guard.release().await;
                if r.is_ok() {
                    stop.cancel();
                }
                r
            },
            |_, ()| Ok(()),
        )
    }

    /// Replaces the value the queue key carries (an election's proclamation), only while
    /// held: `NOT_HELD`, nothing written, otherwise. Resolves to the write's revision.
    #[napi]
    pub fn set_value<'env>(&self, env: &'env Env, value: &[u8]) -> Result<PromiseRaw<'env, BigInt>> {
        let (guard, value) = (self.guard.clone(), value.to_vec());
        promise::spawn(env, async move { guard.set_value(&value).await }, |_, rev| Ok(BigInt::from(rev)))
    }

    /// The acquisition's fence in its string form (`etcdlock-fence.v1.q.<cluster>.<token>.<name
    /// hex>`, which lib/fence.js parses); `NOT_HELD` once released or lost. Reads the cluster's
    /// ID on the client's first fence.
    #[napi]
    pub fn fence<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, String>> {
        let guard = self.guard.clone();
        promise::spawn(
            env,
            async move {
                if !guard.is_held() {
                    return Err(etcdlock::Error::new(etcdlock::ErrorKind::NotHeld, "the lock is not held: a fence is for a holding acquisition"));
                }
                guard.fence().await
            },
            |_, f| Ok(f.to_string()),
        )
    }

    /// Fenced put: written only if this lock is still held (core `LockGuard::txn`).
    #[napi]
    pub fn put<'env>(&self, env: &'env Env, key: &[u8], value: &[u8], lease_id: Option<BigInt>) -> Result<PromiseRaw<'env, BigInt>> {
        let lease = lease_id.map_or(0, |b| b.get_i64().0);
        let op = Op::Put { key: key.to_vec(), value: value.to_vec(), lease };
        let guard = self.guard.clone();
        promise::spawn(env, async move { guard.txn(&[op]).await }, |_, rev| Ok(BigInt::from(rev)))
    }
}
