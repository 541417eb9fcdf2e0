//! Recipes built on the client's layers, as etcd's Go `concurrency` package is on `clientv3`:
//! nothing below imports from here. Per-client state of a recipe lives here too (see
//! `client::Extension`), not in the client.

pub(crate) mod election;
pub(crate) mod expiring;
pub(crate) mod fence;
pub(crate) mod follow;
pub(crate) mod guard;
pub(crate) mod health;
pub(crate) mod inspect;
pub(crate) mod lockset;
pub(crate) mod metrics;
pub(crate) mod monitor;
pub(crate) mod mutex;
pub(crate) mod once;
pub(crate) mod ordered;
pub(crate) mod pool;
pub(crate) mod own_key;
pub(crate) mod queue;
pub(crate) mod registry;
pub(crate) mod rwlock;
pub(crate) mod semaphore;
pub(crate) mod session;
pub mod spans;
pub(crate) mod survey;
pub(crate) mod tasks;

use crate::client::Client;
use std::sync::Arc;

/// What the recipes keep per client, made on the client's first lock.
pub(crate) struct PerClient {
    /// The shared lock leases, one per TTL.
    pub sessions: session::Sessions,
    /// Which lock names recently had a queue.
    pub queue_hints: mutex::QueueHints,
    /// Held-lock monitors not started yet.
    pub monitors: Arc<monitor::Deferred>,
    /// What [`Client::metrics`] reads.
    pub metrics: metrics::LockMetrics,
    /// A pool's holdings by owner (`sync/pool`).
    pub pool_owners: pool::Owners,
    /// The etcd cluster's ID, read on the first fence (`sync/fence`).
    pub cluster: tokio::sync::OnceCell<u64>,
}

impl PerClient {
    pub fn of(client: &Client) -> Arc<PerClient> {
        client.inner.extension.get_or_init(|| {
            let (inner, closed) = (&client.inner, &client.inner.closed);
            session::start_sweep(Arc::downgrade(inner), inner.opts.idle_lease_timeout, closed.clone());
            PerClient {
                sessions: Default::default(),
                queue_hints: Default::default(),
                monitors: monitor::Deferred::new(closed.clone()),
                metrics: Default::default(),
                pool_owners: Default::default(),
                cluster: Default::default(),
            }
        })
    }
}
