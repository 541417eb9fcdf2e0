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

// covers: LOCK-CLEANUP-FENCED-001
#[tokio::test]
async fn a_late_cleanup_delete_never_removes_the_next_key_of_the_same_name() {
    // A timed-out acquire's cleanup delete goes over the delayed link; its copy through the
    // other endpoint is answered, and the acquire returns. The next acquisition of the name on
    // the same lease uses the same key name; the delete's first copy lands after it.
    let etcd = Etcd::start(1);
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let client = client_through(&proxy, &etcd.endpoints()[0]).await;
    let holder = client_for(&etcd.endpoints()).await;
    let name = prefix("late-cleanup") + "lock";
    // Another lock on the same shared lease: the cleanup then deletes the key, not the lease.
    let other = client.mutex(prefix("late-cleanup") + "other", 10).unwrap().lock().await.unwrap();
    let held = holder.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let m = client.mutex(name.clone(), 10).unwrap();
    let opts = etcdlock::LockOptions { timeout: Some(Duration::from_millis(1500)), ..Default::default() };
    let started = std::time::Instant::now();
    let waiting = tokio::spawn(async move { m.lock_with(opts).await.map(drop) });
    let eps = etcd.endpoints();
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == 2 }).await);
    // The link slows down once the waiter's early re-reads are done (a read stalled on it would
    // move the client's requests to the other endpoint before the cleanup), before its timeout.
    tokio::time::sleep(Duration::from_millis(1200).saturating_sub(started.elapsed())).await;
    proxy.delay(LATE);
    let timed_out = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap();
    assert_eq!(timed_out.unwrap_err().kind(), etcdlock::ErrorKind::LockTimeout);
    held.release().await.unwrap();
    let again = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    // The cleanup delete's first copy lands now.
    tokio::time::sleep(LATE + Duration::from_secs(1)).await;
    assert!(again.is_held(), "lost: {:?}", again.lost_reason());
    assert_eq!(keys_under(&eps, &format!("{name}/")).await, vec![String::from_utf8_lossy(again.key()).into_owned()]);
    proxy.set(proxy::Mode::Pass);
    again.release().await.unwrap();
    other.release().await.unwrap();
    client.close().await;
    holder.close().await;
}

// covers: SEM-RETRY-TOUCH-001
#[tokio::test]
async fn a_semaphore_holder_found_on_the_retry_path_wakes_the_waiter_behind_it() {
    // Permits 2, both held. B's enqueue is applied, its reply held at the proxy; W queues behind
    // B (watching B's key); one holder releases; B's copy through the other endpoint finds its
    // key there and holding. W must then see the second holder's release at once.
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let b = client_through(&proxy, &eps[0]).await;
    let (a, w) = (client_for(&eps).await, client_for(&eps).await);
    let name = prefix("retry-touch") + "sem";
    // B's shared lease for TTL 10, granted before its replies are held.
    b.mutex(prefix("retry-touch") + "warm", 10).unwrap().lock().await.unwrap().release().await.unwrap();
    let sa = a.semaphore(name.clone(), 2, 10).unwrap();
    let (a1, a2) = (sa.acquire().await.unwrap(), sa.acquire().await.unwrap());
    proxy.set(proxy::Mode::HoldReplies);
    let sb = b.semaphore(name.clone(), 2, 10).unwrap();
    let bw = tokio::spawn(async move { sb.acquire().await });
    let count = |n: usize| {
        let (eps, name) = (eps.clone(), name.clone());
        async move { eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == n }).await }
    };
    assert!(count(3).await, "B's key never landed");
    let sw = w.semaphore(name.clone(), 2, 10).unwrap();
    let ww = tokio::spawn(async move { sw.acquire().await });
    assert!(count(4).await, "W never queued");
    // After W's early re-reads (the first 110 ms of its watch, mutex/wait.rs): from now on only
    // a change of B's key makes it look again.
    tokio::time::sleep(Duration::from_millis(400)).await;
    a1.release().await.unwrap();
    let bg = tokio::time::timeout(Duration::from_secs(10), bw).await.expect("B within 10 s").unwrap().unwrap();
    // Now B holds, and W is the first waiter: the other holder's release frees its permit.
    a2.release().await.unwrap();
    let wg = tokio::time::timeout(Duration::from_secs(3), ww).await.expect("W got the free permit within 3 s").unwrap().unwrap();
    proxy.set(proxy::Mode::Pass);
    wg.release().await.unwrap();
    bg.release().await.unwrap();
    for c in [a, b, w] {
        c.close().await;
    }
}

/// The tool kit's peer-link proxies (`Etcd::start_peer_proxied`): with a follower's raft
/// messages 1.5 s late, a put through that follower (which forwards the proposal to the leader)
/// takes at least that long; with the link passing again, a put through it is quick.
#[tokio::test]
async fn a_delayed_peer_link_delays_a_followers_proposals() {
    let etcd = Etcd::start_peer_proxied(3);
    let leader = etcd.leader().await;
    let f = (leader + 1) % 3;
    let mut via_f = raw(&[etcd.members[f].endpoint()]).await;
    let key = prefix("peer-delay") + "k";
    let timed_put = |c: &mut etcd_client::Client| {
        let (mut c, key) = (c.clone(), key.clone());
        async move {
            let at = std::time::Instant::now();
            tokio::time::timeout(Duration::from_secs(15), c.put(key, "x", None)).await.expect("a put hung").unwrap();
            at.elapsed()
        }
    };
    timed_put(&mut via_f).await;
    etcd.peer_proxy(f).delay(Duration::from_millis(1500));
    let slow = timed_put(&mut via_f).await;
    etcd.peer_proxy(f).set(proxy::Mode::Pass);
    tokio::time::sleep(Duration::from_millis(1600)).await; // what was on its way arrives
    let fast = timed_put(&mut via_f).await;
    eprintln!("peer link delay self-test: a put through the follower took {slow:?} delayed, {fast:?} after");
    assert!(slow >= Duration::from_millis(1500), "the delay did not hold the follower's proposal ({slow:?})");
    assert!(fast < Duration::from_secs(1), "a put through the follower still took {fast:?} after the delay ended");
}
