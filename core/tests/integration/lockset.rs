//! Lock sets (`Client::lock_set`) against a real etcd: opposite orders never deadlock, one
//! token fences every member, FIFO by the set's revision, no partial hold, `etcdctl lock`
//! beside a set, mixed modes, nothing left after a timeout, cancel or failed try, bad input,
//! and a leader's death on 3 members.

use crate::common::*;
use etcdlock::{ErrorKind, LockOptions, SetMember};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn within(secs: f64) -> LockOptions {
    LockOptions { timeout: Some(Duration::from_secs_f64(secs)), ..Default::default() }
}

// covers: LOCKSET-ABBA-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_callers_in_opposite_orders_never_deadlock_and_never_share_a_name() {
    let p = prefix("lockset-abba");
    let (a, b) = (format!("{p}a"), format!("{p}b"));
    let counter = format!("{p}counter");
    let mut tasks = Vec::new();
    for names in [[a.clone(), b.clone()], [b.clone(), a.clone()]] {
        let counter = counter.clone();
        tasks.push(tokio::spawn(async move {
            let c = client().await;
            let mut raw = raw(&shared().endpoints()).await;
            let set = c.lock_set(names, 10).unwrap();
            for _ in 0..200 {
                let locks = set.lock_with(within(10.0)).await.expect("a set waited 10 s: deadlock?");
                // Read, then write fenced by the set: a second holder in between would lose an
                // increment.
                let n = raw.get(counter.as_str(), None).await.unwrap().kvs().first().map_or(0, |kv| kv.value_str().unwrap().parse::<u32>().unwrap());
                locks.put(counter.as_bytes(), (n + 1).to_string().as_bytes()).await.unwrap();
                locks.release().await.unwrap();
            }
            c.close().await;
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(120), t).await.expect("deadlock").unwrap();
    }
    let mut raw = raw(&shared().endpoints()).await;
    assert_eq!(raw.get(counter.as_str(), None).await.unwrap().kvs()[0].value_str().unwrap(), "400");
    for n in [&a, &b] {
        assert!(keys_under(&shared().endpoints(), &format!("{n}/")).await.is_empty());
    }
}

// covers: LOCKSET-TOKEN-001
#[tokio::test]
async fn one_token_for_the_set_and_writes_fenced_by_every_member() {
    let c = client().await;
    let p = prefix("lockset-token");
    let names: Vec<String> = ["x", "y", "z"].iter().map(|n| format!("{p}{n}")).collect();
    let earlier = c.mutex(names[1].clone(), 10).unwrap().lock().await.unwrap();
    let earlier_token = earlier.fencing_token();
    earlier.release().await.unwrap();
    let set = c.lock_set(names.clone(), 10).unwrap();
    let locks = set.lock().await.unwrap();
    assert!(locks.fencing_token() > earlier_token);
    assert_eq!(locks.names(), names.iter().map(|n| n.as_bytes()).collect::<Vec<_>>());
    let mut raw = raw(&shared().endpoints()).await;
    for m in locks.members() {
        let kv = raw.get(m.key(), None).await.unwrap().kvs()[0].clone();
        assert_eq!((kv.create_revision(), kv.lease()), (locks.fencing_token(), locks.lease_id()));
    }
    let data = format!("{p}data");
    locks.put(data.as_bytes(), b"1").await.unwrap();
    // A fence per member, each at the set's token, checked as any lock's.
    let fence = locks.fence(names[0].as_bytes()).await.unwrap();
    assert_eq!((fence.name.as_slice(), fence.token), (names[0].as_bytes(), locks.fencing_token()));
    assert!(c.check_fence(&fence).await.unwrap());
    assert_eq!(locks.fence(b"not-a-member").await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    // Writes under a member's queue are refused, with nothing sent.
    let inside = format!("{}/x", names[2]);
    assert_eq!(locks.put(inside.as_bytes(), b"1").await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    // One member's key deleted by someone else: the set is lost, and writes go nowhere.
    let lost = locks.lost();
    raw.delete(locks.members()[2].key(), None).await.unwrap();
    assert_eq!(locks.put(data.as_bytes(), b"2").await.unwrap_err().kind(), ErrorKind::NotHeld);
    tokio::time::timeout(Duration::from_secs(5), lost.wait()).await.expect("the lost signal did not fire");
    assert!(!locks.is_held());
    assert_eq!(raw.get(data.as_str(), None).await.unwrap().kvs()[0].value(), b"1");
    // Release still deletes the keys that are left, and says the set was lost.
    assert_eq!(locks.release().await.unwrap_err().kind(), ErrorKind::NotHeld);
    for n in &names {
        assert!(keys_under(&shared().endpoints(), &format!("{n}/")).await.is_empty(), "{n} kept a key");
    }
    c.close().await;
}

// covers: LOCKSET-FIFO-001
#[tokio::test]
async fn a_set_is_served_by_its_revision_and_is_never_held_in_part() {
    let c = client().await;
    let p = prefix("lockset-fifo");
    let (a, b) = (format!("{p}a"), format!("{p}b"));
    let holder = c.mutex(a.clone(), 10).unwrap().lock().await.unwrap();
    let set = Arc::new(c.lock_set([a.clone(), b.clone()], 10).unwrap());
    let s2 = set.clone();
    let waiting = tokio::spawn(async move { s2.lock_with(within(20.0)).await });
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&shared().endpoints(), &format!("{b}/")).await.len() == 1 }).await);
    // A lone request for `b` after the set's waits for the set, although `b` is free: the set
    // is older. And the set is not held while `a` is not.
    let lone = c.mutex(b.clone(), 10).unwrap();
    assert_eq!(lone.try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    let c2 = client().await;
    let lone_waiting = tokio::spawn(async move { c2.mutex(b, 10).unwrap().lock_with(within(20.0)).await.map(|g| (g.fencing_token(), c2)) });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the set was held while a member was not");
    assert!(!lone_waiting.is_finished(), "a later request passed the set");
    holder.release().await.unwrap();
    let locks = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!lone_waiting.is_finished(), "a later request passed the set");
    let token = locks.fencing_token();
    // The set waited long enough for its members to watch their keys: its release's own
    // deletes are no loss (no lost reason, no loss counted).
    assert!(locks.members().iter().all(|m| m.is_held()));
    locks.release().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(locks.lost_reason(), None, "a released set reported a loss");
    let m = c.metrics();
    assert!(m.losses.iter().all(|(_, n)| *n == 0), "the release's deletes counted as losses: {:?}", m.losses);
    let (lone_token, c2) = tokio::time::timeout(Duration::from_secs(5), lone_waiting).await.unwrap().unwrap().unwrap();
    assert!(lone_token > token);
    c2.close().await;
    c.close().await;
}

// covers: LOCKSET-INTEROP-001
#[tokio::test]
async fn a_set_beside_etcdctl_lock_on_one_of_its_names() {
    let c = client().await;
    let p = prefix("lockset-ctl");
    let (a, b) = (format!("{p}a"), format!("{p}b"));
    let mut ctl = etcdctl_cmd(&shared().endpoints()[0], &["lock", &b, "sleep", "1.5"]).spawn().unwrap();
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&shared().endpoints(), &format!("{b}/")).await.len() == 1 }).await);
    let set = c.lock_set([a.clone(), b.clone()], 10).unwrap();
    assert_eq!(set.try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert!(keys_under(&shared().endpoints(), &format!("{a}/")).await.is_empty(), "a failed try left a key");
    let start = Instant::now();
    let locks = set.lock().await.unwrap();
    assert!(start.elapsed() > Duration::from_millis(500), "held while etcdctl held a member");
    assert!(ctl.wait().unwrap().success());
    // And etcdctl waits behind the set.
    let mut ctl = etcdctl_cmd(&shared().endpoints()[0], &["lock", &b, "echo", "got-it"]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(ctl.try_wait().unwrap().is_none(), "etcdctl got a member the set held");
    locks.release().await.unwrap();
    let out = tokio::task::spawn_blocking(move || ctl.wait_with_output().unwrap()).await.unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("got-it"));
    c.close().await;
}

// covers: LOCKSET-MIXED-001
#[tokio::test]
async fn members_read_write_and_take_permits_by_their_own_rules() {
    let c = client().await;
    let p = prefix("lockset-mixed");
    let (cfg, job, gpus) = (format!("{p}cfg"), format!("{p}job"), format!("{p}gpus"));
    let set = |j: &str| c.lock_set([SetMember::read(cfg.clone()), SetMember::write(format!("{job}{j}")), SetMember::permit(gpus.clone(), 2)], 10).unwrap();
    // Two sets reading `cfg` and taking one of two permits hold at once.
    let one = set("1").try_lock().await.unwrap();
    let two = set("2").try_lock().await.unwrap();
    // A third permit is not there; a writer of `cfg` waits for the readers.
    assert_eq!(set("3").try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    let writer = c.rwlock(cfg.clone(), 10).unwrap();
    assert_eq!(writer.write_with(within(0.3)).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    one.release().await.unwrap();
    two.release().await.unwrap();
    let w = writer.write_with(within(5.0)).await.unwrap();
    // A set reading `cfg` now waits for the writer.
    assert_eq!(set("4").lock_with(within(0.3)).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    w.release().await.unwrap();
    set("4").lock_with(within(5.0)).await.unwrap().release().await.unwrap();
    for n in [&cfg, &gpus] {
        assert!(keys_under(&shared().endpoints(), &format!("{n}/")).await.is_empty());
    }
    c.close().await;
}

// covers: LOCKSET-CLEAN-001
#[tokio::test]
async fn timeouts_cancels_and_bad_input_leave_no_key() {
    let c = client().await;
    let p = prefix("lockset-clean");
    let (a, b) = (format!("{p}a"), format!("{p}b"));
    let holder = c.mutex(b.clone(), 10).unwrap().lock().await.unwrap();
    let set = Arc::new(c.lock_set([a.clone(), b.clone()], 10).unwrap());
    let no_keys = || async {
        let (ka, kb) = (keys_under(&shared().endpoints(), &format!("{a}/")).await, keys_under(&shared().endpoints(), &format!("{b}/")).await);
        ka.is_empty() && kb.len() == 1
    };
    assert_eq!(set.lock_with(within(0.3)).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    assert!(no_keys().await, "a timed-out set left a key");
    let cancel = etcdlock::CancellationToken::new();
    let (s2, c2) = (set.clone(), cancel.clone());
    let waiting = tokio::spawn(async move { s2.lock_with(LockOptions { cancel: Some(c2), ..Default::default() }).await });
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&shared().endpoints(), &format!("{a}/")).await.len() == 1 }).await);
    cancel.cancel();
    assert_eq!(waiting.await.unwrap().unwrap_err().kind(), ErrorKind::Cancelled);
    assert!(no_keys().await, "a cancelled set left a key");
    // A dropped wait cleans up in the background.
    let s3 = set.clone();
    let dropped = tokio::spawn(async move { s3.lock().await });
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&shared().endpoints(), &format!("{a}/")).await.len() == 1 }).await);
    dropped.abort();
    assert!(eventually(Duration::from_secs(5), no_keys).await, "a dropped wait left a key");
    holder.release().await.unwrap();
    // Bad input, refused before anything is sent.
    let too_many: Vec<String> = (0..=etcdlock::MAX_LOCK_SET).map(|i| format!("{p}n{i}")).collect();
    let empty: Vec<String> = Vec::new();
    for bad in [
        c.lock_set(empty, 10).map(drop),
        c.lock_set([a.clone(), a.clone()], 10).map(drop),
        c.lock_set([a.clone(), format!("{a}/sub")], 10).map(drop),
        c.lock_set(too_many, 10).map(drop),
        c.lock_set([a.clone()], 0).map(drop),
        c.lock_set([SetMember::permit(a.clone(), 0)], 10).map(drop),
    ] {
        assert_eq!(bad.unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    // The largest set is taken and released in one Txn each.
    let most: Vec<String> = (0..etcdlock::MAX_LOCK_SET).map(|i| format!("{p}m{i}")).collect();
    c.lock_set(most, 10).unwrap().lock_with(within(5.0)).await.unwrap().release().await.unwrap();
    let released = c.lock_set([a.clone()], 10).unwrap().lock().await.unwrap();
    released.release().await.unwrap();
    assert_eq!(released.release().await.unwrap_err().kind(), ErrorKind::NotHeld);
    c.close().await;
    assert_eq!(set.lock().await.unwrap_err().kind(), ErrorKind::Closed);
    assert!(keys_under(&shared().endpoints(), &p).await.is_empty());
}

// covers: LOCKSET-FAULT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_set_and_a_waiting_one_outlive_a_killed_leader() {
    let mut etcd = Etcd::start(3);
    let p = prefix("lockset-fault");
    let (a, b, x) = (format!("{p}a"), format!("{p}b"), format!("{p}x"));
    let c = client_for(&etcd.endpoints()).await;
    let held = c.lock_set([a.clone(), b.clone()], 10).unwrap().lock().await.unwrap();
    let other = client_for(&etcd.endpoints()).await;
    let set = other.lock_set([b.clone(), x.clone()], 10).unwrap();
    let waiting = tokio::spawn(async move { set.lock_with(within(30.0)).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let leader = etcd.leader().await;
    etcd.kill(leader);
    let _ = etcd.leader().await;
    assert!(held.is_held(), "the set did not survive the leader's death");
    held.put(format!("{p}result").as_bytes(), b"ok").await.unwrap();
    assert!(!waiting.is_finished(), "the waiting set got a member the held one had");
    held.release().await.unwrap();
    let next = tokio::time::timeout(Duration::from_secs(30), waiting).await.unwrap().unwrap().unwrap();
    assert!(next.fencing_token() > held.fencing_token());
    next.release().await.unwrap();
    etcd.restart(leader);
    c.close().await;
    other.close().await;
}
