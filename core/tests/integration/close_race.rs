//! close() racing with a waiting acquire's cleanup must not leave the waiter's key behind.
use crate::common::*;
use std::time::Duration;

// covers: CONN-CLOSE-WAITER-001
#[tokio::test]
async fn closing_a_client_with_a_waiting_acquire_never_leaves_its_key() {
    let holder = client().await;
    for round in 0..10 {
        let name = prefix(&format!("closerace{round}")) + "lock";
        let g = holder.mutex(name.clone(), 30).unwrap().lock().await.unwrap();
        let waiter = client().await;
        let m = waiter.mutex(name.clone(), 30).unwrap();
        let w = tokio::spawn(async move { m.lock().await.map(drop) });
        let n = name.clone();
        assert!(eventually(Duration::from_secs(5), || {
            let n = n.clone();
            async move { keys_under(&shared().endpoints(), &format!("{n}/")).await.len() == 2 }
        }).await);
        waiter.close().await;
        let r = tokio::time::timeout(Duration::from_secs(5), w).await.unwrap().unwrap();
        assert_eq!(r.unwrap_err().kind(), etcdlock::ErrorKind::Closed);
        // The holder's key only, right away (not after the waiter's 30 s TTL).
        let n = name.clone();
        assert!(eventually(Duration::from_secs(2), || {
            let n = n.clone();
            async move { keys_under(&shared().endpoints(), &format!("{n}/")).await.len() == 1 }
        }).await, "round {round}: the waiter's key outlived close()");
        g.release().await.unwrap();
    }
    holder.close().await;
}
