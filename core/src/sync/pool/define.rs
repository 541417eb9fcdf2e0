//! Storing a pool's definition, checking a participant's against it, and changing its slots.

use crate::client::Client;
use crate::error::{Error, Result};
use crate::sync::pool::board::{bad_spec, Board, Keys};
use crate::sync::pool::spec::{check_slots, Spec};
use etcd_client::{Compare, CompareOp, Txn, TxnOp, TxnOpResponse};

/// Stores `wanted` if the pool has no definition yet; fails with `InvalidArgument` if it has
/// another. Returns the definition's mod revision.
pub(crate) async fn ensure(client: &Client, keys: &Keys, wanted: &Spec) -> Result<i64> {
    let key = keys.spec();
    let txn = || Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)]).and_then([TxnOp::put(key.clone(), wanted.encode(), None)]).or_else([TxnOp::get(key.clone(), None)]);
    let resp = client.txn(txn, true).await?;
    if resp.succeeded() {
        return Ok(resp.header().map_or(0, |h| h.revision()));
    }
    let stored = match resp.op_responses().into_iter().next() {
        Some(TxnOpResponse::Get(g)) => g.kvs().first().map(|kv| (Spec::decode(kv.value()), kv.mod_revision())),
        _ => None,
    };
    match stored {
        // Stored by an earlier copy of this same request, or by a participant that agrees.
        Some((Some(s), rev)) if s == *wanted => Ok(rev),
        Some((Some(s), _)) => Err(Error::invalid(format!(
            "pool {:?} is defined with {}, not {}: every participant must give the same (change the slots with add_slots / remove_slots; the reuse delay once nobody holds a slot, by deleting {:?})",
            String::from_utf8_lossy(keys.name()),
            s.describe(),
            wanted.describe(),
            String::from_utf8_lossy(&keys.spec()),
        ))),
        Some((None, _)) => Err(bad_spec(keys)),
        // Deleted in between: try again.
        None => Box::pin(ensure(client, keys, wanted)).await,
    }
}

/// The stored definition (`InvalidArgument` if there is none).
pub(crate) async fn stored(client: &Client, keys: &Keys) -> Result<Spec> {
    match client.get(&keys.spec()).await? {
        Some(kv) => Spec::decode(&kv.value).ok_or_else(|| bad_spec(keys)),
        None => Err(Error::invalid(format!("pool {:?} is not defined: give its slots", String::from_utf8_lossy(keys.name())))),
    }
}

/// Adds `slots` (ids not in the pool yet) or removes them, in one Txn on the definition as read
/// (read again if it changed meanwhile). A removed slot that is held goes when its holder
/// releases it; the markers of one that is not go now.
pub(crate) async fn change(client: &Client, keys: &Keys, slots: &[String], add: bool) -> Result<Vec<String>> {
    check_slots(slots, 0)?;
    for _ in 0..100 {
        let board = Board::read(client, keys).await?;
        let Some((mut spec, rev)) = board.spec.clone() else {
            return Err(Error::invalid(format!("pool {:?} is not defined yet: acquire from it once first", String::from_utf8_lossy(keys.name()))));
        };
        let mut ops = Vec::new();
        if add {
            if let Some(s) = slots.iter().find(|s| spec.has(s)) {
                return Err(Error::invalid(format!("slot {s:?} is already in the pool")));
            }
            spec.slots.extend(slots.iter().cloned());
        } else {
            if let Some(s) = slots.iter().find(|s| !spec.has(s)) {
                return Err(Error::invalid(format!("slot {s:?} is not in the pool")));
            }
            spec.slots.retain(|s| !slots.contains(s));
            if spec.slots.is_empty() {
                return Err(Error::invalid("a pool keeps at least one slot"));
            }
            for s in slots.iter().filter(|s| !board.held.contains_key(*s)) {
                ops.extend([TxnOp::delete(keys.used(s), None), TxnOp::delete(keys.free(s), None), TxnOp::delete(keys.cool(s), None)]);
            }
        }
        check_slots(&spec.slots, 1)?;
        ops.push(TxnOp::put(keys.spec(), spec.encode(), None));
        // Unchanged since the read, and no slot being removed was taken meanwhile.
        let mut when = vec![Compare::mod_revision(keys.spec(), CompareOp::Equal, rev)];
        if !add {
            when.extend(slots.iter().filter(|s| !board.held.contains_key(*s)).map(|s| Compare::create_revision(keys.slot(s), CompareOp::Equal, 0)));
        }
        let txn = || Txn::new().when(when.clone()).and_then(ops.clone());
        if client.txn(txn, false).await?.succeeded() {
            return Ok(spec.slots);
        }
    }
    Err(Error::new(crate::error::ErrorKind::Unavailable, "the pool's definition kept changing: gave up after 100 attempts"))
}

/// Deletes the markers of slots no longer in the pool and not held (a slot removed while held
/// leaves its free marker at release): one Txn, only while they are still not held.
pub(crate) async fn tidy(client: &Client, keys: &Keys, board: &Board) -> Result<()> {
    let Some((spec, _)) = &board.spec else { return Ok(()) };
    let stale: std::collections::BTreeSet<&String> =
        board.used.keys().chain(board.free.keys()).chain(board.cool.keys()).filter(|s| !spec.has(s) && !board.held.contains_key(*s)).collect();
    if stale.is_empty() {
        return Ok(());
    }
    let when: Vec<Compare> = stale.iter().take(40).map(|s| Compare::create_revision(keys.slot(s), CompareOp::Equal, 0)).collect();
    let ops: Vec<TxnOp> = stale.iter().take(40).flat_map(|s| [TxnOp::delete(keys.used(s), None), TxnOp::delete(keys.free(s), None), TxnOp::delete(keys.cool(s), None)]).collect();
    client.txn(|| Txn::new().when(when.clone()).and_then(ops.clone()), true).await.map(drop)
}
