//! The lease a client's locks of one TTL share: reused, replaced, and never left behind.
use crate::common::*;
use etcdlock::{ClientOptions, ErrorKind, LockOptions};
use std::time::Duration;

async fn client_idle_after(idle: Duration) -> etcdlock::Client {
    let opts = ClientOptions { idle_lease_timeout: idle, ..Default::default() };
    etcdlock::Client::connect(shared().endpoints(), opts).await.unwrap()
}

async fn lease_exists(id: i64) -> bool {
    lease_ids(&shared().endpoints()).await.contains(&id)
}

// covers: LOCK-SESSION-001
#[tokio::test]
async fn locks_of_one_ttl_share_one_lease_across_handles_and_cycles() {
    let client = client().await;
    let p = prefix("share");
    let a = client.mutex(format!("{p}a"), 7).unwrap().lock().await.unwrap();
    let b = client.mutex(format!("{p}b"), 7).unwrap().lock().await.unwrap();
    let c = client.mutex(format!("{p}c"), 9).unwrap().lock().await.unwrap();
    assert_eq!(a.lease_id(), b.lease_id());
    assert_ne!(a.lease_id(), c.lease_id());
    let shared_id = a.lease_id();
    for g in [a, b, c] {
        g.release().await.unwrap();
    }
    // A new handle, after release: still the same lease, still alive on the server.
    for _ in 0..3 {
        let g = client.mutex(format!("{p}a"), 7).unwrap().lock().await.unwrap();
        assert_eq!(g.lease_id(), shared_id);
        g.release().await.unwrap();
    }
    assert!(lease_exists(shared_id).await);
    client.close().await;
    assert!(!lease_exists(shared_id).await, "close() revokes the shared lease");
}

// covers: LOCK-SESSION-002
#[tokio::test]
async fn an_unused_shared_lease_is_revoked_after_the_idle_timeout_but_not_while_held() {
    let client = client_idle_after(Duration::from_millis(600)).await;
    let name = prefix("idle") + "lock";
    let m = client.mutex(name.clone(), 5).unwrap();
    let g = m.lock().await.unwrap();
    let id = g.lease_id();
    // Held for well over the idle timeout: kept.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(g.is_held());
    assert!(lease_exists(id).await);
    g.release().await.unwrap();
    assert!(eventually(Duration::from_secs(5), || lease_exists_not(id)).await, "idle lease not revoked");
    // The next acquire grants a new one.
    let g = m.lock().await.unwrap();
    assert_ne!(g.lease_id(), id);
    g.release().await.unwrap();
    client.close().await;
}

async fn lease_exists_not(id: i64) -> bool {
    !lease_exists(id).await
}

// covers: LOCK-SESSION-003
#[tokio::test]
async fn a_shared_lease_revoked_behind_our_back_is_replaced_on_the_next_acquire() {
    // TTL 30: the next keepalive is 10 s away, so nothing here has noticed the revoke.
    let client = client().await;
    let name = prefix("stale") + "lock";
    let m = client.mutex(name.clone(), 30).unwrap();
    let old = m.lock().await.unwrap();
    let old_id = old.lease_id();
    old.release().await.unwrap();
    raw(&shared().endpoints()).await.lease_revoke(old_id).await.unwrap();
    let g = m.lock().await.unwrap();
    assert_ne!(g.lease_id(), old_id);
    assert!(g.is_held());
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await.len(), 1);
    g.release().await.unwrap();
    client.close().await;
}

// covers: LOCK-SESSION-004
#[tokio::test]
async fn a_failed_acquire_revokes_a_lease_nothing_else_uses() {
    // A private server, so the lease list is ours alone.
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let holder = client_for(&eps).await;
    let waiter = client_for(&eps).await;
    let g = holder.mutex("job", 10).unwrap().lock().await.unwrap();
    let e = waiter
        .mutex("job", 10)
        .unwrap()
        .lock_with(LockOptions { timeout: Some(Duration::from_millis(200)), cancel: None, ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LockTimeout);
    // The waiter's lease, granted for this acquire, went with it.
    assert_eq!(lease_ids(&eps).await, vec![g.lease_id()]);
    assert_eq!(keys_under(&eps, "job/").await.len(), 1);
    g.release().await.unwrap();
    holder.close().await;
    waiter.close().await;
}

// covers: LOCK-SESSION-005
#[tokio::test]
async fn dropping_the_client_without_close_revokes_its_shared_leases() {
    let client = client().await;
    let name = prefix("dropclient") + "lock";
    let m = client.mutex(name, 10).unwrap();
    let g = m.lock().await.unwrap();
    let id = g.lease_id();
    g.release().await.unwrap();
    drop((g, m, client));
    assert!(eventually(Duration::from_secs(5), || lease_exists_not(id)).await);
}

// covers: LOCK-TRY-002
#[tokio::test]
async fn failed_tries_reuse_one_lease_instead_of_granting_and_revoking_each_time() {
    // A private server, so the lease list is ours alone.
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let holder = client_for(&eps).await;
    let trier = client_for(&eps).await;
    let g = holder.mutex("job", 10).unwrap().lock().await.unwrap();
    let m = trier.mutex("job", 10).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..5 {
        assert_eq!(m.try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
        seen.extend(lease_ids(&eps).await.into_iter().filter(|id| *id != g.lease_id()));
    }
    // One lease for all five tries, kept for the next; nothing written under the name.
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(keys_under(&eps, "job/").await.len(), 1);
    trier.close().await;
    assert_eq!(lease_ids(&eps).await, vec![g.lease_id()]);
    g.release().await.unwrap();
    holder.close().await;
}
