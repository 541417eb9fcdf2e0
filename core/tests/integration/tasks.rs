//! The task queue against real etcd: order, idempotent puts, fenced acks, delays, dead letters,
//! lost claims, no herd, faults.

use crate::common::*;
use etcdlock::{ClaimOptions, ErrorKind, Op, QueueOptions, TaskOptions, TaskQueue};
use std::time::{Duration, Instant};

fn opts(ttl: i64, max_attempts: u32) -> QueueOptions {
    QueueOptions { ttl_secs: ttl, max_attempts, ..Default::default() }
}

fn within(secs: f64) -> ClaimOptions {
    ClaimOptions { timeout: Some(Duration::from_secs_f64(secs)), ..Default::default() }
}

fn now() -> ClaimOptions {
    ClaimOptions { timeout: Some(Duration::ZERO), ..Default::default() }
}

fn with_id(id: &str, priority: i32) -> TaskOptions {
    TaskOptions { id: Some(id.into()), priority, delay: None }
}

async fn put(q: &TaskQueue, id: &str, priority: i32) {
    assert_eq!(q.put(id.as_bytes(), with_id(id, priority)).await.unwrap(), id);
}

/// Claims and acks everything available now; returns the ids in claim order.
async fn drain(q: &TaskQueue) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..1000 {
        match q.claim(now()).await {
            Ok(t) => {
                ids.push(t.id().to_string());
                t.ack().await.unwrap();
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return ids,
            Err(e) => panic!("{e}"),
        }
    }
    panic!("more than 1000 tasks");
}

// covers: QUEUE-ORDER-001
#[tokio::test]
async fn claims_take_the_highest_priority_first_then_the_order_of_the_puts() {
    let c = client().await;
    let name = prefix("q-order") + "q";
    let q = c.queue(name.clone(), opts(10, 5)).unwrap();
    for (id, p) in [("a", 0), ("b", 5), ("c", 0), ("d", -1), ("e", 5), ("f", 0)] {
        put(&q, id, p).await;
    }
    assert_eq!(drain(&q).await, ["b", "e", "a", "c", "f", "d"]);
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty(), "an acked queue leaves keys");
    c.close().await;
}

// covers: QUEUE-PUT-ID-001
#[tokio::test]
async fn a_put_with_the_id_of_an_item_that_exists_changes_nothing() {
    let c = client().await;
    let q = c.queue(prefix("q-idem") + "q", opts(10, 1)).unwrap();
    put(&q, "x", 0).await;
    assert_eq!(q.put(b"other", with_id("x", 9)).await.unwrap(), "x");
    assert_eq!(q.stats().await.unwrap().pending, 1);
    let t = q.claim(now()).await.unwrap();
    assert_eq!(t.payload(), b"x");
    // Claimed, then dead (max_attempts 1): still the same item.
    assert_eq!(q.put(b"other", with_id("x", 0)).await.unwrap(), "x");
    t.nack().await.unwrap();
    assert_eq!(q.put(b"other", with_id("x", 0)).await.unwrap(), "x");
    let s = q.stats().await.unwrap();
    assert_eq!((s.pending, s.claimed, s.dead), (0, 0, 1));
    // Once it is gone, the id is free again.
    assert!(q.delete_dead("x").await.unwrap());
    assert_eq!(q.put(b"new", with_id("x", 0)).await.unwrap(), "x");
    assert_eq!(q.claim(now()).await.unwrap().payload(), b"new");
    // Without an id, each put is an item of its own.
    let (a, b) = (q.put(b"p", TaskOptions::default()).await.unwrap(), q.put(b"p", TaskOptions::default()).await.unwrap());
    assert_ne!(a, b);
    c.close().await;
}

// covers: QUEUE-ACK-001
#[tokio::test]
async fn an_ack_with_a_write_commits_both_while_the_claim_holds_and_neither_after() {
    let c = client().await;
    let name = prefix("q-ack") + "q";
    let result = format!("{name}-results/1");
    let q = c.queue(name.clone(), opts(10, 5)).unwrap();
    put(&q, "1", 0).await;
    let t = q.claim(now()).await.unwrap();
    assert_eq!((t.attempts(), t.priority()), (1, 0));
    assert!(t.fencing_token() > 0 && t.is_held());
    // The claim is lost (its lease revoked, as when a worker's lease ends): the ack and its
    // write fail together, and the item is claimable again.
    let mut raw = raw(&shared().endpoints()).await;
    let claim_key = keys_under(&shared().endpoints(), &format!("{name}/claim/")).await.pop().unwrap();
    let lease = raw.get(claim_key.as_str(), None).await.unwrap().kvs()[0].lease();
    raw.lease_revoke(lease).await.unwrap();
    let e = t.ack_with(&[Op::put(result.as_str(), "late")]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotHeld);
    assert!(raw.get(result.as_str(), None).await.unwrap().kvs().is_empty(), "a lost claim's write committed");
    let t2 = q.claim(within(5.0)).await.unwrap();
    assert_eq!((t2.id(), t2.attempts()), ("1", 2));
    assert!(t2.fencing_token() > t.fencing_token());
    t2.ack_with(&[Op::put(result.as_str(), "ok")]).await.unwrap();
    assert_eq!(raw.get(result.as_str(), None).await.unwrap().kvs()[0].value(), b"ok");
    assert_eq!(t2.ack().await.unwrap_err().kind(), ErrorKind::NotHeld, "a second ack");
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
    // A task's writes stay out of the queue's keys.
    put(&q, "2", 0).await;
    let t3 = q.claim(now()).await.unwrap();
    assert_eq!(t3.put(format!("{name}/items/x").as_bytes(), b"v").await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    t3.ack().await.unwrap();
    c.close().await;
}

// covers: QUEUE-DELAY-001
#[tokio::test]
async fn a_delayed_item_is_not_claimable_before_its_delay() {
    let c = client().await;
    let q = c.queue(prefix("q-delay") + "q", opts(10, 5)).unwrap();
    let at = Instant::now();
    q.put(b"later", TaskOptions { id: Some("d".into()), priority: 0, delay: Some(Duration::from_secs(2)) }).await.unwrap();
    put(&q, "now", 0).await;
    let s = q.stats().await.unwrap();
    assert_eq!((s.pending, s.delayed), (1, 1));
    let t = q.claim(now()).await.unwrap();
    assert_eq!(t.id(), "now");
    t.nack_after(Duration::from_millis(2500)).await.unwrap(); // 3 s
    let nacked = Instant::now();
    assert_eq!(q.claim(now()).await.unwrap_err().kind(), ErrorKind::WouldBlock);
    let first = q.claim(within(10.0)).await.unwrap();
    assert_eq!(first.id(), "d");
    assert!(at.elapsed() >= Duration::from_secs(2), "claimed after {:?}", at.elapsed());
    first.ack().await.unwrap();
    let second = q.claim(within(10.0)).await.unwrap();
    assert_eq!((second.id(), second.attempts()), ("now", 2));
    assert!(nacked.elapsed() >= Duration::from_secs(3), "claimed {:?} after a nack of 3 s", nacked.elapsed());
    second.ack().await.unwrap();
    c.close().await;
}

// covers: QUEUE-DEAD-001
#[tokio::test]
async fn an_item_goes_to_the_dead_letters_after_its_last_delivery_and_can_come_back() {
    let c = client().await;
    let name = prefix("q-dead") + "q";
    let q = c.queue(name.clone(), opts(10, 2)).unwrap();
    put(&q, "p", 3).await;
    q.claim(now()).await.unwrap().nack().await.unwrap();
    let t = q.claim(now()).await.unwrap();
    assert_eq!(t.attempts(), 2);
    t.nack().await.unwrap();
    assert_eq!(q.claim(now()).await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert_eq!(q.dead().await.unwrap(), [etcdlock::DeadTask { id: "p".into(), payload: b"p".to_vec(), attempts: 2, priority: 3 }]);
    // A delivery lost past the limit (the worker died) is buried by the next claim instead.
    put(&q, "k", 0).await;
    for _ in 0..2 {
        drop(q.claim(now()).await.unwrap()); // given back in the background
        assert!(eventually(Duration::from_secs(5), || async { q.stats().await.unwrap().pending == 1 }).await);
    }
    assert_eq!(q.claim(now()).await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert_eq!(q.stats().await.unwrap().dead, 2);
    assert!(q.requeue_dead("p").await.unwrap());
    assert!(!q.requeue_dead("p").await.unwrap(), "requeued twice");
    let back = q.claim(now()).await.unwrap();
    assert_eq!((back.id(), back.attempts(), back.priority()), ("p", 1, 3));
    back.ack().await.unwrap();
    assert!(q.delete_dead("k").await.unwrap());
    assert!(!q.delete_dead("k").await.unwrap());
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
    c.close().await;
}

// covers: QUEUE-INPUT-001
#[tokio::test]
async fn bad_input_is_rejected_with_nothing_written() {
    let c = client().await;
    let name = prefix("q-input") + "q";
    fn invalid<T>(r: etcdlock::Result<T>) {
        assert_eq!(r.map(drop).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    invalid(c.queue("", opts(10, 5)));
    invalid(c.queue(name.clone() + "/", opts(10, 5)));
    invalid(c.queue(name.clone(), opts(0, 5)));
    invalid(c.queue(name.clone(), opts(10, 0)));
    let q = c.queue(name.clone(), opts(10, 5)).unwrap();
    invalid(q.put(&vec![0u8; etcdlock::MAX_TASK_PAYLOAD_LEN + 1], TaskOptions::default()).await);
    invalid(q.put(b"x", with_id("", 0)).await);
    invalid(q.put(b"x", with_id("a\nb", 0)).await);
    invalid(q.put(b"x", with_id(&"i".repeat(etcdlock::MAX_TASK_ID_LEN + 1), 0)).await);
    invalid(q.put(b"x", TaskOptions { delay: Some(Duration::from_secs(u64::MAX / 4)), ..Default::default() }).await);
    invalid(q.put(b"x", TaskOptions { delay: Some(Duration::MAX), ..Default::default() }).await);
    invalid(q.claim(ClaimOptions { worker: vec![b'w'; etcdlock::MAX_LOCK_VALUE_LEN + 1], ..Default::default() }).await);
    invalid(q.requeue_dead("").await);
    assert!(keys_under(&shared().endpoints(), &format!("{name}")).await.is_empty(), "bad input wrote something");
    // The largest payload goes through.
    let big = vec![7u8; etcdlock::MAX_TASK_PAYLOAD_LEN];
    q.put(&big, TaskOptions::default()).await.unwrap();
    let t = q.claim(now()).await.unwrap();
    assert_eq!(t.payload().len(), big.len());
    t.ack().await.unwrap();
    c.close().await;
    assert_eq!(q.put(b"x", TaskOptions::default()).await.unwrap_err().kind(), ErrorKind::Closed);
}

// covers: QUEUE-LOST-001
#[tokio::test]
async fn a_worker_cut_off_past_its_ttl_loses_its_claim_to_another_whose_result_stands() {
    let etcd = Etcd::start(1);
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let slow = client_for(&[proxy.endpoint()]).await;
    let other = client_for(&etcd.endpoints()).await;
    let name = prefix("q-lost") + "q";
    let result = format!("{name}-result");
    let q1 = slow.queue(name.clone(), opts(2, 5)).unwrap();
    let q2 = other.queue(name.clone(), opts(2, 5)).unwrap();
    put(&q2, "job", 0).await;
    let t1 = q1.claim(now()).await.unwrap();
    let cut = Instant::now();
    proxy.set(proxy::Mode::Blackhole);
    // Claimed by the other worker once etcd ends the first one's lease: within TTL + 1 s.
    let t2 = q2.claim(within(10.0)).await.unwrap();
    let took = cut.elapsed();
    assert!(took < Duration::from_secs(4), "claimed again after {took:?}");
    assert_eq!(t2.attempts(), 2);
    assert!(t1.lost_reason().is_some(), "the cut-off worker still counts itself holding");
    proxy.set(proxy::Mode::Pass);
    assert_eq!(t1.ack_with(&[Op::put(result.as_str(), "first")]).await.unwrap_err().kind(), ErrorKind::NotHeld);
    t2.ack_with(&[Op::put(result.as_str(), "second")]).await.unwrap();
    let mut raw = raw(&etcd.endpoints()).await;
    assert_eq!(raw.get(result.as_str(), None).await.unwrap().kvs()[0].value(), b"second");
    slow.close().await;
    other.close().await;
}

// covers: QUEUE-HERD-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_item_wakes_one_of_sixteen_idle_workers_and_they_are_served_in_order() {
    let etcd = Etcd::start(1);
    let name = prefix("q-herd") + "q";
    let producer = client_for(&etcd.endpoints()).await;
    let q = producer.queue(name.clone(), opts(10, 5)).unwrap();
    let mut workers = Vec::new();
    for i in 0..16 {
        let c = client_for(&etcd.endpoints()).await;
        let wq = c.queue(name.clone(), opts(10, 5)).unwrap();
        workers.push(tokio::spawn(async move {
            let t = wq.claim(ClaimOptions { timeout: Some(Duration::from_secs(60)), worker: format!("w{i}").into_bytes(), ..Default::default() }).await;
            let got = t.as_ref().map(|t| t.id().to_string()).map_err(|e| e.to_string());
            if let Ok(t) = t {
                t.ack().await.unwrap();
            }
            c.close().await;
            (i, got)
        }));
        // Each one waiting before the next starts: their order is known.
        assert!(eventually(Duration::from_secs(5), || async { keys_under(&etcd.endpoints(), &format!("{name}/workers/")).await.len() == i + 1 }).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let handled = |m: &str| metric_sum(&etcd.metrics(0), "grpc_server_handled_total", &[&format!("grpc_method=\"{m}\"")]);
    let (ranges, txns) = (handled("Range"), handled("Txn"));
    put(&q, "one", 0).await;
    let first = tokio::time::timeout(Duration::from_secs(10), workers.remove(0)).await.unwrap().unwrap();
    assert_eq!(first, (0, Ok("one".to_string())), "the first worker to wait gets the first item");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (ranges, txns) = (handled("Range") - ranges, handled("Txn") - txns);
    eprintln!("one new item with 16 idle workers: {ranges} ranges, {txns} txns on the server");
    // One worker reads and claims, the next takes its turn, reads once and looks for new items
    // three times in its watch's first 110 ms, and reads the head again (3 Ranges) if its
    // watch started past its read (tasks/watch.rs): 11-14; sixteen workers would be 32+.
    assert!(ranges <= 16.0 && txns <= 12.0, "{ranges} ranges and {txns} txns for one item: a herd");
    for (n, w) in workers.iter().enumerate() {
        assert!(!w.is_finished(), "worker {} woke for nothing", n + 1);
    }
    for i in 0..15 {
        put(&q, &format!("i{i}"), 0).await;
    }
    for (n, w) in workers.into_iter().enumerate() {
        let (i, got) = tokio::time::timeout(Duration::from_secs(20), w).await.unwrap().unwrap();
        assert_eq!((i, got.unwrap()), (n + 1, format!("i{n}")), "served out of order");
    }
    assert!(keys_under(&etcd.endpoints(), &format!("{name}/")).await.is_empty());
    producer.close().await;
}

// covers: QUEUE-ONCE-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_workers_process_every_item_exactly_once_and_leave_nothing() {
    let etcd = Etcd::start(1);
    let name = prefix("q-once") + "q";
    let producer = client_for(&etcd.endpoints()).await;
    let q = producer.queue(name.clone(), opts(5, 5)).unwrap();
    for i in 0..40 {
        put(&q, &format!("{i:02}"), i % 3).await;
    }
    let mut workers = Vec::new();
    for _ in 0..4 {
        let c = client_for(&etcd.endpoints()).await;
        let wq = c.queue(name.clone(), opts(5, 5)).unwrap();
        let results = format!("{name}-done/");
        workers.push(tokio::spawn(async move {
            let mut done = Vec::new();
            loop {
                match wq.claim(within(1.0)).await {
                    Ok(t) => {
                        let key = format!("{results}{}", t.id());
                        t.ack_with(&[Op::put(key.as_str(), t.fencing_token().to_string())]).await.unwrap();
                        done.push(t.id().to_string());
                    }
                    Err(e) if e.kind() == ErrorKind::LockTimeout => break,
                    Err(e) => panic!("{e}"),
                }
            }
            c.close().await;
            done
        }));
    }
    let mut all = Vec::new();
    for w in workers {
        all.extend(tokio::time::timeout(Duration::from_secs(60), w).await.unwrap().unwrap());
    }
    all.sort();
    assert_eq!(all, (0..40).map(|i| format!("{i:02}")).collect::<Vec<_>>());
    assert_eq!(keys_under(&etcd.endpoints(), &format!("{name}-done/")).await.len(), 40);
    assert!(keys_under(&etcd.endpoints(), &format!("{name}/")).await.is_empty());
    producer.close().await;
    assert!(eventually(Duration::from_secs(5), || async { lease_ids(&etcd.endpoints()).await.is_empty() }).await, "a lease was left");
}

// covers: QUEUE-FAULT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_claim_outlives_a_killed_leader_and_a_compaction() {
    let mut etcd = Etcd::start(3);
    let name = prefix("q-fault") + "q";
    let worker = client_for(&etcd.endpoints()).await;
    let wq = worker.queue(name.clone(), opts(10, 5)).unwrap();
    let waiting = tokio::spawn(async move { wq.claim(within(30.0)).await.map(|t| (t.id().to_string(), t)) });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let leader = etcd.leader().await;
    etcd.kill(leader);
    let _ = etcd.leader().await; // a new one
    let live: Vec<String> = (0..3).filter(|i| *i != leader).map(|i| etcd.members[i].endpoint()).collect();
    let mut raw = raw(&live).await;
    let mut head = 0;
    for i in 0..5 {
        head = raw.put(format!("{name}-bump"), format!("{i}"), None).await.unwrap().header().unwrap().revision();
    }
    raw.compact(head, None).await.unwrap();
    let producer = client_for(&live).await;
    put(&producer.queue(name.clone(), opts(10, 5)).unwrap(), "after", 0).await;
    let (id, t) = tokio::time::timeout(Duration::from_secs(30), waiting).await.unwrap().unwrap().unwrap();
    assert_eq!(id, "after");
    t.ack().await.unwrap();
    worker.close().await;
    producer.close().await;
}

// covers: QUEUE-MAXPROC-001
#[tokio::test]
async fn a_claim_past_max_processing_ends_and_its_item_is_claimable_again() {
    let c = client().await;
    let name = prefix("q-maxproc") + "q";
    let q = c.queue(name.clone(), QueueOptions { ttl_secs: 10, max_attempts: 5, max_processing: Some(Duration::from_secs(1)) }).unwrap();
    put(&q, "hung", 0).await;
    let t = q.claim(now()).await.unwrap();
    let at = Instant::now();
    let reason = tokio::time::timeout(Duration::from_secs(5), t.lost().wait()).await.expect("the claim outlived max_processing");
    assert_eq!(reason, etcdlock::LostReason::KeyDeleted);
    assert!(at.elapsed() >= Duration::from_millis(900), "ended after {:?}", at.elapsed());
    let again = q.claim(within(5.0)).await.unwrap();
    assert_eq!((again.id(), again.attempts()), ("hung", 2));
    assert_eq!(t.ack().await.unwrap_err().kind(), ErrorKind::NotHeld);
    again.ack().await.unwrap();
    // A task acked in time is not touched by its timer.
    put(&q, "quick", 0).await;
    q.claim(now()).await.unwrap().ack().await.unwrap();
    assert_eq!(c.queue(name, QueueOptions { max_processing: Some(Duration::ZERO), ..Default::default() }).unwrap_err().kind(), ErrorKind::InvalidArgument);
    c.close().await;
}
