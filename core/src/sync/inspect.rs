//! A lock's queue as etcd has it now: the holders and the waiters in order, each with its key,
//! fencing token, lease, the lease's remaining TTL and the value its acquire attached. Which keys
//! hold follows the rule of the queue's kind: the oldest key for a mutex, an election or a
//! writer; the oldest N for a semaphore of N; the readers older than every writer.

use crate::error::Result;
use crate::client::kv::KeyValue;
use crate::client::validate;
use crate::client::Client;
use crate::sync::mutex::permits;
use crate::sync::mutex::readers::{self, Mode};
use crate::sync::queue::is_waiter;
use etcd_client::{GetOptions, SortOrder, SortTarget};

/// Keys per page of the queue read.
const PAGE: i64 = 256;

/// One acquisition in a lock's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueEntry {
    /// The queue key, `<name>/<lease hex>[-n]`.
    pub key: Vec<u8>,
    /// The key's create revision: the fencing token it has, or will have once it holds.
    pub fencing_token: i64,
    /// The lease the key is bound to.
    pub lease: i64,
    /// Seconds the lease has left on the server; `None` if it is gone (the key goes with it).
    pub ttl: Option<i64>,
    /// The value the acquire attached ([`LockOptions::value`](crate::LockOptions)), the
    /// proposal for an election; empty for none, and for `etcdctl lock` or Go's
    /// `concurrency.Mutex`. (What tells a semaphore's or a read-write lock's keys apart is left
    /// out: see [`QueueEntry::mode`].)
    pub value: Vec<u8>,
    /// `"read"` or `"write"` for a read-write lock's key, `"permits=<N>"` for a semaphore's of N,
    /// `""` for a mutex's or an election's (and `etcdctl lock`'s).
    pub mode: String,
}

/// A lock's queue at one revision.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockState {
    /// The holder (the oldest key), `None` when the lock is free. For a semaphore or readers,
    /// the first of [`LockState::holders`].
    pub holder: Option<QueueEntry>,
    /// Every key that holds, oldest first: the holder alone for a mutex, an election or a
    /// writer; up to N for a semaphore of N; the readers older than every writer.
    pub holders: Vec<QueueEntry>,
    /// The others, in queue order.
    pub waiters: Vec<QueueEntry>,
    /// The etcd revision the queue was read at.
    pub revision: i64,
}

impl Client {
    /// Reads the queue of lock `name` (held by this client or any other, `etcdctl lock` and Go
    /// included): one range read at one revision, then one `LeaseTimeToLive` per distinct lease.
    /// Keys under `<name>/` that are no waiters (see `sync/queue.rs`) are left out. Changes
    /// nothing; a bad name is `InvalidArgument` before anything is sent.
    ///
    /// ```no_run
    /// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
    /// let state = client.inspect("jobs/nightly").await?;
    /// if let Some(h) = &state.holder {
    ///     println!("held by {} (token {}), {} waiting", String::from_utf8_lossy(&h.value), h.fencing_token, state.waiters.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn inspect(&self, name: impl AsRef<[u8]>) -> Result<LockState> {
        let name = name.as_ref();
        validate::lock_name(name)?;
        self.check_open()?;
        let mut prefix = name.to_vec();
        prefix.push(b'/');
        let (kvs, revision) = self.read_queue(&prefix).await?;
        let mut entries = Vec::with_capacity(kvs.len());
        let mut ttls: Vec<(i64, Option<i64>)> = Vec::new();
        for kv in kvs.into_iter().filter(|kv| is_waiter(&prefix, kv)) {
            let ttl = match ttls.iter().find(|(id, _)| *id == kv.lease) {
                Some((_, ttl)) => *ttl,
                None => {
                    let ttl = self.lease_ttl(kv.lease).await?;
                    ttls.push((kv.lease, ttl));
                    ttl
                }
            };
            let (mode, value) = split_mode(&kv.value);
            entries.push(QueueEntry { key: kv.key, fencing_token: kv.create_revision, lease: kv.lease, ttl, value: value.to_vec(), mode });
        }
        let waiters = entries.split_off(holding(&entries));
        Ok(LockState { holder: entries.first().cloned(), holders: entries, waiters, revision })
    }

    /// Every key under `prefix`, oldest first, read in pages at the first page's revision.
    async fn read_queue(&self, prefix: &[u8]) -> Result<(Vec<KeyValue>, i64)> {
        let (mut out, mut revision, mut after) = (Vec::new(), 0, 0);
        loop {
            let mut o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Ascend).with_limit(PAGE);
            if revision > 0 {
                o = o.with_revision(revision).with_min_create_revision(after + 1);
            }
            let key = prefix.to_vec();
            let resp = self
                .call(None, true, move |rpc| {
                    let (mut kv, key, o) = (rpc.kv.get(), key.clone(), o.clone());
                    async move { kv.get(key, Some(o)).await }
                })
                .await?;
            if revision == 0 {
                revision = resp.header().map_or(0, |h| h.revision());
            }
            let page: Vec<KeyValue> = resp.kvs().iter().map(KeyValue::from).collect();
            let more = resp.more() && !page.is_empty();
            if let Some(last) = page.last() {
                after = last.create_revision;
            }
            out.extend(page);
            if !more {
                return Ok((out, revision));
            }
        }
    }

    /// The seconds lease `id` has left, `None` if the server no longer has it.
    pub(crate) async fn lease_ttl(&self, id: i64) -> Result<Option<i64>> {
        let ttl = self
            .call(None, true, move |rpc| {
                let mut c = rpc.lease.clone();
                async move { c.time_to_live(id, None).await.map(|r| r.ttl()) }
            })
            .await?;
        Ok((ttl >= 0).then_some(ttl))
    }
}

/// The kind a key's value says it is, and the caller's value after it.
pub(crate) fn split_mode(value: &[u8]) -> (String, &[u8]) {
    if let Some((n, count, rest)) = permits::decode(value) {
        return (if count == 1 { format!("permits={n}") } else { format!("permits={n},count={count}") }, rest);
    }
    match readers::decode(value) {
        Some((Mode::Read, rest)) => ("read".into(), rest),
        Some((Mode::Write, rest)) => ("write".into(), rest),
        None => (String::new(), value),
    }
}

/// How many of the oldest entries hold: for a semaphore of N (the oldest key's), those whose
/// counts add up to at most N in queue order; the readers before the first writer (a key of
/// another kind counts as one); else the oldest alone.
pub(crate) fn holding(entries: &[QueueEntry]) -> usize {
    let Some(first) = entries.first() else { return 0 };
    let weight = |e: &QueueEntry| {
        let m = e.mode.strip_prefix("permits=")?;
        let (n, count) = m.split_once(",count=").unwrap_or((m, "1"));
        Some((n.parse::<u64>().ok()?, count.parse::<u64>().ok()?))
    };
    if let Some((n, _)) = weight(first) {
        let mut taken = 0;
        return entries.iter().take_while(|e| {
            taken += weight(e).map_or(1, |(_, c)| c);
            taken <= n
        }).count();
    }
    entries.iter().take_while(|e| e.mode == "read").count().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(values: &[&[u8]]) -> Vec<QueueEntry> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let (mode, value) = split_mode(v);
                QueueEntry { key: vec![], fencing_token: i as i64, lease: 1, ttl: None, value: value.to_vec(), mode }
            })
            .collect()
    }

    #[test]
    fn the_holders_follow_the_rule_of_the_queue_kind() {
        assert_eq!(holding(&entries(&[])), 0);
        assert_eq!(holding(&entries(&[b"", b"x"])), 1, "a mutex");
        assert_eq!(holding(&entries(&[b"permits=3;a", b"permits=3;", b"permits=3;", b"permits=3;"])), 3);
        assert_eq!(holding(&entries(&[b"permits=3;a"])), 1);
        assert_eq!(holding(&entries(&[b"rw=r;", b"rw=r;", b"rw=w;", b"rw=r;"])), 2, "readers before the writer");
        assert_eq!(holding(&entries(&[b"rw=w;", b"rw=r;"])), 1);
        assert_eq!(holding(&entries(&[b"", b"rw=r;"])), 1, "a plain lock counts as a writer");
        let e = entries(&[b"permits=3;job-7", b"rw=r;cfg"]);
        assert_eq!((e[0].mode.as_str(), &e[0].value[..]), ("permits=3", &b"job-7"[..]));
        assert_eq!((e[1].mode.as_str(), &e[1].value[..]), ("read", &b"cfg"[..]));
    }
}
