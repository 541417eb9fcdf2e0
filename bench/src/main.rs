//! `cargo run --release -p etcdlock-bench [-- --endpoints URLS] [--seconds N] [--rounds N] [--json] [--only NAME-PART]`
//! `etcdlock-bench --endpoints URLS --serve` (for `bench/run.py`)
//!
//! Measures, in one run against one etcd, etcdlock's mutex next to the minimal raw loop a lock
//! cycle can take (a put-if-absent Txn with a pre-granted lease, then a Delete):
//! uncontended cycles/s, 64 tasks on one client each locking its own name, and 4 and 16
//! clients contending for one name (cycles/s, handoff latency, Jain's fairness index).
//! Without `--endpoints` it starts its own single-member etcd with its data in /dev/shm.
//!
//! With `--serve` it runs one workload per line read from stdin (`SECONDS WORKLOAD NAME`, e.g.
//! `1 lock uncontended`) and answers each with one JSON line, until stdin closes: `bench/run.py`
//! keeps one such process per language and alternates them window by window, so that the
//! machine's drift hits the languages it compares alike.

mod cycles;
mod workloads;

use std::time::Duration;
use workloads::{Report, Workload};

struct Args {
    endpoints: Option<Vec<String>>,
    seconds: f64,
    rounds: usize,
    json: bool,
    /// Run only the workloads whose name contains this (for profiling one of them).
    only: Option<String>,
    serve: bool,
}

fn parse_args() -> Args {
    let mut args = Args { endpoints: None, seconds: 1.0, rounds: 5, json: false, only: None, serve: false };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--endpoints" => args.endpoints = it.next().map(|s| s.split(',').map(str::to_string).collect()),
            "--seconds" => args.seconds = it.next().and_then(|s| s.parse().ok()).expect("--seconds N"),
            "--rounds" => args.rounds = it.next().and_then(|s| s.parse().ok()).filter(|&n| n > 0).expect("--rounds N"),
            "--json" => args.json = true,
            "--only" => args.only = it.next(),
            "--serve" => args.serve = true,
            "-h" | "--help" => {
                println!("usage: etcdlock-bench [--endpoints URL[,URL]] [--seconds N] [--rounds N] [--json] [--only NAME-PART] | --endpoints URL[,URL] --serve");
                std::process::exit(0);
            }
            other => panic!("unknown argument {other:?}"),
        }
    }
    args
}

fn main() {
    let args = parse_args();
    // Everything, the raw loop included, runs on the library's shared runtime: that is where
    // every binding's calls run too, and it keeps the comparison on equal terms.
    if args.serve {
        serve(args.endpoints.expect("--serve needs --endpoints"));
    } else {
        etcdlock::runtime::block_on(bench(args)).expect("benchmark panicked");
    }
}

fn serve(endpoints: Vec<String>) {
    use std::io::{BufRead, Write};
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let Some((secs, name)) = line.trim().split_once(' ') else { break };
        let secs: f64 = secs.parse().expect("SECONDS WORKLOAD");
        let w = workloads::ALL.iter().find(|w| w.name() == name).unwrap_or_else(|| panic!("unknown workload {name:?}"));
        let (w, endpoints) = (*w, endpoints.clone());
        let report = etcdlock::runtime::block_on(async move { workloads::run(w, &endpoints, Duration::from_secs_f64(secs)).await })
            .expect("benchmark panicked");
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", report.json("rust")).and_then(|_| out.flush()).expect("stdout");
    }
}

async fn bench(args: Args) {
    let own = args.endpoints.is_none().then(|| etcd_testkit::Etcd::start(1));
    let endpoints = args.endpoints.clone().unwrap_or_else(|| own.as_ref().unwrap().endpoints());
    let dur = Duration::from_secs_f64(args.seconds);

    // Warm the server up (WAL preallocation, first compactions) before anything is timed.
    workloads::run(Workload::RawUncontended, &endpoints, Duration::from_millis(500)).await;
    let mut order = workloads::ALL.to_vec();
    if let Some(only) = &args.only {
        order.retain(|w| w.name().contains(only.as_str()));
    }
    // Rounds interleave the workloads so that drift in the machine's load hits them alike;
    // each row reports its median round.
    let mut rounds: Vec<Vec<Report>> = order.iter().map(|_| Vec::new()).collect();
    for _ in 0..args.rounds {
        for (i, w) in order.iter().enumerate() {
            rounds[i].push(workloads::run(*w, &endpoints, dur).await);
        }
    }
    let reports: Vec<Report> = rounds.into_iter().map(workloads::median).collect();
    if args.json {
        for r in &reports {
            println!("{}", r.json("rust"));
        }
    }
    if !args.json {
        print_table(&reports);
    }
    drop(own);
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
