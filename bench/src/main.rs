//! `cargo run --release -p etcdlock-bench [-- --endpoints URLS [--tls-endpoints URLS --tls-dir DIR]] [--seconds N] [--rounds N] [--json] [--only NAME-PART]`
//! `etcdlock-bench --endpoints URLS --serve` (for `bench/run.py`)
//!
//! Measures, in one run against one etcd, etcdlock's mutex next to the minimal raw loop a lock
//! cycle can take (a put-if-absent Txn with a pre-granted lease, then a Delete):
//! uncontended cycles/s, 64 tasks on one client each locking its own name, and 4 and 16
//! clients contending for one name (cycles/s, handoff latency, Jain's fairness index); also a
//! semaphore and a read-write lock under contention, and a task queue's tasks/s with one producer
//! and 4 or 16 workers (`queue.rs`).
//! The `tls` rows run the uncontended and 64-task lock and raw loops again over the same etcd's
//! TLS listener with a client certificate (mTLS), right after their plain twins in every round,
//! and the run ends with their TLS ÷ plain ratios.
//! Without `--endpoints` it starts its own single-member etcd with its data in /dev/shm, serving
//! plain HTTP/2 and TLS (with a client certificate) on two ports (`etcd_testkit::tls::TlsEtcd`:
//! certificates made for the run; HTTP on a third port where etcd allows it, so that gRPC over
//! TLS is served as in production).
//! With `--endpoints`, the `tls` rows run only if `--tls-endpoints` (the same etcd's https://
//! URLs) and `--tls-dir` (ca.pem, client.pem, client.key) are given.
//!
//! With `--serve` it runs one workload per line read from stdin (`SECONDS WORKLOAD NAME`, e.g.
//! `1 lock uncontended`) and answers each with one JSON line, until stdin closes: `bench/run.py`
//! keeps one such process per language and alternates them window by window, so that the
//! machine's drift hits the languages it compares alike.

mod cpu;
mod cycles;
mod queue;
mod recipes;
mod workloads;

use std::time::Duration;
use workloads::{Report, Target, TlsTarget, Workload};

struct Args {
    endpoints: Option<Vec<String>>,
    tls_endpoints: Option<Vec<String>>,
    tls_dir: Option<std::path::PathBuf>,
    seconds: f64,
    rounds: usize,
    json: bool,
    /// Run only the workloads whose name contains this (for profiling one of them).
    only: Option<String>,
    serve: bool,
}

fn parse_args() -> Args {
    let mut args = Args { endpoints: None, tls_endpoints: None, tls_dir: None, seconds: 1.0, rounds: 5, json: false, only: None, serve: false };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--endpoints" => args.endpoints = it.next().map(|s| s.split(',').map(str::to_string).collect()),
            "--tls-endpoints" => args.tls_endpoints = it.next().map(|s| s.split(',').map(str::to_string).collect()),
            "--tls-dir" => args.tls_dir = it.next().map(Into::into),
            "--seconds" => args.seconds = it.next().and_then(|s| s.parse().ok()).expect("--seconds N"),
            "--rounds" => args.rounds = it.next().and_then(|s| s.parse().ok()).filter(|&n| n > 0).expect("--rounds N"),
            "--json" => args.json = true,
            "--only" => args.only = it.next(),
            "--serve" => args.serve = true,
            "-h" | "--help" => {
                println!("usage: etcdlock-bench [--endpoints URL[,URL] [--tls-endpoints URL[,URL] --tls-dir DIR]] [--seconds N] [--rounds N] [--json] [--only NAME-PART] | --endpoints URL[,URL] [--tls-endpoints ... --tls-dir DIR] --serve");
                std::process::exit(0);
            }
            other => panic!("unknown argument {other:?}"),
        }
    }
    assert_eq!(args.tls_endpoints.is_some(), args.tls_dir.is_some(), "--tls-endpoints and --tls-dir go together");
    args
}

impl Args {
    /// The TLS listener given on the command line, if any.
    fn tls_target(&self) -> Option<TlsTarget> {
        Some(TlsTarget { endpoints: self.tls_endpoints.clone()?, dir: self.tls_dir.clone()? })
    }

    /// The workloads to run, in order: `--only` keeps the plain twin of every `tls` row it keeps,
    /// and the `tls` rows need a TLS listener (ours, or `--tls-endpoints`).
    fn order(&self, tls: bool) -> Vec<Workload> {
        let picked = |w: &Workload| self.only.as_ref().map_or(true, |only| w.name().contains(only.as_str()));
        let keep: Vec<Workload> = workloads::ALL.iter().copied().filter(|w| tls || w.plain_twin().is_none()).collect();
        keep.iter()
            .copied()
            .filter(|w| picked(w) || keep.iter().any(|t| picked(t) && t.plain_twin().map(|p| p.name()) == Some(w.name())))
            .collect()
    }
}

fn main() {
    let args = parse_args();
    // Everything, the raw loop included, runs on the library's shared runtime: that is where
    // every binding's calls run too, and it keeps the comparison on equal terms.
    if args.serve {
        let target = Target { plain: args.endpoints.clone().expect("--serve needs --endpoints"), tls: args.tls_target() };
        serve(target);
    } else {
        // Our own etcd serves TLS too when a `tls` row is to run.
        let own_tls = args.endpoints.is_none() && args.order(true).iter().any(|w| w.plain_twin().is_some());
        etcdlock::runtime::block_on(bench(args, own_tls)).expect("benchmark panicked");
    }
}

fn serve(target: Target) {
    use std::io::{BufRead, Write};
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let Some((secs, name)) = line.trim().split_once(' ') else { break };
        let secs: f64 = secs.parse().expect("SECONDS WORKLOAD");
        let w = workloads::ALL.iter().find(|w| w.name() == name).unwrap_or_else(|| panic!("unknown workload {name:?}"));
        let (w, target) = (*w, target.clone());
        let report = etcdlock::runtime::block_on(async move { workloads::run(w, &target, Duration::from_secs_f64(secs)).await })
            .expect("benchmark panicked");
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", report.json("rust")).and_then(|_| out.flush()).expect("stdout");
    }
}

async fn bench(args: Args, own_tls: bool) {
    // One etcd: ours (plain only, or plain and TLS on two ports of the same member), or the
    // one given.
    let (own, own_tls_etcd) = match (&args.endpoints, own_tls) {
        (Some(_), _) => (None, None),
        (None, false) => (Some(etcd_testkit::Etcd::start(1)), None),
        (None, true) => (None, Some(etcd_testkit::tls::TlsEtcd::start_with("server", true, &[], true))),
    };
    let target = match (&own, &own_tls_etcd) {
        (Some(e), _) => Target { plain: e.endpoints(), tls: None },
        (_, Some(e)) => {
            Target { plain: vec![e.plain()], tls: Some(TlsTarget { endpoints: vec![e.https()], dir: e.certs.dir.clone() }) }
        }
        _ => Target { plain: args.endpoints.clone().unwrap(), tls: args.tls_target() },
    };
    let dur = Duration::from_secs_f64(args.seconds);

    // Warm the server up (WAL preallocation, first compactions) before anything is timed.
    workloads::run(Workload::RawUncontended, &target, Duration::from_millis(500)).await;
    let order = args.order(target.tls.is_some());
    // Rounds interleave the workloads so that drift in the machine's load hits them alike;
    // each row reports its median round. A `tls` row and its plain twin run back to back, the
    // plain one first in odd rounds and second in even ones.
    let mut rounds: Vec<Vec<Report>> = order.iter().map(|_| Vec::new()).collect();
    for round in 0..args.rounds {
        let mut i = 0;
        while i < order.len() {
            let pair = i + 1 < order.len() && order[i + 1].plain_twin().map(|p| p.name()) == Some(order[i].name());
            let mut batch = if pair { vec![i, i + 1] } else { vec![i] };
            if round % 2 == 1 {
                batch.reverse();
            }
            for &j in &batch {
                rounds[j].push(workloads::run(order[j], &target, dur).await);
            }
            i += batch.len();
        }
    }
    let ratios = tls_ratios(&order, &rounds);
    let reports: Vec<Report> = rounds.into_iter().map(workloads::median).collect();
    if args.json {
        for r in &reports {
            println!("{}", r.json("rust"));
        }
    }
    if !args.json {
        print_table(&reports);
        print_tls_ratios(&ratios, args.rounds);
        if let Some(e) = &own_tls_etcd {
            let (major, minor, patch) = etcd_testkit::etcd_version();
            let version = format!("{major}.{minor}.{patch}");
            if e.http_port.is_some() {
                println!("  (etcd {version}: gRPC alone on both client ports, HTTP on a third: --listen-client-http-urls)");
            } else {
                println!("  (etcd {version} has no --listen-client-http-urls (3.5.8+): it serves gRPC over TLS through Go's HTTP");
                println!("   server, about half as fast here as its own gRPC server (etcd-io/etcd#15402); ETCD_BIN=.tools/etcd-v3.6.16/etcd)");
            }
        }
    }
    drop(own);
    drop(own_tls_etcd);
}

/// For each `tls` row: its name and the per-round ratios TLS cycles/s ÷ its plain twin's, sorted.
fn tls_ratios(order: &[Workload], rounds: &[Vec<Report>]) -> Vec<(String, Vec<f64>)> {
    let mut out = Vec::new();
    for (i, w) in order.iter().enumerate() {
        let Some(twin) = w.plain_twin() else { continue };
        let Some(j) = order.iter().position(|p| p.name() == twin.name()) else { continue };
        let mut r: Vec<f64> = rounds[i].iter().zip(&rounds[j]).map(|(t, p)| t.cycles_per_sec / p.cycles_per_sec).collect();
        r.sort_by(f64::total_cmp);
        out.push((w.name(), r));
    }
    out
}

fn print_tls_ratios(ratios: &[(String, Vec<f64>)], rounds: usize) {
    if ratios.is_empty() {
        return;
    }
    println!();
    println!("TLS (client certificate) / plain cycles/s, same etcd, per round ({rounds} rounds; median [min-max]):");
    for (name, r) in ratios {
        let plain = name.trim_start_matches("tls ");
        println!("  {plain:<38} {:.2} [{:.2}-{:.2}]", r[r.len() / 2], r[0], r[r.len() - 1]);
    }
}

fn print_table(reports: &[Report]) {
    let raw_unc = reports.iter().find(|r| r.name == "raw uncontended").map(|r| r.cycles_per_sec).unwrap_or(f64::NAN);
    let raw_many = reports.iter().find(|r| r.name.starts_with("raw many")).map(|r| r.cycles_per_sec).unwrap_or(f64::NAN);
    println!("{:<40} {:>11} {:>9} {:>11} {:>11} {:>7}", "workload", "cycles/s", "x raw", "handoff p50", "handoff p99", "Jain");
    for r in reports {
        let base = if r.name.contains("many") { raw_many } else { raw_unc };
        let ms = |d: Option<Duration>| d.map_or("-".to_string(), |d| format!("{:.2} ms", d.as_secs_f64() * 1e3));
        println!(
            "{:<40} {:>11.0} {:>9.2} {:>11} {:>11} {:>7}",
            r.name,
            r.cycles_per_sec,
            r.cycles_per_sec / base,
            ms(r.handoff_p50),
            ms(r.handoff_p99),
            r.jain.map_or("-".to_string(), |j| format!("{j:.3}")),
        );
    }
    println!("(x raw: against the raw uncontended loop, or the raw 64-task loop for 'many' rows, both over");
    println!(" etcd-client's channel; \"etcdlock's channel\": the raw loop over the leaner one etcdlock's KV requests");
    println!(" take; 'raw lock-shaped': the lock's two requests sent raw over that channel, the most a lock can reach)");
}
