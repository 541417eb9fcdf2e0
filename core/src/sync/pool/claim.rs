//! Taking slots once admitted: read the board, take `count` available slots in one Txn fenced
//! by the admission key; when too few are available, start the rest of the dead ones resting
//! and wait for a slot to be released, to finish resting, or for the pool to grow.
//!
//! Only admitted requests take slots, and admission counts the slots every request takes, so
//! slots are taken by few at a time; a Txn that loses a race to another reads again. All the
//! slots of a request are taken together, so two requests can never each hold part of what
//! the other waits for.

use crate::client::{closed_error, Client};
use crate::error::{Error, ErrorKind, Result};
use crate::sync::expiring;
use crate::sync::guard::LockGuard;
use crate::sync::pool::board::{Avail, Board, Keys};
use crate::sync::pool::spec::Spec;
use crate::transport::backoff::Backoff;
use crate::watch::hub::{Msg, Spec as WatchSpec};
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The slots taken, with their tokens (their keys' create revision), in the pool's order.
pub(crate) type Taken = Vec<(String, i64)>;

/// Takes `count` slots for the admitted request `guard`; `value` goes into each slot key.
pub(crate) async fn take(
    client: &Client,
    keys: &Keys,
    guard: &LockGuard,
    count: usize,
    value: &[u8],
    deadline: Option<Instant>,
    cancel: Option<&CancellationToken>,
) -> Result<Taken> {
    let mut backoff = Backoff::default();
    loop {
        let board = Board::read(client, keys).await?;
        let Some((spec, _)) = &board.spec else {
            return Err(Error::invalid(format!("pool {:?} lost its definition", String::from_utf8_lossy(keys.name()))));
        };
        crate::sync::pool::define::tidy(client, keys, &board).await?;
        if count > spec.slots.len() {
            return Err(Error::invalid(format!("{count} slots asked of a pool that now has {}", spec.slots.len())));
        }
        let zero = spec.reuse_delay.is_zero();
        let ready: Vec<(&String, Avail)> = spec.slots.iter().filter_map(|s| board.avail(s, zero).map(|a| (s, a))).collect();
        if ready.len() >= count {
            let chosen = &ready[..count];
            match claim(keys, guard, chosen, value).await? {
                Some(revision) => return Ok(chosen.iter().map(|(s, _)| ((*s).clone(), revision)).collect()),
                None => continue, // another request took one first: read again
            }
        }
        for slot in board.dead(spec) {
            rest(client, keys, &slot, spec).await?;
        }
        wait(client, keys, guard, board.revision, deadline, cancel, &mut backoff).await?;
    }
}

/// One Txn: every chosen slot still as read, and the turn still ours; then each slot key is
/// created on the turn's lease and the turn ends. `None` if a slot changed since the read.
async fn claim(keys: &Keys, guard: &LockGuard, chosen: &[(&String, Avail)], value: &[u8]) -> Result<Option<i64>> {
    let lease = guard.lease_id();
    let (mut when, mut ops) = (Vec::new(), Vec::new());
    for (s, avail) in chosen {
        when.push(Compare::create_revision(keys.slot(s), CompareOp::Equal, 0));
        when.push(Compare::create_revision(keys.cool(s), CompareOp::Equal, 0));
        ops.push(TxnOp::put(keys.slot(s), value.to_vec(), Some(PutOptions::new().with_lease(lease))));
        match avail {
            Avail::Fresh => {
                when.push(Compare::create_revision(keys.used(s), CompareOp::Equal, 0));
                when.push(Compare::create_revision(keys.free(s), CompareOp::Equal, 0));
                ops.push(TxnOp::put(keys.used(s), Vec::new(), None));
            }
            Avail::Freed(rev) => {
                when.push(Compare::create_revision(keys.free(s), CompareOp::Equal, *rev));
                ops.push(TxnOp::delete(keys.free(s), None));
            }
            Avail::Dead => when.push(Compare::create_revision(keys.free(s), CompareOp::Equal, 0)),
        }
    }
    ops.push(TxnOp::delete(guard.key().to_vec(), None));
    guard.set_ending(true);
    let r = guard.fenced_response_when(when, || ops.clone(), false).await;
    if r.is_err() {
        guard.set_ending(false);
    }
    match r {
        Ok(resp) => {
            guard.ended_by_caller();
            Ok(Some(resp.header().map_or(0, |h| h.revision())))
        }
        // The admission key is still there: only a slot changed. Otherwise the hold was lost.
        Err(e) if e.kind() == ErrorKind::NotHeld && guard.is_held() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Starts slot `id`'s rest after its holder died: a `cool` key on a lease of the reuse delay
/// (not kept alive: etcd's timer ends the rest) and its `free` marker, in one Txn that applies
/// only if it still looks dead. Resting starts when a request first sees the death, so a slot
/// rests at least the reuse delay after its holder's lease ended.
async fn rest(client: &Client, keys: &Keys, id: &str, spec: &Spec) -> Result<()> {
    let lease = expiring::grant(client, expiring::ttl_of(spec.reuse_delay)?).await?;
    let (slot, used, free, cool) = (keys.slot(id), keys.used(id), keys.free(id), keys.cool(id));
    let txn = || {
        Txn::new()
            .when([
                Compare::create_revision(slot.clone(), CompareOp::Equal, 0),
                Compare::create_revision(free.clone(), CompareOp::Equal, 0),
                Compare::create_revision(cool.clone(), CompareOp::Equal, 0),
                Compare::create_revision(used.clone(), CompareOp::Greater, 0),
            ])
            .and_then([TxnOp::put(cool.clone(), Vec::new(), Some(PutOptions::new().with_lease(lease))), TxnOp::put(free.clone(), Vec::new(), None)])
    };
    let r = client.txn(txn, true).await;
    if !matches!(&r, Ok(resp) if resp.succeeded()) {
        expiring::discard_unless_used(client, lease, cool.clone());
    }
    r.map(drop)
}

/// Returns once a slot key was deleted, a rest ended or the definition changed after
/// `revision` (or the watch broke: the caller reads again); fails at the deadline, on cancel,
/// on close, or when the admission is lost.
async fn wait(
    client: &Client,
    keys: &Keys,
    guard: &LockGuard,
    revision: i64,
    deadline: Option<Instant>,
    cancel: Option<&CancellationToken>,
    backoff: &mut Backoff,
) -> Result<()> {
    let hub = &client.inner.hub;
    let spec = |key: Vec<u8>, prefix, only_deletes| WatchSpec { key, prefix, start_revision: revision + 1, prev_kv: false, only_deletes };
    let mut slots = hub.subscribe(spec(keys.dir("slot"), true, true));
    let mut cools = hub.subscribe(spec(keys.dir("cool"), true, true));
    let mut defs = hub.subscribe(spec(keys.spec(), false, false));
    // The lease's loss, not the turn key's: the turn ends by the claim's own delete of that key.
    let (closed, lost) = (client.inner.closed.clone(), guard.lease_lost());
    let timed_out = || Error::new(ErrorKind::LockTimeout, format!("timed out waiting for a slot of pool {:?}", String::from_utf8_lossy(keys.name())));
    loop {
        let msg = tokio::select! {
            biased;
            _ = closed.cancelled() => return Err(closed_error()),
            _ = async { match cancel { Some(c) => c.cancelled().await, None => std::future::pending().await } } => {
                return Err(Error::new(ErrorKind::Cancelled, "pool acquire cancelled"));
            }
            reason = lost.wait() => return Err(Error::new(ErrorKind::LockLost, format!("the pool request was lost while it waited for a slot ({reason})"))),
            m = slots.rx.recv() => m,
            m = cools.rx.recv() => m,
            m = defs.rx.recv() => m,
            _ = async { match deadline { Some(d) => tokio::time::sleep_until(d).await, None => std::future::pending().await } } => return Err(timed_out()),
        };
        match msg {
            Some(Msg::Events(_)) => return Ok(()),
            Some(Msg::Created { .. } | Msg::Progress { .. }) => backoff.reset(),
            Some(Msg::Failed(_)) | None => {
                let pause: Duration = backoff.next_delay();
                if deadline.is_some_and(|d| Instant::now() + pause >= d) {
                    return Err(timed_out());
                }
                tokio::time::sleep(pause).await;
                return Ok(());
            }
        }
    }
}
