//! When each lease's keepalive goes out: every TTL/3, spread over that window after a stream
//! opens, and only as fast as the stream takes them.

use crate::runtime::clock;
use crate::lease::LeaseState;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{error::TrySendError, Sender};
use tokio::time::Instant;

/// Sends due this soon are made now, and timers (other than lease deadlines) fire no sooner
/// than this after a look at every lease: with many leases, a look at all of them per lease
/// due would cost more than the keepalives themselves.
const SLACK: Duration = Duration::from_millis(10);

pub(super) struct Entry {
    pub state: Arc<LeaseState>,
    pub next_send: Instant,
    /// Due, and waiting in [`Pending`] for room in the stream.
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

/// What a look at every lease found.
pub(super) struct Scan {
    /// When to look again.
    pub wake: Instant,
    /// A keepalive went unanswered for longer than the stall limit.
    pub silent: bool,
}

/// Marks leases past their local deadline lost (and forgets them), queues the keepalives that
/// are due (with a stream), and checks for unanswered ones.
pub(super) fn scan(leases: &mut HashMap<i64, Entry>, pending: &mut Pending, streaming: bool, stall: Duration) -> Scan {
    let now = Instant::now();
    let clock_now = clock::now();
    let mut work = now + Duration::from_secs(3600);
    let mut deadlines = work;
    let mut silent = false;
    leases.retain(|id, e| {
        if e.state.check_deadline() {
            return false;
        }
        if streaming {
            if !e.queued && now + SLACK >= e.next_send {
                e.queued = true;
                pending.0.push_back(*id);
            }
            if let Some((_, at)) = e.sent.front() {
                silent |= now.duration_since(*at) > stall;
                work = work.min(*at + stall + Duration::from_millis(1));
            }
            if !e.queued {
                work = work.min(e.next_send);
            }
        }
        let left = e.state.deadline().saturating_sub(clock_now);
        deadlines = deadlines.min(now + left + Duration::from_millis(1));
        true
    });
    Scan { wake: deadlines.min(work.max(now + SLACK)), silent }
}

/// After a stream (re)opens every lease is due at once. Spread them over their TTL/3 window,
/// soonest local deadline first, none later than its deadline less `stall` (time for the
/// answer): sent all at once, they would wait in line for the stream anyway, and the member
/// would answer (or, being a follower, forward to the leader) a burst.
pub(super) fn spread(leases: &mut HashMap<i64, Entry>, now: Instant, stall: Duration) {
    let mut order: Vec<(Duration, i64)> = leases.iter().map(|(id, e)| (e.state.deadline(), *id)).collect();
    order.sort_unstable();
    let n = order.len().max(1) as f64;
    let clock_now = clock::now();
    for (k, (deadline, id)) in order.into_iter().enumerate() {
        let Some(e) = leases.get_mut(&id) else { continue };
        let slot = (e.state.ttl / 3).mul_f64(k as f64 / n);
        let latest = deadline.saturating_sub(clock_now).saturating_sub(stall);
        e.next_send = now + slot.min(latest);
    }
}

/// Leases whose keepalive is due, in the order they became due.
#[derive(Default)]
pub(super) struct Pending(VecDeque<i64>);

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Hands due keepalives to the stream while it has room; the rest wait for room. Moves
    /// `wake` up to the next send or silence check of what was sent. False if the stream is
    /// gone.
    pub fn feed<M: prost::Message + Default>(&mut self, sender: &Sender<M>, leases: &mut HashMap<i64, Entry>, stall: Duration, wake: &mut Instant) -> bool {
        while let Some(&id) = self.0.front() {
            let Some(e) = leases.get_mut(&id).filter(|e| e.queued) else {
                self.0.pop_front();
                continue;
            };
            match sender.try_reserve() {
                Ok(permit) => permit.send(request(id)),
                Err(TrySendError::Full(())) => return true,
                Err(TrySendError::Closed(())) => return false,
            }
            self.0.pop_front();
            let now = Instant::now();
            e.queued = false;
            e.sent.push_back((clock::now(), now));
            e.next_send = now + e.state.ttl / 3;
            *wake = (*wake).min(e.next_send).min(now + stall + Duration::from_millis(1));
        }
        true
    }

    /// The stream is gone: nothing is queued any more.
    pub fn clear(&mut self, leases: &mut HashMap<i64, Entry>) {
        for id in self.0.drain(..) {
            if let Some(e) = leases.get_mut(&id) {
                e.queued = false;
            }
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
