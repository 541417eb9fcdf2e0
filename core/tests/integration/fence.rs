//! Fences (`LockGuard::fence`, `Client::check_fence`) against a real etcd.

use crate::common::*;
use etcdlock::Fence;

// covers: FENCE-CHECK-001
#[tokio::test]
async fn check_fence_is_true_while_held_and_false_after_release_expiry_or_on_another_cluster() {
    let c = client().await;
    let name = prefix("fence-check") + "acct";
    let lock = c.mutex(name.clone(), 10).unwrap();
    let first = lock.lock().await.unwrap();
    let fence = first.fence().await.unwrap();
    assert_eq!((fence.token, fence.name.as_slice()), (first.fencing_token(), name.as_bytes()));
    let passed: Fence = fence.to_string().parse().unwrap();
    assert!(c.check_fence(&passed).await.unwrap());
    // A waiter's key is not a holder's.
    let other = client().await;
    let waiting = tokio::spawn({
        let lock = other.mutex(name.clone(), 10).unwrap();
        async move { lock.lock().await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    first.release().await.unwrap();
    assert!(!c.check_fence(&fence).await.unwrap(), "a released acquisition still checked as holding");
    let second = waiting.await.unwrap().unwrap();
    let fence2 = second.fence().await.unwrap();
    assert!(fence2.token > fence.token && c.check_fence(&fence2).await.unwrap());
    // Another cluster's fence never checks.
    let alien = Fence { cluster: fence2.cluster ^ 1, ..fence2.clone() };
    assert!(!c.check_fence(&alien).await.unwrap());
    // Expiry: the holder's lease revoked.
    let mut raw = raw(&shared().endpoints()).await;
    raw.lease_revoke(second.lease_id()).await.unwrap();
    assert!(!c.check_fence(&fence2).await.unwrap(), "an expired acquisition still checked as holding");
    for cl in [c, other] {
        cl.close().await;
    }
}

// covers: FENCE-TASK-001
#[tokio::test]
async fn a_claimed_tasks_fence_checks_while_claimed_and_a_later_claim_has_a_larger_token() {
    use etcdlock::{ClaimOptions, FenceKind, QueueOptions, TaskOptions};
    let c = client().await;
    let name = prefix("fence-task") + "q";
    let q = c.queue(name.clone(), QueueOptions { ttl_secs: 10, max_attempts: 5, ..Default::default() }).unwrap();
    q.put(b"job", TaskOptions { id: Some("job".into()), ..Default::default() }).await.unwrap();
    let now = || ClaimOptions { timeout: Some(std::time::Duration::ZERO), ..Default::default() };
    let first = q.claim(now()).await.unwrap();
    let fence = first.fence().await.unwrap();
    assert_eq!(fence.kind, FenceKind::Queue);
    assert_eq!(fence.token, first.fencing_token());
    assert!(fence.name.starts_with(format!("{name}/claim/").as_bytes()), "{:?}", String::from_utf8_lossy(&fence.name));
    assert!(c.check_fence(&fence.to_string().parse().unwrap()).await.unwrap());
    first.nack().await.unwrap();
    assert!(!c.check_fence(&fence).await.unwrap(), "a nacked claim still checked as holding");
    let second = q.claim(now()).await.unwrap();
    let fence2 = second.fence().await.unwrap();
    assert_eq!(fence2.name, fence.name, "a claim of the same item has another claim lock");
    assert!(fence2.token > fence.token && c.check_fence(&fence2).await.unwrap());
    second.ack().await.unwrap();
    assert!(!c.check_fence(&fence2).await.unwrap(), "an acked claim still checked as holding");
    c.close().await;
}

// covers: FENCE-CHECK-001
#[tokio::test]
async fn a_leaderships_fence_checks_while_leading_and_not_after_resigning() {
    let c = client().await;
    let name = prefix("fence-lead") + "svc";
    let election = c.election(name.clone(), 10).unwrap();
    let term = election.campaign(b"node-1").await.unwrap();
    let fence = term.fence().await.unwrap();
    assert_eq!((fence.token, fence.name.as_slice()), (term.fencing_token(), name.as_bytes()));
    assert!(c.check_fence(&fence).await.unwrap());
    term.resign().await.unwrap();
    assert!(!c.check_fence(&fence).await.unwrap(), "a resigned term's fence still checked");
    c.close().await;
}
