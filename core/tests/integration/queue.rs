//! A lock's queue holds only waiters: keys under `<name>/` that no waiter wrote (a user's key,
//! the queue of a lock named `<name>/a`) never block `<name>`, and guarded writes cannot put
//! such keys there.
use crate::common::*;
use etcd_client::PutOptions;
use etcdlock::{ErrorKind, LockOptions, Op};
use std::time::Duration;

fn within(ms: u64) -> LockOptions {
    LockOptions { timeout: Some(Duration::from_millis(ms)), cancel: None, ..Default::default() }
}

// covers: LOCK-PREFIX-001
#[tokio::test]
async fn guarded_writes_under_the_queue_prefix_are_refused() {
    let eps = shared().endpoints();
    let client = client().await;
    let name = prefix("guardprefix") + "orders";
    let m = client.mutex(name.clone(), 10).unwrap();
    let g = m.lock().await.unwrap();
    let elsewhere = format!("{name}-state");
    for key in [format!("{name}/last"), format!("{name}/a/b")] {
        let e = g.put(key.as_bytes(), b"42").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        let e = g.txn(&[Op::put(elsewhere.clone(), "1"), Op::delete(key.clone())]).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    }
    // Nothing was written, not even the other half of the refused transaction.
    assert_eq!(keys_under(&eps, &format!("{name}/")).await, vec![String::from_utf8(g.key().to_vec()).unwrap()]);
    assert!(client.get(elsewhere.as_bytes()).await.unwrap().is_none());
    // A key that only starts with the name is outside the queue.
    g.put(elsewhere.as_bytes(), b"1").await.unwrap();
    g.release().await.unwrap();
    // The next acquire is immediate.
    m.try_lock().await.unwrap().release().await.unwrap();
    client.delete(elsewhere.as_bytes()).await.unwrap();
    client.close().await;
}

// covers: LOCK-FOREIGN-001
#[tokio::test]
async fn keys_that_are_no_waiters_never_make_the_lock_busy() {
    let eps = shared().endpoints();
    let mut raw = raw(&eps).await;
    let client = client().await;
    let name = prefix("foreign") + "jobs";
    let lease = raw.lease_grant(60, None).await.unwrap().id();
    let on_lease = Some(PutOptions::new().with_lease(lease));
    raw.put(format!("{name}/last"), "no lease", None).await.unwrap();
    raw.put(format!("{name}/config"), "a user's key on a lease", on_lease.clone()).await.unwrap();
    raw.put(format!("{name}/{:x}", lease + 1), "named like a waiter of another lease", on_lease.clone()).await.unwrap();
    raw.put(format!("{name}/{lease:x}"), "named like a waiter, no lease", None).await.unwrap();

    let m = client.mutex(name.clone(), 10).unwrap();
    let g = m.try_lock().await.expect("try-lock ignores keys that are no waiters");
    // Exclusion within the name still holds (control).
    let other = client.mutex(name.clone(), 10).unwrap();
    assert_eq!(other.try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert_eq!(other.lock_with(within(300)).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    // A waiter with a key that is no waiter's between it and the holder is handed the lock.
    raw.put(format!("{name}/between"), "", None).await.unwrap();
    let waiting = tokio::spawn(async move { other.lock_with(within(10_000)).await.map(|g| (other, g)) });
    tokio::time::sleep(Duration::from_millis(200)).await;
    raw.put(format!("{name}/after"), "", None).await.unwrap();
    g.release().await.unwrap();
    let (other, g2) = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap().expect("handed over");
    g2.release().await.unwrap();
    drop(other);
    // A blocking acquire with nobody holding is immediate.
    m.lock_with(within(2_000)).await.unwrap().release().await.unwrap();
    // The keys that are no waiters were left alone; no waiter's key is left.
    let mut left = keys_under(&eps, &format!("{name}/")).await;
    left.sort();
    let mut expected: Vec<String> = ["after", "between", "config", "last"].iter().map(|k| format!("{name}/{k}")).collect();
    expected.extend([format!("{name}/{:x}", lease + 1), format!("{name}/{lease:x}")]);
    expected.sort();
    assert_eq!(left, expected);
    raw.delete(format!("{name}/"), Some(etcd_client::DeleteOptions::new().with_prefix())).await.unwrap();
    raw.lease_revoke(lease).await.unwrap();
    client.close().await;
}

// covers: LOCK-FOREIGN-003
#[tokio::test]
async fn a_holder_key_named_from_etcdctl_output_holds_the_lock() {
    // `etcdctl lease grant` prints a lease ID zero-padded to 16 digits; an operator who puts a
    // holder's key named from that output holds the lock as `etcdctl lock` would. One lease ID
    // in 8 starts with a zero digit on a fresh etcd (its leading bits are the member ID's).
    let eps = shared().endpoints();
    let mut raw = raw(&eps).await;
    let client = client().await;
    let name = prefix("padded") + "jobs";
    // A lease ID of ours with exactly four leading zero digits (etcd's own start with the member
    // ID's bits): 45 bits, the top one set. (The low 48 bits of the time alone have their top
    // four bits all zero for ~5 hours in every ~78: the test then failed, at 15:15 UTC on
    // 2026-12-07 among others.)
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let id = (nanos as i64 & 0x0fff_ffff_ffff) | (1 << 44) | 1;
    let lease = raw.lease_grant(60, Some(etcd_client::LeaseGrantOptions::new().with_id(id))).await.unwrap().id();
    assert_eq!(lease, id);
    let holder = format!("{name}/{lease:016x}");
    assert!(holder.ends_with(&format!("/0000{lease:x}")));
    raw.put(holder.clone(), "", Some(PutOptions::new().with_lease(lease))).await.unwrap();
    let m = client.mutex(name.clone(), 10).unwrap();
    assert_eq!(m.try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    let waiting = tokio::spawn(async move { m.lock_with(within(10_000)).await.map(|g| (m, g)) });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the waiter must wait for the padded holder");
    raw.lease_revoke(lease).await.unwrap();
    let (_m, g) = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap().expect("handed over");
    g.release().await.unwrap();
    assert!(keys_under(&eps, &format!("{name}/")).await.is_empty());
    client.close().await;
}

// covers: LOCK-NESTED-001
#[tokio::test]
async fn a_lock_and_a_lock_named_under_it_are_independent() {
    let eps = shared().endpoints();
    let (c1, c2) = (client().await, client().await);
    let name = prefix("nested") + "jobs";
    let inner = c1.mutex(format!("{name}/a"), 10).unwrap().lock().await.unwrap();
    let outer = c2.mutex(name.clone(), 10).unwrap().try_lock().await.expect("N is free while N/a is held");
    // Both are held at once; each still excludes its own contenders (control).
    assert_eq!(c1.mutex(name.clone(), 10).unwrap().try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert_eq!(c2.mutex(format!("{name}/a"), 10).unwrap().try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    // Handoff within N/a while N is held, and the other way round.
    let waiting = {
        let m = c2.mutex(format!("{name}/a"), 10).unwrap();
        tokio::spawn(async move { m.lock_with(within(10_000)).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    inner.release().await.unwrap();
    let inner2 = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap().unwrap();
    assert!(outer.is_held() && inner2.is_held());
    outer.release().await.unwrap();
    inner2.release().await.unwrap();
    assert!(keys_under(&eps, &format!("{name}/")).await.is_empty());
    c1.close().await;
    c2.close().await;
}

// covers: LOCK-FOREIGN-002
#[tokio::test]
async fn a_waiter_finds_its_holder_past_many_keys_that_are_no_waiters() {
    let eps = shared().endpoints();
    let mut raw = raw(&eps).await;
    let (c1, c2) = (client().await, client().await);
    let name = prefix("manyforeign") + "jobs";
    let holder = c1.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    // More than a page of them, newer than the holder, plus a nested lock's key.
    for i in 0..150 {
        raw.put(format!("{name}/x{i}"), "", None).await.unwrap();
    }
    let nested = c1.mutex(format!("{name}/sub"), 10).unwrap().lock().await.unwrap();
    let waiter = c2.mutex(name.clone(), 10).unwrap();
    assert_eq!(waiter.try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert_eq!(waiter.lock_with(within(500)).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    let waiting = tokio::spawn(async move { waiter.lock_with(within(10_000)).await.map(|g| (waiter, g)) });
    tokio::time::sleep(Duration::from_millis(300)).await;
    holder.release().await.unwrap();
    let (waiter, g) = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap().expect("handed over");
    g.release().await.unwrap();
    // With only keys that are no waiters left (older ones now), try-lock reads past all of them.
    waiter.try_lock().await.expect("free").release().await.unwrap();
    nested.release().await.unwrap();
    assert_eq!(keys_under(&eps, &format!("{name}/")).await.len(), 150);
    raw.delete(format!("{name}/"), Some(etcd_client::DeleteOptions::new().with_prefix())).await.unwrap();
    c1.close().await;
    c2.close().await;
}

// covers: LOCK-HERD-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_waiters_on_one_name_are_served_in_token_order() {
    let eps = shared().endpoints();
    let clients = vec![client().await, client().await, client().await, client().await];
    let name = prefix("herd") + "lock";
    let holder = clients[0].mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let served = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..200 {
        let (m, served) = (clients[i % clients.len()].mutex(name.clone(), 10).unwrap(), served.clone());
        tasks.push(tokio::spawn(async move {
            let g = m.lock_with(within(60_000)).await?;
            served.lock().unwrap().push(g.fencing_token());
            g.release().await
        }));
    }
    // Every waiter is queued before the holder lets go.
    let all_queued = eventually(Duration::from_secs(20), || {
        let (eps, name) = (eps.clone(), name.clone());
        async move { keys_under(&eps, &format!("{name}/")).await.len() == 201 }
    });
    assert!(all_queued.await, "200 waiters queued");
    holder.release().await.unwrap();
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t).await.expect("served in time").unwrap().unwrap();
    }
    let served = served.lock().unwrap().clone();
    assert_eq!(served.len(), 200);
    assert!(served.windows(2).all(|w| w[0] < w[1]), "served in token order: {served:?}");
    assert!(keys_under(&eps, &format!("{name}/")).await.is_empty());
    for c in clients {
        c.close().await;
    }
}

// covers: LOCK-GHOST-001
#[tokio::test]
async fn an_enqueue_that_lands_after_its_acquire_was_dropped_leaves_no_key() {
    let eps = shared().endpoints();
    let proxy = proxy::Proxy::start(shared().members[0].client_port);
    let opts = etcdlock::ClientOptions {
        request_timeout: Duration::from_secs(2),
        idle_lease_timeout: Duration::from_secs(600),
        ..Default::default()
    };
    let client = etcdlock::Client::connect([proxy.endpoint()], opts).await.unwrap();
    let name = prefix("ghost") + "job";
    // Another lock of the client's on the same TTL keeps the shared lease in use throughout.
    let other = client.mutex(format!("{name}-other"), 10).unwrap().lock().await.unwrap();
    let lease = other.lease_id();
    let key = format!("{name}/{lease:x}");
    // The acquire is dropped while its enqueue is in flight (etcd applied it; the reply is held).
    proxy.set(proxy::Mode::HoldReplies);
    let m = client.mutex(name.clone(), 10).unwrap();
    assert!(tokio::time::timeout(Duration::from_millis(300), m.lock()).await.is_err());
    proxy.set(proxy::Mode::Pass);
    let gone = |key: String| {
        let eps = eps.clone();
        move || {
            let (eps, key) = (eps.clone(), key.clone());
            async move { keys_under(&eps, &key).await.is_empty() }
        }
    };
    assert!(eventually(Duration::from_secs(10), gone(key.clone())).await, "cleaned up");
    // A copy of that enqueue held in the network arrives late, after every delete: etcd cannot
    // tell it from the original.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut raw = raw(&eps).await;
    let late = etcd_client::Txn::new()
        .when([etcd_client::Compare::create_revision(key.clone(), etcd_client::CompareOp::Equal, 0)])
        .and_then([etcd_client::TxnOp::put(key.clone(), "", Some(PutOptions::new().with_lease(lease)))]);
    assert!(raw.txn(late).await.unwrap().succeeded(), "the late put lands while the lease lives");
    // The lease was retired: once its last lock is released it is revoked, and the ghost goes.
    other.release().await.unwrap();
    assert!(eventually(Duration::from_secs(5), gone(key.clone())).await, "the ghost key outlived its lease's last lock");
    assert!(!lease_ids(&eps).await.contains(&lease));
    // The client's locks go on, on a new lease.
    let g = m.lock_with(within(2_000)).await.unwrap();
    assert_ne!(g.lease_id(), lease);
    g.release().await.unwrap();
    client.close().await;
}
