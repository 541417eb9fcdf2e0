//! Moments that lie between two instructions on different threads, made to happen every time by
//! the tool kit's pause (`runtime::pause_at_for_tests`, process-wide: each test alone).

use crate::common::*;
use std::time::Duration;

// covers: CONN-CLOSE-WAITER-002
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acquire_whose_wait_completed_as_close_began_fails_with_closed() {
    crate::alone!(an_acquire_whose_wait_completed_as_close_began_fails_with_closed);
    let eps = shared().endpoints();
    let name = prefix("close-race") + "lock";
    let c = client().await;
    let pause = etcdlock::runtime::pause_at_for_tests("acquired");
    let m = c.mutex(name.clone(), 10).unwrap();
    let acquire = tokio::spawn(async move { m.lock().await.map(|g| g.fencing_token()) });
    tokio::time::timeout(Duration::from_secs(10), pause.reached()).await.expect("the acquire never completed its wait");
    // The lock is this acquire's in etcd, and close begins before the acquire returns.
    assert_eq!(keys_under(&eps, &format!("{name}/")).await.len(), 1);
    let closing = c.clone();
    let close = tokio::spawn(async move { closing.close().await });
    assert!(eventually(Duration::from_secs(5), || async { c.is_closed() }).await);
    pause.resume();
    let r = tokio::time::timeout(Duration::from_secs(10), acquire).await.expect("the acquire hung").unwrap();
    let e = r.expect_err("an acquire returned a lock after close began");
    assert_eq!(e.kind(), etcdlock::ErrorKind::Closed);
    tokio::time::timeout(Duration::from_secs(10), close).await.expect("close hung").unwrap();
    assert!(eventually(Duration::from_secs(5), || async { keys_under(&eps, &format!("{name}/")).await.is_empty() }).await, "its key was left");
}
