//! How every unary request is sent: bounded in flight and in time, retried with backoff when
//! that is safe, sent again once with a new auth token when etcd refused a stale one.

use super::{closed_error, Client, Inner, Rpc};
use crate::transport::backoff::retry;
use crate::error::{Error, Result};
use crate::runtime;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::time::Instant;

impl Inner {
    /// Authenticates again, unless another request did since the token of `generation`.
    async fn refresh_token(&self, generation: u64) -> Result<()> {
        let _one = self.refreshing.lock().await;
        if self.token.load(Ordering::Acquire) == generation {
            self.etcd.refresh_token().await?;
            self.token.fetch_add(1, Ordering::AcqRel);
            tracing::debug!(target: "etcdlock", "auth token refreshed (expired, or made old by a change of users or roles)");
        }
        Ok(())
    }
}

impl Client {
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

    /// [`Client::txn`] of an idempotent Txn that creates something (a queue key), noting in
    /// `copies` whether a copy of it other than the one answered may still be applied later: the
    /// channel sent it to a second member too, an attempt whose outcome was unknown (lost, cut
    /// off at its deadline) was followed by another, or the call failed. etcd cannot cancel a
    /// request it has forwarded to its leader, and `grpc-timeout` counts from its arrival, so such
    /// a copy can land at any time later: once its comparison holds again (after the key was
    /// deleted), it creates the key again. The caller must then make sure the key dies with its
    /// lease (see `Use::retire`).
    pub(crate) async fn txn_noting_copies(
        &self,
        build: impl Fn() -> etcd_client::Txn,
        copies: &AtomicBool,
    ) -> Result<etcd_client::TxnResponse> {
        let attempts = std::sync::atomic::AtomicUsize::new(0);
        let attempts = &attempts;
        let r = self
            .call(None, true, |rpc| {
                attempts.fetch_add(1, Ordering::AcqRel);
                let (mut kv, txn) = (rpc.kv.get(), build());
                async move {
                    let (r, twice) = crate::transport::h2_channel::noting_second_send(kv.txn(txn)).await;
                    if twice {
                        copies.store(true, Ordering::Release);
                    }
                    r
                }
            })
            .await;
        if r.is_err() || attempts.load(Ordering::Acquire) > 1 {
            copies.store(true, Ordering::Release);
        }
        r
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
        let mut first = true;
        let mut attempt = || {
            if !std::mem::take(&mut first) {
                inner.stats.retries.fetch_add(1, Ordering::Relaxed);
            }
            // Boxed: a tonic call's future is kilobytes, and every async layer above (retry,
            // deadline, lock, a binding's spawned task) would otherwise carry and copy it.
            let fut = Box::pin(f(&inner.rpc));
            // The deadline goes along with the request (as grpc-timeout), and whether it may be
            // sent to a second member while the first stays silent: see transport/h2_channel.rs.
            let call = crate::transport::h2_channel::Call { deadline, idempotent };
            crate::transport::h2_channel::CALL.scope(call, async move {
                let generation = inner.token.load(Ordering::Acquire);
                let _permit = inner.permits.acquire().await.map_err(|_| closed_error())?;
                match fut.await.map_err(Error::from) {
                    // etcd rejected the token before doing anything: authenticate again, once
                    // per call, and send the request again (also one that is not idempotent).
                    Err(e) if e.is_stale_token() && !refreshed.swap(true, Ordering::AcqRel) => {
                        // Boxed: the refresh is an auth call of kilobytes, rare, that every
                        // request's future would otherwise carry and copy.
                        Err(Box::pin(inner.refresh_token(generation)).await.map_or_else(|e| e, |()| e.resend()))
                    }
                    r => r,
                }
            })
        };
        if idempotent {
            return retry(Some(deadline), attempt).await;
        }
        // Only a request that never left may be sent again.
        let mut backoff = crate::transport::backoff::Backoff::default();
        loop {
            match crate::transport::backoff::until(deadline, attempt()).await {
                Err(e) if e.is_unsent() && e.is_transient() && backoff.wait(Some(deadline)).await => continue,
                r => return r,
            }
        }
    }
}
