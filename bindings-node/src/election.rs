//! An election's leader and its observer (core `Leader`, `Observer`). Campaigning is an
//! acquire like a lock's (`client.rs`), and a leadership is a `NativeLock` (core's
//! `Leadership::into_guard`): proclaiming is `LockGuard::set_value`, resigning is `release`.

use crate::follow::Followed;
use crate::promise;
use etcdlock::{Leader, Observer};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

/// An election's leader: the candidate with the lowest create revision.
#[napi(object)]
pub struct NativeLeader {
    /// The proposal: the campaign's value or the last proclamation.
    pub value: Buffer,
    /// `<name>/<lease hex>`.
    pub key: Buffer,
    /// The key's create revision: the leader's fencing token.
    pub revision: BigInt,
    pub lease: BigInt,
}

pub fn to_js(l: Leader) -> NativeLeader {
    NativeLeader { value: l.value.into(), key: l.key.into(), revision: BigInt::from(l.revision), lease: BigInt::from(l.lease) }
}

/// One change seen by an observer: `leader` is null when nobody leads.
#[napi(object, use_nullable = true)]
pub struct NativeLeaderChange {
    pub leader: Option<NativeLeader>,
}

#[napi]
pub struct NativeObserver(Followed<Observer>);

impl NativeObserver {
    pub fn new(observer: Observer) -> Self {
        NativeObserver(Followed::new(observer))
    }
}

#[napi]
impl NativeObserver {
    /// The next change (the current leader first), or `null` once closed (this observer or
    /// the client).
    #[napi]
    pub fn next<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Option<NativeLeaderChange>>> {
        promise::spawn(env, self.0.next(), |_, change: Option<Option<Leader>>| Ok(change.map(|leader| NativeLeaderChange { leader: leader.map(to_js) })))
    }

    /// Ends the observer and drops its watch; a pending `next()` resolves `null`.
    #[napi]
    pub fn close(&self) {
        self.0.close();
    }
}
