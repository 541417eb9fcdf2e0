//! Leases and keepalive against a real etcd.
use crate::common::*;
use etcdlock::{ErrorKind, LostReason};
use std::time::Duration;

// covers: LEASE-KEEP-001, LEASE-REVOKE-001
#[tokio::test]
async fn keepalive_keeps_a_two_second_lease_alive_for_ten_seconds() {
    let client = client().await;
    let key = prefix("keepalive") + "k";
    let lease = client.lease(2).await.unwrap();
    assert!(lease.ttl() >= 2);
    client.put(key.as_bytes(), b"v", Some(&lease)).await.unwrap();
    for _ in 0..22 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(lease.is_alive(), "lost: {:?}", lease.lost_reason());
    }
    assert!(client.get(key.as_bytes()).await.unwrap().is_some(), "key expired although kept alive");
    assert!(lease.remaining() > Duration::ZERO);
    lease.revoke().await.unwrap();
    assert_eq!(lease.lost_reason(), Some(LostReason::Revoked));
    assert!(!lease.is_alive());
    assert!(client.get(key.as_bytes()).await.unwrap().is_none(), "revoke deletes attached keys");
    lease.revoke().await.unwrap(); // idempotent
    assert_eq!(client.put(key.as_bytes(), b"v", Some(&lease)).await.unwrap_err().kind(), ErrorKind::LockLost);
    client.close().await;
}

// covers: LEASE-TTL-001
#[tokio::test]
async fn server_raises_small_ttls_and_we_report_what_it_granted() {
    // etcd's minimum TTL is ceil(1.5 * election timeout) = 2 s with default settings.
    let client = client().await;
    let lease = client.lease(1).await.unwrap();
    assert_eq!(lease.ttl(), 2);
    client.close().await;
}

// covers: LEASE-LOST-001
#[tokio::test]
async fn external_revoke_fires_lost_once_and_never_comes_back() {
    let client = client().await;
    let lease = client.lease(3).await.unwrap();
    let lost = lease.lost();
    let out = etcdctl_cmd(&shared().endpoints()[0], &["lease", "revoke", &format!("{:x}", lease.id())]).output().unwrap();
    assert!(out.status.success());
    // The next keepalive (every TTL/3 = 1 s) is answered with TTL 0.
    let reason = tokio::time::timeout(Duration::from_secs(5), lost.wait()).await.unwrap();
    assert_eq!(reason, LostReason::Expired);
    for _ in 0..5 {
        assert!(!lease.is_alive());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(lease.lost_reason(), Some(LostReason::Expired));
    client.close().await;
}

// covers: CONN-CLOSED-001
#[tokio::test]
async fn close_revokes_every_lease_and_reports_closed() {
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let client = client_for(&eps).await;
    let a = client.lease(30).await.unwrap();
    let b = client.lease(30).await.unwrap();
    assert_eq!(lease_ids(&eps).await.len(), 2);
    client.close().await;
    client.close().await; // idempotent
    assert_eq!(a.lost_reason(), Some(LostReason::Closed));
    assert_eq!(b.lost().wait().await, LostReason::Closed);
    assert!(lease_ids(&eps).await.is_empty());
    assert_eq!(client.lease(5).await.unwrap_err().kind(), ErrorKind::Closed);
}

#[tokio::test]
async fn dropping_the_last_handle_revokes() {
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let client = client_for(&eps).await;
    let lease = client.lease(30).await.unwrap();
    let copy = lease.clone();
    drop(lease);
    assert_eq!(lease_ids(&eps).await.len(), 1, "a clone still holds it");
    drop(copy);
    assert!(eventually(Duration::from_secs(5), || async { lease_ids(&eps).await.is_empty() }).await);
    client.close().await;
}

// covers: LEASE-DEADLINE-001
#[tokio::test]
async fn local_deadline_passes_when_the_server_is_unreachable() {
    // Freeze the only member: keepalives go unanswered, so the lease must be reported lost by
    // the local deadline (at most TTL after the last acknowledged keepalive was sent).
    let etcd = Etcd::start(1);
    let client = client_for(&etcd.endpoints()).await;
    let lease = client.lease(2).await.unwrap();
    let started = std::time::Instant::now();
    etcd.signal(0, libc::SIGSTOP);
    let reason = tokio::time::timeout(Duration::from_secs(5), lease.lost().wait()).await;
    etcd.signal(0, libc::SIGCONT);
    assert_eq!(reason.unwrap(), LostReason::Expired);
    assert!(started.elapsed() <= Duration::from_secs(2), "reported after {:?}", started.elapsed());
    assert!(!lease.is_alive());
    client.close().await;
}
