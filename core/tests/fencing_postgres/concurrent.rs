//! FENCE-CONCURRENT-001 from Rust: 8 tasks, each on a tokio-postgres connection of its own under
//! READ COMMITTED, write tokens of one resource through `etcdlock::fencing::postgres::check` at
//! once. What the database committed, in the order it committed it, is read back from the table.

use super::{connect, dsn};
use crate::common::*;
use etcdlock::fencing::{postgres, Fence, FenceKind};
use etcdlock::ErrorKind;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// covers: FENCE-CONCURRENT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_under_read_committed_never_commit_a_stale_token() {
    let c = client().await;
    let cluster = c.cluster_id().await.unwrap();
    let name = prefix("fence-pg") + "busy";
    let tokens: Vec<i64> = (100..140).collect();
    let committed = Arc::new(Mutex::new(Vec::new()));
    let refused = Arc::new(Mutex::new(Vec::new()));
    let mut writers = Vec::new();
    for w in 0..8 {
        let mut db = connect(dsn()).await;
        let mine: Vec<i64> = tokens.iter().copied().skip(w).step_by(8).collect();
        let (name, committed, refused) = (name.clone(), committed.clone(), refused.clone());
        writers.push(tokio::spawn(async move {
            for token in mine {
                let fence = Fence { kind: FenceKind::Queue, name: name.clone().into_bytes(), token, cluster };
                let txn = db.build_transaction().isolation_level(tokio_postgres::IsolationLevel::ReadCommitted).start().await.unwrap();
                match postgres::check(&txn, &fence, None).await {
                    Ok(_) => {
                        // A window between the check and the commit for the others to race into.
                        tokio::time::sleep(Duration::from_millis((token as u64 * 7 + w as u64) % 3)).await;
                        txn.execute("INSERT INTO busy (resource, writer, token) VALUES ($1, $2, $3)", &[&name, &format!("w{w}"), &token]).await.unwrap();
                        txn.commit().await.unwrap();
                        committed.lock().unwrap().push(token);
                    }
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::NotHeld, "{e}");
                        txn.rollback().await.unwrap();
                        refused.lock().unwrap().push(token);
                    }
                }
            }
        }));
    }
    for w in writers {
        tokio::time::timeout(Duration::from_secs(60), w).await.expect("a writer did not finish in 60 s").unwrap();
    }
    let (mut committed, refused) = (committed.lock().unwrap().clone(), refused.lock().unwrap().clone());
    assert_eq!(committed.len() + refused.len(), tokens.len(), "a write was neither committed nor refused");
    // seq is taken by the INSERT, after the check, while the mark's row is locked: commit order.
    let db = connect(dsn()).await;
    let rows = db.query("SELECT token FROM busy WHERE resource = $1 ORDER BY seq", &[&name]).await.unwrap();
    let in_order: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    let mut sorted = in_order.clone();
    sorted.sort_unstable();
    committed.sort_unstable();
    assert_eq!(sorted, committed, "the table holds other writes than those committed");
    assert_eq!(in_order, sorted, "a stale token committed after a newer one: {in_order:?}");
    assert!(committed.contains(&139), "the newest token was refused");
    println!("FENCE-CONCURRENT-001: {} committed, {} refused", committed.len(), refused.len());
    c.close().await;
}
