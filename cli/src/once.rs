//! `etcdlock run --once-per DURATION NAME -- CMD`: run CMD at most once per period across every
//! host that triggers it. The period's slot is claimed on this process's lease (the core's
//! `Client::once`); CMD runs under it as under a lock (`hold::supervise`: its group is stopped
//! before the slot could go to another trigger); exit 0 marks the period done, anything else
//! releases the slot for the next trigger in the period.

use crate::args::Run;
use crate::exit::{Exit, LOST};
use crate::hold::{self, Ran, Spawn};
use crate::signals::Signals;
use crate::child;
use etcdlock::{Client, OnceOptions, OnceSlot};
use std::time::Duration;

pub async fn run(client: &Client, args: &Run, every: Duration, signals: &mut Signals) -> Exit {
    let opts = OnceOptions { every, ttl_secs: args.hold.ttl, ..OnceOptions::every(every) };
    let slot = match client.once(args.name.as_str(), opts).await {
        Ok(Some(slot)) => std::sync::Arc::new(slot),
        Ok(None) => {
            eprintln!("etcdlock: {:?}: this period's run is done or under way elsewhere; not running the command", args.name);
            return Exit::ok(args.conflict_exit_code.unwrap_or(0));
        }
        Err(e) => return e.into(),
    };
    let spawn = Spawn {
        cmd: &args.cmd,
        shell: args.hold.shell,
        env: env(&args.name, &slot, &args.conn.endpoints),
        stdin: None,
        grace: Duration::from_secs_f64(args.hold.kill_grace),
    };
    crate::health::holding(&slot);
    match hold::supervise(&*slot, &spawn, signals).await {
        Ran::NotStarted(why) => {
            let _ = slot.release().await;
            hold::lost_before_start(&args.name, why)
        }
        Ran::Failed(e) => {
            let _ = slot.release().await;
            e
        }
        Ran::Exited { status, signal } => {
            let ok = signal.is_none() && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            let ended = if ok { slot.done().await } else { slot.release().await };
            match ended {
                Err(e) if e.kind() == etcdlock::ErrorKind::NotHeld => {
                    Exit::fail(LOST, format!("lost {:?} before the period could be marked done ({}); another trigger may run it", args.name, e.message()))
                }
                _ => child::exit_of(status),
            }
        }
        Ran::Lost { reason, .. } => {
            let _ = slot.release().await;
            Exit::fail(LOST, format!("lost {:?} while the command ran ({reason}: {}); the command's process group was stopped", args.name, hold::describe(reason)))
        }
    }
}

/// What the command is told about the slot it runs in.
fn env(name: &str, slot: &OnceSlot, endpoints: &[String]) -> Vec<(String, String)> {
    vec![
        ("ETCDLOCK_NAME".into(), name.into()),
        ("ETCDLOCK_PERIOD_SLOT".into(), slot.slot().to_string()),
        ("ETCDLOCK_FENCING_TOKEN".into(), slot.fencing_token().to_string()),
        ("ETCDLOCK_ENDPOINTS".into(), endpoints.join(",")),
    ]
}
