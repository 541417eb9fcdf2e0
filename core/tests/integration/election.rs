//! Leader election against a real etcd, and with `etcdctl elect`.
use crate::common::*;
use etcdlock::{ErrorKind, Leader, LockOptions};
use std::time::{Duration, Instant};

/// The observer's next change, within 10 s.
async fn next_change(o: &mut etcdlock::Observer) -> Option<Leader> {
    tokio::time::timeout(Duration::from_secs(10), o.next()).await.expect("a leader change within 10 s").unwrap()
}

// covers: ELECT-BASIC-001, ELECT-PROCLAIM-001, ELECT-RESIGN-001
#[tokio::test]
async fn campaign_lead_proclaim_resign() {
    let client = client().await;
    let name = prefix("elect-basic") + "svc";
    let election = client.election(name.clone(), 10).unwrap();
    assert_eq!(election.leader().await.unwrap(), None);
    let l = election.campaign("node-1").await.unwrap();
    assert!(l.is_leader());
    assert!(l.key().starts_with(format!("{name}/").as_bytes()));
    let leader = election.leader().await.unwrap().unwrap();
    assert_eq!(leader, Leader { value: b"node-1".to_vec(), key: l.key().to_vec(), revision: l.fencing_token(), lease: l.lease_id() });
    let rev = l.proclaim("node-1 ready").await.unwrap();
    assert!(rev > l.fencing_token());
    let leader = election.leader().await.unwrap().unwrap();
    assert_eq!((leader.value.as_slice(), leader.revision), (&b"node-1 ready"[..], l.fencing_token()));
    l.resign().await.unwrap();
    assert!(!l.is_leader());
    assert_eq!(l.proclaim("late").await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert_eq!(election.leader().await.unwrap(), None);
    let again = election.campaign("node-1").await.unwrap();
    assert!(again.fencing_token() > l.fencing_token(), "a later term has a bigger token");
    again.resign().await.unwrap();
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
    client.close().await;
}

// covers: ELECT-FIFO-001, ELECT-TIMEOUT-001
#[tokio::test]
async fn candidates_lead_in_turn_and_a_timed_out_one_leaves_nothing() {
    let (a, b) = (client().await, client().await);
    let name = prefix("elect-fifo") + "svc";
    let first = a.election(name.clone(), 10).unwrap().campaign("a").await.unwrap();
    let eb = b.election(name.clone(), 10).unwrap();
    let opts = |t| LockOptions { value: b"b".to_vec(), timeout: Some(t), ..Default::default() };
    assert_eq!(eb.campaign_with(opts(Duration::ZERO)).await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert_eq!(eb.campaign_with(opts(Duration::from_millis(300))).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await.len(), 1, "the timed-out candidate's key is gone");
    let waiting = tokio::spawn(async move { eb.campaign("b").await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "led while another led");
    first.resign().await.unwrap();
    let second = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap().unwrap();
    assert!(second.fencing_token() > first.fencing_token());
    let leader = a.election(name.clone(), 10).unwrap().leader().await.unwrap().unwrap();
    assert_eq!(leader.value, b"b");
    second.resign().await.unwrap();
    a.close().await;
    b.close().await;
}

// covers: ELECT-PHANTOM-001
#[tokio::test]
async fn a_candidate_whose_lease_is_revoked_while_waiting_fails_at_once() {
    let (a, b) = (client().await, client().await);
    let name = prefix("elect-phantom") + "svc";
    let leader = a.election(name.clone(), 10).unwrap().campaign("a").await.unwrap();
    let eb = b.election(name.clone(), 10).unwrap();
    let waiting = tokio::spawn(async move { eb.campaign("b").await });
    let eps = shared().endpoints();
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == 2 }).await);
    // An operator (or etcd, after a partition) ends the waiting candidate's lease.
    let mut raw = raw(&eps).await;
    let keys = raw.get(format!("{name}/"), Some(etcd_client::GetOptions::new().with_prefix())).await.unwrap();
    let theirs = keys.kvs().iter().find(|kv| kv.lease() != leader.lease_id()).unwrap().lease();
    let revoked = Instant::now();
    raw.lease_revoke(theirs).await.unwrap();
    let r = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("the campaign ends").unwrap();
    assert_eq!(r.unwrap_err().kind(), ErrorKind::LockLost);
    assert!(revoked.elapsed() < Duration::from_secs(2), "failed {:?} after the revoke", revoked.elapsed());
    // The leader was never disturbed, and resigning leaves nothing.
    assert!(leader.is_leader());
    leader.resign().await.unwrap();
    assert!(keys_under(&eps, &format!("{name}/")).await.is_empty());
    a.close().await;
    b.close().await;
}

// covers: ELECT-PROCLAIM-FENCED-001
#[tokio::test]
async fn a_deposed_leader_proclaims_nothing() {
    let client = client().await;
    let name = prefix("elect-deposed") + "svc";
    let election = client.election(name.clone(), 10).unwrap();
    let l = election.campaign("a").await.unwrap();
    // Its key is deleted behind its back: it no longer leads.
    raw(&shared().endpoints()).await.delete(l.key(), None).await.unwrap();
    assert_eq!(l.proclaim("still me").await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert_eq!(l.put(format!("{name}-data").as_bytes(), b"x").await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert_eq!(election.leader().await.unwrap(), None, "the proclamation wrote nothing");
    assert!(!l.is_leader());
    client.close().await;
}

// covers: ELECT-OBSERVE-001, ELECT-OBSERVE-NOLEADER-001
#[tokio::test]
async fn observe_reports_each_leader_its_proclamations_and_no_leader() {
    let (a, b) = (client().await, client().await);
    let name = prefix("elect-observe") + "svc";
    let mut o = a.election(name.clone(), 10).unwrap().observe();
    assert_eq!(next_change(&mut o).await, None, "first the current state: nobody leads");
    let la = a.election(name.clone(), 10).unwrap().campaign("a").await.unwrap();
    let seen = next_change(&mut o).await.unwrap();
    assert_eq!((seen.value.as_slice(), seen.revision), (&b"a"[..], la.fencing_token()));
    // A second candidate changes nothing; a proclamation does.
    let eb = b.election(name.clone(), 10).unwrap();
    let waiting = tokio::spawn(async move { eb.campaign("b").await });
    // Queued before the leader resigns: otherwise nobody leads for a moment, and "no leader" is
    // rightly reported in between.
    let eps = shared().endpoints();
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == 2 }).await);
    la.proclaim("a2").await.unwrap();
    assert_eq!(next_change(&mut o).await.unwrap().value, b"a2");
    la.resign().await.unwrap();
    let seen = next_change(&mut o).await.unwrap();
    assert_eq!(seen.value, b"b");
    let lb = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap().unwrap();
    assert_eq!(seen.revision, lb.fencing_token());
    lb.resign().await.unwrap();
    assert_eq!(next_change(&mut o).await, None, "the last candidate went: no leader");
    a.close().await;
    assert_eq!(tokio::time::timeout(Duration::from_secs(5), o.next()).await.unwrap().unwrap_err().kind(), ErrorKind::Closed);
    b.close().await;
}

// covers: ELECT-OBSERVE-ORDER-001
#[tokio::test]
async fn an_observer_never_goes_back_to_an_older_proclamation() {
    // The new leader proclaims twice while the observer is not reading: the leader's change makes
    // it read the state (the second value, at revision R), and the watch still holds the
    // proclamations at or below R. Delivered after the read, the first would take it back.
    let (a, b) = (client().await, client().await);
    let name = prefix("elect-order") + "svc";
    let la = a.election(name.clone(), 10).unwrap().campaign("a").await.unwrap();
    let mut o = a.election(name.clone(), 10).unwrap().observe();
    assert_eq!(next_change(&mut o).await.unwrap().value, b"a");
    let eb = b.election(name.clone(), 10).unwrap();
    let waiting = tokio::spawn(async move { eb.campaign("c").await });
    let eps = shared().endpoints();
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == 2 }).await);
    la.resign().await.unwrap();
    let lc = tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap().unwrap();
    lc.proclaim("v1").await.unwrap();
    lc.proclaim("v2").await.unwrap();
    assert_eq!(next_change(&mut o).await.unwrap().value, b"v2");
    lc.proclaim("v3").await.unwrap();
    assert_eq!(next_change(&mut o).await.unwrap().value, b"v3", "the observer went back");
    lc.resign().await.unwrap();
    a.close().await;
    b.close().await;
}

// covers: ELECT-OBSERVE-COMPACT-002
#[tokio::test]
async fn an_observer_whose_first_watch_starts_in_compacted_history_reads_again() {
    // The history after the observer's read is compacted before its watch starts from there:
    // the observer reads again and reports the leader, never Compacted.
    let etcd = Etcd::start(1);
    let (proxies, via) = proxied(&etcd);
    let (watcher, direct) = (client_for(&via).await, client_for(&etcd.endpoints()).await);
    let name = prefix("elect-compact2") + "svc";
    let leader = direct.election(name.clone(), 10).unwrap().campaign("a").await.unwrap();
    let mut o = watcher.election(name.clone(), 10).unwrap().observe();
    proxies[0].set(proxy::Mode::HoldReplies);
    let first = tokio::spawn(async move { (tokio::time::timeout(Duration::from_secs(10), o.next()).await, o) });
    compact_past_a_held_read(&etcd, &proxies[0]).await;
    let (seen, mut o) = first.await.unwrap();
    assert_eq!(seen.expect("a leader within 10 s").expect("no error").map(|l| l.revision), Some(leader.fencing_token()));
    // The watch that follows that read is the one that starts in compacted history.
    leader.proclaim("a2").await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(10), o.next()).await.expect("a change within 10 s").expect("no error");
    assert_eq!(seen.map(|l| l.value), Some(b"a2".to_vec()));
    leader.resign().await.unwrap();
    watcher.close().await;
    direct.close().await;
}

// covers: ELECT-OBSERVE-COMPACT-001
#[tokio::test]
async fn observe_survives_a_disconnect_across_compaction() {
    // A private server behind a proxy: the observer is cut off while the leader changes and the
    // history it would resume from is compacted away.
    let etcd = Etcd::start(1);
    let (proxies, via) = proxied(&etcd);
    let (watcher, direct) = (client_for(&via).await, client_for(&etcd.endpoints()).await);
    let name = prefix("elect-compact") + "svc";
    let mut o = watcher.election(name.clone(), 10).unwrap().observe();
    assert_eq!(next_change(&mut o).await, None);
    proxies[0].set(proxy::Mode::Blackhole);
    let election = direct.election(name.clone(), 10).unwrap();
    let first = election.campaign("a").await.unwrap();
    first.resign().await.unwrap();
    let second = election.campaign("b").await.unwrap();
    let mut raw = raw(&etcd.endpoints()).await;
    let head = raw.put("t/elect-compact-bump", "x", None).await.unwrap().header().unwrap().revision();
    raw.compact(head, None).await.unwrap();
    proxies[0].set(proxy::Mode::Pass);
    proxies[0].reset();
    let seen = tokio::time::timeout(Duration::from_secs(20), o.next()).await.expect("resumed").unwrap().unwrap();
    assert_eq!((seen.value.as_slice(), seen.revision), (&b"b"[..], second.fencing_token()));
    second.resign().await.unwrap();
    assert_eq!(next_change(&mut o).await, None);
    watcher.close().await;
    direct.close().await;
}

// covers: ELECT-OBSERVE-FAILOVER-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_and_leadership_across_an_etcd_leader_kill() {
    let mut etcd = Etcd::start(3);
    let client = client_for(&etcd.endpoints()).await;
    let name = prefix("elect-failover") + "svc";
    let election = client.election(name.clone(), 10).unwrap();
    let mut o = election.observe();
    assert_eq!(next_change(&mut o).await, None);
    let l = election.campaign("a").await.unwrap();
    assert_eq!(next_change(&mut o).await.unwrap().revision, l.fencing_token());
    let killed = etcd.leader().await;
    etcd.kill(killed);
    // Leadership outlives the etcd leader (the lease is kept alive through the new one), and
    // the observer follows a proclamation made after the failover.
    let proclaimed = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            match l.proclaim("after failover").await {
                Ok(rev) => return rev,
                Err(e) if matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::Timeout) => tokio::time::sleep(Duration::from_millis(100)).await,
                Err(e) => panic!("proclaim: {e}"),
            }
        }
    })
    .await
    .expect("a proclamation within 15 s of the kill");
    assert!(proclaimed > l.fencing_token());
    assert_eq!(next_change(&mut o).await.unwrap().value, b"after failover");
    assert!(l.is_leader());
    l.resign().await.unwrap();
    assert_eq!(next_change(&mut o).await, None);
    etcd.restart(killed);
    client.close().await;
}

/// `etcdctl elect` (Go's `concurrency.Election`) on the shared server.
fn etcdctl_elect(args: &[&str]) -> std::process::Child {
    let mut all = vec!["elect"];
    all.extend_from_slice(args);
    etcdctl_cmd(&shared().endpoints()[0], &all).stdout(std::process::Stdio::piped()).spawn().unwrap()
}

/// Reads `child`'s stdout on a thread until it has printed `want` (true) or 10 s passed.
fn prints(child: &mut std::process::Child, want: &'static str) -> std::sync::mpsc::Receiver<bool> {
    use std::io::Read;
    let mut out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut seen, mut buf) = (Vec::new(), [0u8; 256]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            match out.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
            if String::from_utf8_lossy(&seen).contains(want) {
                let _ = tx.send(true);
                return;
            }
        }
        let _ = tx.send(false);
    });
    rx
}

/// SIGINT: `etcdctl elect` resigns and exits.
fn interrupt(child: &mut std::process::Child) {
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let _ = child.wait();
}

// covers: ELECT-INTEROP-001
#[tokio::test]
async fn etcdctl_elect_and_our_candidates_share_one_election() {
    let client = client().await;
    let name = prefix("elect-interop") + "svc";
    let election = client.election(name.clone(), 10).unwrap();
    // etcdctl leads first: ours waits, and sees etcdctl's proposal as the leader's value.
    let mut ctl = etcdctl_elect(&[&name, "from-etcdctl"]);
    let elected = prints(&mut ctl, "from-etcdctl");
    assert!(tokio::task::spawn_blocking(move || elected.recv().unwrap()).await.unwrap(), "etcdctl elect did not lead");
    let leader = election.leader().await.unwrap().unwrap();
    assert_eq!(leader.value, b"from-etcdctl");
    let opts = LockOptions { value: b"ours".to_vec(), timeout: Some(Duration::from_millis(500)), ..Default::default() };
    assert_eq!(election.campaign_with(opts).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    let ours = {
        let election = client.election(name.clone(), 10).unwrap();
        tokio::spawn(async move { election.campaign("ours").await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!ours.is_finished());
    interrupt(&mut ctl);
    let ours = tokio::time::timeout(Duration::from_secs(5), ours).await.unwrap().unwrap().unwrap();
    assert!(ours.fencing_token() > leader.revision);

    // Ours leads: `etcdctl elect -l` reports our proclamations, and an etcdctl candidate waits.
    let mut listen = etcdctl_elect(&["-l", &name]);
    let proclaimed = prints(&mut listen, "ours, proclaimed");
    let mut waiting = etcdctl_elect(&[&name, "second"]);
    let second = prints(&mut waiting, "second");
    tokio::time::sleep(Duration::from_millis(500)).await;
    ours.proclaim("ours, proclaimed").await.unwrap();
    assert!(tokio::task::spawn_blocking(move || proclaimed.recv().unwrap()).await.unwrap(), "etcdctl elect -l missed the proclamation");
    assert!(waiting.try_wait().unwrap().is_none());
    ours.resign().await.unwrap();
    assert!(tokio::task::spawn_blocking(move || second.recv().unwrap()).await.unwrap(), "etcdctl elect did not lead after we resigned");
    interrupt(&mut waiting);
    interrupt(&mut listen);
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty() }).await);
    client.close().await;
}
