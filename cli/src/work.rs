//! `etcdlock queue work NAME -- CMD`: claim tasks one at a time and run CMD for each under its
//! claim, as `etcdlock run` runs its command under the lock (the same process group, guardian
//! and loss rules). CMD's exit status 0 acks the task, any other nacks it.

use crate::args::Work;
use crate::exit::{Exit, LOST, USAGE};
use crate::hold::{self, Ran, Spawn};
use crate::signals::Signals;
use crate::{child, connect, value};
use etcdlock::{CancellationToken, ClaimOptions, ErrorKind, LostReason, QueueOptions, Task, TaskQueue};
use std::time::{Duration, Instant};

pub async fn main(args: Work, signals: &mut Signals) -> Exit {
    if args.cmd.is_empty() || args.cmd[0].is_empty() {
        return Exit::fail(USAGE, "no command given after --");
    }
    if let Err(e) = etcdlock::check_lock_name(args.name.as_bytes()).and_then(|()| etcdlock::check_ttl(args.hold.ttl)) {
        return e.into();
    }
    let client = match connect::connect(&args.conn).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let exit = match client.queue(args.name.as_str(), QueueOptions { ttl_secs: args.hold.ttl, max_attempts: args.max_attempts, ..Default::default() }) {
        Ok(q) => work(&q, &args, signals).await,
        Err(e) => e.into(),
    };
    // Revokes the lease: no claim or waiting worker of this process is left in etcd.
    client.close().await;
    exit
}

/// Task after task until the timeout passes with none, a signal, a command that cannot run, or
/// (with --once) the first task's end.
async fn work(q: &TaskQueue, args: &Work, signals: &mut Signals) -> Exit {
    loop {
        let task = match claim(q, args, signals).await {
            Ok(Some(t)) => t,
            Ok(None) if args.once => {
                return Exit::fail(1, format!("no task in {:?} within {}s", args.name, args.timeout.unwrap_or_default().as_secs_f64()))
            }
            Ok(None) => return Exit::ok(0),
            Err(e) => return e,
        };
        let (exit, go_on) = handle(task, args, signals).await;
        if args.once || !go_on {
            return exit;
        }
        if let Some(message) = &exit.message {
            eprintln!("etcdlock: {message}");
        }
    }
}

/// A claim waits at most this long before it asks again, so that the time its worker value
/// records (for `etcdlock status`) is never more than this before the claim.
const ASK_AGAIN: Duration = Duration::from_secs(30);

/// The next task; `None` when --timeout passed with none. A signal cancels the wait (nothing
/// is left in etcd) and exits 128 + it.
async fn claim(q: &TaskQueue, args: &Work, signals: &mut Signals) -> Result<Option<Task>, Exit> {
    let deadline = args.timeout.map(|t| Instant::now() + t);
    loop {
        let wait = deadline.map_or(ASK_AGAIN, |d| d.saturating_duration_since(Instant::now()).min(ASK_AGAIN));
        let cancel = CancellationToken::new();
        let claiming = q.claim(ClaimOptions { timeout: Some(wait), cancel: Some(cancel.clone()), worker: value::worker() });
        tokio::pin!(claiming);
        let mut caught = None;
        let result = loop {
            tokio::select! {
                r = &mut claiming => break r,
                sig = signals.next() => {
                    caught.get_or_insert(sig);
                    cancel.cancel();
                }
            }
        };
        match (result, caught) {
            (Ok(task), None) => return Ok(Some(task)),
            (Ok(task), Some(sig)) => {
                let _ = task.nack().await;
                return Err(Exit::signal(sig));
            }
            (Err(_), Some(sig)) => return Err(Exit::signal(sig)),
            (Err(e), None) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::LockTimeout) => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(None);
                }
            }
            (Err(e), None) => return Err(e.into()),
        }
    }
}

/// Runs CMD for `task`, then acks or nacks it. The exit to report, and whether to go on with
/// the next task.
async fn handle(task: Task, args: &Work, signals: &mut Signals) -> (Exit, bool) {
    let what = format!("task {:?} of {:?} (attempt {} of {})", task.id(), args.name, task.attempts(), args.max_attempts);
    let spawn = Spawn {
        cmd: &args.cmd,
        shell: args.hold.shell,
        env: env(&args.name, &task, &args.conn.endpoints),
        stdin: Some(task.payload()),
        grace: Duration::from_secs_f64(args.hold.kill_grace),
    };
        let ran = hold::supervise(&task, &spawn, signals).await;
    match ran {
        Ran::NotStarted(why) => {
            let _ = task.nack().await;
            (Exit::fail(LOST, format!("lost the claim on {what} before the command started ({why}); it did not run")), true)
        }
        // A command that cannot run would send every task to the dead letters: stop here.
        Ran::Failed(e) => {
            let _ = task.nack().await;
            (e, false)
        }
        // Interrupted: the task goes back whatever the command did, and no other is claimed.
        Ran::Exited { signal: Some(sig), .. } | Ran::Lost { signal: Some(sig), .. } => {
            let _ = task.nack().await;
            (Exit::signal(sig), false)
        }
        Ran::Lost { reason, .. } => {
            let _ = task.nack().await;
            (lost(&what, reason), true)
        }
        Ran::Exited { status, signal: None } => {
            let exit = child::exit_of(status);
            if exit.code == 0 {
                return match task.ack().await {
                    Ok(_) => (exit, true),
                    Err(e) if e.kind() == ErrorKind::NotHeld => {
                        (Exit::fail(LOST, format!("the command succeeded, but the claim on {what} was lost before the ack ({e}): it will be delivered again")), true)
                    }
                    Err(e) => {
                        let message = format!("acking {what}: {e}");
                        (Exit::fail(Exit::from(e).code, message), true)
                    }
                };
            }
            let after = match task.nack().await {
                Ok(()) if task.attempts() >= args.max_attempts => "moved to the dead letters".to_string(),
                Ok(()) => "given back".to_string(),
                Err(e) => format!("not given back ({e}): it will be delivered again once its claim ends"),
            };
            (Exit::fail(exit.code, format!("{what}: the command exited with status {}; {after}", exit.code)), true)
        }
    }
}

fn lost(what: &str, reason: LostReason) -> Exit {
    Exit::fail(
        LOST,
        format!(
            "lost the claim on {what} while the command ran ({reason}: {}); the command's process group was stopped, and the task will be delivered again",
            hold::describe(reason)
        ),
    )
}

/// What the command is told about its task.
fn env(name: &str, task: &Task, endpoints: &[String]) -> Vec<(String, String)> {
    vec![
        ("ETCDLOCK_QUEUE".into(), name.into()),
        ("ETCDLOCK_TASK_ID".into(), task.id().into()),
        ("ETCDLOCK_TASK_ATTEMPT".into(), task.attempts().to_string()),
        ("ETCDLOCK_TASK_PRIORITY".into(), task.priority().to_string()),
        ("ETCDLOCK_FENCING_TOKEN".into(), task.fencing_token().to_string()),
        ("ETCDLOCK_ENDPOINTS".into(), endpoints.join(",")),
    ]
}
