//! The fair semaphore against a real etcd.
use crate::common::*;
use etcdlock::{ErrorKind, LockOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Waits until `n` keys are under `prefix`.
async fn queued(prefix: &str, n: usize) {
    let eps = shared().endpoints();
    assert!(
        eventually(Duration::from_secs(5), || async { keys_under(&eps, prefix).await.len() == n }).await,
        "expected {n} keys under {prefix}"
    );
}

// covers: SEM-LIMIT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_more_than_n_holders_counted_by_fenced_writes() {
    const N: usize = 3;
    let name = prefix("sem-limit") + "slots";
    let marks = format!("{name}-holding/");
    let (inside, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (name, marks, inside, most) = (name.clone(), marks.clone(), inside.clone(), most.clone());
        tasks.push(tokio::spawn(async move {
            // Two clients, so that keys on several leases and on one lease (`-n`) both queue.
            let client = client().await;
            let sem = client.semaphore(name, N as u32, 10).unwrap();
            let mut raw = raw(&shared().endpoints()).await;
            for round in 0..4 {
                let permit = sem.acquire().await.unwrap();
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // Each holder marks itself through a fenced write and counts the marks in etcd.
                let mark = format!("{marks}{i}-{round}");
                permit.put(mark.as_bytes(), b"x").await.unwrap();
                let held = raw.get(marks.as_str(), Some(etcd_client::GetOptions::new().with_prefix().with_count_only())).await.unwrap();
                assert!(held.count() as usize <= N, "{} holders at once", held.count());
                tokio::time::sleep(Duration::from_millis(5 * (i % 3) as u64)).await;
                permit.delete(mark.as_bytes()).await.unwrap();
                inside.fetch_sub(1, Ordering::SeqCst);
                permit.release().await.unwrap();
            }
            client.close().await;
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t).await.expect("no stall").unwrap();
    }
    assert!(most.load(Ordering::SeqCst) <= N);
    assert_eq!(most.load(Ordering::SeqCst), N, "the permits were used: {N} held at once at some point");
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
}

// covers: SEM-FIFO-001
#[tokio::test]
async fn waiters_get_permits_in_arrival_order() {
    let client = client().await;
    let name = prefix("sem-fifo") + "slots";
    let sem = Arc::new(client.semaphore(name.clone(), 2, 10).unwrap());
    let (h1, h2) = (sem.acquire().await.unwrap(), sem.acquire().await.unwrap());
    assert!(h2.fencing_token() > h1.fencing_token());
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for i in 0..5 {
        let (sem, order, tx) = (sem.clone(), order.clone(), tx.clone());
        tasks.push(tokio::spawn(async move {
            let permit = sem.acquire().await.unwrap();
            order.lock().unwrap().push((i, permit.fencing_token()));
            // Hold until told to go: each release lets exactly the next waiter in.
            let _ = tx.send(permit);
        }));
        queued(&format!("{name}/"), i + 3).await;
    }
    h1.release().await.unwrap();
    let mut held = vec![h2];
    for _ in 0..5 {
        let next = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.expect("a waiter got a permit").unwrap();
        held.push(next);
        // Two held again: release the oldest, the next waiter follows.
        held.remove(0).release().await.unwrap();
    }
    for t in tasks {
        t.await.unwrap();
    }
    let order = order.lock().unwrap().clone();
    assert_eq!(order.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
    assert!(order.windows(2).all(|w| w[0].1 < w[1].1), "tokens increase: {order:?}");
    for p in held {
        p.release().await.unwrap();
    }
    client.close().await;
}

// covers: SEM-PERMITS-001
#[tokio::test]
async fn participants_must_agree_on_the_permit_count() {
    let (a, b) = (client().await, client().await);
    let name = prefix("sem-permits") + "slots";
    assert_eq!(a.semaphore(name.clone(), 0, 10).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(a.semaphore(name.clone(), etcdlock::MAX_PERMITS + 1, 10).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let held = a.semaphore(name.clone(), 3, 10).unwrap().acquire().await.unwrap();
    let other = b.semaphore(name.clone(), 2, 10).unwrap();
    let e = other.acquire().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("3 permits"), "{e}");
    // A plain lock on the name is no participant either.
    let locked = b.mutex(name.clone() + "-plain", 10).unwrap().lock().await.unwrap();
    let e = b.semaphore(name.clone() + "-plain", 2, 10).unwrap().acquire().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    locked.release().await.unwrap();
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await.len(), 1, "the refused one left nothing");
    held.release().await.unwrap();
    // Nobody holds or waits: the count may change.
    other.acquire().await.unwrap().release().await.unwrap();
    a.close().await;
    b.close().await;
}

// covers: SEM-TRY-001, SEM-TIMEOUT-001
#[tokio::test]
async fn try_and_timeout_leave_nothing_when_full() {
    let client = client().await;
    let name = prefix("sem-try") + "slots";
    let sem = client.semaphore(name.clone(), 2, 10).unwrap();
    let (p1, p2) = (sem.try_acquire().await.unwrap(), sem.try_acquire().await.unwrap());
    assert_eq!(sem.try_acquire().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    let opts = LockOptions { timeout: Some(Duration::from_millis(300)), ..Default::default() };
    assert_eq!(sem.acquire_with(opts).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await.len(), 2);
    p1.release().await.unwrap();
    let p3 = sem.try_acquire().await.unwrap();
    p2.release().await.unwrap();
    p3.release().await.unwrap();
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
    client.close().await;
}

// covers: SEM-HERD-001
#[tokio::test]
async fn a_release_wakes_a_bounded_number_of_waiters() {
    // A private server, so that its request counters are this test's alone. Every extra waiter
    // must not add a read to a release: the count of Range requests per release stays the same
    // with 2 waiters and with 12.
    let etcd = Etcd::start(1);
    let client = client_for(&etcd.endpoints()).await;
    let ranges = || metric_sum(&etcd.metrics(0), "grpc_server_handled_total", &["grpc_method=\"Range\""]);
    let mut per_release = Vec::new();
    for waiters in [2usize, 12] {
        let name = prefix("sem-herd") + &format!("slots{waiters}");
        let sem = Arc::new(client.semaphore(name.clone(), 2, 10).unwrap());
        let holders = [sem.acquire().await.unwrap(), sem.acquire().await.unwrap()];
        // Each waiter says when it holds, and releases once told to.
        let (got, mut holding) = tokio::sync::mpsc::unbounded_channel();
        let go = etcdlock::CancellationToken::new();
        let mut tasks = Vec::new();
        for _ in 0..waiters {
            let (sem, got, go) = (sem.clone(), got.clone(), go.clone());
            tasks.push(tokio::spawn(async move {
                let permit = sem.acquire().await.unwrap();
                let _ = got.send(());
                go.cancelled().await;
                permit.release().await.unwrap();
            }));
        }
        let eps = etcd.endpoints();
        assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == waiters + 2 }).await);
        // Let every waiter settle on its watch.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = ranges();
        let [h1, h2] = holders;
        h1.release().await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), holding.recv()).await.expect("one waiter got the permit");
        tokio::time::sleep(Duration::from_millis(300)).await;
        per_release.push(ranges() - before);
        assert!(holding.try_recv().is_err(), "one release, one new holder");
        go.cancel();
        h2.release().await.unwrap();
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(10), t).await.unwrap().unwrap();
        }
    }
    assert!(per_release[1] <= per_release[0] + 1.0, "reads per release grow with the waiters: {per_release:?}");
    client.close().await;
}

// covers: SEM-COUNT-001
#[tokio::test]
async fn a_request_for_two_permits_waits_for_two_and_goes_before_later_single_ones() {
    let client = client().await;
    let name = prefix("sem-count") + "encoders";
    let single = client.semaphore(name.clone(), 3, 10).unwrap();
    let double = Arc::new(client.semaphore(name.clone(), 3, 10).unwrap().with_count(2).unwrap());
    let (a, b) = (single.acquire().await.unwrap(), single.acquire().await.unwrap());
    // One permit is free: the request for two waits at the head ...
    let waiting = {
        let double = double.clone();
        tokio::spawn(async move { double.acquire().await })
    };
    queued(&format!("{name}/"), 3).await;
    // ... and a later request for one waits behind it, though one permit is free.
    let late = single.acquire_with(LockOptions { timeout: Some(Duration::from_millis(600)), ..Default::default() }).await;
    assert_eq!(late.unwrap_err().kind(), ErrorKind::LockTimeout, "a single request passed the waiting double one");
    a.release().await.unwrap();
    let two = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("two permits were free").unwrap().unwrap();
    assert!(two.fencing_token() > b.fencing_token());
    // Two of three held by it and one by b: nothing is free.
    assert_eq!(single.try_acquire().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    let state = client.inspect(name.as_bytes()).await.unwrap();
    assert_eq!(state.holders.len(), 2);
    assert_eq!(state.holders[1].mode, "permits=3,count=2");
    two.release().await.unwrap();
    let c = single.acquire().await.unwrap();
    for g in [b, c] {
        g.release().await.unwrap();
    }
    // More than N, or none, is refused before anything is sent.
    for count in [0, 4] {
        assert_eq!(client.semaphore(name.clone(), 3, 10).unwrap().with_count(count).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
    client.close().await;
}

// covers: SEM-COUNT-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_counts_never_take_more_than_n_permits() {
    const N: u32 = 4;
    let name = prefix("sem-count-mix") + "slots";
    let used = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..6u32 {
        let (name, used) = (name.clone(), used.clone());
        tasks.push(tokio::spawn(async move {
            let client = client().await;
            let count = 1 + i % 3;
            let sem = client.semaphore(name, N, 10).unwrap().with_count(count).unwrap();
            for _ in 0..4 {
                let g = sem.acquire().await.unwrap();
                let now = used.fetch_add(count as usize, Ordering::SeqCst) + count as usize;
                assert!(now <= N as usize, "{now} permits taken at once");
                tokio::time::sleep(Duration::from_millis(10)).await;
                used.fetch_sub(count as usize, Ordering::SeqCst);
                g.release().await.unwrap();
            }
            client.close().await;
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t).await.expect("no stall").unwrap();
    }
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
}
