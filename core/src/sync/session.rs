//! The leases a client's locks are bound to: one per TTL, shared by every lock the client
//! takes with that TTL, whichever handle or language binding takes it (as etcd's Go
//! `concurrency.Session`). A lock/unlock cycle is then two round trips: no grant, no revoke.
//!
//! Each acquisition still has its own queue key (`<name>/<lease hex>[-n]`), so locks on one
//! lease exclude each other. The lease is granted on first use and replaced when lost. It is
//! revoked when an acquisition fails with nothing else using it (an error leaves no lease
//! behind), after [`ClientOptions::idle_lease_timeout`](crate::ClientOptions) without any
//! acquisition or held lock, and when the client closes.

use crate::client::{Client, Inner};
use crate::runtime::clock;
use crate::lease::{self, Lease, LeaseState};
use crate::runtime;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// A client's lock leases, by TTL in seconds.
#[derive(Default)]
pub(crate) struct Sessions(std::sync::Mutex<HashMap<i64, Arc<Session>>>);

impl Sessions {
    pub fn get(&self, ttl: i64) -> Arc<Session> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(ttl).or_insert_with(|| Arc::new(Session::new(ttl))).clone()
    }

    fn all(&self) -> Vec<Arc<Session>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect()
    }
}

#[derive(Debug)]
pub(crate) struct Session {
    ttl: i64,
    lease: tokio::sync::Mutex<Option<Arc<Shared>>>,
    /// Acquisitions in progress plus held locks on the lease.
    users: AtomicUsize,
    /// When `users` last dropped to zero, as nanoseconds of [`clock::now`].
    idle_since: AtomicU64,
}

/// A lease as a session shares it.
#[derive(Debug)]
struct Shared {
    state: Arc<LeaseState>,
    /// Acquisitions in progress plus held locks on this lease.
    uses: AtomicUsize,
    /// No longer handed out; revoked once `uses` drops to zero (see [`Use::retire`]).
    retired: AtomicBool,
}

impl Shared {
    fn new(state: Arc<LeaseState>) -> Arc<Shared> {
        Arc::new(Shared { state, uses: AtomicUsize::new(0), retired: AtomicBool::new(false) })
    }
}

/// One acquisition's or held lock's use of a session's lease.
#[derive(Debug)]
pub(crate) struct Use {
    session: Arc<Session>,
    lease: Arc<Shared>,
    client: Weak<Inner>,
}

impl Use {
    /// Stops handing out this use's lease and revokes it once nothing uses it any more (this use
    /// included). For an enqueue abandoned in flight: its put may still land after every delete,
    /// and only revoking the lease is sure to remove such a key.
    pub fn retire(&self) {
        self.lease.retired.store(true, Ordering::SeqCst);
    }
}

impl Drop for Use {
    fn drop(&mut self) {
        if self.session.users.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.session.idle_since.store(clock::now().as_nanos() as u64, Ordering::Release);
        }
        // Pairs with `retire`, which sets the flag before its own use is dropped here.
        if self.lease.uses.fetch_sub(1, Ordering::SeqCst) == 1 && self.lease.retired.load(Ordering::SeqCst) {
            revoke_in_background(&self.client, &self.lease.state);
        }
    }
}

fn revoke_in_background(client: &Weak<Inner>, state: &Arc<LeaseState>) {
    let Some(inner) = client.upgrade() else { return }; // gone: its leases were revoked
    let (client, state) = (Client { inner }, state.clone());
    runtime::spawn_cleanup(async move {
        let _ = lease::revoke(&client, &state, None).await;
    });
}

impl Session {
    fn new(ttl: i64) -> Self {
        Session { ttl, lease: Default::default(), users: AtomicUsize::new(0), idle_since: AtomicU64::new(0) }
    }

    /// The live lease, granted now if there is none (`true`: just granted).
    pub async fn take(self: &Arc<Self>, client: &Client, deadline: Option<Instant>) -> crate::Result<(Lease, Use, bool)> {
        let mut slot = self.lease.lock().await;
        let fresh = match slot.as_ref() {
            Some(shared) if !shared.retired.load(Ordering::SeqCst) && !shared.state.check_deadline() => false,
            _ => {
                let new = Shared::new(Box::pin(lease::grant(client, self.ttl, deadline)).await?);
                match slot.replace(new) {
                    // Its last use revokes it.
                    Some(old) if old.retired.load(Ordering::SeqCst) && old.uses.load(Ordering::SeqCst) > 0 => {}
                    // Lost here, maybe not yet on the server: its keys must not wait for its TTL.
                    Some(old) => revoke_in_background(&Arc::downgrade(&client.inner), &old.state),
                    None => {}
                }
                true
            }
        };
        // Counted under the lock, so the idle sweep cannot revoke the lease under this use.
        self.users.fetch_add(1, Ordering::AcqRel);
        let shared = slot.as_ref().expect("set above").clone();
        shared.uses.fetch_add(1, Ordering::SeqCst);
        let lease = Lease::new(client, shared.state.clone(), false);
        Ok((lease, Use { session: self.clone(), lease: shared, client: Arc::downgrade(&client.inner) }, fresh))
    }

    /// After a failed acquisition on lease `id`: revokes it if nothing else uses it, which
    /// also deletes the acquisition's key. Returns whether it did.
    pub async fn failed(&self, client: &Client, id: i64, last_use: Use) -> bool {
        let mut slot = self.lease.lock().await;
        drop(last_use);
        if self.users.load(Ordering::Acquire) > 0 || slot.as_ref().map_or(true, |s| s.state.id != id) {
            return false;
        }
        let shared = slot.take().expect("checked above");
        lease::revoke(client, &shared.state, None).await.is_ok()
    }

    /// Revokes the lease if it has not been used for `idle`.
    async fn revoke_if_idle(&self, client: &Client, idle: Duration) {
        let Ok(mut slot) = self.lease.try_lock() else { return }; // being taken: not idle
        let since = Duration::from_nanos(self.idle_since.load(Ordering::Acquire));
        if slot.is_none() || self.users.load(Ordering::Acquire) > 0 || clock::now() < since + idle {
            return;
        }
        if let Some(shared) = slot.take() {
            let _ = lease::revoke(client, &shared.state, None).await;
        }
    }
}

/// Revokes a client's idle lock leases until the client closes or is dropped.
pub(crate) fn start_sweep(inner: Weak<Inner>, idle: Duration, closed: CancellationToken) {
    runtime::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(idle / 2) => {}
                _ = closed.cancelled() => return,
            }
            let Some(inner) = inner.upgrade() else { return };
            let client = Client { inner };
            for session in super::PerClient::of(&client).sessions.all() {
                session.revoke_if_idle(&client, idle).await;
            }
        }
    });
}
