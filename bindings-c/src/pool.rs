//! One kept-alive lease per (client, TTL), shared by every lock the client takes with that TTL.
//!
//! Why: etcdlock_lock_acquire takes a name and a TTL per call, and a fresh lease per call would
//! add a grant and a revoke round trip to every lock cycle. Sharing one lease per TTL is what
//! etcd's own Go `concurrency.Session` does; each acquisition still gets its own queue key
//! (`<name>/<lease hex>[-n]`), so two locks on one lease exclude each other. The leases live
//! until the client is freed (which revokes them).

use etcdlock::{Client, Lease};
use std::collections::HashMap;

#[derive(Default)]
pub(crate) struct LeasePool {
    leases: std::sync::Mutex<HashMap<i64, Lease>>,
    /// Serialises grants, so concurrent first acquires share one new lease.
    granting: tokio::sync::Mutex<()>,
}

impl LeasePool {
    fn lookup(&self, ttl: i64) -> Option<Lease> {
        let map = self.leases.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&ttl).filter(|l| l.is_alive()).cloned()
    }

    /// The live lease for `ttl`, granting one if needed; the flag says it was just granted.
    pub async fn get(&self, client: &Client, ttl: i64) -> etcdlock::Result<(Lease, bool)> {
        if let Some(l) = self.lookup(ttl) {
            return Ok((l, false));
        }
        let _granting = self.granting.lock().await;
        if let Some(l) = self.lookup(ttl) {
            return Ok((l, false));
        }
        let lease = client.lease(ttl).await?;
        let old = self.leases.lock().unwrap_or_else(|p| p.into_inner()).insert(ttl, lease.clone());
        drop(old); // a dead lease: dropping the last handle only tidies up
        Ok((lease, true))
    }

    /// Forgets `lease` if it is still the pooled one for `ttl` (it turned out to be lost).
    pub fn evict(&self, ttl: i64, lease: &Lease) {
        let mut map = self.leases.lock().unwrap_or_else(|p| p.into_inner());
        if map.get(&ttl).is_some_and(|l| l.id() == lease.id()) {
            map.remove(&ttl);
        }
    }
}
