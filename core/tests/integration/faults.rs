//! Faults on a real 3-member cluster, and interop with etcd's own lock.
use crate::common::*;
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

// covers: FAULT-COMPACT-WAIT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compacting_to_the_head_during_contention_costs_waiters_nothing() {
    // Waiters watch their predecessor and (after 50 ms) their own key from revisions that the
    // compactor keeps removing; holders' monitors watch from their token. None of that may
    // surface as an error, a lost lock, a stall or an overlap. A private server: compacting the
    // shared one would break other tests' watches (etcdctl lock gives up on a compacted watch).
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let name = prefix("compactwait") + "lock";
    let counter = prefix("compactwait") + "counter";
    let stop = etcdlock::CancellationToken::new();
    let compactor = {
        let (stop, eps) = (stop.clone(), eps.clone());
        tokio::spawn(async move {
            let mut raw = raw(&eps).await;
            let mut n = 0;
            while !stop.is_cancelled() {
                let head = raw.get("x", None).await.unwrap().header().unwrap().revision();
                // Fails when nothing was written since the last one (already compacted).
                if raw.compact(head, None).await.is_ok() {
                    n += 1;
                }
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
            n
        })
    };
    let mut workers = Vec::new();
    for w in 0..6u64 {
        let (name, counter, eps) = (name.clone(), counter.clone(), eps.clone());
        workers.push(tokio::spawn(async move {
            let client = client_for(&eps).await;
            let m = client.mutex(name, 10).unwrap();
            let mut tokens = Vec::new();
            for i in 0..8u64 {
                let opts = etcdlock::LockOptions { timeout: Some(Duration::from_secs(20)), cancel: None, ..Default::default() };
                let g = m.lock_with(opts).await.unwrap_or_else(|e| panic!("worker {w} round {i}: {e}"));
                let seen = client.get(counter.as_bytes()).await.unwrap().map_or(0, |kv| String::from_utf8(kv.value).unwrap().parse::<u64>().unwrap());
                // Some holds outlast the 50 ms after which own-key watches and monitors start.
                tokio::time::sleep(Duration::from_millis(if (w + i) % 3 == 0 { 80 } else { 5 })).await;
                assert!(g.is_held(), "worker {w} round {i}: lost {:?}", g.lost_reason());
                g.put(counter.as_bytes(), (seen + 1).to_string().as_bytes()).await.unwrap();
                tokens.push(g.fencing_token());
                g.release().await.unwrap();
            }
            client.close().await;
            tokens
        }));
    }
    let mut tokens = Vec::new();
    for w in workers {
        tokens.extend(tokio::time::timeout(Duration::from_secs(60), w).await.expect("a worker stalled").unwrap());
    }
    stop.cancel();
    let compactions = compactor.await.unwrap();
    assert!(compactions >= 5, "only {compactions} compactions ran");
    let c = client_for(&eps).await;
    let total = c.get(counter.as_bytes()).await.unwrap().unwrap().value;
    // Every guarded increment saw the previous one: no two holders overlapped.
    assert_eq!(String::from_utf8(total).unwrap(), "48");
    tokens.sort();
    tokens.dedup();
    assert_eq!(tokens.len(), 48);
    assert!(keys_under(&eps, &format!("{name}/")).await.is_empty());
    c.close().await;
}

// covers: FAULT-QUORUM-001
#[tokio::test]
async fn losing_quorum_loses_the_lock_at_its_deadline_and_nothing_comes_back() {
    let etcd = Etcd::start(3);
    let eps = etcd.endpoints();
    let opts = etcdlock::ClientOptions { request_timeout: Duration::from_secs(2), ..Default::default() };
    let holder = etcdlock::Client::connect(&eps, opts.clone()).await.unwrap();
    let waiter = etcdlock::Client::connect(&eps, opts).await.unwrap();
    let g = holder.mutex("quorum", 3).unwrap().lock().await.unwrap();
    let wm = waiter.mutex("quorum", 3).unwrap();
    let wait = tokio::spawn(async move {
        let t0 = std::time::Instant::now();
        let r = wm.lock_with(etcdlock::LockOptions { timeout: Some(Duration::from_secs(2)), cancel: None, ..Default::default() }).await;
        (r.map(drop), t0.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await; // the waiter is queued

    // Two of three members frozen: no quorum, no keepalive can succeed anywhere.
    let leader = etcd.leader().await;
    let frozen = [leader, (leader + 1) % 3];
    frozen.iter().for_each(|&i| etcd.signal(i, libc::SIGSTOP));
    // Not held any more once the TTL has passed since the freeze: the local deadline (last
    // acknowledged keepalive + TTL - margin) came first, whatever the server does meanwhile. The
    // check reads the clock, so a busy machine cannot make it late.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!g.is_held());
    assert_eq!(g.lost_reason(), Some(etcdlock::LostReason::Expired));
    // covers: LOCK-EXCLUSIVE-001 (lost at the local deadline: etcd cannot expire the lease
    // before the margin after it, TTL/10 = 300 ms here, and may right after)
    let until = g.exclusive_until().expect("lost at the local deadline").saturating_duration_since(std::time::Instant::now());
    assert!(until <= Duration::from_millis(300), "{until:?}");
    let reason = tokio::time::timeout(Duration::from_secs(5), g.lost().wait()).await;
    assert_eq!(reason.ok(), Some(etcdlock::LostReason::Expired));
    // The waiter gives up at its timeout: bounded, no hang, even though its cleanup cannot
    // reach a quorum (it goes on in the background).
    let (r, took) = tokio::time::timeout(Duration::from_secs(15), wait).await.expect("waiter hung").unwrap();
    assert_eq!(r.unwrap_err().kind(), etcdlock::ErrorKind::LockTimeout);
    assert!(took < Duration::from_secs(8), "waiter returned after {took:?}");

    frozen.iter().for_each(|&i| etcd.signal(i, libc::SIGCONT));
    // The server may still have the old lease (a new leader extends leases): our handle stays
    // lost, the stale key goes (release, background cleanup), and the lock works again.
    assert_eq!(g.release().await.unwrap_err().kind(), etcdlock::ErrorKind::NotHeld);
    assert!(!g.is_held());
    let again = tokio::time::timeout(Duration::from_secs(20), holder.mutex("quorum", 3).unwrap().lock())
        .await
        .expect("the lock never came back after quorum returned")
        .unwrap();
    assert!(again.fencing_token() > g.fencing_token());
    again.release().await.unwrap();
    assert!(eventually(Duration::from_secs(10), || async { keys_under(&eps, "quorum/").await.is_empty() }).await);
    holder.close().await;
    waiter.close().await;
}

// covers: FAULT-PAUSE-LEADER-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_then_resumed_leader_costs_no_lock() {
    // Below 3.5.13 a resumed old leader may revoke leases that were kept alive through the new
    // one before it learns it lost (etcd-io/etcd#15247, fixed by #16822 / #17425): the lock would
    // be lost through no fault of ours. That is a race (this test passed 3 of 3 times on 3.5.1
    // here), so older servers skip it rather than expect it to fail.
    require_server((3, 5, 13), "it can revoke leases from a resumed old leader");
    let etcd = Etcd::start(3);
    let eps = etcd.endpoints();
    let client = client_for(&eps).await;
    let ttl = 5;
    let g = client.mutex("paused-leader", ttl).unwrap().lock().await.unwrap();
    let token = g.fencing_token();
    let leader = etcd.leader().await;
    // Frozen well past the TTL (SIGSTOP: sockets stay open and silent), so that in the old
    // leader's own view the lease expires; then resumed.
    etcd.signal(leader, libc::SIGSTOP);
    for _ in 0..32 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(g.is_held(), "lost while the leader was frozen: {:?}", g.lost_reason());
    }
    let live: Vec<_> = eps.iter().enumerate().filter(|(i, _)| *i != leader).map(|(_, e)| e.clone()).collect();
    // When the server deletes the key, seen by a watch of our own through the live members.
    let mut deletes = raw(&live).await.watch("paused-leader/", Some(etcd_client::WatchOptions::new().with_prefix())).await.unwrap();
    let deleted_at = tokio::spawn(async move {
        while let Ok(Some(r)) = deletes.message().await {
            if r.events().iter().any(|e| e.event_type() == etcd_client::EventType::Delete) {
                return Some(std::time::Instant::now());
            }
        }
        None
    });
    etcd.signal(leader, libc::SIGCONT);
    let mut lost_after_resume = None;
    let mut lost_at = None;
    for _ in 0..600 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        if !g.is_held() {
            (lost_after_resume, lost_at) = (g.lost_reason(), Some(std::time::Instant::now()));
            break;
        }
    }
    match lost_after_resume {
        None => {
            let keys = keys_under(&live, "paused-leader/").await;
            assert_eq!(keys.len(), 1, "the lock key must still be there: {keys:?}");
            g.put(b"paused-leader-data", b"ok").await.expect("guarded write after the resume");
            g.release().await.unwrap();
        }
        // Seen once on etcd 3.6.16 (2026-11-30), on a heavily loaded machine: the key went
        // from the server after the old leader resumed, though the lease had been kept alive
        // through the new leader all along (etcd's doing, not a missed keepalive: the handle
        // stayed held through the freeze; like etcd-io/etcd#15247, fixed for 3.5.13, whose
        // cause on 3.6.16 is not known). No client can see that coming, so the loss must be
        // reported within the bound its own-key watch gives (measured and printed here: how
        // long the handle still said "held" after the server deleted the key; about 11 ms with
        // the key deleted by hand at this point, polled every 10 ms), and nothing may be
        // written under it or left behind.
        Some(reason) => {
            let deleted_at = tokio::time::timeout(Duration::from_secs(1), deleted_at).await.ok().and_then(|r| r.ok()).flatten();
            let lost_at = lost_at.expect("set with the reason");
            let window = deleted_at.map(|d| lost_at.saturating_duration_since(d));
            eprintln!("FAULT-PAUSE-LEADER-001: etcd dropped the lock after the old leader resumed ({reason}); the handle said held for {window:?} after the server deleted the key");
            if let Some(w) = window {
                assert!(w < Duration::from_secs(1), "held {w:?} after the server deleted the key");
            }
            assert!(eventually(Duration::from_secs(10), || async { keys_under(&live, "paused-leader/").await.is_empty() }).await);
            let e = g.put(b"paused-leader-data", b"lost").await.unwrap_err();
            assert_eq!(e.kind(), etcdlock::ErrorKind::NotHeld);
            assert_eq!(g.release().await.unwrap_err().kind(), etcdlock::ErrorKind::NotHeld);
            assert!(client.get(b"paused-leader-data").await.unwrap().is_none(), "written after the loss");
        }
    }
    let next = client.mutex("paused-leader", ttl).unwrap().lock().await.unwrap();
    assert!(next.fencing_token() > token);
    next.release().await.unwrap();
    client.close().await;
}

// covers: FAULT-BLACKHOLE-001, FAULT-BLACKHOLE-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn black_holed_paths_to_members_cost_no_lock_and_no_watch_event_while_one_is_left() {
    use etcd_testkit::proxy::Mode;
    let etcd = Etcd::start(3);
    // The client reaches each member only through a proxy; the members still see each other.
    let (proxies, via) = proxied(&etcd);
    let opts = etcdlock::ClientOptions { request_timeout: Duration::from_secs(2), ..Default::default() };
    let client = etcdlock::Client::connect(&via, opts).await.unwrap();
    let ttl = 8;
    let g = client.mutex("blackhole", ttl).unwrap().lock().await.unwrap();
    let mut w = client.watch("bh-events/", etcdlock::WatchOptions { prefix: true, ..Default::default() }).await.unwrap();
    let mut writer = raw(&etcd.endpoints()).await;
    let mut written = 0;

    // Two of the three paths go silent (sockets open, nothing gets through) for twice the TTL, while
    // another client writes: keepalives must find the third member.
    proxies[0].set(Mode::Blackhole);
    proxies[1].set(Mode::Blackhole);
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(2 * ttl as u64) {
        writer.put(format!("bh-events/{written:04}"), written.to_string(), None).await.unwrap();
        written += 1;
        assert!(g.is_held(), "lock lost {:?} into the black hole: {:?}", start.elapsed(), g.lost_reason());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Still the holder in etcd's eyes too: the key is there, on a live lease.
    assert_eq!(keys_under(&etcd.endpoints(), "blackhole/").await, vec![String::from_utf8_lossy(g.key()).into_owned()]);
    assert!(writer.lease_time_to_live(g.lease_id(), None).await.unwrap().ttl() > 0, "the server let the lease expire");

    // Then every path goes silent: the holder learns it may have lost the lock before the
    // server can give it to anyone else (its key is still there when `lost` fires).
    proxies[2].set(Mode::Blackhole);
    let reason = tokio::time::timeout(Duration::from_secs(2 * ttl as u64), g.lost().wait()).await.expect("never reported lost");
    assert_eq!(reason, etcdlock::LostReason::Expired);
    let key = String::from_utf8_lossy(g.key()).into_owned();
    assert_eq!(keys_under(&etcd.endpoints(), "blackhole/").await, vec![key], "lost only after the server revoked the lease");
    for _ in 0..5 {
        writer.put(format!("bh-events/{written:04}"), written.to_string(), None).await.unwrap();
        written += 1;
    }

    // Paths back: every write arrives exactly once, in order, and the lock works again.
    proxies.iter().for_each(|p| p.set(Mode::Pass));
    for i in 0..written {
        let e = tokio::time::timeout(Duration::from_secs(30), w.next()).await.expect("watch stalled").unwrap().unwrap();
        assert_eq!(e.kv.key, format!("bh-events/{i:04}").into_bytes(), "gap or duplicate at {i}");
    }
    assert_eq!(g.release().await.unwrap_err().kind(), etcdlock::ErrorKind::NotHeld);
    let again = tokio::time::timeout(Duration::from_secs(30), client.mutex("blackhole", ttl).unwrap().lock()).await.expect("lock stuck").unwrap();
    assert!(again.fencing_token() > g.fencing_token());
    again.release().await.unwrap();
    client.close().await;
}

// covers: FAULT-BLACKHOLE-003
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_whose_member_goes_silent_moves_on_within_seconds() {
    use etcd_testkit::proxy::Mode;
    let etcd = Etcd::start(3);
    let (proxies, via) = proxied(&etcd);
    let client = etcdlock::Client::connect(&via, Default::default()).await.unwrap();
    let mut w = client.watch("silent/", etcdlock::WatchOptions { prefix: true, ..Default::default() }).await.unwrap();
    let mut writer = raw(&etcd.endpoints()).await;
    let base = std::time::Instant::now();
    let reader = tokio::spawn(async move {
        // (key, how long after its write it arrived)
        let mut seen = Vec::new();
        while let Ok(Some(r)) = tokio::time::timeout(Duration::from_secs(30), w.next()).await {
            let e = r.expect("the watch failed");
            let written_ms: u64 = String::from_utf8_lossy(&e.kv.value).parse().unwrap();
            let lag = base.elapsed().saturating_sub(Duration::from_millis(written_ms));
            seen.push((String::from_utf8_lossy(&e.kv.key).into_owned(), lag));
            if e.kv.key.ends_with(b"last") {
                break;
            }
        }
        seen
    });
    // Each member's path goes silent in turn, wherever the watch stream happens to be.
    let mut written = 0;
    for p in &proxies {
        p.set(Mode::Blackhole);
        let phase = std::time::Instant::now();
        while phase.elapsed() < Duration::from_secs(8) {
            let at = base.elapsed().as_millis().to_string();
            writer.put(format!("silent/{written:04}"), at, None).await.unwrap();
            written += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        p.set(Mode::Pass);
    }
    writer.put("silent/last", base.elapsed().as_millis().to_string(), None).await.unwrap();
    let seen = reader.await.unwrap();
    let keys: Vec<_> = seen.iter().map(|(k, _)| k.clone()).collect();
    let want: Vec<_> = (0..written).map(|i| format!("silent/{i:04}")).chain(["silent/last".to_string()]).collect();
    let missing: Vec<_> = want.iter().filter(|k| !keys.contains(k)).collect();
    assert_eq!(keys, want, "gap, duplicate or reorder; missing {missing:?}; seen {} of {}", keys.len(), want.len());
    // Found silent after 2 s without a message plus 2 s without an answer, then resumed on
    // the next member: well within 7 s. (Otherwise events wait for the path to come back,
    // 8 s, or for HTTP/2 pings to give up, 15 s.)
    let worst = seen.iter().map(|(_, lag)| *lag).max().unwrap();
    assert!(worst < Duration::from_secs(7), "an event arrived {worst:?} after its write");
    client.close().await;
}

// covers: FAULT-RESET-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_resets_during_acquire_and_release_cost_no_acquisition_and_leave_nothing() {
    // A read-only Txn cut off by a reset crashes etcd 3.5.0-3.5.4 (etcd-io/etcd#14110: "unexpected
    // error during txn: context canceled"). A waiter's position read was one, and a 3.5.1 member
    // died that way here under CI load; it is a Range now (FAULT-SLOWREAD-001), so this runs on
    // every server.
    lock_through_resets(|w| format!("reset/{w}")).await;
}

// covers: FAULT-RESET-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_resets_under_contention_cost_no_acquisition_and_never_two_holders() {
    lock_through_resets(|_| "reset/shared".to_string()).await;
}

/// A burst of resets (every connection to one member, in turn, closed every 30 ms, 40 times,
/// so that requests and streams in flight fail at every step of acquire and release) while 4
/// clients lock and release 25 times each, on the names `name(worker)` gives. Every acquisition
/// succeeds, never two at once on one name, each with a bigger token than that name's last; no
/// key and no lease is left.
async fn lock_through_resets(name: impl Fn(usize) -> String) {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    let etcd = Etcd::start(3);
    let (proxies, via) = proxied(&etcd);
    let proxies = Arc::new(proxies);
    let resetter = {
        let proxies = proxies.clone();
        tokio::spawn(async move {
            for n in 0..40 {
                proxies[n % 3].reset();
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        })
    };
    // Per name: whether someone holds it here, and its last token.
    let names: Arc<Mutex<HashMap<String, (bool, i64)>>> = Arc::default();
    let mut workers = Vec::new();
    for w in 0..4 {
        let (via, names, name) = (via.clone(), names.clone(), name(w));
        workers.push(tokio::spawn(async move {
            let client = client_for(&via).await;
            let m = client.mutex(name.clone(), 10).unwrap();
            for i in 0..25 {
                let opts = etcdlock::LockOptions { timeout: Some(Duration::from_secs(20)), cancel: None, ..Default::default() };
                let t0 = std::time::Instant::now();
                let g = m.lock_with(opts).await.unwrap_or_else(|e| panic!("worker {w} round {i} after {:?}: {e}", t0.elapsed()));
                {
                    let mut names = names.lock().unwrap();
                    let (held, last) = names.entry(name.clone()).or_default();
                    assert!(!*held, "worker {w} round {i}: two holders of {name}");
                    // A retried enqueue never queues twice: each acquisition is a new, bigger token.
                    assert!(g.fencing_token() > *last, "worker {w} round {i}: token went back");
                    (*held, *last) = (true, g.fencing_token());
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert!(g.is_held(), "worker {w} round {i}: lost {:?}", g.lost_reason());
                names.lock().unwrap().get_mut(&name).unwrap().0 = false;
                g.release().await.unwrap_or_else(|e| panic!("worker {w} round {i} release: {e}"));
            }
            client.close().await;
        }));
    }
    for w in workers {
        tokio::time::timeout(Duration::from_secs(90), w).await.expect("a worker stalled").unwrap();
    }
    resetter.await.unwrap();
    // No queue key and no lease outlived its client.
    let eps = etcd.endpoints();
    assert!(keys_under(&eps, "reset/").await.is_empty(), "queue keys left: {:?}", keys_under(&eps, "reset/").await);
    assert!(eventually(Duration::from_secs(5), || async { lease_ids(&eps).await.is_empty() }).await, "leases left");
}

// covers: FAULT-STALL-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_outlives_requests_that_etcd_did_not_answer_in_time() {
    use etcd_testkit::proxy::{Mode, Proxy};
    let etcd = Etcd::start(1);
    let proxy = Proxy::start(etcd.members[0].client_port);
    let opts = etcdlock::ClientOptions { request_timeout: Duration::from_millis(500), ..Default::default() };
    let client = etcdlock::Client::connect([proxy.endpoint()], opts).await.unwrap();
    let m = client.mutex("stall", 10).unwrap();
    m.lock().await.unwrap().release().await.unwrap(); // the lease is granted before the stall

    proxy.set(Mode::Blackhole);
    let t0 = std::time::Instant::now();
    let acquire = tokio::spawn(async move {
        let opts = etcdlock::LockOptions { timeout: Some(Duration::from_secs(10)), cancel: None, ..Default::default() };
        let r = m.lock_with(opts).await;
        (r, m)
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!acquire.is_finished(), "the acquire gave up while it could still wait");
    proxy.set(Mode::Pass);
    let (r, _m) = tokio::time::timeout(Duration::from_secs(15), acquire).await.expect("acquire hung").unwrap();
    let g = r.unwrap_or_else(|e| panic!("acquire failed after {:?}: {e}", t0.elapsed()));
    assert!(g.is_held());
    let eps = etcd.endpoints();
    assert_eq!(keys_under(&eps, "stall/").await, vec![String::from_utf8_lossy(g.key()).into_owned()]);
    g.release().await.unwrap();
    assert!(keys_under(&eps, "stall/").await.is_empty());
    client.close().await;
}

// covers: FAULT-SLOWREAD-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_whose_reads_outlast_their_deadline_leaves_etcd_running_and_acquires_once_they_are_fast() {
    // etcd 3.5.0-3.5.4 crash when a read-only Txn is cut off while it reads (etcd-io/etcd#14110),
    // as its grpc-timeout does: a long queue makes a waiter's position read long (etcd reads
    // every key under the prefix to sort them). The waiter here gives each request 20 ms, and
    // 60,000 other keys under the lock's prefix make each of its reads take longer.
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let holder = client_for(&eps).await;
    let held = holder.mutex("slowread", 10).unwrap().lock().await.unwrap();
    let opts = etcdlock::ClientOptions { request_timeout: Duration::from_millis(20), ..Default::default() };
    let waiter = etcdlock::Client::connect(&eps, opts).await.unwrap();
    let m = waiter.mutex("slowread", 10).unwrap();
    let acquire = tokio::spawn(async move {
        let opts = etcdlock::LockOptions { timeout: Some(Duration::from_secs(60)), cancel: None, ..Default::default() };
        m.lock_with(opts).await
    });
    assert!(eventually(Duration::from_secs(10), || async { keys_under(&eps, "slowread/").await.len() == 2 }).await, "the waiter never queued");
    // Its first re-reads (while its watch may be unsynced) are over.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut raw = raw(&eps).await;
    for batch in 0..(60_000 / 120) {
        let puts: Vec<_> = (0..120).map(|i| etcd_client::TxnOp::put(format!("slowread/junk/{batch:04}-{i:03}"), "", None)).collect();
        raw.txn(etcd_client::Txn::new().and_then(puts)).await.unwrap();
    }
    let sorted = etcd_client::GetOptions::new()
        .with_prefix()
        .with_keys_only()
        .with_sort(etcd_client::SortTarget::Create, etcd_client::SortOrder::Descend)
        .with_limit(2);
    let t0 = std::time::Instant::now();
    raw.get("slowread/", Some(sorted)).await.unwrap();
    println!("a waiter's read takes {:?} now", t0.elapsed());

    // Its predecessor goes: every read the waiter makes now runs out of time in etcd.
    held.release().await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!acquire.is_finished(), "acquired while every read ran out of time: {:?}", acquire.await);
    let alive = tokio::time::timeout(Duration::from_secs(5), raw.put("slowread-alive", "", None)).await;
    assert!(matches!(alive, Ok(Ok(_))), "etcd stopped answering (crashed?): {alive:?}");

    raw.delete("slowread/junk/", Some(etcd_client::DeleteOptions::new().with_prefix())).await.unwrap();
    let g = tokio::time::timeout(Duration::from_secs(20), acquire).await.expect("acquire hung").unwrap().expect("acquire");
    assert!(g.is_held());
    // The release has the same 20 ms per request, which a busy host can also miss while etcd
    // frees the junk: a release cut off by its deadline is reported and goes on in the background.
    if let Err(e) = g.release().await {
        assert_eq!(e.kind(), etcdlock::ErrorKind::Timeout, "release: {e}");
    }
    assert!(eventually(Duration::from_secs(10), || async { keys_under(&eps, "slowread/").await.is_empty() }).await, "the queue key outlived its release");
    waiter.close().await;
    holder.close().await;
}

// covers: FAULT-UNLOCK-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_whose_reply_is_lost_succeeds_on_retry_and_never_touches_the_next_holder() {
    use etcd_testkit::proxy::{Mode, Proxy};
    let etcd = Etcd::start(1);
    let proxy = Proxy::start(etcd.members[0].client_port);
    let client = etcdlock::Client::connect([proxy.endpoint()], Default::default()).await.unwrap();
    let m = client.mutex("lostreply", 10).unwrap();
    let first = m.lock().await.unwrap();
    // The fenced delete reaches etcd and is applied; its reply never comes back, and the
    // connection breaks: the release is sent again and finds the key gone (by its own hand).
    proxy.set(Mode::HoldReplies);
    let release = tokio::spawn(async move {
        let r = first.release().await;
        (r, first.fencing_token())
    });
    let eps = etcd.endpoints();
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, "lostreply/").await.is_empty() }).await, "the delete never arrived");
    proxy.reset();
    proxy.set(Mode::Pass);
    let (r, old_token) = tokio::time::timeout(Duration::from_secs(10), release).await.expect("release hung").unwrap();
    r.expect("a release applied on the first try is a success");
    // The same process locks again at once: a late or repeated release of the first
    // acquisition must not delete this one (it is fenced by create revision).
    let second = m.lock().await.unwrap();
    assert!(second.fencing_token() > old_token);
    assert_eq!(keys_under(&eps, "lostreply/").await, vec![String::from_utf8_lossy(second.key()).into_owned()]);
    second.release().await.unwrap();
    client.close().await;
}

// covers: FAULT-UNLOCK-003
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_applied_by_a_member_that_then_goes_silent_is_a_success() {
    use etcd_testkit::proxy::Mode;
    let etcd = Etcd::start(3);
    let (proxies, via) = proxied(&etcd);
    let client = etcdlock::Client::connect(via, Default::default()).await.unwrap();
    let m = client.mutex("silentrelease", 10).unwrap();
    let g = m.lock().await.unwrap();
    // The member the KV requests go to: the one whose proxy passes most of a burst of reads.
    let before: Vec<u64> = proxies.iter().map(|p| p.sent()).collect();
    for _ in 0..50 {
        client.get(b"silentrelease-probe").await.unwrap();
    }
    let kv = (0..proxies.len()).max_by_key(|&i| proxies[i].sent() - before[i]).unwrap();
    // Its replies stop: the fenced delete is applied there and its answer never comes, so a
    // second later the channel sends the same delete to the next member, which finds the key
    // gone (by the release's own hand).
    proxies[kv].set(Mode::HoldReplies);
    let r = tokio::time::timeout(Duration::from_secs(10), g.release()).await.expect("release hung");
    proxies[kv].set(Mode::Pass);
    r.expect("a release applied at the member that went silent is a success");
    assert_eq!(g.lost_reason(), None);
    assert!(keys_under(&etcd.endpoints(), "silentrelease/").await.is_empty());
    m.try_lock().await.unwrap().release().await.unwrap();
    client.close().await;
}

// covers: FAULT-UNLOCK-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_that_fails_while_etcd_is_unreachable_still_frees_the_lock_once_it_is_back() {
    use etcd_testkit::proxy::{Mode, Proxy};
    let etcd = Etcd::start(1);
    let proxy = Proxy::start(etcd.members[0].client_port);
    // (A long idle timeout: revoking the idle lease would also free the lock, in 10 s.)
    let opts = etcdlock::ClientOptions {
        request_timeout: Duration::from_secs(1),
        idle_lease_timeout: Duration::from_secs(60),
        ..Default::default()
    };
    let holder = etcdlock::Client::connect([proxy.endpoint()], opts).await.unwrap();
    let waiter = client_for(&etcd.endpoints()).await;
    let g = holder.mutex("unreachable", 30).unwrap().lock().await.unwrap();
    let wm = waiter.mutex("unreachable", 30).unwrap();
    let wait = tokio::spawn(async move {
        wm.lock_with(etcdlock::LockOptions { timeout: Some(Duration::from_secs(15)), cancel: None, ..Default::default() }).await.map(|g| g.fencing_token())
    });
    tokio::time::sleep(Duration::from_millis(300)).await; // the waiter is queued
    // The release cannot reach etcd and fails (and the request it sent is lost with the
    // connection); the holder's lease is still alive (TTL 30 s).
    proxy.set(Mode::Blackhole);
    let err = g.release().await.unwrap_err();
    assert!(matches!(err.kind(), etcdlock::ErrorKind::Timeout | etcdlock::ErrorKind::Unavailable), "{err}");
    proxy.reset();
    proxy.set(Mode::Pass);
    // The key still goes (retried in the background), so the waiter is not stuck behind it
    // for as long as the holder's client lives.
    let token = tokio::time::timeout(Duration::from_secs(20), wait).await.unwrap().unwrap().expect("the waiter never got the lock");
    assert!(token > g.fencing_token());
    holder.close().await;
    waiter.close().await;
}
