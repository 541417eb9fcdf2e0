//! Claiming the next item. A worker reads the head of the queue (one page of item keys, the
//! claims and whether workers wait: O(1) round trips however many items wait) and, when nobody
//! waits, claims the first item no claim key covers with a try-lock on that item's claim lock.
//! Otherwise, or with nothing available, it queues for the lock `Q/workers` (FIFO, each watching
//! only its predecessor); the holder claims the next item and releases `Q/workers` to the next
//! worker. With nothing available, the holder alone watches for a new item or a claim that ends:
//! a new item wakes one worker, not all.

use super::keys::{self, Keys};
use super::task::Task;
use super::watch::Changes;
use super::Inner;
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::sync::mutex::{LockOptions, Mutex};
use crate::sync::spans::Traced;
use etcd_client::{GetOptions, TxnOp, TxnOpResponse};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long a claim may wait, and who claims.
#[derive(Debug, Clone, Default)]
pub struct ClaimOptions {
    /// `None` waits until an item is available; `Some(ZERO)` tries once (`WouldBlock`);
    /// otherwise `LockTimeout` when it passes.
    pub timeout: Option<Duration>,
    /// Cancels the wait (`Cancelled`); nothing is left behind.
    pub cancel: Option<CancellationToken>,
    /// Stored in the claim key, for `etcdlock status` to show who works on what (a host name,
    /// a pid). At most [`MAX_LOCK_VALUE_LEN`](crate::MAX_LOCK_VALUE_LEN) bytes.
    pub worker: Vec<u8>,
}

/// Item keys read per page while looking past claimed items.
const PAGE: i64 = 64;

pub(super) async fn claim(q: &Arc<Inner>, opts: ClaimOptions) -> Result<Task> {
    use tracing::Instrument;
    let span = crate::sync::spans::claim(q.keys.name());
    let r = claim_cancellable(q, opts).instrument(span.clone()).await;
    crate::sync::spans::waited(&span, &r, "acquired", |t| Some(t.fencing_token()));
    if let Ok(t) = &r {
        span.record("etcdlock.task_id", t.id());
    }
    r
}

async fn claim_cancellable(q: &Arc<Inner>, opts: ClaimOptions) -> Result<Task> {
    let task = claim_checked(q, &opts).await?;
    // The caller gave up while the claim was on its way: it will not work on the item.
    if opts.cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
        let _ = task.nack().await;
        return Err(Error::new(ErrorKind::Cancelled, "claim cancelled"));
    }
    Ok(task)
}

async fn claim_checked(q: &Arc<Inner>, opts: &ClaimOptions) -> Result<Task> {
    crate::client::validate::check_lock_value(&opts.worker)?;
    if opts.cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
        return Err(Error::new(ErrorKind::Cancelled, "claim cancelled"));
    }
    let deadline = opts.timeout.filter(|t| !t.is_zero()).and_then(|t| Instant::now().checked_add(t));
    let try_once = opts.timeout == Some(Duration::ZERO);
    // Nobody waiting and an item available: claim it without queueing (the queue's order is for
    // workers that wait; taking the turn would cost a handoff per task).
    let head = read_head(&q.client, &q.keys).await?;
    if !head.waiting {
        if let Some(task) = claim_first(q, &head.available, &opts.worker).await? {
            return Ok(task);
        }
    }
    let turn = q.workers.lock_traced(LockOptions { timeout: opts.timeout, cancel: opts.cancel.clone(), value: opts.worker.clone() }, Traced::Quiet).await?;
    let r = next(q, opts, try_once, deadline).await;
    let _ = turn.release().await;
    r
}

/// Claims the first available item, waiting for one unless `try_once`.
async fn next(q: &Arc<Inner>, opts: &ClaimOptions, try_once: bool, deadline: Option<Instant>) -> Result<Task> {
    let mut changes: Option<Changes> = None;
    loop {
        let head = read_head(&q.client, &q.keys).await?;
        if let Some(task) = claim_first(q, &head.available, &opts.worker).await? {
            return Ok(task);
        }
        if !head.available.is_empty() {
            continue; // taken meanwhile, gone, or dead: read again
        }
        if try_once {
            return Err(Error::new(ErrorKind::WouldBlock, format!("no task available in queue {:?}", name(q))));
        }
        let watch = changes.get_or_insert_with(|| Changes::open(q));
        if !watch.wait(q, head.revision, opts.cancel.as_ref(), deadline).await? {
            changes = None;
        }
    }
}

/// Claims the first of `slots` that it can, in order.
async fn claim_first(q: &Arc<Inner>, slots: &[Vec<u8>], worker: &[u8]) -> Result<Option<Task>> {
    for slot in slots {
        if let Some(task) = try_claim(q, slot, worker).await? {
            return Ok(Some(task));
        }
    }
    Ok(None)
}

fn name(q: &Inner) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(q.keys.name())
}

/// What a read of the queue's head found.
struct Head {
    /// The slots no claim covers in the first page of items that holds any, in claim order.
    available: Vec<Vec<u8>>,
    /// A revision no later than every read's.
    revision: i64,
    /// Whether workers wait in `Q/workers`.
    waiting: bool,
}

/// Reads the claims, the first page of items and whether workers wait, at once.
async fn read_head(client: &Client, keys: &Keys) -> Result<Head> {
    let (claims_prefix, items, workers) = (keys.claims(), keys.items(), [keys.workers_lock().as_slice(), b"/"].concat());
    let (claims, first, waiting) = tokio::try_join!(range(client, &claims_prefix, 0), range(client, &items, PAGE), range(client, &workers, 1))?;
    let revision = claims.1.min(first.1).min(waiting.1);
    let claimed: HashSet<&[u8]> = claims.0.iter().filter_map(|k| keys.slot_of(&claims_prefix, k)).collect();
    let mut page = first;
    loop {
        let (keys_found, _, more) = (&page.0, page.1, page.2);
        let available: Vec<Vec<u8>> = keys_found.iter().filter_map(|k| keys.slot_of(&items, k)).filter(|s| !claimed.contains(s)).map(<[u8]>::to_vec).collect();
        if !available.is_empty() || !more {
            return Ok(Head { available, revision, waiting: !waiting.0.is_empty() });
        }
        let mut from = keys_found.last().cloned().unwrap_or_default();
        from.push(0);
        page = range_from(client, &from, &items, PAGE).await?;
    }
}

/// Keys (only) under `prefix`, at most `limit` (0: all); with the read's revision and whether
/// there are more.
async fn range(client: &Client, prefix: &[u8], limit: i64) -> Result<(Vec<Vec<u8>>, i64, bool)> {
    range_from(client, prefix, prefix, limit).await
}

async fn range_from(client: &Client, from: &[u8], prefix: &[u8], limit: i64) -> Result<(Vec<Vec<u8>>, i64, bool)> {
    let (from, end) = (from.to_vec(), prefix_end(prefix));
    let resp = client
        .call(None, true, move |rpc| {
            let (mut kv, from, end) = (rpc.kv.get(), from.clone(), end.clone());
            async move { kv.get(from, Some(GetOptions::new().with_range(end).with_keys_only().with_limit(limit))).await }
        })
        .await?;
    let keys = resp.kvs().iter().map(|kv| kv.key().to_vec()).collect();
    Ok((keys, resp.header().map_or(0, |h| h.revision()), resp.more()))
}

pub(super) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    // Prefixes here end in '/', which is never 0xff.
    *end.last_mut().expect("a non-empty prefix") += 1;
    end
}

/// Claims the item at `slot`: `None` if another claim or a delay covers it, it is gone, or it
/// had its last delivery and went to the dead letters instead.
async fn try_claim(q: &Arc<Inner>, slot: &[u8], worker: &[u8]) -> Result<Option<Task>> {
    let lock = Mutex::new(&q.client, q.keys.claim_lock(slot), q.ttl)?;
    let guard = match lock.lock_traced(LockOptions { timeout: Some(Duration::ZERO), cancel: None, value: worker.to_vec() }, Traced::Quiet).await {
        Ok(g) => g,
        Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
        Err(e) => return Err(e),
    };
    let (attempts_key, item_key) = (q.keys.attempts(slot), q.keys.item(slot));
    // Counts this delivery and reads the item, only while the claim holds.
    let resp = guard
        .fenced_response(|| vec![TxnOp::put(attempts_key.clone(), Vec::new(), None), TxnOp::get(attempts_key.clone(), None), TxnOp::get(item_key.clone(), None)], false)
        .await?;
    let mut gets = resp.op_responses().into_iter().filter_map(|r| match r {
        TxnOpResponse::Get(g) => Some(g.kvs().first().map(|kv| (kv.version(), kv.value().to_vec()))),
        _ => None,
    });
    let attempts = gets.next().flatten().map_or(1, |(v, _)| v) as u32;
    let item = gets.next().flatten().and_then(|(_, value)| keys::decode_item(&value));
    let Some((id, payload)) = item else {
        // Acked or dead since the read: the count just written goes with the claim.
        guard.finish(vec![TxnOp::delete(attempts_key, None)]).await?;
        return Ok(None);
    };
    let priority = keys::priority_of(slot);
    if attempts > q.max_attempts {
        super::task::bury(&guard, &q.keys, slot, &id, attempts - 1, priority, &payload).await?;
        return Ok(None);
    }
    Ok(Some(Task::new(q.clone(), guard, slot.to_vec(), id, payload, priority, attempts)))
}

