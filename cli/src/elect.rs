//! `etcdlock elect NAME PROPOSAL [-- CMD]` and `etcdlock elect --observe NAME`.

use crate::args::Elect;
use crate::exit::Exit;
use crate::signals::Signals;
use crate::{connect, health, hold};
use etcdlock::{CancellationToken, Client, LockOptions};
use std::sync::Arc;
use std::time::Duration;

pub async fn main(args: Elect, signals: &mut Signals) -> Exit {
    // Checked here: clap counts --observe's default (false) as given.
    if args.json && !args.observe {
        return Exit::fail(crate::exit::USAGE, "--json is for --observe");
    }
    if args.observe && args.health_addr.is_some() {
        return Exit::fail(crate::exit::USAGE, "--health-addr is for a candidate: an observer neither holds nor leads");
    }
    if let Err(e) = health::start(args.health_addr).await {
        return e;
    }
    let client = match connect::connect(&args.conn).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    health::connected(&client);
    let exit = match args.observe {
        true => observe(&client, &args, signals).await,
        false => lead(&client, &args, signals).await,
    };
    client.close().await;
    exit
}

/// One line per leader change, starting with the current one: the leader's value, or `-` when
/// nobody leads (with --json, an object, see [`json`]). Until a signal (128 + it) or an error.
async fn observe(client: &Client, args: &Elect, signals: &mut Signals) -> Exit {
    let mut observer = match client.election(args.name.as_str(), args.hold.ttl) {
        Ok(e) => e.observe(),
        Err(e) => return e.into(),
    };
    loop {
        tokio::select! {
            next = observer.next() => match next {
                Ok(leader) if args.json => println!("{}", json(&args.name, leader.as_ref())),
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
        Ok(g) => Arc::new(g),
        Err(e) => return e,
    };
    health::holding(&guard);
    if !args.cmd.is_empty() {
        return hold::run(guard, &args.name, &args.cmd, &args.hold, &args.conn.endpoints, signals).await;
    }
    // As `etcdctl elect` prints on winning: the key, then the proposal.
    println!("{}\n{proposal}", String::from_utf8_lossy(guard.key()));
    let lost = guard.lost();
    tokio::select! {
        reason = lost.wait() => Exit::fail(crate::exit::LOST, format!("lost the leadership of {:?} ({reason})", args.name)),
        _ = signals.next() => {
            // Not the active one from the moment it resigns.
            health::ended();
            match guard.release().await {
                Ok(()) => Exit::ok(0),
                Err(e) => e.into(),
            }
        }
    }
}

/// `--observe --json`: one object per leader change, the same keys whether or not one leads.
fn json(name: &str, leader: Option<&etcdlock::Leader>) -> String {
    use crate::status::string;
    match leader {
        Some(l) => format!(
            r#"{{"name":{},"leader":true,"value":{},"key":{},"fencing_token":{},"lease":"{:x}"}}"#,
            string(name.as_bytes()),
            string(&l.value),
            string(&l.key),
            l.revision,
            l.lease
        ),
        None => format!(r#"{{"name":{},"leader":false,"value":null,"key":null,"fencing_token":null,"lease":null}}"#, string(name.as_bytes())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observe_json_has_the_same_keys_with_and_without_a_leader() {
        let l = etcdlock::Leader { value: b"node \"1\"".to_vec(), key: b"svc/694d".to_vec(), revision: 42, lease: 0x694d };
        assert_eq!(json("svc", Some(&l)), r#"{"name":"svc","leader":true,"value":"node \"1\"","key":"svc/694d","fencing_token":42,"lease":"694d"}"#);
        assert_eq!(json("svc", None), r#"{"name":"svc","leader":false,"value":null,"key":null,"fencing_token":null,"lease":null}"#);
    }
}
