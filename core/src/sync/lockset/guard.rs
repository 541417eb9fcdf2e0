//! A held lock set: one fencing token, held while every member is, writes fenced by every
//! member at once, and one Txn to release them all.

use super::pending::fenced_delete;
use crate::client::kv::Op;
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::lease::lost::{LostFlag, LostReason, LostSignal};
use crate::sync::guard::LockGuard;
use etcd_client::{Compare, CompareOp, GetOptions, Txn, TxnOp, TxnOpResponse};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// etcd allows 128 operations per Txn (`--max-txn-ops`).
const MAX_OPS: usize = 128;

/// Proof of holding every member of a lock set, until [`LockSetGuard::release`], the loss of
/// any member, or drop (which releases in the background).
#[derive(Debug)]
pub struct LockSetGuard {
    client: Client,
    members: Vec<LockGuard>,
    token: i64,
    released: AtomicBool,
    /// Set by the first member lost (a task started by [`LockSetGuard::lost`]).
    lost: Arc<LostFlag>,
    watcher: OnceLock<tokio::task::AbortHandle>,
    acquired: std::time::Instant,
    /// The hold span, when traced (set once, after the acquire).
    hold: OnceLock<crate::sync::spans::LeaseHold>,
}

impl LockSetGuard {
    pub(super) fn new(client: Client, members: Vec<LockGuard>, token: i64) -> LockSetGuard {
        tracing::debug!(target: "etcdlock", members = members.len(), token, "lock set acquired");
        LockSetGuard { client, members, token, released: AtomicBool::new(false), lost: Arc::new(LostFlag::new()), watcher: OnceLock::new(), acquired: std::time::Instant::now(), hold: OnceLock::new() }
    }

    /// Opens the hold span (ended at release, drop or the first member's loss).
    pub(super) fn begin_hold(&self, span: tracing::Span) {
        if !span.is_disabled() {
            let _ = self.hold.set(crate::sync::spans::LeaseHold::start(span, self.lost()));
        }
    }

    /// The set's fencing token: the create revision every member's key shares, larger than
    /// every earlier holder's token of each member name.
    pub fn fencing_token(&self) -> i64 {
        self.token
    }

    /// The members' names, in the order the set was given them.
    pub fn names(&self) -> Vec<&[u8]> {
        self.members.iter().map(LockGuard::name).collect()
    }

    /// Each member's guard (its key, its own checks), in the set's order. Writes and release
    /// go through the set.
    pub fn members(&self) -> &[LockGuard] {
        &self.members
    }

    /// The [`Fence`](crate::Fence) of member `name` (its queue key at the set's token), for a
    /// database or a service to check; `InvalidArgument` if the set has no such member.
    pub async fn fence(&self, name: &[u8]) -> Result<crate::Fence> {
        match self.members.iter().find(|m| m.name() == name) {
            Some(m) => m.fence().await,
            None => Err(Error::invalid(format!("the lock set has no member {:?}", String::from_utf8_lossy(name)))),
        }
    }

    /// The ID of the one lease every member's key is attached to: the set is lost when it is.
    pub fn lease_id(&self) -> i64 {
        self.members[0].lease_id()
    }

    /// Cheap local check: not released, and no member known lost.
    pub fn is_held(&self) -> bool {
        !self.released.load(Ordering::Acquire) && self.lost_reason().is_none()
    }

    /// Whether [`LockSetGuard::release`] was called (successfully or not).
    pub fn is_released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }

    /// Why the set was lost (the first member's loss), if it was.
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.lost.reason().or_else(|| self.members.iter().find_map(LockGuard::lost_reason))
    }

    /// One call's view of the whole set (see [`LockGuard::health`]): `Held` while every member
    /// is, `Lost` with the first member's reason, `Released`; the name is the members' names
    /// joined by `,`, the exclusivity the earliest member's.
    pub fn health(&self) -> crate::Health {
        let state = crate::sync::health::state(self.is_released(), self.lost_reason());
        let name = self.members.iter().map(|m| String::from_utf8_lossy(m.name())).collect::<Vec<_>>().join(",");
        crate::Health::of(state, name, self.token, self.lease_id(), self.exclusive_until())
    }

    /// Fires once when any member is lost (not when the set is released).
    pub fn lost(&self) -> LostSignal {
        self.watcher.get_or_init(|| {
            let waits: Vec<_> = self.members.iter().map(|m| m.lost().wait()).collect();
            let flag = self.lost.clone();
            crate::runtime::spawn(async move {
                flag.set(super::join::first(waits).await);
            })
            .abort_handle()
        });
        self.lost.signal()
    }

    /// As [`LockGuard::exclusive_until`], for the whole set: `None` once any member may be held
    /// by another.
    pub fn exclusive_until(&self) -> Option<std::time::Instant> {
        self.earliest(LockGuard::exclusive_until)
    }

    /// As [`LockGuard::stop_by`], for the whole set.
    pub fn stop_by(&self) -> Option<std::time::Instant> {
        self.earliest(LockGuard::stop_by)
    }

    fn earliest(&self, f: impl Fn(&LockGuard) -> Option<std::time::Instant>) -> Option<std::time::Instant> {
        if self.is_released() {
            return None;
        }
        self.members.iter().map(f).collect::<Option<Vec<_>>>()?.into_iter().min()
    }

    /// Writes `value` at `key` only while every member is held (checked by etcd, atomically
    /// with the write). Returns the write's revision, or `NotHeld`.
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<i64> {
        self.txn(&[Op::put(key, value)]).await
    }

    /// Deletes `key` only while every member is held.
    pub async fn delete(&self, key: &[u8]) -> Result<i64> {
        self.txn(&[Op::delete(key)]).await
    }

    /// Applies `ops` atomically, only while every member is held; `NotHeld` otherwise, with
    /// nothing written. Not retried.
    pub async fn txn(&self, ops: &[Op]) -> Result<i64> {
        if ops.is_empty() || ops.len() >= MAX_OPS {
            return Err(Error::invalid(format!("a guarded transaction takes 1 to {} operations", MAX_OPS - 1)));
        }
        for op in ops {
            crate::client::validate::key(op.key())?;
            if let Some(m) = self.members.iter().find(|m| crate::sync::queue::in_queue(m.name(), op.key())) {
                return Err(Error::invalid(format!(
                    "a guarded write must not touch keys under a member's queue prefix {:?}: keep data outside `<name>/`",
                    format!("{}/", String::from_utf8_lossy(m.name()))
                )));
            }
        }
        self.check_held()?;
        let txn = || {
            let when: Vec<Compare> = self.members.iter().map(|m| Compare::create_revision(m.key().to_vec(), CompareOp::Equal, self.token)).collect();
            let check: Vec<TxnOp> = self.members.iter().map(|m| TxnOp::get(m.key().to_vec(), Some(GetOptions::new().with_keys_only()))).collect();
            Txn::new().when(when).and_then(ops.iter().map(Op::to_txn_op).collect::<Vec<_>>()).or_else(check)
        };
        let resp = self.client.txn(txn, false).await?;
        if resp.succeeded() {
            return Ok(resp.header().map_or(0, |h| h.revision()));
        }
        // Which members are gone: each is lost, and so is the set.
        for (m, r) in self.members.iter().zip(resp.op_responses()) {
            let still = matches!(r, TxnOpResponse::Get(g) if g.kvs().first().is_some_and(|kv| kv.create_revision() == self.token));
            if !still {
                m.mark_lost(LostReason::KeyDeleted);
            }
        }
        Err(not_held("a member of the lock set was lost: nothing written"))
    }

    /// Releases every member in one Txn (each key deleted only if it is still this set's).
    /// `NotHeld` if the set was already released or a member was lost; every key still there
    /// is deleted either way.
    pub async fn release(&self) -> Result<()> {
        let Some(hold) = self.hold.get() else {
            return self.release_untraced().await;
        };
        let name = self.names().iter().map(|n| String::from_utf8_lossy(n)).collect::<Vec<_>>().join(",");
        let span = crate::sync::spans::group_release(&name, None, self.token);
        let lost = self.lost_reason();
        use tracing::Instrument;
        let r = self.release_untraced().instrument(span.clone()).await;
        crate::sync::spans::ended(&span, &r, "released");
        hold.end("released", lost);
        r
    }

    async fn release_untraced(&self) -> Result<()> {
        crate::runtime::check_pid(self.client.inner.pid)?;
        if self.released.swap(true, Ordering::AcqRel) {
            return Err(not_held("the lock set was already released"));
        }
        self.stop_watcher();
        let was_lost = self.lost_reason();
        // Each member's monitor stops first: the release's own deletes are no loss.
        self.members.iter().for_each(|m| {
            m.begin_ending();
        });
        let maybe_twice = AtomicBool::new(false);
        let flag = &maybe_twice;
        let deletes: Vec<TxnOp> = self.members.iter().map(|m| fenced_delete(m.key(), Some(self.token))).collect();
        let resp = self
            .client
            .call(None, true, |rpc| {
                let (mut kv, txn) = (rpc.kv.get(), Txn::new().and_then(deletes.clone()));
                async move {
                    let (r, twice) = crate::transport::h2_channel::noting_second_send(kv.txn(txn)).await;
                    if twice || r.as_ref().is_err_and(crate::error::may_have_applied) {
                        flag.store(true, Ordering::Release);
                    }
                    r
                }
            })
            .await;
        let resp = match resp {
            Ok(resp) => resp,
            Err(e) => {
                // Reported, and the keys still go (a key left behind blocks its queue).
                self.members.iter().for_each(LockGuard::delete_after_ending);
                return Err(e);
            }
        };
        self.members.iter().for_each(LockGuard::finish_ending);
        // A request sent twice may find its own first copy's deletes done.
        let all_deleted = maybe_twice.load(Ordering::Acquire)
            || resp.op_responses().iter().all(|r| matches!(r, TxnOpResponse::Txn(t) if t.succeeded()));
        match (was_lost, all_deleted) {
            (None, true) => {
                let held = self.acquired.elapsed();
                tracing::debug!(target: "etcdlock", token = self.token, held_ms = held.as_millis() as u64, "lock set released");
                crate::sync::PerClient::of(&self.client).metrics.release(held, true);
                Ok(())
            }
            (Some(r), _) => Err(not_held(&format!("a member of the lock set was lost ({r}) before release"))),
            (None, false) => Err(not_held("a member's key was already gone at release")),
        }
    }

    fn check_held(&self) -> Result<()> {
        self.client.check_open()?;
        if self.is_released() {
            return Err(not_held("the lock set was released"));
        }
        match self.lost_reason() {
            None => Ok(()),
            Some(r) => Err(not_held(&format!("a member of the lock set was lost ({r})"))),
        }
    }

    fn stop_watcher(&self) {
        if let Some(w) = self.watcher.get() {
            w.abort();
        }
    }
}

impl Drop for LockSetGuard {
    fn drop(&mut self) {
        // Each member's guard deletes its key in the background when dropped unreleased.
        self.released.store(true, Ordering::Release);
        self.stop_watcher();
    }
}

fn not_held(msg: &str) -> Error {
    Error::new(ErrorKind::NotHeld, msg)
}
