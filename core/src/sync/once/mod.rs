//! A job run at most once per period across every host that triggers it ("once per period").
//!
//! The period's slot is the boundary *nearest* the trigger time (`round(t / every)`), so hosts
//! whose clocks differ by less than half a period pick the same slot. The slot is claimed with a
//! try-lock of `<name>/slot/<n>` on the caller's lease, kept alive while the job runs; the winner
//! marks it done (`<name>/done/<n>`, on a lease of `keep_periods` periods that nobody keeps alive,
//! so done marks expire by themselves) in the same fenced Txn that releases the claim. A later
//! trigger in the same period runs only if the slot is neither done nor claimed: a job whose
//! winner died, or released it without marking it done (the job failed), is run by the next
//! trigger.
//!
//! ```
//! # #[tokio::main] async fn main() -> etcdlock::Result<()> {
//! # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
//! # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
//! use etcdlock::OnceOptions;
//! use std::time::Duration;
//! if let Some(slot) = client.once("reports/daily", OnceOptions::every(Duration::from_secs(86400))).await? {
//!     // ... the job, fenced by slot.fencing_token() where it writes ...
//!     slot.done().await?; // the period's job is done: later triggers in it do nothing
//! }
//! # client.close().await; Ok(()) }
//! ```

use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::lease::lost::{LostReason, LostSignal};
use crate::client::kv::Op;
use crate::sync::guard::LockGuard;
use crate::sync::mutex::LockOptions;
use crate::sync::expiring;
use etcd_client::{PutOptions, TxnOp};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How a once-per-period job is triggered.
#[derive(Debug, Clone)]
pub struct OnceOptions {
    /// The period: at least 1 s.
    pub every: Duration,
    /// The TTL of the claim's lease, kept alive while the job runs.
    pub ttl_secs: i64,
    /// The trigger time (now if `None`): its nearest period boundary is the slot.
    pub at: Option<SystemTime>,
    /// How many periods a done mark is kept (at least 2).
    pub keep_periods: u32,
}

impl OnceOptions {
    /// Every `every`, with a claim TTL of 10 s, triggered now, done marks kept 3 periods.
    pub fn every(every: Duration) -> OnceOptions {
        OnceOptions { every, ttl_secs: 10, at: None, keep_periods: 3 }
    }
}

/// The period's slot, won by this caller: run the job, then [`OnceSlot::done`]; or
/// [`OnceSlot::release`] (the job failed) to let the next trigger in the period run it. Dropped
/// without either, it is released in the background.
#[derive(Debug)]
pub struct OnceSlot {
    guard: LockGuard,
    name: Vec<u8>,
    slot: i64,
    done_key: Vec<u8>,
    keep: Duration,
}

impl Client {
    /// Claims the period's slot for the job `name`: `Some` if this caller won it (the job is
    /// this caller's to run), `None` if the slot is done or another caller runs it.
    pub async fn once(&self, name: impl Into<Vec<u8>>, opts: OnceOptions) -> Result<Option<OnceSlot>> {
        let name = name.into();
        check_once(&name, &opts)?;
        let at = opts.at.unwrap_or_else(SystemTime::now);
        let slot = slot_of(at, opts.every)?;
        let done_key = [name.as_slice(), format!("/done/{slot}").as_bytes()].concat();
        let lock = self.mutex([name.as_slice(), format!("/slot/{slot}").as_bytes()].concat(), opts.ttl_secs)?;
        let guard = match lock.lock_with(LockOptions { timeout: Some(Duration::ZERO), ..Default::default() }).await {
            Ok(g) => g,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        };
        // Read while holding the claim: a winner that marked the slot done did so before it let go.
        if self.get(&done_key).await?.is_some() {
            guard.release().await?;
            return Ok(None);
        }
        Ok(Some(OnceSlot { guard, name, slot, done_key, keep: opts.every.saturating_mul(opts.keep_periods) }))
    }
}

/// Checks a once-per-period job's name and options as [`Client::once`] does.
pub fn check_once(name: &[u8], opts: &OnceOptions) -> Result<()> {
    crate::client::validate::lock_name(name)?;
    crate::client::validate::ttl(opts.ttl_secs)?;
    if opts.every < Duration::from_secs(1) {
        return Err(Error::invalid(format!("a period must be at least 1 s, got {:?}", opts.every)));
    }
    if opts.keep_periods < 2 {
        return Err(Error::invalid("done marks must be kept at least 2 periods"));
    }
    let keep = opts.every.checked_mul(opts.keep_periods).ok_or_else(|| Error::invalid("every * keep_periods is too long"))?;
    expiring::ttl_of(keep).map(drop)
}

/// The index of the period boundary nearest `at`.
fn slot_of(at: SystemTime, every: Duration) -> Result<i64> {
    let since = at.duration_since(UNIX_EPOCH).map_err(|_| Error::invalid("a trigger time before 1970"))?;
    let (t, p) = (since.as_millis(), every.as_millis());
    i64::try_from((t + p / 2) / p).map_err(|_| Error::invalid("a trigger time too far ahead"))
}

impl OnceSlot {
    /// The slot's index: the nearest period boundary is `slot * every` after the epoch.
    pub fn slot(&self) -> i64 {
        self.slot
    }
    /// The claim's fencing token: larger for every later claim.
    pub fn fencing_token(&self) -> i64 {
        self.guard.fencing_token()
    }
    /// A local check, as [`LockGuard::is_held`]: the claim is neither released nor known lost.
    /// Check it (or [`OnceSlot::lost`]) before a step that must not run twice.
    pub fn is_held(&self) -> bool {
        self.guard.is_held()
    }
    /// Why the claim was lost, if it was (see [`LostReason`]).
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.guard.lost_reason()
    }
    /// One call's view of the claim (see [`LockGuard::health`]): `Released` once done or
    /// released; the name is the slot's lock, `<job>/slot/<n>`.
    pub fn health(&self) -> crate::Health {
        self.guard.health()
    }
    /// Fires once if the claim is lost while the job runs (another trigger may run it now).
    pub fn lost(&self) -> LostSignal {
        self.guard.lost()
    }
    /// The moment by which the job must have stopped, as a lock guard's
    /// ([`LockGuard::stop_by`]); `None` once another trigger may run it.
    pub fn stop_by(&self) -> Option<std::time::Instant> {
        self.guard.stop_by()
    }

    /// Writes `value` at `key` only while the claim holds (`NotHeld` otherwise, nothing written):
    /// a winner that was cut off and whose slot another trigger took writes nothing.
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<i64> {
        self.txn(&[Op::put(key, value)]).await
    }
    /// Deletes `key` only while the claim holds.
    pub async fn delete(&self, key: &[u8]) -> Result<i64> {
        self.txn(&[Op::delete(key)]).await
    }
    /// Applies `ops` atomically, only while the claim holds. Keys under `<name>/` (the job's
    /// own slots and done marks) are refused with `InvalidArgument`.
    pub async fn txn(&self, ops: &[Op]) -> Result<i64> {
        if let Some(op) = ops.iter().find(|op| crate::sync::queue::in_queue(&self.name, op.key())) {
            return Err(Error::invalid(format!(
                "a once-per-period job's write must not touch its own keys under {:?} (got {:?})",
                format!("{}/", String::from_utf8_lossy(&self.name)),
                String::from_utf8_lossy(op.key())
            )));
        }
        self.guard.txn(ops).await
    }

    /// Marks the period's job done and ends the claim, in one fenced Txn: `NotHeld` and
    /// nothing marked if the claim was lost.
    pub async fn done(&self) -> Result<()> {
        let client = self.guard.client();
        let lease = expiring::grant(client, expiring::ttl_of(self.keep)?).await?;
        let r = self.guard.finish(vec![TxnOp::put(self.done_key.clone(), b"done".to_vec(), Some(PutOptions::new().with_lease(lease)))]).await;
        if r.is_err() {
            expiring::discard_unless_used(client, lease, self.done_key.clone());
        }
        r.map(drop)
    }

    /// Ends the claim without marking the job done: the next trigger in this period runs it.
    pub async fn release(&self) -> Result<()> {
        self.guard.release().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slot_is_the_nearest_boundary() {
        let at = |ms: u64| UNIX_EPOCH + Duration::from_millis(ms);
        let hour = Duration::from_secs(3600);
        assert_eq!(slot_of(at(10 * 3_600_000), hour).unwrap(), 10);
        assert_eq!(slot_of(at(10 * 3_600_000 - 1_799_999), hour).unwrap(), 10);
        assert_eq!(slot_of(at(10 * 3_600_000 + 1_799_999), hour).unwrap(), 10);
        assert_eq!(slot_of(at(10 * 3_600_000 + 1_800_000), hour).unwrap(), 11);
    }
}
