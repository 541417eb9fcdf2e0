//! A registration: its key put on a lease of its own, a task that watches for the loss of the
//! lease or the key and registers again on a new lease, and the events that say so.

use super::RegisterOptions;
use crate::client::kv::KeyValue;
use crate::client::{closed_error, Client};
use crate::error::{Error, ErrorKind, Result};
use crate::lease::lost::LostReason;
use crate::lease::Lease;
use crate::runtime;
use crate::transport::backoff::Backoff;
use crate::watch::event::EventType;
use crate::watch::WatchOptions;
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse};
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};

/// What happened to a registration, in order ([`Registration::events`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrationEvent {
    /// The instance is not registered any more, for this reason; registering again.
    Lost(LostReason),
    /// Registered again, on a new lease.
    Restored { lease: i64 },
    /// Another registrant took the name over: the registration has ended.
    TakenOver,
}

/// An instance kept registered until [`Registration::close`] or drop (which closes in the
/// background). From [`Client::register`](crate::Client::register).
#[derive(Debug)]
pub struct Registration {
    shared: Arc<Shared>,
    task: tokio::task::AbortHandle,
}

#[derive(Debug)]
struct Shared {
    client: Client,
    key: Vec<u8>,
    value: Mutex<Vec<u8>>,
    ttl: i64,
    /// The lease the key is on now; `None` while registering again, and once ended.
    lease: watch::Sender<Option<Lease>>,
    events: broadcast::Sender<RegistrationEvent>,
    /// The key's mod revision after the last `update` (0: unknown), which the next compares
    /// against, one at a time (see `sync/ordered.rs`).
    updated: tokio::sync::Mutex<i64>,
}

/// Events of one registration, from [`Registration::events`].
pub struct RegistrationEvents(broadcast::Receiver<RegistrationEvent>);

impl RegistrationEvents {
    /// The next event; `None` once the registration is closed or dropped. A reader more than
    /// 64 events behind skips to the oldest it still has.
    pub async fn next(&mut self) -> Option<RegistrationEvent> {
        loop {
            match self.0.recv().await {
                Ok(e) => return Some(e),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// Registers the first time (so that a taken name or a bad cluster is the caller's error),
/// then starts the task that keeps it registered.
pub(super) async fn start(client: Client, key: Vec<u8>, value: Vec<u8>, opts: RegisterOptions) -> Result<Registration> {
    let (lease_tx, _) = watch::channel(None);
    let shared = Arc::new(Shared { client, key, value: Mutex::new(value), ttl: opts.ttl, lease: lease_tx, events: broadcast::channel(64).0, updated: Default::default() });
    let (lease, rev) = shared.put(opts.replace, None).await?;
    shared.set_lease(Some(lease.clone()));
    tracing::debug!(target: "etcdlock", key = %shared.name(), lease = format_args!("{:x}", lease.id()), "instance registered");
    let task = runtime::spawn(keep(shared.clone(), lease, rev)).abort_handle();
    Ok(Registration { shared, task })
}

impl Registration {
    /// `<service>/<instance>`.
    pub fn key(&self) -> &[u8] {
        &self.shared.key
    }

    /// The lease the key is on now, `None` while it is being registered again or once ended.
    pub fn lease_id(&self) -> Option<i64> {
        self.shared.lease.borrow().as_ref().map(Lease::id)
    }

    /// Whether the instance is registered now, as far as this process knows.
    pub fn is_registered(&self) -> bool {
        self.shared.lease.borrow().as_ref().is_some_and(Lease::is_alive)
    }

    /// Losses and recoveries from now on.
    pub fn events(&self) -> RegistrationEvents {
        RegistrationEvents(self.shared.events.subscribe())
    }

    /// Replaces the registered value, kept for every later registration. Applied only while
    /// the key is on this registration's lease: `NotHeld` (and only kept for later) while it
    /// is being registered again. Returns the write's revision. Values land in the order of
    /// the calls: a late copy of an earlier update never overwrites a later one.
    pub async fn update(&self, value: impl Into<Vec<u8>>) -> Result<i64> {
        let value = value.into();
        crate::client::validate::check_lock_value(&value)?;
        *self.shared.value.lock().unwrap_or_else(|e| e.into_inner()) = value.clone();
        let lease = self.shared.lease.borrow().clone();
        let Some(lease) = lease.filter(Lease::is_alive) else {
            return Err(Error::new(ErrorKind::NotHeld, "the instance is not registered now (registering again)"));
        };
        let id = lease.id();
        let put = crate::sync::ordered::OrderedPut {
            client: &self.shared.client,
            key: &self.shared.key,
            ours: Compare::lease(self.shared.key.clone(), CompareOp::Equal, id),
            is_ours: &|kv| kv.lease == id,
            lease: id,
        };
        let mut last = self.shared.updated.lock().await;
        match put.put(&value, &mut last).await? {
            Some(revision) => Ok(revision),
            None => Err(Error::new(ErrorKind::NotHeld, "the instance's key is gone or on another lease")),
        }
    }

    /// Deregisters: stops keeping it, deletes the key if it is still this registration's and
    /// revokes the lease (both done when this returns, unless etcd is unreachable: then the
    /// lease is revoked in the background and expires at worst). Idempotent.
    pub async fn close(&self) -> Result<()> {
        self.task.abort();
        let Some(lease) = self.shared.set_lease(None) else { return Ok(()) };
        let key = self.shared.key.clone();
        let deleted = self
            .shared
            .client
            .txn(|| Txn::new().when([Compare::lease(key.clone(), CompareOp::Equal, lease.id())]).and_then([TxnOp::delete(key.clone(), None)]), true)
            .await;
        let revoked = lease.revoke().await;
        deleted.and(revoked)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.task.abort();
        // The lease's drop revokes it, which deletes the key with it.
        self.shared.set_lease(None);
    }
}

/// How the key stopped being this registration's.
enum Gone {
    Lost(LostReason),
    TakenOver,
}

impl Shared {
    fn name(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.key)
    }

    /// Sets the lease the key is on now (`None`: not registered), counted in the client's
    /// `registrations_alive`; returns the previous one.
    fn set_lease(&self, lease: Option<Lease>) -> Option<Lease> {
        let up = lease.is_some();
        let old = self.lease.send_replace(lease);
        if old.is_some() != up {
            crate::sync::PerClient::of(&self.client).metrics.registered(up);
        }
        old
    }

    fn value(&self) -> Vec<u8> {
        self.value.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Puts the key on a new lease: if it is absent, or with `replace`, or if it is still on
    /// `stale` (this registration's lost lease). `WouldBlock` if another registrant has it.
    /// Returns the lease and the put's revision; nothing is left on failure.
    async fn put(&self, replace: bool, stale: Option<i64>) -> Result<(Lease, i64)> {
        let lease = self.client.lease(self.ttl).await?;
        match self.put_on(&lease, replace, stale).await {
            Ok(revision) => Ok((lease, revision)),
            Err(e) => {
                // Revoked before returning, so that a refused registration leaves nothing.
                let _ = lease.revoke().await;
                Err(e)
            }
        }
    }

    async fn put_on(&self, lease: &Lease, replace: bool, stale: Option<i64>) -> Result<i64> {
        let (key, value, id) = (self.key.clone(), self.value(), lease.id());
        let put = || TxnOp::put(key.clone(), value.clone(), Some(PutOptions::new().with_lease(id)));
        let txn = || match (replace, stale) {
            (true, _) => Txn::new().and_then([put()]),
            (false, None) => Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)]).and_then([put()]).or_else([TxnOp::get(key.clone(), None)]),
            (false, Some(old)) => Txn::new()
                .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
                .and_then([put()])
                .or_else([TxnOp::txn(Txn::new().when([Compare::lease(key.clone(), CompareOp::Equal, old)]).and_then([put()]).or_else([TxnOp::get(key.clone(), None)]))]),
        };
        // Idempotent: a retried put that finds the key on this new lease is its own.
        let resp = self.client.txn(txn, true).await?;
        let revision = resp.header().map_or(0, |h| h.revision());
        let holder = match resp.op_responses().first() {
            _ if resp.succeeded() => return Ok(revision),
            Some(TxnOpResponse::Get(g)) => g.kvs().first().map(KeyValue::from),
            Some(TxnOpResponse::Txn(t)) if t.succeeded() => return Ok(revision),
            Some(TxnOpResponse::Txn(t)) => match t.op_responses().first() {
                Some(TxnOpResponse::Get(g)) => g.kvs().first().map(KeyValue::from),
                _ => None,
            },
            _ => None,
        };
        match holder {
            Some(kv) if kv.lease == id => Ok(revision),
            Some(kv) => Err(Error::new(
                ErrorKind::WouldBlock,
                format!("{} is registered already (lease {:x}): register with replace to take it over", self.name(), kv.lease),
            )),
            None => Err(Error::new(ErrorKind::Internal, "unexpected Txn response")),
        }
    }

    /// Waits until the key stops being on `lease`: the lease lost, the key deleted, or put by
    /// another registrant. Watches the key from `after` + 1.
    async fn gone(&self, lease: &Lease, mut after: i64) -> Gone {
        let lost = lease.lost();
        let mut backoff = Backoff::default();
        loop {
            let opts = WatchOptions { prefix: false, start_revision: Some(after + 1), prev_kv: false };
            let watching = async {
                let mut w = self.client.watch(self.key.clone(), opts).await?;
                loop {
                    let e = match w.next().await {
                        None => return Err(closed_error()),
                        Some(e) => e?,
                    };
                    after = e.revision();
                    match e.event_type {
                        EventType::Delete => return Ok(Gone::Lost(LostReason::KeyDeleted)),
                        EventType::Put if e.kv.lease != lease.id() => return Ok(Gone::TakenOver),
                        EventType::Put => {}
                    }
                }
            };
            let ended: Result<Gone> = tokio::select! {
                reason = lost.wait() => return Gone::Lost(reason),
                r = watching => r,
            };
            match ended {
                Ok(gone) => return gone,
                Err(e) if e.kind() == ErrorKind::Closed => return Gone::Lost(LostReason::Closed),
                Err(e) => {
                    // Compacted or unreachable: the key as it is now tells.
                    tracing::debug!(target: "etcdlock", key = %self.name(), error = %e, "registration watch restarts");
                    match self.client.get(&self.key).await {
                        Ok(None) => return Gone::Lost(LostReason::KeyDeleted),
                        Ok(Some(kv)) if kv.lease != lease.id() => return Gone::TakenOver,
                        Ok(Some(kv)) => after = kv.mod_revision,
                        Err(_) => tokio::time::sleep(backoff.next_delay()).await,
                    }
                }
            }
        }
    }
}

/// Keeps the instance registered until the task is aborted, the client closes or another
/// registrant takes the name.
async fn keep(shared: Arc<Shared>, mut lease: Lease, mut rev: i64) {
    loop {
        let reason = match shared.gone(&lease, rev).await {
            // The client's close revokes the lease, which must stay in its list until then:
            // dropped here it would be revoked by a detached task that an exit's runtime
            // shutdown may drop first (the key then outlived the process by its TTL).
            Gone::Lost(LostReason::Closed) => return,
            Gone::Lost(r) => r,
            Gone::TakenOver => {
                tracing::warn!(target: "etcdlock", key = %shared.name(), "instance taken over by another registrant: registration ended");
                shared.set_lease(None);
                let _ = shared.events.send(RegistrationEvent::TakenOver);
                return;
            }
        };
        tracing::warn!(target: "etcdlock", key = %shared.name(), reason = %reason, "instance registration lost: registering again");
        let stale = lease.id();
        shared.set_lease(None);
        drop(lease); // revoked in the background if it still exists
        let _ = shared.events.send(RegistrationEvent::Lost(reason));
        let mut backoff = Backoff::default();
        (lease, rev) = loop {
            if shared.client.is_closed() {
                return;
            }
            match shared.put(false, Some(stale)).await {
                Ok(done) => break done,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    tracing::warn!(target: "etcdlock", key = %shared.name(), "instance taken over by another registrant: registration ended");
                    let _ = shared.events.send(RegistrationEvent::TakenOver);
                    return;
                }
                Err(e) if e.kind() == ErrorKind::Closed => return,
                Err(e) => {
                    tracing::debug!(target: "etcdlock", key = %shared.name(), error = %e, "registering again failed, retrying");
                    tokio::time::sleep(backoff.next_delay()).await;
                }
            }
        };
        shared.set_lease(Some(lease.clone()));
        crate::sync::PerClient::of(&shared.client).metrics.reregistered(reason);
        tracing::info!(target: "etcdlock", key = %shared.name(), lease = format_args!("{:x}", lease.id()), "instance registered again");
        let _ = shared.events.send(RegistrationEvent::Restored { lease: lease.id() });
    }
}
