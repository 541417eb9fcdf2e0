//! `cargo run --release -p etcdlock-bench --example scale -- [--locks N] [--waiters N] [--clients N] [--leases N] [--lease-ttl TTL,...] [--idle SECONDS]`
//!
//! The scale rows of issue #23, each printed with its target beside the result, against an etcd
//! this program starts (data in /dev/shm where it can; `ETCD_BIN` picks the binary):
//! - `--locks` (10,000) locks held by one client: acquiring them all with 64 in flight, the
//!   process's CPU while it holds them idle for `--idle` seconds (5), its RSS growth per held lock
//!   after that (every monitor and watch started), and releasing them all.
//! - `--waiters` (1,000) waiters on one name across `--clients` (10) clients: every handoff's
//!   latency (release start to the next holder's acquire returning), and the requests etcd
//!   served per handoff, from its /metrics: Range requests (the target's reads), Txn requests
//!   and all unary ones (`grpc_server_handled_total`), and the ranges etcd read for them, each
//!   Txn compare included (`etcd_mvcc_range_total`).
//! - `--leases` (10,000) leases on one client, for each TTL of `--lease-ttl` (5,10,60: a short
//!   one, the Python and Node default, and the default of etcd's Go `concurrency` sessions): the
//!   process's CPU while it keeps them alive, over a window in which each is renewed at least
//!   once (`--idle` or one TTL/3 after the last grant, whichever is longer), per keepalive too,
//!   the mean keepalive round trip, and whether all are alive.
//!
//! `scripts/test.sh` runs it with small counts, so that it cannot rot; the numbers are not
//! checked there (speed is measured here, never asserted in tests).

// Shared with the bench binary, which also uses its per-cycle helper.
#[allow(dead_code)]
#[path = "../src/cpu.rs"]
mod cpu;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

struct Args {
    locks: usize,
    waiters: usize,
    clients: usize,
    leases: usize,
    lease_ttls: Vec<i64>,
    idle: Duration,
}

fn parse_args() -> Args {
    let mut a = Args { locks: 10_000, waiters: 1_000, clients: 10, leases: 10_000, lease_ttls: vec![5, 10, 60], idle: Duration::from_secs(5) };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut num = || it.next().and_then(|v| v.parse::<f64>().ok()).filter(|v| *v >= 0.0).unwrap_or_else(|| panic!("{flag} N"));
        match flag.as_str() {
            "--locks" => a.locks = num() as usize,
            "--waiters" => a.waiters = num() as usize,
            "--clients" => a.clients = (num() as usize).max(1),
            "--leases" => a.leases = num() as usize,
            "--idle" => a.idle = Duration::from_secs_f64(num()),
            "--lease-ttl" => {
                let list = it.next().unwrap_or_default();
                a.lease_ttls = list.split(',').map(|t| t.parse().ok().filter(|t| *t > 0).unwrap_or_else(|| panic!("--lease-ttl TTL[,TTL...]"))).collect();
            }
            other => panic!("unknown argument {other:?} (see the file's header)"),
        }
    }
    a
}

fn main() {
    let args = parse_args();
    let etcd = etcd_testkit::Etcd::start(1);
    let endpoints = etcd.endpoints();
    let metrics = move || etcd.metrics(0);
    etcdlock::runtime::block_on(async move {
        if args.locks > 0 {
            held_locks(&endpoints, args.locks, args.idle).await;
        }
        if args.waiters > 0 {
            waiters(&endpoints, &metrics, args.waiters, args.clients).await;
        }
        for &ttl in args.lease_ttls.iter().filter(|_| args.leases > 0) {
            leases(&endpoints, args.leases, ttl, args.idle).await;
        }
    })
    .expect("scale bench panicked");
}

/// A row: what, the result, the target, and whether the result meets it.
fn row(what: &str, result: String, target: &str, met: bool) {
    println!("{what:<58} {result:>14}   target {target:<10} {}", if met { "met" } else { "NOT MET" });
}

/// This process's resident set size (VmRSS), in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
    kb.unwrap_or(0) * 1024
}

/// Share of one core this process used over `d` from `cpu0` (`cpu::process_cpu`).
fn core_share(cpu0: Duration, d: Duration) -> f64 {
    cpu::process_cpu().saturating_sub(cpu0).as_secs_f64() / d.as_secs_f64()
}

async fn held_locks(endpoints: &[String], n: usize, idle: Duration) {
    let client = etcdlock::Client::connect(endpoints, Default::default()).await.expect("connect");
    let prefix = format!("scale/held-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    // The client's lease and first allocations come before the baseline.
    client.mutex(format!("{prefix}/warm"), 30).unwrap().lock().await.unwrap().release().await.unwrap();
    let rss0 = rss();
    let in_flight = Arc::new(Semaphore::new(64));
    let t0 = Instant::now();
    // 64 tasks taking the next name in turn: a task per lock would leave its own memory behind
    // in the process (freed, not returned to the system) and count it per held lock.
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let (client, prefix, next) = (client.clone(), prefix.clone(), next.clone());
            tokio::spawn(async move {
                let mut held = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        return held;
                    }
                    held.push(client.mutex(format!("{prefix}/{i}"), 30).unwrap().lock().await.expect("lock"));
                }
            })
        })
        .collect();
    let mut guards = Vec::with_capacity(n);
    for t in tasks {
        guards.extend(t.await.unwrap());
    }
    let acquired = t0.elapsed();
    let cpu0 = cpu::process_cpu();
    tokio::time::sleep(idle).await;
    let idle_share = core_share(cpu0, idle);
    // After the idle window: by then every held lock's monitor and watch has started.
    let per_lock = rss().saturating_sub(rss0) as f64 / n as f64;
    let t1 = Instant::now();
    let tasks: Vec<_> = guards
        .into_iter()
        .map(|g| {
            let permits = in_flight.clone();
            tokio::spawn(async move {
                let _permit = permits.acquire().await.unwrap();
                g.release().await.expect("release")
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let released = t1.elapsed();
    client.close().await;
    let what = format!("{n} locks held by one client:");
    println!("{what}");
    row("  acquire all (64 in flight)", format!("{:.2} s", acquired.as_secs_f64()), "<= 5 s", acquired <= Duration::from_secs(5));
    row("  RSS growth per held lock", format!("{:.0} B", per_lock), "<= 2 KB", per_lock <= 2048.0);
    row(&format!("  CPU while holding them idle ({} s)", idle.as_secs_f64()), format!("{:.2} %", idle_share * 100.0), "<= 1 %", idle_share <= 0.01);
    row("  release all (64 in flight)", format!("{:.2} s", released.as_secs_f64()), "<= 5 s", released <= Duration::from_secs(5));
}

/// Server requests of one gRPC method (all unary ones with `None`) so far.
fn served(metrics: &str, method: Option<&str>) -> f64 {
    let label = method.map(|m| format!("grpc_method=\"{m}\""));
    let mut labels = vec!["grpc_type=\"unary\""];
    labels.extend(label.as_deref());
    etcd_testkit::metric_sum(metrics, "grpc_server_handled_total", &labels)
}

async fn waiters(endpoints: &[String], metrics: &(dyn Fn() -> String + Sync), n: usize, clients: usize) {
    let name = format!("scale/waiters-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    let mut conns = Vec::new();
    for _ in 0..clients {
        conns.push(etcdlock::Client::connect(endpoints, Default::default()).await.expect("connect"));
    }
    // A first holder keeps the lock until every waiter has queued, so that all n hand off.
    let first = conns[0].mutex(name.clone(), 30).unwrap().lock().await.expect("lock");
    let timeline: Arc<Mutex<Vec<(Instant, Instant)>>> = Default::default();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (m, timeline) = (conns[i % clients].mutex(name.clone(), 30).unwrap(), timeline.clone());
            tokio::spawn(async move {
                let g = m.lock().await.expect("lock");
                let acquired = Instant::now();
                g.release().await.expect("release");
                timeline.lock().unwrap().push((acquired, acquired));
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    // While a thousand waiters queue, reading the whole queue can outlast the request timeout:
    // such a timeout only means "ask again".
    let queued = |r: etcdlock::Result<etcdlock::LockState>| match r {
        Ok(state) => state.waiters.len(),
        Err(e) if e.kind() == etcdlock::ErrorKind::Timeout => 0,
        Err(e) => panic!("inspect: {e}"),
    };
    while queued(conns[0].inspect(&name).await) < n {
        assert!(Instant::now() < deadline, "the waiters did not all queue within 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Each waiter re-reads its position up to 110 ms after its watch opens (`RECHECK_AFTER`),
    // as any wait does: those reads belong to queueing, not to the handoffs counted here. So
    // the count starts once etcd has served no Range for 400 ms (within 20 s: a busy machine
    // may take longer than a fixed pause to open a thousand watches).
    let mut before = metrics();
    let quiet_by = Instant::now() + Duration::from_secs(20);
    loop {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let now = metrics();
        let quiet = served(&now, Some("Range")) == served(&before, Some("Range"));
        before = now;
        if quiet || Instant::now() > quiet_by {
            break;
        }
    }
    let released = Instant::now();
    first.release().await.expect("release");
    for t in tasks {
        t.await.unwrap();
    }
    let after = metrics();
    for c in conns {
        c.close().await;
    }
    let mut tl = timeline.lock().unwrap().clone();
    tl.sort();
    let mut handoffs: Vec<Duration> = Vec::with_capacity(n);
    let mut prev_release = released;
    for (acquired, release_start) in tl {
        handoffs.push(acquired.saturating_duration_since(prev_release));
        prev_release = release_start;
    }
    handoffs.sort();
    let p50 = handoffs[handoffs.len() / 2];
    let p99 = handoffs[((handoffs.len() - 1) as f64 * 0.99).round() as usize];
    let per = |m: Option<&str>| (served(&after, m) - served(&before, m)) / n as f64;
    println!("{n} waiters on one name across {clients} clients ({n} handoffs):");
    row("  handoff p50", format!("{:.2} ms", p50.as_secs_f64() * 1e3), "<= 2 ms", p50 <= Duration::from_millis(2));
    println!("  {:<56} {:>14.2} ms", "handoff p99", p99.as_secs_f64() * 1e3);
    let ranges = (etcd_testkit::metric_sum(&after, "etcd_mvcc_range_total", &[])
        - etcd_testkit::metric_sum(&before, "etcd_mvcc_range_total", &[]))
        / n as f64;
    row("  Range requests served per handoff", format!("{:.2}", per(Some("Range"))), "<= 2", per(Some("Range")) <= 2.0);
    println!("  {:<56} {:>14.2}", "Txn requests served per handoff", per(Some("Txn")));
    println!("  {:<56} {:>14.2}", "all unary requests served per handoff", per(None));
    println!("  {:<56} {:>14.2}", "ranges etcd read per handoff (Txn compares included)", ranges);
}

/// `n` leases of `ttl` seconds on one client: the CPU keeping them alive over a window that
/// renews each at least once (one TTL/3 after the last grant, or `idle` if longer).
async fn leases(endpoints: &[String], n: usize, ttl: i64, idle: Duration) {
    let client = etcdlock::Client::connect(endpoints, Default::default()).await.expect("connect");
    let in_flight = Arc::new(Semaphore::new(64));
    let t0 = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (c, permits) = (client.clone(), in_flight.clone());
            tokio::spawn(async move {
                let _permit = permits.acquire().await.unwrap();
                c.lease(ttl).await.expect("lease")
            })
        })
        .collect();
    let mut leases = Vec::with_capacity(n);
    for t in tasks {
        leases.push(t.await.unwrap());
    }
    let granted = t0.elapsed();
    let window = idle.max(Duration::from_secs(ttl as u64) / 3 + granted);
    let (cpu0, rtt0) = (cpu::process_cpu(), client.metrics().keepalive_rtt_seconds);
    tokio::time::sleep(window).await;
    let share = core_share(cpu0, window);
    let rtt = client.metrics().keepalive_rtt_seconds;
    let answered = rtt.count - rtt0.count;
    let mean_rtt = (rtt.sum - rtt0.sum) / answered.max(1) as f64;
    let alive = leases.iter().filter(|l| l.is_alive()).count();
    let mut lost: std::collections::BTreeMap<String, usize> = Default::default();
    for reason in leases.iter().filter_map(|l| l.lost_reason()) {
        *lost.entry(reason.to_string()).or_default() += 1;
    }
    let reopens = client.metrics().stream_reopens.iter().find(|(s, _)| *s == "keepalive").map_or(0, |(_, n)| *n);
    client.close().await;
    let per_second = n as f64 * 3.0 / ttl as f64;
    println!("{n} leases kept alive by one client (TTL {ttl} s, {per_second:.0} keepalives a second; granted in {:.2} s):", granted.as_secs_f64());
    row(&format!("  CPU keeping them alive ({:.1} s)", window.as_secs_f64()), format!("{:.2} %", share * 100.0), "<= 2 %", share <= 0.02);
    let per_keepalive = share * window.as_secs_f64() / answered.max(1) as f64;
    println!("  {:<56} {:>14}", "client CPU per keepalive answered", format!("{:.1} us ({answered})", per_keepalive * 1e6));
    println!("  {:<56} {:>14}", "keepalive round trip, mean", format!("{:.2} ms", mean_rtt * 1e3));
    row("  still alive at the end", format!("{alive}"), &format!("{n}"), alive == n);
    println!("  {:<56} {:>14}", "keepalive stream reopened", reopens);
    if !lost.is_empty() {
        println!("  lost, by reason: {lost:?}");
    }
}
