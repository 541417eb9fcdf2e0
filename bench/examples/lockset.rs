//! `cargo run --release -p etcdlock-bench --example lockset -- [--seconds 3] [--clients 8]`
//!
//! Lock set rows (issue #57), against an etcd this program starts. For sets of 2 and 8 names:
//! - uncontended: one client taking and releasing the set in a loop;
//! - overlapping: `--clients` clients, each taking a set of consecutive names from a ring of
//!   16 (client i starts at name 2i), so that every set overlaps its neighbours';
//! each next to the same names taken one by one in sorted order with a mutex each (the
//! deadlock-free way without lock sets), and the raw RPC floor: one Txn per cycle putting and
//! one deleting all the keys (no waiting, no fencing). Cycles/s; a cycle is take, one fenced
//! write, release.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(default)
}

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Set,
    Sorted,
    Raw,
}

async fn cycle(c: &etcdlock::Client, raw: &mut etcd_client::Client, way: Way, names: &[String], data: &str) {
    match way {
        Way::Set => {
            let locks = c.lock_set(names.to_vec(), 10).unwrap().lock().await.unwrap();
            locks.put(data.as_bytes(), b"1").await.unwrap();
            locks.release().await.unwrap();
        }
        Way::Sorted => {
            let mut sorted = names.to_vec();
            sorted.sort();
            let mut guards = Vec::new();
            for n in sorted {
                guards.push(c.mutex(n, 10).unwrap().lock().await.unwrap());
            }
            guards.last().unwrap().put(data.as_bytes(), b"1").await.unwrap();
            for g in guards.into_iter().rev() {
                g.release().await.unwrap();
            }
        }
        Way::Raw => {
            use etcd_client::{Txn, TxnOp};
            let keys: Vec<String> = names.iter().map(|n| format!("{n}/raw")).collect();
            raw.txn(Txn::new().and_then(keys.iter().map(|k| TxnOp::put(k.as_str(), "", None)).collect::<Vec<_>>())).await.unwrap();
            raw.put(data, "1", None).await.unwrap();
            raw.txn(Txn::new().and_then(keys.iter().map(|k| TxnOp::delete(k.as_str(), None)).collect::<Vec<_>>())).await.unwrap();
        }
    }
}

async fn rate(eps: &[String], way: Way, size: usize, clients: usize, seconds: f64) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for i in 0..clients {
        let (eps, done) = (eps.to_vec(), done.clone());
        tasks.push(tokio::spawn(async move {
            let c = etcdlock::Client::connect(&eps, Default::default()).await.unwrap();
            let mut raw = etcd_client::Client::connect(&eps, None).await.unwrap();
            // Uncontended: names of this client's own; overlapping: a window of a shared ring.
            let names: Vec<String> = if clients == 1 {
                (0..size).map(|k| format!("bench/ls/solo{k}")).collect()
            } else {
                (0..size).map(|k| format!("bench/ls/ring{}", (2 * i + k) % 16)).collect()
            };
            let data = format!("bench/ls-data/{i}");
            while Instant::now() < deadline {
                cycle(&c, &mut raw, way, &names, &data).await;
                done.fetch_add(1, Ordering::Relaxed);
            }
            c.close().await;
        }));
    }
    let t = Instant::now();
    for t in tasks {
        t.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let (seconds, clients) = (arg("--seconds", 3.0), arg("--clients", 8.0) as usize);
    let etcd = etcd_testkit::Etcd::start(1);
    let eps = etcd.endpoints();
    let _ = etcdlock::runtime::block_on(async move {
        println!("| names | clients | lock set | one by one, sorted | set / sorted | raw Txn floor | set / raw |");
        println!("|---|---|---|---|---|---|---|");
        for size in [2, 8] {
            for n in [1, clients] {
                let set = rate(&eps, Way::Set, size, n, seconds).await;
                let sorted = rate(&eps, Way::Sorted, size, n, seconds).await;
                let raw = if n == 1 { rate(&eps, Way::Raw, size, 1, seconds).await } else { f64::NAN };
                let raw_cols = if n == 1 { format!("{raw:.0} | {:.2}", set / raw) } else { "- | -".into() };
                println!("| {size} | {n} | {set:.0}/s | {sorted:.0}/s | {:.2} | {raw_cols} |", set / sorted);
            }
        }
    });
}
