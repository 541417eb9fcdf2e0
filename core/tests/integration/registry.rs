//! Service registration and discovery against a real etcd.
use crate::common::*;
use etcdlock::{ErrorKind, Instances, LostReason, RegisterOptions, RegistrationEvent};
use std::time::Duration;

fn names(set: &Instances) -> Vec<String> {
    set.instances.iter().map(|i| String::from_utf8_lossy(&i.name).into_owned()).collect()
}

/// The next event within `limit`.
async fn event(events: &mut etcdlock::RegistrationEvents, limit: Duration) -> RegistrationEvent {
    tokio::time::timeout(limit, events.next()).await.expect("no registration event in time").expect("events ended")
}

// covers: REG-BASIC-001
#[tokio::test]
async fn register_update_close_and_a_taken_name() {
    // A server of its own: the test counts every lease on it.
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let (a, b) = (client_for(&eps).await, client_for(&eps).await);
    let svc = prefix("reg") + "api";
    let leases_before = lease_ids(&eps).await.len();
    let reg = a.register(&svc, "node-1", "v1", 10).await.unwrap();
    assert!(reg.is_registered());
    assert_eq!(reg.key(), format!("{svc}/node-1").as_bytes());
    let set = b.instances(&svc).await.unwrap();
    assert_eq!(names(&set), ["node-1"]);
    assert_eq!((set.instances[0].value.as_slice(), Some(set.instances[0].lease)), (&b"v1"[..], reg.lease_id()));
    reg.update("v2").await.unwrap();
    assert_eq!(b.instances(&svc).await.unwrap().instances[0].value, b"v2");

    // Another registrant cannot take the name unless it says so; nothing of it is left.
    let e = b.register(&svc, "node-1", "other", 10).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WouldBlock, "{e}");
    assert_eq!(lease_ids(&eps).await.len(), leases_before + 1, "the refused registration's lease is revoked");
    let mut events = reg.events();
    let taker = b.register_with(&svc, "node-1", "taker", RegisterOptions { ttl: 10, replace: true }).await.unwrap();
    assert_eq!(event(&mut events, Duration::from_secs(5)).await, RegistrationEvent::TakenOver);
    assert!(!reg.is_registered());
    assert_eq!(reg.update("v3").await.unwrap_err().kind(), ErrorKind::NotHeld);
    assert_eq!(b.instances(&svc).await.unwrap().instances[0].value, b"taker", "the ended registration wrote nothing");
    reg.close().await.unwrap();
    assert_eq!(names(&b.instances(&svc).await.unwrap()), ["node-1"], "closing the ended one leaves the taker's key");
    taker.close().await.unwrap();
    assert!(b.instances(&svc).await.unwrap().instances.is_empty());
    assert!(eventually(Duration::from_secs(5), || async { lease_ids(&eps).await.len() == leases_before }).await, "every lease revoked");

    // Bad names and values, before anything is sent.
    for (s, i) in [("", "x"), ("svc/", "x"), ("svc", ""), ("svc", "a/b")] {
        assert_eq!(a.register(s, i, "v", 10).await.unwrap_err().kind(), ErrorKind::InvalidArgument, "{s:?} {i:?}");
    }
    assert_eq!(a.register(&svc, "x", "v", 0).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(a.register(&svc, "x", vec![0u8; 4097], 10).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert!(b.instances(&svc).await.unwrap().instances.is_empty());
    a.close().await;
    b.close().await;
}

// covers: REG-RECOVER-001
#[tokio::test]
async fn a_revoked_lease_or_a_deleted_key_is_registered_again_and_reported() {
    let c = client().await;
    let svc = prefix("reg-recover") + "api";
    let reg = c.register(&svc, "node-1", "v1", 5).await.unwrap();
    let mut events = reg.events();
    let first = reg.lease_id().unwrap();
    let out = shared().etcdctl(&["lease", "revoke", &format!("{first:x}")]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    match event(&mut events, Duration::from_secs(5)).await {
        RegistrationEvent::Lost(r) => assert!(matches!(r, LostReason::KeyDeleted | LostReason::Expired | LostReason::Revoked), "{r:?}"),
        e => panic!("{e:?}"),
    }
    let RegistrationEvent::Restored { lease } = event(&mut events, Duration::from_secs(5)).await else { panic!("not restored") };
    assert_ne!(lease, first);
    assert_eq!(reg.lease_id(), Some(lease));
    let set = c.instances(&svc).await.unwrap();
    assert_eq!((names(&set), set.instances[0].lease, set.instances[0].value.clone()), (vec!["node-1".to_string()], lease, b"v1".to_vec()));

    // The key deleted by hand: back on a new lease too.
    let out = shared().etcdctl(&["del", &format!("{svc}/node-1")]);
    assert!(out.status.success());
    assert_eq!(event(&mut events, Duration::from_secs(5)).await, RegistrationEvent::Lost(LostReason::KeyDeleted));
    assert!(matches!(event(&mut events, Duration::from_secs(5)).await, RegistrationEvent::Restored { .. }));
    assert_eq!(names(&c.instances(&svc).await.unwrap()), ["node-1"]);
    reg.close().await.unwrap();
    assert!(c.instances(&svc).await.unwrap().instances.is_empty());
    c.close().await;
}

/// The next set within 5 s.
async fn next(d: &mut etcdlock::Discovery) -> Instances {
    tokio::time::timeout(Duration::from_secs(5), d.next()).await.expect("no set in time").unwrap()
}

// covers: DISC-BASIC-001
#[tokio::test]
async fn discover_gives_the_current_set_then_each_change() {
    let (a, b) = (client().await, client().await);
    let svc = prefix("disc") + "api";
    let mut d = b.discover(&svc).unwrap();
    assert!(next(&mut d).await.instances.is_empty(), "the first set is the current one, empty");
    let r1 = a.register(&svc, "n1", "a", 10).await.unwrap();
    assert_eq!(names(&next(&mut d).await), ["n1"]);
    let r2 = a.register(&svc, "n2", "b", 10).await.unwrap();
    let set = next(&mut d).await;
    assert_eq!(names(&set), ["n1", "n2"]);
    assert_eq!(set.revision, set.instances.iter().map(|i| i.mod_revision).max().unwrap());
    r1.update("a2").await.unwrap();
    assert_eq!(next(&mut d).await.instances[0].value, b"a2");
    r1.close().await.unwrap();
    assert_eq!(names(&next(&mut d).await), ["n2"]);
    // Keys below an instance are not instances.
    a.put(format!("{svc}/n2/sub").as_bytes(), b"x", None).await.unwrap();
    r2.close().await.unwrap();
    assert!(next(&mut d).await.instances.is_empty());
    a.delete(format!("{svc}/n2/sub").as_bytes()).await.unwrap();
    assert_eq!(b.discover("").err().map(|e| e.kind()), Some(ErrorKind::InvalidArgument));
    a.close().await;
    b.close().await;
}

// covers: DISC-BATCH-001
#[tokio::test]
async fn a_discovery_reports_a_backlog_of_exactly_a_full_batch() {
    // 8 transactions of 128 instances each arrive while the discoverer is not reading: 1,024
    // events, one full batch of the watch, ending at a revision's end. Nothing more comes after
    // them, so the set must be reported without waiting for another change.
    let eps = shared().endpoints();
    let c = client().await;
    let svc = prefix("disc-batch") + "api";
    let mut d = c.discover(&svc).unwrap();
    assert!(next(&mut d).await.instances.is_empty());
    let mut raw = raw(&eps).await;
    for t in 0..8 {
        let puts: Vec<_> = (0..128).map(|i| etcd_client::TxnOp::put(format!("{svc}/n{t}-{i:03}"), "x", None)).collect();
        raw.txn(etcd_client::Txn::new().and_then(puts)).await.unwrap();
    }
    // Every event is in the discoverer's watch before it reads.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut seen = 0;
    for _ in 0..8 {
        seen = next(&mut d).await.instances.len();
        if seen == 1024 {
            break;
        }
    }
    assert_eq!(seen, 1024);
    raw.delete(format!("{svc}/"), Some(etcd_client::DeleteOptions::new().with_prefix())).await.unwrap();
    c.close().await;
}

// covers: DISC-COMPACT-002
#[tokio::test]
async fn a_discovery_whose_first_watch_starts_in_compacted_history_reads_again() {
    let etcd = Etcd::start(1);
    let (proxies, via) = proxied(&etcd);
    let (watcher, writer) = (client_for(&via).await, client_for(&etcd.endpoints()).await);
    let r1 = writer.register("svc", "n1", "a", 10).await.unwrap();
    let mut d = watcher.discover("svc").unwrap();
    proxies[0].set(proxy::Mode::HoldReplies);
    let first = tokio::spawn(async move { (tokio::time::timeout(Duration::from_secs(10), d.next()).await, d) });
    compact_past_a_held_read(&etcd, &proxies[0]).await;
    let (set, mut d) = first.await.unwrap();
    assert_eq!(names(&set.expect("a set within 10 s").expect("no error")), ["n1"]);
    // The watch that follows that read is the one that starts in compacted history.
    let r2 = writer.register("svc", "n2", "b", 10).await.unwrap();
    let set = tokio::time::timeout(Duration::from_secs(10), d.next()).await.expect("a set within 10 s").expect("no error");
    assert_eq!(names(&set), ["n1", "n2"]);
    r1.close().await.unwrap();
    r2.close().await.unwrap();
    watcher.close().await;
    writer.close().await;
}

// covers: DISC-COMPACT-001
#[tokio::test]
async fn a_discovery_cut_off_through_changes_and_a_compaction_resumes_with_the_current_set() {
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let (proxies, via) = proxied(&etcd);
    let watcher = client_for(&via).await;
    let writer = client_for(&eps).await;
    let mut d = watcher.discover("svc").unwrap();
    let r1 = writer.register("svc", "n1", "a", 10).await.unwrap();
    assert_eq!(names(&d.next().await.unwrap()), ["n1"]);
    proxies[0].set(proxy::Mode::Blackhole);
    let r2 = writer.register("svc", "n2", "b", 10).await.unwrap();
    r1.close().await.unwrap();
    let mut raw = raw(&eps).await;
    let head = raw.put("other", "x", None).await.unwrap().header().unwrap().revision();
    raw.compact(head, None).await.unwrap();
    proxies[0].set(proxy::Mode::Pass);
    proxies[0].reset();
    let set = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let set = d.next().await.unwrap();
            if names(&set) == ["n2"] {
                return set;
            }
        }
    })
    .await
    .expect("the discovery never caught up");
    assert!(set.revision >= r2.lease_id().map_or(0, |_| 1));
    r2.close().await.unwrap();
    watcher.close().await;
    writer.close().await;
}

// covers: REG-KILLED-001
#[tokio::test]
async fn a_registrant_that_stops_disappears_from_discovery_within_its_ttl_and_a_second() {
    let etcd = Etcd::start(1);
    let eps = etcd.endpoints();
    let (proxies, via) = proxied(&etcd);
    let registrant = client_for(&via).await;
    let observer = client_for(&eps).await;
    let _reg = registrant.register("svc", "doomed", "a", 2).await.unwrap();
    let mut d = observer.discover("svc").unwrap();
    assert_eq!(names(&d.next().await.unwrap()), ["doomed"]);
    // As a killed or frozen process: no keepalive, no delete.
    proxies[0].set(proxy::Mode::Blackhole);
    let stopped = std::time::Instant::now();
    let set = tokio::time::timeout(Duration::from_secs(10), d.next()).await.expect("still listed").unwrap();
    assert!(set.instances.is_empty());
    let took = stopped.elapsed();
    assert!(took < Duration::from_secs(3), "gone after {took:?} (TTL 2 s)");
    observer.close().await;
}

// covers: REG-MANY-001
#[tokio::test]
async fn a_thousand_instances_from_four_clients_are_in_one_set() {
    let svc = prefix("reg-many") + "api";
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(client().await);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..1000 {
        let (c, svc) = (clients[i % 4].clone(), svc.clone());
        tasks.spawn(async move { c.register(svc, format!("n{i:04}"), format!("v{i}"), 10).await });
    }
    let mut regs = Vec::new();
    while let Some(r) = tasks.join_next().await {
        regs.push(r.unwrap().unwrap());
    }
    let set = clients[0].instances(&svc).await.unwrap();
    assert_eq!(set.instances.len(), 1000);
    assert_eq!(clients[1].discover(&svc).unwrap().next().await.unwrap().instances.len(), 1000);
    for r in &regs {
        r.close().await.unwrap();
    }
    assert!(clients[2].instances(&svc).await.unwrap().instances.is_empty());
    for c in clients {
        c.close().await;
    }
}

// covers: REG-FAILOVER-001
#[tokio::test]
async fn a_registration_survives_the_etcd_leader_being_killed() {
    let mut etcd = Etcd::start(3);
    let eps = etcd.endpoints();
    let c = client_for(&eps).await;
    let reg = c.register("svc", "node-1", "a", 3).await.unwrap();
    let mut events = reg.events();
    let leader = etcd.leader().await;
    etcd.kill(leader);
    tokio::time::sleep(Duration::from_secs(4)).await; // past the TTL: keepalives went through the new leader
    etcd.restart(leader);
    // Still registered on its first lease: no loss was seen.
    assert!(tokio::time::timeout(Duration::from_millis(100), events.next()).await.is_err(), "a loss was reported");
    assert!(reg.is_registered());
    let set = c.instances("svc").await.unwrap();
    assert_eq!((names(&set), Some(set.instances[0].lease)), (vec!["node-1".to_string()], reg.lease_id()));
    reg.close().await.unwrap();
    c.close().await;
}

/// Lines of a child's stdout, read on a thread.
fn lines(out: std::process::ChildStdout) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

// covers: REG-GRPC-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_grpc_resolver_calls_our_instance_and_we_read_gos() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let script = repo_root().join("scripts/build-go-resolver.sh");
    let built = Command::new("bash").arg(script).output().expect("run build-go-resolver.sh");
    assert!(built.status.success(), "building the Go program failed: {}", String::from_utf8_lossy(&built.stderr));
    let bin = String::from_utf8(built.stdout).unwrap().trim().to_string();
    let svc = prefix("grpc") + "api";
    let mut go = Command::new(&bin)
        .args(["-endpoints", &shared().endpoints()[0], "-target", &svc])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = lines(go.stdout.take().unwrap());
    let line = || out.recv_timeout(Duration::from_secs(30)).expect("the Go program said nothing in time");
    let (a, b) = (line(), line());
    let (a, b) = (a.strip_prefix("A ").unwrap().to_string(), b.strip_prefix("B ").unwrap().to_string());

    // Go's endpoints manager registered A: we read it, in its format.
    let c = client().await;
    let set = c.instances(&svc).await.unwrap();
    assert_eq!(names(&set), ["go-A"]);
    assert_eq!(etcdlock::grpc_endpoint_addr(&set.instances[0].value).as_deref(), Some(a.as_str()));
    // We register B; Go's resolver must route real gRPC calls to both.
    let reg = c.register(&svc, "rust-B", etcdlock::grpc_endpoint(&b), 10).await.unwrap();
    go.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert_eq!(line(), "resolved A B");
    let status = tokio::task::spawn_blocking(move || go.wait()).await.unwrap().unwrap();
    assert!(status.success());
    reg.close().await.unwrap();
    c.close().await;
}

// covers: DISC-CANCEL-001
#[tokio::test]
async fn a_discovery_next_dropped_at_any_point_loses_nothing() {
    let (a, b) = (client().await, client().await);
    let svc = prefix("disc-cancel") + "api";
    let mut d = b.discover(&svc).unwrap();
    let mut regs = Vec::new();
    let mut last: Option<Instances> = None;
    for round in 0..5 {
        regs.push(a.register(&svc, format!("n{round}"), "v", 10).await.unwrap());
        // Calls dropped after a few hundred microseconds: during the read, the watch's start,
        // or while a change is being applied.
        for _ in 0..40 {
            if let Ok(set) = tokio::time::timeout(Duration::from_micros(300), d.next()).await {
                last = Some(set.unwrap());
            }
        }
        let want: Vec<String> = (0..=round).map(|i| format!("n{i}")).collect();
        if last.as_ref().map(names) != Some(want.clone()) {
            last = Some(next(&mut d).await);
        }
        assert_eq!(last.as_ref().map(names), Some(want));
    }
    for r in regs {
        r.close().await.unwrap();
    }
    a.close().await;
    b.close().await;
}
