//! When each lease's keepalive goes out: every TTL/3, spread over that window after a stream
//! opens, and only as fast as the stream takes them.
//!
//! A look at the leases costs what is due, not one step per lease: with ten thousand leases,
//! a step per lease every few milliseconds cost more than the keepalives themselves. Sends are
//! kept in time order; silence is judged by the oldest unanswered keepalive alone (etcd answers
//! one stream's keepalives in the order they came); and every lease is looked at for its local
//! deadline only when the earliest deadline seen at the last such look comes (deadlines only
//! move later).

use crate::runtime::clock;
use crate::lease::LeaseState;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{error::TrySendError, Sender};
use tokio::time::Instant;

/// Sends due this soon are made now: sends close together go out together, and the leases
/// settle into groups renewed in one go, so the keeper wakes for a group, not for each lease.
const SEND_SLACK: Duration = Duration::from_millis(100);

/// Timers other than lease deadlines fire no sooner than this after a look.
const MIN_WAKE: Duration = Duration::from_millis(10);

const MS: Duration = Duration::from_millis(1);

pub(super) struct Entry {
    pub state: Arc<LeaseState>,
    pub next_send: Instant,
    /// Due, and waiting in [`Schedule`]'s queue for room in the stream.
    queued: bool,
    /// Send times of unanswered keepalives, oldest first.
    pub sent: VecDeque<(Duration, Instant)>,
}

impl Entry {
    /// A lease just granted: the grant itself counts as the first renewal.
    pub fn new(state: Arc<LeaseState>) -> Entry {
        let next_send = Instant::now() + state.ttl / 3;
        Entry { state, next_send, queued: false, sent: VecDeque::new() }
    }
}

/// What a look found.
pub(super) struct Scan {
    /// When to look again.
    pub wake: Instant,
    /// A keepalive went unanswered for longer than the stall limit.
    pub silent: bool,
}

/// The keeper's timers. Each holds lease IDs that may have gone since (revoked, lost): those
/// are dropped when reached, as are sends whose lease was rescheduled.
pub(super) struct Schedule {
    /// `(next_send, id)` of the leases not queued.
    sends: BTreeSet<(Instant, i64)>,
    /// Leases whose keepalive is due, in the order they became due, waiting for room.
    pending: VecDeque<i64>,
    /// Every keepalive sent on the current stream, in the order sent.
    inflight: VecDeque<(Instant, i64)>,
    /// No lease's local deadline comes before this, on [`clock::now`]'s scale (which counts a
    /// suspend; `Instant` does not).
    deadlines: Duration,
    /// How long a keepalive may go unanswered: a sixth of the shortest TTL kept alive (see
    /// `transport::health::keepalive`), as of the last look at every lease or shorter.
    pub stall: Duration,
}

impl Default for Schedule {
    fn default() -> Self {
        let stall = crate::transport::health::keepalive(None);
        Schedule { sends: BTreeSet::new(), pending: VecDeque::new(), inflight: VecDeque::new(), deadlines: Duration::ZERO, stall }
    }
}

impl Schedule {
    /// A lease was added to `leases`.
    pub fn add(&mut self, e: &Entry) {
        self.sends.insert((e.next_send, e.state.id));
        self.stall = self.stall.min(crate::transport::health::keepalive(Some(e.state.ttl)));
        self.deadlines = self.deadlines.min(e.state.deadline() + MS);
    }

    pub fn is_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Marks leases past their local deadline lost (and forgets them) when one may be, queues
    /// the keepalives that are due (with a stream), and checks the oldest unanswered one.
    pub fn scan(&mut self, leases: &mut HashMap<i64, Entry>, streaming: bool) -> Scan {
        let now = Instant::now();
        if clock::now() >= self.deadlines {
            self.look_at_all(leases);
        }
        let mut work = now + Duration::from_secs(3600);
        let mut silent = false;
        if streaming {
            while let Some(&(at, id)) = self.sends.first() {
                if at > now + SEND_SLACK {
                    work = at;
                    break;
                }
                self.sends.pop_first();
                if let Some(e) = leases.get_mut(&id).filter(|e| !e.queued && e.next_send == at) {
                    e.queued = true;
                    self.pending.push_back(id);
                }
            }
            while let Some(&(at, id)) = self.inflight.front() {
                let unanswered = leases.get(&id).and_then(|e| e.sent.front()).is_some_and(|(_, first)| *first <= at);
                if unanswered {
                    silent = now.duration_since(at) > self.stall;
                    work = work.min(at + self.stall + MS);
                    break;
                }
                self.inflight.pop_front();
            }
        }
        // While leases are kept, their deadlines are looked at again at least every
        // clock::CHECK: a suspend stops `Instant`, not `clock::now`.
        let deadlines = match leases.is_empty() {
            true => now + Duration::from_secs(3600),
            false => now + clock::check_in(self.deadlines),
        };
        Scan { wake: deadlines.min(work.max(now + MIN_WAKE)), silent }
    }

    /// Forgets the leases past their local deadline (marking them lost), and notes the
    /// earliest deadline and the shortest TTL of the rest.
    fn look_at_all(&mut self, leases: &mut HashMap<i64, Entry>) {
        let mut earliest = clock::now() + Duration::from_secs(3600);
        let mut shortest: Option<Duration> = None;
        leases.retain(|_, e| {
            if e.state.check_deadline() {
                return false;
            }
            earliest = earliest.min(e.state.deadline() + MS);
            shortest = Some(shortest.map_or(e.state.ttl, |s| s.min(e.state.ttl)));
            true
        });
        self.deadlines = earliest;
        self.stall = crate::transport::health::keepalive(shortest);
    }

    /// After a stream (re)opens every lease is due at once. Spread them over their TTL/3
    /// window, soonest local deadline first, none later than its deadline less the stall limit
    /// (time for the answer): sent all at once, they would wait in line for the stream anyway,
    /// and the member would answer (or, being a follower, forward to the leader) a burst.
    pub fn spread(&mut self, leases: &mut HashMap<i64, Entry>, now: Instant) {
        let mut order: Vec<(Duration, i64)> = leases.iter().map(|(id, e)| (e.state.deadline(), *id)).collect();
        order.sort_unstable();
        let n = order.len().max(1) as f64;
        let clock_now = clock::now();
        self.sends.clear();
        for (k, (deadline, id)) in order.into_iter().enumerate() {
            let Some(e) = leases.get_mut(&id) else { continue };
            let slot = (e.state.ttl / 3).mul_f64(k as f64 / n);
            let latest = deadline.saturating_sub(clock_now).saturating_sub(self.stall);
            e.next_send = now + slot.min(latest);
            if !e.queued {
                self.sends.insert((e.next_send, id));
            }
        }
    }

    /// Hands due keepalives to the stream while it has room; the rest wait for room. Moves
    /// `wake` up to the next send or silence check of what was sent. False if the stream is
    /// gone.
    pub fn feed<M: prost::Message + Default>(&mut self, sender: &Sender<M>, leases: &mut HashMap<i64, Entry>, wake: &mut Instant) -> bool {
        while let Some(&id) = self.pending.front() {
            let Some(e) = leases.get_mut(&id).filter(|e| e.queued) else {
                self.pending.pop_front();
                continue;
            };
            match sender.try_reserve() {
                Ok(permit) => permit.send(request(id)),
                Err(TrySendError::Full(())) => return true,
                Err(TrySendError::Closed(())) => return false,
            }
            self.pending.pop_front();
            let now = Instant::now();
            e.queued = false;
            e.sent.push_back((clock::now(), now));
            self.inflight.push_back((now, id));
            e.next_send = now + e.state.ttl / 3;
            self.sends.insert((e.next_send, id));
            *wake = (*wake).min(e.next_send).min(now + self.stall + MS);
        }
        true
    }

    /// The stream is gone: nothing is queued or unanswered any more.
    pub fn stream_gone(&mut self, leases: &mut HashMap<i64, Entry>) {
        for id in self.pending.drain(..) {
            if let Some(e) = leases.get_mut(&id).filter(|e| e.queued) {
                e.queued = false;
                self.sends.insert((e.next_send, id));
            }
        }
        self.inflight.clear();
        for e in leases.values_mut() {
            e.sent.clear();
        }
    }
}

/// Builds a keepalive request for `id` without naming its (private) protobuf type: the
/// request is `{ int64 ID = 1; }`, and the sender's element type is inferred.
fn request<M: prost::Message + Default>(id: i64) -> M {
    let mut buf = Vec::with_capacity(11);
    prost::encoding::int64::encode(1, &id, &mut buf);
    M::decode(buf.as_slice()).expect("a one-field message always decodes")
}
