//! Resilient watches against a real etcd.
use crate::common::*;
use etcdlock::{ErrorKind, EventType, WatchOptions};
use std::time::Duration;

async fn next(w: &mut etcdlock::Watch) -> etcdlock::WatchEvent {
    tokio::time::timeout(Duration::from_secs(10), w.next()).await.expect("event in time").expect("open").expect("no error")
}

// covers: WATCH-BASIC-001
#[tokio::test]
async fn key_and_prefix_watches_deliver_puts_and_deletes_in_order() {
    let client = client().await;
    let p = prefix("watchbasic");
    let mut w = client.watch(p.clone(), WatchOptions { prefix: true, prev_kv: true, ..Default::default() }).await.unwrap();
    let mut one = client.watch(format!("{p}a"), WatchOptions::default()).await.unwrap();
    // Make sure both watches are established before writing.
    tokio::time::sleep(Duration::from_millis(200)).await;
    client.put(format!("{p}a").as_bytes(), b"1", None).await.unwrap();
    client.put(format!("{p}b").as_bytes(), b"2", None).await.unwrap();
    client.delete(format!("{p}a").as_bytes()).await.unwrap();
    let e1 = next(&mut w).await;
    let e2 = next(&mut w).await;
    let e3 = next(&mut w).await;
    assert_eq!((e1.event_type, e1.kv.value.as_slice()), (EventType::Put, &b"1"[..]));
    assert_eq!(e2.kv.key, format!("{p}b").into_bytes());
    assert_eq!(e3.event_type, EventType::Delete);
    assert_eq!(e3.prev_kv.as_ref().unwrap().value, b"1");
    assert!(e1.revision() < e2.revision() && e2.revision() < e3.revision());
    assert_eq!(next(&mut one).await.revision(), e1.revision());
    assert_eq!(next(&mut one).await.revision(), e3.revision());
    w.close();
    assert!(w.next().await.is_none());
    client.close().await;
}

// covers: WATCH-START-001
#[tokio::test]
async fn start_revision_replays_history() {
    let client = client().await;
    let key = prefix("watchhist") + "k";
    let r1 = client.put(key.as_bytes(), b"1", None).await.unwrap();
    client.put(key.as_bytes(), b"2", None).await.unwrap();
    let mut w = client.watch(key.clone(), WatchOptions { start_revision: Some(r1), ..Default::default() }).await.unwrap();
    assert_eq!(next(&mut w).await.kv.value, b"1");
    assert_eq!(next(&mut w).await.kv.value, b"2");
    assert_eq!(client.watch(key.clone(), WatchOptions { start_revision: Some(-1), ..Default::default() }).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(client.watch("", WatchOptions::default()).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    client.close().await;
}

// covers: WATCH-COMPACT-001
#[tokio::test]
async fn compacted_start_revision_is_an_explicit_error() {
    let client = client().await;
    let key = prefix("watchcompact") + "k";
    let r1 = client.put(key.as_bytes(), b"1", None).await.unwrap();
    let r2 = client.put(key.as_bytes(), b"2", None).await.unwrap();
    let mut raw = raw(&shared().endpoints()).await;
    raw.compact(r2, None).await.unwrap();
    let mut w = client.watch(key.clone(), WatchOptions { start_revision: Some(r1), ..Default::default() }).await.unwrap();
    let e = tokio::time::timeout(Duration::from_secs(10), w.next()).await.unwrap().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Compacted);
    assert!(e.compact_revision().unwrap() >= r2);
    assert!(w.next().await.is_none(), "a compacted watch ends");
    client.close().await;
}

// covers: WATCH-RESUME-001
#[tokio::test]
async fn watch_resumes_across_a_member_restart_without_gap_or_duplicate() {
    let mut etcd = Etcd::start(3);
    let eps = etcd.endpoints();
    let client = client_for(&eps).await;
    let writer = client_for(&eps).await;
    let key = "resume/k";
    let mut w = client.watch(key, WatchOptions::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let writes = 60;
    let mut seen = Vec::new();
    let writer_task = tokio::spawn(async move {
        for i in 0..writes {
            // Retry writes that fail while members restart; values stay unique.
            for _ in 0..50 {
                if writer.put(key.as_bytes(), i.to_string().as_bytes(), None).await.is_ok() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        writer.close().await;
    });
    // Restart every member in turn while events flow, so the watch stream must break.
    let restarter = tokio::task::spawn_blocking(move || {
        for i in 0..3 {
            std::thread::sleep(Duration::from_millis(300));
            etcd.restart(i);
        }
        etcd
    });
    // Until the last value arrives: a put retried across a restart may apply twice, so there can be
    // more events than writes.
    let last = (writes - 1).to_string();
    while seen.last().is_none_or(|e: &etcdlock::WatchEvent| e.kv.value != last.as_bytes()) && seen.len() < 2 * writes {
        let e = tokio::time::timeout(Duration::from_secs(30), w.next()).await.expect("event in time").unwrap().unwrap();
        seen.push(e);
    }
    writer_task.await.unwrap();
    let _etcd = restarter.await.unwrap();
    let values: Vec<String> = seen.iter().map(|e| String::from_utf8(e.kv.value.clone()).unwrap()).collect();
    let expected: Vec<String> = (0..writes).map(|i| i.to_string()).collect();
    // Retried puts may apply twice (same value, new revision): collapse repeats of a value.
    let mut dedup = values.clone();
    dedup.dedup();
    assert_eq!(dedup, expected, "gap or reorder");
    assert!(seen.windows(2).all(|p| p[0].revision() < p[1].revision()), "duplicate or out of order revisions");
    client.close().await;
}

// covers: WATCH-CREATED-001
#[tokio::test]
async fn a_watch_whose_stream_breaks_before_etcd_confirms_it_misses_nothing() {
    let proxy = proxy::Proxy::start(shared().members[0].client_port);
    let client = client_for(&[proxy.endpoint()]).await;
    let key = prefix("created") + "k";
    // etcd's confirmation is held back, then the connection is reset under it.
    proxy.set(proxy::Mode::HoldReplies);
    let watching = {
        let (c, k) = (client.clone(), key.clone());
        tokio::spawn(async move { c.watch(k, WatchOptions::default()).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy.reset();
    proxy.set(proxy::Mode::Pass);
    let mut w = tokio::time::timeout(Duration::from_secs(10), watching).await.unwrap().unwrap().unwrap();
    assert!(w.next_revision() > 0, "watch() returned without a start revision");
    // A change made right after watch() returned is delivered.
    let mut raw = raw(&shared().endpoints()).await;
    raw.put(key.clone(), "v", None).await.unwrap();
    assert_eq!(next(&mut w).await.kv.value, b"v");
    client.close().await;
}

// covers: WATCH-PROGRESS-001
#[tokio::test]
async fn a_quiet_watch_resumes_past_a_compaction_of_what_it_did_not_watch() {
    // The watched key is quiet while others change and the history is compacted; then the
    // stream breaks. The watch must resume from the progress etcd reported, not from where it
    // started (compacted by then). etcd answers progress requests for synced watches only from
    // 3.5.8 (etcd-io/etcd#15220); test.sh skips this on 3.5.1.
    assert!(etcd_version() >= (3, 5, 8), "needs etcd >= 3.5.8, this is {:?}", etcd_version());
    let etcd = Etcd::start(1);
    let (proxies, via) = proxied(&etcd);
    let (watcher, writer) = (client_for(&via).await, client_for(&etcd.endpoints()).await);
    let name = prefix("watch-progress");
    let key = format!("{name}quiet");
    let mut w = watcher.watch(key.clone(), WatchOptions::default()).await.unwrap();
    let mut head = 0;
    for i in 0..20 {
        head = writer.put(format!("{name}busy").as_bytes(), i.to_string().as_bytes(), None).await.unwrap();
    }
    // Waiting for an event: the watch takes in what the stream says meanwhile.
    let next = tokio::spawn(async move { (tokio::time::timeout(Duration::from_secs(20), w.next()).await, w) });
    // After 2 s of quiet the client asks for progress (transport/health.rs: WATCH_IDLE).
    tokio::time::sleep(Duration::from_secs(3)).await;
    raw(&etcd.endpoints()).await.compact(head, None).await.unwrap();
    proxies[0].reset();
    writer.put(key.as_bytes(), b"v", None).await.unwrap();
    let (event, _w) = next.await.unwrap();
    let event = event.expect("an event within 20 s").expect("the watch goes on").expect("no error");
    assert_eq!(event.kv.key, key.as_bytes());
    watcher.close().await;
    writer.close().await;
}
