//! The shared runtime: lazily started, refuses blocking calls from async contexts, shuts down.
use crate::common::*;
use etcdlock::{runtime, ErrorKind};

// covers: RT-ONE-001, RT-WRONGCTX-001, RT-EXIT-002
#[test]
fn blocking_entry_points_refuse_async_threads_and_shutdown_is_restartable() {
    crate::alone!(blocking_entry_points_refuse_async_threads_and_shutdown_is_restartable);
    // Nothing started it yet in this test binary.
    assert!(!runtime::runtime_started());
    let eps = shared().endpoints();
    let client = runtime::block_on(async move { etcdlock::Client::connect(eps, Default::default()).await })
        .unwrap()
        .unwrap();
    assert!(runtime::runtime_started());
    assert_eq!(rt_threads(), runtime::DEFAULT_WORKER_THREADS);
    // More clients, same threads.
    let more: Vec<_> = (0..5)
        .map(|_| {
            let eps = shared().endpoints();
            runtime::block_on(async move { etcdlock::Client::connect(eps, Default::default()).await }).unwrap().unwrap()
        })
        .collect();
    assert_eq!(rt_threads(), runtime::DEFAULT_WORKER_THREADS);
    drop(more);

    // A blocking call from inside the runtime would deadlock: it must error instead.
    let nested = runtime::block_on(async { runtime::block_on(async { 1 }).map_err(|e| e.kind()) }).unwrap();
    assert_eq!(nested, Err(ErrorKind::WrongContext));

    // A lock held at shutdown is released with its lease.
    let c = client.clone();
    let guard = runtime::block_on(async move { c.mutex("rt-shutdown", 30).unwrap().lock().await }).unwrap().unwrap();
    let key = String::from_utf8(guard.key().to_vec()).unwrap();
    std::mem::forget(guard);
    runtime::shutdown(std::time::Duration::from_secs(5)).unwrap();
    assert!(!runtime::runtime_started());
    assert!(client.is_closed());
    let eps = shared().endpoints();
    let left = runtime::block_on(async move { keys_under(&eps, &key).await }).unwrap();
    assert!(left.is_empty(), "shutdown revokes the leases of open clients");

    // A lease dropped just before shutdown (its own revoke is a background task) is revoked
    // too: the shutdown waits for that task instead of dropping it with the runtime.
    for round in 0..10 {
        let eps = shared().endpoints();
        let key = format!("{}/dropped-{round}", prefix("rt-shutdown"));
        let k = key.clone();
        let (client, lease) = runtime::block_on(async move {
            let client = etcdlock::Client::connect(eps, Default::default()).await.unwrap();
            let lease = client.lease(30).await.unwrap();
            client.put(k.as_bytes(), b"", Some(&lease)).await.unwrap();
            (client, lease)
        })
        .unwrap();
        drop(lease);
        runtime::shutdown(std::time::Duration::from_secs(5)).unwrap();
        drop(client);
        let eps = shared().endpoints();
        let left = runtime::block_on(async move { keys_under(&eps, &key).await }).unwrap();
        assert!(left.is_empty(), "round {round}: a lease dropped before shutdown was left alive");
    }
    runtime::shutdown(std::time::Duration::from_secs(5)).unwrap();
}

/// Threads of this process named by the library runtime.
fn rt_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
        .filter(|n| n.starts_with("etcdlock-rt"))
        .count()
}

// covers: LEASE-SUSPEND-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_is_reported_lost_promptly_after_a_suspend_longer_than_its_ttl() {
    crate::alone!(a_lease_is_reported_lost_promptly_after_a_suspend_longer_than_its_ttl);
    // A suspend stops CLOCK_MONOTONIC (every tokio timer) but not CLOCK_BOOTTIME, which the
    // lease's deadline is on: the lost signal must come when the machine wakes, not a TTL later
    // (by when the next keepalive would have renewed a lease etcd may have expired already).
    let client = client().await;
    let lease = client.lease(10).await.unwrap();
    let lost = lease.lost();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    etcdlock::runtime::suspend_for_tests(std::time::Duration::from_secs(20));
    let woke = std::time::Instant::now();
    let reason = tokio::time::timeout(std::time::Duration::from_secs(2), lost.wait()).await;
    assert_eq!(reason.ok(), Some(etcdlock::LostReason::Expired), "not reported lost within 2 s of the wake");
    eprintln!("lost {:?} after the simulated wake", woke.elapsed());
    client.close().await;
}

// covers: LOCK-REVOKED-EXCL-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_whose_lease_the_session_revokes_is_no_longer_exclusive() {
    crate::alone!(a_lock_whose_lease_the_session_revokes_is_no_longer_exclusive);
    // A lease only locally expired (past its local deadline, before the floor etcd may expire
    // it at: made here by a simulated suspend of 9.5 s with TTL 10) is replaced, and revoked,
    // by the session when the client takes another lock. The guard on it may then have a
    // successor at once: it must not report any time left.
    let client = client().await;
    let first = client.mutex(prefix("revoked-excl") + "a", 10).unwrap().lock().await.unwrap();
    etcdlock::runtime::suspend_for_tests(std::time::Duration::from_millis(9_500));
    assert_eq!(first.lost_reason(), Some(etcdlock::LostReason::Expired));
    assert!(first.exclusive_until().is_some(), "before the revoke, exclusive until the floor");
    let second = client.mutex(prefix("revoked-excl") + "b", 10).unwrap().lock().await.unwrap();
    assert_ne!(second.lease_id(), first.lease_id(), "the session did not replace the lease");
    let gone = eventually(std::time::Duration::from_secs(2), || async { first.exclusive_until().is_none() }).await;
    assert!(gone, "still exclusive until {:?} after its lease was revoked", first.exclusive_until());
    assert!(first.stop_by().is_none());
    second.release().await.unwrap();
    client.close().await;
}
