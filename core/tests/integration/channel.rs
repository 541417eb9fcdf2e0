//! The channel KV requests take (core/src/h2_channel.rs): which member, large messages, and
//! moving away from a member that stops answering.
use crate::common::*;
use std::time::{Duration, Instant};

// covers: KV-LARGE-001
#[tokio::test]
async fn a_value_of_a_mebibyte_round_trips() {
    let client = client().await;
    let key = prefix("large") + "value";
    // Past every HTTP/2 window and frame size (64 KiB / 16 KiB defaults); etcd takes 1.5 MiB.
    let value: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
    client.put(key.as_bytes(), &value, None).await.unwrap();
    assert!(client.get(key.as_bytes()).await.unwrap().unwrap().value == value);
    assert!(client.delete(key.as_bytes()).await.unwrap());
    client.close().await;
}

// covers: CONN-FAILOVER-001
#[tokio::test]
async fn an_endpoint_that_refuses_connections_is_passed_over() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    let eps = [closed.clone(), shared().endpoints()[0].clone(), closed];
    let client = client_for(&eps).await;
    let m = client.mutex(prefix("failover") + "lock", 5).unwrap();
    for _ in 0..3 {
        m.lock().await.unwrap().release().await.unwrap();
    }
    client.close().await;
}

// covers: FAULT-BLACKHOLE-004
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_leave_a_member_that_goes_silent_within_seconds() {
    use etcd_testkit::proxy::Mode;
    let etcd = Etcd::start(3);
    let (proxies, via) = proxied(&etcd);
    let opts = etcdlock::ClientOptions { request_timeout: Duration::from_secs(2), ..Default::default() };
    // Connecting sends a request: the channel now uses the first endpoint.
    let client = etcdlock::Client::connect(&via, opts).await.unwrap();
    let m = client.mutex("silent-member", 10).unwrap();
    m.lock().await.unwrap().release().await.unwrap();

    let kv = kv_member(&client, &proxies).await;
    proxies[kv].set(Mode::Blackhole);
    let start = Instant::now();
    let mut failed = 0;
    let mut cycles = 0;
    while cycles < 3 && start.elapsed() < Duration::from_secs(20) {
        // A request already sent to the silent member can only time out; the next ones must
        // go elsewhere.
        match m.lock().await {
            Ok(g) => {
                g.release().await.unwrap();
                cycles += 1;
            }
            Err(e) => {
                assert!(matches!(e.kind(), etcdlock::ErrorKind::Timeout | etcdlock::ErrorKind::Unavailable), "{e}");
                failed += 1;
            }
        }
    }
    let took = start.elapsed();
    assert_eq!(cycles, 3, "no lock cycle in {took:?} ({failed} failed)");
    // A lost second or two, once: not the 10-15 s until HTTP/2 pings give up on the connection.
    assert!(took < Duration::from_secs(8), "3 cycles took {took:?} ({failed} failed)");
    proxies[kv].set(Mode::Pass);
    client.close().await;
    assert!(keys_under(&etcd.endpoints(), "silent-member/").await.is_empty());
}

// covers: FAULT-BLACKHOLE-005
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_already_sent_to_a_member_that_goes_silent_is_answered_by_another() {
    use etcd_testkit::proxy::Mode;
    let etcd = Etcd::start(3);
    let (proxies, via) = proxied(&etcd);
    let opts = etcdlock::ClientOptions { request_timeout: Duration::from_secs(5), ..Default::default() };
    let client = etcdlock::Client::connect(&via, opts).await.unwrap();
    client.put(b"silent-member-005/value", b"v", None).await.unwrap();
    let m = client.mutex("silent-member-005/lock", 10).unwrap();

    // A read, then a lock cycle, each sent first to the member that has just gone silent.
    for step in ["read", "lock cycle"] {
        let kv = kv_member(&client, &proxies).await;
        proxies[kv].set(Mode::Blackhole);
        let start = Instant::now();
        if step == "read" {
            let got = client.get(b"silent-member-005/value").await;
            assert_eq!(got.unwrap().unwrap().value, b"v");
        } else {
            m.lock().await.unwrap().release().await.unwrap();
        }
        // Within its 5 s deadline: about a second without an answer, then one to another member.
        let took = start.elapsed();
        assert!(took < Duration::from_secs(4), "the {step} took {took:?}");
        proxies[kv].set(Mode::Pass);
    }
    client.close().await;
    assert!(keys_under(&etcd.endpoints(), "silent-member-005/lock/").await.is_empty());
}

/// Which of `proxies` the client's KV requests go through: the one that passes on the most
/// bytes while the client reads (the lease and watch streams send little meanwhile).
async fn kv_member(client: &etcdlock::Client, proxies: &[etcd_testkit::proxy::Proxy]) -> usize {
    let before: Vec<u64> = proxies.iter().map(|p| p.sent()).collect();
    for _ in 0..20 {
        client.get(b"kv-member-probe").await.unwrap();
    }
    let grew = |i: usize| proxies[i].sent() - before[i];
    (0..proxies.len()).max_by_key(|&i| grew(i)).unwrap()
}

// covers: ERR-TIMEOUT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_its_deadline_is_timeout_and_a_lock_wait_past_its_own_is_lock_timeout() {
    use etcd_testkit::proxy::{Mode, Proxy};
    use etcdlock::{ErrorKind, LockOptions};
    let proxy = Proxy::start(shared().members[0].client_port);
    let opts = etcdlock::ClientOptions { request_timeout: Duration::from_millis(500), ..Default::default() };
    let client = etcdlock::Client::connect(&[proxy.endpoint()], opts).await.unwrap();
    let name = prefix("timeouts") + "lock";
    // The lock's own timeout: LockTimeout. (Holder and waiter talk to etcd directly: only the
    // request below goes through the proxy and its 500 ms deadline.)
    let other = client_for(&shared().endpoints()).await;
    let held = other.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let within = LockOptions { timeout: Some(Duration::from_millis(300)), cancel: None, ..Default::default() };
    let e = other.mutex(name.clone(), 10).unwrap().lock_with(within).await.unwrap_err();
    assert_eq!((e.kind(), e.kind().code()), (ErrorKind::LockTimeout, "LOCK_TIMEOUT"), "{e}");

    // A request whose answer never comes: Timeout.
    proxy.set(Mode::HoldReplies);
    let e = client.get(b"anything").await.unwrap_err();
    assert_eq!((e.kind(), e.kind().code()), (ErrorKind::Timeout, "TIMEOUT"), "{e}");
    proxy.set(Mode::Pass);
    held.release().await.unwrap();
    client.close().await;
    other.close().await;
}

// covers: LOCK-CANCEL-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_that_succeeds_after_its_cancel_is_released_and_cancelled() {
    use etcd_testkit::proxy::{Mode, Proxy};
    use etcdlock::{CancellationToken, ErrorKind, LockOptions};
    let proxy = Proxy::start(shared().members[0].client_port);
    let client = etcdlock::Client::connect(&[proxy.endpoint()], Default::default()).await.unwrap();
    let name = prefix("cancel-won") + "lock";
    let m = client.mutex(name.clone(), 10).unwrap();
    // A first cycle leaves the client's lease for TTL 10 in place: the next acquire's first
    // request is its enqueue.
    m.lock().await.unwrap().release().await.unwrap();

    // The enqueue reaches etcd (the lock is free: it makes us the holder) but its answer is
    // held; the caller cancels meanwhile; then the answer comes.
    proxy.set(Mode::HoldReplies);
    let cancel = CancellationToken::new();
    let acquire = tokio::spawn({
        let (m, cancel) = (client.mutex(name.clone(), 10).unwrap(), cancel.clone());
        async move { m.lock_with(LockOptions { timeout: None, cancel: Some(cancel), ..Default::default() }).await }
    });
    let landed = || async { keys_under(&shared().endpoints(), &format!("{name}/")).await.len() == 1 };
    assert!(eventually(Duration::from_secs(5), landed).await, "the enqueue never landed");
    cancel.cancel();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!acquire.is_finished(), "the enqueue in flight is waited for");
    proxy.set(Mode::Pass);
    let e = acquire.await.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    // Released before the call returned: nobody holds it.
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await, Vec::<String>::new());
    client.close().await;
}
