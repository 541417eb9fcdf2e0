//! Workloads for the recipes beside the mutex: a semaphore, a pool and a read-write lock under
//! contention, each from separate client connections as separate processes would have.

use crate::cpu::{per_cycle, process_cpu};
use crate::workloads::Report;
use std::time::{Duration, Instant};

/// `clients` connections cycling acquire/release on one semaphore of `permits`.
pub async fn semaphore(endpoints: &[String], clients: usize, permits: u32, dur: Duration, name: String) -> Report {
    let sem = format!("bench/sem-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    contenders(endpoints, clients, dur, name, move |c, _| {
        let s = c.semaphore(sem.clone(), permits, 30).unwrap();
        async move { s.acquire().await.unwrap().release().await.unwrap() }
    })
    .await
}

/// `clients` connections cycling acquire/release of one slot of a pool of `slots`.
pub async fn pool(endpoints: &[String], clients: usize, slots: usize, dur: Duration, name: String) -> Report {
    let pool = format!("bench/pool-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    contenders(endpoints, clients, dur, name, move |c, _| {
        let p = c.pool(pool.clone(), etcdlock::PoolOptions::size(slots).ttl(30)).unwrap();
        async move { p.acquire(1).await.unwrap().release().await.unwrap() }
    })
    .await
}

/// `readers` + `writers` connections cycling reads or writes on one read-write lock.
pub async fn rwlock(endpoints: &[String], readers: usize, writers: usize, dur: Duration, name: String) -> Report {
    let rw = format!("bench/rw-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    contenders(endpoints, readers + writers, dur, name, move |c, i| {
        let lock = c.rwlock(rw.clone(), 30).unwrap();
        async move {
            let g = if i < writers { lock.write().await } else { lock.read().await };
            g.unwrap().release().await.unwrap()
        }
    })
    .await
}

/// Runs `cycle(client, i)` in a loop on each of `n` connections until `dur` passes; cycles/s
/// over all of them and Jain's fairness index of the per-connection counts.
async fn contenders<F, Fut>(endpoints: &[String], n: usize, dur: Duration, name: String, cycle: F) -> Report
where
    F: Fn(&etcdlock::Client, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut conns = Vec::new();
    for _ in 0..n {
        conns.push(etcdlock::Client::connect(endpoints, Default::default()).await.expect("connect"));
    }
    let cycle = std::sync::Arc::new(cycle);
    let cpu0 = process_cpu();
    let start = Instant::now();
    let deadline = start + dur;
    let mut handles = Vec::new();
    for (i, c) in conns.iter().enumerate() {
        let (c, cycle) = (c.clone(), cycle.clone());
        handles.push(tokio::spawn(async move {
            let mut count = 0u64;
            while Instant::now() < deadline {
                cycle(&c, i).await;
                count += 1;
            }
            count as f64
        }));
    }
    let mut counts = Vec::new();
    for h in handles {
        counts.push(h.await.unwrap());
    }
    let elapsed = start.elapsed();
    let sum: f64 = counts.iter().sum();
    let cpu_us_per_cycle = per_cycle(cpu0, sum as u64);
    for c in conns {
        c.close().await;
    }
    let sq: f64 = counts.iter().map(|x| x * x).sum();
    Report {
        name,
        cycles_per_sec: sum / elapsed.as_secs_f64(),
        handoff_p50: None,
        handoff_p99: None,
        jain: Some(sum * sum / (counts.len() as f64 * sq)),
        cpu_us_per_cycle,
    }
}
