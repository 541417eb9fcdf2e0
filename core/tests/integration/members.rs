//! Member selection: no member can stall a client (one that accepts connections and never
//! answers, or one that drops SYNs), clients spread over a cluster's members, and one client
//! keeps many leases alive, also across a reset of its keepalive stream.
use crate::common::*;
use etcd_testkit::silent::{Silent, Unaccepting};
use std::time::{Duration, Instant};

/// Connects to `eps` and makes 5 lock cycles, one client after another, until `tried` says
/// the bad endpoint was tried (every client starts at a random endpoint) and at least two
/// clients are done; at most 16 (the bad endpoint never first: one in 2^16). Returns the
/// slowest connect.
async fn connect_and_lock(eps: &[String], test: &str, tried: impl Fn(Duration) -> bool) -> Duration {
    let mut slowest = Duration::ZERO;
    let mut seen = false;
    for c in 0..16 {
        if seen && c >= 2 {
            break;
        }
        let start = Instant::now();
        let client = etcdlock::Client::connect(eps, etcdlock::ClientOptions::default()).await;
        let took = start.elapsed();
        let client = client.unwrap_or_else(|e| panic!("client {c}: connect failed after {took:?}: {e}"));
        // Well under the 5 s connect and request timeouts: a bad member may cost one
        // connection attempt, never a whole deadline.
        assert!(took < Duration::from_secs(4), "client {c}: connect took {took:?}");
        slowest = slowest.max(took);
        let m = client.mutex(prefix(test) + "lock", 5).unwrap();
        let start = Instant::now();
        for i in 0..5 {
            let g = m.lock().await.unwrap_or_else(|e| panic!("client {c}: cycle {i}: {e}"));
            g.release().await.unwrap();
        }
        let cycles = start.elapsed();
        assert!(cycles < Duration::from_secs(4), "client {c}: 5 lock cycles took {cycles:?}");
        client.close().await;
        seen |= tried(took);
    }
    assert!(seen, "no client tried the bad endpoint");
    eprintln!("{test}: slowest connect: {slowest:?}");
    slowest
}

// covers: CONN-SILENT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_endpoint_that_accepts_and_never_answers_costs_at_most_a_connection_attempt() {
    let silent = Silent::start();
    let eps = [silent.endpoint(), shared().endpoints()[0].clone()];
    // A connect to the one member on this machine takes milliseconds; one that began at the
    // silent endpoint waited for its connection attempt's bound.
    connect_and_lock(&eps, "silent-accept", |connect| connect >= Duration::from_millis(500)).await;
    assert!(silent.accepted() > 0);
}

// covers: CONN-SILENT-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_endpoint_that_drops_syns_costs_at_most_a_connection_attempt() {
    let unaccepting = Unaccepting::start();
    let eps = [unaccepting.endpoint(), shared().endpoints()[0].clone()];
    // As above: a connect that began at the endpoint that drops SYNs is the slow one.
    connect_and_lock(&eps, "silent-syn", |connect| connect >= Duration::from_millis(500)).await;
}

/// Successful unary `method` calls each member of `etcd` has served so far.
fn served(etcd: &Etcd, method: &str) -> Vec<f64> {
    let label = format!("grpc_method=\"{method}\"");
    (0..etcd.members.len()).map(|i| metric_sum(&etcd.metrics(i), "grpc_server_handled_total", &[&label, "grpc_code=\"OK\""])).collect()
}

// covers: CONN-SPREAD-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_spread_their_requests_over_the_members() {
    let etcd = Etcd::start(3);
    let eps = etcd.endpoints();
    let before = served(&etcd, "Put");
    // Twelve clients all on one member of three by chance: 3 in 3^12.
    const CLIENTS: usize = 12;
    const PUTS: usize = 3;
    let key = prefix("spread");
    for c in 0..CLIENTS {
        let client = client_for(&eps).await;
        for i in 0..PUTS {
            client.put(format!("{key}{c}/{i}").as_bytes(), b"v", None).await.unwrap();
        }
        client.close().await;
    }
    let after = served(&etcd, "Put");
    let per_member: Vec<f64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    eprintln!("puts served per member: {per_member:?}");
    assert_eq!(per_member.iter().sum::<f64>(), (CLIENTS * PUTS) as f64, "etcd's metrics did not count every put");
    let busy = per_member.iter().filter(|n| **n > 0.0).count();
    assert!(busy >= 2, "all {CLIENTS} clients sent their requests to one member: {per_member:?}");
}

/// Which of `ids` etcd no longer has.
async fn gone(etcd: &Etcd, ids: &[i64]) -> Vec<i64> {
    let known: std::collections::HashSet<i64> = lease_ids(&etcd.endpoints()).await.into_iter().collect();
    ids.iter().copied().filter(|id| !known.contains(id)).collect()
}

/// Waits `span` while checking every 500 ms that no lease is lost locally.
async fn all_alive_for(leases: &[etcdlock::Lease], span: Duration, when: &str) {
    let start = Instant::now();
    for _ in 0..(span.as_millis() / 500) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let lost: Vec<_> = leases.iter().filter(|l| !l.is_alive()).map(|l| (l.id(), l.lost_reason())).collect();
        assert!(lost.is_empty(), "{when}: {} of {} leases lost after {:?}, e.g. {:?}", lost.len(), leases.len(), start.elapsed(), &lost[..lost.len().min(3)]);
    }
}

// covers: LEASE-MANY-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_leases_on_one_client_stay_alive_also_across_a_keepalive_stream_reset() {
    const LEASES: usize = 1000;
    const TTL: i64 = 3;
    let etcd = Etcd::start(1);
    // Through a proxy, to reset every connection of the client at once.
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let client = client_for(&[proxy.endpoint()]).await;
    let start = Instant::now();
    let grants: Vec<_> = (0..LEASES)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.lease(TTL).await })
        })
        .collect();
    let mut leases = Vec::with_capacity(LEASES);
    for g in grants {
        leases.push(g.await.unwrap().expect("grant"));
    }
    eprintln!("granted {LEASES} leases in {:?}", start.elapsed());
    let ids: Vec<i64> = leases.iter().map(|l| l.id()).collect();

    // Three TTLs: every lease renewed several times.
    all_alive_for(&leases, Duration::from_secs(3 * TTL as u64), "before the reset").await;
    let missing = gone(&etcd, &ids).await;
    assert!(missing.is_empty(), "etcd lost {} of {LEASES} leases before the reset", missing.len());
    // Leases granted together are renewed together, and their answers arrive in bursts of
    // hundreds: each must be credited, or its keepalive looks unanswered and the stream is
    // judged silent and reopened.
    let reopened = |m: &etcdlock::Metrics| m.stream_reopens.iter().find(|(s, _)| *s == "keepalive").map_or(0, |(_, n)| *n);
    assert_eq!(reopened(&client.metrics()), 0, "the keepalive stream was reopened without a fault");

    // The keepalive stream (and every other connection) breaks: when it reopens, every lease
    // is due at once.
    proxy.reset();
    all_alive_for(&leases, Duration::from_secs(3 * TTL as u64), "after the reset").await;
    let missing = gone(&etcd, &ids).await;
    assert!(missing.is_empty(), "etcd lost {} of {LEASES} leases after the reset", missing.len());
    client.close().await;
    assert!(lease_ids(&etcd.endpoints()).await.is_empty(), "close() revokes every lease");
}
