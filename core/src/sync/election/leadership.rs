//! Leading an election: the fencing token, proclamations and resignation, all fenced.

use crate::client::kv::Op;
use crate::error::Result;
use crate::lease::lost::{LostReason, LostSignal};
use crate::sync::guard::LockGuard;

/// Proof of leading an election, until [`Leadership::resign`], loss or drop (which resigns in
/// the background). Everything it writes is fenced: applied by etcd only while this candidate's
/// key is still the one that won, so a deposed leader (a paused process, a lost lease) writes
/// nothing. Leading is only as good as the lease: see [`LockGuard`].
#[derive(Debug)]
pub struct Leadership {
    guard: LockGuard,
}

impl Leadership {
    pub(super) fn new(guard: LockGuard) -> Leadership {
        Leadership { guard }
    }

    /// The lock guard underneath: proclaiming is [`LockGuard::set_value`], resigning is
    /// [`LockGuard::release`] (for bindings that keep one kind of handle).
    pub fn into_guard(self) -> LockGuard {
        self.guard
    }

    /// The leader's key, `<name>/<lease hex>`.
    pub fn key(&self) -> &[u8] {
        self.guard.key()
    }

    /// The key's create revision: greater than every earlier leader's.
    pub fn fencing_token(&self) -> i64 {
        self.guard.fencing_token()
    }

    /// The ID of the lease the leader's key is attached to: leadership ends when it does.
    pub fn lease_id(&self) -> i64 {
        self.guard.lease_id()
    }

    /// This term's [`Fence`](crate::Fence), for a database or a service to check (as a lock
    /// guard's: [`LockGuard::fence`]).
    pub async fn fence(&self) -> Result<crate::Fence> {
        self.guard.fence().await
    }

    /// Cheap local check: not resigned, not lost, and the lease's conservative local deadline
    /// has not passed.
    pub fn is_leader(&self) -> bool {
        self.guard.is_held()
    }

    /// Why leadership was lost, if it was.
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.guard.lost_reason()
    }

    /// The moment before which etcd cannot let another candidate lead: see
    /// [`LockGuard::exclusive_until`].
    pub fn exclusive_until(&self) -> Option<std::time::Instant> {
        self.guard.exclusive_until()
    }

    /// One call's view of this term for a health endpoint: `Held` while leading, `Lost` or
    /// `Released` (resigned) after (see [`LockGuard::health`]). A readiness probe answers 200
    /// while [`Health::is_ok`](crate::Health::is_ok): "this pod is the leader".
    pub fn health(&self) -> crate::Health {
        self.guard.health()
    }

    /// Fires once when leadership is lost (not when it is resigned).
    pub fn lost(&self) -> LostSignal {
        self.guard.lost()
    }

    /// Replaces the leader's value (what [`Election::leader`](super::Election::leader), observers
    /// and `etcdctl elect -l` see), only while still leader: `NotHeld` with nothing written
    /// otherwise. Returns the write's revision.
    pub async fn proclaim(&self, value: impl AsRef<[u8]>) -> Result<i64> {
        self.guard.set_value(value.as_ref()).await
    }

    /// Steps down: deletes the leader's key if it is still this one's (the next candidate
    /// leads). `NotHeld` if already resigned or lost.
    pub async fn resign(&self) -> Result<()> {
        self.guard.release().await
    }

    /// Writes `value` at `key` only while still leader (see [`LockGuard::put`]).
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<i64> {
        self.guard.put(key, value).await
    }

    /// Deletes `key` only while still leader.
    pub async fn delete(&self, key: &[u8]) -> Result<i64> {
        self.guard.delete(key).await
    }

    /// Applies `ops` atomically, only while still leader (see [`LockGuard::txn`]).
    pub async fn txn(&self, ops: &[Op]) -> Result<i64> {
        self.guard.txn(ops).await
    }
}
