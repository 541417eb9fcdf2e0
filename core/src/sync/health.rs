//! One call's view of a hold, for health endpoints and readiness probes (issue #59): "is this
//! process the one holding (leading) now, and for how long at least?".
//!
//! A [`Health`] is read from the very state the lost signal is set from (the guard's lost flag,
//! its lease's, the released flag), never from a copy: the flag is set before the signal fires,
//! so a view taken once the signal fired never says held.

use crate::lease::lost::LostReason;
use std::time::{Duration, Instant};

/// Where a hold stands, in the library's words: `held` (for an election: leading), `lost` with
/// the [`LostReason`], `released` (ended by this process: released, resigned, acked, done,
/// dropped), or `idle` (a binding's reusable lock handle that has not acquired yet; no guard of
/// the core's is ever idle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HoldState {
    /// Held (leading), and not known lost. Whether it is safe to act on is [`Health::is_ok`].
    Held,
    /// Lost: another client may hold it now. Stop what the hold protects.
    Lost(LostReason),
    /// Ended by this process (released, resigned, acked, nacked, done, or dropped).
    Released,
    /// Nothing acquired yet (a binding's lock handle before its first acquisition).
    Idle,
}

impl HoldState {
    /// The lower-case name every binding uses: `held`, `lost`, `released`, `idle`.
    pub fn as_str(self) -> &'static str {
        match self {
            HoldState::Held => "held",
            HoldState::Lost(_) => "lost",
            HoldState::Released => "released",
            HoldState::Idle => "idle",
        }
    }
}

impl std::fmt::Display for HoldState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HoldState::Lost(r) => write!(f, "lost ({r})"),
            s => f.write_str(s.as_str()),
        }
    }
}

/// A snapshot of one hold: what `health()` of a lock guard, a leadership, a pool's or a lock
/// set's guard, a task or a once-per-period slot returns. Cheap: local reads only, nothing is
/// sent to etcd. Take a new one per question; a view does not change.
///
/// A readiness probe answers 200 while [`Health::is_ok`] and 503 otherwise, so that a
/// Kubernetes Service sends traffic only to the pod that holds (see the "Health and readiness"
/// guide).
///
/// ```no_run
/// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
/// let leadership = client.election("jobs/leader", 10)?.campaign("pod-a").await?;
/// let h = leadership.health();
/// assert!(h.is_ok());
/// println!("{} {} token {} for at least {:?}", h.name, h.state, h.fencing_token, h.exclusive_for());
/// leadership.resign().await?;
/// assert_eq!(leadership.health().state, etcdlock::HoldState::Released);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// Held, lost (why), released, or idle.
    pub state: HoldState,
    /// The lock's name (an election's, a pool's, a task claim's `<queue>/claim/<slot>`, a
    /// once-per-period job's `<job>/slot/<n>`); a lock set's member names joined by `,`. Bytes
    /// that are not UTF-8 are replaced (U+FFFD).
    pub name: String,
    /// The hold's fencing token (0 when idle: etcd revisions start at 1).
    pub fencing_token: i64,
    /// The lease the hold lives on (0 when idle).
    pub lease_id: i64,
    /// The moment before which etcd cannot give the hold to anyone else, as far as this process
    /// knows (see [`LockGuard::exclusive_until`](crate::LockGuard::exclusive_until)); `None`
    /// when another may hold it already or it was released. After a loss at the local deadline
    /// (`Lost(Expired)`) it is the time left to stop what the hold protected.
    pub exclusive_until: Option<Instant>,
    /// When this view was taken ([`Health::exclusive_for`] counts from it).
    pub at: Instant,
}

impl Health {
    pub(crate) fn of(state: HoldState, name: String, fencing_token: i64, lease_id: i64, exclusive_until: Option<Instant>) -> Health {
        Health { state, name, fencing_token, lease_id, exclusive_until, at: Instant::now() }
    }

    /// The view of a binding's reusable lock handle before its first acquisition: [`HoldState::Idle`],
    /// never ok.
    ///
    /// ```
    /// let h = etcdlock::Health::idle(b"jobs/lock");
    /// assert_eq!((h.state, h.name.as_str(), h.is_ok()), (etcdlock::HoldState::Idle, "jobs/lock", false));
    /// ```
    pub fn idle(name: &[u8]) -> Health {
        Health::of(HoldState::Idle, String::from_utf8_lossy(name).into_owned(), 0, 0, None)
    }

    /// Whether it is safe to act as the holder (leader) now: held, and its exclusivity not in
    /// doubt (the lease's conservative local deadline is still ahead). What a readiness probe
    /// answers.
    pub fn is_ok(&self) -> bool {
        self.state == HoldState::Held && self.exclusive_until.is_some_and(|t| t > self.at)
    }

    /// How long, from when the view was taken, the hold is certainly exclusive: `None` when
    /// it is not held (or may be held by another already).
    pub fn exclusive_for(&self) -> Option<Duration> {
        self.exclusive_until.map(|t| t.saturating_duration_since(self.at))
    }

    /// Why the hold was lost, if the state is [`HoldState::Lost`].
    pub fn lost_reason(&self) -> Option<LostReason> {
        match self.state {
            HoldState::Lost(r) => Some(r),
            _ => None,
        }
    }
}

/// The state from a guard's released flag and loss (released wins: a loss found after release
/// began is not the holder's news).
pub(crate) fn state(released: bool, lost: Option<LostReason>) -> HoldState {
    match (released, lost) {
        (true, _) => HoldState::Released,
        (false, Some(r)) => HoldState::Lost(r),
        (false, None) => HoldState::Held,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_hold_with_time_left_is_ok() {
        let later = Some(Instant::now() + Duration::from_secs(5));
        assert!(Health::of(HoldState::Held, "a".into(), 3, 7, later).is_ok());
        assert!(!Health::of(HoldState::Held, "a".into(), 3, 7, None).is_ok());
        assert!(!Health::of(HoldState::Held, "a".into(), 3, 7, Some(Instant::now())).is_ok());
        let lost = Health::of(HoldState::Lost(LostReason::Expired), "a".into(), 3, 7, later);
        assert!(!lost.is_ok());
        assert_eq!(lost.lost_reason(), Some(LostReason::Expired));
        assert!(!Health::of(HoldState::Released, "a".into(), 3, 7, later).is_ok());
        assert_eq!(state(true, Some(LostReason::KeyDeleted)), HoldState::Released);
        assert_eq!(HoldState::Lost(LostReason::KeyDeleted).to_string(), "lost (key_deleted)");
    }
}
