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

mod keep;
use keep::keep;

/// What happened to a registration, in order ([`Registration::events`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrationEvent {
    /// The instance is not registered any more, for this reason; registering again.
    Lost(LostReason),
    /// Registered again, on a new lease.
    Restored {
        /// The ID of the new lease the instance's key is attached to.
        lease: i64,
    },
    /// Another registrant took the name over: the registration has ended.
    TakenOver,
}

/// An instance kept registered until [`Registration::close`] or drop (which closes in the
/// background). From [`Client::register`](crate::Client::register).
#[derive(Debug)]
pub struct Registration {
    shared: Arc<Shared>,
    /// The task that registers the instance again after a loss; `None` once closed.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
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
    /// The lease of a registration under way (granted; its put may be in flight), for `close`
    /// to revoke: it is in `lease` only once the put is done.
    registering: Mutex<Option<Lease>>,
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
    let shared = Arc::new(Shared {
        client,
        key,
        value: Mutex::new(value),
        ttl: opts.ttl,
        lease: lease_tx,
        events: broadcast::channel(64).0,
        updated: Default::default(),
        registering: Default::default(),
    });
    let (lease, rev, put) = shared.put(opts.replace, None).await?;
    shared.done_registering(&lease, put).await;
    tracing::debug!(target: "etcdlock", key = %shared.name(), lease = format_args!("{:x}", lease.id()), "instance registered");
    let task = runtime::spawn(keep(shared.clone(), lease, rev));
    Ok(Registration { shared, task: Mutex::new(Some(task)) })
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
        // Read after the value is stored: a registration under way either sees the new value
        // when it is done (and writes it), or is done and its lease is here.
        let lease = self.shared.lease.borrow().clone();
        let Some(lease) = lease.filter(Lease::is_alive) else {
            return Err(Error::new(ErrorKind::NotHeld, "the instance is not registered now (registering again)"));
        };
        match self.shared.write_value(&lease, &value).await? {
            Some(revision) => Ok(revision),
            None => Err(Error::new(ErrorKind::NotHeld, "the instance's key is gone or on another lease")),
        }
    }

    /// Deregisters: stops keeping it, deletes the key if it is still this registration's and
    /// revokes the lease (both done when this returns, unless etcd is unreachable: then the
    /// lease is revoked in the background and expires at worst). A registration under way is
    /// stopped first, and its lease revoked too. Idempotent.
    pub async fn close(&self) -> Result<()> {
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            task.abort();
            // Aborted at its next step: once this returns, nothing registers the instance again.
            let _ = task.await;
        }
        let under_way = self.shared.registering.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut result = Ok(());
        for lease in [self.shared.set_lease(None), under_way].into_iter().flatten() {
            let key = self.shared.key.clone();
            let deleted = self
                .shared
                .client
                .txn(|| Txn::new().when([Compare::lease(key.clone(), CompareOp::Equal, lease.id())]).and_then([TxnOp::delete(key.clone(), None)]), true)
                .await;
            let revoked = lease.revoke().await;
            result = result.and(deleted.map(drop)).and(revoked);
        }
        result
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(task) = self.task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            task.abort();
        }
        // The leases' drops revoke them, which deletes the key with them.
        self.shared.set_lease(None);
        self.shared.registering.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
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
    /// Returns the lease, the put's revision and the value put; nothing is left on failure.
    /// The lease is in `registering` from its grant until the caller's `done_registering`.
    async fn put(&self, replace: bool, stale: Option<i64>) -> Result<(Lease, i64, Vec<u8>)> {
        let lease = self.client.lease(self.ttl).await?;
        *self.registering.lock().unwrap_or_else(|e| e.into_inner()) = Some(lease.clone());
        let value = self.value();
        match self.put_on(&lease, &value, replace, stale).await {
            Ok(revision) => Ok((lease, revision, value)),
            Err(e) => {
                // Revoked before returning, so that a refused registration leaves nothing.
                self.registering.lock().unwrap_or_else(|e| e.into_inner()).take();
                let _ = lease.revoke().await;
                Err(e)
            }
        }
    }

    /// `lease` carries the key now; the value given meanwhile (an `update` while this
    /// registration was under way: told `NotHeld`, and kept) is written. Not under way any more.
    async fn done_registering(&self, lease: &Lease, put: Vec<u8>) {
        self.set_lease(Some(lease.clone()));
        self.registering.lock().unwrap_or_else(|e| e.into_inner()).take();
        let now = self.value();
        if now != put {
            if let Err(e) = self.write_value(lease, &now).await {
                tracing::debug!(target: "etcdlock", key = %self.name(), error = %e, "the value given while registering again was not written");
            }
        }
    }

    /// Writes `value` while the key is on `lease`, in order with the other writes (see
    /// `sync/ordered.rs`); `None` if the key is not on it.
    async fn write_value(&self, lease: &Lease, value: &[u8]) -> Result<Option<i64>> {
        let id = lease.id();
        let put = crate::sync::ordered::OrderedPut {
            client: &self.client,
            key: &self.key,
            ours: Compare::lease(self.key.clone(), CompareOp::Equal, id),
            is_ours: &|kv| kv.lease == id,
            lease: id,
        };
        let mut last = self.updated.lock().await;
        put.put(value, &mut last).await
    }

    async fn put_on(&self, lease: &Lease, value: &[u8], replace: bool, stale: Option<i64>) -> Result<i64> {
        let (key, value, id) = (self.key.clone(), value.to_vec(), lease.id());
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
}
