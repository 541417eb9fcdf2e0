//! `etcdlock elect NAME PROPOSAL [-- CMD]` and `etcdlock elect --observe NAME`.

use crate::args::Elect;
use crate::exit::Exit;
use crate::signals::Signals;
use crate::{connect, hold};
use etcdlock::{CancellationToken, Client, LockOptions};
use std::time::Duration;

pub async fn main(args: Elect, signals: &mut Signals) -> Exit {
    let client = match connect::connect(&args.conn).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let exit = match args.observe {
        true => observe(&client, &args, signals).await,
        false => lead(&client, &args, signals).await,
    };
    client.close().await;
    exit
}

/// One line per leader change, starting with the current one: the leader's value, or `-` when
/// nobody leads. Until a signal (128 + it) or an error.
async fn observe(client: &Client, args: &Elect, signals: &mut Signals) -> Exit {
    let mut observer = match client.election(args.name.as_str(), args.hold.ttl) {
        Ok(e) => e.observe(),
        Err(e) => return e.into(),
    };
    loop {
        tokio::select! {
            next = observer.next() => match next {
                Ok(Some(leader)) => println!("{}", String::from_utf8_lossy(&leader.value)),
                Ok(None) => println!("-"),
                Err(e) => return e.into(),
            },
            sig = signals.next() => return Exit::signal(sig),
        }
    }
}

async fn lead(client: &Client, args: &Elect, signals: &mut Signals) -> Exit {
    let proposal = args.proposal.clone().unwrap_or_default();
    let election = match client.election(args.name.as_str(), args.hold.ttl) {
        Ok(e) => e,
        Err(e) => return e.into(),
    };
    let cancel = CancellationToken::new();
    let opts = LockOptions { timeout: args.timeout.map(Duration::from_secs_f64), cancel: Some(cancel.clone()), value: proposal.clone().into_bytes() };
    let campaign = async { election.campaign_with(opts).await.map(|l| l.into_guard()) };
    let guard = match hold::acquire(campaign, &cancel, signals, &args.name, args.conflict_exit_code).await {
        Ok(g) => g,
        Err(e) => return e,
    };
    if !args.cmd.is_empty() {
        return hold::run(guard, &args.name, &args.cmd, &args.hold, &args.conn.endpoints, signals).await;
    }
    // As `etcdctl elect` prints on winning: the key, then the proposal.
    println!("{}\n{proposal}", String::from_utf8_lossy(guard.key()));
    let lost = guard.lost();
    tokio::select! {
        reason = lost.wait() => Exit::fail(crate::exit::LOST, format!("lost the leadership of {:?} ({reason})", args.name)),
        _ = signals.next() => match guard.release().await {
            Ok(()) => Exit::ok(0),
            Err(e) => e.into(),
        },
    }
}
