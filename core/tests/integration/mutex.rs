//! The fair mutex against a real etcd.
use crate::common::*;
use etcdlock::{ErrorKind, LockOptions, LostReason};
use std::sync::Arc;
use std::time::Duration;

// covers: LOCK-BASIC-001, LOCK-TOKEN-001, LOCK-RELEASE-001
#[tokio::test]
async fn uncontended_lock_and_release() {
    let client = client().await;
    let name = prefix("uncontended") + "lock";
    let m = client.mutex(name.clone(), 10).unwrap();
    let g = m.lock().await.unwrap();
    assert!(g.is_held());
    assert!(g.key().starts_with(format!("{name}/").as_bytes()));
    let t1 = g.fencing_token();
    g.release().await.unwrap();
    assert!(!g.is_held());
    assert_eq!(g.release().await.unwrap_err().kind(), ErrorKind::NotHeld);
    let g2 = m.lock().await.unwrap();
    assert!(g2.fencing_token() > t1);
    g2.release().await.unwrap();
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
    client.close().await;
}

// covers: LOCK-FIFO-001, LOCK-TOKEN-001
#[tokio::test]
async fn fifo_order_of_waiters() {
    let client = client().await;
    let name = prefix("fifo") + "lock";
    let holder = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..6 {
        let (c, n, order) = (client.clone(), name.clone(), order.clone());
        tasks.push(tokio::spawn(async move {
            let m = c.mutex(n, 10).unwrap();
            let g = m.lock().await.unwrap();
            order.lock().unwrap().push((i, g.fencing_token()));
            tokio::time::sleep(Duration::from_millis(20)).await;
            g.release().await.unwrap();
        }));
        // Enqueue in a known order.
        let n = name.clone();
        assert!(eventually(Duration::from_secs(5), || {
            let n = n.clone();
            async move { keys_under(&shared().endpoints(), &format!("{n}/")).await.len() == i + 2 }
        }).await);
    }
    holder.release().await.unwrap();
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(20), t).await.unwrap().unwrap();
    }
    let order = order.lock().unwrap().clone();
    let idx: Vec<_> = order.iter().map(|(i, _)| *i).collect();
    assert_eq!(idx, vec![0, 1, 2, 3, 4, 5]);
    assert!(order.windows(2).all(|w| w[0].1 < w[1].1), "tokens increase: {order:?}");
    client.close().await;
}

// covers: LOCK-EXCL-001, LOCK-GUARD-001
#[tokio::test]
async fn no_overlap_with_many_contenders_guarded_counter() {
    let client = client().await;
    let name = prefix("overlap") + "lock";
    let counter_key = format!("{name}-counter");
    client.put(counter_key.as_bytes(), b"0", None).await.unwrap();
    let inside = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (name, counter_key, inside) = (name.clone(), counter_key.clone(), inside.clone());
        // Separate clients, as separate processes would have.
        let c = crate::common::client().await;
        tasks.push(tokio::spawn(async move {
            let m = c.mutex(name, 10).unwrap();
            let mut tokens = Vec::new();
            for _ in 0..5 {
                let g = m.lock().await.unwrap();
                assert_eq!(inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst), 0, "two holders at once");
                let v: i64 = String::from_utf8(c.get(counter_key.as_bytes()).await.unwrap().unwrap().value).unwrap().parse().unwrap();
                g.put(counter_key.as_bytes(), (v + 1).to_string().as_bytes()).await.unwrap();
                tokens.push(g.fencing_token());
                inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                g.release().await.unwrap();
            }
            c.close().await;
            tokens
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(tokio::time::timeout(Duration::from_secs(60), t).await.unwrap().unwrap());
    }
    let v = client.get(counter_key.as_bytes()).await.unwrap().unwrap().value;
    assert_eq!(v, b"40");
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 40, "every acquisition has its own token");
    client.close().await;
}

// covers: LOCK-SAMELEASE-001
#[tokio::test]
async fn two_acquisitions_on_one_handle_exclude_each_other() {
    let client = client().await;
    let name = prefix("samehandle") + "lock";
    let m = Arc::new(client.mutex(name.clone(), 10).unwrap());
    let g1 = m.lock().await.unwrap();
    let m2 = m.clone();
    let second = tokio::spawn(async move { m2.lock().await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!second.is_finished(), "second acquisition on the same lease must wait");
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await.len(), 2);
    g1.release().await.unwrap();
    let g2 = tokio::time::timeout(Duration::from_secs(5), second).await.unwrap().unwrap().unwrap();
    assert!(g2.fencing_token() > g1.fencing_token());
    assert_ne!(g2.key(), g1.key());
    g2.release().await.unwrap();
    client.close().await;
}

// covers: LOCK-ENQUEUE-001
#[tokio::test]
async fn one_name_through_a_busy_then_empty_then_busy_queue() {
    let (client, other) = (client().await, client().await);
    let name = prefix("enqueue") + "lock";
    let m = Arc::new(client.mutex(name.clone(), 10).unwrap());
    let theirs = other.mutex(name.clone(), 10).unwrap();
    let endpoints = shared().endpoints();
    let queue = format!("{name}/");

    // Busy on the handle's first enqueue: it must queue, not take the lock.
    let g0 = theirs.lock().await.unwrap();
    let m2 = m.clone();
    let first = tokio::spawn(async move { m2.lock().await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!first.is_finished(), "the lock is held: the acquire must wait");
    assert_eq!(keys_under(&endpoints, &queue).await.len(), 2);
    g0.release().await.unwrap();
    let g1 = tokio::time::timeout(Duration::from_secs(5), first).await.unwrap().unwrap().unwrap();
    assert!(g1.fencing_token() > g0.fencing_token());
    g1.release().await.unwrap();

    // Empty again (after a busy enqueue), twice: acquired at once, and it excludes others.
    let mut token = g1.fencing_token();
    for fresh_handle in [false, true] {
        let m = if fresh_handle { Arc::new(client.mutex(name.clone(), 10).unwrap()) } else { m.clone() };
        let g = tokio::time::timeout(Duration::from_secs(5), m.lock()).await.unwrap().unwrap();
        assert!(g.fencing_token() > token);
        token = g.fencing_token();
        assert_eq!(theirs.try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
        g.release().await.unwrap();
    }

    // Busy again after an empty one, on a handle made for the call (as C and Node do): it
    // queues behind the holder.
    let g2 = theirs.lock().await.unwrap();
    let m3 = client.mutex(name.clone(), 10).unwrap();
    let last = tokio::spawn(async move { m3.lock().await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!last.is_finished(), "the lock is held: the acquire must wait");
    g2.release().await.unwrap();
    let g3 = tokio::time::timeout(Duration::from_secs(5), last).await.unwrap().unwrap().unwrap();
    assert!(g3.fencing_token() > g2.fencing_token() && g2.fencing_token() > token);
    g3.release().await.unwrap();
    assert!(keys_under(&endpoints, &queue).await.is_empty());
    client.close().await;
    other.close().await;
}

// covers: LOCK-KEYREUSE-001
#[tokio::test]
async fn queue_key_names_are_reused_once_deleted() {
    let client = client().await;
    let name = prefix("keyreuse") + "lock";
    let m = Arc::new(client.mutex(name.clone(), 10).unwrap());
    let g1 = m.lock().await.unwrap();
    let go_layout = format!("{name}/{:x}", g1.lease_id()).into_bytes();
    assert_eq!(g1.key(), go_layout.as_slice());
    g1.release().await.unwrap();
    let g2 = m.lock().await.unwrap();
    assert_eq!(g2.key(), go_layout.as_slice(), "a sequential acquisition reuses the deleted key's name");
    let m3 = m.clone();
    let waiting = tokio::spawn(async move { m3.lock().await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    g2.release().await.unwrap();
    let g3 = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap().unwrap();
    assert_ne!(g3.key(), go_layout.as_slice(), "a concurrent acquisition has its own key");
    let g4 = m.lock_with(LockOptions { timeout: Some(Duration::from_millis(300)), cancel: None, ..Default::default() }).await;
    assert_eq!(g4.unwrap_err().kind(), ErrorKind::LockTimeout, "g3 still holds the lock");
    // The timed-out attempt deleted its key (named like g2's) and freed the name for reuse.
    g3.release().await.unwrap();
    let g5 = m.lock().await.unwrap();
    assert_eq!(g5.key(), go_layout.as_slice());
    g5.release().await.unwrap();
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
    client.close().await;
}

// covers: LOCK-TRY-001
#[tokio::test]
async fn try_lock_fails_without_leaving_a_key() {
    let client = client().await;
    let name = prefix("trylock") + "lock";
    let g = client.mutex(name.clone(), 10).unwrap().try_lock().await.unwrap();
    let other = client.mutex(name.clone(), 10).unwrap();
    let e = other.try_lock().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WouldBlock);
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await, vec![String::from_utf8(g.key().to_vec()).unwrap()]);
    g.release().await.unwrap();
    other.try_lock().await.unwrap().release().await.unwrap();
    client.close().await;
}

// covers: LOCK-TIMEOUT-001, LOCK-CANCEL-001
#[tokio::test]
async fn timeout_and_cancel_leave_no_key_and_no_lease() {
    // A private server, so the lease list is ours alone.
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let client = client_for(&eps).await;
    let holder_m = client.mutex("job", 10).unwrap();
    let holder = holder_m.lock().await.unwrap();
    let before = lease_ids(&eps).await;

    let waiter = client.mutex("job", 10).unwrap();
    let e = waiter.lock_with(LockOptions { timeout: Some(Duration::from_millis(200)), cancel: None, ..Default::default() }).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LockTimeout);
    assert_eq!(keys_under(&eps, "job/").await.len(), 1);
    assert_eq!(lease_ids(&eps).await, before);

    let cancel = etcdlock::CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        c2.cancel();
    });
    let e = waiter.lock_with(LockOptions { timeout: None, cancel: Some(cancel), ..Default::default() }).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled);
    assert_eq!(keys_under(&eps, "job/").await.len(), 1);
    assert_eq!(lease_ids(&eps).await, before);

    // Dropping the future cleans up in the background.
    let r = tokio::time::timeout(Duration::from_millis(200), waiter.lock()).await;
    assert!(r.is_err());
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, "job/").await.len() == 1 }).await);

    holder.release().await.unwrap();
    drop(holder_m);
    drop(waiter);
    client.close().await;
    assert!(eventually(Duration::from_secs(5), || async { lease_ids(&eps).await.is_empty() }).await);
}

// covers: LOCK-WAITLOST-001
#[tokio::test]
async fn waiter_whose_lease_is_revoked_fails_promptly() {
    let client = client().await;
    let name = prefix("waiterlease") + "lock";
    let holder = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let lease = client.lease(10).await.unwrap();
    let waiter = etcdlock::Mutex::with_lease(&lease, name.clone()).unwrap();
    let w = tokio::spawn(async move { waiter.lock().await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Revoke from outside, as an operator would.
    let out = etcdctl_cmd(&shared().endpoints()[0], &["lease", "revoke", &format!("{:x}", lease.id())]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let e = tokio::time::timeout(Duration::from_secs(5), w).await.unwrap().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LockLost);
    holder.release().await.unwrap();
    client.close().await;
}

// covers: LOCK-LOST-001, LOCK-RELEASE-001, LOCK-EXCLUSIVE-001
#[tokio::test]
async fn holder_learns_when_its_key_is_deleted() {
    let client = client().await;
    let name = prefix("keydel") + "lock";
    let m = client.mutex(name.clone(), 10).unwrap();
    let g = m.lock().await.unwrap();
    // Held: nobody else can get it before the grant's (or last keepalive's) send time + TTL.
    let until = g.exclusive_until().expect("held").saturating_duration_since(std::time::Instant::now());
    assert!(until > Duration::from_secs(8) && until <= Duration::from_secs(10), "{until:?}");
    let key = String::from_utf8(g.key().to_vec()).unwrap();
    let out = etcdctl_cmd(&shared().endpoints()[0], &["del", &key]).output().unwrap();
    assert!(out.status.success());
    let reason = tokio::time::timeout(Duration::from_secs(5), g.lost().wait()).await.unwrap();
    assert_eq!(reason, LostReason::KeyDeleted);
    assert!(!g.is_held());
    assert_eq!(g.exclusive_until(), None, "the key is gone: another may hold the lock already");
    assert_eq!(g.put(b"x", b"y").await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert_eq!(g.release().await.unwrap_err().kind(), ErrorKind::NotHeld);
    client.close().await;
}

// covers: LOCK-LOST-001
#[tokio::test]
async fn holder_learns_of_a_deleted_key_without_asking_for_the_lost_signal() {
    // Nobody calls lost(): the monitor starts on its own once the lock has been held a while.
    let client = client().await;
    let name = prefix("keydel-late") + "lock";
    let m = client.mutex(name.clone(), 10).unwrap();
    let g = m.lock().await.unwrap();
    client.delete(g.key()).await.unwrap();
    let mut polls = 0;
    while g.is_held() && polls < 100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        polls += 1;
    }
    assert_eq!(g.lost_reason(), Some(LostReason::KeyDeleted), "still held after {polls} polls");
    client.close().await;
}

// covers: LOCK-LOST-003
#[tokio::test]
async fn holder_learns_of_a_deleted_key_even_when_its_watch_start_was_compacted() {
    // The monitor watches the key from token + 1. With that revision compacted away (etcd
    // auto-compaction, or an outage longer than its retention) it must re-read the key instead.
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let client = client_for(&eps).await;
    let g = client.mutex("lock", 10).unwrap().lock().await.unwrap();
    let mut raw = raw(&eps).await;
    raw.delete(g.key(), None).await.unwrap();
    let head = raw.put("after", "x", None).await.unwrap().header().unwrap().revision();
    raw.compact(head, None).await.unwrap();
    let lost = tokio::time::timeout(Duration::from_secs(5), g.lost().wait()).await;
    assert_eq!(lost.ok(), Some(LostReason::KeyDeleted));
    assert!(!g.is_held());
    client.close().await;
}

// covers: LOCK-FENCED-001
#[tokio::test]
async fn guarded_write_refused_after_loss_and_unlock_is_fenced() {
    let client = client().await;
    let name = prefix("fenced") + "lock";
    let lease = client.lease(10).await.unwrap();
    let m = etcdlock::Mutex::with_lease(&lease, name.clone()).unwrap();
    let g = m.lock().await.unwrap();
    // Somebody deletes our key and a new holder takes the lock.
    client.delete(g.key()).await.unwrap();
    let other = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let data = format!("{name}-data");
    assert_eq!(g.put(data.as_bytes(), b"stale").await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert!(client.get(data.as_bytes()).await.unwrap().is_none());
    // A stale release must not delete the new holder's key.
    assert_eq!(g.release().await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert!(other.is_held());
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await.len(), 1);
    other.put(data.as_bytes(), b"fresh").await.unwrap();
    other.release().await.unwrap();
    client.close().await;
}

// covers: LOCK-FENCED-001
#[tokio::test]
async fn release_never_deletes_a_key_recreated_under_the_same_name() {
    // Deleted by an operator, then recreated under the very same name and lease by someone else
    // (a Go client sharing the lease would use that name): a delete by name would remove it.
    let client = client().await;
    let g = client.mutex(prefix("samename") + "lock", 10).unwrap().lock().await.unwrap();
    let mut raw = raw(&shared().endpoints()).await;
    raw.delete(g.key(), None).await.unwrap();
    raw.put(g.key(), "someone else", Some(etcd_client::PutOptions::new().with_lease(g.lease_id()))).await.unwrap();
    assert_eq!(g.release().await.unwrap_err().kind(), ErrorKind::NotHeld);
    let left = raw.get(g.key(), None).await.unwrap();
    assert_eq!(left.kvs().first().map(|kv| kv.value().to_vec()), Some(b"someone else".to_vec()));
    raw.delete(g.key(), None).await.unwrap();
    client.close().await;
}

// covers: ERR-BADNAME-001, ERR-BADTTL-001, ERR-BADKEY-001, CONN-BADURL-001, CONN-CLOSED-001
#[tokio::test]
async fn bad_inputs_are_rejected_before_anything_is_sent() {
    let client = client().await;
    for bad in ["", "a/", "a\0b"] {
        assert_eq!(client.mutex(bad, 10).unwrap_err().kind(), ErrorKind::InvalidArgument, "{bad:?}");
    }
    for ttl in [0, -1, etcdlock::MAX_TTL_SECS + 1] {
        assert_eq!(client.mutex("ok", ttl).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(client.lease(ttl).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    assert_eq!(client.get(b"").await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    for eps in [vec![], vec!["not a url"], vec!["http://127.0.0.1:0"]] {
        let e = etcdlock::Client::connect(eps.clone(), Default::default()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{eps:?}");
    }
    let zero_idle = etcdlock::ClientOptions { idle_lease_timeout: Duration::ZERO, ..Default::default() };
    let e = etcdlock::Client::connect(shared().endpoints(), zero_idle).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    client.close().await;
    assert_eq!(client.get(b"k").await.unwrap_err().kind(), ErrorKind::Closed);
    assert_eq!(client.mutex("ok", 10).unwrap_err().kind(), ErrorKind::Closed);
}

// covers: CONN-UNREACH-001
#[tokio::test]
async fn unreachable_endpoint_fails_within_the_connect_timeout() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let opts = etcdlock::ClientOptions { connect_timeout: Duration::from_millis(500), ..Default::default() };
    let start = std::time::Instant::now();
    let e = etcdlock::Client::connect([format!("http://127.0.0.1:{port}")], opts).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
    assert!(start.elapsed() < Duration::from_secs(3));
}

// covers: CONN-CLOSE-WAITER-001
#[tokio::test]
async fn close_fails_a_waiting_acquire_with_closed() {
    let client = client().await;
    let name = prefix("closewait") + "lock";
    let other = crate::common::client().await;
    let holder = other.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let m = client.mutex(name.clone(), 10).unwrap();
    let w = tokio::spawn(async move { m.lock().await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    client.close().await;
    let e = tokio::time::timeout(Duration::from_secs(5), w).await.unwrap().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);
    assert!(eventually(Duration::from_secs(5), || async {
        keys_under(&shared().endpoints(), &format!("{name}/")).await.len() == 1
    }).await);
    holder.release().await.unwrap();
    other.close().await;
}

// covers: LOCK-LOST-002
#[tokio::test]
async fn closing_the_client_marks_held_locks_lost() {
    let client = client().await;
    let name = prefix("closeheld") + "lock";
    let g = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let lost = g.lost();
    client.close().await;
    assert_eq!(tokio::time::timeout(Duration::from_secs(5), lost.wait()).await.unwrap(), LostReason::Closed);
    assert!(!g.is_held());
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty(), "close revokes the lease");
}

// covers: KV-BASIC-001
#[tokio::test]
async fn put_get_delete_round_trip() {
    let client = client().await;
    let key = prefix("kv") + "k";
    assert!(client.get(key.as_bytes()).await.unwrap().is_none());
    let rev = client.put(key.as_bytes(), b"\x00bytes\xff", None).await.unwrap();
    let kv = client.get(key.as_bytes()).await.unwrap().unwrap();
    assert_eq!((kv.value.as_slice(), kv.mod_revision, kv.create_revision), (&b"\x00bytes\xff"[..], rev, rev));
    assert!(client.delete(key.as_bytes()).await.unwrap());
    assert!(!client.delete(key.as_bytes()).await.unwrap());
    assert!(client.get(key.as_bytes()).await.unwrap().is_none());
    client.close().await;
}
