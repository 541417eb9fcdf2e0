//! Every name under a prefix and what it is, from one read at one revision: the locks (and
//! elections: their keys look alike), semaphores and read-write locks by their queue keys; task
//! queues, pools and once-per-period jobs by the keys their layouts write (`tasks/keys.rs`,
//! `pool/board.rs`, `once/mod.rs`); services of the registry by the leased keys left over. For
//! `etcdlock status --prefix`; one name in detail is [`Client::inspect`] and each kind's own
//! reads.

use crate::client::kv::KeyValue;
use crate::client::Client;
use crate::error::Result;
use crate::sync::inspect::{holding, split_mode, QueueEntry};
use crate::sync::pool::spec::Spec;
use crate::sync::queue::is_waiter;
use std::collections::BTreeMap;

/// What a name found by [`Client::survey`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameKind {
    /// A mutex, or an election (their queues look alike: `N/<lease hex>`).
    Lock,
    /// A semaphore of `permits`.
    Semaphore {
        /// The permits its oldest key says it has.
        permits: u32,
    },
    /// A read-write lock.
    RwLock,
    /// A task queue.
    TaskQueue,
    /// A pool of named slots.
    Pool,
    /// A job run once per period.
    Once,
    /// A service of the registry (its instances' keys, on leases).
    Service,
}

impl NameKind {
    /// The kind's word in `etcdlock status`: `lock`, `semaphore`, `rwlock`, `queue`, `pool`,
    /// `once`, `service`.
    pub fn as_str(&self) -> &'static str {
        match self {
            NameKind::Lock => "lock",
            NameKind::Semaphore { .. } => "semaphore",
            NameKind::RwLock => "rwlock",
            NameKind::TaskQueue => "queue",
            NameKind::Pool => "pool",
            NameKind::Once => "once",
            NameKind::Service => "service",
        }
    }
}

/// One name under the surveyed prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameSummary {
    /// The name (a lock's, a queue's, ...), as the recipes take it.
    pub name: Vec<u8>,
    /// What it is.
    pub kind: NameKind,
    /// Keys that hold now (a lock's holder, a semaphore's holders, the readers or the writer;
    /// a queue's claims, a pool's held slots, a once job's running claim, a service's
    /// instances).
    pub holders: u64,
    /// Keys waiting behind them (a queue's waiting workers, a pool's waiting requests).
    pub waiters: u64,
    /// A task queue's items: pending (not claimed), and dead letters; 0 for other kinds.
    pub pending: u64,
    /// A task queue's dead letters; a once job's periods marked done; 0 for other kinds.
    pub done_or_dead: u64,
}

#[derive(Default)]
struct Found {
    lock: Vec<QueueEntry>,
    queue: bool,
    items: u64,
    claims: u64,
    dead: u64,
    workers: u64,
    pool: bool,
    slots_held: u64,
    admission: u64,
    once: bool,
    once_running: u64,
    once_done: u64,
    instances: u64,
}

impl Client {
    /// Every name under `prefix` (bytes; empty for the whole keyspace) and its kind, sorted by
    /// name: one paged range read at one revision, values included. Changes nothing. Kinds are
    /// told apart by the shapes of their keys, so a key of the user's that has one of those
    /// shapes can look like a name; a lock and an election cannot be told apart.
    ///
    /// ```no_run
    /// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
    /// let (names, revision) = client.survey("jobs/").await?;
    /// for n in names {
    ///     println!("{} {} holders={} waiters={}", String::from_utf8_lossy(&n.name), n.kind.as_str(), n.holders, n.waiters);
    /// }
    /// # let _ = revision; Ok(()) }
    /// ```
    pub async fn survey(&self, prefix: impl AsRef<[u8]>) -> Result<(Vec<NameSummary>, i64)> {
        self.check_open()?;
        let (kvs, revision) = crate::cache::load::load(self, prefix.as_ref()).await?;
        Ok((names(kvs.into_values().collect()), revision))
    }
}

/// The names the keys `kvs` (one read's) make, sorted.
fn names(kvs: Vec<KeyValue>) -> Vec<NameSummary> {
    let mut found: BTreeMap<Vec<u8>, Found> = BTreeMap::new();
    let mut leftovers = Vec::new();
    for kv in kvs {
        if !classify(&kv, &mut found) {
            leftovers.push(kv);
        }
    }
    // A pool's admission queue is the lock `P/queue`: its keys are the pool's waiting requests.
    let pools: Vec<Vec<u8>> = found.iter().filter(|(_, f)| f.pool).map(|(n, _)| n.clone()).collect();
    for p in pools {
        let admission = found.remove(&[&p[..], b"/queue"].concat()).map_or(0, |f| f.lock.len() as u64);
        found.get_mut(&p).unwrap().admission = admission;
    }
    // Leased keys that no layout explains: a registry's instances, `S/<instance>`.
    for kv in leftovers.into_iter().filter(|kv| kv.lease > 0) {
        if let Some((service, _)) = split_last(&kv.key) {
            found.entry(service.to_vec()).or_default().instances += 1;
        }
    }
    found.into_iter().filter_map(|(name, f)| summary(name, f)).collect()
}

/// Files `kv` under the name its layout says; false if no layout explains it.
fn classify(kv: &KeyValue, found: &mut BTreeMap<Vec<u8>, Found>) -> bool {
    let key = &kv.key[..];
    let Some((parent, _)) = split_last(key) else { return false };
    let mut prefix = parent.to_vec();
    prefix.push(b'/');
    if is_waiter(&prefix, kv) {
        // A queue key: of which recipe depends on where its lock lives.
        if let Some(q) = parent.strip_suffix(b"/workers") {
            found.entry(q.to_vec()).or_default().workers += 1;
            found.get_mut(q).unwrap().queue = true;
        } else if let Some(q) = claim_queue(parent) {
            let f = found.entry(q.to_vec()).or_default();
            (f.queue, f.claims) = (true, f.claims + 1);
        } else if let Some(j) = once_job(parent) {
            let f = found.entry(j.to_vec()).or_default();
            (f.once, f.once_running) = (true, f.once_running + 1);
        } else {
            let (mode, value) = split_mode(&kv.value);
            let e = QueueEntry { key: kv.key.clone(), fencing_token: kv.create_revision, lease: kv.lease, ttl: None, value: value.to_vec(), mode };
            found.entry(parent.to_vec()).or_default().lock.push(e);
        }
        return true;
    }
    let parts: Vec<&[u8]> = key.split(|&b| b == b'/').collect();
    let n = parts.len();
    // `Q/items/<8 hex>/<16 hex>` and `Q/attempts/...`; `Q/claim/<8 hex>/<16 hex>/<lease hex>` delayed.
    if n >= 4 && hex_len(parts[n - 2], 8) && hex_len(parts[n - 1], 16) && matches!(parts[n - 3], b"items" | b"attempts") {
        let f = found.entry(join(&parts[..n - 3])).or_default();
        f.queue = true;
        f.items += u64::from(parts[n - 3] == b"items");
        return true;
    }
    if n >= 5 && parts[n - 4] == b"claim" && hex_len(parts[n - 3], 8) && hex_len(parts[n - 2], 16) {
        found.entry(join(&parts[..n - 4])).or_default().queue = true;
        return true;
    }
    if n >= 3 && matches!(parts[n - 2], b"id" | b"dead") {
        let q = join(&parts[..n - 2]);
        if let Some(f) = found.get_mut(&q).filter(|f| f.queue) {
            f.dead += u64::from(parts[n - 2] == b"dead");
            return true;
        }
    }
    // A pool: `P/spec` (a definition that decodes), `P/slot|used|free|cool/<id>`.
    if n >= 2 && parts[n - 1] == b"spec" && Spec::decode(&kv.value).is_some() {
        found.entry(join(&parts[..n - 1])).or_default().pool = true;
        return true;
    }
    if n >= 3 && matches!(parts[n - 2], b"slot" | b"used" | b"free" | b"cool") {
        let f = found.entry(join(&parts[..n - 2])).or_default();
        f.slots_held += u64::from(parts[n - 2] == b"slot" && kv.lease > 0);
        return true; // kept only if the name turns out to be a pool (summary())
    }
    // A once job's done mark: `J/done/<period>`.
    if n >= 3 && parts[n - 2] == b"done" && !parts[n - 1].is_empty() && parts[n - 1].iter().all(u8::is_ascii_digit) {
        let f = found.entry(join(&parts[..n - 2])).or_default();
        (f.once, f.once_done) = (true, f.once_done + 1);
        return true;
    }
    false
}

fn summary(name: Vec<u8>, f: Found) -> Option<NameSummary> {
    let s = |kind, holders, waiters, pending, done_or_dead| NameSummary { name: name.clone(), kind, holders, waiters, pending, done_or_dead };
    if f.queue {
        return Some(s(NameKind::TaskQueue, f.claims, f.workers, f.items.saturating_sub(f.claims), f.dead));
    }
    if f.pool {
        return Some(s(NameKind::Pool, f.slots_held, f.admission, 0, 0));
    }
    if f.once {
        return Some(s(NameKind::Once, f.once_running, 0, 0, f.once_done));
    }
    if !f.lock.is_empty() {
        let mut lock = f.lock;
        lock.sort_by_key(|e| e.fencing_token); // queue order: etcd's commit order
        let held = holding(&lock) as u64;
        let waiting = lock.len() as u64 - held;
        let first = &lock[0].mode;
        let kind = match first.strip_prefix("permits=") {
            Some(m) => NameKind::Semaphore { permits: m.split(',').next().and_then(|n| n.parse().ok()).unwrap_or(0) },
            None if first == "read" || first == "write" => NameKind::RwLock,
            None => NameKind::Lock,
        };
        return Some(s(kind, held, waiting, 0, 0));
    }
    (f.instances > 0).then(|| s(NameKind::Service, f.instances, 0, 0, 0))
}

/// `Q` of a claim lock `Q/claim/<8 hex>/<16 hex>`.
fn claim_queue(lock: &[u8]) -> Option<&[u8]> {
    let (rest, seq) = split_last(lock)?;
    let (rest, prio) = split_last(rest)?;
    let q = rest.strip_suffix(b"/claim")?;
    (hex_len(prio, 8) && hex_len(seq, 16)).then_some(q)
}

/// `J` of a once job's slot lock `J/slot/<period>`.
fn once_job(lock: &[u8]) -> Option<&[u8]> {
    let (rest, period) = split_last(lock)?;
    let j = rest.strip_suffix(b"/slot")?;
    (!period.is_empty() && period.iter().all(u8::is_ascii_digit)).then_some(j)
}

fn split_last(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let i = key.iter().rposition(|&b| b == b'/')?;
    (i > 0).then(|| (&key[..i], &key[i + 1..]))
}

fn hex_len(s: &[u8], len: usize) -> bool {
    s.len() == len && s.iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

fn join(parts: &[&[u8]]) -> Vec<u8> {
    parts.join(&b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(key: &str, lease: i64, rev: i64, value: &str) -> KeyValue {
        KeyValue { key: key.into(), value: value.into(), lease, create_revision: rev, mod_revision: rev, version: 1 }
    }

    fn survey(kvs: Vec<KeyValue>) -> Vec<(String, &'static str, u64, u64, u64, u64)> {
        names(kvs)
            .into_iter()
            .map(|s| (String::from_utf8(s.name).unwrap(), s.kind.as_str(), s.holders, s.waiters, s.pending, s.done_or_dead))
            .collect()
    }

    #[test]
    fn each_layout_is_told_by_its_keys() {
        let got = survey(vec![
            kv("a/lock/1f", 0x1f, 2, ""),
            kv("a/lock/2f", 0x2f, 3, "x"),
            kv("a/sem/1f", 0x1f, 4, "permits=2;"),
            kv("a/sem/2f", 0x2f, 5, "permits=2;"),
            kv("a/sem/3f", 0x3f, 6, "permits=2;"),
            kv("a/rw/1f", 0x1f, 7, "rw=r;"),
            kv("a/q/items/7fffffff/0000000000000009", 0, 9, "t1\np"),
            kv("a/q/items/7fffffff/000000000000000a", 0, 10, "t2\np"),
            kv("a/q/id/t1", 0, 9, "7fffffff/0000000000000009"),
            kv("a/q/claim/7fffffff/0000000000000009/1f", 0x1f, 11, ""),
            kv("a/q/workers/2f", 0x2f, 12, ""),
            kv("a/q/dead/t0", 0, 8, "3\n0\np"),
            kv("a/p/spec", 0, 13, "reuse_delay_ms=0\ngpu0\ngpu1"),
            kv("a/p/slot/gpu0", 0x1f, 14, "14;x"),
            kv("a/p/used/gpu0", 0, 14, ""),
            kv("a/p/queue/2f", 0x2f, 20, "permits=1;"),
            kv("a/j/done/42", 0x4f, 15, ""),
            kv("a/j/slot/43/1f", 0x1f, 16, ""),
            kv("a/svc/i-1", 0x1f, 17, "{\"Addr\":\"127.0.0.1:1\"}"),
            kv("a/svc/i-2", 0x2f, 18, "{\"Addr\":\"127.0.0.1:2\"}"),
            kv("a/plain", 0, 19, "a user's key, on no lease"),
        ]);
        assert_eq!(
            got,
            vec![
                ("a/j".into(), "once", 1, 0, 0, 1),
                ("a/lock".into(), "lock", 1, 1, 0, 0),
                ("a/p".into(), "pool", 1, 1, 0, 0),
                ("a/q".into(), "queue", 1, 1, 1, 1),
                ("a/rw".into(), "rwlock", 1, 0, 0, 0),
                ("a/sem".into(), "semaphore", 2, 1, 0, 0),
                ("a/svc".into(), "service", 2, 0, 0, 0),
            ]
        );
    }

    #[test]
    fn keys_that_only_look_like_a_layout_are_not_a_name() {
        // A key under a lease that is not its name's waiter, a slot key without a pool spec, a
        // lock named like a pool's admission queue without the pool.
        let got = survey(vec![kv("x/1f", 0x2f, 2, ""), kv("y/slot/a", 0, 3, ""), kv("z/queue/1f", 0x1f, 4, "")]);
        assert_eq!(got, vec![("x".into(), "service", 1, 0, 0, 0), ("z/queue".into(), "lock", 1, 0, 0, 0)]);
    }
}
