//! Putting a waiter's key in the queue, and the queue key's name.

use super::*;
use std::sync::atomic::AtomicBool;

impl Mutex {
    /// Queue keys are `<name>/<lease hex>` (the Go layout), with `-<n>` appended while other
    /// acquisitions on the same lease have keys, so that two of them still exclude each other.
    /// Numbers are reused once their key is gone: every distinct key name leaves etcd an index
    /// entry that the queue scan walks until the next compaction, and an uncontended cycle
    /// slows down with every name left behind.
    pub(super) fn queue_key(&self, lease: &Lease, slot: u64) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.prefix.len() + 34);
        key.extend_from_slice(&self.prefix);
        push_hex(&mut key, lease.id() as u64);
        if slot > 0 {
            key.push(b'-');
            push_hex(&mut key, slot);
        }
        key
    }

    /// One Txn: put our key if absent and read the newest key before it. Idempotent (the
    /// key is ours alone), so it is retried on transient errors.
    ///
    /// While the last enqueue of this name on this client found nobody queued, a cheaper Txn
    /// goes first: put our key only if nobody is queued, with no queue read (etcd charges
    /// measurably for the read, and as much again for any `else` branch, taken or not:
    /// `bench/examples/shapes.rs`). When it finds the queue busy, the
    /// full Txn follows: two round trips, and the name's next enqueue goes straight to it.
    ///
    /// Keys under the prefix that are no waiters (see `sync/queue.rs`) are skipped: a read that
    /// finds one first reads on past it.
    ///
    /// `copies` is set when a copy of a put may still land later (see
    /// [`Client::txn_noting_copies`]).
    pub(super) async fn enqueue(&self, key: &[u8], lease: &Lease, try_once: bool, value: &[u8], copies: &AtomicBool) -> Result<Enqueued> {
        lease.check_usable()?;
        let (prefix, lease_id) = (&self.prefix, lease.id());
        let put = || TxnOp::put(key, value, Some(PutOptions::new().with_lease(lease_id)));
        let queue_empty = || Compare::version(prefix.as_slice(), CompareOp::Equal, 0).with_prefix();
        let per_client = crate::sync::PerClient::of(&self.client);
        let busy = per_client.queue_hints.get(self.name_hash);
        if !try_once && !busy.load(Ordering::Relaxed) {
            // A retry whose first attempt landed finds our own key: the full Txn sorts it out.
            let resp = self.client.txn_noting_copies(|| Txn::new().when([queue_empty()]).and_then([put()]), copies).await?;
            if resp.succeeded() {
                return Ok(Enqueued::Held(resp.header().map_or(0, |h| h.revision())));
            }
        }
        let txn = || if try_once {
            // Only if the queue is empty: a failed try leaves nothing behind.
            Txn::new()
                .when([queue_empty()])
                .and_then([put()])
                .or_else([TxnOp::get(key, Some(GetOptions::new().with_keys_only())), first_key(prefix)])
        } else {
            // No `else` branch: it is only needed after a retry, and etcd charges for it on
            // every enqueue, taken or not.
            Txn::new().when([Compare::create_revision(key, CompareOp::Equal, 0)]).and_then([newest_key(prefix), put()])
        };
        let resp = self.client.txn_noting_copies(txn, copies).await?;
        let revision = resp.header().map_or(0, |h| h.revision());
        let ops = resp.op_responses();
        if resp.succeeded() && try_once {
            return Ok(Enqueued::Held(revision));
        }
        if resp.succeeded() {
            let newest = first_kv(&ops[0]);
            // Any key under the prefix, waiter or not, fails the cheap enqueue: go straight to
            // this one next time.
            busy.store(newest.is_some(), Ordering::Relaxed);
            let (predecessor, read_at) = queue::resolve(&self.client, prefix, newest, revision, Toward::Older).await?;
            return Ok(match predecessor {
                None => Enqueued::Held(revision),
                Some(p) => Enqueued::Waiting(revision, Position { revision: read_at, predecessor: Some(p) }),
            });
        }
        if try_once {
            // The prefix holds keys. Busy if a waiter is among them; if none is, they are no
            // waiters' and the lock is free: enqueue for real, then hold or step back.
            let (mine, first) = (first_kv(&ops[0]), first_kv(&ops[1]));
            return match queue::resolve(&self.client, prefix, first, revision, Toward::Newer).await?.0 {
                Some(f) => Ok(match mine {
                    Some(m) if m.key == f.key => Enqueued::Held(m.create_revision),
                    mine => Enqueued::Busy { written: mine.map(|m| m.create_revision) },
                }),
                // A waiter that got in meanwhile makes it busy after all; the caller's cleanup
                // then deletes our key.
                None => {
                    busy.store(true, Ordering::Relaxed);
                    Ok(match Box::pin(self.enqueue(key, lease, false, value, copies)).await? {
                        Enqueued::Held(token) => Enqueued::Held(token),
                        Enqueued::Waiting(rev, _) | Enqueued::Placed(rev, _) => Enqueued::Busy { written: Some(rev) },
                        busy @ Enqueued::Busy { .. } => busy,
                    })
                }
            };
        }
        // Our key already exists: an earlier attempt landed.
        // Boxed, as is every rare path here: the common future stays small to move and spawn.
        let Some(mine) = Box::pin(self.client.get(key)).await? else {
            return Err(Error::new(ErrorKind::Internal, "queue key vanished during enqueue"));
        };
        let pos = Box::pin(self.position(key, mine.create_revision)).await?;
        busy.store(pos.predecessor.is_some(), Ordering::Relaxed);
        Ok(match pos.predecessor {
            None => Enqueued::Held(mine.create_revision),
            Some(_) => Enqueued::Waiting(mine.create_revision, pos),
        })
    }

    /// [`Mutex::enqueue`], sent again while etcd does not answer, for as long as the wait's
    /// deadline, cancel, the client and the lease allow: each attempt gives up after the request
    /// timeout, and an acquire that may wait longer must not fail for one slow request.
    /// `copies` is set when a copy of a put may still land later.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn enqueue_patiently(
        &self,
        key: &[u8],
        lease: &Lease,
        try_once: bool,
        value: &[u8],
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
        copies: &AtomicBool,
    ) -> Result<Enqueued> {
        let mut backoff = Backoff::default();
        loop {
            let enqueued = match self.kind {
                Kind::Exclusive | Kind::Write => self.enqueue(key, lease, try_once, value, copies).await,
                Kind::Permits(p) => self.enqueue_permits(p, key, lease, try_once, value, copies).await,
                Kind::Read => self.enqueue_reader(key, lease, try_once, value, copies).await,
            };
            match enqueued {
                Err(e) if e.is_unreachable() && !try_once => tokio::select! {
                    more = backoff.wait(deadline) => if !more {
                        return Err(e);
                    },
                    _ = cancelled_opt(cancel) => return Err(cancelled()),
                    _ = self.client.inner.closed.cancelled() => return Err(closed_error()),
                },
                r => return r,
            }
        }
    }

}

pub(super) enum Enqueued {
    Held(i64),
    Waiting(i64, Position),
    /// A semaphore's key or a reader's waits (`placed.rs`).
    Placed(i64, super::placed::Place),
    /// Try-once found the lock taken; `written`: our key is in etcd (and must go), created at
    /// that revision.
    Busy { written: Option<i64> },
}

fn newest_key(prefix: &[u8]) -> TxnOp {
    let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Descend).with_limit(1).with_keys_only();
    TxnOp::get(prefix.to_vec(), Some(o))
}

/// `n` in lower-case hex without leading zeros, as Go's `%x` writes it.
pub(super) fn push_hex(buf: &mut Vec<u8>, n: u64) {
    let digits = (64 - n.leading_zeros()).div_ceil(4).max(1);
    for i in (0..digits).rev() {
        buf.push(b"0123456789abcdef"[(n >> (4 * i)) as usize & 0xf]);
    }
}

pub(super) fn first_key(prefix: &[u8]) -> TxnOp {
    let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Ascend).with_limit(1).with_keys_only();
    TxnOp::get(prefix.to_vec(), Some(o))
}

pub(super) fn first_kv(op: &TxnOpResponse) -> Option<KeyValue> {
    match op {
        TxnOpResponse::Get(g) => g.kvs().first().map(KeyValue::from),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_go_percent_x() {
        for n in [0u64, 1, 0xf, 0x10, 0x694d8a1b2c3d4e5f, u64::MAX] {
            let mut buf = Vec::new();
            super::push_hex(&mut buf, n);
            assert_eq!(String::from_utf8(buf).unwrap(), format!("{n:x}"));
        }
    }
}
