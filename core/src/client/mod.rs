//! The client: connection, bounded in-flight requests, deadlines, retries, and minimal KV.

pub(crate) mod kv;
pub(crate) mod validate;
mod call;
mod extension;
mod options;

pub(crate) use extension::Extension;
pub use options::ClientOptions;

use crate::error::{Error, ErrorKind, Result};
use crate::lease::keepalive::Keeper;
use crate::transport::paths::Paths;
use crate::transport::stats::ConnStats;
use crate::client::kv::KeyValue;
use crate::lease::Lease;
use crate::runtime;
use crate::watch::{Watch, WatchOptions};
use crate::watch::hub::Hub;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The per-service clients that requests use (cloning an `etcd_client::Client` would clone
/// eight channel handles).
pub(crate) struct Rpc {
    pub kv: crate::transport::kv_pool::KvPool,
    pub lease: etcd_client::LeaseClient,
}

/// A connection to an etcd cluster. Cheap to clone; all clones share one connection, one
/// keepalive stream and one watch stream. Usable from any thread or task.
///
/// ```
/// # #[tokio::main] async fn main() -> etcdlock::Result<()> {
/// # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
/// # let endpoints = etcd.endpoints();
/// // endpoints: the etcd members' client URLs, e.g. ["http://127.0.0.1:2379"]
/// let client = etcdlock::Client::connect(endpoints, Default::default()).await?;
/// client.put(b"greeting", b"hello", None).await?;
/// assert_eq!(client.get(b"greeting").await?.unwrap().value, b"hello");
/// client.close().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// For unary calls only (on the KV channel, transport/h2_channel.rs): streams take `Paths`.
    pub etcd: etcd_client::Client,
    pub rpc: Rpc,
    pub opts: ClientOptions,
    permits: Semaphore,
    /// Cancelled by [`Inner::mark_closed`] only, which sets `is_closed` first.
    pub closed: CancellationToken,
    /// What every call checks: reading a CancellationToken's state takes its mutex.
    is_closed: AtomicBool,
    pub pid: u32,
    pub keeper: Keeper,
    pub hub: Hub,
    /// What the recipes built on this client keep per client; the client never looks inside.
    pub extension: Extension,
    /// The auth token's generation: bumped by each refresh, so that many requests finding the
    /// same token stale refresh it once.
    token: std::sync::atomic::AtomicU64,
    refreshing: tokio::sync::Mutex<()>,
    /// What the connection counts (`Client::metrics`).
    pub stats: Arc<ConnStats>,
    /// The client's name (`ClientOptions::name`, resolved): the `client` label of its metrics.
    pub name: String,
}

impl Drop for Inner {
    /// When the last handle goes without `close()`: stops the background tasks and revokes
    /// the leases still kept alive (only the shared lock leases: any other has a handle, and
    /// every handle holds the client).
    fn drop(&mut self) {
        if runtime::check_pid(self.pid).is_err() || !self.mark_closed() {
            return;
        }
        self.keeper.abandon_all(&self.etcd, Instant::now() + self.opts.request_timeout);
    }
}

impl Inner {
    /// Requests sent and not answered yet (each holds one of the `max_in_flight` permits).
    pub(crate) fn in_flight(&self) -> usize {
        self.opts.max_in_flight.saturating_sub(self.permits.available_permits())
    }

    /// Marks the client closed and cancels its token; false if it already was.
    pub(crate) fn mark_closed(&self) -> bool {
        if self.is_closed.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.closed.cancel();
        true
    }
}

impl runtime::Closing for Inner {
    fn cancel(&self) {
        self.mark_closed();
    }

    fn release(self: Arc<Self>) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        let deadline = Instant::now() + self.opts.request_timeout;
        Box::pin(async move { self.keeper.revoke_all(&self.etcd, deadline).await })
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("closed", &self.is_closed()).finish()
    }
}

impl Client {
    /// Connects to the given endpoints (`http://host:port`) and checks that the cluster answers
    /// within `connect_timeout`.
    pub async fn connect<S: AsRef<str>>(
        endpoints: impl IntoIterator<Item = S>,
        mut opts: ClientOptions,
    ) -> Result<Client> {
        let name = opts.resolve_name()?.to_string();
        let eps: Vec<String> = endpoints.into_iter().map(|s| s.as_ref().to_string()).collect();
        let eps = validate::endpoints(&eps)?;
        validate::timeout("connect_timeout", opts.connect_timeout)?;
        validate::timeout("request_timeout", opts.request_timeout)?;
        validate::timeout("idle_lease_timeout", opts.idle_lease_timeout)?;
        if opts.max_in_flight == 0 {
            return Err(Error::invalid("max_in_flight must be at least 1"));
        }
        let tls = match validate::uses_tls(&eps, opts.tls.is_some())? {
            false => None,
            true => Some(crate::transport::tls::Tls::new(opts.tls.as_ref().unwrap_or(&Default::default()))?),
        };
        let copts = crate::transport::paths::connect_options(opts.connect_timeout, opts.user.as_ref());
        // The streams' connections (etcd-client's own channel) take the same TLS settings.
        let stream_opts = match &tls {
            Some(t) => copts.clone().with_tls(t.for_tonic(opts.connect_timeout)),
            None => copts.clone(),
        };
        let deadline = Instant::now() + opts.connect_timeout;
        let stats = Arc::new(ConnStats::default());
        // Unary calls (KV, lease grant and revoke) take a leaner channel than etcd-client's own,
        // which also picks and leaves members (design.md, "Member selection"; transport/h2_channel.rs).
        // Making it authenticates a user: that request carries the connect deadline too.
        let call = crate::transport::h2_channel::Call { deadline, idempotent: true };
        let unary = tokio::time::timeout_at(
            deadline,
            crate::transport::h2_channel::CALL.scope(
                call,
                crate::transport::h2_channel::client_over(&eps, opts.connect_timeout.min(opts.request_timeout), copts, tls, stats.clone()),
            ),
        )
        .await
        .map_err(|_| Error::new(ErrorKind::Unavailable, "cannot reach etcd: no member answered in time"))??;
        let streams = if eps.len() == 1 { Some(crate::transport::paths::single(&eps, &stream_opts, deadline).await?) } else { None };
        let closed = CancellationToken::new();
        let paths = |stream, shared| Paths::new(stream, shared, eps.clone(), stream_opts.clone(), stats.clone());
        let client = Client {
            inner: Arc::new(Inner {
                keeper: Keeper::new(paths("keepalive", streams.clone()), closed.clone()),
                hub: Hub::new(paths("watch", streams), closed.clone()),
                stats,
                name,
                rpc: Rpc { kv: crate::transport::kv_pool::KvPool::new(unary.kv_client()), lease: unary.lease_client() },
                extension: Extension::default(),
                token: Default::default(),
                refreshing: Default::default(),
                etcd: unary,
                permits: Semaphore::new(opts.max_in_flight),
                opts,
                closed,
                is_closed: AtomicBool::new(false),
                pid: runtime::current_pid(),
            }),
        };
        let closing: std::sync::Weak<dyn runtime::Closing> = Arc::downgrade(&client.inner) as _;
        runtime::register(closing);
        // The connection is lazy: make one cheap linearizable request so that an unreachable or
        // leaderless cluster fails here, within connect_timeout, not on first use. It must need
        // no permission: a user may be granted one prefix only, and reading itself is what
        // etcd allows every user.
        let (etcd, user) = (client.inner.etcd.clone(), client.inner.opts.user.as_ref().map(|(u, _)| u.clone()));
        client
            .call(Some(deadline), true, move |rpc| {
                let (mut kv, mut auth, user) = (rpc.kv.get(), etcd.auth_client(), user.clone());
                async move {
                    match user {
                        Some(user) => auth.user_get(user).await.map(drop),
                        None => kv.get(vec![0u8], Some(etcd_client::GetOptions::new().with_count_only())).await.map(drop),
                    }
                }
            })
            .await
            .map_err(crate::error::unreachable)?;
        Ok(client)
    }

    /// Closes the client: pending and future calls fail with [`ErrorKind::Closed`], every
    /// lease of this client is revoked (best effort, bounded by `request_timeout`), and its
    /// locks and watches are lost. Idempotent.
    pub async fn close(&self) {
        if runtime::check_pid(self.inner.pid).is_err() || !self.inner.mark_closed() {
            return;
        }
        let deadline = Instant::now() + self.inner.opts.request_timeout;
        self.inner.keeper.revoke_all(&self.inner.etcd, deadline).await;
    }

    /// The client's name ([`ClientOptions::name`], or the default it was given): the `client`
    /// label of its metrics.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Whether [`Client::close`] was called (on this handle or any clone of it): every call
    /// then fails with [`ErrorKind::Closed`].
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed.load(Ordering::Acquire)
    }

    /// Waits `delay` (a retry's back-off), or fails with `Closed` as soon as the client closes.
    pub(crate) async fn sleep_unless_closed(&self, delay: std::time::Duration) -> Result<()> {
        tokio::select! {
            _ = tokio::time::sleep(delay) => Ok(()),
            _ = self.inner.closed.cancelled() => Err(closed_error()),
        }
    }

    /// Grants a lease of `ttl_secs` and keeps it alive until it is revoked or dropped.
    pub async fn lease(&self, ttl_secs: i64) -> Result<Lease> {
        Lease::grant(self, ttl_secs, None).await
    }

    /// Watches a key (or, with `opts.prefix`, every key under it), resuming across failures.
    /// Returns once etcd has confirmed the watch: without a start revision, every change made
    /// after this returns is delivered.
    pub async fn watch(&self, key: impl Into<Vec<u8>>, opts: WatchOptions) -> Result<Watch> {
        Watch::new(self, key.into(), opts).await
    }

    /// Reads `key` from etcd, linearizably (never older than a write that finished before the
    /// call); `None` if it does not exist. Retried on transient failures within
    /// `request_timeout`, as a read is idempotent. `InvalidArgument` for an empty or too long
    /// key; `Unavailable` or `Timeout` if etcd does not answer in time.
    pub async fn get(&self, key: &[u8]) -> Result<Option<KeyValue>> {
        validate::key(key)?;
        let key = key.to_vec();
        let resp = self
            .call(None, true, move |rpc| {
                let (mut kv, key) = (rpc.kv.get(), key.clone());
                async move { kv.get(key, None).await }
            })
            .await?;
        Ok(resp.kvs().first().map(KeyValue::from))
    }

    /// Writes `value` at `key`, attached to `lease` if given. Returns the write's revision.
    /// Not retried: a write whose outcome is unknown is reported, never repeated blindly.
    pub async fn put(&self, key: &[u8], value: &[u8], lease: Option<&Lease>) -> Result<i64> {
        validate::key(key)?;
        let lease_id = match lease {
            Some(l) => {
                l.check_usable()?;
                l.id()
            }
            None => 0,
        };
        let (key, value) = (key.to_vec(), value.to_vec());
        let resp = self
            .call(None, false, move |rpc| {
                let (mut kv, key, value) = (rpc.kv.get(), key.clone(), value.clone());
                let opts = (lease_id != 0).then(|| etcd_client::PutOptions::new().with_lease(lease_id));
                async move { kv.put(key, value, opts).await }
            })
            .await?;
        Ok(resp.header().map_or(0, |h| h.revision()))
    }

    /// Deletes `key`; returns whether it existed.
    pub async fn delete(&self, key: &[u8]) -> Result<bool> {
        validate::key(key)?;
        let key = key.to_vec();
        let resp = self
            .call(None, false, move |rpc| {
                let (mut kv, key) = (rpc.kv.get(), key.clone());
                async move { kv.delete(key, None).await }
            })
            .await?;
        Ok(resp.deleted() > 0)
    }
}

pub(crate) fn closed_error() -> Error {
    Error::new(ErrorKind::Closed, "the client is closed")
}

