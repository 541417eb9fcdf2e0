//! One keepalive stream per client, serving every lease of that client.
//!
//! A background task sends a keepalive for each lease every TTL/3 and credits each response to
//! the oldest unanswered send of that lease (responses carry no request ID), which moves the
//! lease's local deadline to `send time + TTL - margin`. A lease whose deadline passes, or
//! that the server reports gone (TTL <= 0), is marked lost. When the stream breaks or goes
//! silent it is reopened on the next member and every lease is renewed within a TTL/3 window,
//! soonest deadline first (`schedule.rs`).
//!
//! Keepalives wait for room in the stream (etcd-client's sender holds 100) rather than count a
//! full one as broken: with many leases due at once, a full sender is the normal case, and
//! reopening the stream over it made every lease due at once again, so most were never sent.
//!
//! The stream talks to one member at a time ([`Paths`]), and moves to the next one as soon as
//! the current one stays silent for a fraction of the TTL, so that a short lease survives a
//! member whose network silently drops everything.

mod schedule;

use crate::transport::backoff::Backoff;
use crate::runtime::clock;
use crate::lease::{revoke_detached, LeaseState};
use crate::lease::lost::LostReason;
use crate::transport::paths::Paths;
use crate::transport::stats::Histogram;
use crate::runtime;
use schedule::{Entry, Schedule};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Responses handled in one go before the loop looks at its timers again.
const BATCH: usize = 256;

pub(crate) struct Keeper {
    tx: mpsc::UnboundedSender<Cmd>,
    /// Every live lease of the client, for `revoke_all` on close.
    leases: Arc<Mutex<HashMap<i64, Arc<LeaseState>>>>,
}

enum Cmd {
    Add(Arc<LeaseState>),
    Remove(i64),
}

pub(super) type Stream = (etcd_client::LeaseKeeper, etcd_client::LeaseKeepAliveStream);

impl Keeper {
    pub fn new(paths: Paths, closed: CancellationToken) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        runtime::spawn(run(paths, closed, rx));
        Keeper { tx, leases: Default::default() }
    }

    pub fn add(&self, state: Arc<LeaseState>) {
        self.leases.lock().unwrap().insert(state.id, state.clone());
        let _ = self.tx.send(Cmd::Add(state));
    }

    pub fn remove(&self, id: i64) {
        self.leases.lock().unwrap().remove(&id);
        let _ = self.tx.send(Cmd::Remove(id));
    }

    /// Leases kept alive now: granted, and neither revoked nor lost.
    pub fn alive(&self) -> usize {
        self.leases.lock().unwrap().values().filter(|s| s.lost.reason().is_none()).count()
    }

    /// On close: marks every lease lost and revokes them, all at once, bounded by `deadline`.
    pub async fn revoke_all(&self, etcd: &etcd_client::Client, deadline: Instant) {
        let tasks: Vec<_> =
            self.drain_lost().into_iter().map(|id| runtime::spawn(revoke_detached(etcd.clone(), id, deadline))).collect();
        for t in tasks {
            let _ = t.await;
        }
    }

    /// Like `revoke_all`, without waiting (the client was dropped without `close()`).
    pub fn abandon_all(&self, etcd: &etcd_client::Client, deadline: Instant) {
        for id in self.drain_lost() {
            runtime::spawn_cleanup(revoke_detached(etcd.clone(), id, deadline));
        }
    }

    /// Forgets every lease, marking it lost (`closed`); returns their IDs.
    fn drain_lost(&self) -> Vec<i64> {
        let leases: Vec<_> = self.leases.lock().unwrap().drain().map(|(_, s)| s).collect();
        leases
            .into_iter()
            .map(|state| {
                state.lost.set(LostReason::Closed);
                state.id
            })
            .collect()
    }
}

fn stall_limit(leases: &HashMap<i64, Entry>) -> Duration {
    crate::transport::health::keepalive(leases.values().map(|e| e.state.ttl).min())
}

async fn run(mut paths: Paths, closed: CancellationToken, mut rx: mpsc::UnboundedReceiver<Cmd>) {
    let mut leases: HashMap<i64, Entry> = HashMap::new();
    let mut sched = Schedule::default();
    let mut stream: Option<Stream> = None;
    let mut backoff = Backoff::default();
    let mut retry_at = Instant::now();
    // When to look at every lease again (due sends, silence, local deadlines).
    let mut wake = Instant::now();
    loop {
        if stream.is_none() && !leases.is_empty() && Instant::now() >= retry_at {
            // Opening can take a while; a lease whose deadline comes first must still be
            // reported lost on time.
            let earliest = leases.values().map(|e| e.state.deadline()).min().unwrap_or_default();
            tokio::select! {
                _ = until(earliest) => {}
                s = open(&mut paths, &mut leases) => match s {
                    Some(s) => {
                        backoff.reset();
                        stream = Some(s);
                        // The outage ate into every deadline: renew all within a TTL/3 window.
                        sched.stall = stall_limit(&leases);
                        sched.spread(&mut leases, Instant::now());
                    }
                    None => retry_at = Instant::now() + backoff.next_delay(),
                },
                _ = closed.cancelled() => return,
            }
            wake = Instant::now();
        }

        let mut broken = false;
        if Instant::now() >= wake {
            let scan = sched.scan(&mut leases, stream.is_some());
            wake = scan.wake;
            broken = scan.silent;
        }
        if let Some(s) = stream.as_ref().filter(|_| !broken) {
            broken = !sched.feed(&s.0.sender, &mut leases, &mut wake);
        }
        if broken {
            drop_stream(&mut stream, &mut paths, &mut leases, &mut sched, &mut retry_at, &mut backoff);
            wake = Instant::now();
            continue;
        }
        if stream.is_none() && !leases.is_empty() {
            wake = wake.min(retry_at);
        }
        // Keepalives that are due and found the stream full wait for room in it.
        let room = stream.as_ref().filter(|_| sched.is_pending()).map(|s| s.0.sender.clone());

        tokio::select! {
            _ = closed.cancelled() => return,
            cmd = rx.recv() => match cmd {
                Some(Cmd::Add(state)) => {
                    // The grant itself counts as the first renewal.
                    let e = Entry::new(state);
                    sched.add(&e);
                    wake = wake.min(e.next_send);
                    leases.insert(e.state.id, e);
                }
                Some(Cmd::Remove(id)) => { leases.remove(&id); }
                None => return,
            },
            msg = next_message(&mut stream) => {
                let mut msg = msg;
                for n in 1.. {
                    match msg {
                        Some(resp) => answered(&mut leases, resp, &paths.stats.keepalive_rtt),
                        None => {
                            drop_stream(&mut stream, &mut paths, &mut leases, &mut sched, &mut retry_at, &mut backoff);
                            wake = Instant::now();
                            break;
                        }
                    }
                    // A response taken from the stream must be credited: one dropped here
                    // would leave its keepalive unanswered, and the stream judged silent.
                    if n == BATCH {
                        break;
                    }
                    // Whatever else has arrived already, without waiting.
                    msg = tokio::select! {
                        biased;
                        m = next_message(&mut stream) => m,
                        _ = std::future::ready(()) => break,
                    };
                }
            },
            _ = async { room.as_ref().expect("checked").reserve().await.map(drop) }, if room.is_some() => {}
            _ = tokio::time::sleep_until(wake) => {}
        }
    }
}

/// Returns at `at`, a moment of [`clock::now`], looking at that clock at least every
/// `clock::CHECK` (a suspend stops tokio's timers, not that clock).
async fn until(at: Duration) {
    loop {
        let left = clock::check_in(at);
        if left.is_zero() {
            return;
        }
        tokio::time::sleep(left).await;
    }
}

/// The server no longer knows the lease.
fn expired(state: &LeaseState) {
    state.lost.set_and(LostReason::Expired, || {
        tracing::warn!(target: "etcdlock", lease = format_args!("{:x}", state.id), "lease expired on the server: what it kept is gone");
    });
}

/// Credits a response to its lease's oldest unanswered keepalive.
fn answered(leases: &mut HashMap<i64, Entry>, resp: etcd_client::LeaseKeepAliveResponse, rtt: &Histogram) {
    if let Some(e) = leases.get_mut(&resp.id()) {
        let sent = e.sent.pop_front();
        if resp.ttl() <= 0 && e.state.just_granted() {
            // Not applied on the leader yet; the next keepalive asks again.
        } else if resp.ttl() <= 0 {
            expired(&e.state);
            leases.remove(&resp.id());
        } else if let Some((sent_at, _)) = sent {
            rtt.record(clock::now().saturating_sub(sent_at));
            e.state.acknowledged(sent_at);
        }
    }
}

async fn next_message(stream: &mut Option<Stream>) -> Option<etcd_client::LeaseKeepAliveResponse> {
    match stream {
        Some(s) => s.1.message().await.ok().flatten(),
        None => std::future::pending().await,
    }
}

/// The stream broke or went silent: the next one goes to the next member.
fn drop_stream(
    stream: &mut Option<Stream>,
    paths: &mut Paths,
    leases: &mut HashMap<i64, Entry>,
    sched: &mut Schedule,
    retry_at: &mut Instant,
    backoff: &mut Backoff,
) {
    *stream = None;
    paths.next();
    sched.stream_gone(leases);
    *retry_at = Instant::now() + backoff.next_delay();
}

/// Opens a stream, trying each member once, from the current one. The client library opens it
/// with a keepalive for one lease and waits for that answer; a lease the server no longer knows
/// is marked lost and the next one tried.
async fn open(paths: &mut Paths, leases: &mut HashMap<i64, Entry>) -> Option<Stream> {
    for _ in 0..paths.len() {
        let stall = stall_limit(leases);
        match open_on(paths, leases, stall).await {
            Ok(s) => return s,
            Err(()) => paths.next(),
        }
    }
    None
}

/// Opens a stream on the current member: `Err` if it fails or stays silent, `Ok(None)` if no
/// lease is left.
async fn open_on(paths: &mut Paths, leases: &mut HashMap<i64, Entry>, stall: Duration) -> Result<Option<Stream>, ()> {
    let Some(etcd) = paths.client(stall).await else { return Err(()) };
    let mut refreshed = false;
    // Opened with an established lease where there is one (see `LeaseState::just_granted`).
    let pick = |leases: &HashMap<i64, Entry>| {
        let mut ids = leases.iter().map(|(id, e)| (e.state.just_granted(), *id));
        ids.clone().find(|(young, _)| !young).or_else(|| ids.next()).map(|(_, id)| id)
    };
    loop {
        let Some(id) = pick(leases) else { return Ok(None) };
        let sent_at = clock::now();
        let mut lc = etcd.lease_client();
        match tokio::time::timeout(stall, lc.keep_alive(id)).await {
            Ok(Ok(s)) => {
                if let Some(e) = leases.get(&id) {
                    e.state.acknowledged(sent_at);
                }
                return Ok(Some(s));
            }
            // Not applied on the leader yet: try again later.
            Ok(Err(etcd_client::Error::LeaseKeepAliveError(_))) if leases.get(&id).is_some_and(|e| e.state.just_granted()) => {
                return Err(());
            }
            Ok(Err(etcd_client::Error::LeaseKeepAliveError(_))) => {
                // "lease not found": gone on the server.
                if let Some(e) = leases.remove(&id) {
                    expired(&e.state);
                }
            }
            // etcd 3.6 checks the auth token of keepalives: one that expired while the stream
            // was open ends it, and a new stream needs a new token (shared by this member's
            // connection: the watch stream's too).
            Ok(Err(e)) if !refreshed && crate::error::stale_token(&e) => {
                refreshed = true;
                if !matches!(tokio::time::timeout(stall, etcd.refresh_token()).await, Ok(Ok(()))) {
                    return Err(());
                }
            }
            _ => return Err(()),
        }
    }
}
