//! `etcdlock run --pool NAME -- CMD` as processes: each command gets slots nobody else holds,
//! in ETCDLOCK_SLOTS / ETCDLOCK_SLOT; `--count`; joining a defined pool; `status` of a pool;
//! a killed holder's slot rests; bad usage.

use crate::common::*;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// `sh -c` appending the slots, holding for `hold_s`.
fn record(file: &str, hold_s: f64) -> String {
    format!("echo \"$ETCDLOCK_SLOTS $ETCDLOCK_SLOT $ETCDLOCK_SLOT_TOKENS\" >> {file}; sleep {hold_s}")
}

// covers: CLI-POOL-001
#[test]
fn commands_get_slots_nobody_else_holds() {
    let (dir, pool) = (Dir::new("pool"), name("pool"));
    let file = dir.file("slots");
    let runs: Vec<_> = (0..3).map(|_| spawn(&["run", "--pool", "--slots", "gpu0,gpu1", &pool, "--", "sh", "-c", &record(&file, 0.6)])).collect();
    // Two at once, with distinct slots; the third after one of them.
    assert!(eventually(Duration::from_secs(10), || dir.read("slots").lines().count() >= 2));
    let first_two: Vec<String> = dir.read("slots").lines().take(2).map(|l| l.split(' ').next().unwrap().to_string()).collect();
    assert_ne!(first_two[0], first_two[1], "two commands held one slot: {first_two:?}");
    for r in runs {
        let out = wait_output(r, LIMIT);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let lines = dir.read("slots");
    assert_eq!(lines.lines().count(), 3, "{lines}");
    for l in lines.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!(f[0], f[1], "ETCDLOCK_SLOT is the first of ETCDLOCK_SLOTS: {l}");
        assert!(f[2].parse::<i64>().is_ok(), "{l}");
    }
    // --count 2 takes both; joining without --slots uses the stored definition.
    let both = output(&["run", "--pool", "--count", "2", &pool, "--", "sh", "-c", "echo $ETCDLOCK_SLOTS"], LIMIT);
    assert_eq!((code(&both), String::from_utf8_lossy(&both.stdout).trim()), (0, "gpu0,gpu1"), "{}", stderr(&both));
    let disagree = output(&["run", "--pool", "--slots", "gpu0,gpu9", &pool, "--", "true"], LIMIT);
    assert_ne!(code(&disagree), 0);
    assert!(stderr(&disagree).contains("add_slots"), "{}", stderr(&disagree));
    let left = keys_under(&format!("{pool}/"));
    assert!(left.iter().all(|k| !k.contains("/slot/") && !k.contains("/queue/")), "{left:?}");
}

// covers: CLI-POOL-002
#[test]
fn status_shows_a_pool_and_a_killed_holders_slot_rests() {
    let (dir, pool) = (Dir::new("pool-status"), name("pool-status"));
    let file = dir.file("slots");
    let holder = spawn(&["run", "--pool", "--size", "2", "--reuse-delay", "3s", "--ttl", "2", &pool, "--", "sh", "-c", &record(&file, 60.0)]);
    assert!(eventually(Duration::from_secs(10), || dir.read("slots").lines().count() == 1));
    let table = output(&["status", &pool], LIMIT);
    assert_eq!(code(&table), 0, "{}", stderr(&table));
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(text.contains("pool of 2 slots, 1 held, 0 resting, 1 free"), "{text}");
    let json = output(&["status", "--json", &pool], LIMIT);
    assert!(String::from_utf8_lossy(&json.stdout).contains(r#""state":"held""#) && String::from_utf8_lossy(&json.stdout).contains(r#""state":"free""#), "{}", String::from_utf8_lossy(&json.stdout));
    // Killed with its command: the slot is free again only after its lease (TTL 2) and 3 s of rest.
    signal(holder.id(), libc::SIGKILL);
    let mut holder = holder;
    let _ = holder.wait();
    let killed = Instant::now();
    let both = output(&["run", "--pool", "--count", "2", "--timeout", "20", &pool, "--", "sh", "-c", "echo $ETCDLOCK_SLOTS"], LIMIT);
    assert_eq!(code(&both), 0, "{}", stderr(&both));
    assert!(killed.elapsed() >= Duration::from_secs(3), "the killed holder's slot came back after {:?}", killed.elapsed());
}

// covers: CLI-POOL-USAGE-001
#[test]
fn bad_pool_usage_is_refused_with_nothing_written() {
    let pool = name("pool-usage");
    for args in [
        vec!["run", "--count", "2", pool.as_str(), "--", "true"],
        vec!["run", "--slots", "a,b", pool.as_str(), "--", "true"],
        vec!["run", "--pool", "--permits", "2", pool.as_str(), "--", "true"],
        vec!["run", "--pool", "--slots", "a,a", pool.as_str(), "--", "true"],
        vec!["run", "--pool", "--size", "2", "--count", "3", pool.as_str(), "--", "true"],
        vec!["run", "--pool", pool.as_str(), "--", "true"],
    ] {
        let out = output(&args, LIMIT);
        assert_ne!(code(&out), 0, "{args:?}");
        assert_eq!(stderr(&out).trim().lines().count(), 1, "{args:?}: {}", stderr(&out));
    }
    let left = keys_under(&format!("{pool}/"));
    assert!(left.iter().all(|k| k.ends_with("/spec")), "{left:?}");
}
