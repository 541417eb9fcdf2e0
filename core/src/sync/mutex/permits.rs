//! The queue rule for N holders (a semaphore): the same queue keys, in the same create-revision
//! order, but a key holds while fewer than N waiter keys are older than it.
//!
//! No herd: only the first waiter past the N holders (the "head") watches the queue, for
//! deletes of keys older than its own; every waiter behind it watches its predecessor only, for
//! any change. A waiter that comes to hold after waiting rewrites its own key (same value, same
//! lease, fenced), which wakes the waiter behind it to become the head. So a release wakes the
//! head, and the head's promotion wakes one more: O(1) per change.
//!
//! A key may take several permits at once (`count`): it holds while the counts of the keys older
//! than it, and its own, add up to at most N. A key that needs more waits at the head, and every
//! later key waits behind it (head of line, FIFO): a large request is never passed over by
//! small ones.
//!
//! Every participant must agree on N: each key's value starts with `permits=<N>;` (or
//! `permits=<N>,count=<k>;` when it takes k > 1), and a participant that reads an older key with
//! another N (or a plain lock's key) fails with `InvalidArgument`, its key deleted. N lives only
//! in the participants' keys, so it changes once nobody holds or waits. A pool's admission
//! (`sync/pool`) reads N from the pool's definition instead, which may change at runtime: it
//! does not ask the older keys to agree.

use super::placed::{Place, Standing};
use super::*;

/// How a key takes permits: N in all, `count` of them for this key; `agree`: every older key
/// must say the same N (a semaphore), or not (a pool's admission, whose N may change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Permits {
    pub(crate) n: u32,
    pub(crate) count: u32,
    pub(crate) agree: bool,
}

impl Permits {
    pub(crate) fn one_of(n: u32) -> Permits {
        Permits { n, count: 1, agree: true }
    }
}

/// What a semaphore participant writes into its queue key: the permit count (and how many it
/// takes, when more than one), then the value the caller attached.
pub(crate) fn encode(p: Permits, value: &[u8]) -> Vec<u8> {
    let mut v = match p.count {
        1 => format!("permits={};", p.n),
        k => format!("permits={},count={k};", p.n),
    }
    .into_bytes();
    v.extend_from_slice(value);
    v
}

/// The permit count, how many this key takes, and the caller's value of a participant's key, if
/// it is one.
pub(crate) fn decode(value: &[u8]) -> Option<(u32, u32, &[u8])> {
    let rest = value.strip_prefix(b"permits=")?;
    let end = rest.iter().position(|&b| b == b';')?;
    let head = std::str::from_utf8(&rest[..end]).ok()?;
    let (n, count) = match head.split_once(",count=") {
        Some((n, k)) => (n.parse().ok()?, k.parse().ok().filter(|k| *k > 0)?),
        None => (head.parse().ok()?, 1),
    };
    Some((n, count, &rest[end + 1..]))
}

/// The oldest `limit` keys under a queue prefix (with values), created before `below` if given.
fn oldest(limit: i64, below: Option<i64>) -> GetOptions {
    let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Ascend).with_limit(limit);
    match below {
        Some(rev) => o.with_max_create_revision(rev - 1),
        None => o,
    }
}

/// The newest key under a queue prefix, created before `below` if given.
fn newest(below: Option<i64>) -> GetOptions {
    let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Descend).with_limit(1).with_keys_only();
    match below {
        Some(rev) => o.with_max_create_revision(rev - 1),
        None => o,
    }
}

impl Mutex {
    /// One Txn: read the oldest N + 1 keys and the newest key, then put ours if absent. Ours is
    /// then the newest, so what was read is everything older than it. Idempotent, so retried.
    /// `value` is what the key stores (see [`encode`]).
    pub(super) async fn enqueue_permits(
        &self,
        permits: Permits,
        key: &[u8],
        lease: &Lease,
        try_once: bool,
        value: &[u8],
        copies: &std::sync::atomic::AtomicBool,
    ) -> Result<Enqueued> {
        lease.check_usable()?;
        let (prefix, lease_id) = (&self.prefix, lease.id());
        let txn = || {
            Txn::new().when([Compare::create_revision(key, CompareOp::Equal, 0)]).and_then([
                TxnOp::get(prefix.clone(), Some(oldest(i64::from(permits.n) + 1, None))),
                TxnOp::get(prefix.clone(), Some(newest(None))),
                TxnOp::put(key, value, Some(PutOptions::new().with_lease(lease_id))),
            ])
        };
        let resp = self.client.txn_noting_copies(txn, copies).await?;
        let (my_rev, place) = if resp.succeeded() {
            let my_rev = resp.header().map_or(0, |h| h.revision());
            let ops = resp.op_responses();
            let place = match (&ops[0], &ops[1]) {
                (TxnOpResponse::Get(older), TxnOpResponse::Get(newest)) => {
                    let older: Vec<KeyValue> = older.kvs().iter().map(KeyValue::from).collect();
                    let newest = newest.kvs().first().map(KeyValue::from);
                    self.decide(permits, older, newest, my_rev, my_rev).await?
                }
                _ => return Err(Error::new(ErrorKind::Internal, "unexpected Txn response")),
            };
            (my_rev, place)
        } else {
            // Our key already exists: an earlier attempt landed.
            let Some(mine) = Box::pin(self.client.get(key)).await? else {
                return Err(Error::new(ErrorKind::Internal, "queue key vanished during enqueue"));
            };
            let place = Box::pin(self.place_permits(permits, mine.create_revision)).await?;
            if matches!(place.standing, Standing::Holds) {
                // The key was made by an earlier attempt and may have waited since: the waiter
                // behind it watches it for a change, which a holder makes by rewriting it (as
                // after any wait), or that waiter would go on watching it for the whole hold.
                Box::pin(self.touch(key, value, mine.create_revision, lease)).await?;
            }
            (mine.create_revision, place)
        };
        Ok(match place.standing {
            Standing::Holds => Enqueued::Held(my_rev),
            _ if try_once => Enqueued::Busy { written: Some(my_rev) },
            _ => Enqueued::Placed(my_rev, place),
        })
    }

    /// Where the key created at `my_rev` stands now: one read, two when more than N + 1 keys are
    /// older than it.
    pub(super) async fn place_permits(&self, permits: Permits, my_rev: i64) -> Result<Place> {
        let older = self.range(oldest(i64::from(permits.n) + 1, Some(my_rev))).await?;
        let revision = older.header().map_or(0, |h| h.revision());
        let older: Vec<KeyValue> = older.kvs().iter().map(KeyValue::from).collect();
        let newest = if older.len() > permits.n as usize {
            let r = self.range(newest(Some(my_rev))).await?;
            r.kvs().first().map(KeyValue::from)
        } else {
            None
        };
        self.decide(permits, older, newest, my_rev, revision).await
    }

    /// The standing of a key created at `my_rev`, given the oldest keys older than it (at most
    /// N + 1: each takes at least one permit, so N + 1 of them leave none) and the newest older
    /// one. Keys that are no waiters' (`sync/queue.rs`) make it read the whole older part of the
    /// queue instead.
    async fn decide(&self, permits: Permits, older: Vec<KeyValue>, newest: Option<KeyValue>, my_rev: i64, revision: i64) -> Result<Place> {
        let prefix = &self.prefix;
        let clean = older.iter().all(|kv| queue::is_waiter(prefix, kv)) && newest.as_ref().map_or(true, |kv| queue::is_waiter(prefix, kv));
        let (older, newest, revision) = if clean {
            (older, newest, revision)
        } else {
            Box::pin(self.older_waiters(permits, my_rev)).await?
        };
        let mut taken: u64 = 0;
        for kv in &older {
            match decode(&kv.value) {
                Some((n, count, _)) if n == permits.n || !permits.agree => taken += u64::from(count),
                found => {
                    let found = found.map_or("a lock of another kind".to_string(), |(n, _, _)| format!("{n} permits"));
                    return Err(Error::invalid(format!(
                        "semaphore {:?} is in use with {found}, not {}: every participant must give the same number (it can change once nobody holds or waits)",
                        String::from_utf8_lossy(&self.name),
                        permits.n
                    )));
                }
            }
        }
        // Every older key holds while their counts fit in N (the counts add up in queue order);
        // then this one is the head, and holds if its own count fits too.
        let n = u64::from(permits.n);
        let standing = if older.len() <= permits.n as usize && taken + u64::from(permits.count) <= n {
            Standing::Holds
        } else if older.len() <= permits.n as usize && taken <= n {
            Standing::Head
        } else {
            match newest {
                Some(kv) => Standing::Behind(kv),
                None => Standing::Head,
            }
        };
        Ok(Place { revision, standing })
    }

    /// The oldest N + 1 waiter keys older than `my_rev` and the newest one, read past keys that
    /// are no waiters' (pages of 64): only when such keys sit in the queue.
    async fn older_waiters(&self, permits: Permits, my_rev: i64) -> Result<(Vec<KeyValue>, Option<KeyValue>, i64)> {
        let (mut older, mut newest, mut revision, mut after) = (Vec::new(), None, 0, 0);
        loop {
            let o = oldest(64, Some(my_rev)).with_min_create_revision(after + 1);
            let page = self.range(o).await?;
            if revision == 0 {
                revision = page.header().map_or(0, |h| h.revision());
            }
            let kvs: Vec<KeyValue> = page.kvs().iter().map(KeyValue::from).collect();
            for kv in kvs.iter().filter(|kv| queue::is_waiter(&self.prefix, kv)) {
                if older.len() <= permits.n as usize {
                    older.push(kv.clone());
                }
                newest = Some(kv.clone());
            }
            match kvs.last() {
                Some(last) if page.more() => after = last.create_revision,
                _ => return Ok((older, newest, revision)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_permit_count_travels_in_the_value() {
        use super::Permits;
        assert_eq!(super::decode(&super::encode(Permits::one_of(3), b"job-7")), Some((3, 1, &b"job-7"[..])));
        assert_eq!(super::decode(&super::encode(Permits::one_of(1), b"")), Some((1, 1, &b""[..])));
        assert_eq!(super::encode(Permits { n: 4, count: 2, agree: true }, b"x"), b"permits=4,count=2;x");
        assert_eq!(super::decode(b"permits=4,count=2;x"), Some((4, 2, &b"x"[..])));
        for v in [&b""[..], b"job-7", b"permits=;", b"permits=x;", b"permits=3", b"permits=3,count=0;", b"permits=3,count=;"] {
            assert_eq!(super::decode(v), None, "{v:?}");
        }
    }
}
