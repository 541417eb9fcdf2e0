//! `cargo run --release -p etcdlock-bench --example paired -- URL [CYCLES]`
//!
//! Latency of an etcdlock lock/release cycle next to the raw loop's put-if-absent Txn and
//! Delete, alternating in one task against the etcd at URL. Also the same RPCs the lock sends
//! (the uncontended enqueue Txn, the fenced delete Txn) sent raw, which splits the
//! difference into what etcd charges for the lock's requests and what the library adds. Throughput runs on a shared
//! machine drift by +-20 % between runs; paired medians differ by a few microseconds, which
//! is what finding the library's overhead needs.

use etcd_client::{Client, Compare, CompareOp, PutOptions, Txn, TxnOp};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let endpoint = args.next().expect("usage: paired URL [CYCLES]");
    let cycles: usize = args.next().map_or(3000, |s| s.parse().expect("CYCLES"));
    etcdlock::runtime::block_on(run(endpoint, cycles)).expect("paired panicked");
}

async fn run(endpoint: String, cycles: usize) {
    let mut raw = Client::connect([endpoint.clone()], None).await.unwrap();
    let lease = raw.lease_grant(60, None).await.unwrap().id();
    let key = format!("paired/{}/raw", std::process::id());
    let client = etcdlock::Client::connect([endpoint], Default::default()).await.unwrap();
    let mutex = client.mutex(format!("paired/{}/lock", std::process::id()), 60).unwrap();
    mutex.lock().await.unwrap().release().await.unwrap();

    let shaped = format!("paired/{}/shaped/", std::process::id());
    let shaped_key = format!("{shaped}{lease:x}");
    let mut samples: [Vec<Duration>; 6] = Default::default();
    for _ in 0..cycles {
        let put = TxnOp::put(key.clone(), "", Some(PutOptions::new().with_lease(lease)));
        let t0 = Instant::now();
        raw.txn(Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)]).and_then([put])).await.unwrap();
        let t1 = Instant::now();
        raw.delete(key.clone(), None).await.unwrap();
        let t2 = Instant::now();
        let guard = mutex.lock().await.unwrap();
        let t3 = Instant::now();
        guard.release().await.unwrap();
        let t4 = Instant::now();
        // The lock's own requests, raw: the uncontended enqueue (put if nobody is queued),
        // then the fenced delete.
        let put = TxnOp::put(shaped_key.clone(), "", Some(PutOptions::new().with_lease(lease)));
        let enqueue = Txn::new().when([Compare::version(shaped.clone(), CompareOp::Equal, 0).with_prefix()]).and_then([put]);
        let t5 = Instant::now();
        let token = raw.txn(enqueue).await.unwrap().header().unwrap().revision();
        let t6 = Instant::now();
        let fenced = Txn::new()
            .when([Compare::create_revision(shaped_key.clone(), CompareOp::Equal, token)])
            .and_then([TxnOp::delete(shaped_key.clone(), None)]);
        assert!(raw.txn(fenced).await.unwrap().succeeded());
        let t7 = Instant::now();
        for (s, d) in samples.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2, t4 - t3, t6 - t5, t7 - t6]) {
            s.push(d);
        }
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let [mut txn, mut delete, mut lock, mut release, mut enq, mut fdel] = samples;
    let (txn, delete, lock, release) = (median(&mut txn), median(&mut delete), median(&mut lock), median(&mut release));
    let (enq, fdel) = (median(&mut enq), median(&mut fdel));
    println!("raw:  txn {txn:>10.1?}  delete  {delete:>10.1?}  cycle {:>10.1?}", txn + delete);
    println!("lock: lock {lock:>9.1?}  release {release:>10.1?}  cycle {:>10.1?}", lock + release);
    println!("the lock's RPCs sent raw: enqueue {enq:>9.1?}  fenced delete {fdel:>9.1?}  cycle {:>10.1?}", enq + fdel);
    println!("raw cycle / lock cycle (medians): {:.3}", (txn + delete).as_secs_f64() / (lock + release).as_secs_f64());
    client.close().await;
    let _ = raw.lease_revoke(lease).await;
}
