//! `cargo run --release -p etcdlock-bench --example watch_unsynced`
//!
//! Shows why a lock waiter cannot rely on a watch "from now" alone (see docs/design.md, Wait):
//! under write load, etcd 3.5 registers some of those watches as unsynced and delivers their
//! events only on its next 100 ms sync tick. Starts its own etcd, keeps 3 writers busy on other
//! keys, and 300 times: watches key K from now, deletes K, and times the delete's delivery.

use etcd_client::{Client, WatchFilterType, WatchOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROUNDS: usize = 300;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let etcd = etcd_testkit::Etcd::start(1);
    let eps = etcd.endpoints();
    let watcher = Client::connect(&eps, None).await.unwrap();
    let mut writer = Client::connect(&eps, None).await.unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for i in 0..3 {
        let mut c = Client::connect(&eps, None).await.unwrap();
        let stop = stop.clone();
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                c.put(format!("load/{i}"), "x", None).await.unwrap();
            }
        }));
    }

    let (mut requests, mut responses) = watcher.watch_client().watch("unused", None).await.unwrap().split();
    let mut latencies = Vec::with_capacity(ROUNDS);
    for id in 1..=ROUNDS as i64 {
        writer.put("K", "v", None).await.unwrap();
        let opts = WatchOptions::new().with_watch_id(id).with_filters([WatchFilterType::NoPut]);
        requests.watch("K", Some(opts)).await.unwrap();
        while !responses.message().await.unwrap().is_some_and(|m| m.watch_id() == id && m.created()) {}
        let sent = Instant::now();
        writer.delete("K", None).await.unwrap();
        while !responses.message().await.unwrap().is_some_and(|m| m.watch_id() == id && !m.events().is_empty()) {}
        latencies.push(sent.elapsed());
        requests.cancel(id).await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for l in load {
        l.await.unwrap();
    }

    latencies.sort();
    let late = latencies.iter().filter(|d| **d > Duration::from_millis(5)).count();
    let pct = |p: f64| latencies[((ROUNDS - 1) as f64 * p) as usize];
    println!(
        "delete delivered to a watch created just before it: p50 {:?}, p90 {:?}, p99 {:?}; later than 5 ms: {late}/{ROUNDS}",
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
}
