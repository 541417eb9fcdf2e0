//! Queue inspection (`Client::inspect`) and the value an acquire attaches to its queue key.
use crate::common::*;
use etcd_client::{GetOptions, SortOrder, SortTarget};
use etcdlock::{ErrorKind, LockOptions};
use std::time::Duration;

fn with_value(v: &str) -> LockOptions {
    LockOptions { value: v.as_bytes().to_vec(), ..Default::default() }
}

// covers: LOCK-INSPECT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_shows_the_holder_and_the_waiters_in_order_as_etcd_has_them() {
    let eps = shared().endpoints();
    let (a, b) = (client().await, client().await);
    let name = prefix("inspect") + "jobs";
    assert_eq!(a.inspect(&name).await.unwrap().holder, None, "a free lock has no holder");

    let holder = a.mutex(name.clone(), 10).unwrap().lock_with(with_value("host-a pid 1")).await.unwrap();
    // Three waiters from two clients, queued one after the other.
    let mut waiters = Vec::new();
    for (i, (c, v)) in [(&b, "host-b pid 2"), (&a, "host-a pid 3"), (&b, "")].into_iter().enumerate() {
        let m = c.mutex(name.clone(), 10).unwrap();
        let opts = with_value(v);
        waiters.push(tokio::spawn(async move { m.lock_with(opts).await.map(|g| g.fencing_token()) }));
        assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == i + 2 }).await);
    }

    let state = a.inspect(&name).await.unwrap();
    let h = state.holder.clone().expect("a holder");
    assert_eq!((h.key.as_slice(), h.fencing_token, h.value.as_slice()), (holder.key(), holder.fencing_token(), &b"host-a pid 1"[..]));
    let values: Vec<&[u8]> = state.waiters.iter().map(|w| w.value.as_slice()).collect();
    assert_eq!(values, [&b"host-b pid 2"[..], b"host-a pid 3", b""]);

    // The same as etcd itself has, oldest first.
    let mut raw = raw(&eps).await;
    let opts = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Ascend);
    let resp = raw.get(format!("{name}/"), Some(opts)).await.unwrap();
    let etcd: Vec<(Vec<u8>, i64, i64, Vec<u8>)> =
        resp.kvs().iter().map(|kv| (kv.key().to_vec(), kv.create_revision(), kv.lease(), kv.value().to_vec())).collect();
    let ours: Vec<(Vec<u8>, i64, i64, Vec<u8>)> =
        std::iter::once(&h).chain(&state.waiters).map(|e| (e.key.clone(), e.fencing_token, e.lease, e.value.clone())).collect();
    assert_eq!(ours, etcd);
    for e in std::iter::once(&h).chain(&state.waiters) {
        assert!(matches!(e.ttl, Some(t) if t > 0 && t <= 10), "{e:?}");
    }
    assert!(state.revision >= state.waiters.last().unwrap().fencing_token);

    // Each waiter is served in that order, with the token inspect showed (a guard dropped by
    // its task is released in the background, which hands the lock on).
    holder.release().await.unwrap();
    for (w, e) in waiters.into_iter().zip(&state.waiters) {
        assert_eq!(w.await.unwrap().unwrap(), e.fencing_token);
    }
    assert!(eventually(Duration::from_secs(5), || async { a.inspect(&name).await.unwrap().holder.is_none() }).await);
    a.close().await;
    b.close().await;
}

// covers: LOCK-VALUE-001
#[tokio::test]
async fn a_value_too_long_or_a_bad_name_is_refused_before_anything_is_sent() {
    let eps = shared().endpoints();
    let c = client().await;
    let name = prefix("inspect") + "big";
    let m = c.mutex(name.clone(), 10).unwrap();
    let e = m.lock_with(LockOptions { value: vec![b'x'; etcdlock::MAX_LOCK_VALUE_LEN + 1], ..Default::default() }).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("at most 4096 bytes"), "{e}");
    assert!(keys_under(&eps, &format!("{name}/")).await.is_empty());
    // The longest value is fine, and stored as given.
    let g = m.lock_with(LockOptions { value: vec![b'y'; etcdlock::MAX_LOCK_VALUE_LEN], ..Default::default() }).await.unwrap();
    assert_eq!(c.inspect(&name).await.unwrap().holder.unwrap().value.len(), etcdlock::MAX_LOCK_VALUE_LEN);
    g.release().await.unwrap();
    assert_eq!(c.inspect(&name).await.unwrap().holder, None);
    for bad in ["", "jobs/"] {
        assert_eq!(c.inspect(bad).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    c.close().await;
}

// covers: LOCK-INSPECT-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_shows_every_holder_of_a_semaphore_a_read_write_lock_and_an_election() {
    let eps = shared().endpoints();
    let c = client().await;
    let base = prefix("inspect-kinds");
    let queued = |name: String, n: usize| {
        let eps = eps.clone();
        async move { assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == n }).await) }
    };

    // A semaphore of 2: two hold, the third waits; values come without the permit count.
    let slots = format!("{base}slots");
    let s = c.semaphore(slots.clone(), 2, 10).unwrap();
    let (p1, p2) = (s.acquire_with(with_value("one")).await.unwrap(), s.acquire_with(with_value("two")).await.unwrap());
    let s3 = c.semaphore(slots.clone(), 2, 10).unwrap();
    let third = tokio::spawn(async move { s3.acquire_with(with_value("three")).await.map(|g| g.fencing_token()) });
    queued(slots.clone(), 3).await;
    let st = c.inspect(&slots).await.unwrap();
    let view = |v: &[etcdlock::QueueEntry]| v.iter().map(|e| (e.mode.clone(), String::from_utf8_lossy(&e.value).into_owned())).collect::<Vec<_>>();
    assert_eq!(view(&st.holders), [("permits=2".into(), "one".into()), ("permits=2".into(), "two".into())]);
    assert_eq!(view(&st.waiters), [("permits=2".to_string(), "three".to_string())]);
    assert_eq!(st.holder.as_ref().map(|h| h.fencing_token), Some(p1.fencing_token()));
    p1.release().await.unwrap();
    assert!(third.await.unwrap().unwrap() > p2.fencing_token());

    // A read-write lock: two readers hold; a writer and a reader behind it wait.
    let cfg = format!("{base}cfg");
    let rw = c.rwlock(cfg.clone(), 10).unwrap();
    let (r1, r2) = (rw.read().await.unwrap(), rw.read().await.unwrap());
    let w = c.rwlock(cfg.clone(), 10).unwrap();
    let writer = tokio::spawn(async move { w.write().await.map(drop) });
    queued(cfg.clone(), 3).await;
    let r = c.rwlock(cfg.clone(), 10).unwrap();
    let reader = tokio::spawn(async move { r.read().await.map(drop) });
    queued(cfg.clone(), 4).await;
    let st = c.inspect(&cfg).await.unwrap();
    let modes = |v: &[etcdlock::QueueEntry]| v.iter().map(|e| e.mode.clone()).collect::<Vec<_>>();
    assert_eq!((modes(&st.holders), modes(&st.waiters)), (vec!["read".to_string(), "read".into()], vec!["write".to_string(), "read".into()]));
    drop((r1, r2));
    writer.await.unwrap().unwrap();
    reader.await.unwrap().unwrap();

    // An election: the leader holds, with its proposal; a candidate waits.
    let svc = format!("{base}svc");
    let leader = c.election(svc.clone(), 10).unwrap().campaign("node-1").await.unwrap();
    let e = c.election(svc.clone(), 10).unwrap();
    let next = tokio::spawn(async move { e.campaign("node-2").await.map(drop) });
    queued(svc.clone(), 2).await;
    let st = c.inspect(&svc).await.unwrap();
    assert_eq!(view(&st.holders), [(String::new(), "node-1".to_string())]);
    assert_eq!(view(&st.waiters), [(String::new(), "node-2".to_string())]);
    leader.resign().await.unwrap();
    next.await.unwrap().unwrap();
    c.close().await;
}
