//! Leases: granted with a TTL, kept alive in the background, with a conservative local view
//! of whether they are still alive.

pub(crate) mod keepalive;
pub(crate) mod lost;

use crate::client::Client;
use crate::runtime::clock;
use crate::error::{etcd_says, Error, ErrorKind, Result, Says};
use crate::lease::lost::{LostFlag, LostReason, LostSignal};
use crate::runtime;
use crate::client::validate;
use rand::Rng;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// State shared between a lease's handles and the client's keepalive task.
#[derive(Debug)]
pub(crate) struct LeaseState {
    pub id: i64,
    /// The TTL the server granted (it silently raises TTLs below its minimum).
    pub ttl: Duration,
    /// Local deadline, as nanoseconds of [`clock::now`]: the lease counts as alive only
    /// before it. Only ever moves forward.
    deadline_nanos: AtomicU64,
    pub lost: LostFlag,
    /// When the grant was sent, as [`clock::now`].
    granted_at: Duration,
    /// Queue-key numbers in use on this lease, per hash of the lock name (see
    /// `Mutex::queue_key`). Two names of one hash only make each other's numbers larger.
    slots: std::sync::Mutex<std::collections::HashSet<(u64, u64)>>,
    /// A revoke of ours was sent: etcd may end the lease at any moment now, whatever its TTL.
    revoking: std::sync::atomic::AtomicBool,
}

impl LeaseState {
    fn new(id: i64, ttl: Duration, granted_at: Duration) -> Self {
        let state =
            LeaseState {
            id,
            ttl,
            granted_at,
            deadline_nanos: AtomicU64::new(0),
            lost: LostFlag::new(),
            slots: Default::default(),
            revoking: Default::default(),
        };
        state.acknowledged(granted_at);
        state
    }

    /// Safety margin subtracted from the TTL: covers clock-rate differences between us and
    /// the server and the server's expiry check granularity.
    fn margin(&self) -> Duration {
        (self.ttl / 10).clamp(Duration::from_millis(50), Duration::from_secs(1))
    }

    /// A keepalive (or the grant) sent at `sent_at` was acknowledged: the server cannot expire
    /// the lease before `sent_at + ttl`, since it renewed at or after that moment.
    pub fn acknowledged(&self, sent_at: Duration) {
        let d = (sent_at + self.ttl).saturating_sub(self.margin()).as_nanos() as u64;
        self.deadline_nanos.fetch_max(d, Ordering::AcqRel);
    }

    /// The smallest queue-key number of the lock with `name_hash` not in use on this lease,
    /// now in use.
    pub fn take_slot(&self, name_hash: u64) -> u64 {
        let mut used = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let n = (0..).find(|&n| !used.contains(&(name_hash, n))).expect("a free number");
        used.insert((name_hash, n));
        n
    }

    /// Frees a queue-key number. Only once its key is known to be deleted: a key still
    /// present would be mistaken by the next acquisition for its own earlier attempt.
    pub fn free_slot(&self, (name_hash, n): (u64, u64)) {
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).remove(&(name_hash, n));
    }

    pub fn deadline(&self) -> Duration {
        Duration::from_nanos(self.deadline_nanos.load(Ordering::Acquire))
    }

    /// The moment (of [`clock::now`]) before which the server cannot expire the lease: the local
    /// deadline plus its safety margin, i.e. the last acknowledged send time plus the TTL.
    pub fn server_expiry_floor(&self) -> Duration {
        self.deadline() + self.margin()
    }

    /// [`Lease::expires_no_sooner_than`] on [`clock::now`]'s scale: `None` once the lease is lost
    /// for another reason than its local deadline, or a revoke of ours was sent (a lease only
    /// locally expired is revoked when its session replaces it, and the next waiter may hold
    /// at once).
    fn exclusive_floor(&self) -> Option<Duration> {
        self.check_deadline();
        if self.revoking.load(Ordering::Acquire) {
            return None;
        }
        match self.lost.reason() {
            None => {}
            // Lost at the local deadline: the floor is the margin after it.
            Some(LostReason::Expired) if clock::now() >= self.deadline() => {}
            Some(_) => return None,
        }
        Some(self.server_expiry_floor())
    }

    /// Whether the grant is so recent that a member may not have applied it yet: etcd answers
    /// keepalives on the leader, which can apply the grant after the member that confirmed it.
    /// "Not found" then does not mean the lease is gone.
    pub fn just_granted(&self) -> bool {
        clock::now() < self.granted_at + Duration::from_secs(1)
    }

    /// Marks the lease lost if its local deadline has passed; returns whether it is lost.
    pub fn check_deadline(&self) -> bool {
        if self.lost.reason().is_none() && clock::now() >= self.deadline() {
            self.lost.set(LostReason::Expired);
        }
        self.lost.reason().is_some()
    }
}

/// A lease kept alive in the background (every TTL/3) for as long as a handle to it exists.
/// Cheap to clone. Revoked by [`Lease::revoke`], when the last handle is dropped, or when the
/// client closes.
///
/// ```
/// # #[tokio::main] async fn main() -> etcdlock::Result<()> {
/// # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
/// # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
/// let lease = client.lease(10).await?;
/// client.put(b"service/a", b"up", Some(&lease)).await?;
/// assert!(lease.is_alive());
/// lease.revoke().await?; // deletes service/a
/// # client.close().await; Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Lease {
    inner: Arc<Handle>,
}

#[derive(Debug)]
struct Handle {
    client: Client,
    state: Arc<LeaseState>,
    revoked: AtomicBool,
    /// Revoked when the last handle is dropped (else its owner revokes it).
    owned: bool,
}

impl Lease {
    /// Grants a lease, revoked when its last handle is dropped.
    pub(crate) async fn grant(client: &Client, ttl_secs: i64, deadline: Option<Instant>) -> Result<Lease> {
        let state = grant(client, ttl_secs, deadline).await?;
        Ok(Lease::new(client, state, true))
    }

    /// A handle on a kept-alive lease; `owned`: revoke it when the last handle is dropped
    /// (a client's shared lock lease is revoked by its `Session` instead).
    pub(crate) fn new(client: &Client, state: Arc<LeaseState>, owned: bool) -> Lease {
        Lease { inner: Arc::new(Handle { client: client.clone(), state, revoked: AtomicBool::new(false), owned }) }
    }
}

/// Grants a lease and starts keeping it alive. The ID is chosen here, so that a grant whose
/// answer was lost can be retried without leaking a second lease.
pub(crate) async fn grant(client: &Client, ttl_secs: i64, deadline: Option<Instant>) -> Result<Arc<LeaseState>> {
    validate::ttl(ttl_secs)?;
    client.check_open()?;
    let id = rand::rng().random_range(1..i64::MAX);
    let sent_at = clock::now();
    let granted = client
        .call(deadline, true, move |rpc| {
            let mut c = rpc.lease.clone();
            async move {
                match c.grant(ttl_secs, Some(etcd_client::LeaseGrantOptions::new().with_id(id))).await {
                    Ok(r) => Ok(r.ttl()),
                    // An earlier attempt got through: ask what it was granted.
                    Err(etcd_client::Error::GRpcStatus(s)) if etcd_says(s.message()) == Some(Says::LeaseExists) => {
                        c.time_to_live(id, None).await.map(|r| r.granted_ttl())
                    }
                    Err(e) => Err(e),
                }
            }
        })
        .await?;
    if granted <= 0 {
        return Err(Error::new(ErrorKind::Internal, format!("server granted lease {id:x} no TTL")));
    }
    let state = Arc::new(LeaseState::new(id, Duration::from_secs(granted as u64), sent_at));
    client.inner.keeper.add(state.clone());
    Ok(state)
}

impl Lease {
    /// etcd's ID of the lease: what `etcdctl lease timetolive` takes (in hex) and what a key
    /// attached to it shows as [`KeyValue::lease`](crate::KeyValue::lease). Pass it to
    /// [`Op::Put`](crate::Op::Put) to tie a guarded write to this lease.
    pub fn id(&self) -> i64 {
        self.inner.state.id
    }

    /// The TTL the server granted, in seconds.
    pub fn ttl(&self) -> i64 {
        self.inner.state.ttl.as_secs() as i64
    }

    /// Cheap local check: not lost, and the conservative local deadline has not passed.
    pub fn is_alive(&self) -> bool {
        !self.inner.state.check_deadline()
    }

    /// Time left before the local deadline (zero once lost).
    pub fn remaining(&self) -> Duration {
        if self.inner.state.check_deadline() {
            return Duration::ZERO;
        }
        self.inner.state.deadline().saturating_sub(clock::now())
    }

    /// The moment before which etcd cannot expire this lease, as far as this process knows:
    /// the send time of the last acknowledged keepalive plus the TTL. The local deadline (see
    /// [`Lease::remaining`]) comes a safety margin (TTL/10, 50 ms to 1 s) before it. `None` when
    /// the lease is gone for another reason than that deadline: revoked, or reported expired by
    /// the server.
    pub fn expires_no_sooner_than(&self) -> Option<std::time::Instant> {
        let (now, floor) = (clock::now(), self.inner.state.exclusive_floor()?);
        let base = std::time::Instant::now();
        Some(match floor.checked_sub(now) {
            Some(ahead) => base + ahead,
            None => base.checked_sub(now - floor).unwrap_or(base),
        })
    }

    /// The moment by which work that relies on this lease should have stopped: half the safety
    /// margin after the local deadline, the other half left for clock-rate differences and
    /// scheduling before [`Lease::expires_no_sooner_than`]. `None` when that is `None`.
    pub fn stop_by(&self) -> Option<std::time::Instant> {
        let floor = self.expires_no_sooner_than()?;
        let half = self.inner.state.margin() / 2;
        Some(floor.checked_sub(half).unwrap_or(floor))
    }

    /// Why the lease was lost, if it was.
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.inner.state.check_deadline();
        self.inner.state.lost.reason()
    }

    /// Fires once when the lease is lost.
    pub fn lost(&self) -> LostSignal {
        self.inner.state.lost.signal()
    }

    /// The client that granted the lease and keeps it alive (closing it ends the lease).
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    pub(crate) fn state(&self) -> &Arc<LeaseState> {
        &self.inner.state
    }

    /// Errors unless this lease can still be used to attach keys.
    pub(crate) fn check_usable(&self) -> Result<()> {
        self.inner.client.check_open()?;
        match self.lost_reason() {
            None => Ok(()),
            Some(r) => Err(Error::new(ErrorKind::LockLost, format!("lease {:x} is lost ({r})", self.id()))),
        }
    }

    /// Revokes the lease (deleting every key attached to it) and stops keeping it alive.
    /// Idempotent; revoking a lease the server already expired succeeds.
    pub async fn revoke(&self) -> Result<()> {
        runtime::check_pid(self.inner.client.inner.pid)?;
        if self.inner.revoked.load(Ordering::Acquire) {
            return Ok(());
        }
        self.inner.client.check_open()?;
        self.inner.revoke(None).await
    }
}

impl Handle {
    async fn revoke(&self, deadline: Option<Instant>) -> Result<()> {
        if self.revoked.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        revoke(&self.client, &self.state, deadline).await
    }
}

/// Marks a lease revoked, revokes it on the server, and stops keeping it alive.
pub(crate) async fn revoke(client: &Client, state: &LeaseState, deadline: Option<Instant>) -> Result<()> {
    state.revoking.store(true, Ordering::Release);
    state.lost.set(LostReason::Revoked);
    // Known to the keeper until the revoke is done: a close() or shutdown() racing with this
    // then revokes it too, and waits for that, before the runtime may stop.
    let result = revoke_rpc(client, state.id, deadline).await;
    client.inner.keeper.remove(state.id);
    result
}

/// Revokes a lease by ID; "not found" counts as done. Runs even if the client is closing:
/// close() only revokes the leases its keeper still knows, and this one was just taken out.
pub(crate) async fn revoke_rpc(client: &Client, id: i64, deadline: Option<Instant>) -> Result<()> {
    client
        .call_for_cleanup(deadline, move |rpc| {
            let mut c = rpc.lease.clone();
            async move {
                match c.revoke(id).await {
                    Err(etcd_client::Error::GRpcStatus(s)) if etcd_says(s.message()) == Some(Says::LeaseNotFound) => Ok(()),
                    r => r.map(drop),
                }
            }
        })
        .await
}

/// Revokes a lease in the background, retrying transient failures until `deadline`.
pub(crate) async fn revoke_detached(etcd: etcd_client::Client, id: i64, deadline: Instant) {
    let _ = crate::transport::backoff::retry(Some(deadline), || {
        let mut c = etcd.clone();
        async move {
            match c.lease_revoke(id).await {
                Err(etcd_client::Error::GRpcStatus(s)) if etcd_says(s.message()) == Some(Says::LeaseNotFound) => Ok(()),
                r => r.map(drop).map_err(Error::from),
            }
        }
    })
    .await;
}

impl Drop for Handle {
    fn drop(&mut self) {
        // Inherited through fork: the lease belongs to the parent, leave it alone.
        if !self.owned || self.revoked.load(Ordering::Acquire) || runtime::check_pid(self.client.inner.pid).is_err() {
            return;
        }
        self.revoked.store(true, Ordering::Release);
        if self.state.lost.reason().is_none() {
            self.state.lost.set(LostReason::Revoked);
        }
        self.client.inner.keeper.remove(self.state.id);
        // Not through `Client::call`: a close() racing with this drop no longer knows the
        // lease, so this revoke must go out even then.
        let (etcd, id) = (self.client.inner.etcd.clone(), self.state.id);
        let timeout = self.client.inner.opts.request_timeout;
        runtime::spawn_cleanup(revoke_detached(etcd, id, Instant::now() + timeout));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_past_its_local_deadline_is_exclusive_until_the_floor_unless_we_revoke_it() {
        // Granted 9.5 s ago with a TTL of 10 s (a margin of 1 s): past the local deadline (9 s
        // after the grant, its last acknowledged send), 0.5 s before the server's floor (10 s).
        let ttl = Duration::from_secs(10);
        let state = LeaseState::new(7, ttl, clock::now().saturating_sub(Duration::from_millis(9_500)));
        assert!(state.check_deadline(), "past the local deadline");
        let floor = state.exclusive_floor().expect("still exclusive until the floor");
        assert!(floor > clock::now());
        // A session that replaces it revokes it: etcd may hand the lock on at once.
        state.revoking.store(true, Ordering::Release);
        assert_eq!(state.exclusive_floor(), None);
    }
}
