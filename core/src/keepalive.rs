//! One keepalive stream per client, serving every lease of that client.
//!
//! A background task sends a keepalive for each lease every TTL/3 and credits each response to
//! the oldest unanswered send of that lease (responses carry no request ID), which moves the
//! lease's local deadline to `send time + TTL - margin`. A lease whose deadline passes, or
//! that the server reports gone (TTL <= 0), is marked lost. When the stream breaks or goes
//! silent it is reopened on the next member and every lease is renewed at once.
//!
//! The stream talks to one member at a time ([`Paths`]), and moves to the next one as soon as
//! the current one stays silent for a fraction of the TTL, so that a short lease survives a
//! member whose network silently drops everything.

use crate::backoff::Backoff;
use crate::clock;
use crate::lease::{revoke_detached, LeaseState};
use crate::lost::LostReason;
use crate::paths::Paths;
use crate::runtime;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long an open attempt, or an unanswered keepalive, may take before the member is
/// considered unreachable and the next one tried: a sixth of the shortest TTL (so that a
/// stream found silent after a send at TTL/3, and one more silent member, still leave time
/// before the deadline), within these bounds.
const STALL_MIN: Duration = Duration::from_millis(500);
const STALL_MAX: Duration = Duration::from_secs(3);

pub(crate) struct Keeper {
    tx: mpsc::UnboundedSender<Cmd>,
    /// Every live lease of the client, for `revoke_all` on close.
    leases: Arc<Mutex<HashMap<i64, Arc<LeaseState>>>>,
}

enum Cmd {
    Add(Arc<LeaseState>),
    Remove(i64),
}

struct Entry {
    state: Arc<LeaseState>,
    next_send: Instant,
    /// Send times of unanswered keepalives, oldest first.
    sent: VecDeque<(Duration, Instant)>,
}

type Stream = (etcd_client::LeaseKeeper, etcd_client::LeaseKeepAliveStream);

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

/// Builds a keepalive request for `id` without naming its (private) protobuf type: the
/// request is `{ int64 ID = 1; }`, and the sender's element type is inferred.
fn request<M: prost::Message + Default>(id: i64) -> M {
    let mut buf = Vec::with_capacity(11);
    prost::encoding::int64::encode(1, &id, &mut buf);
    M::decode(buf.as_slice()).expect("a one-field message always decodes")
}

/// Queues a keepalive; false when the stream is gone or so backed up that it is as good as
/// stalled (never blocks the keeper).
fn send(stream: &Stream, id: i64) -> bool {
    stream.0.sender.try_send(request(id)).is_ok()
}

fn stall_limit(leases: &HashMap<i64, Entry>) -> Duration {
    leases.values().map(|e| e.state.ttl / 6).min().unwrap_or(STALL_MAX).clamp(STALL_MIN, STALL_MAX)
}

async fn run(mut paths: Paths, closed: CancellationToken, mut rx: mpsc::UnboundedReceiver<Cmd>) {
    let mut leases: HashMap<i64, Entry> = HashMap::new();
    let mut stream: Option<Stream> = None;
    let mut backoff = Backoff::default();
    let mut retry_at = Instant::now();
    loop {
        if stream.is_none() && !leases.is_empty() && Instant::now() >= retry_at {
            // Opening can take a while; a lease whose deadline comes first must still be
            // reported lost on time.
            let earliest = leases.values().map(|e| e.state.deadline()).min().unwrap_or_default();
            let until_earliest = earliest.saturating_sub(clock::now());
            tokio::select! {
                _ = tokio::time::sleep(until_earliest) => {}
                s = open(&mut paths, &mut leases) => match s {
                    Some(s) => {
                        backoff.reset();
                        stream = Some(s);
                        // Renew everything at once: the outage ate into every deadline.
                        let now = Instant::now();
                        for e in leases.values_mut() {
                            e.next_send = now;
                        }
                    }
                    None => retry_at = Instant::now() + backoff.next_delay(),
                },
                _ = closed.cancelled() => return,
            }
        }

        // Send what is due, drop what is lost, and find the next moment something is due.
        let now = Instant::now();
        let mut wake = now + Duration::from_secs(3600);
        let mut broken = false;
        let mut dead = Vec::new();
        let stall = stall_limit(&leases);
        for (id, e) in leases.iter_mut() {
            if e.state.check_deadline() {
                dead.push(*id);
                continue;
            }
            if let Some(s) = &stream {
                if now >= e.next_send {
                    e.sent.push_back((clock::now(), now));
                    e.next_send = now + e.state.ttl / 3;
                    if !send(s, *id) {
                        broken = true;
                    }
                }
                if let Some((_, at)) = e.sent.front() {
                    if now.duration_since(*at) > stall {
                        broken = true;
                    }
                    wake = wake.min(*at + stall + Duration::from_millis(1));
                }
                wake = wake.min(e.next_send);
            }
            let left = e.state.deadline().saturating_sub(clock::now());
            wake = wake.min(now + left + Duration::from_millis(1));
        }
        for id in dead {
            leases.remove(&id);
        }
        if broken {
            drop_stream(&mut stream, &mut paths, &mut leases, &mut retry_at, &mut backoff);
            continue;
        }
        if stream.is_none() && !leases.is_empty() {
            wake = wake.min(retry_at);
        }

        tokio::select! {
            _ = closed.cancelled() => return,
            cmd = rx.recv() => match cmd {
                Some(Cmd::Add(state)) => {
                    // The grant itself counts as the first renewal.
                    let next_send = Instant::now() + state.ttl / 3;
                    leases.insert(state.id, Entry { state, next_send, sent: VecDeque::new() });
                }
                Some(Cmd::Remove(id)) => { leases.remove(&id); }
                None => return,
            },
            msg = next_message(&mut stream) => match msg {
                Some(resp) => {
                    if let Some(e) = leases.get_mut(&resp.id()) {
                        let sent = e.sent.pop_front();
                        if resp.ttl() <= 0 {
                            e.state.lost.set(LostReason::Expired);
                            leases.remove(&resp.id());
                        } else if let Some((sent_at, _)) = sent {
                            e.state.acknowledged(sent_at);
                        }
                    }
                }
                None => drop_stream(&mut stream, &mut paths, &mut leases, &mut retry_at, &mut backoff),
            },
            _ = tokio::time::sleep_until(wake) => {}
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
fn drop_stream(stream: &mut Option<Stream>, paths: &mut Paths, leases: &mut HashMap<i64, Entry>, retry_at: &mut Instant, backoff: &mut Backoff) {
    *stream = None;
    paths.next();
    for e in leases.values_mut() {
        e.sent.clear();
    }
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
    loop {
        let Some(&id) = leases.keys().next() else { return Ok(None) };
        let sent_at = clock::now();
        let mut lc = etcd.lease_client();
        match tokio::time::timeout(stall, lc.keep_alive(id)).await {
            Ok(Ok(s)) => {
                if let Some(e) = leases.get(&id) {
                    e.state.acknowledged(sent_at);
                }
                return Ok(Some(s));
            }
            Ok(Err(etcd_client::Error::LeaseKeepAliveError(_))) => {
                // "lease not found": gone on the server.
                if let Some(e) = leases.remove(&id) {
                    e.state.lost.set(LostReason::Expired);
                }
            }
            _ => return Err(()),
        }
    }
}
