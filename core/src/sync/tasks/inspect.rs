//! Who works on what: a queue's claims as etcd holds them, for `etcdlock status`.

use super::dead::all;
use super::keys;
use super::TaskQueue;
use crate::client::kv::KeyValue;
use crate::error::Result;
use std::collections::BTreeMap;

/// An item covered by a claim key: held by a worker, or delayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimInfo {
    /// The item's id.
    pub id: String,
    /// The claim key's value: [`ClaimOptions::worker`](super::ClaimOptions::worker) of the
    /// claim (`delayed` for a delay).
    pub worker: Vec<u8>,
    /// The claim key's create revision: the task's fencing token.
    pub token: i64,
    /// The lease the claim key is on (the worker's, or the delay's).
    pub lease: i64,
    /// A delay (a nack with a delay, or a put with one) rather than a worker's claim.
    pub delayed: bool,
}

impl TaskQueue {
    /// The items covered by a claim key now, in queue order (the highest priority first), read
    /// at one revision. For an item with more than one claim key (a try-lock that lost, about
    /// to be deleted), the first one, which is the claim.
    pub async fn claims(&self) -> Result<Vec<ClaimInfo>> {
        let k = &self.inner.keys;
        let (claims_prefix, items_prefix) = (k.claims(), k.items());
        let (claims, revision) = all(&self.inner.client, &claims_prefix, true, 0).await?;
        if claims.is_empty() {
            return Ok(Vec::new());
        }
        let (items, _) = all(&self.inner.client, &items_prefix, true, revision).await?;
        let ids: BTreeMap<&[u8], String> = items
            .iter()
            .filter_map(|kv| Some((k.slot_of(&items_prefix, &kv.key)?, keys::decode_item(&kv.value)?.0)))
            .collect();
        let mut first: BTreeMap<&[u8], &KeyValue> = BTreeMap::new();
        for kv in &claims {
            let Some(slot) = k.slot_of(&claims_prefix, &kv.key) else { continue };
            let e = first.entry(slot).or_insert(kv);
            if kv.create_revision < e.create_revision {
                *e = kv;
            }
        }
        Ok(first
            .into_iter()
            .filter_map(|(slot, kv)| {
                Some(ClaimInfo {
                    // A claim whose item is gone at this revision (acked or dead, its claim key
                    // about to go) is no longer work in progress.
                    id: ids.get(slot)?.clone(),
                    worker: kv.value.clone(),
                    token: kv.create_revision,
                    lease: kv.lease,
                    delayed: kv.value == keys::DELAYED,
                })
            })
            .collect())
    }
}
