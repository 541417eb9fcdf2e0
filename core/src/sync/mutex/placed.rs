//! Waiting under the rules where more than one key may hold at once (a semaphore's permits, a
//! read-write lock's readers): each wait is placed by a read, watches one key (or, for a
//! semaphore's head waiter, the older part of the queue), and reads again when it changes.

use super::wait::{same_key, Rechecks};
use super::*;

/// Where a waiting key stands, read at a revision.
pub(super) struct Place {
    pub(super) revision: i64,
    pub(super) standing: Standing,
}

impl Place {
    /// Whether this place waits on the same thing as `other` (so the same watch serves).
    fn same_wait(&self, other: &Place) -> bool {
        match (&self.standing, &other.standing) {
            (Standing::Head, Standing::Head) => true,
            (Standing::Behind(a), Standing::Behind(b)) => same_key(&Some(a.clone()), b),
            _ => false,
        }
    }
}

pub(super) enum Standing {
    Holds,
    /// A semaphore's first waiter: it waits for any older key to go.
    Head,
    /// It waits for this key to change (to go, or to be rewritten by a semaphore holder).
    Behind(KeyValue),
}

impl Mutex {
    /// Where the key created at `my_rev` stands now, by this handle's rule.
    pub(super) async fn place(&self, my_rev: i64) -> Result<Place> {
        match self.kind {
            Kind::Permits(p) => self.place_permits(p, my_rev).await,
            Kind::Read => self.place_reader(my_rev).await,
            Kind::Exclusive | Kind::Write => unreachable!("a mutex or a writer waits in wait.rs"),
        }
    }

    /// [`Mutex::place`], read again while etcd does not answer, until the lease is lost.
    pub(super) async fn place_patiently(&self, my_rev: i64, lease: &Lease) -> Result<Place> {
        let mut backoff = Backoff::default();
        loop {
            match self.place(my_rev).await {
                Err(e) if e.is_unreachable() => match lease.lost_reason() {
                    Some(reason) => return Err(lost(reason)),
                    None => tokio::time::sleep(backoff.next_delay()).await,
                },
                r => return r,
            }
        }
    }

    /// One range read under the queue prefix.
    pub(super) async fn range(&self, o: GetOptions) -> Result<etcd_client::GetResponse> {
        let prefix = self.prefix.clone();
        self.client
            .call(None, true, move |rpc| {
                let (mut kv, prefix, o) = (rpc.kv.get(), prefix.clone(), o.clone());
                async move { kv.get(prefix, Some(o)).await }
            })
            .await
    }

    /// Waits until the key created at `my_rev` holds. A semaphore's key then rewrites itself
    /// (`value` is what it stores), so that the waiter behind it looks again. Returns the
    /// subscription on our own key, if one was opened, for the guard to keep.
    pub(super) async fn wait_placed(&self, key: &[u8], value: &[u8], my_rev: i64, mut place: Place, lease: &Lease) -> Result<Option<Subscription>> {
        let hub = &self.client.inner.hub;
        let mut own = OwnKey::new(&self.client, key.to_vec(), my_rev, Instant::now() + WATCH_OWN_KEY_AFTER, None);
        let lease_lost = lease.lost();
        let mut backoff = Backoff::default();
        loop {
            // Watched from "now", not from the read's revision: a watch that starts at an old
            // revision waits in etcd's unsynced group for up to 100 ms. The gap between the
            // read and the watch's start is closed by reading again when the watch started
            // later, and in the watch's first 110 ms (see `wait.rs`, RECHECK_AFTER).
            let spec = match &place.standing {
                Standing::Holds => break,
                Standing::Head => Spec { key: self.prefix.clone(), prefix: true, start_revision: 0, prev_kv: true, only_deletes: true },
                Standing::Behind(kv) => Spec { key: kv.key.clone(), prefix: false, start_revision: 0, prev_kv: false, only_deletes: false },
            };
            let head = matches!(place.standing, Standing::Head);
            let mut sub = hub.subscribe(spec);
            let mut rechecks: Option<Rechecks> = None;
            let next = loop {
                tokio::select! {
                    _ = sleep_until(rechecks.as_ref().and_then(Rechecks::next)) => {
                        if let Some(r) = rechecks.as_mut() {
                            r.done += 1;
                        }
                        let now = self.place_patiently(my_rev, lease).await?;
                        if !now.same_wait(&place) {
                            break now;
                        }
                    }
                    msg = sub.rx.recv() => match msg {
                        Some(Msg::Created { revision }) => {
                            backoff.reset();
                            rechecks = Some(Rechecks { created: Instant::now(), done: 0 });
                            if revision > place.revision {
                                let now = self.place_patiently(my_rev, lease).await?;
                                if !now.same_wait(&place) {
                                    break now;
                                }
                            }
                        }
                        // The head looks again only when a key older than its own went.
                        Some(Msg::Events(events)) if head && !events.iter().any(|e| e.prev_kv.as_ref().map_or(true, |p| p.create_revision < my_rev)) => {}
                        Some(Msg::Events(_)) => break self.place_patiently(my_rev, lease).await?,
                        Some(Msg::Progress { .. }) => {}
                        Some(Msg::Failed(_)) | None => {
                            tokio::time::sleep(backoff.next_delay()).await;
                            break self.place_patiently(my_rev, lease).await?;
                        }
                    },
                    _ = own.deleted() => return Err(lost(LostReason::KeyDeleted)),
                    reason = lease_lost.wait() => return Err(lost(reason)),
                }
            };
            place = next;
        }
        if let Some(reason) = lease.lost_reason() {
            return Err(lost(reason));
        }
        if matches!(self.kind, Kind::Permits(_)) {
            self.touch(key, value, my_rev, lease).await?;
        }
        Ok(own.into_subscription())
    }

    /// Rewrites our key as it is (fenced by its create revision): the waiter behind it watches
    /// it, and now stands at the head.
    pub(super) async fn touch(&self, key: &[u8], value: &[u8], my_rev: i64, lease: &Lease) -> Result<()> {
        let lease_id = lease.id();
        let put = || {
            Txn::new()
                .when([Compare::create_revision(key, CompareOp::Equal, my_rev)])
                .and_then([TxnOp::put(key, value, Some(PutOptions::new().with_lease(lease_id)))])
        };
        if !self.client.txn(put, true).await?.succeeded() {
            return Err(lost(LostReason::KeyDeleted));
        }
        Ok(())
    }
}
