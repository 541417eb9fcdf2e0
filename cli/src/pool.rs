//! `etcdlock run --pool NAME -- CMD`: take `--count` slots of the pool NAME (FIFO, a dead
//! holder's slot resting `--reuse-delay` first), run CMD with their ids in its environment as
//! under a lock (`hold::supervise`: its group is stopped before the slots could go to anyone
//! else), give them back when it exits.

use crate::args::Run;
use crate::child;
use crate::exit::Exit;
use crate::hold::{self, Ran, Spawn};
use crate::signals::Signals;
use etcdlock::{CancellationToken, Client, ErrorKind, PoolAcquire, PoolGuard, PoolOptions};
use std::time::Duration;

pub async fn run(client: &Client, args: &Run, signals: &mut Signals) -> Exit {
    let pool = match pool(client, args) {
        Ok(p) => p,
        Err(e) => return e.into(),
    };
    let cancel = CancellationToken::new();
    let opts = PoolAcquire {
        count: args.count.unwrap_or(1) as usize,
        owner: Some(String::from_utf8_lossy(&crate::value::worker()).into_owned()),
        timeout: args.timeout.map(Duration::from_secs_f64),
        cancel: Some(cancel.clone()),
    };
    let held = match hold::acquire(pool.acquire_with(opts), &cancel, signals, &args.name, args.conflict_exit_code.unwrap_or(1)).await {
        Ok(h) => std::sync::Arc::new(h),
        Err(e) => return e,
    };
    crate::health::holding(&held);
    let spawn = Spawn { cmd: &args.cmd, shell: args.hold.shell, env: env(&args.name, &held, &args.conn.endpoints), stdin: None, grace: Duration::from_secs_f64(args.hold.kill_grace) };
    let ran = hold::supervise(&*held, &spawn, signals).await;
    let released = held.release().await;
    match ran {
        Ran::NotStarted(why) => hold::lost_before_start(&args.name, why),
        Ran::Failed(e) => e,
        Ran::Exited { status, .. } => match released {
            Err(e) if e.kind() == ErrorKind::NotHeld => hold::lost_exit(&args.name, e.message()),
            _ => child::exit_of(status),
        },
        Ran::Lost { reason, .. } => hold::lost_exit(&args.name, &format!("{reason}: {}", hold::describe(reason))),
    }
}

/// The pool as the flags define it, or as it is defined in etcd.
fn pool(client: &Client, args: &Run) -> etcdlock::Result<etcdlock::Pool> {
    let slots = match (&args.slots, args.size) {
        (Some(ids), _) => ids.clone(),
        (None, Some(n)) => PoolOptions::size(n).slots,
        (None, None) => return client.join_pool(args.name.as_str(), args.hold.ttl),
    };
    let opts = PoolOptions { slots, ttl_secs: args.hold.ttl, reuse_delay: args.reuse_delay.unwrap_or_default() };
    client.pool(args.name.as_str(), opts)
}

/// What the command is told about the slots it runs with.
fn env(name: &str, held: &PoolGuard, endpoints: &[String]) -> Vec<(String, String)> {
    let slots = held.slots();
    let tokens: Vec<String> = held.tokens().iter().map(|(_, t)| t.to_string()).collect();
    vec![
        ("ETCDLOCK_NAME".into(), name.into()),
        ("ETCDLOCK_SLOTS".into(), slots.join(",")),
        ("ETCDLOCK_SLOT".into(), slots[0].into()),
        ("ETCDLOCK_SLOT_TOKENS".into(), tokens.join(",")),
        ("ETCDLOCK_FENCING_TOKEN".into(), held.fencing_token().to_string()),
        ("ETCDLOCK_LEASE".into(), format!("{:x}", held.lease_id())),
        ("ETCDLOCK_ENDPOINTS".into(), endpoints.join(",")),
    ]
}
