//! `health()` on every lock-like handle (issue #59): ok while held, not ok once the lost signal
//! fired (never later), released after the holder ended it.

use crate::common::*;
use etcdlock::{ClaimOptions, HoldState, LostReason, OnceOptions, PoolOptions, QueueOptions, TaskOptions};
use std::time::Duration;

/// Asserts a view of a live hold: ok, held, named, with time left within the TTL.
fn assert_held(h: &etcdlock::Health, name: &str, token: i64, ttl: u64) {
    assert!(h.is_ok(), "{h:?}");
    assert_eq!((h.state, h.name.as_str(), h.fencing_token), (HoldState::Held, name, token));
    let left = h.exclusive_for().expect("held: exclusive for a while");
    assert!(left > Duration::ZERO && left <= Duration::from_secs(ttl), "{left:?}");
}

fn assert_released(h: &etcdlock::Health) {
    assert!(!h.is_ok(), "{h:?}");
    assert_eq!((h.state, h.exclusive_until, h.lost_reason()), (HoldState::Released, None, None));
}

// covers: HEALTH-HANDLE-001
#[tokio::test]
async fn a_mutex_guards_health_flips_no_later_than_its_lost_signal() {
    let client = client().await;
    let name = prefix("health-mutex") + "lock";
    let g = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    assert_held(&g.health(), &name, g.fencing_token(), 10);
    assert_eq!(g.health().lease_id, g.lease_id());
    // Another client (a raw one, as an operator's etcdctl) deletes the key.
    let mut raw = raw(&shared().endpoints()).await;
    raw.delete(g.key(), None).await.unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(5), g.lost().wait()).await.expect("lost within 5 s");
    assert_eq!(reason, LostReason::KeyDeleted);
    // The very moment the signal fired, the view says lost.
    let h = g.health();
    assert!(!h.is_ok(), "{h:?}");
    assert_eq!((h.state, h.exclusive_until), (HoldState::Lost(LostReason::KeyDeleted), None));
    // A release after the loss ends it: released, never ok again.
    g.release().await.unwrap_err();
    assert_released(&g.health());
    client.close().await;
}

// covers: HEALTH-HANDLE-001
#[tokio::test]
async fn a_waiter_on_the_lost_signal_never_reads_a_healthy_view() {
    // Read from inside the task the signal wakes: no window where lost fired and health says ok.
    let client = client().await;
    let name = prefix("health-race") + "lock";
    let g = std::sync::Arc::new(client.mutex(name.clone(), 10).unwrap().lock().await.unwrap());
    let (lost, g2) = (g.lost(), g.clone());
    let seen = tokio::spawn(async move {
        lost.wait().await;
        g2.health()
    });
    client.delete(g.key()).await.unwrap();
    let h = tokio::time::timeout(Duration::from_secs(5), seen).await.expect("lost within 5 s").unwrap();
    assert_eq!((h.state, h.is_ok()), (HoldState::Lost(LostReason::KeyDeleted), false));
    client.close().await;
}

// covers: HEALTH-HANDLE-001
#[tokio::test]
async fn every_handle_reads_held_then_released() {
    let client = client().await;
    let p = prefix("health-kinds");
    let name = |s: &str| format!("{p}{s}");

    let w = client.rwlock(name("rw"), 10).unwrap().write().await.unwrap();
    assert_held(&w.health(), &name("rw"), w.fencing_token(), 10);
    w.release().await.unwrap();
    assert_released(&w.health());
    let r = client.rwlock(name("rw"), 10).unwrap().read().await.unwrap();
    assert_held(&r.health(), &name("rw"), r.fencing_token(), 10);
    r.release().await.unwrap();
    assert_released(&r.health());

    let permit = client.semaphore(name("sem"), 2, 10).unwrap().acquire().await.unwrap();
    assert_held(&permit.health(), &name("sem"), permit.fencing_token(), 10);
    permit.release().await.unwrap();
    assert_released(&permit.health());

    let l = client.election(name("el"), 10).unwrap().campaign("me").await.unwrap();
    assert_held(&l.health(), &name("el"), l.fencing_token(), 10);
    l.resign().await.unwrap();
    assert_released(&l.health());

    let pool = client.pool(name("pool"), PoolOptions::size(2)).unwrap();
    let slots = pool.acquire(1).await.unwrap();
    assert_held(&slots.health(), &name("pool"), slots.fencing_token(), 10);
    slots.release().await.unwrap();
    assert_released(&slots.health());

    let set = client.lock_set([name("a"), name("b")], 10).unwrap().lock().await.unwrap();
    assert_held(&set.health(), &format!("{},{}", name("a"), name("b")), set.fencing_token(), 10);
    set.release().await.unwrap();
    assert_released(&set.health());

    let q = client.queue(name("q"), QueueOptions { ttl_secs: 10, ..Default::default() }).unwrap();
    q.put(b"x", TaskOptions::default()).await.unwrap();
    let task = q.claim(ClaimOptions { timeout: Some(Duration::ZERO), ..Default::default() }).await.unwrap();
    let h = task.health();
    assert!(h.is_ok() && h.name.starts_with(&name("q/claim/")), "{h:?}");
    task.ack().await.unwrap();
    assert_released(&task.health());

    let once = client.once(name("job"), OnceOptions::every(Duration::from_secs(3600))).await.unwrap().expect("first in its period");
    let h = once.health();
    assert!(h.is_ok() && h.name.starts_with(&name("job/slot/")), "{h:?}");
    once.done().await.unwrap();
    assert_released(&once.health());
    client.close().await;
}

// covers: HEALTH-HANDLE-001
#[tokio::test]
async fn a_pool_and_a_lock_set_read_lost_once_their_signal_fired() {
    let client = client().await;
    let p = prefix("health-lost");
    let set = client.lock_set([format!("{p}a"), format!("{p}b")], 10).unwrap().lock().await.unwrap();
    client.delete(set.members()[1].key()).await.unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(5), set.lost().wait()).await.expect("lost within 5 s");
    assert_eq!(set.health().state, HoldState::Lost(reason));
    assert!(!set.health().is_ok());

    // A pool's holding lives on its lease: revoked by another client, it is lost.
    let other = client_for(&shared().endpoints()).await;
    let slots = other.pool(format!("{p}pool"), PoolOptions::size(1)).unwrap().acquire(1).await.unwrap();
    assert!(slots.health().is_ok());
    let mut raw = raw(&shared().endpoints()).await;
    raw.lease_revoke(slots.lease_id()).await.unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(10), slots.lost().wait()).await.expect("lost within 10 s");
    let h = slots.health();
    assert_eq!((h.state, h.is_ok()), (HoldState::Lost(reason), false));
    other.close().await;
    client.close().await;
}

#[path = "../../examples/readiness_probe.rs"]
#[allow(dead_code)]
mod readiness_probe;

/// One `GET path` to 127.0.0.1:`port`: the status code and the body.
fn get(port: u16, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out[9..12].parse().unwrap();
    (status, out.split("\r\n\r\n").nth(1).unwrap_or("").to_string())
}

// covers: HEALTH-HANDLE-001
#[tokio::test]
async fn the_readiness_probe_example_says_200_while_leading_then_503() {
    let client = client().await;
    let name = prefix("health-probe") + "leader";
    let leadership = std::sync::Arc::new(client.election(name, 10).unwrap().campaign("me").await.unwrap());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = leadership.clone();
    readiness_probe::serve(listener, move || probe.health());
    let (status, body) = tokio::task::spawn_blocking(move || get(port, "/readyz")).await.unwrap();
    assert_eq!((status, body.starts_with("held")), (200, true), "{body}");
    client.delete(leadership.key()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), leadership.lost().wait()).await.expect("lost within 5 s");
    let (status, body) = tokio::task::spawn_blocking(move || get(port, "/readyz")).await.unwrap();
    assert_eq!((status, body), (503, format!("lost key_deleted token={}\n", leadership.fencing_token())));
    client.close().await;
}
