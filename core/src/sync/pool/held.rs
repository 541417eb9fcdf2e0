//! What an acquire from a pool returns: the slots it holds, a token per slot and one for the
//! acquisition, the lost signal, fenced writes, and release.

use crate::client::kv::Op;
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::lease::lost::{LostReason, LostSignal};
use crate::lease::Lease;
use crate::sync::pool::board::{Board, Keys};
use crate::sync::pool::claim::Taken;
use crate::sync::session::Use;
use etcd_client::{Compare, CompareOp, Txn, TxnOp};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Slots held from a pool, until [`PoolGuard::release`] (or the holder's lease ends). Clones
/// share the one holding (an acquire with the same `owner` returns a clone). The slot keys live
/// on the client's lease for the pool's TTL, kept alive while held; the last clone dropped
/// without a release gives the slots back in the background.
#[derive(Debug, Clone)]
pub struct PoolGuard {
    pub(crate) inner: Arc<Held>,
}

#[derive(Debug)]
pub(crate) struct Held {
    pub(crate) lease: Lease,
    /// Keeps the shared lease from being revoked as idle while the slots are held.
    pub(crate) lease_use: std::sync::Mutex<Option<Use>>,
    pub(crate) keys: Keys,
    pub(crate) slots: Taken,
    pub(crate) token: i64,
    pub(crate) owner: Option<String>,
    pub(crate) released: AtomicBool,
    /// When the slots were taken (the metrics' hold time).
    pub(crate) since: std::time::Instant,
    /// The hold span, when traced (set once, after the acquire).
    pub(crate) hold: std::sync::OnceLock<crate::sync::spans::LeaseHold>,
}

impl Held {
    pub(crate) fn is_held(&self) -> bool {
        !self.released.load(Ordering::Acquire) && self.lease.lost_reason().is_none()
    }

    fn check_held(&self) -> Result<()> {
        self.lease.client().check_open()?;
        if self.released.load(Ordering::Acquire) {
            return Err(Error::new(ErrorKind::NotHeld, "the slots were released"));
        }
        match self.lease.lost_reason() {
            None => Ok(()),
            Some(r) => Err(Error::new(ErrorKind::NotHeld, format!("the slots were lost ({r})"))),
        }
    }

    /// Every slot key still the one this holding made.
    fn fences(&self) -> Vec<Compare> {
        self.slots.iter().map(|(s, token)| Compare::create_revision(self.keys.slot(s), CompareOp::Equal, *token)).collect()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let client = self.lease.client();
        if !self.released.swap(true, Ordering::AcqRel) && crate::runtime::check_pid(client.inner.pid).is_ok() && !client.is_closed() {
            undo(client, &self.keys, &self.slots);
        }
    }
}

impl PoolGuard {
    /// The slot ids held, in the pool's order.
    pub fn slots(&self) -> Vec<&str> {
        self.inner.slots.iter().map(|(s, _)| s.as_str()).collect()
    }
    /// Each slot with its fencing token: its key's create revision, larger for every later
    /// holder of that slot.
    pub fn tokens(&self) -> &[(String, i64)] {
        &self.inner.slots
    }
    /// The acquisition's fencing token (its request's create revision): larger for every
    /// later acquisition from this pool.
    pub fn fencing_token(&self) -> i64 {
        self.inner.token
    }
    /// The [`PoolAcquire::owner`](crate::PoolAcquire::owner) the slots were acquired with.
    pub fn owner(&self) -> Option<&str> {
        self.inner.owner.as_deref()
    }
    /// The ID of the lease the slot keys are attached to: the holding ends when it does.
    pub fn lease_id(&self) -> i64 {
        self.inner.lease.id()
    }
    /// A local check: neither released nor known lost.
    pub fn is_held(&self) -> bool {
        self.inner.is_held()
    }
    /// Why the holding was lost (its lease expired, was revoked, or the client closed), if it
    /// was; `None` while held and after a release.
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.inner.lease.lost_reason()
    }
    /// One call's view of the holding (see [`LockGuard::health`](crate::LockGuard::health)):
    /// `Held` until released or its lease is lost; the name is the pool's, the token the
    /// acquisition's. Read from the lease's lost flag, which [`PoolGuard::lost`] fires from.
    pub fn health(&self) -> crate::Health {
        let h = &self.inner;
        let released = h.released.load(Ordering::Acquire);
        let lost = h.lease.lost_reason();
        let until = match lost {
            _ if released => None,
            None | Some(LostReason::Expired) => h.lease.expires_no_sooner_than(),
            Some(_) => None,
        };
        let state = crate::sync::health::state(released, lost);
        crate::Health::of(state, String::from_utf8_lossy(h.keys.name()).into_owned(), h.token, h.lease.id(), until)
    }
    /// Fires once if the holding is lost (its lease ended): stop using the slots; another
    /// holder may get them after the reuse delay.
    pub fn lost(&self) -> LostSignal {
        self.inner.lease.lost()
    }
    /// The moment by which the slots must no longer be used, as a lock guard's
    /// [`stop_by`](crate::LockGuard::stop_by); `None` once released or lost.
    pub fn stop_by(&self) -> Option<std::time::Instant> {
        match self.inner.lease.lost_reason() {
            _ if self.inner.released.load(Ordering::Acquire) => None,
            None | Some(LostReason::Expired) => self.inner.lease.stop_by(),
            Some(_) => None,
        }
    }

    /// Writes `value` at `key` only while every slot is held (`NotHeld`, nothing written,
    /// otherwise).
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<i64> {
        self.txn(&[Op::put(key, value)]).await
    }
    /// Deletes `key` only while every slot is held.
    pub async fn delete(&self, key: &[u8]) -> Result<i64> {
        self.txn(&[Op::delete(key)]).await
    }
    /// Applies `ops` atomically, only while every slot is held. Keys under `<pool>/` are
    /// refused with `InvalidArgument`.
    pub async fn txn(&self, ops: &[Op]) -> Result<i64> {
        let h = &self.inner;
        let name = h.keys.name();
        if ops.is_empty() || ops.len() > 64 {
            return Err(Error::invalid("a fenced transaction takes 1 to 64 operations"));
        }
        if let Some(op) = ops.iter().find(|op| crate::sync::queue::in_queue(name, op.key())) {
            return Err(Error::invalid(format!(
                "a pool holder's write must not touch the pool's own keys under {:?} (got {:?})",
                format!("{}/", String::from_utf8_lossy(name)),
                String::from_utf8_lossy(op.key())
            )));
        }
        for op in ops {
            crate::client::validate::key(op.key())?;
        }
        h.check_held()?;
        let txn = || Txn::new().when(h.fences()).and_then(ops.iter().map(Op::to_txn_op).collect::<Vec<_>>());
        let resp = h.lease.client().txn(txn, false).await?;
        if !resp.succeeded() {
            return Err(Error::new(ErrorKind::NotHeld, "a slot of this holding is gone: nothing written"));
        }
        Ok(resp.header().map_or(0, |h| h.revision()))
    }

    /// The [`Fence`](crate::Fence) of slot `slot` of this holding (its key `<pool>/slot/<id>`,
    /// created at its token), for a database or a service to check; `InvalidArgument` if the
    /// holding has no such slot.
    pub async fn fence(&self, slot: &str) -> Result<crate::Fence> {
        let h = &self.inner;
        let Some((_, token)) = h.slots.iter().find(|(s, _)| s == slot) else {
            return Err(Error::invalid(format!("this holding has no slot {slot:?} (it holds {:?})", self.slots())));
        };
        let cluster = h.lease.client().cluster_id().await?;
        Ok(crate::Fence { kind: crate::FenceKind::Key, name: h.keys.slot(slot), token: *token, cluster })
    }

    /// Gives every slot back at once (each free for the next request), in one Txn that applies
    /// only while they are this holding's. `NotHeld` if already released or lost.
    pub async fn release(&self) -> Result<()> {
        let h = &self.inner;
        let Some(hold) = h.hold.get() else {
            return self.release_untraced().await;
        };
        let slots = self.slots().join(",");
        let span = crate::sync::spans::group_release(&String::from_utf8_lossy(h.keys.name()), Some(&slots), h.token);
        use tracing::Instrument;
        let r = self.release_untraced().instrument(span.clone()).await;
        crate::sync::spans::ended(&span, &r, "released");
        hold.end("released", h.lease.lost_reason());
        r
    }

    async fn release_untraced(&self) -> Result<()> {
        let h = &self.inner;
        h.lease.client().check_open()?;
        if h.released.swap(true, Ordering::AcqRel) {
            return Err(Error::new(ErrorKind::NotHeld, "the slots were already released"));
        }
        let lost = h.lease.lost_reason();
        let mut ops = Vec::new();
        for (s, _) in &h.slots {
            ops.extend([TxnOp::delete(h.keys.slot(s), None), TxnOp::put(h.keys.free(s), Vec::new(), None)]);
        }
        let r = h.lease.client().txn(|| Txn::new().when(h.fences()).and_then(ops.clone()), false).await;
        h.lease_use.lock().unwrap_or_else(|e| e.into_inner()).take();
        match r {
            Ok(resp) if resp.succeeded() && lost.is_none() => {
                crate::sync::PerClient::of(h.lease.client()).metrics.release(h.since.elapsed(), true);
                Ok(())
            }
            Ok(_) => Err(Error::new(ErrorKind::NotHeld, format!("the slots were lost ({}) before release", lost.map_or("a slot key is gone".into(), |r| r.to_string())))),
            Err(e) => {
                undo(h.lease.client(), &h.keys, &h.slots);
                Err(e)
            }
        }
    }
}

/// In the background: gives back the slots in `taken` that are still those keys (after a
/// release whose outcome is unknown, or an acquire that failed after taking them).
pub(crate) fn undo(client: &Client, keys: &Keys, taken: &Taken) {
    let (client, keys, taken) = (client.clone(), keys.clone(), taken.clone());
    crate::runtime::spawn_cleanup(async move {
        for (s, token) in taken {
            let (slot, free) = (keys.slot(&s), keys.free(&s));
            let txn = || {
                Txn::new()
                    .when([Compare::create_revision(slot.clone(), CompareOp::Equal, token)])
                    .and_then([TxnOp::delete(slot.clone(), None), TxnOp::put(free.clone(), Vec::new(), None)])
            };
            let _ = client.txn(txn, true).await;
        }
    });
}

/// In the background: gives back any slot whose key holds `value` (an acquire's claim Txn whose
/// outcome is unknown).
pub(crate) fn undo_by_value(client: &Client, keys: &Keys, value: Vec<u8>) {
    let (c, keys2) = (client.clone(), keys.clone());
    crate::runtime::spawn_cleanup(async move {
        if let Ok(board) = Board::read(&c, &keys2).await {
            let taken: Taken = board.held.iter().filter(|(_, kv)| kv.value == value).map(|(s, kv)| (s.clone(), kv.create_revision)).collect();
            undo(&c, &keys2, &taken);
        }
    });
}
