//! The fair mutex: FIFO by the create revision of each waiter's queue key, waiters watching
//! only their immediate predecessor, every wait bounded and cleaned up.
//!
//! Layout: waiter keys live directly under `<name>/`, bound to the waiter's lease, exactly like
//! etcd's Go `concurrency.Mutex` and `etcdctl lock <name>`, so all of them share one queue.
//! See `docs/design.md` for the algorithm and its round trips.

mod cleanup;
mod enqueue;
mod hints;
mod kind;
mod member;
pub(crate) mod permits;
mod placed;
pub(crate) mod readers;
mod wait;

use cleanup::PendingKey;
use hints::hash_name;
pub(crate) use hints::QueueHints;
pub(crate) use kind::Kind;
use enqueue::Enqueued;
use wait::Position;

use crate::client::{closed_error, Client};
use crate::error::{etcd_says, Error, ErrorKind, Result, Says};
use crate::sync::guard::LockGuard;
use crate::sync::spans::{self, Traced};
use crate::sync::session::{Session, Use};
use crate::client::kv::KeyValue;
use crate::lease::{Lease, LeaseState};
use crate::lease::lost::LostReason;
use crate::runtime;
use crate::sync::own_key::{OwnKey, WATCH_OWN_KEY_AFTER};
use crate::sync::queue::{self, Toward};
use crate::client::validate;
use crate::watch::hub::{EventType, Msg, Spec, Subscription};
use crate::transport::backoff::Backoff;
use etcd_client::{Compare, CompareOp, GetOptions, PutOptions, SortOrder, SortTarget, Txn, TxnOp, TxnOpResponse};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How one acquire waits and what its queue key carries ([`Mutex::lock_with`] and the other
/// recipes' `_with` calls). The default waits forever, with no value.
#[derive(Debug, Clone, Default)]
pub struct LockOptions {
    /// `None` waits forever; `Some(ZERO)` tries once (fails with `WouldBlock` unless the lock
    /// is free and nobody waits); otherwise fails with `LockTimeout` when it passes.
    pub timeout: Option<Duration>,
    /// Cancels the wait (fails with `Cancelled`); the queue key is gone when the call returns.
    /// An acquire that succeeds after the token was cancelled releases the lock and fails with
    /// `Cancelled` too.
    pub cancel: Option<CancellationToken>,
    /// Stored in the queue key (empty by default, as `etcdctl lock` and Go's
    /// `concurrency.Mutex` store): who holds or waits, for [`Client::inspect`] to show (a host
    /// name, a pid, a short text). At most [`MAX_LOCK_VALUE_LEN`](crate::MAX_LOCK_VALUE_LEN)
    /// bytes, else `InvalidArgument` before anything is sent.
    pub value: Vec<u8>,
}

/// A handle on one lock name. Locking sends requests; creating the handle does not.
///
/// Handles from [`Client::mutex`] bind their queue keys to the client's lease for their TTL,
/// shared by all of the client's locks with that TTL (see `sync/session.rs`), so an uncontended
/// lock/unlock cycle is two round trips. That lease is granted on first use, replaced when
/// lost, and revoked when an acquire fails with nothing else using it, after
/// [`ClientOptions::idle_lease_timeout`](crate::ClientOptions) unused, and on close.
///
/// ```
/// # #[tokio::main] async fn main() -> etcdlock::Result<()> {
/// # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
/// # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
/// let mutex = client.mutex("orders", 10)?;
/// let guard = mutex.lock().await?;
/// // Writes that must only happen while holding the lock go through the guard (fenced):
/// guard.put(b"state/orders/last", b"42").await?; // outside the queue prefix `orders/`
/// println!("fencing token {}", guard.fencing_token());
/// guard.release().await?;
/// # client.close().await; Ok(()) }
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
    kind: Kind,
}

/// Where a handle's acquisitions get their lease.
#[derive(Debug)]
enum Leases {
    /// The client's shared lease for a TTL.
    Session(Arc<Session>),
    /// The caller's lease ([`Mutex::with_lease`]): used as is, never revoked here.
    Given(Lease),
}

impl Client {
    /// A handle on the lock `name`. Sends nothing until it is locked. Its queue keys are bound
    /// to the lease this client's locks with `ttl_secs` share (granted on first use, kept
    /// alive while in use, revoked after `idle_lease_timeout` unused or when an acquire fails
    /// with nothing else using it).
    pub fn mutex(&self, name: impl Into<Vec<u8>>, ttl_secs: i64) -> Result<Mutex> {
        Mutex::new(self, name.into(), ttl_secs)
    }
}

impl Mutex {
    pub(crate) fn new(client: &Client, name: Vec<u8>, ttl: i64) -> Result<Mutex> {
        validate::ttl(ttl)?;
        Mutex::on(client, name, Leases::Session(crate::sync::PerClient::of(client).sessions.get(ttl)))
    }

    /// A handle whose queue keys are bound to `lease` (never revoked by the mutex).
    ///
    /// An enqueue whose reply was lost, or that the client sent to a second member when the
    /// first stayed silent, may be applied again later, after the key was deleted, and create
    /// the key again. On the client's own leases ([`Client::mutex`]) such an acquisition's lease
    /// is retired and revoked once unused, which removes such a key; a lease given here stays
    /// yours: revoke it when you are done with it, and such a key goes with it.
    pub fn with_lease(lease: &Lease, name: impl Into<Vec<u8>>) -> Result<Mutex> {
        lease.check_usable()?;
        Mutex::on(lease.client(), name.into(), Leases::Given(lease.clone()))
    }

    fn on(client: &Client, name: Vec<u8>, leases: Leases) -> Result<Mutex> {
        validate::lock_name(&name)?;
        client.check_open()?;
        let mut prefix = name.clone();
        prefix.push(b'/');
        Ok(Mutex { client: client.clone(), name_hash: hash_name(&name), name: name.into(), prefix, leases, kind: Kind::Exclusive })
    }

    /// The lock's name: its waiters' keys are `<name>/<lease hex>`, as etcd's Go
    /// `concurrency.Mutex` and `etcdctl lock <name>` make them.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// This handle with another holding rule.
    pub(crate) fn with_kind(mut self, kind: Kind) -> Mutex {
        self.kind = kind;
        self
    }

    /// Waits until the lock is held.
    pub async fn lock(&self) -> Result<LockGuard> {
        self.lock_with(LockOptions::default()).await
    }

    /// Takes the lock only if nobody holds it or waits for it; `WouldBlock` otherwise.
    /// Leaves nothing behind when it fails.
    pub async fn try_lock(&self) -> Result<LockGuard> {
        self.lock_with(LockOptions { timeout: Some(Duration::ZERO), ..Default::default() }).await
    }

    /// Waits for the lock within `opts`. On any failure (timeout, cancel, lease lost, close)
    /// the queue key is deleted before this returns; if that delete fails it is retried in
    /// the background. Dropping the future instead also cleans up, in the background.
    pub async fn lock_with(&self, opts: LockOptions) -> Result<LockGuard> {
        self.lock_traced(opts, Traced::Lock).await
    }

    /// [`Mutex::lock_with`], in the spans `traced` names (see `sync/spans.rs`): the wait's
    /// span, then the hold's, in the caller's span.
    pub(crate) async fn lock_traced(&self, opts: LockOptions, traced: Traced) -> Result<LockGuard> {
        use tracing::Instrument;
        validate::check_lock_value(&opts.value)?;
        self.client.check_open()?;
        let started = std::time::Instant::now();
        let span = spans::acquire(traced, &self.name);
        let r = self.lock_checked(opts).instrument(span.clone()).await;
        crate::sync::PerClient::of(&self.client).metrics.acquire(started.elapsed(), r.as_ref().err().map(Error::kind));
        spans::waited(&span, &r, "acquired", |g| Some(g.fencing_token()));
        if let Ok(guard) = &r {
            guard.begin_hold(spans::hold(traced, &self.name, guard.fencing_token(), &span));
        }
        r
    }

    async fn lock_checked(&self, opts: LockOptions) -> Result<LockGuard> {
        let try_once = opts.timeout == Some(Duration::ZERO);
        // A timeout too long to be a point in time waits forever.
        let deadline = opts.timeout.filter(|t| !t.is_zero()).and_then(|t| Instant::now().checked_add(t));
        let cancel = opts.cancel.as_ref();
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            return Err(cancelled());
        }

        // The shared lease may be gone on the server before anyone here noticed (an operator
        // revoked it): its enqueue then fails, and the acquire runs once more on a new lease.
        let acquired = async {
            let (lease, active, fresh) = self.take_lease(deadline).await?;
            let stored = self.kind.stored(&opts.value);
            let value = stored.as_ref();
            match self.acquire(lease, active, try_once, value, deadline, cancel).await {
                Attempt::LeaseGone(_) if !fresh => {
                    let (lease, active, _) = self.take_lease(deadline).await?;
                    Box::pin(self.acquire(lease, active, try_once, value, deadline, cancel)).await.into()
                }
                attempt => attempt.into(),
            }
        };
        let acquired: Result<LockGuard> = acquired.await;
        crate::runtime::pause::at("acquired").await;
        match acquired {
            // The caller gave up before the lock was ours (e.g. while the enqueue was in flight,
            // which is never abandoned): it will not use the lock, so nobody must hold it.
            Ok(guard) if cancel.is_some_and(CancellationToken::is_cancelled) => {
                let _ = guard.release().await;
                Err(cancelled())
            }
            // Nor once close began: the key goes with the lease that close revokes.
            Ok(guard) if self.client.is_closed() => {
                drop(guard);
                Err(closed_error())
            }
            Ok(guard) => Ok(guard),
            // A request cut short by the caller's timeout (not by `request_timeout`) is the lock's.
            Err(e) => Err(match deadline {
                Some(d) if e.kind() == ErrorKind::Timeout && Instant::now() >= d => self.timed_out(),
                _ => e,
            }),
        }
    }

    fn timed_out(&self) -> Error {
        Error::new(ErrorKind::LockTimeout, format!("timed out waiting for lock {:?}", String::from_utf8_lossy(&self.name)))
    }

    async fn acquire(
        &self,
        lease: Lease,
        active: Option<Use>,
        try_once: bool,
        value: &[u8],
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
            created: None,
            active,
        };
        let key = &pending.key;

        // No enqueue attempt is raced against cancel or the deadline (each is bounded by the
        // request timeout): abandoning one in flight could let it land after our cleanup.
        let copies = std::sync::atomic::AtomicBool::new(false);
        let enqueued = self.enqueue_patiently(key, &lease, try_once, value, deadline, cancel, &copies).await;
        pending.settled = true;
        if copies.load(Ordering::Acquire) {
            // A copy of the put may still land, after this acquisition's key is deleted (its
            // release, or the cleanup below): the lease is not handed out again, and is revoked
            // once nothing uses it, which removes such a key (or makes its put fail). A lease
            // the caller gave is theirs to revoke (see `Mutex::with_lease`).
            if let Some(active) = &pending.active {
                active.retire();
            }
        }
        let enqueued = match enqueued {
            Err(e) if e.kind() == ErrorKind::LockLost && etcd_says(e.message()) == Some(Says::LeaseNotFound) => {
                // The server lost the lease before our keepalives noticed.
                lease.state().lost.set(LostReason::Expired);
                Box::pin(self.cleanup(&mut pending, &lease)).await;
                return Attempt::LeaseGone(e);
            }
            r => r,
        };
        // The key's create revision, when known, fences its cleanup delete (see cleanup.rs).
        pending.created = match &enqueued {
            Ok(Enqueued::Held(rev) | Enqueued::Waiting(rev, _) | Enqueued::Placed(rev, _) | Enqueued::Busy { written: Some(rev) }) => Some(*rev),
            _ => None,
        };
        let result = match enqueued {
            Ok(Enqueued::Held(token)) => match lease.lost_reason() {
                None => Ok((token, None)),
                Some(reason) => Err(lost(reason)),
            },
            Ok(Enqueued::Busy { written: None }) => {
                // Nothing of ours is in etcd. The lease stays for the next try (the idle sweep
                // revokes it): revoking it here would cost every failed try a grant and a revoke.
                pending.armed = false;
                lease.state().free_slot(pending.slot);
                return Attempt::Done(Err(would_block()));
            }
            Ok(Enqueued::Busy { written: Some(_) }) => Err(would_block()),
            Ok(Enqueued::Waiting(my_rev, pos)) => self.bounded(Box::pin(self.wait(key, my_rev, pos, &lease)), my_rev, deadline, cancel).await,
            Ok(Enqueued::Placed(my_rev, place)) => {
                self.bounded(Box::pin(self.wait_placed(key, value, my_rev, place, &lease)), my_rev, deadline, cancel).await
            }
            Err(e) => Err(e),
        };

        Attempt::Done(match result {
            Ok((token, own_sub)) => {
                pending.armed = false;
                let key = std::mem::take(&mut pending.key);
                let active = pending.active.take();
                Ok(LockGuard::new(self.client.clone(), self.name.clone(), key, pending.slot, token, lease, own_sub, active, self.kind))
            }
            Err(e) => {
                Box::pin(self.cleanup(&mut pending, &lease)).await;
                Err(e)
            }
        })
    }

    /// A wait for the key created at `my_rev`, cut short by the deadline, cancel and close.
    async fn bounded(
        &self,
        wait: impl std::future::Future<Output = Result<Option<Subscription>>>,
        my_rev: i64,
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
    ) -> Result<(i64, Option<Subscription>)> {
        let closed = self.client.inner.closed.clone();
        // Biased: once close began, or the caller cancelled, no acquire succeeds, even one whose
        // wait completed in the same moment.
        tokio::select! {
            biased;
            _ = closed.cancelled() => Err(closed_error()),
            _ = cancelled_opt(cancel) => Err(cancelled()),
            r = wait => r.map(|sub| (my_rev, sub)),
            _ = sleep_until(deadline) => Err(self.timed_out()),
        }
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

