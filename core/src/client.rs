//! The client: connection, bounded in-flight requests, deadlines, retries, and minimal KV.

use crate::backoff::retry;
use crate::error::{Error, ErrorKind, Result};
use crate::keepalive::Keeper;
use crate::paths::Paths;
use crate::kv::KeyValue;
use crate::lease::Lease;
use crate::mutex::Mutex;
use crate::runtime;
use crate::session::{self, Sessions};
use crate::validate;
use crate::watch::{Watch, WatchOptions};
use crate::watch_hub::Hub;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How to connect. `Default` gives 5 s timeouts and 256 requests in flight.
#[derive(Clone)]
pub struct ClientOptions {
    /// Bound on establishing the first connection (and on the connect probe).
    pub connect_timeout: Duration,
    /// Bound on each request, retries included, unless the caller gives a deadline.
    pub request_timeout: Duration,
    /// User name and password, for etcd with authentication enabled.
    pub user: Option<(String, String)>,
    /// At most this many unary requests of this client are in flight at once; more wait.
    pub max_in_flight: usize,
    /// The lease the client's locks of one TTL share is revoked after this long without any
    /// acquisition or held lock (see [`Client::mutex`]).
    pub idle_lease_timeout: Duration,
    /// TLS settings for `https://` endpoints (`None` with `https://` trusts the system's roots).
    /// Giving them with `http://` endpoints is an error: the endpoints say which it is.
    pub tls: Option<crate::TlsOptions>,
}

/// Never prints the password.
impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("user", &self.user.as_ref().map(|(user, _)| (user, "<password>")))
            .field("max_in_flight", &self.max_in_flight)
            .field("idle_lease_timeout", &self.idle_lease_timeout)
            .field("tls", &self.tls)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn debug_output_shows_no_password() {
        let opts = super::ClientOptions { user: Some(("app".into(), "s3cret".into())), ..Default::default() };
        let shown = format!("{opts:?}");
        assert!(shown.contains("app") && !shown.contains("s3cret"), "{shown}");
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(5),
            user: None,
            max_in_flight: 256,
            idle_lease_timeout: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// The per-service clients that requests use (cloning an `etcd_client::Client` would clone
/// eight channel handles).
pub(crate) struct Rpc {
    pub kv: crate::kv_pool::KvPool,
    pub lease: etcd_client::LeaseClient,
}

/// A connection to an etcd cluster. Cheap to clone; all clones share one connection, one
/// keepalive stream and one watch stream. Usable from any thread or task.
///
/// ```no_run
/// # async fn demo() -> etcdlock::Result<()> {
/// let client = etcdlock::Client::connect(["http://127.0.0.1:2379"], Default::default()).await?;
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
    /// For unary calls only (on the KV channel, h2_channel.rs): streams take `Paths`.
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
    pub monitors: Arc<crate::monitor::Deferred>,
    pub sessions: Sessions,
    pub queue_hints: crate::mutex::QueueHints,
    /// The auth token's generation: bumped by each refresh, so that many requests finding the
    /// same token stale refresh it once.
    token: std::sync::atomic::AtomicU64,
    refreshing: tokio::sync::Mutex<()>,
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
    /// Authenticates again, unless another request did since the token of `generation`.
    async fn refresh_token(&self, generation: u64) -> Result<()> {
        let _one = self.refreshing.lock().await;
        if self.token.load(Ordering::Acquire) == generation {
            self.etcd.refresh_token().await?;
            self.token.fetch_add(1, Ordering::AcqRel);
        }
        Ok(())
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
        opts: ClientOptions,
    ) -> Result<Client> {
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
            true => Some(crate::tls::Tls::new(opts.tls.as_ref().unwrap_or(&Default::default()))?),
        };
        let copts = crate::paths::connect_options(&opts);
        // The streams' connections (etcd-client's own channel) take the same TLS settings.
        let stream_opts = match &tls {
            Some(t) => copts.clone().with_tls(t.for_tonic(opts.connect_timeout)),
            None => copts.clone(),
        };
        let deadline = Instant::now() + opts.connect_timeout;
        // Unary calls (KV, lease grant and revoke) take a leaner channel than etcd-client's own,
        // which also picks and leaves members (design.md, "Member selection"; h2_channel.rs).
        let unary = tokio::time::timeout_at(
            deadline,
            crate::h2_channel::client_over(&eps, opts.connect_timeout.min(opts.request_timeout), copts, tls),
        )
        .await
        .map_err(|_| Error::new(ErrorKind::Unavailable, "cannot reach etcd: no member answered in time"))??;
        let streams = if eps.len() == 1 { Some(crate::paths::single(&eps, &stream_opts, deadline).await?) } else { None };
        let closed = CancellationToken::new();
        let client = Client {
            inner: Arc::new(Inner {
                keeper: Keeper::new(Paths::new(streams.clone(), eps.clone(), stream_opts.clone()), closed.clone()),
                hub: Hub::new(Paths::new(streams, eps, stream_opts), closed.clone()),
                rpc: Rpc { kv: crate::kv_pool::KvPool::new(unary.kv_client()), lease: unary.lease_client() },
                monitors: crate::monitor::Deferred::new(closed.clone()),
                sessions: Sessions::default(),
                queue_hints: Default::default(),
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
        runtime::register_client(Arc::downgrade(&client.inner));
        session::start_sweep(Arc::downgrade(&client.inner), client.inner.opts.idle_lease_timeout, client.inner.closed.clone());
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
            .map_err(connect_error)?;
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

    pub fn is_closed(&self) -> bool {
        self.inner.is_closed.load(Ordering::Acquire)
    }

    /// Grants a lease of `ttl_secs` and keeps it alive until it is revoked or dropped.
    pub async fn lease(&self, ttl_secs: i64) -> Result<Lease> {
        Lease::grant(self, ttl_secs, None).await
    }

    /// A handle on the lock `name`. Sends nothing until it is locked. Its queue keys are bound
    /// to the lease this client's locks with `ttl_secs` share (granted on first use, kept
    /// alive while in use, revoked after `idle_lease_timeout` unused or when an acquire fails
    /// with nothing else using it).
    pub fn mutex(&self, name: impl Into<Vec<u8>>, ttl_secs: i64) -> Result<Mutex> {
        Mutex::new(self, name.into(), ttl_secs)
    }

    /// Watches a key (or, with `opts.prefix`, every key under it), resuming across failures.
    /// Returns once etcd has confirmed the watch: without a start revision, every change made
    /// after this returns is delivered.
    pub async fn watch(&self, key: impl Into<Vec<u8>>, opts: WatchOptions) -> Result<Watch> {
        Watch::new(self, key.into(), opts).await
    }

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

    /// Errors if the client is closed or was inherited through fork.
    pub(crate) fn check_open(&self) -> Result<()> {
        runtime::check_pid(self.inner.pid)?;
        if self.is_closed() {
            return Err(closed_error());
        }
        Ok(())
    }

    /// Runs one unary request: bounded in flight, bounded in time (the caller's deadline or
    /// `request_timeout`), retried with backoff on transient errors when `idempotent`, and cut
    /// short by `close()`.
    pub(crate) async fn call<T, F, Fut>(&self, deadline: Option<Instant>, idempotent: bool, f: F) -> Result<T>
    where
        F: FnMut(&Rpc) -> Fut,
        Fut: Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        self.check_open()?;
        tokio::select! {
            biased;
            r = self.send(deadline, idempotent, f) => r,
            _ = self.inner.closed.cancelled() => Err(closed_error()),
        }
    }

    /// One Txn through [`Client::call`], made by `build` for each attempt: etcd-client consumes
    /// it, and building costs what a clone would (a cycle of lock and release used to make each
    /// of its Txns twice).
    pub(crate) async fn txn(&self, build: impl Fn() -> etcd_client::Txn, idempotent: bool) -> Result<etcd_client::TxnResponse> {
        self.call(None, idempotent, |rpc| {
            let (mut kv, txn) = (rpc.kv.get(), build());
            async move { kv.txn(txn).await }
        })
        .await
    }

    /// Like [`Client::call`], but also after `close()`: for cleanup that must finish even when
    /// the client closes under it (deleting a failed waiter's key, revoking a lease).
    pub(crate) async fn call_for_cleanup<T, F, Fut>(&self, deadline: Option<Instant>, f: F) -> Result<T>
    where
        F: FnMut(&Rpc) -> Fut,
        Fut: Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        runtime::check_pid(self.inner.pid)?;
        self.send(deadline, true, f).await
    }

    async fn send<T, F, Fut>(&self, deadline: Option<Instant>, idempotent: bool, mut f: F) -> Result<T>
    where
        F: FnMut(&Rpc) -> Fut,
        Fut: Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        let deadline = deadline.unwrap_or_else(|| Instant::now() + self.inner.opts.request_timeout);
        let inner = &self.inner;
        let refreshed = AtomicBool::new(false);
        let refreshed = &refreshed;
        let mut attempt = || {
            // Boxed: a tonic call's future is kilobytes, and every async layer above (retry,
            // deadline, lock, a binding's spawned task) would otherwise carry and copy it.
            let fut = Box::pin(f(&inner.rpc));
            // The deadline goes along with the request (as grpc-timeout): see h2_channel.rs.
            crate::h2_channel::DEADLINE.scope(deadline, async move {
                let generation = inner.token.load(Ordering::Acquire);
                let _permit = inner.permits.acquire().await.map_err(|_| closed_error())?;
                match fut.await.map_err(Error::from) {
                    // etcd rejected the token before doing anything: authenticate again, once
                    // per call, and send the request again (also one that is not idempotent).
                    Err(e) if e.is_stale_token() && !refreshed.swap(true, Ordering::AcqRel) => {
                        Err(inner.refresh_token(generation).await.map_or_else(|e| e, |()| e.resend()))
                    }
                    r => r,
                }
            })
        };
        if idempotent {
            return retry(Some(deadline), attempt).await;
        }
        // Only a request that never left may be sent again.
        let mut backoff = crate::backoff::Backoff::default();
        loop {
            match tokio::time::timeout_at(deadline, attempt()).await {
                Ok(Err(e)) if e.is_unsent() && e.is_transient() && backoff.wait(Some(deadline)).await => continue,
                Ok(r) => return r,
                Err(_) => return Err(Error::new(ErrorKind::Timeout, "request deadline exceeded")),
            }
        }
    }
}

pub(crate) fn closed_error() -> Error {
    Error::new(ErrorKind::Closed, "the client is closed")
}

pub(crate) fn connect_error(e: Error) -> Error {
    match e.kind() {
        ErrorKind::Timeout | ErrorKind::Unavailable => Error::new(
            ErrorKind::Unavailable,
            format!("cannot reach etcd: {}", e.message()),
        ),
        _ => e,
    }
}
