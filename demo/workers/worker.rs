//! The Rust demo worker: loops acquire → guarded increment → work → release on one lock, and
//! reports each step as a JSON line on stdout for `demo/run.py`. Built as an example of the bench
//! crate (`cargo build --release -p etcdlock-bench --example demo_worker`), which already depends
//! on etcdlock and tokio; it lives here, next to the other languages' workers.
//!
//! Environment: ETCDLOCK_ENDPOINTS, DEMO_LOCK, DEMO_COUNTER, DEMO_TTL, DEMO_WORK_MS,
//! DEMO_UNTIL_NS (CLOCK_MONOTONIC deadline); with `https://` endpoints (`demo.sh --tls`) also
//! DEMO_TLS_CA, DEMO_TLS_CERT, DEMO_TLS_KEY (PEM file paths: the CA and the client certificate).
//! DEMO_BREAK=stale is for the soak's positive control only (tests/history/soak.py): the worker
//! then also writes the counter without the lock after each release, which the history checker
//! must catch.
//!
//! DEMO_MODE=election or DEMO_MODE=semaphore runs the demo's second phase instead (see
//! `demo/coordination.py`): campaign in DEMO_ELECTION proposing DEMO_LABEL and, while leading,
//! proclaim and make fenced writes to DEMO_TERM_KEY every DEMO_WRITE_MS; or loop acquire → hold
//! DEMO_HOLD_MS → release on the semaphore DEMO_SEMAPHORE with DEMO_PERMITS permits. Both stop at
//! DEMO_UNTIL_NS. With DEMO_SERVICE set, the mutex worker registers itself there as DEMO_LABEL
//! while it runs.
//!
//! DEMO_MODE=tasks runs the demo's third phase (see `demo/tasks.py`): loop claim from the queue
//! DEMO_QUEUE (DEMO_CLAIM_MS at most) → work DEMO_WORK_MS → ack with the result
//! DEMO_RESULTS<id> = "<token>:DEMO_LABEL" in the ack's own transaction (`Task::ack_with`), until
//! DEMO_UNTIL_NS has passed and the queue is empty.

use etcdlock::{ClientOptions, Pem, TlsOptions};
use std::time::Duration;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// CLOCK_MONOTONIC in nanoseconds: the clock every demo worker reports in, whatever its language.
fn mono_ns() -> u64 {
    const CLOCK_MONOTONIC: i32 = 1; // Linux
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec we pass.
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn emit(fields: &str) {
    println!("{{\"t\":{},{fields}}}", mono_ns());
}

/// The CA and client certificate from DEMO_TLS_*, when the demo runs with `--tls`.
fn tls() -> Option<TlsOptions> {
    let file = |name: &str| std::env::var_os(name).map(|p| Pem::File(p.into()));
    let ca = file("DEMO_TLS_CA")?;
    Some(TlsOptions { ca: Some(ca), cert: file("DEMO_TLS_CERT"), key: file("DEMO_TLS_KEY"), server_name: None })
}

/// The counter's value, 0 when it is missing or unreadable.
async fn read_counter(client: &etcdlock::Client, counter: &str) -> u64 {
    match client.get(counter.as_bytes()).await {
        Ok(Some(kv)) => String::from_utf8_lossy(&kv.value).parse().unwrap_or(0),
        _ => 0,
    }
}

#[tokio::main]
async fn main() {
    let endpoints: Vec<String> = env("ETCDLOCK_ENDPOINTS").split(',').map(str::to_string).collect();
    let (lock, counter) = (env("DEMO_LOCK"), env("DEMO_COUNTER"));
    let ttl: i64 = env("DEMO_TTL").parse().unwrap();
    let work = Duration::from_millis(env("DEMO_WORK_MS").parse().unwrap());
    let until: u64 = env("DEMO_UNTIL_NS").parse().unwrap();
    let stale = std::env::var("DEMO_BREAK").is_ok_and(|v| v == "stale");

    let opts = ClientOptions { tls: tls(), ..Default::default() };
    let client = etcdlock::Client::connect(&endpoints, opts).await.expect("connect");
    match std::env::var("DEMO_MODE").as_deref() {
        Ok("election") => return coordination::election(client, ttl, until).await,
        Ok("semaphore") => return coordination::semaphore(client, ttl, until).await,
        Ok("tasks") => return tasks::work(client, ttl, until).await,
        _ => {}
    }
    let mutex = client.mutex(lock, ttl).expect("mutex");
    let registration = register(&client, ttl).await;
    emit("\"ev\":\"ready\"");
    while mono_ns() < until {
        emit("\"ev\":\"waiting\"");
        let value = format!("rust pid {}", std::process::id()).into_bytes();
        let guard = match mutex.lock_with(etcdlock::LockOptions { value, ..Default::default() }).await {
            Ok(g) => g,
            Err(e) => {
                emit(&format!("\"ev\":\"error\",\"error\":{:?}", e.to_string()));
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let token = guard.fencing_token();
        emit(&format!("\"ev\":\"acquired\",\"token\":{token},\"key\":{:?}", String::from_utf8_lossy(guard.key())));
        let lost = guard.lost();
        let watcher = tokio::spawn(async move {
            let reason = lost.wait().await;
            emit(&format!("\"ev\":\"lost\",\"token\":{token},\"reason\":\"{reason}\""));
        });
        tokio::time::sleep(work).await;
        // Read, then write only if still holding: a holder that lost the lock writes nothing.
        let current = read_counter(&client, &counter).await;
        match guard.put(counter.as_bytes(), (current + 1).to_string().as_bytes()).await {
            Ok(_) => emit(&format!("\"ev\":\"wrote\",\"token\":{token},\"value\":{}", current + 1)),
            Err(e) => emit(&format!("\"ev\":\"write_refused\",\"token\":{token},\"error\":\"{}\",\"message\":{:?}", e.kind().code(), e.message())),
        }
        emit(&format!("\"ev\":\"releasing\",\"token\":{token}"));
        match guard.release().await {
            Ok(()) => emit(&format!("\"ev\":\"released\",\"token\":{token}")),
            Err(e) => emit(&format!("\"ev\":\"release_failed\",\"token\":{token},\"error\":\"{}\"", e.kind().code())),
        }
        watcher.abort();
        if stale {
            // BROKEN on purpose (DEMO_BREAK=stale): a write without the lock.
            let current = read_counter(&client, &counter).await;
            if client.put(counter.as_bytes(), (current + 1).to_string().as_bytes(), None).await.is_ok() {
                emit(&format!("\"ev\":\"wrote\",\"token\":{token},\"value\":{}", current + 1));
            }
        }
    }
    if let Some(r) = registration {
        let _ = r.close().await;
    }
    // Debug-formatting escapes the text's quotes and newlines as JSON does (it is ASCII).
    emit(&format!("\"ev\":\"metrics\",\"text\":{:?}", client.metrics().prometheus_text()));
    client.close().await;
    emit("\"ev\":\"done\"");
}

/// Registers this worker in DEMO_SERVICE (if set) as DEMO_LABEL, reporting losses.
async fn register(client: &etcdlock::Client, ttl: i64) -> Option<etcdlock::Registration> {
    let service = std::env::var("DEMO_SERVICE").ok()?;
    let value = format!("rust pid {}", std::process::id());
    let reg = client.register(service, env("DEMO_LABEL"), value, ttl).await.expect("register");
    let mut events = reg.events();
    tokio::spawn(async move {
        while let Some(e) = events.next().await {
            match e {
                etcdlock::RegistrationEvent::Lost(reason) => emit(&format!("\"ev\":\"unregistered\",\"reason\":\"{reason}\"")),
                etcdlock::RegistrationEvent::Restored { lease } => emit(&format!("\"ev\":\"registered_again\",\"lease\":{lease}")),
                etcdlock::RegistrationEvent::TakenOver => emit("\"ev\":\"unregistered\",\"reason\":\"taken_over\""),
            }
        }
    });
    Some(reg)
}

/// The demo's second phase: an election and a semaphore (DEMO_MODE).
mod coordination {
    use super::{emit, env, mono_ns};
    use etcdlock::LockOptions;
    use std::time::Duration;

    /// Time left before `until`, None once it passed.
    fn left(until: u64) -> Option<Duration> {
        let now = mono_ns();
        (now < until).then(|| Duration::from_nanos(until - now))
    }

    pub async fn election(client: etcdlock::Client, ttl: i64, until: u64) {
        let (name, term_key, label) = (env("DEMO_ELECTION"), env("DEMO_TERM_KEY"), env("DEMO_LABEL"));
        let every = Duration::from_millis(env("DEMO_WRITE_MS").parse().unwrap());
        let election = client.election(name, ttl).expect("election");
        emit("\"ev\":\"ready\"");
        while let Some(timeout) = left(until) {
            emit("\"ev\":\"campaigning\"");
            let opts = LockOptions { timeout: Some(timeout), value: label.clone().into_bytes(), ..Default::default() };
            let leadership = match election.campaign_with(opts).await {
                Ok(l) => l,
                Err(e) => {
                    emit(&format!("\"ev\":\"campaign_ended\",\"error\":\"{}\"", e.kind().code()));
                    if left(until).is_some() {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    continue;
                }
            };
            let token = leadership.fencing_token();
            emit(&format!("\"ev\":\"leading\",\"token\":{token},\"key\":{:?}", String::from_utf8_lossy(leadership.key())));
            let lost = leadership.lost();
            let watcher = tokio::spawn(async move {
                let reason = lost.wait().await;
                emit(&format!("\"ev\":\"lost\",\"token\":{token},\"reason\":\"{reason}\""));
            });
            match leadership.proclaim(format!("{label} leads")).await {
                Ok(rev) => emit(&format!("\"ev\":\"proclaimed\",\"token\":{token},\"rev\":{rev}")),
                Err(e) => emit(&format!("\"ev\":\"proclaim_refused\",\"token\":{token},\"error\":\"{}\"", e.kind().code())),
            }
            let mut seq = 0u64;
            while left(until).is_some() && leadership.is_leader() {
                seq += 1;
                let value = format!("{label} token {token} write {seq}");
                match leadership.put(term_key.as_bytes(), value.as_bytes()).await {
                    Ok(rev) => emit(&format!("\"ev\":\"term_write\",\"token\":{token},\"seq\":{seq},\"rev\":{rev}")),
                    Err(e) => emit(&format!("\"ev\":\"term_refused\",\"token\":{token},\"seq\":{seq},\"error\":\"{}\"", e.kind().code())),
                }
                tokio::time::sleep(every).await;
            }
            match leadership.resign().await {
                Ok(()) => emit(&format!("\"ev\":\"resigned\",\"token\":{token}")),
                Err(e) => emit(&format!("\"ev\":\"resign_failed\",\"token\":{token},\"error\":\"{}\"", e.kind().code())),
            }
            watcher.abort();
        }
        client.close().await;
        emit("\"ev\":\"done\"");
    }

    pub async fn semaphore(client: etcdlock::Client, ttl: i64, until: u64) {
        let name = env("DEMO_SEMAPHORE");
        let permits: u32 = env("DEMO_PERMITS").parse().unwrap();
        let hold = Duration::from_millis(env("DEMO_HOLD_MS").parse().unwrap());
        let slots = client.semaphore(name, permits, ttl).expect("semaphore");
        emit("\"ev\":\"ready\"");
        while let Some(timeout) = left(until) {
            emit("\"ev\":\"waiting\"");
            let guard = match slots.acquire_with(LockOptions { timeout: Some(timeout), ..Default::default() }).await {
                Ok(g) => g,
                Err(e) => {
                    emit(&format!("\"ev\":\"error\",\"error\":\"{}\"", e.kind().code()));
                    if left(until).is_some() {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    continue;
                }
            };
            let token = guard.fencing_token();
            emit(&format!("\"ev\":\"acquired\",\"token\":{token},\"key\":{:?}", String::from_utf8_lossy(guard.key())));
            tokio::time::sleep(hold).await;
            emit(&format!("\"ev\":\"releasing\",\"token\":{token}"));
            match guard.release().await {
                Ok(()) => emit(&format!("\"ev\":\"released\",\"token\":{token}")),
                Err(e) => emit(&format!("\"ev\":\"release_failed\",\"token\":{token},\"error\":\"{}\"", e.kind().code())),
            }
        }
        client.close().await;
        emit("\"ev\":\"done\"");
    }
}

/// The demo's third phase: a task-queue worker (DEMO_MODE=tasks).
mod tasks {
    use super::{emit, env, mono_ns};
    use etcdlock::{ClaimOptions, ErrorKind, Op, QueueOptions};
    use std::time::Duration;

    pub async fn work(client: etcdlock::Client, ttl: i64, until: u64) {
        let (label, results) = (env("DEMO_LABEL"), env("DEMO_RESULTS"));
        let work = Duration::from_millis(env("DEMO_WORK_MS").parse().unwrap());
        let wait = Duration::from_millis(env("DEMO_CLAIM_MS").parse().unwrap());
        let opts = QueueOptions { ttl_secs: ttl, max_attempts: env("DEMO_MAX_ATTEMPTS").parse().unwrap(), max_processing: None };
        let q = client.queue(env("DEMO_QUEUE"), opts).expect("queue");
        emit("\"ev\":\"ready\"");
        loop {
            let claim = ClaimOptions { timeout: Some(wait), worker: label.clone().into_bytes(), ..Default::default() };
            let task = match q.claim(claim).await {
                Ok(t) => t,
                Err(e) if e.kind() == ErrorKind::LockTimeout => {
                    if mono_ns() >= until {
                        match q.stats().await {
                            Ok(s) if s.pending + s.delayed + s.claimed == 0 => break,
                            _ => {}
                        }
                    }
                    continue;
                }
                Err(e) => {
                    emit(&format!("\"ev\":\"error\",\"error\":{:?}", format!("claim {}: {}", e.kind().code(), e.message())));
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            let (id, token) = (task.id().to_string(), task.fencing_token());
            emit(&format!("\"ev\":\"claimed\",\"id\":{id:?},\"token\":{token},\"attempts\":{}", task.attempts()));
            tokio::time::sleep(work).await;
            // The result and the ack in one transaction, only while the claim holds.
            let result = Op::put(format!("{results}{id}"), format!("{token}:{label}"));
            match task.ack_with(&[result]).await {
                Ok(rev) => emit(&format!("\"ev\":\"acked\",\"id\":{id:?},\"token\":{token},\"rev\":{rev}")),
                Err(e) if e.kind() == ErrorKind::NotHeld => {
                    emit(&format!("\"ev\":\"refused\",\"id\":{id:?},\"token\":{token},\"stage\":\"ack\",\"error\":\"NOT_HELD\""))
                }
                // A timeout: the ack may or may not have been committed.
                Err(e) => emit(&format!(
                    "\"ev\":\"ack_unknown\",\"id\":{id:?},\"token\":{token},\"error\":{:?}",
                    format!("{}: {}", e.kind().code(), e.message())
                )),
            }
        }
        client.close().await;
        emit("\"ev\":\"done\"");
    }
}
