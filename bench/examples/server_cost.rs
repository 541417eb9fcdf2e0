// Throwaway: latency of the enqueue Txn's sorted range with many deleted keys under the prefix.
use etcd_client::*;
use std::time::{Duration, Instant};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let ep = std::env::args().nth(1).unwrap();
    let mut c = Client::connect([ep], None).await.unwrap();
    let prefix = format!("bench/dead{}/", std::process::id());
    let key = format!("{prefix}mine");
    let time = |c: &mut Client| {
        let mut c = c.clone();
        let (prefix, key) = (prefix.clone(), key.clone());
        async move {
            let start = Instant::now();
            let n = 500;
            for _ in 0..n {
                let rng = TxnOp::get(prefix.clone(), Some(GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Descend).with_limit(1).with_keys_only()));
                c.txn(Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)]).and_then([rng, TxnOp::put(key.clone(), "", None)])).await.unwrap();
                c.delete(key.clone(), None).await.unwrap();
            }
            start.elapsed() / n
        }
    };
    println!("0 dead keys: {:?} per cycle", time(&mut c).await);
    for round in 0..3 {
        for i in 0..3000 {
            let k = format!("{prefix}{round}-{i}");
            c.put(k.clone(), "", None).await.unwrap();
            c.delete(k, None).await.unwrap();
        }
        println!("{} dead keys: {:?} per cycle", (round + 1) * 3000, time(&mut c).await);
    }
    let _ = Duration::ZERO;
}
