//! `etcdlock run NAME -- CMD`: wait for the lock (or a semaphore permit), run the command
//! under it, release when it exits. With `--once-per`, see `once.rs`; with `--pool`, `pool.rs`.

use crate::args::Run;
use crate::exit::{Exit, USAGE};
use crate::signals::Signals;
use crate::{connect, health, hold, value};
use etcdlock::{CancellationToken, Client, LockGuard, LockOptions};
use std::sync::Arc;
use std::time::Duration;

pub async fn main(args: Run, signals: &mut Signals) -> Exit {
    if args.cmd.is_empty() || args.cmd[0].is_empty() {
        return Exit::fail(USAGE, "no command given after --");
    }
    if args.count.is_some() && args.permits.is_none() && !args.pool {
        return Exit::fail(USAGE, "--count needs --permits or --pool");
    }
    if let Err(e) = health::start(args.health_addr).await {
        return e;
    }
    let client = match connect::connect(&args.conn).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    health::connected(&client);
    let exit = match args.once_per {
        Some(every) => crate::once::run(&client, &args, every, signals).await,
        None if args.pool => crate::pool::run(&client, &args, signals).await,
        None => run(&client, &args, signals).await,
    };
    // Revokes the lease: nothing of this run is left in etcd.
    client.close().await;
    exit
}

async fn run(client: &Client, args: &Run, signals: &mut Signals) -> Exit {
    let queued = value::queued();
    let guard = match acquire(client, args, queued.clone(), signals).await {
        Ok(g) => Arc::new(g),
        Err(e) => return e,
    };
    health::holding(&guard);
    // Who holds and since when, for `etcdlock status`. Fenced: NotHeld means the key is gone,
    // and the command must not start.
    if let Err(e) = guard.set_value(&value::held(&queued)).await {
        if e.kind() == etcdlock::ErrorKind::NotHeld {
            let _ = guard.release().await;
            return hold::lost_before_start(&args.name, e.message());
        }
    }
    hold::run(guard, &args.name, &args.cmd, &args.hold, &args.conn.endpoints, signals).await
}

/// The lock or a permit, leaving the queue on a signal.
async fn acquire(client: &Client, args: &Run, value: Vec<u8>, signals: &mut Signals) -> Result<LockGuard, Exit> {
    let cancel = CancellationToken::new();
    let opts = LockOptions {
        timeout: args.timeout.map(Duration::from_secs_f64),
        cancel: Some(cancel.clone()),
        value,
    };
    let acquiring = async {
        match args.permits {
            Some(n) => client.semaphore(args.name.as_str(), n, args.hold.ttl)?.with_count(args.count.unwrap_or(1))?.acquire_with(opts).await,
            None => client.mutex(args.name.as_str(), args.hold.ttl)?.lock_with(opts).await,
        }
    };
    hold::acquire(acquiring, &cancel, signals, &args.name, args.conflict_exit_code.unwrap_or(1)).await
}
