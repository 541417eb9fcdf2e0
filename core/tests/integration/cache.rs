//! The prefix cache (`Client::cache`) against a real etcd: its state at its revision is etcd's,
//! its events are etcd's history, in order, none missing; after a compaction it reads again and
//! delivers the differences, a delete and re-create among them.

use crate::common::*;
use etcd_client::GetOptions;
use etcdlock::{CacheEvent, CacheEventKind};
use std::collections::BTreeMap;
use std::time::Duration;

/// etcd's own `get --prefix --rev=R`, as key -> value.
async fn etcd_at(eps: &[String], prefix: &str, rev: i64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut raw = raw(eps).await;
    let r = raw.get(prefix, Some(GetOptions::new().with_prefix().with_revision(rev))).await.unwrap();
    r.kvs().iter().map(|kv| (kv.key().to_vec(), kv.value().to_vec())).collect()
}

fn values(snapshot: &BTreeMap<Vec<u8>, etcdlock::KeyValue>) -> BTreeMap<Vec<u8>, Vec<u8>> {
    snapshot.iter().map(|(k, kv)| (k.clone(), kv.value.clone())).collect()
}

async fn take(events: &mut etcdlock::CacheEvents, n: usize) -> Vec<CacheEvent> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(tokio::time::timeout(Duration::from_secs(10), events.next()).await.expect("an event").expect("open"));
    }
    out
}

// covers: CACHE-LOAD-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_is_etcds_state_at_its_revision_and_its_events_are_etcds_history() {
    let eps = shared().endpoints();
    let prefix = prefix("cache-load");
    let mut raw = raw(&eps).await;
    // More keys than one page, written while nobody watches.
    for batch in 0..25 {
        let ops: Vec<etcd_client::TxnOp> = (0..100).map(|i| etcd_client::TxnOp::put(format!("{prefix}k{:05}", batch * 100 + i), "v0", None)).collect();
        raw.txn(etcd_client::Txn::new().and_then(ops)).await.unwrap();
    }
    let c = client().await;
    let cache = c.cache(prefix.clone()).await.unwrap();
    let (snap, at) = cache.snapshot();
    assert_eq!(snap.len(), 2500);
    assert_eq!(values(&snap), etcd_at(&eps, &prefix, at).await, "the copy is not etcd's state at its revision");
    let mut events = cache.events();
    // Writes, deletes, a Txn of several: read-your-writes with wait_for, every event in order.
    let mut expect = Vec::new();
    for i in 0..20 {
        let key = format!("{prefix}k{:05}", i * 7);
        let rev = if i % 3 == 0 {
            raw.delete(key.as_str(), None).await.unwrap().header().unwrap().revision()
        } else {
            raw.put(key.as_str(), format!("v{i}"), None).await.unwrap().header().unwrap().revision()
        };
        expect.push((key, rev, i % 3 == 0));
        cache.wait_for(rev, Duration::from_secs(5)).await.unwrap();
        let got = cache.get(expect.last().unwrap().0.as_bytes()).map(|kv| kv.value);
        assert_eq!(got, if i % 3 == 0 { None } else { Some(format!("v{i}").into_bytes()) }, "read-your-writes");
    }
    raw.put(format!("{prefix}-outside"), "x", None).await.unwrap(); // not under the prefix: no event
    let seen = take(&mut events, expect.len()).await;
    for (ev, (key, rev, deleted)) in seen.iter().zip(&expect) {
        assert_eq!((ev.key.as_slice(), ev.revision), (key.as_bytes(), *rev));
        assert_eq!(ev.kind, if *deleted { CacheEventKind::Delete } else { CacheEventKind::Put });
        assert!(ev.prev_value.is_some(), "the copy had every key: {ev:?}");
    }
    let (snap, at) = cache.snapshot();
    assert_eq!(values(&snap), etcd_at(&eps, &prefix, at).await);
    c.close().await;
}

// covers: CACHE-RESYNC-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_compaction_while_cut_off_a_cache_reads_again_and_delivers_a_delete_and_re_create() {
    use etcd_testkit::proxy::{Mode, Proxy};
    let etcd = Etcd::start(1);
    let proxy = Proxy::start(etcd.members[0].client_port);
    let eps = etcd.endpoints();
    let mut raw = raw(&eps).await;
    let p = "cfg/";
    for k in ["a", "b", "c"] {
        raw.put(format!("{p}{k}"), "1", None).await.unwrap();
    }
    let c = etcdlock::Client::connect([proxy.endpoint()], Default::default()).await.unwrap();
    let cache = c.cache(p).await.unwrap();
    let mut events = cache.events();
    assert_eq!(cache.len(), 3);
    // Cut off: the cache hears nothing while `a` is deleted and created again, `b` changed,
    // `c` deleted, `d` created, and the history compacted.
    proxy.set(Mode::Blackhole);
    proxy.reset();
    raw.delete(format!("{p}a"), None).await.unwrap();
    raw.put(format!("{p}a"), "2", None).await.unwrap();
    raw.put(format!("{p}b"), "2", None).await.unwrap();
    raw.delete(format!("{p}c"), None).await.unwrap();
    let head = raw.put(format!("{p}d"), "1", None).await.unwrap().header().unwrap().revision();
    raw.compact(head, None).await.unwrap();
    proxy.set(Mode::Pass);
    cache.wait_for(head, Duration::from_secs(30)).await.unwrap();
    let got = take(&mut events, 6).await;
    let summary: Vec<(CacheEventKind, String)> = got.iter().map(|e| (e.kind, String::from_utf8_lossy(&e.key).into_owned())).collect();
    use CacheEventKind::*;
    assert_eq!(
        summary,
        vec![(Delete, "cfg/a".into()), (Put, "cfg/a".into()), (Put, "cfg/b".into()), (Delete, "cfg/c".into()), (Put, "cfg/d".into()), (Resynced, String::new())]
    );
    let (snap, at) = cache.snapshot();
    assert_eq!(values(&snap), etcd_at(&eps, p, at).await);
    // And it follows on from there.
    let rev = raw.put(format!("{p}e"), "1", None).await.unwrap().header().unwrap().revision();
    cache.wait_for(rev, Duration::from_secs(10)).await.unwrap();
    assert_eq!(take(&mut events, 1).await[0].key, b"cfg/e");
    c.close().await;
}

// covers: CACHE-FAULT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_follows_every_write_across_a_killed_leader() {
    let mut etcd = Etcd::start(3);
    let c = client_for(&etcd.endpoints()).await;
    let cache = c.cache("jobs/").await.unwrap();
    let mut events = cache.events();
    let leader = etcd.leader().await;
    let live: Vec<String> = (0..3).filter(|i| *i != leader).map(|i| etcd.members[i].endpoint()).collect();
    let writer = client_for(&live).await;
    let mut revs = Vec::new();
    for i in 0..30 {
        if i == 10 {
            etcd.kill(leader);
        }
        // A write whose outcome is unknown across the election is not counted.
        if let Ok(rev) = writer.put(format!("jobs/{}", i % 7).as_bytes(), format!("{i}").as_bytes(), None).await {
            revs.push(rev);
        }
    }
    let last = *revs.last().unwrap();
    cache.wait_for(last, Duration::from_secs(30)).await.unwrap();
    let mut seen = Vec::new();
    while seen.last().map_or(true, |r| *r < last) {
        let ev = tokio::time::timeout(Duration::from_secs(10), events.next()).await.unwrap().unwrap();
        assert_ne!(ev.kind, CacheEventKind::Resynced);
        seen.push(ev.revision);
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "events out of order or twice: {seen:?}");
    assert!(revs.iter().all(|r| seen.contains(r)), "an acknowledged write is missing: {revs:?} vs {seen:?}");
    let (snap, at) = cache.snapshot();
    assert_eq!(values(&snap), etcd_at(&live, "jobs/", at).await);
    writer.close().await;
    c.close().await;
}

// covers: CACHE-CLOSE-001
#[tokio::test]
async fn closing_the_client_ends_a_waiting_wait_for_and_events_reader() {
    let c = client().await;
    let p = prefix("cache-close");
    let cache = c.cache(p.clone()).await.unwrap();
    let mut events = cache.events();
    let (waiting, reading) = {
        let cache = cache.clone();
        let far = cache.revision() + 1_000_000;
        (tokio::spawn(async move { cache.wait_for(far, Duration::from_secs(30)).await }), tokio::spawn(async move { events.next().await }))
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    c.close().await;
    let waited = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("wait_for outlived the client's close").unwrap();
    assert_eq!(waited.unwrap_err().kind(), etcdlock::ErrorKind::Closed);
    let read = tokio::time::timeout(Duration::from_secs(5), reading).await.expect("the events reader outlived the client's close").unwrap();
    assert!(read.is_none());
    // The copy is still readable; it just no longer follows.
    assert_eq!(cache.get(format!("{p}x").as_bytes()), None);
}

// covers: CACHE-LOAD-001
#[tokio::test]
async fn a_cache_of_the_empty_prefix_is_the_whole_keyspace() {
    // A server of its own: the shared one's keyspace changes under every other test.
    let etcd = Etcd::start(1);
    let c = client_for(&etcd.endpoints()).await;
    let first = c.put(b"a/1", b"x", None).await.unwrap();
    c.put(b"b", b"y", None).await.unwrap();
    let cache = c.cache("").await.unwrap();
    assert!(cache.revision() > first);
    assert_eq!((cache.len(), cache.get(b"a/1").map(|kv| kv.value)), (2, Some(b"x".to_vec())));
    let rev = c.put(b"zz", b"z", None).await.unwrap();
    cache.wait_for(rev, Duration::from_secs(5)).await.unwrap();
    assert_eq!(cache.get(b"zz").map(|kv| kv.value), Some(b"z".to_vec()));
    c.close().await;
}
