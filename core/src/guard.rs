//! A held lock: its fencing token, a cheap local "held" check, the lost signal, fenced writes
//! and a fenced release.

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::kv::Op;
use crate::lease::Lease;
use crate::lost::{LostFlag, LostReason, LostSignal};
use crate::runtime;
use crate::mutex::{recv, WATCH_OWN_KEY_AFTER};
use crate::watch_hub::{EventType, Msg, Spec, Subscription};
use etcd_client::{Compare, CompareOp, Txn};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// etcd allows 128 operations per Txn.
const MAX_OPS: usize = 128;

/// Counts a use of a mutex handle's own lease; see `Mutex::cleanup`.
#[derive(Debug)]
pub(crate) struct Active(Option<Arc<AtomicUsize>>);

impl Active {
    pub fn new(counter: Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::AcqRel);
        Active(Some(counter))
    }

    pub fn none() -> Self {
        Active(None)
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        if let Some(c) = &self.0 {
            c.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Proof of holding a lock, until [`LockGuard::release`], loss, or drop (which releases in
/// the background).
///
/// Holding is only as good as the lease: a paused process can still run after its lease
/// expired. Effects that must never overlap with another holder's go through the guard's
/// fenced writes ([`LockGuard::put`], [`LockGuard::txn`]), or carry the
/// [`fencing_token`](LockGuard::fencing_token) to a resource that rejects stale tokens.
#[derive(Debug)]
pub struct LockGuard {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    client: Client,
    name: Vec<u8>,
    key: Vec<u8>,
    /// The key's number on its lease, freed once the key is deleted.
    slot: u64,
    token: i64,
    lease: Lease,
    lost: LostFlag,
    released: AtomicBool,
    /// Stops the monitor task.
    stop: CancellationToken,
    _active: Active,
}

impl LockGuard {
    pub(crate) fn new(
        client: Client,
        name: Vec<u8>,
        key: Vec<u8>,
        slot: u64,
        token: i64,
        lease: Lease,
        own_sub: Option<Subscription>,
        active: Active,
    ) -> LockGuard {
        let shared = Arc::new(Shared {
            client,
            name,
            key,
            slot,
            token,
            lease,
            lost: LostFlag::new(),
            released: AtomicBool::new(false),
            stop: CancellationToken::new(),
            _active: active,
        });
        if std::env::var_os("NOMON").is_none() { runtime::spawn(monitor(Arc::downgrade(&shared), shared.stop.clone(), shared.lease.lost(), own_sub)); }
        LockGuard { shared }
    }

    /// The lock name.
    pub fn name(&self) -> &[u8] {
        &self.shared.name
    }

    /// This holder's queue key (`<name>/<lease hex>[-n]`).
    pub fn key(&self) -> &[u8] {
        &self.shared.key
    }

    /// The fencing token: the create revision of the queue key. Strictly greater than every
    /// earlier holder's token for this name.
    pub fn fencing_token(&self) -> i64 {
        self.shared.token
    }

    pub fn lease_id(&self) -> i64 {
        self.shared.lease.id()
    }

    /// Cheap local check: not released, not lost, and the lease's conservative local
    /// deadline has not passed.
    pub fn is_held(&self) -> bool {
        !self.shared.released.load(Ordering::Acquire) && self.lost_reason().is_none()
    }

    /// Whether [`LockGuard::release`] was called (successfully or not).
    pub fn is_released(&self) -> bool {
        self.shared.released.load(Ordering::Acquire)
    }

    /// Why the lock was lost, if it was.
    pub fn lost_reason(&self) -> Option<LostReason> {
        if let Some(r) = self.shared.lease.lost_reason() {
            self.shared.lost.set(r);
        }
        self.shared.lost.reason()
    }

    /// Fires once when the lock is lost (not when it is released).
    pub fn lost(&self) -> LostSignal {
        self.shared.lost.signal()
    }

    /// Writes `value` at `key` only if this lock is still held (checked by etcd, atomically
    /// with the write). Returns the write's revision, or `NotHeld`.
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<i64> {
        self.txn(&[Op::put(key, value)]).await
    }

    /// Deletes `key` only if this lock is still held.
    pub async fn delete(&self, key: &[u8]) -> Result<i64> {
        self.txn(&[Op::delete(key)]).await
    }

    /// Applies `ops` atomically, only if this lock is still held; `NotHeld` otherwise, with
    /// nothing written. Not retried (the writes need not be idempotent).
    pub async fn txn(&self, ops: &[Op]) -> Result<i64> {
        if ops.is_empty() || ops.len() >= MAX_OPS {
            return Err(Error::invalid(format!("a guarded transaction takes 1 to {} operations", MAX_OPS - 1)));
        }
        for op in ops {
            crate::validate::key(op.key())?;
            if op.key() == self.shared.key.as_slice() {
                return Err(Error::invalid("a guarded write must not touch the lock's own key"));
            }
        }
        self.check_held()?;
        let txn = Txn::new()
            .when([Compare::create_revision(self.shared.key.clone(), CompareOp::Equal, self.shared.token)])
            .and_then(ops.iter().map(Op::to_txn_op).collect::<Vec<_>>());
        let resp = self.shared.client.txn(txn, false).await?;
        if !resp.succeeded() {
            self.shared.lost.set(LostReason::KeyDeleted);
            return Err(not_held("the lock key is gone: the lock was lost"));
        }
        Ok(resp.header().map_or(0, |h| h.revision()))
    }

    /// Releases the lock: deletes the queue key only if it is still this acquisition's (so a
    /// retried or late release can never delete a newer holder's key). `NotHeld` if it was
    /// already released or lost; the key is still removed if it was ours.
    pub async fn release(&self) -> Result<()> {
        runtime::check_pid(self.shared.client.inner.pid)?;
        if self.shared.released.swap(true, Ordering::AcqRel) {
            return Err(not_held("the lock was already released"));
        }
        self.shared.stop.cancel();
        let was_lost = self.lost_reason();
        let deleted = self.shared.fenced_delete().await?;
        match (was_lost, deleted) {
            (None, true) => Ok(()),
            (Some(r), _) => Err(not_held(&format!("the lock was lost ({r}) before release"))),
            (None, false) => {
                self.shared.lost.set(LostReason::KeyDeleted);
                Err(not_held("the lock key was already gone at release"))
            }
        }
    }

    fn check_held(&self) -> Result<()> {
        self.shared.client.check_open()?;
        if self.shared.released.load(Ordering::Acquire) {
            return Err(not_held("the lock was released"));
        }
        match self.lost_reason() {
            None => Ok(()),
            Some(r) => Err(not_held(&format!("the lock was lost ({r})"))),
        }
    }
}

impl Shared {
    /// Deletes the key if its create revision is still our token; returns whether it did.
    async fn fenced_delete(&self) -> Result<bool> {
        let txn = Txn::new()
            .when([Compare::create_revision(self.key.clone(), CompareOp::Equal, self.token)])
            .and_then([etcd_client::TxnOp::delete(self.key.clone(), None)]);
        let resp = self.client.txn(txn, true).await?;
        if resp.succeeded() {
            self.lease.state().free_slot(self.slot);
        }
        Ok(resp.succeeded())
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let s = &self.shared;
        s.stop.cancel();
        if s.released.swap(true, Ordering::AcqRel)
            || runtime::check_pid(s.client.inner.pid).is_err()
            || s.client.is_closed()
        {
            return;
        }
        let shared = self.shared.clone();
        runtime::spawn_cleanup(async move {
            let _ = shared.fenced_delete().await;
        });
    }
}

fn not_held(msg: &str) -> Error {
    Error::new(ErrorKind::NotHeld, msg)
}

/// Marks the guard lost when its lease is lost, its key is deleted by anyone, or the client
/// closes. Holds only a weak reference, so it never keeps a dropped guard alive.
async fn monitor(
    shared: std::sync::Weak<Shared>,
    stop: CancellationToken,
    lease_lost: LostSignal,
    own_sub: Option<Subscription>,
) {
    let Some((client, key, token)) = shared.upgrade().map(|s| (s.client.clone(), s.key.clone(), s.token)) else {
        return;
    };
    let spec = Spec { key, prefix: false, start_revision: token + 1, prev_kv: false, only_deletes: true };
    // Watching from token + 1, a delete is seen even if the watch starts late; starting late
    // spares the server a watch for locks held only briefly.
    let mut sub = own_sub;
    let own_after = tokio::time::sleep(WATCH_OWN_KEY_AFTER);
    tokio::pin!(own_after);
    let mut backoff = crate::backoff::Backoff::default();
    let reason = loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            r = lease_lost.wait() => break r,
            _ = client.inner.closed.cancelled() => break LostReason::Closed,
            _ = &mut own_after, if sub.is_none() => sub = Some(client.inner.hub.subscribe(spec.clone())),
            msg = recv(&mut sub) => match msg {
                Some(Msg::Events(ev)) if ev.iter().any(|e| e.event_type == EventType::Delete) => break LostReason::KeyDeleted,
                Some(Msg::Created { .. }) => backoff.reset(),
                Some(_) => {}
                None => {
                    // Resumes from token + 1: a delete during the outage is still seen.
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(backoff.next_delay()) => {}
                    }
                    sub = Some(client.inner.hub.subscribe(spec.clone()));
                }
            },
        }
    };
    if let Some(s) = shared.upgrade() {
        s.lost.set(reason);
    }
}
