//! `cargo run --release -p etcdlock-bench --example shapes -- URL [CYCLES]`
//!
//! What etcd charges for the request shapes a lock could use, next to the raw loop's two
//! (put-if-absent Txn, Delete), sent raw from one task against the etcd at URL. The shapes take
//! turns within every cycle, so a drifting machine moves them all alike; medians are printed.
//! This is how the lock's requests were chosen (docs/design.md, "Enqueue"): a queue read costs
//! ~20 us, an `else` branch as much even when not taken, a prefix compare next to nothing.
//! The third group is a waiter's position read (the two newest keys created at or before its
//! own), as the lock sends it and as a serializable read would cost.

use etcd_client::{Client, Compare, CompareOp, GetOptions, PutOptions, SortOrder, SortTarget, Txn, TxnOp};
use std::time::{Duration, Instant};

const PUTS: [&str; 5] = [
    "raw: txn if create(key)=0 then put",
    "if create(key)=0 then [newest under prefix, put]",
    "if version(prefix)=0 then put",
    "if version(prefix)=0 then put else [newest]",
    "if version(prefix)=0 then put else [txn ...]",
];
const DELETES: [&str; 3] = ["raw: delete", "txn if create(key)=token then delete", "txn delete"];
const READS: [&str; 2] = ["position read (linearizable)", "position read (serializable)"];

fn main() {
    let mut args = std::env::args().skip(1);
    let endpoint = args.next().expect("usage: shapes URL [CYCLES]");
    let cycles: usize = args.next().map_or(1000, |s| s.parse().expect("CYCLES"));
    etcdlock::runtime::block_on(run(endpoint, cycles)).expect("shapes panicked");
}

async fn run(endpoint: String, cycles: usize) {
    let mut c = Client::connect([endpoint], None).await.unwrap();
    let lease = c.lease_grant(60, None).await.unwrap().id();
    let prefix = format!("shapes/{}/", std::process::id());
    let key = format!("{prefix}{lease:x}");
    let newest = || {
        let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Descend).with_limit(1).with_keys_only();
        TxnOp::get(prefix.clone(), Some(o))
    };
    let put = || TxnOp::put(key.clone(), "", Some(PutOptions::new().with_lease(lease)));
    let absent = || Compare::create_revision(key.clone(), CompareOp::Equal, 0);
    let empty = || Compare::version(prefix.clone(), CompareOp::Equal, 0).with_prefix();

    let mut puts: Vec<Vec<Duration>> = vec![Vec::new(); PUTS.len()];
    let mut deletes: Vec<Vec<Duration>> = vec![Vec::new(); DELETES.len()];
    let mut reads: Vec<Vec<Duration>> = vec![Vec::new(); READS.len()];
    for i in 0..cycles * PUTS.len() {
        let shape = i % PUTS.len();
        let txn = match shape {
            0 => Txn::new().when([absent()]).and_then([put()]),
            1 => Txn::new().when([absent()]).and_then([newest(), put()]),
            2 => Txn::new().when([empty()]).and_then([put()]),
            3 => Txn::new().when([empty()]).and_then([put()]).or_else([newest()]),
            _ => Txn::new().when([empty()]).and_then([put()]).or_else([TxnOp::txn(Txn::new().when([absent()]).and_then([newest(), put()]))]),
        };
        let t = Instant::now();
        let resp = c.txn(txn).await.unwrap();
        puts[shape].push(t.elapsed());
        assert!(resp.succeeded(), "the queue is empty, every shape puts");
        let token = resp.header().unwrap().revision();

        let shape = i % READS.len();
        let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Descend).with_max_create_revision(token).with_limit(2).with_keys_only();
        let o = if shape == 1 { o.with_serializable() } else { o };
        let t = Instant::now();
        let resp = c.get(prefix.clone(), Some(o)).await.unwrap();
        reads[shape].push(t.elapsed());
        assert_eq!(resp.kvs().len(), 1, "our own key, alone");

        let shape = i % DELETES.len();
        let t = Instant::now();
        match shape {
            0 => drop(c.delete(key.clone(), None).await.unwrap()),
            1 => {
                let fenced = Txn::new().when([Compare::create_revision(key.clone(), CompareOp::Equal, token)]);
                assert!(c.txn(fenced.and_then([TxnOp::delete(key.clone(), None)])).await.unwrap().succeeded());
            }
            _ => drop(c.txn(Txn::new().and_then([TxnOp::delete(key.clone(), None)])).await.unwrap()),
        }
        deletes[shape].push(t.elapsed());
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let base = median(&mut puts[0]);
    for (name, v) in PUTS.iter().zip(puts.iter_mut()) {
        let m = median(v);
        println!("{name:48} {m:>9.1?}  {:>+6.1} us", (m.as_secs_f64() - base.as_secs_f64()) * 1e6);
    }
    for (names, group) in [(&DELETES[..], &mut deletes), (&READS[..], &mut reads)] {
        let base = median(&mut group[0]);
        for (name, v) in names.iter().zip(group.iter_mut()) {
            let m = median(v);
            println!("{name:48} {m:>9.1?}  {:>+6.1} us", (m.as_secs_f64() - base.as_secs_f64()) * 1e6);
        }
    }
    let _ = c.lease_revoke(lease).await;
}
