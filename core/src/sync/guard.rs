//! A held lock: its fencing token, a cheap local "held" check, the lost signal, fenced writes
//! and a fenced release.

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::client::kv::Op;
use crate::lease::Lease;
use crate::lease::lost::{LostFlag, LostReason, LostSignal};
use crate::sync::monitor;
use crate::sync::mutex::Kind;
use crate::runtime;
use crate::sync::session::Use;
use crate::watch::hub::Subscription;
use etcd_client::{Compare, CompareOp, Txn, TxnOp};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::time::Instant;

/// etcd allows 128 operations per Txn.
const MAX_OPS: usize = 128;

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
pub(crate) struct Shared {
    pub client: Client,
    name: Arc<[u8]>,
    pub key: Vec<u8>,
    /// (name hash, number) of the key on its lease, freed once the key is deleted.
    slot: (u64, u64),
    pub token: i64,
    pub lease: Lease,
    pub lost: LostFlag,
    pub released: AtomicBool,
    /// Set while a Txn of the holder's own that deletes the key is in flight (a pool's turn
    /// ending with its claim): the key's delete is then no loss to report.
    pub ending: AtomicBool,
    /// Stops the monitor task, once it started (see [`Shared::mark_released`]).
    pub monitor: OnceLock<tokio::task::AbortHandle>,
    pub acquired: Instant,
    /// Whether the monitor task was started (see `monitor`).
    pub monitored: AtomicBool,
    /// Keeps the client's shared lease from being swept until released.
    lease_use: std::sync::Mutex<Option<Use>>,
    /// The rule the key held by, which says how it stores a value.
    kind: Kind,
    /// The key's mod revision after this guard's last `set_value` (at first its create revision,
    /// the token): each one compares against it (see `sync/ordered.rs`), one at a time.
    value_rev: tokio::sync::Mutex<i64>,
    /// The `etcdlock.hold` (or `etcdlock.lead`) span, from [`LockGuard::begin_hold`] until the
    /// hold ends (see `sync/spans.rs`).
    hold: std::sync::Mutex<Option<tracing::Span>>,
}

impl LockGuard {
    #[allow(clippy::too_many_arguments)] // one call site, in mutex/mod.rs
    pub(crate) fn new(
        client: Client,
        name: Arc<[u8]>,
        key: Vec<u8>,
        slot: (u64, u64),
        token: i64,
        lease: Lease,
        own_sub: Option<Subscription>,
        lease_use: Option<Use>,
        kind: Kind,
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
            ending: AtomicBool::new(false),
            monitor: OnceLock::new(),
            acquired: Instant::now(),
            monitored: AtomicBool::new(false),
            lease_use: std::sync::Mutex::new(lease_use),
            kind,
            value_rev: tokio::sync::Mutex::new(token),
            hold: std::sync::Mutex::new(None),
        });
        tracing::debug!(target: "etcdlock", lock = %shared.name(), token, lease = format_args!("{:x}", shared.lease.id()), "lock acquired");
        match own_sub {
            // A long wait already watches the key: keep watching.
            Some(sub) => monitor::start(&shared, Some(sub)),
            None => super::PerClient::of(&shared.client).monitors.push(Arc::downgrade(&shared)),
        }
        LockGuard { shared }
    }

    pub(crate) fn client(&self) -> &Client {
        &self.shared.client
    }

    /// Gives the hold its span, once the acquire call returns it; ends that span at once if the
    /// hold already ended. Pairs with `Shared::mark_lost`, which sets the lost flag before it
    /// takes the span: either it finds the span here, or this sees the flag.
    pub(crate) fn begin_hold(&self, span: tracing::Span) {
        if span.is_disabled() {
            return;
        }
        let s = &self.shared;
        let mut hold = s.hold.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(reason) = s.lost.reason() {
            crate::sync::spans::end_lost(span, reason);
        } else if s.released.load(Ordering::Acquire) {
            crate::sync::spans::end_hold(span, "released");
        } else {
            *hold = Some(span);
        }
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

    /// The ID of the lease the queue key is attached to: the lock is held only while it lives
    /// (its loss is what [`LockGuard::lost`] reports). With
    /// [`Mutex::with_lease`](crate::Mutex::with_lease), the lease that was given.
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
            self.shared.mark_lost(r);
        } else if self.shared.client.is_closed() {
            self.shared.mark_lost(LostReason::Closed);
        }
        self.shared.lost.reason()
    }

    /// The moment before which etcd cannot hand this lock to anyone else, as far as this
    /// process knows: when its lease could expire on the server at the earliest (see
    /// [`Lease::expires_no_sooner_than`]). `None` when another may hold it already: the key
    /// was deleted, the lease revoked or reported gone, the client closed, or the lock was
    /// released. After a loss at the local deadline ([`LostReason::Expired`]) it is a safety
    /// margin after that loss: the time left to stop whatever the lock protected, and what
    /// the `etcdlock run` command line bounds its kill grace by.
    ///
    /// ```no_run
    /// # async fn demo(guard: etcdlock::LockGuard) {
    /// guard.lost().wait().await;
    /// match guard.exclusive_until() {
    ///     Some(t) => println!("stop within {:?}", t.saturating_duration_since(std::time::Instant::now())),
    ///     None => println!("another holder may run already: stop now"),
    /// }
    /// # }
    /// ```
    pub fn exclusive_until(&self) -> Option<std::time::Instant> {
        match self.lost_reason() {
            _ if self.is_released() => None,
            None | Some(LostReason::Expired) => self.shared.lease.expires_no_sooner_than(),
            Some(_) => None,
        }
    }

    /// The moment by which whatever this lock protects must have stopped, for a holder that
    /// stops it by force (as `etcdlock run` kills its command): half the safety margin after
    /// the local deadline (see [`Lease::stop_by`](crate::Lease::stop_by)), so that the other
    /// half still covers clock-rate differences and scheduling before
    /// [`exclusive_until`](Self::exclusive_until). `None` when that is `None`.
    pub fn stop_by(&self) -> Option<std::time::Instant> {
        match self.lost_reason() {
            _ if self.is_released() => None,
            None | Some(LostReason::Expired) => self.shared.lease.stop_by(),
            Some(_) => None,
        }
    }

    /// Fires once when the lease this lock is on is lost (without starting the monitor of the
    /// key: for a hold that ends by a Txn of its own, as a pool's turn does).
    pub(crate) fn lease_lost(&self) -> LostSignal {
        self.shared.lease.lost()
    }

    /// One call's view of the hold, for a health endpoint or a readiness probe: held, lost
    /// (why) or released, the name, the token, and until when it is certainly exclusive (see
    /// [`Health`](crate::Health)). Local reads only. Read from the state the lost signal is set
    /// from, so it says not ok no later than [`LockGuard::lost`] fires.
    ///
    /// ```no_run
    /// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
    /// let guard = client.mutex("jobs/lock", 10)?.lock().await?;
    /// let h = guard.health();
    /// assert!(h.is_ok() && h.fencing_token == guard.fencing_token());
    /// guard.release().await?;
    /// assert_eq!(guard.health().state, etcdlock::HoldState::Released);
    /// assert!(!guard.health().is_ok());
    /// # Ok(()) }
    /// ```
    pub fn health(&self) -> crate::Health {
        let state = crate::sync::health::state(self.is_released(), self.lost_reason());
        crate::Health::of(state, self.shared.name().into_owned(), self.shared.token, self.lease_id(), self.exclusive_until())
    }

    /// Fires once when the lock is lost (not when it is released).
    pub fn lost(&self) -> LostSignal {
        monitor::start(&self.shared, None);
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
            crate::client::validate::key(op.key())?;
            if crate::sync::queue::in_queue(&self.shared.name, op.key()) {
                // Under `<name>/` a key without a lease is skipped by the queue, but etcd's Go
                // mutex and `etcdctl lock` would wait for it forever.
                return Err(Error::invalid(format!(
                    "a guarded write must not touch keys under the lock's queue prefix {:?}: keep data outside `<name>/`",
                    format!("{}/", String::from_utf8_lossy(&self.shared.name))
                )));
            }
        }
        self.fenced(|| ops.iter().map(Op::to_txn_op).collect()).await
    }

    /// Replaces the value this acquisition's queue key carries (what [`Client::inspect`]
    /// shows; for an election, the leader's value), only while it is held: `NotHeld` and
    /// nothing written otherwise. At most [`MAX_LOCK_VALUE_LEN`](crate::MAX_LOCK_VALUE_LEN)
    /// bytes. Returns the write's revision. Idempotent, so retried; values land in the order of
    /// the calls (one at a time), and a late copy of an earlier call never overwrites a later
    /// value.
    ///
    /// [`Client::inspect`]: crate::Client::inspect
    pub async fn set_value(&self, value: &[u8]) -> Result<i64> {
        crate::client::validate::check_lock_value(value)?;
        self.check_held()?;
        let s = &self.shared;
        let stored = s.kind.stored(value);
        let token = s.token;
        let put = crate::sync::ordered::OrderedPut {
            client: &s.client,
            key: &s.key,
            ours: Compare::create_revision(s.key.clone(), CompareOp::Equal, token),
            is_ours: &|kv| kv.create_revision == token,
            lease: s.lease.id(),
        };
        let mut last = s.value_rev.lock().await;
        match put.put(stored.as_ref(), &mut last).await? {
            Some(revision) => Ok(revision),
            None => {
                s.mark_lost(LostReason::KeyDeleted);
                Err(not_held("the lock key is gone: the lock was lost"))
            }
        }
    }

    /// `ops` in one Txn that applies only while this acquisition's key has its create revision.
    async fn fenced(&self, ops: impl Fn() -> Vec<TxnOp>) -> Result<i64> {
        let resp = self.fenced_response(ops, false).await?;
        Ok(resp.header().map_or(0, |h| h.revision()))
    }

    /// [`LockGuard::fenced`], answering with etcd's response (for recipes whose fenced Txn
    /// reads too); `idempotent`: it may be sent again.
    pub(crate) async fn fenced_response(&self, ops: impl Fn() -> Vec<TxnOp>, idempotent: bool) -> Result<etcd_client::TxnResponse> {
        self.fenced_response_when(Vec::new(), ops, idempotent).await
    }

    /// [`LockGuard::fenced_response`] with more conditions (a pool's slot keys): when one of
    /// them fails, `NotHeld` too, the lock's key being still there or not.
    pub(crate) async fn fenced_response_when(&self, when: Vec<Compare>, ops: impl Fn() -> Vec<TxnOp>, idempotent: bool) -> Result<etcd_client::TxnResponse> {
        self.check_held()?;
        let key = &self.shared.key;
        let txn = || {
            let mut all = vec![Compare::create_revision(key.clone(), CompareOp::Equal, self.shared.token)];
            all.extend(when.iter().cloned());
            // With more conditions, a failure reads the key: was it they or the hold that failed?
            let check = if when.is_empty() { vec![] } else { vec![TxnOp::get(key.clone(), None)] };
            Txn::new().when(all).and_then(ops()).or_else(check)
        };
        let resp = self.shared.client.txn(txn, idempotent).await?;
        if !resp.succeeded() {
            let still = resp.op_responses().into_iter().any(|r| matches!(r, etcd_client::TxnOpResponse::Get(g) if g.kvs().first().is_some_and(|kv| kv.create_revision() == self.shared.token)));
            if still {
                return Err(not_held("what this hold's write was conditioned on changed: nothing written"));
            }
            self.shared.mark_lost(LostReason::KeyDeleted);
            return Err(not_held("the lock key is gone: the lock was lost"));
        }
        Ok(resp)
    }

    /// Ends the hold with `ops` and the delete of this acquisition's key in one fenced Txn (a
    /// task's ack: the item and its claim go together). `NotHeld` with nothing written if it was
    /// released or lost. When the outcome is unknown (etcd unreachable), the key alone is still
    /// deleted, fenced, in the background: the hold ends either way.
    pub(crate) async fn finish(&self, ops: Vec<TxnOp>) -> Result<i64> {
        self.finish_when(Vec::new(), ops).await
    }

    /// [`LockGuard::finish`] with more conditions: if one fails, the key alone is deleted
    /// (fenced) and the answer is `NotHeld`.
    pub(crate) async fn finish_when(&self, when: Vec<Compare>, ops: Vec<TxnOp>) -> Result<i64> {
        self.check_held()?;
        if !self.shared.mark_released() {
            return Err(not_held("the lock was already released"));
        }
        let s = &self.shared;
        s.end_hold(s.lost.reason(), "released");
        let txn = || {
            let mut all = ops.clone();
            all.push(TxnOp::delete(s.key.clone(), None));
            let mut cond = vec![Compare::create_revision(s.key.clone(), CompareOp::Equal, s.token)];
            cond.extend(when.iter().cloned());
            Txn::new().when(cond).and_then(all)
        };
        let r = match s.client.txn(txn, false).await {
            Ok(resp) if resp.succeeded() => {
                s.lease.state().free_slot(s.slot);
                Ok(resp.header().map_or(0, |h| h.revision()))
            }
            Ok(_) if !when.is_empty() => {
                s.delete_in_background();
                Err(not_held("what this hold fenced changed: it was lost"))
            }
            Ok(_) => {
                s.lease.state().free_slot(s.slot);
                Err(not_held("the lock key is gone: the lock was lost"))
            }
            Err(e) => {
                s.delete_in_background();
                Err(e)
            }
        };
        s.lease_use.lock().unwrap_or_else(|e| e.into_inner()).take();
        r
    }

    /// Marks the hold lost (a lock set's fenced write found this key gone).
    pub(crate) fn mark_lost(&self, reason: LostReason) {
        self.shared.mark_lost(reason);
    }

    /// Marks the hold released before a Txn of the caller's deletes its key (a lock set's
    /// release), so that its monitor does not take that delete for a loss. False if it was
    /// released before. Then [`LockGuard::finish_ending`] once the Txn answered, or
    /// [`LockGuard::delete_after_ending`] if it did not.
    pub(crate) fn begin_ending(&self) -> bool {
        let first = self.shared.mark_released();
        if first {
            self.shared.end_hold(self.shared.lost.reason(), "released");
        }
        first
    }

    /// After [`LockGuard::begin_ending`]: the caller's Txn answered; nothing more to send.
    pub(crate) fn finish_ending(&self) {
        let s = &self.shared;
        s.lease.state().free_slot(s.slot);
        s.lease_use.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// After [`LockGuard::begin_ending`]: the caller's Txn did not answer; the key still goes,
    /// in the background.
    pub(crate) fn delete_after_ending(&self) {
        let s = &self.shared;
        s.delete_in_background();
        s.lease_use.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// A Txn of the caller's that deletes this key is (`true`) or is no longer (`false`) in flight.
    pub(crate) fn set_ending(&self, on: bool) {
        self.shared.ending.store(on, Ordering::Release);
    }

    /// The hold ended by a fenced Txn of the caller's that deleted this key (a pool's claim):
    /// nothing more to send.
    pub(crate) fn ended_by_caller(&self) {
        if self.begin_ending() {
            self.finish_ending();
        }
    }

    /// Releases the lock: deletes this acquisition's queue key if it is still ours (fenced: a
    /// retried or late release can never delete a newer holder's key). `NotHeld` if it was already
    /// released or lost; the key is still removed if it was there.
    pub async fn release(&self) -> Result<()> {
        use tracing::Instrument;
        let span = crate::sync::spans::release(&self.shared.name, self.shared.token);
        let r = self.release_checked().instrument(span.clone()).await;
        crate::sync::spans::ended(&span, &r, "released");
        if r.is_err() {
            super::PerClient::of(&self.shared.client).metrics.release(std::time::Duration::ZERO, false);
        }
        r
    }

    async fn release_checked(&self) -> Result<()> {
        runtime::check_pid(self.shared.client.inner.pid)?;
        if !self.shared.mark_released() {
            return Err(not_held("the lock was already released"));
        }
        let was_lost = self.lost_reason();
        self.shared.end_hold(was_lost, "released");
        let deleted = self.shared.delete_key().await;
        if deleted.as_ref().is_err_and(Error::is_unreachable) {
            // Reported to the caller, and the key still goes: a queue key left behind would
            // block every waiter for as long as the client keeps its lease alive.
            self.shared.delete_in_background();
        }
        self.shared.lease_use.lock().unwrap_or_else(|e| e.into_inner()).take();
        let deleted = deleted?;
        match (was_lost, deleted) {
            (None, true) => {
                let held = self.shared.acquired.elapsed();
                tracing::debug!(target: "etcdlock", lock = %self.shared.name(), token = self.shared.token, held_ms = held.as_millis() as u64, "lock released");
                super::PerClient::of(&self.shared.client).metrics.release(held, true);
                Ok(())
            }
            (Some(r), _) => Err(not_held(&format!("the lock was lost ({r}) before release"))),
            // Not marked lost: the lost signal fires for a loss, never once release began, and
            // a key gone at release may be the release's own delete by a way `delete_key` cannot
            // see.
            (None, false) => Err(not_held("the lock key was already gone at release")),
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
    fn name(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }

    /// Marks the lock lost (the first reason sticks), and says so once.
    pub(crate) fn mark_lost(&self, reason: LostReason) {
        self.lost.set_and(reason, || {
            if !self.released.load(Ordering::Acquire) && !self.ending.load(Ordering::Acquire) {
                let held = self.acquired.elapsed();
                tracing::warn!(target: "etcdlock", lock = %self.name(), token = self.token, reason = %reason, held_ms = held.as_millis() as u64, "lock lost: it may be held by another client now");
                super::PerClient::of(&self.client).metrics.lost(reason, held);
                self.end_hold(Some(reason), "lost");
            }
        });
    }

    /// Ends the hold's span, if it has one still: lost for `lost`, else `outcome`.
    fn end_hold(&self, lost: Option<LostReason>, outcome: &str) {
        let span = self.hold.lock().unwrap_or_else(|e| e.into_inner()).take();
        match (span, lost) {
            (Some(span), Some(reason)) => crate::sync::spans::end_lost(span, reason),
            (Some(span), None) => crate::sync::spans::end_hold(span, outcome),
            (None, _) => {}
        }
    }

    /// Marks the guard released and stops its monitor, if one started; false if it was
    /// released before. Pairs with `monitor::start`: each side writes its flag, then reads the
    /// other's (SeqCst), so either `start` sees `released` or this sees the monitor's handle.
    pub(crate) fn mark_released(&self) -> bool {
        if self.released.swap(true, Ordering::SeqCst) {
            return false;
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        if let Some(monitor) = self.monitor.get() {
            monitor.abort();
        }
        true
    }

    /// Deletes the key in the background (see [`crate::sync::queue::delete_in_background`]).
    fn delete_in_background(self: &Arc<Self>) {
        let shared = self.clone();
        crate::sync::queue::delete_in_background(self.client.clone(), &self.key, self.lease.state().clone(), None, move || {
            let shared = shared.clone();
            async move { shared.delete_key().await.map(drop) }
        });
    }

    /// Deletes the key only if it is still this acquisition's (create revision == token);
    /// returns whether it was. Fenced, so a retried or late release can never delete a newer
    /// holder's key (etcd's Go mutex deletes by name: etcd-io/etcd#22082).
    ///
    /// When an attempt's reply is lost (a connection reset) it is sent again, and that finds the
    /// key already gone, deleted by the first one; so does the copy the channel sends to a
    /// second member when the first stays silent (`h2_channel`). An attempt that may have been
    /// applied counts as the delete. (An operator deleting the key in that same moment cannot be
    /// told apart.)
    async fn delete_key(&self) -> Result<bool> {
        let maybe_deleted = AtomicBool::new(false);
        let flag = &maybe_deleted;
        let resp = self
            .client
            .call(None, true, |rpc| {
                let txn = Txn::new()
                    .when([Compare::create_revision(self.key.clone(), CompareOp::Equal, self.token)])
                    .and_then([TxnOp::delete(self.key.clone(), None)]);
                let mut kv = rpc.kv.get();
                async move {
                    let (r, twice) = crate::transport::h2_channel::noting_second_send(kv.txn(txn)).await;
                    if twice || r.as_ref().is_err_and(crate::error::may_have_applied) {
                        flag.store(true, Ordering::Release);
                    }
                    r
                }
            })
            .await?;
        // Either way no key of ours has this name any more: the number may be reused.
        self.lease.state().free_slot(self.slot);
        Ok(resp.succeeded() || maybe_deleted.load(Ordering::Acquire))
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let s = &self.shared;
        if !s.mark_released() {
            return;
        }
        s.end_hold(s.lost.reason(), "dropped");
        if runtime::check_pid(s.client.inner.pid).is_err()
            || s.client.is_closed()
        {
            return;
        }
        s.delete_in_background();
    }
}

fn not_held(msg: &str) -> Error {
    Error::new(ErrorKind::NotHeld, msg)
}
