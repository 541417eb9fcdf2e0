//! A claimed item: held while the worker's lease lives, ended by ack or nack.

use super::keys::{self, Keys};
use super::Inner;
use crate::sync::expiring;
use crate::client::kv::Op;
use crate::error::{Error, Result};
use crate::lease::lost::{LostReason, LostSignal};
use crate::sync::guard::LockGuard;
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp};
use std::sync::Arc;
use std::time::Duration;

/// A claimed item. Its claim lives on the worker's lease, kept alive while the task is held;
/// [`Task::ack`] ends it by deleting the item, [`Task::nack`] by giving it back. Dropped
/// without either, it is given back (in the background), as by `nack`.
///
/// Like a lock guard it can be lost (the lease ended: the item may be someone else's now), and
/// its fenced writes ([`Task::put`], [`Task::txn`]) and [`Task::ack_with`] commit only while the
/// claim holds: after a loss they fail with `NotHeld` and change nothing.
#[derive(Debug)]
pub struct Task {
    q: Arc<Inner>,
    guard: LockGuard,
    slot: Vec<u8>,
    id: String,
    payload: Vec<u8>,
    priority: i32,
    attempts: u32,
    /// Stops the `max_processing` timer when the task is dropped.
    _timer: Option<tokio_util::sync::DropGuard>,
}

impl Task {
    pub(super) fn new(q: Arc<Inner>, guard: LockGuard, slot: Vec<u8>, id: String, payload: Vec<u8>, priority: i32, attempts: u32) -> Task {
        let _timer = q.max_processing.map(|limit| end_after(&guard, limit));
        Task { q, guard, slot, id, payload, priority, attempts, _timer }
    }

    /// The item's id: the one given to [`TaskQueue::put`](crate::TaskQueue::put), or the one
    /// it made. Stable across redeliveries, so a worker can make its effect idempotent by it.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The item's payload, as it was put.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }
    /// The priority it was put with: higher is claimed first.
    pub fn priority(&self) -> i32 {
        self.priority
    }
    /// Deliveries of this item so far, this one included.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
    /// The claim key's create revision: larger for every later claim of any item in etcd.
    pub fn fencing_token(&self) -> i64 {
        self.guard.fencing_token()
    }
    /// This claim's [`Fence`](crate::Fence), for a database or another service to check
    /// (a queue-kind fence on the claim's lock, `<queue>/claim/<item's slot>`: every later claim
    /// of the item has a larger token). Reads the cluster's ID on a client's first fence.
    pub async fn fence(&self) -> Result<crate::Fence> {
        self.guard.fence().await
    }
    /// A local check: the claim was neither ended nor lost.
    pub fn is_held(&self) -> bool {
        self.guard.is_held()
    }
    /// Why the claim was lost, if it was: the item will be delivered again, perhaps to
    /// another worker, so stop working on it.
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.guard.lost_reason()
    }
    /// One call's view of the claim (see [`LockGuard::health`]): `Released` once acked or
    /// nacked; the name is the claim's lock, `<queue>/claim/<slot>`.
    pub fn health(&self) -> crate::Health {
        self.guard.health()
    }
    /// Fires once if the claim is lost (not when it is acked or nacked).
    pub fn lost(&self) -> LostSignal {
        self.guard.lost()
    }
    /// The moment by which work on the task must have stopped, as a lock guard's
    /// ([`LockGuard::stop_by`]): before anyone else can claim it. `None` once that may have
    /// happened.
    pub fn stop_by(&self) -> Option<std::time::Instant> {
        self.guard.stop_by()
    }
    /// The lease the claim lives on.
    pub fn lease_id(&self) -> i64 {
        self.guard.lease_id()
    }
    /// Writes `value` at `key` only while the claim holds (`NotHeld` otherwise).
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<i64> {
        self.txn(&[Op::put(key, value)]).await
    }
    /// Deletes `key` only while the claim holds.
    pub async fn delete(&self, key: &[u8]) -> Result<i64> {
        self.txn(&[Op::delete(key)]).await
    }
    /// Applies `ops` atomically, only while the claim holds.
    pub async fn txn(&self, ops: &[Op]) -> Result<i64> {
        self.check_ops(ops)?;
        self.guard.txn(ops).await
    }

    /// Deletes the item and its claim in one Txn that applies only while the claim holds.
    /// `NotHeld` with nothing changed if the claim was lost (the item is claimable again) or
    /// already ended. Returns the revision of the ack.
    pub async fn ack(&self) -> Result<i64> {
        self.ack_with(&[]).await
    }

    /// [`Task::ack`] with the caller's own writes in the same Txn: the result is stored and the
    /// item acked together, or neither.
    pub async fn ack_with(&self, ops: &[Op]) -> Result<i64> {
        self.check_ops(ops)?;
        if ops.len() > 100 {
            return Err(Error::invalid("an ack takes at most 100 operations of its own"));
        }
        let k = &self.q.keys;
        let mut all: Vec<TxnOp> = ops.iter().map(Op::to_txn_op).collect();
        all.extend([TxnOp::delete(k.item(&self.slot), None), TxnOp::delete(k.attempts(&self.slot), None), TxnOp::delete(k.id(&self.id), None)]);
        use tracing::Instrument;
        let span = crate::sync::spans::ack(k.name(), &self.id, self.fencing_token());
        let r = self.guard.finish(all).instrument(span.clone()).await;
        crate::sync::spans::ended(&span, &r, "acked");
        r
    }

    /// Gives the item back, claimable at once (or, after its last delivery, to the dead
    /// letters). `NotHeld` if the claim was lost or already ended.
    pub async fn nack(&self) -> Result<()> {
        if self.attempts >= self.q.max_attempts {
            return bury(&self.guard, &self.q.keys, &self.slot, &self.id, self.attempts, self.priority, &self.payload).await;
        }
        self.guard.finish(Vec::new()).await.map(drop)
    }

    /// Gives the item back, not claimable before `delay` (timed by an etcd lease that nobody
    /// keeps alive: whole seconds, rounded up, and at least etcd's minimum lease TTL).
    pub async fn nack_after(&self, delay: Duration) -> Result<()> {
        if delay.is_zero() || self.attempts >= self.q.max_attempts {
            return self.nack().await;
        }
        let ttl = expiring::ttl_of(delay)?;
        if !self.guard.is_held() {
            return self.guard.finish(Vec::new()).await.map(drop);
        }
        let client = &self.q.client;
        let lease = expiring::grant(client, ttl).await?;
        let key = self.q.keys.delay_claim(&self.slot, lease);
        let r = self.guard.finish(vec![TxnOp::put(key.clone(), keys::DELAYED, Some(PutOptions::new().with_lease(lease)))]).await;
        if r.is_err() {
            expiring::discard_unless_used(client, lease, key);
        }
        r.map(drop)
    }


    /// A task's writes must stay out of the queue's own keys.
    fn check_ops(&self, ops: &[Op]) -> Result<()> {
        let name = self.q.keys.name();
        for op in ops {
            if crate::sync::queue::in_queue(name, op.key()) {
                return Err(Error::invalid(format!(
                    "a task's write must not touch the queue's own keys under {:?}",
                    format!("{}/", String::from_utf8_lossy(name))
                )));
            }
        }
        Ok(())
    }
}

/// Deletes the claim key (fenced: only this claim's) `limit` after now, unless the task is dropped
/// first. The guard's monitor then sees its key gone: the lost signal fires.
fn end_after(guard: &LockGuard, limit: Duration) -> tokio_util::sync::DropGuard {
    let stop = tokio_util::sync::CancellationToken::new();
    let (client, key, token) = (guard.client().clone(), guard.key().to_vec(), guard.fencing_token());
    let lost = guard.lost(); // starts the monitor, which reports the deletion
    let watch = stop.clone();
    crate::runtime::spawn(async move {
        tokio::select! {
            _ = watch.cancelled() => {}
            _ = lost.wait() => {}
            _ = tokio::time::sleep(limit) => {
                tracing::warn!(target: "etcdlock", key = %String::from_utf8_lossy(&key), "task claim ended: max_processing passed");
                let txn = || Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, token)]).and_then([TxnOp::delete(key.clone(), None)]);
                let _ = client.txn(txn, true).await;
            }
        }
    });
    stop.drop_guard()
}

/// Moves the item at `slot` to the dead letters and ends the claim, in one fenced Txn.
pub(super) async fn bury(guard: &LockGuard, k: &Keys, slot: &[u8], id: &str, attempts: u32, priority: i32, payload: &[u8]) -> Result<()> {
    tracing::info!(target: "etcdlock", queue = %String::from_utf8_lossy(k.name()), id, attempts, "task moved to the dead letters");
    guard
        .finish(vec![
            TxnOp::delete(k.item(slot), None),
            TxnOp::delete(k.attempts(slot), None),
            TxnOp::put(k.dead(id), keys::encode_dead(attempts, priority, payload), None),
            TxnOp::put(k.id(id), keys::DEAD, None),
        ])
        .await
        .map(drop)
}
