//! What a pool's slots are doing, read at one revision: for `etcdlock status` and dashboards.

use crate::client::Client;
use crate::error::Result;
use crate::sync::pool::board::{Board, Keys};
use crate::sync::pool::Pool;

/// One slot of a pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotInfo {
    /// The slot's id, as listed in [`PoolOptions::slots`](crate::PoolOptions::slots).
    pub id: String,
    /// What the slot was doing at the revision read.
    pub state: SlotState,
}

/// What one slot of a pool is doing ([`Pool::slots`], [`Client::inspect_pool`]). The lease
/// TTLs are read after the slots, so they may be a moment newer; `None` means the lease had
/// ended by then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotState {
    /// Can be handed out now.
    Free,
    /// Held: the slot's fencing token, the holder's lease (and its seconds left), the
    /// acquisition's token and owner.
    Held {
        /// The slot's fencing token (its key's create revision).
        token: i64,
        /// The ID of the holder's lease.
        lease: i64,
        /// The seconds left of that lease, or `None` if it had ended.
        ttl: Option<i64>,
        /// The fencing token of the acquisition that took the slot (shared by the slots it
        /// took together).
        acquisition: i64,
        /// The acquisition's [`PoolAcquire::owner`](crate::PoolAcquire::owner), empty for none.
        owner: String,
    },
    /// Its holder died; it rests until its lease (`ttl` seconds left) ends.
    Resting {
        /// The ID of the lease the slot rests on.
        lease: i64,
        /// The seconds left of that lease (the rest), or `None` if it had ended.
        ttl: Option<i64>,
    },
    /// Its holder died and no request has seen it yet: it will rest the reuse delay first.
    Dead,
}

impl Pool {
    /// Every slot of this pool, in its order, read at one revision (plus a lease read per held
    /// or resting slot).
    pub async fn slots(&self) -> Result<Vec<SlotInfo>> {
        Ok(self.inner.client.inspect_pool(self.name()).await?.unwrap_or_default())
    }
}

impl Client {
    /// The slots of the pool `name`, or `None` if no pool is defined there.
    pub async fn inspect_pool(&self, name: impl Into<Vec<u8>>) -> Result<Option<Vec<SlotInfo>>> {
        let board = Board::read(self, &Keys::new(name.into())).await?;
        let Some((spec, _)) = &board.spec else { return Ok(None) };
        let mut out = Vec::with_capacity(spec.slots.len());
        for id in &spec.slots {
            let state = if let Some(kv) = board.held.get(id) {
                let text = String::from_utf8_lossy(&kv.value);
                let (acq, owner) = text.split_once(';').unwrap_or(("0", ""));
                SlotState::Held { token: kv.create_revision, lease: kv.lease, ttl: self.lease_ttl(kv.lease).await?, acquisition: acq.parse().unwrap_or(0), owner: owner.to_string() }
            } else if let Some(kv) = board.cool.get(id) {
                SlotState::Resting { lease: kv.lease, ttl: self.lease_ttl(kv.lease).await? }
            } else if board.avail(id, spec.reuse_delay.is_zero()).is_some() {
                SlotState::Free
            } else {
                SlotState::Dead
            };
            out.push(SlotInfo { id: id.clone(), state });
        }
        Ok(Some(out))
    }
}
