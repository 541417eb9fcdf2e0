//! Per-client lock and registry metrics (`Client::metrics`): exact after a known sequence, and valid
//! Prometheus text.
use crate::common::*;
use etcdlock::{ErrorKind, LockOptions};
use std::time::Duration;

/// Checks the Prometheus text format line by line, and that every sample's first label is
/// `client="<client>"`; returns each sample's name{other labels} (the client label taken out)
/// and value.
fn parse_prometheus(text: &str, client: &str) -> Vec<(String, f64)> {
    let mut samples = Vec::new();
    let label = format!("client=\"{client}\"");
    for line in text.lines() {
        if line.starts_with("# HELP ") || line.starts_with("# TYPE ") {
            assert!(line.split(' ').count() >= 4, "{line}");
            continue;
        }
        let (name, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
        assert!(name.starts_with("etcdlock_") && name.chars().all(|c| c.is_ascii_alphanumeric() || "_{}=\".+,-".contains(c)), "{line}");
        let name = name.replace(&format!("{{{label},"), "{").replace(&format!("{{{label}}}"), "");
        assert!(!name.contains("client="), "client label not first or not {client:?}: {line}");
        samples.push((name, value.parse::<f64>().unwrap_or_else(|_| panic!("bad value: {line}"))));
    }
    samples
}

// covers: METRICS-LABEL-001
#[tokio::test]
async fn each_client_labels_its_series_with_its_own_name() {
    let (a, b) = (client().await, client().await);
    assert!(a.name().starts_with("etcdlock-") && b.name().starts_with("etcdlock-") && a.name() != b.name(), "{} {}", a.name(), b.name());
    let opts = etcdlock::ClientOptions { name: Some("billing \"eu\"".into()), ..Default::default() };
    let named = etcdlock::Client::connect(shared().endpoints(), opts).await.unwrap();
    assert_eq!(named.name(), "billing \"eu\"");
    let m = named.metrics();
    assert_eq!(m.client, "billing \"eu\"");
    let text = m.prometheus_text();
    assert!(text.contains("etcdlock_leases_alive{client=\"billing \\\"eu\\\"\"} 0\n"), "{text}");
    for c in [&a, &b] {
        let samples = parse_prometheus(&c.metrics().prometheus_text(), c.name());
        assert_eq!(samples.iter().find(|(n, _)| n == "etcdlock_lock_acquisitions_total").map(|s| s.1), Some(0.0));
    }
    let empty = etcdlock::ClientOptions { name: Some(String::new()), ..Default::default() };
    let e = etcdlock::Client::connect(shared().endpoints(), empty).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    for c in [a, b, named] {
        c.close().await;
    }
}

// covers: OBS-METRICS-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_and_histogram_totals_are_exact_after_a_known_sequence() {
    let eps = shared().endpoints();
    let (c, other) = (client().await, client().await);
    let name = prefix("metrics") + "jobs";
    let m = c.mutex(name.clone(), 10).unwrap();
    for _ in 0..3 {
        m.lock().await.unwrap().release().await.unwrap();
    }
    // One timeout: another client holds the lock.
    let held = other.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let e = m.lock_with(LockOptions { timeout: Some(Duration::from_millis(200)), ..Default::default() }).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LockTimeout);
    assert_eq!(m.try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    held.release().await.unwrap();
    // One loss: an operator deletes the key; the release after it fails.
    let g = m.lock().await.unwrap();
    let lost = g.lost();
    raw(&eps).await.delete(g.key().to_vec(), None).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), lost.wait()).await.unwrap();
    assert_eq!(g.release().await.unwrap_err().kind(), ErrorKind::NotHeld);

    let s = c.metrics();
    assert_eq!((s.acquisitions, s.lock_timeouts, s.would_block, s.acquire_failures), (4, 1, 1, 0));
    assert_eq!((s.releases, s.release_failures), (3, 1));
    assert_eq!(s.losses, vec![("expired", 0), ("revoked", 0), ("key_deleted", 1), ("closed", 0)]);
    assert_eq!(s.losses_total(), 1);
    assert_eq!(s.lock_wait_seconds.count, 4);
    assert_eq!(s.lock_hold_seconds.count, 4, "three releases and one loss");
    assert!(s.lock_wait_seconds.sum > 0.0 && s.lock_wait_seconds.sum < 10.0);
    assert_eq!(other.metrics().acquisitions, 1, "per client");

    let samples = parse_prometheus(&s.prometheus_text(), c.name());
    let get = |k: &str| samples.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    assert_eq!(get("etcdlock_lock_acquisitions_total"), Some(4.0));
    assert_eq!(get("etcdlock_lock_timeouts_total"), Some(1.0));
    assert_eq!(get("etcdlock_lock_losses_total{reason=\"key_deleted\"}"), Some(1.0));
    assert_eq!(get("etcdlock_lock_wait_seconds_bucket{le=\"+Inf\"}"), Some(4.0));
    assert_eq!(get("etcdlock_lock_wait_seconds_count"), Some(4.0));
    let buckets: Vec<f64> = samples.iter().filter(|(n, _)| n.starts_with("etcdlock_lock_hold_seconds_bucket")).map(|(_, v)| *v).collect();
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "cumulative: {buckets:?}");
    assert_eq!(buckets.last(), Some(&4.0));
    c.close().await;
    other.close().await;
}

// covers: OBS-METRICS-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_gauges_and_counters_follow_what_happens() {
    use etcd_testkit::proxy::{Mode, Proxy};
    // Three endpoints that are one member behind three proxies: the client takes them for three
    // members, and each proxy can hold or cut what goes through it.
    let port = shared().members[0].client_port;
    let proxies: Vec<Proxy> = (0..3).map(|_| Proxy::start(port)).collect();
    let via: Vec<String> = proxies.iter().map(Proxy::endpoint).collect();
    let c = client_for(&via).await;
    let m = c.metrics();
    assert_eq!((m.requests_in_flight, m.leases_alive, m.watches_open), (0, 0, 0));

    let lease = c.lease(2).await.unwrap();
    let key = prefix("conn-metrics") + "watched";
    let watch = c.watch(key.clone(), Default::default()).await.unwrap();
    let m = c.metrics();
    assert_eq!((m.leases_alive, m.watches_open), (1, 1));
    // A 2 s lease is renewed about every 0.7 s: its round trips are counted.
    assert!(eventually(Duration::from_secs(5), || async { c.metrics().keepalive_rtt_seconds.count >= 2 }).await);
    let rtt = c.metrics().keepalive_rtt_seconds;
    assert!(rtt.sum > 0.0 && rtt.sum < rtt.count as f64, "{rtt:?}");

    // A read whose reply is held is in flight; cut, it is sent again (a retry) and answered.
    proxies.iter().for_each(|p| p.set(Mode::HoldReplies));
    let reader = c.clone();
    let get = tokio::spawn(async move { reader.get(b"conn-metrics-probe").await });
    assert!(eventually(Duration::from_secs(2), || async { c.metrics().requests_in_flight == 1 }).await);
    proxies.iter().for_each(|p| {
        p.set(Mode::Pass);
        p.reset();
    });
    get.await.unwrap().unwrap();
    // Every stream and connection was cut: the streams reopen on the next member, and the KV
    // requests leave theirs.
    let reopened = |m: &etcdlock::Metrics, s: &str| m.stream_reopens.iter().find(|(n, _)| *n == s).map_or(0, |(_, n)| *n);
    assert!(eventually(Duration::from_secs(10), || async {
        let m = c.metrics();
        reopened(&m, "keepalive") >= 1 && reopened(&m, "watch") >= 1
    })
    .await, "{:?}", c.metrics().stream_reopens);
    let m = c.metrics();
    assert_eq!(m.requests_in_flight, 0);
    assert!(m.request_retries >= 1, "{m:?}");
    assert!(m.member_switches >= 1, "{m:?}");

    drop(watch);
    lease.revoke().await.unwrap();
    let m = c.metrics();
    assert_eq!((m.leases_alive, m.watches_open), (0, 0));
    let text = m.prometheus_text();
    let samples = parse_prometheus(&text, c.name());
    let get = |k: &str| samples.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    assert_eq!(get("etcdlock_leases_alive"), Some(0.0));
    assert_eq!(get("etcdlock_request_retries_total"), Some(m.request_retries as f64));
    assert_eq!(get("etcdlock_stream_reopens_total{stream=\"watch\"}"), Some(reopened(&m, "watch") as f64));
    assert_eq!(get("etcdlock_keepalive_rtt_seconds_count"), Some(m.keepalive_rtt_seconds.count as f64));
    assert!(text.contains("# TYPE etcdlock_watches_open gauge\n"));
    c.close().await;
}

// covers: REG-METRICS-001
#[tokio::test]
async fn registrations_and_discoveries_are_counted() {
    use etcdlock::RegistrationEvent;
    let c = client().await;
    let svc = prefix("reg-metrics") + "api";
    let mut d = c.discover(&svc).unwrap();
    d.next().await.unwrap();
    let reg = c.register(&svc, "node-1", "v1", 5).await.unwrap();
    d.next().await.unwrap();
    let m = c.metrics();
    assert_eq!((m.registrations_alive, m.discovery_snapshots), (1, 2));
    assert!(m.reregistrations.iter().all(|(_, n)| *n == 0), "{:?}", m.reregistrations);

    // Its lease revoked: lost, then registered again, counted under the loss's reason.
    let mut events = reg.events();
    let out = shared().etcdctl(&["lease", "revoke", &format!("{:x}", reg.lease_id().unwrap())]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let within = Duration::from_secs(5);
    let RegistrationEvent::Lost(reason) = tokio::time::timeout(within, events.next()).await.unwrap().unwrap() else { panic!("not lost") };
    assert!(matches!(tokio::time::timeout(within, events.next()).await.unwrap(), Some(RegistrationEvent::Restored { .. })));
    let m = c.metrics();
    let by = |r: &str| m.reregistrations.iter().find(|(n, _)| *n == r).map(|(_, n)| *n);
    assert_eq!((by(reason.as_str()), m.reregistrations.iter().map(|(_, n)| n).sum::<u64>()), (Some(1), 1), "{:?}", m.reregistrations);
    assert_eq!(m.registrations_alive, 1);

    reg.close().await.unwrap();
    let m = c.metrics();
    assert_eq!(m.registrations_alive, 0);
    let samples = parse_prometheus(&m.prometheus_text(), c.name());
    let get = |k: &str| samples.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    assert_eq!(get("etcdlock_registrations_alive"), Some(0.0));
    assert_eq!(get(&format!("etcdlock_reregistrations_total{{reason=\"{}\"}}", reason.as_str())), Some(1.0));
    assert_eq!(get("etcdlock_discovery_snapshots_total"), Some(m.discovery_snapshots as f64));
    c.close().await;
}
