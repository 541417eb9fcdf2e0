//! Once-per-period jobs (`Client::once`): one run per period across triggers, the next period
//! runs again, a failed or dead winner's period is run by the next trigger, done marks expire.

use crate::common::*;
use etcdlock::{ErrorKind, OnceOptions};
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
