//! Adding an item, in two steps so that its key sorts in the order etcd committed the puts:
//! the first creates `Q/id/<id>` (on the producer's lease, empty) and learns the revision R it
//! was committed at; the second, only while that id key is still the one written at R, writes
//! the item at `Q/items/<priority>/<R>` and makes the id key durable. Either step may be sent
//! twice: a second copy of either changes nothing. A producer that dies between the steps
//! leaves an id key that goes with its lease; a put with the same id meanwhile does the second
//! step itself.

use super::keys::{self, Keys};
use super::Inner;
use crate::sync::expiring;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::sync::PerClient;
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse};
use rand::Rng;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How an item is put.
#[derive(Debug, Clone, Default)]
pub struct TaskOptions {
    /// The item's id (a random one if `None`): a put with the id of an item that exists changes
    /// nothing. 1 to [`MAX_TASK_ID_LEN`](super::MAX_TASK_ID_LEN) bytes, no newline.
    pub id: Option<String>,
    /// Higher first; in one priority, in the order etcd committed the puts.
    pub priority: i32,
    /// Not claimable before this long (timed by an etcd lease, rounded up to whole seconds).
    pub delay: Option<Duration>,
}

/// Bounds the rounds of a put whose first step's key went away before its second (its
/// producer's lease ended): each round writes again.
const ROUNDS: usize = 5;

pub(super) async fn put(q: &Inner, payload: &[u8], opts: TaskOptions) -> Result<String> {
    keys::check_payload(payload)?;
    let id = match opts.id {
        Some(id) => id,
        None => format!("{:032x}", rand::rng().random::<u128>()),
    };
    keys::check_id(&id)?;
    let delay_ttl = opts.delay.filter(|d| !d.is_zero()).map(expiring::ttl_of).transpose()?;
    q.client.check_open()?;
    let id_key = q.keys.id(&id);
    for _ in 0..ROUNDS {
        let Some(written_at) = first_step(q, &id_key).await? else { return Ok(id) };
        let delay_lease = match delay_ttl {
            Some(ttl) => Some(expiring::grant(&q.client, ttl).await?),
            None => None,
        };
        let done = second_step(&q.client, &q.keys, &id, written_at, opts.priority, payload, delay_lease).await;
        match done {
            Ok(true) => return Ok(id),
            // Someone else finished it, or the key went: look again.
            Ok(false) | Err(_) => {
                if let Some(lease) = delay_lease {
                    let slot = keys::slot(opts.priority, written_at);
                    expiring::discard_unless_used(&q.client, lease, q.keys.delay_claim(&slot, lease));
                }
                done?;
            }
        }
    }
    Err(Error::new(crate::ErrorKind::Unavailable, format!("could not put task {id:?}: its id key kept going away")))
}

/// Creates the id key, empty, on this client's lease unless it exists. `None`: the item exists
/// (its put is done); else the mod revision of the empty id key, for the second step.
async fn first_step(q: &Inner, id_key: &[u8]) -> Result<Option<i64>> {
    let session = PerClient::of(&q.client).sessions.get(q.ttl);
    let (lease, active, _) = session.take(&q.client, None).await?;
    let copies = AtomicBool::new(false);
    let txn = || {
        Txn::new()
            .when([Compare::create_revision(id_key.to_vec(), CompareOp::Equal, 0)])
            .and_then([TxnOp::put(id_key.to_vec(), Vec::new(), Some(PutOptions::new().with_lease(lease.id())))])
            .or_else([TxnOp::get(id_key.to_vec(), None)])
    };
    let resp = q.client.txn_noting_copies(txn, &copies).await;
    if copies.load(std::sync::atomic::Ordering::Acquire) {
        // A copy landing later, after the item was acked, would bring an empty id key back: the
        // lease it is on is revoked once unused, which removes it.
        active.retire();
    }
    let resp = resp?;
    if resp.succeeded() {
        return Ok(Some(resp.header().map_or(0, |h| h.revision())));
    }
    let kv = resp.op_responses().into_iter().find_map(|r| match r {
        TxnOpResponse::Get(g) => g.kvs().first().map(crate::client::kv::KeyValue::from),
        _ => None,
    });
    Ok(match kv {
        Some(kv) if kv.value.is_empty() => Some(kv.mod_revision),
        Some(_) => None,
        // Gone between the compare and the read: cannot be, both ran at one revision.
        None => Some(0),
    })
}

/// Writes the item at the slot of `written_at` while the id key is still the empty one written
/// then. Returns whether it did.
#[allow(clippy::too_many_arguments)]
pub(super) async fn second_step(
    client: &Client,
    keys: &Keys,
    id: &str,
    written_at: i64,
    priority: i32,
    payload: &[u8],
    delay_lease: Option<i64>,
) -> Result<bool> {
    let slot = keys::slot(priority, written_at);
    let (id_key, item) = (keys.id(id), keys.item(&slot));
    let value = keys::encode_item(id, payload);
    let txn = || {
        let mut ops = vec![TxnOp::put(id_key.clone(), slot.clone(), None), TxnOp::put(item.clone(), value.clone(), None)];
        if let Some(lease) = delay_lease {
            ops.push(TxnOp::put(keys.delay_claim(&slot, lease), keys::DELAYED, Some(PutOptions::new().with_lease(lease))));
        }
        Txn::new()
            .when([
                Compare::mod_revision(id_key.clone(), CompareOp::Equal, written_at),
                Compare::value(id_key.clone(), CompareOp::Equal, Vec::new()),
                Compare::create_revision(item.clone(), CompareOp::Equal, 0),
            ])
            .and_then(ops)
    };
    Ok(client.txn(txn, true).await?.succeeded())
}
