//! What the database's fence check costs per transaction from Rust: the same small write
//! transaction with and without `etcdlock::fencing::postgres::check`, on tokio-postgres (the
//! Rust row of bench/README.md, "Fence cost rows"; `bench/fence.py` has Python's and SQLite's).
//!
//! ```text
//! cargo run --release -p etcdlock --features postgres --example fence_cost -- [TRANSACTIONS] [ROUNDS] [BLOCK]
//! ```
//!
//! plain: BEGIN; UPDATE bench_row SET n = n + 1 WHERE id = 1 (prepared once); COMMIT. fenced:
//! BEGIN; the check (one round trip, typed parameters); the same UPDATE; COMMIT. One connection
//! over TCP to a throwaway PostgreSQL (`tests/pg_harness.py`, fsync and synchronous_commit off)
//! unless `ETCDLOCK_PG_DSN` names one; the fence is one holder's, the same token every time;
//! no etcd. Each round runs TRANSACTIONS (default 2000) of each kind in blocks of BLOCK (100)
//! that alternate (the first kind swaps every block); the output is bench/fence.py's.

use etcdlock::fencing::{postgres, Fence, FenceKind};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

const UPDATE: &str = "UPDATE bench_row SET n = n + 1 WHERE id = 1";

/// A throwaway PostgreSQL started by tests/pg_harness.py, stopped on drop.
struct Server {
    dir: PathBuf,
}

impl Server {
    fn harness() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/pg_harness.py")
    }

    fn start() -> (Server, String) {
        let dir = std::env::temp_dir().join(format!("etcdlock-fence-cost-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("python3").arg(Server::harness()).args(["start", "--state"]).arg(dir.join("pg.json")).output().expect("run python3 tests/pg_harness.py");
        let server = Server { dir };
        assert!(out.status.success(), "cannot start PostgreSQL: {}", String::from_utf8_lossy(&out.stderr));
        (server, String::from_utf8(out.stdout).unwrap().trim().to_string())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("python3").arg(Server::harness()).args(["stop", "--state"]).arg(self.dir.join("pg.json")).status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The p-th percentile (nearest rank) of sorted nanoseconds, in microseconds.
fn pct(sorted: &[u64], p: f64) -> f64 {
    let i = ((p / 100.0 * sorted.len() as f64).round() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("TRANSACTIONS ROUNDS BLOCK: numbers")).collect();
    let (transactions, rounds, block) = (*args.first().unwrap_or(&2000), *args.get(1).unwrap_or(&3), *args.get(2).unwrap_or(&100));
    let (server, dsn) = match std::env::var("ETCDLOCK_PG_DSN") {
        Ok(dsn) => (None, dsn),
        Err(_) => {
            let (s, dsn) = Server::start();
            (Some(s), dsn)
        }
    };
    let (mut db, connection) = tokio_postgres::connect(&dsn, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    postgres::install(&db).await?;
    db.batch_execute("DROP TABLE IF EXISTS bench_row; CREATE TABLE bench_row (id INTEGER PRIMARY KEY, n BIGINT NOT NULL); INSERT INTO bench_row VALUES (1, 0)").await?;
    let update = db.prepare(UPDATE).await?;
    let fence = Fence { kind: FenceKind::Queue, name: b"bench/accounts/7".to_vec(), token: 4242, cluster: 0xc0ffee };
    db.execute("DELETE FROM etcdlock_fence WHERE resource = $1", &[&"bench/accounts/7"]).await?;

    let mut lat: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut ratios = Vec::new();
    let warm = transactions.min(200);
    for r in 0..=rounds {
        // Round 0 warms up (connection, caches, the mark's row) and is not counted.
        let n_round = if r == 0 { warm } else { transactions };
        let mut spent = [0u64; 2];
        let (mut done, mut b) = (0, 0);
        while done < n_round {
            let n = block.min(n_round - done);
            let order = if (r + b) % 2 == 0 { [0, 1] } else { [1, 0] };
            for kind in order {
                for _ in 0..n {
                    let t0 = Instant::now();
                    let txn = db.transaction().await?;
                    if kind == 1 {
                        postgres::check(&txn, &fence, None).await?;
                    }
                    txn.execute(&update, &[]).await?;
                    txn.commit().await?;
                    let t = t0.elapsed().as_nanos() as u64;
                    spent[kind] += t;
                    if r > 0 {
                        lat[kind].push(t);
                    }
                }
            }
            done += n;
            b += 1;
        }
        if r > 0 {
            ratios.push(spent[0] as f64 / spent[1] as f64); // (n / fenced time) / (n / plain time)
        }
    }
    let n: i64 = db.query_one("SELECT n FROM bench_row WHERE id = 1", &[]).await?.get(0);
    assert_eq!(n as usize, 2 * (warm + rounds * transactions), "every transaction committed once");

    println!("fence cost (Rust, tokio-postgres): {transactions} transactions of each kind x {rounds} rounds, blocks of {block}");
    println!("{:<11} {:<7} {:>8} {:>8} {:>8}   fenced/plain tx/s: median [min-max] of rounds; +us at p50", "database", "kind", "tx/s", "p50 us", "p99 us");
    ratios.sort_by(f64::total_cmp);
    let plain_p50 = {
        lat[0].sort_unstable();
        pct(&lat[0], 50.0)
    };
    for (kind, name) in [(0, "plain"), (1, "fenced")] {
        let ns = &mut lat[kind];
        ns.sort_unstable();
        let tx_s = ns.len() as f64 / (ns.iter().sum::<u64>() as f64 / 1e9);
        let tail = match kind {
            1 => format!("   {:.2} [{:.2}-{:.2}]; +{:.0} us", ratios[ratios.len() / 2], ratios[0], ratios[ratios.len() - 1], pct(ns, 50.0) - plain_p50),
            _ => String::new(),
        };
        println!("{:<11} {name:<7} {tx_s:>8.0} {:>8.0} {:>8.0}{tail}", "postgres", pct(ns, 50.0), pct(ns, 99.0));
    }
    let version: String = db.query_one("SHOW server_version", &[]).await?.get(0);
    println!("  postgres: PostgreSQL {version}, tokio-postgres 0.7, TCP; {}", if server.is_some() { "tests/pg_harness.py (fsync=off, synchronous_commit=off)" } else { "ETCDLOCK_PG_DSN" });
    Ok(())
}
