//! `cargo run --release -p etcdlock-bench --example hops -- URL [CYCLES]`
//!
//! What a blocking binding pays to enter the shared runtime: lock/release cycles from a plain
//! thread, alternating (a) the whole cycle in one `runtime::block_on`, (b) one `block_on` per
//! call, as the C binding and Python's sync API do (the caller spins briefly before it sleeps),
//! and (c) one `Handle::block_on` per call, polled on the calling thread, which sleeps at once.
//! Prints the medians; (b) and (c) minus (a) is the cost of one extra trip into the runtime and
//! back.

use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let endpoint = args.next().expect("usage: hops URL [CYCLES]");
    let cycles: usize = args.next().map_or(2000, |s| s.parse().expect("CYCLES"));
    let block_on = |f| etcdlock::runtime::block_on(f).expect("runtime");
    let client = block_on(async move { etcdlock::Client::connect([endpoint], Default::default()).await }).unwrap();
    let mutex = Arc::new(client.mutex(format!("hops/{}", std::process::id()), 60).unwrap());
    let handle = etcdlock::runtime::handle();

    let mut samples: [Vec<Duration>; 3] = Default::default();
    for _ in 0..cycles {
        let t0 = Instant::now();
        let m = mutex.clone();
        etcdlock::runtime::block_on(async move { m.lock().await?.release().await }).unwrap().unwrap();
        let t1 = Instant::now();
        let m = mutex.clone();
        let guard = Arc::new(etcdlock::runtime::block_on(async move { m.lock().await }).unwrap().unwrap());
        let g = guard.clone();
        etcdlock::runtime::block_on(async move { g.release().await }).unwrap().unwrap();
        let t2 = Instant::now();
        let guard = handle.block_on(mutex.lock()).unwrap();
        handle.block_on(guard.release()).unwrap();
        let t3 = Instant::now();
        for (s, d) in samples.iter_mut().zip([t1 - t0, t2 - t1, t3 - t2]) {
            s.push(d);
        }
    }
    let [a, b, c] = samples.map(|mut v| {
        v.sort();
        v[v.len() / 2]
    });
    println!("lock/release cycle, medians over {cycles}:");
    println!("  (a) one block_on per cycle        {a:>10.1?}");
    println!("  (b) one block_on per call         {b:>10.1?}  (a/b {:.3})", a.as_secs_f64() / b.as_secs_f64());
    println!("  (c) one Handle::block_on per call {c:>10.1?}  (a/c {:.3})", a.as_secs_f64() / c.as_secs_f64());
    etcdlock::runtime::block_on(async move { client.close().await }).unwrap();
}
