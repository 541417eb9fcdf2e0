//! The dead letters (items past their last delivery) and the queue's counts.

use super::claim::prefix_end;
use super::keys;
use super::Inner;
use crate::client::kv::KeyValue;
use crate::client::Client;
use crate::error::Result;
use etcd_client::{Compare, CompareOp, GetOptions, Txn, TxnOp, TxnOpResponse};
use std::collections::{BTreeMap, HashSet};

/// An item in the dead letters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadTask {
    /// The item's id (the one given to [`TaskQueue::put`](crate::TaskQueue::put), or the one it
    /// made): what [`TaskQueue::requeue_dead`](crate::TaskQueue::requeue_dead) and
    /// [`TaskQueue::delete_dead`](crate::TaskQueue::delete_dead) take.
    pub id: String,
    /// The item's payload, as it was put.
    pub payload: Vec<u8>,
    /// Deliveries it had.
    pub attempts: u32,
    /// The priority it was put with, and goes back at when requeued.
    pub priority: i32,
}

/// A queue's items by state, read at one revision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Claimable now.
    pub pending: u64,
    /// `pending` by priority.
    pub pending_by_priority: BTreeMap<i32, u64>,
    /// Put or given back with a delay that has not passed.
    pub delayed: u64,
    /// Held by a worker.
    pub claimed: u64,
    /// In the dead letters: past the queue's last delivery, waiting for a requeue or a delete
    /// ([`TaskQueue::dead`](crate::TaskQueue::dead)).
    pub dead: u64,
    /// The revision the counts are at.
    pub revision: i64,
}

/// Every key under `prefix` (keys only unless `values`), at `revision` (0: now).
pub(super) async fn all(client: &Client, prefix: &[u8], values: bool, revision: i64) -> Result<(Vec<KeyValue>, i64)> {
    let (key, end) = (prefix.to_vec(), prefix_end(prefix));
    let resp = client
        .call(None, true, move |rpc| {
            let (mut kv, key, end) = (rpc.kv.get(), key.clone(), end.clone());
            let mut opts = GetOptions::new().with_range(end).with_revision(revision);
            if !values {
                opts = opts.with_keys_only();
            }
            async move { kv.get(key, Some(opts)).await }
        })
        .await?;
    Ok((resp.kvs().iter().map(KeyValue::from).collect(), resp.header().map_or(0, |h| h.revision())))
}

pub(super) async fn stats(q: &Inner) -> Result<QueueStats> {
    let k = &q.keys;
    let (claims, revision) = all(&q.client, &k.claims(), true, 0).await?;
    let (items, _) = all(&q.client, &k.items(), false, revision).await?;
    let (dead, _) = all(&q.client, &k.dead_prefix(), false, revision).await?;
    let mut s = QueueStats { dead: dead.len() as u64, revision, ..Default::default() };
    let (claims_prefix, mut covered) = (k.claims(), HashSet::new());
    for kv in &claims {
        let Some(slot) = k.slot_of(&claims_prefix, &kv.key) else { continue };
        if covered.insert(slot.to_vec()) {
            if kv.value == keys::DELAYED { s.delayed += 1 } else { s.claimed += 1 }
        }
    }
    let items_prefix = k.items();
    for kv in &items {
        let Some(slot) = k.slot_of(&items_prefix, &kv.key) else { continue };
        if !covered.contains(slot) {
            s.pending += 1;
            *s.pending_by_priority.entry(keys::priority_of(slot)).or_default() += 1;
        }
    }
    Ok(s)
}

pub(super) async fn list(q: &Inner) -> Result<Vec<DeadTask>> {
    let prefix = q.keys.dead_prefix();
    let (kvs, _) = all(&q.client, &prefix, true, 0).await?;
    Ok(kvs
        .iter()
        .filter_map(|kv| {
            let id = String::from_utf8(kv.key.strip_prefix(prefix.as_slice())?.to_vec()).ok()?;
            let (attempts, priority, payload) = keys::decode_dead(&kv.value)?;
            Some(DeadTask { id, payload, attempts, priority })
        })
        .collect())
}

/// In two steps, as a put: marks the id key empty (its revision R orders the item again), then
/// writes the item at R's slot and deletes the dead letter, while the id key is still that.
pub(super) async fn requeue(q: &Inner, id: &str) -> Result<bool> {
    keys::check_id(id)?;
    let (k, id_key, dead_key) = (&q.keys, q.keys.id(id), q.keys.dead(id));
    let txn = || {
        Txn::new()
            .when([Compare::value(id_key.clone(), CompareOp::Equal, keys::DEAD), Compare::version(dead_key.clone(), CompareOp::Greater, 0)])
            .and_then([TxnOp::put(id_key.clone(), Vec::new(), None), TxnOp::get(dead_key.clone(), None)])
            .or_else([TxnOp::get(id_key.clone(), None), TxnOp::get(dead_key.clone(), None)])
    };
    let resp = q.client.txn(txn, true).await?;
    let revision = resp.header().map_or(0, |h| h.revision());
    let mut got = resp.op_responses().into_iter().filter_map(|r| match r {
        TxnOpResponse::Get(g) => Some(g.kvs().first().map(KeyValue::from)),
        _ => None,
    });
    let (written_at, dead) = if resp.succeeded() {
        (revision, got.next().flatten())
    } else {
        // A requeue that stopped between its steps (or a copy of this one applied) left the id
        // key empty beside the dead letter: finish it.
        match (got.next().flatten(), got.next().flatten()) {
            (Some(idkv), Some(dead)) if idkv.value.is_empty() => (idkv.mod_revision, Some(dead)),
            _ => return Ok(false),
        }
    };
    let Some((_, priority, payload)) = dead.and_then(|d| keys::decode_dead(&d.value)) else { return Ok(false) };
    let slot = keys::slot(priority, written_at);
    let txn = || {
        Txn::new()
            .when([Compare::mod_revision(id_key.clone(), CompareOp::Equal, written_at), Compare::create_revision(k.item(&slot), CompareOp::Equal, 0)])
            .and_then([
                TxnOp::put(id_key.clone(), slot.clone(), None),
                TxnOp::put(k.item(&slot), keys::encode_item(id, &payload), None),
                TxnOp::delete(dead_key.clone(), None),
            ])
    };
    q.client.txn(txn, true).await?;
    Ok(true)
}

pub(super) async fn delete(q: &Inner, id: &str) -> Result<bool> {
    keys::check_id(id)?;
    let (id_key, dead_key) = (q.keys.id(id), q.keys.dead(id));
    let txn = || {
        Txn::new()
            .when([Compare::value(id_key.clone(), CompareOp::Equal, keys::DEAD)])
            .and_then([TxnOp::delete(dead_key.clone(), None), TxnOp::delete(id_key.clone(), None)])
    };
    Ok(q.client.txn(txn, true).await?.succeeded())
}

