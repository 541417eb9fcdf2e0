//! `cargo run --release -p etcdlock-bench --example tasks -- [--tasks N] [--workers 4,16] [--paced N] [--gap-ms MS] [--go PATH]`
//!
//! The task queue's rows (issue #54), against an etcd this program starts (data in /dev/shm
//! where it can; `ETCD_BIN` picks the binary):
//! - end to end: one producer puts `--tasks` (2,000) items as fast as it can while W workers (each
//!   a client of its own) claim and ack them (the ack carrying a result write, as a real worker's
//!   would): tasks per second from the first put to the last ack, put → claim latency p50/p99
//!   (from the put returning to the claim returning; the producer outruns the workers, so this
//!   is mostly the time an item waits in the backlog), and the requests etcd served per task
//!   (`grpc_server_handled_total`, every unary method, from its /metrics);
//! - paced, without a backlog: W workers wait while the producer puts one item at a time, each
//!   once the last was claimed and acked and a random gap later (exponential, mean `--gap-ms`,
//!   default 50: about 20 items/s, far under what the workers can take), `--paced` items
//!   (default: half of `--tasks`, at most 200): put → claim latency p50/p90/p99 and requests
//!   per item;
//! - with 16 idle workers waiting, the requests one new item costs (the put's two included), and
//!   how many workers it woke (one takes it, the next in line reads once; a herd would be 32+);
//! - with `--go PATH` (`bash scripts/build-go-bench.sh`), the end-to-end and paced workloads with
//!   etcd's Go `recipe.Queue` (Enqueue, Dequeue: deleted on dequeue, no claim, no ack), in the
//!   same run: what losing nothing costs.
//!
//! `scripts/test.sh` runs it with small counts so that it cannot rot; the numbers are not checked
//! (speed is measured here, never asserted in tests). `bench/run.py` has the other throughput
//! row, with a bounded backlog, for the Rust core, every binding and Go (`queue (N workers)`).

use etcdlock::{CancellationToken, ClaimOptions, ErrorKind, Op, QueueOptions, TaskOptions};
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Args {
    tasks: usize,
    workers: Vec<usize>,
    paced: Option<usize>,
    gap_ms: f64,
    go: Option<String>,
}

fn parse_args() -> Args {
    let mut a = Args { tasks: 2000, workers: vec![4, 16], paced: None, gap_ms: 50.0, go: None };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--tasks" => a.tasks = it.next().and_then(|v| v.parse().ok()).filter(|n| *n > 0).expect("--tasks N"),
            "--workers" => {
                a.workers = it.next().unwrap_or_default().split(',').map(|w| w.parse().ok().filter(|w| *w > 0).expect("--workers N[,N...]")).collect()
            }
            "--paced" => a.paced = Some(it.next().and_then(|v| v.parse().ok()).filter(|n| *n > 0).expect("--paced N")),
            "--gap-ms" => a.gap_ms = it.next().and_then(|v| v.parse().ok()).filter(|g: &f64| *g >= 0.0).expect("--gap-ms MS"),
            "--go" => a.go = it.next(),
            other => panic!("unknown argument {other:?} (see the file's header)"),
        }
    }
    a
}

fn main() {
    let args = parse_args();
    let etcd = Arc::new(etcd_testkit::Etcd::start(1));
    let endpoints = etcd.endpoints();
    let requests = {
        let etcd = etcd.clone();
        move || etcd_testkit::metric_sum(&etcd.metrics(0), "grpc_server_handled_total", &["grpc_type=\"unary\""])
    };
    println!("{:<44} {:>10} {:>10} {:>10} {:>12}", "task queue, 1 producer", "tasks/s", "p50 ms", "p99 ms", "requests/task");
    for &w in &args.workers {
        let before = requests();
        let (rate, p50, p99) = etcdlock::runtime::block_on(end_to_end(endpoints.clone(), args.tasks, w)).expect("bench panicked");
        let per_task = (requests() - before) / args.tasks as f64;
        println!("{:<44} {rate:>10.0} {p50:>10.2} {p99:>10.2} {per_task:>12.1}", format!("etcdlock, {w} workers"));
        if let Some(go) = &args.go {
            let before = requests();
            match go_queue(go, &endpoints, args.tasks, w) {
                Ok((rate, p50, p99)) => {
                    let per_task = (requests() - before) / args.tasks as f64;
                    println!("{:<44} {rate:>10.0} {p50:>10.2} {p99:>10.2} {per_task:>12.1}", format!("Go recipe.Queue (no claim, no ack), {w} workers"));
                }
                Err(e) => println!("Go recipe.Queue, {w} workers: could not run: {e}"),
            }
        }
    }
    let items = args.paced.unwrap_or((args.tasks / 2).clamp(1, 200));
    println!();
    println!("put -> claim, one item at a time ({items} items, each put once the last was acked and a gap of mean {:.0} ms later):", args.gap_ms);
    println!("{:<44} {:>10} {:>10} {:>10} {:>13}", "", "p50 ms", "p90 ms", "p99 ms", "requests/item");
    for &w in &args.workers {
        let r = requests.clone();
        let (p, per_item) = etcdlock::runtime::block_on(paced(endpoints.clone(), items, w, args.gap_ms, r)).expect("bench panicked");
        println!("{:<44} {:>10.2} {:>10.2} {:>10.2} {per_item:>13.1}", format!("etcdlock, {w} workers"), p[0], p[1], p[2]);
        if let Some(go) = &args.go {
            match go_paced(go, &endpoints, items, w, args.gap_ms, &requests) {
                Ok((p, per_item)) => println!(
                    "{:<44} {:>10.2} {:>10.2} {:>10.2} {per_item:>13.1}",
                    format!("Go recipe.Queue (to Dequeue's return), {w} workers"),
                    p[0],
                    p[1],
                    p[2]
                ),
                Err(e) => println!("Go recipe.Queue, {w} workers: could not run: {e}"),
            }
        }
    }
    let (requests_for_one, woken) = etcdlock::runtime::block_on(idle(endpoints, 16, requests)).expect("bench panicked");
    println!("one new item, 16 idle workers: {requests_for_one:.0} requests on the server (the put's 2 included), {woken} worker(s) took a task");
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

async fn connect(endpoints: &[String]) -> etcdlock::Client {
    etcdlock::Client::connect(endpoints, Default::default()).await.expect("connect")
}

/// (tasks/s, p50 ms, p99 ms) of put → claim.
async fn end_to_end(endpoints: Vec<String>, n: usize, workers: usize) -> (f64, f64, f64) {
    let endpoints = &endpoints[..];
    let name = format!("bench/tasks-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    let opts = QueueOptions { ttl_secs: 10, max_attempts: 5, ..Default::default() };
    let start = Instant::now();
    let put_at: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; n]));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(n)));
    let acked = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for _ in 0..workers {
        let c = connect(endpoints).await;
        let q = c.queue(name.clone(), opts.clone()).unwrap();
        let (put_at, latencies, acked) = (put_at.clone(), latencies.clone(), acked.clone());
        handles.push(tokio::spawn(async move {
            while acked.load(Ordering::Acquire) < n {
                let task = match q.claim(ClaimOptions { timeout: Some(Duration::from_millis(500)), ..Default::default() }).await {
                    Ok(t) => t,
                    Err(e) if e.kind() == ErrorKind::LockTimeout => continue,
                    Err(e) => panic!("claim: {e}"),
                };
                let i: usize = task.id().parse().unwrap();
                let claimed = Instant::now();
                if let Some(at) = put_at.lock().unwrap()[i] {
                    latencies.lock().unwrap().push(claimed.saturating_duration_since(at).as_secs_f64() * 1e3);
                }
                let result = format!("{}-results/{}", task_queue_name(&q), task.id());
                task.ack_with(&[Op::put(result.as_str(), "ok")]).await.unwrap();
                acked.fetch_add(1, Ordering::AcqRel);
            }
            c.close().await;
        }));
    }
    let producer = connect(endpoints).await;
    let q = producer.queue(name.clone(), opts).unwrap();
    for i in 0..n {
        q.put(b"payload", TaskOptions { id: Some(i.to_string()), ..Default::default() }).await.unwrap();
        put_at.lock().unwrap()[i] = Some(Instant::now());
    }
    for h in handles {
        h.await.unwrap();
    }
    let took = start.elapsed().as_secs_f64();
    let mut raw = etcd_client::Client::connect(endpoints, None).await.unwrap();
    raw.delete(format!("{name}-results/"), Some(etcd_client::DeleteOptions::new().with_prefix())).await.unwrap();
    producer.close().await;
    let mut l = latencies.lock().unwrap().clone();
    l.sort_by(f64::total_cmp);
    (n as f64 / took, percentile(&l, 0.5), percentile(&l, 0.99))
}

fn task_queue_name(q: &etcdlock::TaskQueue) -> String {
    String::from_utf8_lossy(q.name()).into_owned()
}

/// Exponentially distributed gaps of the given mean (xorshift: no randomness crate here).
struct Gaps(u64, f64);

impl Gaps {
    fn new(mean_ms: f64) -> Gaps {
        let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        Gaps(seed | 1, mean_ms)
    }

    fn next(&mut self) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let u = ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64; // in (0, 1)
        Duration::from_secs_f64(-u.ln() * self.1 / 1e3)
    }
}

/// ([p50, p90, p99] ms, requests per item) of put → claim with `workers` waiting workers and one
/// item at a time: each put once the last item was claimed and acked, and a gap later.
async fn paced(endpoints: Vec<String>, n: usize, workers: usize, gap_ms: f64, requests: impl Fn() -> f64) -> ([f64; 3], f64) {
    let endpoints = &endpoints[..];
    let name = format!("bench/paced-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    let opts = QueueOptions { ttl_secs: 10, max_attempts: 5, ..Default::default() };
    let (tx, mut claimed) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let stop = CancellationToken::new();
    let mut clients = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..workers {
        let c = connect(endpoints).await;
        let q = c.queue(name.clone(), opts.clone()).unwrap();
        let (tx, stop) = (tx.clone(), stop.clone());
        handles.push(tokio::spawn(async move {
            loop {
                let task = match q.claim(ClaimOptions { cancel: Some(stop.clone()), ..Default::default() }).await {
                    Ok(t) => t,
                    Err(e) if e.kind() == ErrorKind::Cancelled => return,
                    Err(e) => panic!("claim: {e}"),
                };
                let at = Instant::now();
                task.ack().await.unwrap();
                let _ = tx.send(at);
            }
        }));
        clients.push(c);
    }
    let producer = connect(endpoints).await;
    let q = producer.queue(name, opts).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await; // every worker waiting
    let mut gaps = Gaps::new(gap_ms);
    let mut latencies = Vec::with_capacity(n);
    let before = requests();
    for i in 0..n {
        q.put(b"payload", TaskOptions { id: Some(i.to_string()), ..Default::default() }).await.unwrap();
        let put = Instant::now();
        let at = tokio::time::timeout(Duration::from_secs(10), claimed.recv()).await.expect("no claim within 10 s").unwrap();
        latencies.push(at.saturating_duration_since(put).as_secs_f64() * 1e3);
        tokio::time::sleep(gaps.next()).await;
    }
    let per_item = (requests() - before) / n as f64;
    stop.cancel();
    for h in handles {
        h.await.unwrap();
    }
    for c in clients {
        c.close().await;
    }
    producer.close().await;
    latencies.sort_by(f64::total_cmp);
    ([0.5, 0.9, 0.99].map(|p| percentile(&latencies, p)), per_item)
}

/// Requests on the server for one new item with `workers` idle workers, and how many took one.
async fn idle(endpoints: Vec<String>, workers: usize, requests: impl Fn() -> f64) -> (f64, usize) {
    let endpoints = &endpoints[..];
    let name = format!("bench/idle-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    let opts = QueueOptions { ttl_secs: 10, max_attempts: 5, ..Default::default() };
    let took = Arc::new(AtomicUsize::new(0));
    let mut clients = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..workers {
        let c = connect(endpoints).await;
        let q = c.queue(name.clone(), opts.clone()).unwrap();
        let took = took.clone();
        handles.push(tokio::spawn(async move {
            if let Ok(t) = q.claim(ClaimOptions { timeout: Some(Duration::from_secs(6)), ..Default::default() }).await {
                took.fetch_add(1, Ordering::AcqRel);
                t.ack().await.unwrap();
            }
        }));
        clients.push(c);
    }
    tokio::time::sleep(Duration::from_secs(1)).await; // every worker waiting
    let producer = connect(endpoints).await;
    let before = requests();
    producer.queue(name, opts).unwrap().put(b"one", TaskOptions::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cost = requests() - before;
    let woken = took.load(Ordering::Acquire);
    for c in &clients {
        c.close().await;
    }
    for h in handles {
        let _ = h.await;
    }
    producer.close().await;
    (cost, woken)
}

/// The Go recipe.Queue run (bench/go `--queue`): one JSON line `{"tasks_per_s","p50_ms","p99_ms"}`.
fn go_queue(go: &str, endpoints: &[String], n: usize, workers: usize) -> Result<(f64, f64, f64), String> {
    let out = std::process::Command::new(go)
        .args(["--endpoints", &endpoints.join(","), "--queue", "--tasks", &n.to_string(), "--workers", &workers.to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let line = String::from_utf8_lossy(&out.stdout);
    Ok((json_field(&line, "tasks_per_s")?, json_field(&line, "p50_ms")?, json_field(&line, "p99_ms")?))
}

/// The paced run with recipe.Queue (bench/go `--queue --paced`): the process sets up its workers
/// and says so, this side reads etcd's request count and tells it to go, and it answers with one
/// JSON line `{"p50_ms","p90_ms","p99_ms"}`. ([p50, p90, p99] ms, requests per item.)
fn go_paced(go: &str, endpoints: &[String], n: usize, workers: usize, gap_ms: f64, requests: &impl Fn() -> f64) -> Result<([f64; 3], f64), String> {
    let mut child = std::process::Command::new(go)
        .args(["--endpoints", &endpoints.join(","), "--queue", "--paced", "--tasks", &n.to_string(), "--workers", &workers.to_string()])
        .args(["--gap-ms", &gap_ms.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).map_err(|e| e.to_string())?;
    if line.trim() != "ready" {
        let _ = child.wait();
        return Err(format!("expected \"ready\", got {line:?}"));
    }
    let before = requests();
    child.stdin.take().unwrap().write_all(b"go\n").map_err(|e| e.to_string())?;
    line.clear();
    out.read_line(&mut line).map_err(|e| e.to_string())?;
    let per_item = (requests() - before) / n as f64;
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("exited with {status}"));
    }
    Ok(([json_field(&line, "p50_ms")?, json_field(&line, "p90_ms")?, json_field(&line, "p99_ms")?], per_item))
}

fn json_field(line: &str, k: &str) -> Result<f64, String> {
    let at = line.find(&format!("\"{k}\":")).ok_or(format!("no {k} in {line}"))? + k.len() + 3;
    line[at..].split([',', '}']).next().and_then(|v| v.trim().parse().ok()).ok_or(format!("bad {k} in {line}"))
}
