//! Service discovery: instances registered as keys `<service>/<instance>` on leases kept alive
//! (and registered again when a lease is lost), and discovered as consistent snapshots that
//! follow every change. The layout is the one etcd's Go endpoints manager
//! (`client/v3/naming/endpoints`) writes and its gRPC resolver reads, so Go gRPC clients resolve
//! instances registered here when their value is [`grpc_endpoint`]'s.

mod discover;
mod endpoint;
mod keeper;

pub use discover::Discovery;
pub use endpoint::{grpc_endpoint, grpc_endpoint_addr};
pub use keeper::{Registration, RegistrationEvent, RegistrationEvents};

use crate::client::kv::KeyValue;
use crate::client::{validate, Client};
use crate::error::{Error, Result};
use etcd_client::{GetOptions, SortOrder, SortTarget};

/// One registered instance, as etcd has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The instance's name: its key after `<service>/`.
    pub name: Vec<u8>,
    /// What it registered (for a Go gRPC resolver: [`grpc_endpoint`]'s JSON).
    pub value: Vec<u8>,
    /// The lease the key is bound to (0 for a key put without one, e.g. by hand).
    pub lease: i64,
    /// The revision of the registration's latest put.
    pub mod_revision: i64,
}

/// A service's instances at one revision, ordered by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Instances {
    /// The instances registered at [`Instances::revision`], ordered by name.
    pub instances: Vec<Instance>,
    /// The etcd revision this set is the state at.
    pub revision: i64,
}

/// How to register (see [`Client::register_with`]).
#[derive(Debug, Clone)]
pub struct RegisterOptions {
    /// Lease TTL in seconds: how long the instance stays listed after this process stops.
    pub ttl: i64,
    /// Take the name over if another registrant holds it (otherwise that is `WouldBlock`).
    pub replace: bool,
}

impl Default for RegisterOptions {
    fn default() -> Self {
        RegisterOptions { ttl: 10, replace: false }
    }
}

impl Client {
    /// Registers `instance` of `service` with `value` on a lease of `ttl_secs` of its own, kept
    /// alive until [`Registration::close`] or drop. See [`Client::register_with`].
    ///
    /// ```no_run
    /// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
    /// let reg = client.register("svc/api", "node-1", etcdlock::grpc_endpoint("10.0.0.7:50051"), 10).await?;
    /// let found = client.instances("svc/api").await?;
    /// assert!(found.instances.iter().any(|i| i.name == b"node-1"));
    /// reg.close().await?;
    /// # Ok(()) }
    /// ```
    pub async fn register(&self, service: impl AsRef<[u8]>, instance: impl AsRef<[u8]>, value: impl Into<Vec<u8>>, ttl_secs: i64) -> Result<Registration> {
        self.register_with(service, instance, value, RegisterOptions { ttl: ttl_secs, ..Default::default() }).await
    }

    /// Puts `<service>/<instance>` = `value` on a new lease, and keeps it there: when the lease
    /// is lost (expired, revoked, the key deleted) it registers again on a new lease as soon as
    /// etcd allows, reporting each loss and recovery ([`Registration::events`]). A name another
    /// registrant holds is `WouldBlock` unless `opts.replace`; one that another takes over
    /// later ends the registration (reported, not fought over). Nothing is left after an error.
    pub async fn register_with(&self, service: impl AsRef<[u8]>, instance: impl AsRef<[u8]>, value: impl Into<Vec<u8>>, opts: RegisterOptions) -> Result<Registration> {
        let key = instance_key(service.as_ref(), instance.as_ref())?;
        let value = value.into();
        validate::check_lock_value(&value)?;
        validate::ttl(opts.ttl)?;
        self.check_open()?;
        use tracing::Instrument;
        let span = crate::sync::spans::register(&key);
        let r = keeper::start(self.clone(), key, value, opts).instrument(span.clone()).await;
        crate::sync::spans::ended(&span, &r, "registered");
        r
    }

    /// The instances of `service` now: one read.
    pub async fn instances(&self, service: impl AsRef<[u8]>) -> Result<Instances> {
        let prefix = service_prefix(service.as_ref())?;
        self.check_open()?;
        read(self, &prefix).await
    }

    /// A stream of `service`'s instance sets: the current one first, then one after each
    /// change (see [`Discovery`]). Sends nothing until the first `next`.
    pub fn discover(&self, service: impl AsRef<[u8]>) -> Result<Discovery> {
        let prefix = service_prefix(service.as_ref())?;
        Ok(Discovery::new(self.clone(), prefix))
    }
}

/// `<service>/`, for a service name that is a valid lock name.
fn service_prefix(service: &[u8]) -> Result<Vec<u8>> {
    validate::check_lock_name(service)?;
    let mut p = service.to_vec();
    p.push(b'/');
    Ok(p)
}

/// `<service>/<instance>`: an instance name is not empty and has no `/` or NUL.
fn instance_key(service: &[u8], instance: &[u8]) -> Result<Vec<u8>> {
    if instance.is_empty() || instance.contains(&b'/') || instance.contains(&0) {
        return Err(Error::invalid(format!(
            "an instance name must be non-empty, without '/' or NUL: {:?}",
            String::from_utf8_lossy(instance)
        )));
    }
    let mut key = service_prefix(service)?;
    key.extend_from_slice(instance);
    Ok(key)
}

/// Every instance under `prefix` at one revision.
async fn read(client: &Client, prefix: &[u8]) -> Result<Instances> {
    let key = prefix.to_vec();
    let resp = client
        .call(None, true, move |rpc| {
            let (mut kv, key) = (rpc.kv.get(), key.clone());
            async move { kv.get(key, Some(GetOptions::new().with_prefix().with_sort(SortTarget::Key, SortOrder::Ascend))).await }
        })
        .await?;
    let revision = resp.header().map_or(0, |h| h.revision());
    let instances = resp.kvs().iter().filter_map(|kv| instance(prefix, &KeyValue::from(kv))).collect();
    Ok(Instances { instances, revision })
}

/// The instance a key under `prefix` is, if it is one (a direct child).
fn instance(prefix: &[u8], kv: &KeyValue) -> Option<Instance> {
    let name = kv.key.strip_prefix(prefix)?;
    if name.is_empty() || name.contains(&b'/') {
        return None;
    }
    Some(Instance { name: name.to_vec(), value: kv.value.clone(), lease: kv.lease, mod_revision: kv.mod_revision })
}
