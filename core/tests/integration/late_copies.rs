//! Requests that arrive late: a copy of a request the client gave up on, or sent to a second
//! member when the first stayed silent, applied after the client moved on. A member's client
//! link delayed by 3 s (the proxy passes every byte on 3 s after it was sent) makes one: the
//! channel sends the request to the other endpoint after its 1 s stall, that copy is answered,
//! and the first is applied 2 s later.

use crate::common::*;
use std::time::Duration;

const LATE: Duration = Duration::from_secs(3);

// covers: LOCK-LATE-COPY-001
#[tokio::test]
async fn a_late_copy_of_an_enqueue_never_brings_a_released_key_back() {
    let etcd = Etcd::start(1);
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let client = client_through(&proxy, &etcd.endpoints()[0]).await;
    let name = prefix("late-enqueue") + "lock";
    let m = client.mutex(name.clone(), 10).unwrap();
    // The session's lease is granted before the link slows down (a grant is never sent twice).
    m.lock().await.unwrap().release().await.unwrap();
    proxy.delay(LATE);
    let g = m.lock().await.unwrap();
    g.release().await.unwrap();
    // The enqueue's first copy lands now, into an empty queue.
    tokio::time::sleep(LATE + Duration::from_secs(1)).await;
    let other = client_for(&etcd.endpoints()).await;
    let gone = eventually(Duration::from_secs(3), || async { keys_under(&etcd.endpoints(), &format!("{name}/")).await.is_empty() }).await;
    assert!(gone, "a late enqueue put the released key back: {:?}", keys_under(&etcd.endpoints(), &format!("{name}/")).await);
    other.mutex(name.clone(), 10).unwrap().try_lock().await.expect("the lock is free").release().await.unwrap();
    proxy.set(proxy::Mode::Pass);
    client.close().await;
    other.close().await;
}

// covers: ELECT-LATE-PROCLAIM-001
#[tokio::test]
async fn a_late_copy_of_a_proclamation_never_takes_the_leader_back() {
    let etcd = Etcd::start(1);
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let client = client_through(&proxy, &etcd.endpoints()[0]).await;
    let name = prefix("late-proclaim") + "svc";
    let leader = client.election(name.clone(), 10).unwrap().campaign("a").await.unwrap();
    proxy.delay(LATE);
    leader.proclaim("v1").await.unwrap();
    leader.proclaim("v2").await.unwrap();
    // The first copy of "v1" lands now.
    tokio::time::sleep(LATE + Duration::from_secs(1)).await;
    let other = client_for(&etcd.endpoints()).await;
    let seen = other.election(name.clone(), 10).unwrap().leader().await.unwrap().unwrap();
    assert_eq!(String::from_utf8_lossy(&seen.value), "v2", "a late proclamation took the leader's value back");
    proxy.set(proxy::Mode::Pass);
    leader.resign().await.unwrap();
    client.close().await;
    other.close().await;
}

// covers: REG-LATE-UPDATE-001
#[tokio::test]
async fn a_late_copy_of_an_update_never_takes_an_instance_back() {
    let etcd = Etcd::start(1);
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let client = client_through(&proxy, &etcd.endpoints()[0]).await;
    let svc = prefix("late-update") + "api";
    let reg = client.register(&svc, "n1", "v0", 10).await.unwrap();
    proxy.delay(LATE);
    reg.update("v1").await.unwrap();
    reg.update("v2").await.unwrap();
    tokio::time::sleep(LATE + Duration::from_secs(1)).await;
    let other = client_for(&etcd.endpoints()).await;
    let set = other.instances(&svc).await.unwrap();
    assert_eq!(set.instances.iter().map(|i| String::from_utf8_lossy(&i.value).into_owned()).collect::<Vec<_>>(), ["v2"], "a late update took the value back");
    proxy.set(proxy::Mode::Pass);
    reg.close().await.unwrap();
    client.close().await;
    other.close().await;
}
