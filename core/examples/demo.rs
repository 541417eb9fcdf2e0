//! Two workers contend for one lock; each guarded-increments a counter while holding it.
//!
//! `cargo run -p etcdlock --example demo` starts its own etcd on 127.0.0.1 unless
//! `ETCDLOCK_ENDPOINTS` names one. Exits non-zero if a check fails.

use std::time::{Duration, Instant};

const ROUNDS: usize = 5;

async fn worker(name: &'static str, endpoints: Vec<String>, log: tokio::sync::mpsc::UnboundedSender<(String, i64)>) -> etcdlock::Result<()> {
    let client = etcdlock::Client::connect(&endpoints, Default::default()).await?;
    let mutex = client.mutex("demo/lock", 5)?;
    for _ in 0..ROUNDS {
        let waited = Instant::now();
        let guard = mutex.lock().await?;
        let token = guard.fencing_token();
        println!("{name} holds demo/lock  token={token:<6} waited {:>5.1} ms", waited.elapsed().as_secs_f64() * 1e3);
        // Read-modify-write that only commits while we still hold the lock.
        let n: u64 = match client.get(b"demo/counter").await? {
            Some(kv) => String::from_utf8_lossy(&kv.value).parse().unwrap_or(0),
            None => 0,
        };
        guard.put(b"demo/counter", (n + 1).to_string().as_bytes()).await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
        guard.release().await?;
        let _ = log.send((name.to_string(), token));
    }
    client.close().await;
    Ok(())
}

#[tokio::main]
async fn main() {
    let own = std::env::var("ETCDLOCK_ENDPOINTS").is_err().then(|| {
        println!("starting a local etcd on 127.0.0.1 ...");
        etcd_testkit::Etcd::start(1)
    });
    let endpoints: Vec<String> = match &own {
        Some(e) => e.endpoints(),
        None => std::env::var("ETCDLOCK_ENDPOINTS").unwrap().split(',').map(str::to_string).collect(),
    };
    let setup = etcdlock::Client::connect(&endpoints, Default::default()).await.expect("connect");
    setup.delete(b"demo/counter").await.expect("reset counter");

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let a = tokio::spawn(worker("worker-A", endpoints.clone(), tx.clone()));
    let b = tokio::spawn(worker("worker-B", endpoints.clone(), tx));
    a.await.unwrap().expect("worker A");
    b.await.unwrap().expect("worker B");

    let mut history = Vec::new();
    while let Ok(entry) = rx.try_recv() {
        history.push(entry);
    }
    let counter = setup.get(b"demo/counter").await.unwrap().map(|kv| kv.value).unwrap_or_default();
    let tokens_increase = history.windows(2).all(|w| w[0].1 < w[1].1);
    let alternated = history.windows(2).filter(|w| w[0].0 != w[1].0).count();
    let counter_ok = counter == (2 * ROUNDS).to_string().into_bytes();
    let leftovers = {
        let mut raw = etcd_client::Client::connect(&endpoints, None).await.unwrap();
        raw.get("demo/lock/", Some(etcd_client::GetOptions::new().with_prefix().with_count_only())).await.unwrap().count()
    };
    setup.close().await;
    println!();
    let check = |what: String, ok: bool| println!("check: {what:<42} {}", if ok { "ok" } else { "FAILED" });
    check(format!("counter = {} (expected {})", String::from_utf8_lossy(&counter), 2 * ROUNDS), counter_ok);
    check("fencing tokens strictly increase".into(), tokens_increase);
    check(format!("the lock changed hands {alternated} times"), alternated > 0);
    check("no queue key left in etcd".into(), leftovers == 0);
    drop(own);
    if !(counter_ok && tokens_increase && alternated > 0 && leftovers == 0) {
        std::process::exit(1);
    }
}
