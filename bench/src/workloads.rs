//! The benchmark workloads, each a bounded loop against a real etcd.

use crate::cpu::{per_cycle, process_cpu};
use crate::cycles::{raw_cycle, shaped_cycle};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where the workloads connect: one etcd's plain endpoints and, for the `tls` rows, the same
/// etcd's TLS endpoints with the certificates to use there.
#[derive(Clone)]
pub struct Target {
    pub plain: Vec<String>,
    pub tls: Option<TlsTarget>,
}

/// TLS endpoints (`https://`) and a directory with `ca.pem` (the CA that signed the member's
/// certificate) and `client.pem` / `client.key` (a client certificate it accepts: mTLS).
#[derive(Clone)]
pub struct TlsTarget {
    pub endpoints: Vec<String>,
    pub dir: PathBuf,
}

impl TlsTarget {
    fn lock_options(&self) -> etcdlock::ClientOptions {
        let file = |name: &str| Some(etcdlock::Pem::File(self.dir.join(name)));
        let tls = etcdlock::TlsOptions { ca: file("ca.pem"), cert: file("client.pem"), key: file("client.key"), server_name: None };
        etcdlock::ClientOptions { tls: Some(tls), ..Default::default() }
    }

    /// etcd-client's own TLS (tonic with rustls), for the raw loop.
    fn raw_options(&self) -> etcd_client::ConnectOptions {
        let read = |name: &str| std::fs::read(self.dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let tls = etcd_client::TlsOptions::new()
            .ca_certificate(etcd_client::Certificate::from_pem(read("ca.pem")))
            .identity(etcd_client::Identity::from_pem(read("client.pem"), read("client.key")));
        etcd_client::ConnectOptions::new().with_tls(tls)
    }
}

impl Target {
    fn tls(&self, w: Workload) -> &TlsTarget {
        self.tls.as_ref().unwrap_or_else(|| panic!("{:?} needs a TLS listener (--tls-endpoints and --tls-dir)", w.name()))
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Workload {
    /// Txn put-if-absent with a pre-granted lease, then Delete: the fewest RPCs per cycle.
    RawUncontended,
    /// The raw loop over the channel etcdlock's KV requests take instead of etcd-client's own:
    /// what the transport saves.
    RawUncontendedH2,
    /// The raw loop sending the two requests an uncontended lock cycle sends (put if the queue
    /// is empty, fenced delete), over etcdlock's channel: what etcd and the transport charge
    /// for the lock's guarantees, with no library.
    ShapedUncontended,
    LockUncontended,
    /// N tasks on one client, each its own key.
    RawMany(usize),
    RawManyH2(usize),
    ShapedMany(usize),
    LockMany(usize),
    /// N clients, one name.
    LockContended(usize),
    /// N clients, one semaphore of P permits.
    SemaphoreContended(usize, u32),
    /// N clients, one pool of S slots, one slot per acquire.
    PoolContended(usize, usize),
    /// R reading and W writing clients, one read-write lock.
    RwLockMixed(usize, usize),
    /// One producer and N workers on a task queue (`crate::queue`).
    Queue(usize),
    /// The raw loop (etcd-client's channel) over TLS with a client certificate, on the same etcd.
    RawUncontendedTls,
    RawManyTls(usize),
    /// The lock over TLS with a client certificate, on the same etcd.
    LockUncontendedTls,
    LockManyTls(usize),
}

/// Every workload, in the order a run measures them: each `tls` row right after its plain twin,
/// so that the two run seconds apart in every round.
pub const ALL: [Workload; 19] = [
    Workload::RawUncontended,
    Workload::RawUncontendedTls,
    Workload::RawUncontendedH2,
    Workload::ShapedUncontended,
    Workload::LockUncontended,
    Workload::LockUncontendedTls,
    Workload::RawMany(64),
    Workload::RawManyTls(64),
    Workload::RawManyH2(64),
    Workload::ShapedMany(64),
    Workload::LockMany(64),
    Workload::LockManyTls(64),
    Workload::LockContended(4),
    Workload::LockContended(16),
    Workload::SemaphoreContended(16, 4),
    Workload::PoolContended(16, 4),
    Workload::RwLockMixed(15, 1),
    Workload::Queue(4),
    Workload::Queue(16),
];

pub struct Report {
    pub name: String,
    pub cycles_per_sec: f64,
    pub handoff_p50: Option<Duration>,
    pub handoff_p99: Option<Duration>,
    pub jain: Option<f64>,
    /// The process's CPU time over the timed window per cycle, in microseconds.
    pub cpu_us_per_cycle: Option<f64>,
}

impl Report {
    pub fn json(&self, lang: &str) -> String {
        let ms = |d: Option<Duration>| d.map_or("null".to_string(), |d| format!("{:.4}", d.as_secs_f64() * 1e3));
        format!(
            "{{\"lang\":\"{lang}\",\"workload\":\"{}\",\"cycles_per_sec\":{:.1},\"handoff_p50_ms\":{},\"handoff_p99_ms\":{},\"jain\":{},\"cpu_us_per_cycle\":{}}}",
            self.name,
            self.cycles_per_sec,
            ms(self.handoff_p50),
            ms(self.handoff_p99),
            self.jain.map_or("null".to_string(), |j| format!("{j:.4}")),
            self.cpu_us_per_cycle.map_or("null".to_string(), |c| format!("{c:.1}")),
        )
    }
}

/// The round with the median throughput.
pub fn median(mut rounds: Vec<Report>) -> Report {
    rounds.sort_by(|a, b| a.cycles_per_sec.total_cmp(&b.cycles_per_sec));
    let mid = rounds.len() / 2;
    rounds.swap_remove(mid)
}

fn unique(tag: &str) -> String {
    format!("bench/{tag}-{}-{}", std::process::id(), etcd_testkit::rand_suffix())
}

impl Workload {
    pub fn name(&self) -> String {
        match self {
            Workload::RawUncontended => "raw uncontended".into(),
            Workload::RawUncontendedH2 => "raw uncontended over etcdlock's channel".into(),
            Workload::ShapedUncontended => "raw lock-shaped uncontended".into(),
            Workload::LockUncontended => "lock uncontended".into(),
            Workload::RawMany(tasks) => format!("raw many ({tasks} tasks)"),
            Workload::RawManyH2(tasks) => format!("raw many ({tasks} tasks) over etcdlock's channel"),
            Workload::ShapedMany(tasks) => format!("raw lock-shaped many ({tasks} tasks)"),
            Workload::LockMany(tasks) => format!("lock many ({tasks} tasks)"),
            Workload::LockContended(clients) => format!("lock contended ({clients} clients)"),
            Workload::SemaphoreContended(clients, permits) => format!("semaphore contended ({clients} clients, {permits} permits)"),
            Workload::PoolContended(clients, slots) => format!("pool contended ({clients} clients, {slots} slots)"),
            Workload::RwLockMixed(readers, writers) => format!("rwlock ({readers} readers, {writers} writer)"),
            Workload::Queue(workers) => format!("queue ({workers} workers)"),
            Workload::RawUncontendedTls => "tls raw uncontended".into(),
            Workload::RawManyTls(tasks) => format!("tls raw many ({tasks} tasks)"),
            Workload::LockUncontendedTls => "tls lock uncontended".into(),
            Workload::LockManyTls(tasks) => format!("tls lock many ({tasks} tasks)"),
        }
    }

    /// The same workload over the plain listener, for a `tls` row.
    pub fn plain_twin(&self) -> Option<Workload> {
        match *self {
            Workload::RawUncontendedTls => Some(Workload::RawUncontended),
            Workload::RawManyTls(tasks) => Some(Workload::RawMany(tasks)),
            Workload::LockUncontendedTls => Some(Workload::LockUncontended),
            Workload::LockManyTls(tasks) => Some(Workload::LockMany(tasks)),
            _ => None,
        }
    }
}

pub async fn run(w: Workload, target: &Target, dur: Duration) -> Report {
    let endpoints = &target.plain[..];
    let (cycles, cpu_us_per_cycle) = match w {
        Workload::RawUncontended => raw_loop(endpoints, 1, dur, Raw::Fewest).await,
        Workload::RawUncontendedH2 => raw_loop(endpoints, 1, dur, Raw::FewestH2).await,
        Workload::ShapedUncontended => raw_loop(endpoints, 1, dur, Raw::LockShapedH2).await,
        Workload::RawMany(tasks) => raw_loop(endpoints, tasks, dur, Raw::Fewest).await,
        Workload::RawManyH2(tasks) => raw_loop(endpoints, tasks, dur, Raw::FewestH2).await,
        Workload::ShapedMany(tasks) => raw_loop(endpoints, tasks, dur, Raw::LockShapedH2).await,
        Workload::LockUncontended => lock_many(endpoints, Default::default(), 1, dur).await,
        Workload::LockMany(tasks) => lock_many(endpoints, Default::default(), tasks, dur).await,
        Workload::LockContended(clients) => return contended(endpoints, clients, dur).await,
        Workload::SemaphoreContended(clients, permits) => return crate::recipes::semaphore(endpoints, clients, permits, dur, w.name()).await,
        Workload::PoolContended(clients, slots) => return crate::recipes::pool(endpoints, clients, slots, dur, w.name()).await,
        Workload::RwLockMixed(readers, writers) => return crate::recipes::rwlock(endpoints, readers, writers, dur, w.name()).await,
        Workload::Queue(workers) => return crate::queue::queue(endpoints, workers, dur, w.name()).await,
        Workload::RawUncontendedTls => {
            let tls = target.tls(w);
            raw_loop(&tls.endpoints, 1, dur, Raw::Tls(tls)).await
        }
        Workload::RawManyTls(tasks) => {
            let tls = target.tls(w);
            raw_loop(&tls.endpoints, tasks, dur, Raw::Tls(tls)).await
        }
        Workload::LockUncontendedTls => {
            let tls = target.tls(w);
            lock_many(&tls.endpoints, tls.lock_options(), 1, dur).await
        }
        Workload::LockManyTls(tasks) => {
            let tls = target.tls(w);
            lock_many(&tls.endpoints, tls.lock_options(), tasks, dur).await
        }
    };
    Report {
        name: w.name(),
        cycles_per_sec: cycles as f64 / dur.as_secs_f64(),
        handoff_p50: None,
        handoff_p99: None,
        jain: None,
        cpu_us_per_cycle,
    }
}

/// Which requests a raw loop sends, over which channel.
#[derive(Clone, Copy)]
enum Raw<'a> {
    /// The fewest (put if absent, delete), over etcd-client's own channel.
    Fewest,
    /// The same over TLS with a client certificate (etcd-client's own TLS: tonic and rustls).
    Tls(&'a TlsTarget),
    /// The same over etcdlock's.
    FewestH2,
    /// The lock's requests, over etcdlock's (see [`Workload::ShapedUncontended`]).
    LockShapedH2,
}

/// Cycles done, and the process's CPU per cycle over the timed window.
async fn raw_loop(endpoints: &[String], tasks: usize, dur: Duration, raw: Raw<'_>) -> (u64, Option<f64>) {
    let client = match raw {
        Raw::Fewest => etcd_client::Client::connect(endpoints, None).await.expect("connect"),
        Raw::Tls(tls) => etcd_client::Client::connect(endpoints, Some(tls.raw_options())).await.expect("connect over TLS"),
        Raw::FewestH2 | Raw::LockShapedH2 => {
            let opts = etcd_client::ConnectOptions::new().with_require_leader(true);
            etcdlock::transport::h2_channel::etcd_client(endpoints, Duration::from_secs(5), opts).await.expect("connect")
        }
    };
    let lock_shaped = matches!(raw, Raw::LockShapedH2);
    let lease = client.clone().lease_grant(30, None).await.unwrap().id();
    let prefix = unique("raw");
    let cpu0 = process_cpu();
    let deadline = Instant::now() + dur;
    let mut handles = Vec::new();
    for t in 0..tasks {
        let mut c = client.clone();
        let queue = format!("{prefix}/{t}/");
        let key = format!("{queue}{lease:x}");
        handles.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < deadline {
                if lock_shaped {
                    shaped_cycle(&mut c, &queue, &key, lease).await;
                } else {
                    raw_cycle(&mut c, &key, lease).await;
                }
                n += 1;
            }
            n
        }));
    }
    let mut total = 0;
    for h in handles {
        total += h.await.unwrap();
    }
    let cpu = per_cycle(cpu0, total);
    let _ = client.clone().lease_revoke(lease).await;
    (total, cpu)
}

/// Cycles done, and the process's CPU per cycle over the timed window.
async fn lock_many(endpoints: &[String], opts: etcdlock::ClientOptions, tasks: usize, dur: Duration) -> (u64, Option<f64>) {
    let client = etcdlock::Client::connect(endpoints, opts).await.expect("connect");
    let prefix = unique("lock");
    let cpu0 = process_cpu();
    let deadline = Instant::now() + dur;
    let mut handles = Vec::new();
    for t in 0..tasks {
        let m = client.mutex(format!("{prefix}/{t}"), 30).unwrap();
        handles.push(tokio::spawn(async move {
            // Grant the handle's lease before timing starts, as the raw loop does.
            m.lock().await.unwrap().release().await.unwrap();
            let mut n = 0u64;
            while Instant::now() < deadline {
                let g = m.lock().await.unwrap();
                g.release().await.unwrap();
                n += 1;
            }
            n
        }));
    }
    let mut total = 0;
    for h in handles {
        total += h.await.unwrap();
    }
    let cpu = per_cycle(cpu0, total);
    client.close().await;
    (total, cpu)
}

/// (acquired at, release started at) of every acquisition, in any order.
type Timeline = Arc<Mutex<Vec<(Instant, Instant)>>>;

async fn contended(endpoints: &[String], clients: usize, dur: Duration) -> Report {
    let name = unique("contended");
    let timeline: Timeline = Default::default();
    let mut handles = Vec::new();
    let mut conns = Vec::new();
    for _ in 0..clients {
        // One connection per contender, as separate processes would have.
        conns.push(etcdlock::Client::connect(endpoints, Default::default()).await.expect("connect"));
    }
    let cpu0 = process_cpu();
    let start = Instant::now();
    let deadline = start + dur;
    for c in &conns {
        let m = c.mutex(name.clone(), 30).unwrap();
        let timeline = timeline.clone();
        handles.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < deadline {
                let g = m.lock().await.unwrap();
                let acquired = Instant::now();
                let releasing = Instant::now();
                g.release().await.unwrap();
                timeline.lock().unwrap().push((acquired, releasing));
                n += 1;
            }
            n
        }));
    }
    let mut counts = Vec::new();
    for h in handles {
        counts.push(h.await.unwrap() as f64);
    }
    let elapsed = start.elapsed();
    let cpu_us_per_cycle = per_cycle(cpu0, counts.iter().sum::<f64>() as u64);
    for c in conns {
        c.close().await;
    }
    let mut tl = timeline.lock().unwrap().clone();
    tl.sort();
    let mut handoffs: Vec<Duration> = tl.windows(2).map(|w| w[1].0.saturating_duration_since(w[0].1)).collect();
    handoffs.sort();
    let pct = |p: f64| handoffs.get(((handoffs.len() as f64 - 1.0) * p).round() as usize).copied();
    let sum: f64 = counts.iter().sum();
    let sq: f64 = counts.iter().map(|x| x * x).sum();
    Report {
        name: Workload::LockContended(clients).name(),
        cycles_per_sec: sum / elapsed.as_secs_f64(),
        handoff_p50: pct(0.5),
        handoff_p99: pct(0.99),
        jain: Some(sum * sum / (counts.len() as f64 * sq)),
        cpu_us_per_cycle,
    }
}
