//! The fair read-write lock against a real etcd.
use crate::common::*;
use etcdlock::{ErrorKind, LockOptions};
use std::time::Duration;

fn within(ms: u64) -> LockOptions {
    LockOptions { timeout: Some(Duration::from_millis(ms)), ..Default::default() }
}

// covers: RW-READERS-001, RW-TIMEOUT-001
#[tokio::test]
async fn readers_hold_together_and_a_writer_waits_for_all_of_them() {
    let (a, b) = (client().await, client().await);
    let name = prefix("rw-readers") + "cfg";
    let (ra, rb) = (a.rwlock(name.clone(), 10).unwrap(), b.rwlock(name.clone(), 10).unwrap());
    let readers = [ra.try_read().await.unwrap(), ra.read().await.unwrap(), rb.read().await.unwrap()];
    assert!(readers.iter().all(|r| r.is_held()));
    assert_eq!(rb.try_write().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert_eq!(rb.write_with(within(300)).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    assert_eq!(keys_under(&shared().endpoints(), &format!("{name}/")).await.len(), 3, "the failed writers left nothing");
    let writer = {
        let rb = b.rwlock(name.clone(), 10).unwrap();
        tokio::spawn(async move { rb.write().await })
    };
    let [r1, r2, r3] = readers;
    for r in [r1, r2] {
        r.release().await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!writer.is_finished(), "wrote while a reader held");
    }
    r3.release().await.unwrap();
    let w = tokio::time::timeout(Duration::from_secs(5), writer).await.unwrap().unwrap().unwrap();
    assert!(w.fencing_token() > r3.fencing_token());
    assert_eq!(ra.try_read().await.unwrap_err().kind(), ErrorKind::WouldBlock, "a writer excludes readers");
    w.release().await.unwrap();
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
    a.close().await;
    b.close().await;
}

// covers: RW-WRITER-FAIR-001
#[tokio::test]
async fn a_reader_that_comes_after_a_waiting_writer_waits_for_it() {
    let client = client().await;
    let name = prefix("rw-fair") + "cfg";
    let rw = std::sync::Arc::new(client.rwlock(name.clone(), 10).unwrap());
    let first = rw.read().await.unwrap();
    let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let spawn = |write: bool| {
        let (rw, order) = (rw.clone(), order.clone());
        tokio::spawn(async move {
            let g = if write { rw.write().await } else { rw.read().await }.unwrap();
            order.lock().unwrap().push(if write { "w" } else { "r" });
            tokio::time::sleep(Duration::from_millis(100)).await;
            order.lock().unwrap().push(if write { "/w" } else { "/r" });
            g.release().await.unwrap();
        })
    };
    let writer = spawn(true);
    let eps = shared().endpoints();
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.len() == 2 }).await);
    // Readers hold together, but not past a writer that came first: no writer starves.
    assert_eq!(rw.try_read().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    let reader = spawn(false);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(order.lock().unwrap().is_empty(), "the later reader went ahead of the writer");
    first.release().await.unwrap();
    for t in [writer, reader] {
        tokio::time::timeout(Duration::from_secs(5), t).await.unwrap().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), ["w", "/w", "r", "/r"]);
    client.close().await;
}

// covers: RW-EXCL-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_a_reader_beside_a_writer_counted_by_fenced_writes() {
    let name = prefix("rw-excl") + "cfg";
    let marks = format!("{name}-holding/");
    let mut tasks = Vec::new();
    for i in 0..6 {
        let (name, marks) = (name.clone(), marks.clone());
        tasks.push(tokio::spawn(async move {
            let client = client().await;
            let rw = client.rwlock(name, 10).unwrap();
            let mut raw = raw(&shared().endpoints()).await;
            let mut readers_together = 0;
            for round in 0..5 {
                let write = (i + round) % 3 == 0;
                let g = if write { rw.write().await } else { rw.read().await }.unwrap();
                let mark = format!("{marks}{}{i}-{round}", if write { "w" } else { "r" });
                g.put(mark.as_bytes(), b"x").await.unwrap();
                let held = raw.get(marks.as_str(), Some(etcd_client::GetOptions::new().with_prefix().with_keys_only())).await.unwrap();
                let keys: Vec<String> = held.kvs().iter().map(|kv| String::from_utf8_lossy(kv.key()).into_owned()).collect();
                let writers = keys.iter().filter(|k| k[marks.len()..].starts_with('w')).count();
                if write {
                    assert_eq!(keys, [mark.clone()], "a writer is alone");
                } else {
                    assert_eq!(writers, 0, "a reader beside a writer: {keys:?}");
                    readers_together = readers_together.max(keys.len());
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
                g.delete(mark.as_bytes()).await.unwrap();
                g.release().await.unwrap();
            }
            client.close().await;
            readers_together
        }));
    }
    let mut most = 0;
    for t in tasks {
        most = most.max(tokio::time::timeout(Duration::from_secs(60), t).await.expect("no stall").unwrap());
    }
    assert!(most >= 2, "readers never held together");
    assert!(keys_under(&shared().endpoints(), &format!("{name}/")).await.is_empty());
}

// covers: RW-MUTEX-001
#[tokio::test]
async fn a_plain_mutex_on_the_name_counts_as_a_writer() {
    let client = client().await;
    let name = prefix("rw-mutex") + "cfg";
    let locked = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let rw = client.rwlock(name.clone(), 10).unwrap();
    assert_eq!(rw.try_read().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    assert_eq!(rw.read_with(within(300)).await.unwrap_err().kind(), ErrorKind::LockTimeout);
    locked.release().await.unwrap();
    let r = rw.read().await.unwrap();
    // And a reader excludes a plain mutex.
    assert_eq!(client.mutex(name.clone(), 10).unwrap().try_lock().await.unwrap_err().kind(), ErrorKind::WouldBlock);
    r.release().await.unwrap();
    client.close().await;
}
