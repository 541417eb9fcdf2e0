//! Pools of named slots (`Client::pool`) against a real etcd: never two holders of a slot, a dead
//! holder's slot rests the reuse delay (a released one does not), FIFO admission with the
//! head-of-line rule, owners, definitions, runtime changes, bad input, faults on 3 members.

use crate::common::*;
use etcdlock::{ErrorKind, PoolAcquire, PoolOptions, SlotState};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn within(secs: f64) -> PoolAcquire {
    PoolAcquire { timeout: Some(Duration::from_secs_f64(secs)), ..Default::default() }
}

// covers: POOL-EXCL-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twelve_workers_on_three_slots_never_share_one() {
    let name = prefix("pool-excl") + "gpus";
    let marks = format!("{name}-using/");
    let holders = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..12 {
        let (name, marks, holders) = (name.clone(), marks.clone(), holders.clone());
        tasks.push(tokio::spawn(async move {
            let c = client().await;
            let pool = c.pool(name, PoolOptions::named(["gpu0", "gpu1", "gpu2"]).reuse_delay(Duration::from_secs(2))).unwrap();
            let mut raw = raw(&shared().endpoints()).await;
            for round in 0..5 {
                let held = pool.acquire(1).await.unwrap();
                assert!(holders.fetch_add(1, Ordering::SeqCst) < 3, "a fourth holder");
                let slot = held.slots()[0].to_string();
                // A fenced create-only mark per slot: a second holder of the slot would find it.
                let mark = format!("{marks}{slot}");
                let before = raw.get(mark.as_str(), None).await.unwrap();
                assert!(before.kvs().is_empty(), "slot {slot} used by two holders (worker {i}, round {round})");
                held.put(mark.as_bytes(), format!("{i}").as_bytes()).await.unwrap();
                tokio::time::sleep(Duration::from_millis(3 * (i % 4) as u64)).await;
                held.delete(mark.as_bytes()).await.unwrap();
                holders.fetch_sub(1, Ordering::SeqCst);
                held.release().await.unwrap();
            }
            c.close().await;
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(90), t).await.expect("no stall").unwrap();
    }
    let left = keys_under(&shared().endpoints(), &format!("{name}/")).await;
    assert!(left.iter().all(|k| !k.contains("/queue/") && !k.contains("/slot/") && !k.contains("/cool/")), "{left:?}");
}

// covers: POOL-REUSE-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_holders_slot_rests_the_reuse_delay_and_a_released_one_does_not() {
    let name = prefix("pool-reuse") + "ids";
    let opts = PoolOptions::named(["w0"]).ttl(5).reuse_delay(Duration::from_secs(3));
    let (a, b) = (client().await, client().await);
    let (pa, pb) = (a.pool(name.clone(), opts.clone()).unwrap(), b.pool(name.clone(), opts).unwrap());
    // A clean release: the next request gets the slot at once (well within the 3 s delay: the
    // bound leaves room for a loaded machine's round trips).
    let first = pa.acquire(1).await.unwrap();
    let token = first.tokens()[0].1;
    first.release().await.unwrap();
    let at = Instant::now();
    let second = pb.acquire_with(within(5.0)).await.unwrap();
    assert!(at.elapsed() < Duration::from_millis(1500), "a released slot rested {:?}", at.elapsed());
    assert!(second.tokens()[0].1 > token);
    // Its holder dies (its lease revoked): the waiting request gets it only after the delay.
    let waiting = tokio::spawn(async move { pa.acquire_with(within(15.0)).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut raw = raw(&shared().endpoints()).await;
    raw.lease_revoke(second.lease_id()).await.unwrap();
    let died = Instant::now();
    let third = tokio::time::timeout(Duration::from_secs(15), waiting).await.unwrap().unwrap().unwrap();
    let rested = died.elapsed();
    assert!(rested >= Duration::from_millis(2900), "a dead holder's slot was handed out after {rested:?}");
    assert!(rested < Duration::from_secs(6), "the slot rested {rested:?}");
    assert_eq!(second.release().await.unwrap_err().kind(), ErrorKind::NotHeld);
    third.release().await.unwrap();
    for c in [a, b] {
        c.close().await;
    }
}

// covers: POOL-FIFO-001
#[tokio::test]
async fn requests_are_served_in_order_and_two_slots_go_before_later_single_ones() {
    let c = client().await;
    let name = prefix("pool-fifo") + "p";
    let pool = Arc::new(c.pool(name.clone(), PoolOptions::size(3)).unwrap());
    let (x, y) = (pool.acquire(1).await.unwrap(), pool.acquire(1).await.unwrap());
    assert_eq!((x.slots(), y.slots()), (vec!["0"], vec!["1"]));
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut waiting = Vec::new();
    for (i, count) in [(0, 2), (1, 1), (2, 1)] {
        let (pool, order) = (pool.clone(), order.clone());
        waiting.push(tokio::spawn(async move {
            let h = pool.acquire(count).await.unwrap();
            order.lock().unwrap().push((i, h.slots().len()));
            h
        }));
        let queued = format!("{name}/queue/");
        assert!(eventually(Duration::from_secs(5), || async { keys_under(&shared().endpoints(), &queued).await.len() == 1 + i }).await);
    }
    // One slot is free, but the head wants two: nobody passes it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(order.lock().unwrap().is_empty(), "a later single request passed the request for two");
    x.release().await.unwrap();
    let two = waiting.remove(0).await.unwrap();
    assert_eq!(two.slots().len(), 2);
    // Singles then go one free slot at a time, in their order (each release
    // frees exactly one slot, so the order checked is etcd's, not the tasks').
    let order_now = || order.lock().unwrap().iter().map(|(i, _)| *i).collect::<Vec<_>>();
    y.release().await.unwrap();
    let one = waiting.remove(0).await.unwrap();
    assert_eq!(order_now(), vec![0, 1], "the later single request went first");
    two.release().await.unwrap();
    let other = waiting.remove(0).await.unwrap();
    assert_eq!(order_now(), vec![0, 1, 2]);
    one.release().await.unwrap();
    other.release().await.unwrap();
    // A turn that ends with its claim is no loss; every release counts.
    let m = c.metrics();
    assert!(m.losses.iter().all(|(_, n)| *n == 0), "turns counted as losses: {:?}", m.losses);
    assert_eq!(m.releases, 5, "{m:?}");
    c.close().await;
}

// covers: POOL-OWNER-001
#[tokio::test]
async fn an_acquire_with_the_owner_of_a_live_holding_returns_it() {
    let c = client().await;
    let name = prefix("pool-owner") + "p";
    let pool = c.pool(name.clone(), PoolOptions::size(2)).unwrap();
    let with = |o: &str| PoolAcquire { owner: Some(o.into()), ..within(5.0) };
    let first = pool.acquire_with(with("job-7")).await.unwrap();
    let again = pool.acquire_with(with("job-7")).await.unwrap();
    assert_eq!((again.slots(), again.fencing_token()), (first.slots(), first.fencing_token()));
    let other = pool.acquire_with(with("job-8")).await.unwrap();
    assert_ne!(other.slots(), first.slots());
    match &pool.slots().await.unwrap()[0].state {
        SlotState::Held { owner, .. } => assert_eq!(owner, "job-7"),
        s => panic!("{s:?}"),
    }
    first.release().await.unwrap();
    let fresh = pool.acquire_with(with("job-7")).await.unwrap();
    assert!(fresh.fencing_token() > first.fencing_token(), "a released holding came back");
    for h in [fresh, other] {
        h.release().await.unwrap();
    }
    c.close().await;
}

// covers: POOL-DEF-001
#[tokio::test]
async fn definitions_must_agree_and_slots_change_at_runtime() {
    let c = client().await;
    let name = prefix("pool-def") + "p";
    let pool = c.pool(name.clone(), PoolOptions::named(["a", "b"])).unwrap();
    pool.acquire(1).await.unwrap().release().await.unwrap();
    for other in [PoolOptions::named(["a", "c"]), PoolOptions::named(["a", "b"]).reuse_delay(Duration::from_secs(5))] {
        let e = c.pool(name.clone(), other).unwrap().acquire_with(within(1.0)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("add_slots"), "{e}");
    }
    // Joining takes the stored definition; joining a pool nobody defined is refused.
    let joined = c.join_pool(name.clone(), 10).unwrap().acquire(2).await.unwrap();
    joined.release().await.unwrap();
    let nobody = c.join_pool(format!("{name}-none"), 10).unwrap().acquire(1).await.unwrap_err();
    assert_eq!(nobody.kind(), ErrorKind::InvalidArgument);
    let held = pool.acquire_with(PoolAcquire { count: 2, ..within(5.0) }).await.unwrap();
    // A waiting request gets a slot added meanwhile.
    let p2 = pool.clone();
    let waiting = tokio::spawn(async move { p2.acquire_with(within(5.0)).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(pool.add_slots(["c"]).await.unwrap(), vec!["a", "b", "c"]);
    let got = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap().unwrap();
    assert_eq!(got.slots(), vec!["c"]);
    // A held slot removed goes at its release; it is not handed out meanwhile.
    assert_eq!(pool.remove_slots(["a"]).await.unwrap(), vec!["b", "c"]);
    held.release().await.unwrap();
    let states: HashMap<String, SlotState> = pool.slots().await.unwrap().into_iter().map(|s| (s.id, s.state)).collect();
    assert_eq!(states.len(), 2);
    assert_eq!(states["b"], SlotState::Free);
    assert_eq!(pool.add_slots(["b"]).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(pool.remove_slots(["zz"]).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    got.release().await.unwrap();
    // The removed slot's markers are tidied by the next acquire.
    pool.acquire(1).await.unwrap().release().await.unwrap();
    let left = keys_under(&shared().endpoints(), &format!("{name}/")).await;
    assert!(left.iter().all(|k| !k.ends_with("/a")), "{left:?}");
    c.close().await;
}

// covers: POOL-INPUT-001
#[tokio::test]
async fn bad_input_is_rejected_with_nothing_written() {
    let c = client().await;
    let name = prefix("pool-input") + "p";
    let bad = [
        PoolOptions::named(Vec::<String>::new()),
        PoolOptions::named(["a", "a"]),
        PoolOptions::named(["a/b"]),
        PoolOptions::named([""]),
        PoolOptions::named(["a"]).ttl(0),
        PoolOptions::size(etcdlock::MAX_POOL_SLOTS + 1),
    ];
    for o in bad {
        assert_eq!(c.pool(name.clone(), o).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    assert_eq!(c.pool("", PoolOptions::size(2)).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let pool = c.pool(name.clone(), PoolOptions::size(2)).unwrap();
    for count in [0, 3] {
        assert_eq!(pool.acquire(count).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    assert!(keys_under(&shared().endpoints(), &name).await.is_empty());
    // A try on a client with no lease yet takes a free slot (the try bounds the wait, not the
    // lease's grant).
    let fresh = client().await;
    let tried = fresh.pool(name.clone(), PoolOptions::size(2)).unwrap().acquire_with(PoolAcquire { timeout: Some(Duration::ZERO), ..Default::default() }).await;
    tried.expect("a try on a fresh client").release().await.unwrap();
    fresh.close().await;
    // A try that finds no slot leaves nothing but the definition.
    let held = pool.acquire(2).await.unwrap();
    let e = pool.acquire_with(PoolAcquire { timeout: Some(Duration::ZERO), ..Default::default() }).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WouldBlock);
    held.release().await.unwrap();
    assert!(keys_under(&shared().endpoints(), &format!("{name}/queue/")).await.is_empty());
    c.close().await;
}

// covers: POOL-FAULT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holdings_and_a_waiting_request_outlive_a_killed_leader() {
    let mut etcd = Etcd::start(3);
    let name = prefix("pool-fault") + "p";
    let c = client_for(&etcd.endpoints()).await;
    let pool = c.pool(name.clone(), PoolOptions::size(2).reuse_delay(Duration::from_secs(2))).unwrap();
    let held = pool.acquire(2).await.unwrap();
    let p2 = pool.clone();
    let waiting = tokio::spawn(async move { p2.acquire_with(within(30.0)).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let leader = etcd.leader().await;
    etcd.kill(leader);
    let _ = etcd.leader().await;
    assert!(held.is_held(), "the holding did not survive the leader's death");
    held.put(format!("{name}-result").as_bytes(), b"ok").await.unwrap();
    held.release().await.unwrap();
    let next = tokio::time::timeout(Duration::from_secs(30), waiting).await.unwrap().unwrap().unwrap();
    assert_eq!(next.slots(), vec!["0"]);
    next.release().await.unwrap();
    c.close().await;
}

// covers: FENCE-POOL-001
#[tokio::test]
async fn a_slots_fence_checks_while_held_and_not_after() {
    let c = client().await;
    let name = prefix("pool-fence") + "p";
    let pool = c.pool(name.clone(), PoolOptions::named(["a", "b"])).unwrap();
    let held = pool.acquire(2).await.unwrap();
    let fence = held.fence("b").await.unwrap();
    assert_eq!(fence.kind, etcdlock::FenceKind::Key);
    assert_eq!(fence.name, format!("{name}/slot/b").into_bytes());
    assert_eq!(fence.token, held.tokens().iter().find(|(s, _)| s == "b").unwrap().1);
    let parsed: etcdlock::Fence = fence.to_string().parse().unwrap();
    assert!(c.check_fence(&parsed).await.unwrap());
    assert_eq!(held.fence("z").await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    held.release().await.unwrap();
    assert!(!c.check_fence(&parsed).await.unwrap(), "a released slot's fence still checks");
    let next = pool.acquire(1).await.unwrap();
    let newer = next.fence(next.slots()[0]).await.unwrap();
    assert!(newer.token > fence.token);
    next.release().await.unwrap();
    c.close().await;
}
