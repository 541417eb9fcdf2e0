//! Queue inspection (`Client::inspect`) and the value an acquire attaches to its queue key.
mod common;
use common::*;
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
