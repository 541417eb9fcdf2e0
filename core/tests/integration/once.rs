//! Once-per-period jobs (`Client::once`): one run per period across triggers, the next period
//! runs again, a failed or dead winner's period is run by the next trigger, done marks expire.

use crate::common::*;
use etcdlock::{ErrorKind, OnceOptions, Op};
use std::time::{Duration, SystemTime};

fn at(opts: &OnceOptions, t: SystemTime) -> OnceOptions {
    OnceOptions { at: Some(t), ..opts.clone() }
}

// covers: ONCE-SLOT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_triggers_of_one_period_run_the_job_once_and_the_next_period_again() {
    let name = prefix("once-slot") + "job";
    let clients = [client().await, client().await, client().await];
    let hour = OnceOptions::every(Duration::from_secs(3600));
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(3600 * 500_000);
    // Clocks up to 29 minutes apart pick the same slot, the nearest boundary.
    let min29 = Duration::from_secs(29 * 60);
    let (a, b, c) = tokio::join!(
        clients[0].once(name.clone(), at(&hour, t - min29)),
        clients[1].once(name.clone(), at(&hour, t)),
        clients[2].once(name.clone(), at(&hour, t + min29)),
    );
    let won = [a.unwrap(), b.unwrap(), c.unwrap()];
    assert_eq!(won.iter().filter(|w| w.is_some()).count(), 1, "one winner");
    let slot = won.into_iter().flatten().next().unwrap();
    assert_eq!(slot.slot(), 500_000);
    slot.done().await.unwrap();
    assert!(clients[1].once(name.clone(), at(&hour, t + Duration::from_secs(60))).await.unwrap().is_none(), "ran twice in a period");
    let next = clients[2].once(name.clone(), at(&hour, t + Duration::from_secs(3600))).await.unwrap().expect("the next period runs");
    assert_eq!(next.slot(), 500_001);
    next.done().await.unwrap();
    for c in clients {
        c.close().await;
    }
}

// covers: ONCE-RETRY-001
#[tokio::test]
async fn a_failed_or_dead_winners_period_is_run_by_the_next_trigger() {
    let name = prefix("once-retry") + "job";
    let c = client().await;
    let o = at(&OnceOptions { ttl_secs: 2, ..OnceOptions::every(Duration::from_secs(3600)) }, SystemTime::now());
    let first = c.once(name.clone(), o.clone()).await.unwrap().unwrap();
    assert!(c.once(name.clone(), o.clone()).await.unwrap().is_none(), "claimed twice");
    first.release().await.unwrap(); // the job failed
    let second = c.once(name.clone(), o.clone()).await.unwrap().expect("a failed job runs again");
    // The winner dies: its claim goes with its lease.
    let mut raw = raw(&shared().endpoints()).await;
    raw.lease_revoke(lease_of(&name).await).await.unwrap();
    let third = c.once(name.clone(), o.clone()).await.unwrap().expect("a dead winner's job runs again");
    assert_eq!(second.done().await.unwrap_err().kind(), ErrorKind::NotHeld, "a lost claim marked the period done");
    third.done().await.unwrap();
    assert!(c.once(name.clone(), o).await.unwrap().is_none());
    c.close().await;
}

async fn lease_of(name: &str) -> i64 {
    let mut raw = raw(&shared().endpoints()).await;
    let r = raw.get(format!("{name}/slot/"), Some(etcd_client::GetOptions::new().with_prefix())).await.unwrap();
    r.kvs()[0].lease()
}

// covers: ONCE-EXPIRY-001
#[tokio::test]
async fn done_marks_expire_after_a_few_periods() {
    let name = prefix("once-expiry") + "job";
    let c = client().await;
    let o = OnceOptions { keep_periods: 2, ..OnceOptions::every(Duration::from_secs(1)) };
    c.once(name.clone(), o.clone()).await.unwrap().unwrap().done().await.unwrap();
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/done/")).await.len(), 1);
    let gone = eventually(Duration::from_secs(6), || async { keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty() }).await;
    assert!(gone, "a done mark outlived its periods");
    c.close().await;
}

// covers: ONCE-FENCE-001
#[tokio::test]
async fn a_slot_fences_the_jobs_writes_and_a_lost_winner_writes_nothing() {
    let name = prefix("once-fence") + "job";
    let result = format!("{name}-result");
    let c = client().await;
    let o = OnceOptions { ttl_secs: 2, ..OnceOptions::every(Duration::from_secs(3600)) };
    let first = c.once(name.clone(), o.clone()).await.unwrap().unwrap();
    assert!(first.put(result.as_bytes(), b"first").await.unwrap() > first.fencing_token());
    let own = first.txn(&[Op::put(format!("{name}/done/{}", first.slot()), "done")]).await;
    assert_eq!(own.unwrap_err().kind(), ErrorKind::InvalidArgument, "a job wrote its own done mark");
    let mut raw = raw(&shared().endpoints()).await;
    raw.lease_revoke(lease_of(&name).await).await.unwrap();
    let second = c.once(name.clone(), o).await.unwrap().expect("the lost winner's job runs again");
    second.put(result.as_bytes(), b"second").await.unwrap();
    assert_eq!(first.put(result.as_bytes(), b"late").await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert_eq!(first.delete(result.as_bytes()).await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert_eq!(c.get(result.as_bytes()).await.unwrap().map(|kv| kv.value), Some(b"second".to_vec()));
    second.done().await.unwrap();
    c.close().await;
}

// covers: ONCE-FAULT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_period_runs_once_across_a_killed_leader_and_a_winner_cut_off_with_its_member() {
    let mut etcd = Etcd::start(3);
    let name = prefix("once-fault") + "job";
    // TTL 2 for the winner cut off below (its period goes to a later trigger quickly); the
    // winner across the leader's death gets 10, as a real one would: a TTL of 2 does not
    // always outlive an election (keepalives stop while there is no leader).
    let o = OnceOptions { ttl_secs: 2, ..OnceOptions::every(Duration::from_secs(3600)) };
    let long = OnceOptions { ttl_secs: 10, ..o.clone() };
    let t = SystemTime::now();
    // A winner on every member keeps its claim through the leader's death and marks the
    // period done; triggers meanwhile, on the other members, do not run the job.
    let winner = client_for(&etcd.endpoints()).await;
    let slot = winner.once(name.clone(), at(&long, t)).await.unwrap().unwrap();
    let leader = etcd.leader().await;
    etcd.kill(leader);
    let live: Vec<String> = (0..3).filter(|i| *i != leader).map(|i| etcd.members[i].endpoint()).collect();
    let other = client_for(&live).await;
    for _ in 0..3 {
        assert!(other.once(name.clone(), at(&o, t)).await.unwrap().is_none(), "two runs at once");
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    assert!(slot.is_held(), "the claim did not survive the leader's death");
    slot.put(format!("{name}-result").as_bytes(), b"one").await.unwrap();
    slot.done().await.unwrap();
    assert!(other.once(name.clone(), at(&o, t)).await.unwrap().is_none(), "ran again after done");
    // The next period's winner talks to one member only, which dies: its claim ends with its
    // lease, the next trigger runs the job, and the cut-off winner can mark nothing.
    let next = t + Duration::from_secs(3600);
    let (lone_member, other_member) = (live[0].clone(), live[1].clone());
    etcd.restart(leader);
    let lone = client_for(&[lone_member.clone()]).await;
    let cut = lone.once(name.clone(), at(&o, next)).await.unwrap().unwrap();
    let lone_index = (0..3).find(|i| etcd.members[*i].endpoint() == lone_member).unwrap();
    etcd.kill(lone_index);
    let last = client_for(&[other_member, etcd.members[leader].endpoint()]).await;
    let mut took = None;
    for _ in 0..50 {
        if let Ok(Some(s)) = last.once(name.clone(), at(&o, next)).await {
            took = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let took = took.expect("the cut-off winner's period was not run by a later trigger");
    assert!(took.fencing_token() > cut.fencing_token());
    assert!(cut.done().await.is_err(), "a cut-off winner marked the period done");
    took.done().await.unwrap();
    assert!(last.once(name.clone(), at(&o, next)).await.unwrap().is_none(), "ran again after done");
    for c in [winner, other, lone, last] {
        c.close().await;
    }
}

// covers: ONCE-INPUT-001
#[tokio::test]
async fn bad_options_are_rejected_with_nothing_written() {
    let name = prefix("once-input") + "job";
    let c = client().await;
    let every = OnceOptions::every(Duration::from_secs(60));
    for (n, o) in [
        ("", every.clone()),
        (name.as_str(), OnceOptions::every(Duration::from_millis(500))),
        (name.as_str(), OnceOptions { keep_periods: 1, ..every.clone() }),
        (name.as_str(), OnceOptions { ttl_secs: 0, ..every.clone() }),
        (name.as_str(), OnceOptions { at: Some(SystemTime::UNIX_EPOCH - Duration::from_secs(1)), ..every.clone() }),
        (name.as_str(), OnceOptions { keep_periods: u32::MAX, ..OnceOptions::every(Duration::from_secs(u64::MAX / 2)) }),
    ] {
        assert_eq!(c.once(n, o).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    assert!(keys_under(&shared().endpoints(), &name).await.is_empty());
    c.close().await;
}
