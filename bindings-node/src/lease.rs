//! A lease kept alive by core in the background.

use crate::lost::{self, LostCallback};
use crate::promise;
use etcdlock::CancellationToken;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

#[napi]
pub struct NativeLease {
    pub(crate) lease: etcdlock::Lease,
    stop: CancellationToken,
}

impl NativeLease {
    pub fn new(lease: etcdlock::Lease) -> Self {
        NativeLease { lease, stop: CancellationToken::new() }
    }
}

impl Drop for NativeLease {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[napi]
impl NativeLease {
    #[napi(getter)]
    pub fn id(&self) -> BigInt {
        BigInt::from(self.lease.id())
    }

    /// Granted TTL in seconds.
    #[napi(getter)]
    pub fn ttl(&self) -> i64 {
        self.lease.ttl()
    }

    #[napi]
    pub fn is_alive(&self) -> bool {
        self.lease.is_alive()
    }

    /// Milliseconds before the conservative local deadline (0 once lost).
    #[napi]
    pub fn remaining_ms(&self) -> f64 {
        self.lease.remaining().as_secs_f64() * 1000.0
    }

    #[napi]
    pub fn lost_reason(&self) -> Option<String> {
        self.lease.lost_reason().map(|r| r.as_str().to_string())
    }

    /// Calls `cb(reason)` once on the JS thread when lost; never keeps the process alive.
    #[napi(ts_args_type = "cb: (reason: 'expired' | 'revoked' | 'key_deleted' | 'closed') => void")]
    pub fn on_lost(&self, cb: LostCallback) {
        lost::forward(self.lease.lost(), self.stop.clone(), cb);
    }

    #[napi]
    pub fn revoke<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let lease = self.lease.clone();
        promise::spawn(env, async move { lease.revoke().await }, |_, ()| Ok(()))
    }
}
