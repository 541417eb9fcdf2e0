//! The task queue's throughput row, as every bench process runs it (`queue (N workers)`; Go's
//! with recipe.Queue, bench/go/queue.go): one producer and N workers, each a client of its own,
//! on a queue of its own per window. The producer puts small payloads as fast as it can while it
//! is fewer than [`BACKLOG_PER_WORKER`] × N items ahead of the acks (so that the workers always
//! find work and the queue does not grow with the window's length); each worker claims and acks
//! until the window ends. Tasks/s is the tasks acked by the window's end, per second of window;
//! CPU per task is the whole process's (producer and workers). After the window the producer's
//! client claims and acks what is left (at most the backlog), untimed, so that the next window's
//! etcd holds nothing of this one's.

use crate::cpu::{per_cycle, process_cpu};
use crate::workloads::Report;
use etcdlock::{ClaimOptions, ErrorKind, QueueOptions, TaskOptions};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many items per worker the producer may be ahead of the acks.
pub const BACKLOG_PER_WORKER: usize = 2;
/// Every item's payload: small, as a task's reference to its real input would be.
pub const PAYLOAD: &[u8] = b"task-0123456789";

pub async fn queue(endpoints: &[String], workers: usize, dur: Duration, name: String) -> Report {
    let qname = format!("bench/queue-{}-{}", std::process::id(), etcd_testkit::rand_suffix());
    let opts = QueueOptions { ttl_secs: 10, max_attempts: 5, ..Default::default() };
    let connect = || async { etcdlock::Client::connect(endpoints, Default::default()).await.expect("connect") };
    let producer = connect().await;
    let mut conns = Vec::new();
    for _ in 0..workers {
        conns.push(connect().await);
    }
    let backlog = Arc::new(tokio::sync::Semaphore::new(BACKLOG_PER_WORKER * workers));
    let cpu0 = process_cpu();
    let deadline = Instant::now() + dur;
    let mut handles = Vec::new();
    for c in &conns {
        let q = c.queue(qname.clone(), opts.clone()).unwrap();
        let backlog = backlog.clone();
        handles.push(tokio::spawn(async move {
            let mut acked = 0u64;
            loop {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                let task = match q.claim(ClaimOptions { timeout: Some(deadline - now), ..Default::default() }).await {
                    Ok(t) => t,
                    Err(e) if e.kind() == ErrorKind::LockTimeout => break,
                    Err(e) => panic!("claim: {e}"),
                };
                task.ack().await.expect("ack");
                backlog.add_permits(1);
                if Instant::now() <= deadline {
                    acked += 1;
                }
            }
            acked
        }));
    }
    let q = producer.queue(qname.clone(), opts.clone()).unwrap();
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        match tokio::time::timeout(deadline - now, backlog.acquire()).await {
            Ok(permit) => permit.expect("semaphore").forget(),
            Err(_) => break,
        }
        q.put(PAYLOAD, TaskOptions::default()).await.expect("put");
    }
    let mut acked = 0;
    for h in handles {
        acked += h.await.expect("worker panicked");
    }
    let cpu_us_per_cycle = per_cycle(cpu0, acked);
    drain(&q).await;
    for c in conns {
        c.close().await;
    }
    producer.close().await;
    Report {
        name,
        cycles_per_sec: acked as f64 / dur.as_secs_f64(),
        handoff_p50: None,
        handoff_p99: None,
        jain: None,
        cpu_us_per_cycle,
    }
}

/// Claims and acks every item left, one at a time, until none is available.
async fn drain(q: &etcdlock::TaskQueue) {
    loop {
        match q.claim(ClaimOptions { timeout: Some(Duration::ZERO), ..Default::default() }).await {
            Ok(t) => {
                t.ack().await.expect("ack");
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) => panic!("drain: {e}"),
        }
    }
}
