//! `cargo run --release -p etcdlock-bench --example paired -- URL [CYCLES]`
//!
//! Latency of an etcdlock lock/release cycle next to the raw loop's put-if-absent Txn and
//! Delete, alternating in one task against the etcd at URL. Also the same RPCs the lock sends
//! (the uncontended enqueue Txn, the fenced delete Txn) sent raw, which splits the
//! difference into what etcd charges for the lock's requests and what the library adds; and
//! both raw loops once over etcd-client's own channel and once over the one etcdlock's KV
//! requests take, which shows what the transport saves. Throughput runs on a shared
//! machine drift by +-20 % between runs; paired medians differ by a few microseconds, which
//! is what finding the library's overhead needs.

#[path = "../src/cycles.rs"]
mod cycles;

use cycles::{raw_cycle, shaped_cycle};
use etcd_client::Client;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let endpoint = args.next().expect("usage: paired URL [CYCLES]");
    let cycles: usize = args.next().map_or(3000, |s| s.parse().expect("CYCLES"));
    etcdlock::runtime::block_on(run(endpoint, cycles)).expect("paired panicked");
}

async fn run(endpoint: String, cycles: usize) {
    let mut tonic = Client::connect([endpoint.clone()], None).await.unwrap();
    // The channel etcdlock's own KV requests take: the raw loop's requests on it show what
    // the library adds, apart from what the transport saves.
    let opts = etcd_client::ConnectOptions::new().with_require_leader(true);
    let mut h2 = etcdlock::transport::h2_channel::etcd_client(&[endpoint.clone()], Duration::from_secs(5), opts).await.unwrap();
    let lease = tonic.lease_grant(60, None).await.unwrap().id();
    let base = format!("paired/{}", std::process::id());
    let client = etcdlock::Client::connect([endpoint], Default::default()).await.unwrap();
    let mutex = client.mutex(format!("{base}/lock"), 60).unwrap();
    mutex.lock().await.unwrap().release().await.unwrap();

    let (shaped, shaped_h2) = (format!("{base}/shaped/"), format!("{base}/shaped-h2/"));
    let (shaped_key, shaped_h2_key) = (format!("{shaped}{lease:x}"), format!("{shaped_h2}{lease:x}"));
    // Rows: raw (tonic), raw (h2), lock, lock-shaped (tonic), lock-shaped (h2); two steps each.
    let mut samples: [[Vec<Duration>; 2]; 5] = Default::default();
    for _ in 0..cycles {
        let row = raw_cycle(&mut tonic, &format!("{base}/raw"), lease).await;
        samples[0].iter_mut().zip(row).for_each(|(s, d)| s.push(d));
        let row = raw_cycle(&mut h2, &format!("{base}/raw-h2"), lease).await;
        samples[1].iter_mut().zip(row).for_each(|(s, d)| s.push(d));
        let t0 = Instant::now();
        let guard = mutex.lock().await.unwrap();
        let t1 = Instant::now();
        guard.release().await.unwrap();
        samples[2].iter_mut().zip([t1 - t0, t1.elapsed()]).for_each(|(s, d)| s.push(d));
        let row = shaped_cycle(&mut tonic, &shaped, &shaped_key, lease).await;
        samples[3].iter_mut().zip(row).for_each(|(s, d)| s.push(d));
        let row = shaped_cycle(&mut h2, &shaped_h2, &shaped_h2_key, lease).await;
        samples[4].iter_mut().zip(row).for_each(|(s, d)| s.push(d));
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let cycle: Vec<Duration> = samples.iter_mut().map(|[a, b]| median(a) + median(b)).collect();
    let names = [
        "raw loop (etcd-client's channel): txn, delete",
        "raw loop (etcdlock's channel):    txn, delete",
        "etcdlock: lock, release",
        "the lock's requests sent raw (etcd-client's channel): enqueue, fenced delete",
        "the lock's requests sent raw (etcdlock's channel):    enqueue, fenced delete",
    ];
    for ((name, [a, b]), c) in names.iter().zip(&mut samples).zip(&cycle) {
        println!("{name}  {:>9.1?} {:>9.1?}  cycle {c:>9.1?}", median(a), median(b));
    }
    let ratio = |raw: Duration| raw.as_secs_f64() / cycle[2].as_secs_f64();
    println!("raw cycle / lock cycle (medians): {:.3} (etcd-client's channel), {:.3} (etcdlock's)", ratio(cycle[0]), ratio(cycle[1]));
    println!("lock-shaped cycle / lock cycle: {:.3} (etcd-client's channel), {:.3} (etcdlock's)", ratio(cycle[3]), ratio(cycle[4]));
    client.close().await;
    let _ = tonic.lease_revoke(lease).await;
}
