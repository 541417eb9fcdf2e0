//! What an acquire takes: a lock, a semaphore's permit, a read-write lock's read or write, or an
//! election's leadership. Each is a queue key of the core's that holds by its own rule and
//! comes back as the same `LockGuard`, so the Java side has one acquire and one guard for all.

use etcdlock::{Client, Election, LockGuard, LockOptions, Mutex, Result, RwLock, Semaphore};

/// The core handle that acquires for one kind (`io.etcdlock.DistributedLock.Kind` ordinals).
pub(crate) enum Acquirer {
    Mutex(Mutex),
    Semaphore(Semaphore),
    /// A read-write lock, and whether this acquire writes.
    Rw(RwLock, bool),
    Election(Election),
}

impl Acquirer {
    /// Checks the arguments as the core does (name, TTL, permits, a semaphore's count); sends
    /// nothing.
    pub(crate) fn new(client: &Client, name: String, ttl_s: i64, kind: i32, permits: i64, count: i32) -> Result<Acquirer> {
        let invalid = |m: String| etcdlock::Error::new(etcdlock::ErrorKind::InvalidArgument, m);
        Ok(match kind {
            1 => {
                let n = u32::try_from(permits).map_err(|_| invalid(format!("permits must be 1 to {}, got {permits}", etcdlock::MAX_PERMITS)))?;
                let sem = client.semaphore(name, n, ttl_s)?;
                let k = u32::try_from(count).map_err(|_| invalid(format!("count must be 1 to the semaphore's {n} permits, got {count}")))?;
                Acquirer::Semaphore(sem.with_count(k)?)
            }
            2 | 3 => Acquirer::Rw(client.rwlock(name, ttl_s)?, kind == 3),
            4 => Acquirer::Election(client.election(name, ttl_s)?),
            _ => Acquirer::Mutex(client.mutex(name, ttl_s)?),
        })
    }

    pub(crate) async fn lock_with(&self, opts: LockOptions) -> Result<LockGuard> {
        match self {
            Acquirer::Mutex(m) => m.lock_with(opts).await,
            Acquirer::Semaphore(s) => s.acquire_with(opts).await,
            Acquirer::Rw(rw, false) => rw.read_with(opts).await,
            Acquirer::Rw(rw, true) => rw.write_with(opts).await,
            Acquirer::Election(e) => e.campaign_with(opts).await.map(etcdlock::Leadership::into_guard),
        }
    }
}
