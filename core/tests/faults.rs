//! Faults on a real 3-member cluster, and interop with etcd's own lock.
mod common;
use common::*;
use std::time::Duration;

// covers: FAULT-LEADER-001
#[tokio::test]
async fn leader_kill_does_not_lose_a_held_lock() {
    let mut etcd = Etcd::start(3);
    let eps = etcd.endpoints();
    let client = client_for(&eps).await;
    // A TTL comfortably above etcd's election time (1 s election timeout by default): with a
    // 2 s TTL an election can legitimately outlast the lease's local deadline.
    let m = client.mutex("failover", 5).unwrap();
    let g = m.lock().await.unwrap();
    let leader = etcd.leader().await;
    etcd.kill(leader);
    // Well past the TTL: the keepalive must have moved to a surviving member.
    for _ in 0..32 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(g.is_held(), "lost: {:?}", g.lost_reason());
    }
    g.put(b"failover-data", b"ok").await.expect("guarded write after failover");
    // A second client still queues behind us.
    let other = client_for(&eps).await;
    let om = other.mutex("failover", 5).unwrap();
    let e = om.try_lock().await.unwrap_err();
    assert_eq!(e.kind(), etcdlock::ErrorKind::WouldBlock);
    g.release().await.unwrap();
    om.try_lock().await.unwrap().release().await.unwrap();
    etcd.restart(leader);
    client.close().await;
    other.close().await;
}

// covers: LOCK-INTEROP-001
#[tokio::test]
async fn etcdctl_lock_and_our_mutex_share_one_queue() {
    let client = client().await;
    let name = prefix("interop") + "lock";
    // etcdctl holds the lock while its command runs.
    let mut ctl = etcdctl_cmd(&shared().endpoints()[0], &["lock", &name, "sleep", "1.5"]).spawn().unwrap();
    assert!(eventually(Duration::from_secs(5), || {
        let n = name.clone();
        async move { keys_under(&shared().endpoints(), &format!("{n}/")).await.len() == 1 }
    }).await);
    let m = client.mutex(name.clone(), 10).unwrap();
    assert_eq!(m.try_lock().await.unwrap_err().kind(), etcdlock::ErrorKind::WouldBlock);
    let start = std::time::Instant::now();
    let g = m.lock().await.unwrap();
    assert!(start.elapsed() > Duration::from_millis(500), "acquired while etcdctl held it");
    assert!(ctl.wait().unwrap().success());

    // And the other way round: etcdctl waits behind us.
    let mut ctl = etcdctl_cmd(&shared().endpoints()[0], &["lock", &name, "echo", "got-it"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(ctl.try_wait().unwrap().is_none(), "etcdctl got the lock while we held it");
    g.release().await.unwrap();
    let out = tokio::task::spawn_blocking(move || ctl.wait_with_output().unwrap()).await.unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("got-it"));
    client.close().await;
}
