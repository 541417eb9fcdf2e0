//! Per-client lock metrics (`Client::metrics`): exact after a known sequence, and valid
//! Prometheus text.
mod common;
use common::*;
use etcdlock::{ErrorKind, LockOptions};
use std::time::Duration;

/// Checks the Prometheus text format line by line; returns each sample's name{labels} and value.
fn parse_prometheus(text: &str) -> Vec<(String, f64)> {
    let mut samples = Vec::new();
    for line in text.lines() {
        if line.starts_with("# HELP ") || line.starts_with("# TYPE ") {
            assert!(line.split(' ').count() >= 4, "{line}");
            continue;
        }
        let (name, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
        assert!(name.starts_with("etcdlock_") && name.chars().all(|c| c.is_ascii_alphanumeric() || "_{}=\".+".contains(c)), "{line}");
        samples.push((name.to_string(), value.parse::<f64>().unwrap_or_else(|_| panic!("bad value: {line}"))));
    }
    samples
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

    let samples = parse_prometheus(&s.prometheus_text());
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
