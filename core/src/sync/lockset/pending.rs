//! What a failed or abandoned set acquisition leaves behind: a key in every member's queue,
//! deleted together (one Txn), inline or in the background, as a lone mutex's key is
//! (`sync/mutex/cleanup.rs`: the same rules for fencing, late copies and key names).

use crate::client::Client;
use crate::error::Result;
use crate::lease::{Lease, LeaseState};
use crate::runtime;
use crate::sync::session::{Session, Use};
use etcd_client::{Compare, CompareOp, Txn, TxnOp};
use std::sync::Arc;

/// The set's keys, which must not outlive a failed acquire. Dropped while armed (the acquire
/// future was dropped, or the inline delete failed), they are deleted in the background.
pub(super) struct PendingSet {
    client: Client,
    /// Each member's key and its number on the lease.
    pub(super) keys: Vec<(Vec<u8>, u64)>,
    /// The member names' hashes, in the keys' order (to free the numbers).
    hashes: Vec<u64>,
    lease: Arc<LeaseState>,
    lease_id: i64,
    armed: bool,
    /// Whether the enqueue's outcome is known (no enqueue request of ours is in flight).
    pub(super) settled: bool,
    /// The keys' create revision, once known: it fences their deletes.
    pub(super) created: Option<i64>,
    active: Option<Use>,
}

impl PendingSet {
    pub(super) fn new(client: &Client, lease: &Lease, keys: Vec<(Vec<u8>, u64)>, hashes: Vec<u64>, active: Use) -> PendingSet {
        PendingSet {
            client: client.clone(),
            keys,
            hashes,
            lease: lease.state().clone(),
            lease_id: lease.id(),
            armed: true,
            settled: false,
            created: None,
            active: Some(active),
        }
    }

    /// A copy of the enqueue may land later: the lease is revoked once unused.
    pub(super) fn retire_lease(&self) {
        if let Some(active) = &self.active {
            active.retire();
        }
    }

    /// The keys now belong to a guard.
    pub(super) fn disarm(&mut self) -> (Vec<(Vec<u8>, u64)>, Option<Use>) {
        self.armed = false;
        (std::mem::take(&mut self.keys), self.active.take())
    }

    /// Removes the keys after a failed acquire: by revoking the shared lease when nothing else
    /// uses it (which deletes every key on it), else by deleting them.
    pub(super) async fn cleanup(&mut self, session: &Session) {
        if let Some(active) = self.active.take() {
            if session.failed(&self.client, self.lease_id, active).await {
                self.armed = false;
                return;
            }
        }
        self.delete_keys().await;
    }

    /// Deletes the keys (the lease stays); in the background if that fails.
    pub(super) async fn delete_keys(&mut self) {
        if delete(&self.client, &self.keys, self.created, None).await.is_ok() {
            self.armed = false;
            self.free_numbers();
        }
    }

    fn free_numbers(&self) {
        // Only after fenced deletes: a late delete by name would delete a newer key of that name.
        if self.created.is_some() {
            for (h, (_, slot)) in self.hashes.iter().zip(&self.keys) {
                self.lease.free_slot((*h, *slot));
            }
        }
    }
}

/// One Txn deleting every key: each only if it is still the one created at `created` (one
/// nested Txn per key), or by name when that is unknown.
async fn delete(client: &Client, keys: &[(Vec<u8>, u64)], created: Option<i64>, deadline: Option<tokio::time::Instant>) -> Result<()> {
    let keys: Vec<Vec<u8>> = keys.iter().map(|(k, _)| k.clone()).collect();
    client
        .call_for_cleanup(deadline, move |rpc| {
            let mut kv = rpc.kv.get();
            let txn = Txn::new().and_then(keys.iter().map(|k| fenced_delete(k, created)).collect::<Vec<_>>());
            async move { kv.txn(txn).await }
        })
        .await
        .map(drop)
}

/// Deletes `key` if it was created at `created` (any version when `None`).
pub(super) fn fenced_delete(key: &[u8], created: Option<i64>) -> TxnOp {
    let delete = TxnOp::delete(key.to_vec(), None);
    match created {
        Some(rev) => TxnOp::txn(Txn::new().when([Compare::create_revision(key.to_vec(), CompareOp::Equal, rev)]).and_then([delete])),
        None => delete,
    }
}

impl Drop for PendingSet {
    fn drop(&mut self) {
        if !self.armed || runtime::check_pid(self.client.inner.pid).is_err() {
            return;
        }
        // Dropped with an enqueue in flight: it may land after the first delete (see
        // `PendingKey`'s drop): delete again after the request timeout, and retire the lease.
        let again_after = (!self.settled).then_some(self.client.inner.opts.request_timeout);
        if !self.settled {
            self.retire_lease();
        }
        let keys = std::mem::take(&mut self.keys);
        let first = keys.first().map(|(k, _)| k.clone()).unwrap_or_default();
        let background = Arc::new(Background(PendingSet {
            client: self.client.clone(),
            keys,
            hashes: std::mem::take(&mut self.hashes),
            lease: self.lease.clone(),
            lease_id: self.lease_id,
            armed: false,
            settled: true,
            created: self.created,
            active: None,
        }));
        crate::sync::queue::delete_in_background(self.client.clone(), &first, self.lease.clone(), again_after, move || {
            let b = background.clone();
            async move { delete(&b.0.client, &b.0.keys, b.0.created, None).await }
        });
    }
}

/// A set's keys being deleted in the background; their numbers are free again once this is
/// dropped (if the deletes were fenced).
struct Background(PendingSet);

impl Drop for Background {
    fn drop(&mut self) {
        self.0.free_numbers();
    }
}
