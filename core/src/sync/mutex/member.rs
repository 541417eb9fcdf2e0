//! A queue key that another recipe put (a lock set's one Txn puts a key in every member's
//! queue, `sync/lockset`): where it stands under this handle's rule, and the wait until it
//! holds. The same rules as an acquire of this handle's own, after its enqueue.

use super::*;

impl Mutex {
    pub(crate) fn name_hash(&self) -> u64 {
        self.name_hash
    }

    /// What a key of this handle's kind stores for `value`.
    pub(crate) fn stored<'a>(&self, value: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        self.kind.stored(value)
    }

    /// The name of this handle's queue key numbered `slot` on `lease`.
    pub(crate) fn member_key(&self, lease: &Lease, slot: u64) -> Vec<u8> {
        self.queue_key(lease, slot)
    }

    /// Whether the key created at `my_rev` holds now, by this handle's rule (one read).
    pub(crate) async fn member_holds(&self, key: &[u8], my_rev: i64) -> Result<bool> {
        Ok(match self.kind {
            Kind::Exclusive | Kind::Write => self.position(key, my_rev).await?.predecessor.is_none(),
            Kind::Read | Kind::Permits(_) => matches!(self.place(my_rev).await?.standing, placed::Standing::Holds),
        })
    }

    /// Waits until the key created at `my_rev` holds. Returns the subscription on the key, if
    /// the wait opened one, for its guard to keep. Unbounded: the caller bounds it (deadline,
    /// cancel, close); it ends with `LockLost` when the key or the lease goes.
    pub(crate) async fn member_wait(&self, key: &[u8], value: &[u8], my_rev: i64, lease: &Lease) -> Result<Option<Subscription>> {
        match self.kind {
            Kind::Exclusive | Kind::Write => {
                let pos = self.position_patiently(key, my_rev, lease).await?;
                self.wait(key, my_rev, pos, lease).await
            }
            Kind::Read | Kind::Permits(_) => {
                let place = self.place_patiently(my_rev, lease).await?;
                self.wait_placed(key, &self.kind.stored(value), my_rev, place, lease).await
            }
        }
    }

    /// The guard of a member key that holds.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn member_guard(
        &self,
        key: Vec<u8>,
        slot: u64,
        token: i64,
        lease: Lease,
        own_sub: Option<Subscription>,
        lease_use: Option<Use>,
    ) -> LockGuard {
        LockGuard::new(self.client.clone(), self.name.clone(), key, (self.name_hash, slot), token, lease, own_sub, lease_use, self.kind)
    }
}
