//! Running the command while a lock (a permit, a leadership, a task's claim) is held: what
//! `run`, `elect` and `queue work` share. The command is stopped before anyone else can get the
//! lock once it is lost, and the lock is released only when nothing of the command is left.

use crate::args::Hold;
use crate::child::{self, Child};
use crate::exit::{Exit, LOST};
use crate::signals::Signals;
use etcdlock::{CancellationToken, ErrorKind, LockGuard, LostReason, LostSignal};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// What the command is told about the lock it runs under.
pub fn env(name: &str, guard: &LockGuard, endpoints: &[String]) -> Vec<(String, String)> {
    let key = String::from_utf8_lossy(guard.key()).into_owned();
    let token = guard.fencing_token().to_string();
    vec![
        ("ETCDLOCK_NAME".into(), name.into()),
        ("ETCDLOCK_KEY".into(), key.clone()),
        ("ETCDLOCK_FENCING_TOKEN".into(), token.clone()),
        ("ETCDLOCK_LEASE".into(), format!("{:x}", guard.lease_id())),
        ("ETCDLOCK_ENDPOINTS".into(), endpoints.join(",")),
        // What `etcdctl lock NAME CMD` sets; REV is the key's create revision here.
        ("ETCD_LOCK_KEY".into(), key),
        ("ETCD_LOCK_REV".into(), token),
    ]
}

/// Awaits `acquiring` (whose options carry `cancel`). A signal cancels it: the acquire leaves
/// the queue (its key is deleted before it returns) and the exit is 128 + the signal. A busy
/// lock or a timeout exits with `conflict`.
pub async fn acquire<G: Release>(
    acquiring: impl Future<Output = etcdlock::Result<G>>,
    cancel: &CancellationToken,
    signals: &mut Signals,
    name: &str,
    conflict: u8,
) -> Result<G, Exit> {
    tokio::pin!(acquiring);
    let mut caught = None;
    let result = loop {
        tokio::select! {
            r = &mut acquiring => break r,
            sig = signals.next() => {
                caught.get_or_insert(sig);
                cancel.cancel();
            }
        }
    };
    match (result, caught) {
        (Ok(g), None) => Ok(g),
        (Ok(g), Some(sig)) => {
            let _ = g.release().await;
            Err(Exit::signal(sig))
        }
        (Err(_), Some(sig)) => Err(Exit::signal(sig)),
        (Err(e), None) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::LockTimeout) => {
            let what = if e.kind() == ErrorKind::WouldBlock { "is busy" } else { "was not free in time" };
            Err(Exit::fail(conflict, format!("{name:?} {what}")))
        }
        (Err(e), None) => Err(e.into()),
    }
}

/// What an acquire returns and a signal during it gives back (a lock guard, a pool's slots).
pub trait Release {
    fn release(&self) -> impl Future<Output = etcdlock::Result<()>>;
}

impl Release for LockGuard {
    fn release(&self) -> impl Future<Output = etcdlock::Result<()>> {
        LockGuard::release(self)
    }
}

impl Release for etcdlock::PoolGuard {
    fn release(&self) -> impl Future<Output = etcdlock::Result<()>> {
        etcdlock::PoolGuard::release(self)
    }
}

/// What a command runs under (a lock, a permit, a leadership, a task's claim): the moment by
/// which the command must have stopped, and the loss.
pub trait Held {
    /// The moment by which the command must have stopped unless told a later one (the guardian
    /// kills its group then); `None` when another may hold it already: stop at once.
    fn stop_by(&self) -> Option<std::time::Instant>;
    fn lost(&self) -> LostSignal;
    fn lost_reason(&self) -> Option<LostReason>;
    /// How often the guardian is told [`Held::stop_by`] anew.
    fn renew_every(&self) -> Duration {
        RENEW_GUARDIAN
    }
}

/// Everything the core lets one hold (a lock guard, a task's claim, a period's slot) has the
/// three methods [`Held`] needs, under the same names.
macro_rules! held {
    ($($t:ty),*) => {$(
        impl Held for $t {
            fn stop_by(&self) -> Option<std::time::Instant> {
                <$t>::stop_by(self)
            }
            fn lost(&self) -> LostSignal {
                <$t>::lost(self)
            }
            fn lost_reason(&self) -> Option<LostReason> {
                <$t>::lost_reason(self)
            }
        }
    )*};
}
held!(LockGuard, etcdlock::Task, etcdlock::OnceSlot, etcdlock::PoolGuard);

/// A command to run while something is held.
pub struct Spawn<'a> {
    pub cmd: &'a [String],
    pub shell: bool,
    pub env: Vec<(String, String)>,
    /// Its input; `None`: etcdlock's stdin.
    pub stdin: Option<&'a [u8]>,
    /// Between SIGTERM and SIGKILL, within [`Held::stop_by`].
    pub grace: Duration,
}

/// How a command run by [`supervise`] ended. Nothing of its process group is left running.
pub enum Ran {
    /// Lost before the spawn (why): the command did not run.
    NotStarted(&'static str),
    /// The command could not be started.
    Failed(Exit),
    /// It exited (its wait status) while held; `signal`: the first signal forwarded to it.
    Exited { status: i32, signal: Option<i32> },
    /// Lost while it ran; its group was stopped.
    Lost { reason: LostReason, signal: Option<i32> },
}

/// Runs `cmd` under `guard`, then releases it. The command's exit status, or [`LOST`].
pub async fn run(guard: Arc<LockGuard>, name: &str, cmd: &[String], hold: &Hold, endpoints: &[String], signals: &mut Signals) -> Exit {
    let mut env = env(name, &guard, endpoints);
    // What a database or service checks the command's writes by (docs: "Fencing at the database").
    if let Ok(fence) = guard.fence().await {
        env.push(("ETCDLOCK_FENCE".into(), fence.to_string()));
    }
    let spawn = Spawn { cmd, shell: hold.shell, env, stdin: None, grace: Duration::from_secs_f64(hold.kill_grace) };
    let ran = supervise(&*guard, &spawn, signals).await;
    match ran {
        Ran::NotStarted(why) => {
            let _ = guard.release().await;
            lost_before_start(name, why)
        }
        Ran::Failed(e) => {
            let _ = guard.release().await;
            e
        }
        Ran::Exited { status, .. } => match guard.release().await {
            Ok(()) => child::exit_of(status),
            Err(e) if e.kind() == ErrorKind::NotHeld => lost_exit(name, e.message()),
            Err(e) => {
                // The command ran to its end under the lock; the key goes with the lease.
                eprintln!("etcdlock: warning: releasing {name:?}: {e}");
                child::exit_of(status)
            }
        },
        Ran::Lost { reason, .. } => {
            // The key is deleted if it is still this acquisition's (fenced); usually it is gone.
            let _ = guard.release().await;
            lost_exit(name, &format!("{reason}: {}", describe(reason)))
        }
    }
}

/// Runs the command while `held` holds, until it exits or the hold is lost, forwarding signals
/// to its group, and stops whatever is left of its group (before the caller lets go: the next
/// holder may start as soon as it does). `--health-addr` says 503 from its end on.
pub async fn supervise(held: &impl Held, spawn: &Spawn<'_>, signals: &mut Signals) -> Ran {
    let ran = supervise_command(held, spawn, signals).await;
    crate::health::ended();
    ran
}

async fn supervise_command(held: &impl Held, spawn: &Spawn<'_>, signals: &mut Signals) -> Ran {
    // A holder paused between the acquire and here (or whose key went meanwhile) does not start
    // the command: checked last thing before the spawn.
    let Some(until) = held.stop_by().filter(|t| *t > std::time::Instant::now()) else {
        return Ran::NotStarted(held.lost_reason().map_or("its lease's deadline passed", describe));
    };
    let mut child = match child::spawn(spawn.cmd, spawn.shell, &spawn.env, spawn.stdin, until) {
        Ok(c) => c,
        Err(e) => return Ran::Failed(e),
    };
    signals.stop_first(Some(child.pid));
    let lost = held.lost();
    // The guardian is told each new deadline; it kills the group at the last one it was told.
    let mut renew = tokio::time::interval(held.renew_every());
    let mut forwarded = None;
    let ended = loop {
        tokio::select! {
            biased;
            reason = lost.wait() => break Err(reason),
            status = child.exited() => break Ok(status),
            sig = signals.next() => match sig {
                // Back from a stop (Ctrl-Z) that stopped the group first: it runs on only if
                // the lock is still held.
                libc::SIGCONT => match held.stop_by().filter(|t| *t > std::time::Instant::now()) {
                    Some(_) => child.signal_group(libc::SIGCONT),
                    None => break Err(held.lost_reason().unwrap_or(LostReason::Expired)),
                },
                sig => {
                    forwarded.get_or_insert(sig);
                    child.signal_group(sig);
                }
            },
            _ = renew.tick() => {
                if let Some(t) = held.stop_by() {
                    child.hold_until(t);
                }
            }
        }
    };
    signals.stop_first(None);
    let ended = match ended {
        // A loss seen only now may have come while the command ran.
        Ok(status) => match held.lost_reason() {
            None => Ok(status),
            Some(reason) => Err(reason),
        },
        Err(reason) => Err(reason),
    };
    match ended {
        Ok(status) => {
            // Whatever the command left in its group stops before the lock goes: the next
            // holder may start as soon as it does.
            if child.group_alive() {
                let kill_at = Instant::now() + spawn.grace;
                child.stop_group(held.stop_by().map_or(kill_at, |t| kill_at.min(t.into()))).await;
            }
            child.unguard();
            Ran::Exited { status, signal: forwarded }
        }
        Err(reason) => {
            stop_at_loss(held, &mut child, spawn.grace).await;
            child.unguard();
            Ran::Lost { reason, signal: forwarded }
        }
    }
}

/// How often the guardian is told the lease's new deadline: often beside the keepalives that
/// move it (every TTL/3), and a pipe write costs microseconds.
const RENEW_GUARDIAN: Duration = Duration::from_millis(100);

/// SIGTERM to the group, SIGKILL after the grace, and never later than [`Held::stop_by`]
/// (for a lock, [`LockGuard::stop_by`]: half the lease's safety margin after its local deadline,
/// so the other half still lies between the kill and the earliest moment etcd could hand the
/// lock to another): at once if another may hold it already.
async fn stop_at_loss(held: &impl Held, child: &mut Child, grace: Duration) {
    let now = Instant::now();
    let kill_at = match held.stop_by() {
        Some(t) => (now + grace).min(now + t.saturating_duration_since(std::time::Instant::now())),
        None => now,
    };
    child.stop_group(kill_at).await;
    // SIGKILL was sent if anything was left: the reaper has the status within moments.
    let _ = tokio::time::timeout(Duration::from_secs(5), child.exited()).await;
}

pub fn describe(reason: LostReason) -> &'static str {
    match reason {
        LostReason::Expired => "its lease expired (no keepalive acknowledged in time)",
        LostReason::KeyDeleted => "its key was deleted",
        LostReason::Revoked => "its lease was revoked",
        LostReason::Closed => "the connection was closed",
    }
}

pub fn lost_exit(name: &str, why: &str) -> Exit {
    Exit::fail(LOST, format!("lost {name:?} while the command ran ({why}); the command's process group was stopped"))
}

/// The lock was lost between the acquire and the command's start: the command did not run.
pub fn lost_before_start(name: &str, why: &str) -> Exit {
    Exit::fail(LOST, format!("lost {name:?} before the command started ({why}); it did not run"))
}
