//! `cargo run --release -p etcdlock-bench --example cache -- [--keys 100000] [--writers 16] [--seconds 3]`
//!
//! The prefix cache's rows (issue #57), against an etcd this program starts:
//! - load: `--keys` keys of 100 bytes under a prefix, then `client.cache(prefix)`: the load's
//!   wall time and the growth of this process's resident set (VmRSS) it costs;
//! - follow: `--writers` clients each putting under the prefix in a loop for `--seconds`, each put
//!   then waited for by the cache (`wait_for` its revision): events applied per second and the lag
//!   from the put returning to the cache reaching its revision, p50/p99.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok()).unwrap_or(0) * 1024
}

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(default)
}

fn main() {
    let (keys, writers, seconds) = (arg("--keys", 100_000.0) as usize, arg("--writers", 16.0) as usize, arg("--seconds", 3.0));
    let etcd = etcd_testkit::Etcd::start(1);
    let eps = etcd.endpoints();
    let _ = etcdlock::runtime::block_on(async move {
        let mut raw = etcd_client::Client::connect(&eps, None).await.unwrap();
        let value = "x".repeat(100);
        for start in (0..keys).step_by(100) {
            let ops: Vec<etcd_client::TxnOp> = (start..(start + 100).min(keys)).map(|i| etcd_client::TxnOp::put(format!("cfg/k{i:07}"), value.clone(), None)).collect();
            raw.txn(etcd_client::Txn::new().and_then(ops)).await.unwrap();
        }
        let client = etcdlock::Client::connect(&eps, Default::default()).await.unwrap();
        let before = rss();
        let t = Instant::now();
        let cache = client.cache("cfg/").await.unwrap();
        let load = t.elapsed();
        let grew = rss().saturating_sub(before);
        println!("load of {keys} keys of 100 bytes: {:.2} s, resident set +{:.1} MiB ({} bytes per key)", load.as_secs_f64(), grew as f64 / 1048576.0, grew / keys.max(1) as u64);
        assert_eq!(cache.len(), keys);

        let lags = Arc::new(Mutex::new(Vec::new()));
        let start_rev = cache.revision();
        let deadline = Instant::now() + Duration::from_secs_f64(seconds);
        let mut tasks = Vec::new();
        for w in 0..writers {
            let (eps, cache, lags) = (eps.clone(), cache.clone(), lags.clone());
            tasks.push(tokio::spawn(async move {
                let c = etcdlock::Client::connect(&eps, Default::default()).await.unwrap();
                let mut i = 0;
                while Instant::now() < deadline {
                    let rev = c.put(format!("cfg/w{w}-{}", i % 50).as_bytes(), b"v", None).await.unwrap();
                    let t = Instant::now();
                    cache.wait_for(rev, Duration::from_secs(10)).await.unwrap();
                    lags.lock().unwrap().push(t.elapsed());
                    i += 1;
                }
                c.close().await;
            }));
        }
        let t = Instant::now();
        for t in tasks {
            t.await.unwrap();
        }
        let applied = cache.revision() - start_rev;
        let mut lags = lags.lock().unwrap().clone();
        lags.sort();
        let pct = |p: f64| lags.get(((lags.len() as f64 - 1.0) * p) as usize).map_or(0.0, |d| d.as_secs_f64() * 1e3);
        println!(
            "follow, {writers} writers: {:.0} events/s applied, put -> cache lag p50 {:.2} ms, p99 {:.2} ms ({} puts)",
            applied as f64 / t.elapsed().as_secs_f64(),
            pct(0.5),
            pct(0.99),
            lags.len()
        );
        client.close().await;
    });
}
