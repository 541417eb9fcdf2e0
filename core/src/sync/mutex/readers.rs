//! The queue rule for a read-write lock's readers: a reader's key holds while no older key is
//! a writer's, so readers hold together, and a reader waits only for writers that came before
//! it (holding or waiting), which keeps writers from starving. A writer is a mutex waiter (the
//! oldest key holds, `wait.rs`), so it waits for every earlier reader and writer.
//!
//! Each key's value starts with `rw=r;` or `rw=w;` before the value the caller attached. A key
//! without either (a plain mutex's, `etcdctl lock`'s) counts as a writer's: a read-write lock
//! and a mutex on one name exclude each other.

use super::placed::{Place, Standing};
use super::*;

/// Keys per page of the reads that look for the newest older writer.
const PAGE: i64 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Read,
    Write,
}

/// What a read-write lock's key stores: its mode, then the caller's value.
pub(crate) fn encode(mode: Mode, value: &[u8]) -> Vec<u8> {
    let mut v = match mode {
        Mode::Read => b"rw=r;".to_vec(),
        Mode::Write => b"rw=w;".to_vec(),
    };
    v.extend_from_slice(value);
    v
}

/// The mode and the caller's value of a read-write lock's key, if it is one.
pub(crate) fn decode(value: &[u8]) -> Option<(Mode, &[u8])> {
    if let Some(rest) = value.strip_prefix(b"rw=r;") {
        Some((Mode::Read, rest))
    } else {
        value.strip_prefix(b"rw=w;").map(|rest| (Mode::Write, rest))
    }
}

/// The newest keys under a queue prefix (with values), created before `below` if given.
fn newest_page(below: Option<i64>) -> GetOptions {
    let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Descend).with_limit(PAGE);
    match below {
        Some(rev) => o.with_max_create_revision(rev - 1),
        None => o,
    }
}

impl Mutex {
    /// One Txn: read the newest keys, then put ours if absent (ours is then the newest, so
    /// what was read is older). Idempotent, so retried. `value` is what the key stores.
    pub(super) async fn enqueue_reader(
        &self,
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
                TxnOp::get(prefix.clone(), Some(newest_page(None))),
                TxnOp::put(key, value, Some(PutOptions::new().with_lease(lease_id))),
            ])
        };
        let resp = self.client.txn_noting_copies(txn, copies).await?;
        let (my_rev, place) = if resp.succeeded() {
            let my_rev = resp.header().map_or(0, |h| h.revision());
            let TxnOpResponse::Get(page) = &resp.op_responses()[0] else {
                return Err(Error::new(ErrorKind::Internal, "unexpected Txn response"));
            };
            let kvs: Vec<KeyValue> = page.kvs().iter().map(KeyValue::from).collect();
            (my_rev, self.find_writer(kvs, page.more(), my_rev, my_rev).await?)
        } else {
            // Our key already exists: an earlier attempt landed.
            let Some(mine) = Box::pin(self.client.get(key)).await? else {
                return Err(Error::new(ErrorKind::Internal, "queue key vanished during enqueue"));
            };
            (mine.create_revision, Box::pin(self.place_reader(mine.create_revision)).await?)
        };
        Ok(match place.standing {
            Standing::Holds => Enqueued::Held(my_rev),
            _ if try_once => Enqueued::Busy { written: Some(my_rev) },
            _ => Enqueued::Placed(my_rev, place),
        })
    }

    /// Where the reader key created at `my_rev` stands now: one read while a writer is among
    /// the 16 keys before it, more pages otherwise.
    pub(super) async fn place_reader(&self, my_rev: i64) -> Result<Place> {
        let page = self.range(newest_page(Some(my_rev))).await?;
        let revision = page.header().map_or(0, |h| h.revision());
        let kvs: Vec<KeyValue> = page.kvs().iter().map(KeyValue::from).collect();
        self.find_writer(kvs, page.more(), my_rev, revision).await
    }

    /// The newest writer's key older than `my_rev`, from a page of the newest older keys and
    /// the pages past it: a reader waits for it, or holds if there is none.
    async fn find_writer(&self, mut kvs: Vec<KeyValue>, mut more: bool, my_rev: i64, revision: i64) -> Result<Place> {
        loop {
            let writer = kvs.iter().find(|kv| queue::is_waiter(&self.prefix, kv) && !matches!(decode(&kv.value), Some((Mode::Read, _))));
            if let Some(w) = writer {
                return Ok(Place { revision, standing: Standing::Behind(w.clone()) });
            }
            let oldest = match kvs.last() {
                Some(last) if more => last.create_revision,
                _ => return Ok(Place { revision, standing: Standing::Holds }),
            };
            // Only readers (or keys that are no waiters') so far: look further back. No key
            // older than ours can appear meanwhile, so the pages join without a gap.
            let page = self.range(newest_page(Some(oldest.min(my_rev)))).await?;
            more = page.more();
            kvs = page.kvs().iter().map(KeyValue::from).collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_travels_in_the_value() {
        assert_eq!(decode(&encode(Mode::Read, b"cfg")), Some((Mode::Read, &b"cfg"[..])));
        assert_eq!(decode(&encode(Mode::Write, b"")), Some((Mode::Write, &b""[..])));
        for v in [&b""[..], b"cfg", b"rw=x;", b"rw=r", b"permits=1;"] {
            assert_eq!(decode(v), None, "{v:?}");
        }
    }
}
