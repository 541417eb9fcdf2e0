//! The spans of a pool's and a lock set's acquire, hold and release (`etcdlock::spans`): the
//! pool's name and the slots held, or the set's member names, with the acquisition's token.
use crate::common::*;
use crate::spans::{closed, named, spans};
use std::time::Duration;

// covers: TRACE-SPANS-003
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pools_acquire_hold_and_release_are_spans_with_its_slots() {
    crate::alone!(a_pools_acquire_hold_and_release_are_spans_with_its_slots);
    let seen = spans();
    let client = client().await;
    let name = prefix("spans") + "pool";
    let pool = client.pool(name.clone(), etcdlock::PoolOptions::named(["a", "b"])).unwrap();
    let held = pool.acquire(2).await.unwrap();
    let token = held.fencing_token().to_string();
    let acquire = closed(&seen, etcdlock::spans::ACQUIRE, &name).await;
    assert_eq!(
        (acquire.get("etcdlock.outcome"), acquire.get("etcdlock.slots"), acquire.get("etcdlock.fencing_token")),
        (Some("acquired"), Some("a,b"), Some(token.as_str()))
    );
    let hold = named(&seen, etcdlock::spans::HOLD, &name);
    assert_eq!(hold.len(), 1, "{hold:?}");
    assert!(!hold[0].closed, "the hold is open while held: {hold:?}");
    assert_eq!(hold[0].follows, vec![acquire.id]);
    // The pool's own admission lock has no spans.
    let own = seen.all.lock().unwrap().values().filter(|s| s.get("etcdlock.name").is_some_and(|n| n.starts_with(&(name.clone() + "/")))).count();
    assert_eq!(own, 0);

    // A try while every slot is held: timeout (WOULD_BLOCK), no hold.
    let other = client.pool(name.clone(), etcdlock::PoolOptions::named(["a", "b"])).unwrap();
    let busy = other.acquire_with(etcdlock::PoolAcquire { count: 1, timeout: Some(Duration::ZERO), ..Default::default() }).await.unwrap_err();
    assert_eq!(busy.kind(), etcdlock::ErrorKind::WouldBlock);
    let acquires = named(&seen, etcdlock::spans::ACQUIRE, &name);
    assert_eq!((acquires[1].get("etcdlock.outcome"), acquires[1].get("etcdlock.error_kind")), (Some("timeout"), Some("WOULD_BLOCK")));
    assert_eq!(named(&seen, etcdlock::spans::HOLD, &name).len(), 1);

    held.release().await.unwrap();
    let hold = closed(&seen, etcdlock::spans::HOLD, &name).await;
    assert_eq!((hold.get("etcdlock.outcome"), hold.get("etcdlock.slots"), hold.get("etcdlock.fencing_token")), (Some("released"), Some("a,b"), Some(token.as_str())));
    let release = closed(&seen, etcdlock::spans::RELEASE, &name).await;
    assert_eq!((release.get("etcdlock.outcome"), release.get("etcdlock.slots")), (Some("released"), Some("a,b")));

    // Dropped unreleased; then lost (its lease revoked by an operator).
    let dropped_name = name.clone() + "-dropped";
    drop(client.pool(dropped_name.clone(), etcdlock::PoolOptions::named(["x"])).unwrap().acquire(1).await.unwrap());
    assert_eq!(closed(&seen, etcdlock::spans::HOLD, &dropped_name).await.get("etcdlock.outcome"), Some("dropped"));
    let lost_name = name + "-lost";
    let lost = client.pool(lost_name.clone(), etcdlock::PoolOptions::named(["x"])).unwrap().acquire(1).await.unwrap();
    raw(&shared().endpoints()).await.lease_revoke(lost.lease_id()).await.unwrap();
    let hold = closed(&seen, etcdlock::spans::HOLD, &lost_name).await;
    assert_eq!((hold.get("etcdlock.outcome"), hold.get("etcdlock.error_kind")), (Some("lost"), Some("LOCK_LOST")), "{hold:?}");
    assert!(hold.get("etcdlock.lost_reason").is_some(), "{hold:?}");
    drop(lost);
    client.close().await;
}

// covers: TRACE-SPANS-003
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_sets_acquire_hold_and_release_are_spans_named_by_its_members() {
    crate::alone!(a_lock_sets_acquire_hold_and_release_are_spans_named_by_its_members);
    let seen = spans();
    let client = client().await;
    let base = prefix("spans");
    let (x, y) = (base.clone() + "set-x", base.clone() + "set-y");
    let name = format!("{x},{y}");
    let set = client.lock_set([x.as_str(), y.as_str()], 10).unwrap();
    let held = set.lock().await.unwrap();
    let token = held.fencing_token().to_string();
    let acquire = closed(&seen, etcdlock::spans::ACQUIRE, &name).await;
    assert_eq!((acquire.get("etcdlock.outcome"), acquire.get("etcdlock.fencing_token")), (Some("acquired"), Some(token.as_str())));
    let hold = named(&seen, etcdlock::spans::HOLD, &name);
    assert_eq!(hold.len(), 1, "{hold:?}");
    assert!(!hold[0].closed);
    assert_eq!(hold[0].follows, vec![acquire.id]);
    // Its members are not acquired one by one as locks (no spans of theirs).
    assert!(named(&seen, etcdlock::spans::ACQUIRE, &x).is_empty() && named(&seen, etcdlock::spans::HOLD, &y).is_empty());

    let busy = client.lock_set([y.as_str()], 10).unwrap().try_lock().await.unwrap_err();
    assert_eq!(busy.kind(), etcdlock::ErrorKind::WouldBlock);
    let tried = closed(&seen, etcdlock::spans::ACQUIRE, &y).await;
    assert_eq!((tried.get("etcdlock.outcome"), tried.get("etcdlock.error_kind")), (Some("timeout"), Some("WOULD_BLOCK")));

    held.release().await.unwrap();
    let hold = closed(&seen, etcdlock::spans::HOLD, &name).await;
    assert_eq!((hold.get("etcdlock.outcome"), hold.get("etcdlock.fencing_token")), (Some("released"), Some(token.as_str())));
    let release = closed(&seen, etcdlock::spans::RELEASE, &name).await;
    assert_eq!(release.get("etcdlock.outcome"), Some("released"));

    // Lost: a member's key deleted by an operator ends the hold at once.
    let again = set.lock().await.unwrap();
    raw(&shared().endpoints()).await.delete(again.members()[1].key().to_vec(), None).await.unwrap();
    let ended = eventually(Duration::from_secs(5), || async { named(&seen, etcdlock::spans::HOLD, &name).iter().filter(|s| s.closed).count() == 2 }).await;
    let holds = named(&seen, etcdlock::spans::HOLD, &name);
    assert!(ended, "{holds:?}");
    assert_eq!((holds[1].get("etcdlock.outcome"), holds[1].get("etcdlock.lost_reason")), (Some("lost"), Some("key_deleted")), "{holds:?}");
    drop(again);
    client.close().await;
}
