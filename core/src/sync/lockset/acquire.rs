//! Taking a set: one Txn puts every member's key, then each key waits under its own rule.

use super::pending::PendingSet;
use super::{LockSet, LockSetGuard};
use crate::client::closed_error;
use crate::error::{etcd_says, Error, ErrorKind, Result, Says};
use crate::lease::lost::LostReason;
use crate::sync::session::Use;
use crate::lease::Lease;
use crate::sync::mutex::LockOptions;
use crate::transport::backoff::Backoff;
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

impl LockSet {
    /// Waits until every member holds.
    pub async fn lock(&self) -> Result<LockSetGuard> {
        self.lock_with(LockOptions::default()).await
    }

    /// Takes the set only if every member holds at once; `WouldBlock` otherwise, with no key
    /// left in any queue.
    pub async fn try_lock(&self) -> Result<LockSetGuard> {
        self.lock_with(LockOptions { timeout: Some(Duration::ZERO), ..Default::default() }).await
    }

    /// Waits within `opts` (one timeout for the whole set), as [`Mutex::lock_with`] does: on any
    /// failure every member's key is gone when this returns, and no member is ever held alone.
    ///
    /// [`Mutex::lock_with`]: crate::Mutex::lock_with
    pub async fn lock_with(&self, opts: LockOptions) -> Result<LockSetGuard> {
        crate::client::validate::check_lock_value(&opts.value)?;
        self.client.check_open()?;
        let started = std::time::Instant::now();
        let name = self.names().iter().map(|n| String::from_utf8_lossy(n)).collect::<Vec<_>>().join(",");
        let span = crate::sync::spans::group_acquire(&name);
        use tracing::Instrument;
        let r = self.lock_checked(opts).instrument(span.clone()).await;
        crate::sync::PerClient::of(&self.client).metrics.acquire(started.elapsed(), r.as_ref().err().map(Error::kind));
        crate::sync::spans::waited(&span, &r, "acquired", |g| Some(g.fencing_token()));
        if let Ok(g) = &r {
            g.begin_hold(crate::sync::spans::group_hold(&name, None, g.fencing_token(), &span));
        }
        r
    }

    async fn lock_checked(&self, opts: LockOptions) -> Result<LockSetGuard> {
        let try_once = opts.timeout == Some(Duration::ZERO);
        let deadline = opts.timeout.filter(|t| !t.is_zero()).and_then(|t| Instant::now().checked_add(t));
        let cancel = opts.cancel.as_ref();
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            return Err(cancelled());
        }
        // The shared lease may be gone on the server before anyone here noticed (an operator
        // revoked it): the enqueue then fails, and the set is taken once more on a new lease.
        let (lease, active, fresh) = self.session.take(&self.client, deadline).await?;
        match self.attempt(lease, active, &opts, try_once, deadline, cancel).await {
            Err(e) if !fresh && lease_gone(&e) => {
                let (lease, active, _) = self.session.take(&self.client, deadline).await?;
                Box::pin(self.attempt(lease, active, &opts, try_once, deadline, cancel)).await
            }
            r => r,
        }
    }

    async fn attempt(
        &self,
        lease: Lease,
        active: Use,
        opts: &LockOptions,
        try_once: bool,
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
    ) -> Result<LockSetGuard> {
        let keys = self.members.iter().map(|m| {
            let slot = lease.state().take_slot(m.name_hash());
            (m.member_key(&lease, slot), slot)
        });
        let hashes = self.members.iter().map(|m| m.name_hash()).collect();
        let mut pending = PendingSet::new(&self.client, &lease, keys.collect(), hashes, active);

        let copies = AtomicBool::new(false);
        let enqueued = self.enqueue_patiently(&pending.keys, &lease, &opts.value, try_once, deadline, cancel, &copies).await;
        if enqueued.as_ref().is_err_and(lease_gone) {
            lease.state().lost.set(LostReason::Expired);
        }
        pending.settled = true;
        if copies.load(Ordering::Acquire) {
            // A copy of the Txn may land after the keys are deleted (see `Mutex::acquire`).
            pending.retire_lease();
        }
        let token = match enqueued {
            Ok(token) => token,
            Err(e) => {
                pending.cleanup(&self.session).await;
                return Err(e);
            }
        };
        pending.created = Some(token);

        let held = if try_once {
            match self.all_hold(&pending.keys, token).await {
                Ok(true) => Ok(self.members.iter().map(|_| None).collect()),
                Ok(false) => {
                    // Keep the lease for the next try (as a failed mutex try does).
                    pending.delete_keys().await;
                    return Err(Error::new(ErrorKind::WouldBlock, "a member of the lock set is held or has waiters"));
                }
                Err(e) => Err(e),
            }
        } else {
            self.bounded(self.wait_all(&pending.keys, &opts.value, token, &lease), deadline, cancel).await
        };
        let held = match held {
            Ok(subs) if cancel.is_some_and(CancellationToken::is_cancelled) => {
                drop(subs);
                Err(cancelled())
            }
            Ok(subs) if self.client.is_closed() => {
                drop(subs);
                Err(closed_error())
            }
            r => r,
        };
        match held {
            Ok(subs) => {
                let (keys, active) = pending.disarm();
                let mut active = active;
                let guards = self
                    .members
                    .iter()
                    .zip(keys)
                    .zip(subs)
                    // The first member's guard keeps the lease in use for the whole set.
                    .map(|((m, (key, slot)), sub)| m.member_guard(key, slot, token, lease.clone(), sub, active.take()))
                    .collect();
                Ok(LockSetGuard::new(self.client.clone(), guards, token))
            }
            Err(e) => {
                pending.cleanup(&self.session).await;
                Err(match deadline {
                    Some(d) if e.kind() == ErrorKind::Timeout && Instant::now() >= d => self.timed_out(),
                    _ => e,
                })
            }
        }
    }

    /// One Txn: every key put on `lease` if none of them exists. Returns their create revision.
    /// A retry whose first attempt landed finds the keys there, all created together.
    async fn enqueue(&self, keys: &[(Vec<u8>, u64)], lease: &Lease, value: &[u8], copies: &AtomicBool) -> Result<i64> {
        lease.check_usable()?;
        let lease_id = lease.id();
        let txn = || {
            let when = keys.iter().map(|(k, _)| Compare::create_revision(k.clone(), CompareOp::Equal, 0));
            let puts = self.members.iter().zip(keys).map(|(m, (k, _))| TxnOp::put(k.clone(), m.stored(value).into_owned(), Some(PutOptions::new().with_lease(lease_id))));
            Txn::new().when(when.collect::<Vec<_>>()).and_then(puts.collect::<Vec<_>>())
        };
        let resp = self.client.txn_noting_copies(txn, copies).await?;
        if resp.succeeded() {
            return Ok(resp.header().map_or(0, |h| h.revision()));
        }
        let mut created = None;
        for (key, _) in keys {
            let kv = Box::pin(self.client.get(key)).await?;
            match (kv, created) {
                (Some(kv), None) if kv.lease == lease_id => created = Some(kv.create_revision),
                (Some(kv), Some(c)) if kv.lease == lease_id && kv.create_revision == c => {}
                _ => return Err(Error::new(ErrorKind::Internal, "a lock set's keys were not all created together")),
            }
        }
        created.ok_or_else(|| Error::new(ErrorKind::Internal, "a lock set's keys vanished during its enqueue"))
    }

    /// [`LockSet::enqueue`], sent again while etcd does not answer, as the mutex's is.
    #[allow(clippy::too_many_arguments)]
    async fn enqueue_patiently(
        &self,
        keys: &[(Vec<u8>, u64)],
        lease: &Lease,
        value: &[u8],
        try_once: bool,
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
        copies: &AtomicBool,
    ) -> Result<i64> {
        let mut backoff = Backoff::default();
        loop {
            match self.enqueue(keys, lease, value, copies).await {
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

    /// Whether every member's key holds now (one read each, together).
    async fn all_hold(&self, keys: &[(Vec<u8>, u64)], token: i64) -> Result<bool> {
        let reads = self.members.iter().zip(keys).map(|(m, (k, _))| m.member_holds(k, token));
        Ok(super::join::try_join_all(reads).await?.into_iter().all(|h| h))
    }

    /// Waits until every member's key holds, each under its own rule, all at once.
    async fn wait_all(
        &self,
        keys: &[(Vec<u8>, u64)],
        value: &[u8],
        token: i64,
        lease: &Lease,
    ) -> Result<Vec<Option<crate::watch::hub::Subscription>>> {
        let waits = self.members.iter().zip(keys).map(|(m, (k, _))| m.member_wait(k, value, token, lease));
        super::join::try_join_all(waits).await
    }

    /// A wait cut short by the deadline, cancel and close (biased as the mutex's is).
    async fn bounded<T>(&self, wait: impl std::future::Future<Output = Result<T>>, deadline: Option<Instant>, cancel: Option<&CancellationToken>) -> Result<T> {
        let closed = self.client.inner.closed.clone();
        tokio::select! {
            biased;
            _ = closed.cancelled() => Err(closed_error()),
            _ = cancelled_opt(cancel) => Err(cancelled()),
            r = wait => r,
            _ = sleep_until(deadline) => Err(self.timed_out()),
        }
    }

    fn timed_out(&self) -> Error {
        let names: Vec<_> = self.members.iter().map(|m| String::from_utf8_lossy(m.name()).into_owned()).collect();
        Error::new(ErrorKind::LockTimeout, format!("timed out waiting for the lock set {names:?}"))
    }
}

/// The server no longer has the lease: nothing was put.
fn lease_gone(e: &Error) -> bool {
    e.kind() == ErrorKind::LockLost && etcd_says(e.message()) == Some(Says::LeaseNotFound)
}

fn cancelled() -> Error {
    Error::new(ErrorKind::Cancelled, "lock set acquisition cancelled")
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
