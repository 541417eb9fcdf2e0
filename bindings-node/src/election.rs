//! An election's leader and its observer (core `Leader`, `Observer`). Campaigning is an
//! acquire like a lock's (`client.rs`), and a leadership is a `NativeLock` (core's
//! `Leadership::into_guard`): proclaiming is `LockGuard::set_value`, resigning is `release`.

use crate::promise;
use etcdlock::{CancellationToken, ErrorKind, Leader, Observer};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::sync::Arc;

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
pub struct NativeObserver {
    observer: Arc<tokio::sync::Mutex<Observer>>,
    closed: CancellationToken,
}

impl NativeObserver {
    pub fn new(observer: Observer) -> Self {
        NativeObserver { observer: Arc::new(tokio::sync::Mutex::new(observer)), closed: CancellationToken::new() }
    }
}

impl Drop for NativeObserver {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

#[napi]
impl NativeObserver {
    /// The next change (the current leader first), or `null` once closed (this observer or
    /// the client).
    #[napi]
    pub fn next<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Option<NativeLeaderChange>>> {
        let (observer, closed) = (self.observer.clone(), self.closed.clone());
        let fut = async move {
            if closed.is_cancelled() {
                return Ok(None);
            }
            let mut o = observer.lock().await;
            // Observer::next is cancel-safe: a change it had not returned yet is kept.
            let next = tokio::select! {
                biased;
                _ = closed.cancelled() => return Ok(None),
                n = o.next() => n,
            };
            match next {
                Ok(leader) => Ok(Some(leader)),
                Err(e) if e.kind() == ErrorKind::Closed => Ok(None),
                Err(e) => Err(e),
            }
        };
        promise::spawn(env, fut, |_, change: Option<Option<Leader>>| Ok(change.map(|leader| NativeLeaderChange { leader: leader.map(to_js) })))
    }

    /// Ends the observer; a pending `next()` resolves `null`.
    #[napi]
    pub fn close(&self) {
        self.closed.cancel();
    }
}
