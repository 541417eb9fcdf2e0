//! `cargo run --release -p etcdlock-bench --example failover -- [--rounds N] [--ttl SECONDS] [--go]`
//!
//! Election failover time: a leader whose process stops (its connection black-holed by a TCP
//! proxy, so that it neither resigns nor keeps its lease alive, as a killed or frozen process)
//! while a second candidate waits; the time from the stop to the second candidate's `campaign`
//! returning. The bound is the lease's TTL (etcd expires it) plus etcd's lease-expiry check
//! (every 500 ms) plus one round trip for the handoff. Against an etcd this program starts
//! (`ETCD_BIN` picks the binary). Prints each round and the median, next to the TTL.
//!
//! The time is about the TTL, minus how long before the stop the leader's last keepalive went,
//! plus the wait for etcd's next lease check (a 500 ms ticker of the server's). Both depend on
//! phases, which a crash would not line up: so each round starts at a random moment (0-500 ms
//! after the last one, which ended on that ticker: the clients' keepalive schedules, set from
//! their start, would otherwise keep one phase to it, round after round), and the stop comes at a
//! random moment 300 ms to 300 ms + TTL after the second candidate is queued. Each round also
//! prints how long before the stop the leader last sent anything through the proxy (its last
//! keepalive, mostly).
//!
//! `--go`: each round, after ours, the same with etcd's Go `concurrency.Election` through the same
//! proxy (`bench_go --failover`, built by scripts/build-go-bench.sh, which this runs; the line
//! protocol is in bench/go/failover.go), and both medians and their ratio at the end.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use etcd_testkit::proxy::{Mode, Proxy};

fn main() {
    let (mut rounds, mut ttl, mut go) = (5usize, 2i64, false);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rounds" => rounds = it.next().and_then(|s| s.parse().ok()).filter(|&n| n > 0).expect("--rounds N"),
            "--ttl" => ttl = it.next().and_then(|s| s.parse().ok()).expect("--ttl SECONDS"),
            "--go" => go = true,
            other => panic!("unknown argument {other:?}"),
        }
    }
    let go_bin = go.then(build_go);
    let etcd = etcd_testkit::Etcd::start(1);
    let proxy = Arc::new(Proxy::start(etcd.members[0].client_port));
    let last_sent = watch_sent(proxy.clone());
    // Per round: (stop to next leader, last bytes to stop), ours and Go's.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (endpoints, p, l) = (etcd.endpoints(), proxy.clone(), last_sent.clone());
        let (took, quiet) = etcdlock::runtime::block_on(ours_round(round, endpoints, p, l, ttl)).expect("failover run");
        print!("round {round}: next leader after {:.0} ms (TTL {ttl} s; last sent {:.0} ms before the stop)", ms(took), ms(quiet));
        ours.push((took, quiet));
        if let Some(bin) = &go_bin {
            let (took_go, quiet) = go_round(bin, &proxy, &last_sent, &etcd.endpoints(), ttl);
            print!(
                "; Go concurrency.Election {:.0} ms (last sent {:.0} ms before); ours / Go {:.2}",
                ms(took_go),
                ms(quiet),
                took.as_secs_f64() / took_go.as_secs_f64()
            );
            theirs.push((took_go, quiet));
        }
        println!();
    }
    let v = etcd_testkit::etcd_version();
    println!("election failover, etcd {}.{}.{}, TTL {ttl} s, {rounds} rounds (bound: TTL + 500 ms lease check + 1 round trip):", v.0, v.1, v.2);
    let summary = |who: &str, rounds: &[(Duration, Duration)]| {
        let mut took: Vec<f64> = rounds.iter().map(|r| ms(r.0)).collect();
        took.sort_by(f64::total_cmp);
        let n = took.len() as f64;
        println!(
            "  {who:<24} median {:.0} ms, mean {:.0} ms, max {:.0} ms; last sent {:.0} ms before the stop on average",
            took[took.len() / 2],
            took.iter().sum::<f64>() / n,
            took[took.len() - 1],
            rounds.iter().map(|r| ms(r.1)).sum::<f64>() / n
        );
        took[took.len() / 2]
    };
    let m = summary("etcdlock", &ours);
    if !theirs.is_empty() {
        let g = summary("Go concurrency.Election", &theirs);
        let mut ratios: Vec<f64> = ours.iter().zip(&theirs).map(|(o, g)| o.0.as_secs_f64() / g.0.as_secs_f64()).collect();
        ratios.sort_by(f64::total_cmp);
        let n = ratios.len();
        println!(
            "  ours / Go: {:.2} (medians); per round {:.2} [{:.2}-{:.2}] (median [middle half])",
            m / g,
            ratios[n / 2],
            ratios[n / 4],
            ratios[(3 * n) / 4]
        );
    }
}

/// When bytes last went from a client through the proxy to etcd (polled every 0.5 ms).
type LastSent = Arc<std::sync::Mutex<Instant>>;

fn watch_sent(proxy: Arc<Proxy>) -> LastSent {
    let last = Arc::new(std::sync::Mutex::new(Instant::now()));
    let l = last.clone();
    std::thread::spawn(move || {
        let mut sent = proxy.sent();
        loop {
            std::thread::sleep(Duration::from_micros(500));
            if proxy.sent() != sent {
                sent = proxy.sent();
                *l.lock().unwrap() = Instant::now();
            }
        }
    });
    last
}

/// A number in [0, 1), different at each call.
fn random() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The random wait before a round: see the header.
fn before_round() -> Duration {
    Duration::from_secs_f64(random() * 0.5)
}

/// 300 ms (the second candidate queued) plus a random part of the TTL: see the header.
fn before_stop(ttl: i64) -> Duration {
    Duration::from_millis(300) + Duration::from_secs_f64(random() * ttl as f64)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The time from the stop to the next leader, and from the leader's last bytes to the stop.
async fn ours_round(round: usize, endpoints: Vec<String>, proxy: Arc<Proxy>, last_sent: LastSent, ttl: i64) -> (Duration, Duration) {
    tokio::time::sleep(before_round()).await;
    let name = format!("bench/failover-{}-{round}", std::process::id());
    // The leader reaches etcd through the proxy only; the next one directly.
    let leader = etcdlock::Client::connect([proxy.endpoint()], Default::default()).await.expect("connect");
    let next = etcdlock::Client::connect(endpoints, Default::default()).await.expect("connect");
    let leadership = leader.election(name.clone(), ttl).unwrap().campaign("first").await.unwrap();
    let election = next.election(name.clone(), ttl).unwrap();
    let waiting = tokio::spawn(async move { election.campaign("next").await });
    tokio::time::sleep(before_stop(ttl)).await;
    let stopped = Instant::now();
    proxy.set(Mode::Blackhole);
    let quiet = stopped.saturating_duration_since(*last_sent.lock().unwrap());
    let took = tokio::time::timeout(Duration::from_secs(ttl as u64 * 3 + 10), waiting)
        .await
        .expect("the next candidate leads")
        .unwrap()
        .expect("campaign");
    let elapsed = stopped.elapsed();
    assert!(took.fencing_token() > leadership.fencing_token());
    took.resign().await.unwrap();
    next.close().await;
    drop(leadership);
    proxy.set(Mode::Pass);
    proxy.reset();
    leader.close().await;
    (elapsed, quiet)
}

/// `bash scripts/build-go-bench.sh`, which prints the binary's path.
fn build_go() -> PathBuf {
    let root = etcd_testkit::repo_root();
    let out = Command::new("bash").arg(root.join("scripts/build-go-bench.sh")).stderr(Stdio::inherit()).output().expect("bash");
    assert!(out.status.success(), "scripts/build-go-bench.sh failed");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// One round with Go's `concurrency.Election`: its leader through `proxy`, as ours. The time is
/// bench_go's own, from reading "stopped" (just after the black hole) to `Campaign` returning.
fn go_round(bin: &Path, proxy: &Proxy, last_sent: &LastSent, endpoints: &[String], ttl: i64) -> (Duration, Duration) {
    let limit = Duration::from_secs(ttl as u64 * 3 + 10);
    std::thread::sleep(before_round());
    let mut child = Command::new(bin)
        .args(["--failover", "--leader-endpoints", &proxy.endpoint(), "--endpoints", &endpoints.join(","), "--ttl", &ttl.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("bench_go");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut step = |send: Option<&str>, want: &str| -> Result<String, String> {
        if let Some(line) = send {
            writeln!(stdin, "{line}").map_err(|e| format!("writing {line:?}: {e}"))?;
        }
        if want.is_empty() {
            return Ok(String::new());
        }
        match lines.recv_timeout(limit) {
            Ok(line) if line.starts_with(want) => Ok(line),
            got => Err(format!("expected {want:?}, got {got:?}")),
        }
    };
    let mut run = || -> Result<(Duration, Duration), String> {
        step(None, "ready")?;
        std::thread::sleep(before_stop(ttl));
        let stopped = Instant::now();
        proxy.set(Mode::Blackhole);
        let quiet = stopped.saturating_duration_since(*last_sent.lock().unwrap());
        let took = step(Some("stopped"), "took ")?;
        let took: f64 = took["took ".len()..].parse().map_err(|e| format!("{took:?}: {e}"))?;
        proxy.set(Mode::Pass);
        proxy.reset();
        step(Some("reset"), "")?;
        Ok((Duration::from_secs_f64(took / 1e3), quiet))
    };
    let result = run();
    proxy.set(Mode::Pass);
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait().expect("bench_go's status") {
            Some(status) => break Some(status),
            None if Instant::now() > deadline || result.is_err() => break None,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let took = result.unwrap_or_else(|e| panic!("bench_go --failover: {e}"));
    match status {
        Some(s) if s.success() => took,
        other => panic!("bench_go --failover did not end well: {other:?}"),
    }
}
