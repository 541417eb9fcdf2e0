//! The raw loops' cycles, shared by the throughput workloads and `--example paired` (which
//! includes this file by path: the bench crate has no library target).

use etcd_client::{Client, Compare, CompareOp, PutOptions, Txn, TxnOp};
use std::time::{Duration, Instant};

/// The raw loop's cycle: put if absent, then delete.
pub async fn raw_cycle(c: &mut Client, key: &str, lease: i64) -> [Duration; 2] {
    let put = TxnOp::put(key, "", Some(PutOptions::new().with_lease(lease)));
    let t0 = Instant::now();
    c.txn(Txn::new().when([Compare::create_revision(key, CompareOp::Equal, 0)]).and_then([put])).await.unwrap();
    let t1 = Instant::now();
    c.delete(key, None).await.unwrap();
    [t1 - t0, t1.elapsed()]
}

/// The lock's own requests, raw: the uncontended enqueue of `key` (put if nobody is queued under
/// `queue`), then the fenced delete.
pub async fn shaped_cycle(c: &mut Client, queue: &str, key: &str, lease: i64) -> [Duration; 2] {
    let put = TxnOp::put(key, "", Some(PutOptions::new().with_lease(lease)));
    let enqueue = Txn::new().when([Compare::version(queue, CompareOp::Equal, 0).with_prefix()]).and_then([put]);
    let t0 = Instant::now();
    let token = c.txn(enqueue).await.unwrap().header().unwrap().revision();
    let t1 = Instant::now();
    let fenced = Txn::new()
        .when([Compare::create_revision(key, CompareOp::Equal, token)])
        .and_then([TxnOp::delete(key, None)]);
    assert!(c.txn(fenced).await.unwrap().succeeded());
    [t1 - t0, t1.elapsed()]
}
