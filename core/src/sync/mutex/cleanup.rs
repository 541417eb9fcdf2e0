//! What a failed or abandoned acquisition leaves behind: its queue key, deleted inline or in
//! the background (one policy: `queue::delete_in_background`).

use super::*;

impl Mutex {
    /// Removes the queue key after a failed acquire: by revoking the shared lease when nothing
    /// else uses it (which also deletes any key on it), else by deleting the key.
    pub(super) async fn cleanup(&self, pending: &mut PendingKey, lease: &Lease) {
        if let (Leases::Session(session), Some(active)) = (&self.leases, pending.active.take()) {
            if session.failed(&self.client, lease.id(), active).await {
                pending.armed = false;
                return;
            }
        }
        if pending.delete(None, true).await.is_ok() {
            pending.armed = false;
        }
    }
}

/// A queue key that must not outlive a failed acquire. Dropped while armed (the acquire
/// future was dropped, or the inline delete failed), it is deleted in the background.
pub(super) struct PendingKey {
    pub(super) client: Client,
    pub(super) key: Vec<u8>,
    pub(super) lease: Arc<LeaseState>,
    /// (hash of the lock name, number) of the key on its lease.
    pub(super) slot: (u64, u64),
    pub(super) armed: bool,
    /// Whether the enqueue's outcome is known (no enqueue request of ours is in flight).
    pub(super) settled: bool,
    /// The key's create revision, once an enqueue's answer told it.
    pub(super) created: Option<i64>,
    /// The acquisition's use of the client's shared lease, if it is on one.
    pub(super) active: Option<Use>,
}

impl PendingKey {
    /// Deletes the key. A delete may be delivered twice, and late (see `Client::txn_noting_copies`);
    /// the key's name is used again by the next acquisition of the same lock on the same lease,
    /// so a late delete by name would delete that newer key. Fenced by the create revision when
    /// it is known, and only then is the name freed; otherwise the name stays taken (the lease
    /// is retired: an enqueue with an unknown outcome noted its copies).
    async fn delete(&self, deadline: Option<Instant>, free_slot: bool) -> Result<()> {
        let (key, created) = (self.key.clone(), self.created);
        self.client
            .call_for_cleanup(deadline, move |rpc| {
                let (mut kv, key) = (rpc.kv.get(), key.clone());
                async move {
                    let delete = TxnOp::delete(key.clone(), None);
                    let txn = match created {
                        Some(rev) => Txn::new().when([Compare::create_revision(key, CompareOp::Equal, rev)]).and_then([delete]),
                        None => Txn::new().and_then([delete]),
                    };
                    kv.txn(txn).await
                }
            })
            .await?;
        if free_slot && created.is_some() {
            self.lease.free_slot(self.slot);
        }
        Ok(())
    }
}

impl Drop for PendingKey {
    fn drop(&mut self) {
        if !self.armed || runtime::check_pid(self.client.inner.pid).is_err() {
            return;
        }
        // Dropped with an enqueue in flight: it may land after the first delete. Deleting once
        // more later covers a put that lands within its deadline; retiring the shared lease (it
        // is revoked once no lock uses it) covers one that lands at any time.
        let again_after = (!self.settled).then_some(self.client.inner.opts.request_timeout);
        if let (false, Some(active)) = (self.settled, &self.active) {
            active.retire();
        }
        // The key's name stays reserved until the last delete: `Background` frees it when the
        // task lets go of it (if the deletes were fenced).
        let pending = Arc::new(Background(PendingKey {
            client: self.client.clone(),
            key: std::mem::take(&mut self.key),
            lease: self.lease.clone(),
            slot: self.slot,
            armed: false,
            settled: true,
            created: self.created,
            active: None,
        }));
        let key = pending.0.key.clone();
        queue::delete_in_background(self.client.clone(), &key, self.lease.clone(), again_after, move || {
            let pending = pending.clone();
            async move { pending.0.delete(None, false).await }
        });
    }
}

/// A queue key being deleted in the background; its name is free again once this is dropped,
/// if its deletes were fenced (see [`PendingKey::delete`]).
pub(super) struct Background(PendingKey);

impl Drop for Background {
    fn drop(&mut self) {
        if self.0.created.is_some() {
            self.0.lease.free_slot(self.0.slot);
        }
    }
}
