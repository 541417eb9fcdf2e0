//! `cargo run --release -p etcdlock-bench --example failover -- [--rounds N] [--ttl SECONDS]`
//!
//! Election failover time: a leader whose process stops (its connection black-holed by a TCP
//! proxy, so that it neither resigns nor keeps its lease alive, as a killed or frozen process)
//! while a second candidate waits; the time from the stop to the second candidate's `campaign`
//! returning. The bound is the lease's TTL (etcd expires it) plus etcd's lease-expiry check
//! (every 500 ms) plus one round trip for the handoff. Against an etcd this program starts
//! (`ETCD_BIN` picks the binary). Prints each round and the median, next to the TTL.

use std::time::{Duration, Instant};

fn main() {
    let (mut rounds, mut ttl) = (5usize, 2i64);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rounds" => rounds = it.next().and_then(|s| s.parse().ok()).filter(|&n| n > 0).expect("--rounds N"),
            "--ttl" => ttl = it.next().and_then(|s| s.parse().ok()).expect("--ttl SECONDS"),
            other => panic!("unknown argument {other:?}"),
        }
    }
    let etcd = etcd_testkit::Etcd::start(1);
    let proxy = etcd_testkit::proxy::Proxy::start(etcd.members[0].client_port);
    let times = etcdlock::runtime::block_on(async move {
        let mut times = Vec::new();
        for round in 0..rounds {
            let name = format!("bench/failover-{}-{round}", std::process::id());
            // The leader reaches etcd through the proxy only; the next one directly.
            let leader = etcdlock::Client::connect([proxy.endpoint()], Default::default()).await.expect("connect");
            let next = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await.expect("connect");
            let leadership = leader.election(name.clone(), ttl).unwrap().campaign("first").await.unwrap();
            let election = next.election(name.clone(), ttl).unwrap();
            let waiting = tokio::spawn(async move { election.campaign("next").await });
            tokio::time::sleep(Duration::from_millis(300)).await;
            let stopped = Instant::now();
            proxy.set(etcd_testkit::proxy::Mode::Blackhole);
            let took = tokio::time::timeout(Duration::from_secs(ttl as u64 * 3 + 10), waiting)
                .await
                .expect("the next candidate leads")
                .unwrap()
                .expect("campaign");
            let elapsed = stopped.elapsed();
            assert!(took.fencing_token() > leadership.fencing_token());
            println!("round {round}: next leader after {:.0} ms (TTL {ttl} s)", elapsed.as_secs_f64() * 1e3);
            times.push(elapsed);
            took.resign().await.unwrap();
            next.close().await;
            drop(leadership);
            proxy.set(etcd_testkit::proxy::Mode::Pass);
            proxy.reset();
            leader.close().await;
        }
        times
    })
    .expect("failover run");
    let mut sorted = times.clone();
    sorted.sort();
    println!(
        "election failover, TTL {ttl} s: median {:.0} ms, max {:.0} ms over {rounds} rounds (bound: TTL + 500 ms lease check + 1 round trip)",
        sorted[sorted.len() / 2].as_secs_f64() * 1e3,
        sorted[sorted.len() - 1].as_secs_f64() * 1e3
    );
}
